/* bench_fault: reading large fault files (issue 24, 5). Two valid files
 * that made the reader quadratic per target: 250,000 device_slow rows on
 * one device of a 64-device scenario (a scan of every span per boundary),
 * and 20,000 site_down rows on one site of 2,048 devices (every outage
 * copied to every device of the site: 2.9 GB). Prints rows/s, the replay's
 * queries/s and peak RSS per case; each case in its own process, so the
 * peak is its own (ru_maxrss never falls). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/bench.h"
#include "traces/fault.h"
#include "traces/scenario.h"

#define QUERIES 1000000

static scenario *one_site(int devices) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"name\": \"big\", \"sites\": [{\"name\": \"big\", \"devices\": "
           "%d, \"gpu\": \"A100\"}], \"network\": {\"latency_ms\": 1, "
           "\"bandwidth_gbps\": 10}, \"workload\": {\"model\": \"gpt3-xl\", "
           "\"layers\": 8, \"batch\": %d, \"micro_batch\": 1, \"stages\": 8, "
           "\"replicas\": %d}}", devices, devices / 8, devices / 8);
  err e = {0};
  scenario *s = scenario_parse(json, strlen(json), "big.json", &e);
  if (!s) fprintf(stderr, "%s\n", e.msg);
  return s;
}

/* rows of kind on target, one every `every` s, lasting 1, 5 or 100 s */
static char *rows(int n, const char *kind, const char *target, double every,
                  const char *factor, size_t *len) {
  size_t cap = (size_t)n * 64 + 64, k = 0;
  char *t = malloc(cap);
  k += (size_t)snprintf(t, cap, "%s\n", FAULT_HEADER);
  const int dur[] = {1, 5, 100};
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(t + k, cap - k, "%.1f,%s,%s,%d,%s\n", i * every,
                          kind, target, dur[i % 3], factor);
  *len = k;
  return t;
}

static int run_case(const char *name, int devices, int n, const char *kind,
                    const char *target, double every, const char *factor) {
  scenario *s = one_site(devices);
  if (!s) return 1;
  size_t len;
  char *text = rows(n, kind, target, every, factor, &len);
  err e = {0};
  double t0 = bench_cpu_s();
  fault_trace *f = fault_parse(text, len, "bench.csv", s, &e);
  double read_s = bench_cpu_s() - t0;
  if (!f) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  double span_s = n * every, sum = 0;
  t0 = bench_cpu_s();
  for (long q = 0; q < QUERIES; q++) {
    int64_t t = (int64_t)((double)q / QUERIES * span_s * 1e9);
    int d = (int)(q % devices);
    sum += fault_device_up(f, d, t) + fault_device_speed(f, d, t);
  }
  double query_s = bench_cpu_s() - t0;
  printf("%-34s %8d rows  read %7.3f s (%9.0f rows/s)  %8.2e queries/s  "
         "peak RSS %6.1f MiB  (checksum %.0f)\n", name, n, read_s,
         n / read_s, QUERIES / query_s, bench_peak_rss_kib() / 1024.0, sum);
  fault_free(f);
  free(text);
  scenario_free(s);
  return 0;
}

int main(void) {
  struct { const char *name; int devices, n; const char *kind, *target;
           double every; const char *factor; } cases[] = {
      {"device_slow x 250,000 on device 3", 64, 250000, "device_slow", "3",
       0.5, "0.5"},
      {"site_down x 20,000 on 2,048 devices", 2048, 20000, "site_down", "big",
       2, ""}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
      int rc = run_case(cases[i].name, cases[i].devices, cases[i].n,
                        cases[i].kind, cases[i].target, cases[i].every,
                        cases[i].factor);
      fflush(stdout);
      _exit(rc);
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
      return 1;
  }
  return 0;
}
