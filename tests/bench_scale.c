/* bench_scale: time and peak memory against devices (issue 25's targets).
 * Each case runs in a child process (fork) so that its peak resident
 * memory is its own (wait4's ru_maxrss):
 * - volunteer-10k as built in: one DiLoCo outer step (100 inner steps, the
 *   exchange in two levels), tcp: target <= 60 s on one core, <= 2 GB;
 * - the curve: uniform sites of 250 consumer GPUs (40 ms, 0.43 Gbit/s
 *   between and inside them, a 1 Gbit/s NIC each), GPT-3 XL in 4 stages,
 *   8 sequences per replica, DiLoCo's outer step with the exchange in two
 *   levels (hier-ring), netem, from 10^3 devices up to 10^4, or to 10^5
 *   with `bench_scale --huge` (target: one iteration <= 8 GB), and the
 *   bytes per device of each;
 * - the same at 10^4 under central-ps and hier-ring (one iteration of PS
 *   pipelines).
 * Figures, not tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "sim/sim.h"
#include "tests/bench.h"

/* A uniform scenario of n devices in sites of 250 (JSON text, owned). */
static char *uniform(int n, const char *algo, int levels) {
  size_t cap = 256 + (size_t)(n / 250 + 1) * 96, len = 0;
  char *t = mem_alloc(cap + 1024);
  len += (size_t)snprintf(t, cap, "{\"name\": \"u%d\", \"sites\": [", n);
  for (int i = 0, left = n; left > 0; i++, left -= 250)
    len += (size_t)snprintf(t + len, cap - len,
                            "%s{\"name\": \"c%d\", \"devices\": %d, \"gpu\": "
                            "\"RTX4090\", \"nic_gbps\": 1}",
                            i ? ", " : "", i, left < 250 ? left : 250);
  snprintf(t + len, cap + 1024 - len,
           "], \"network\": {\"latency_ms\": 40, \"bandwidth_gbps\": 0.43},"
           " \"workload\": {\"model\": \"gpt3-xl\", \"batch\": %d,"
           " \"micro_batch\": 1, \"stages\": 4, \"replicas\": %d,"
           " \"micro_batches_per_pass\": 8, \"dp_algo\": \"%s\","
           " \"inner_steps\": 100, \"grad_bits\": 8, \"exchange_levels\": %d}}",
           n / 4 * 8, n / 4, algo, levels);
  return t;
}

/* Runs one simulation of s (its identity allocation) in this process and
 * prints its figures; exits 1 on an error. */
static void run(scenario *s, transport_model m, const char *label) {
  alloc *a = alloc_identity(s->workload.replicas, s->workload.stages);
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_result r;
  err e = {0};
  double w0 = bench_wall_s(), c0 = bench_cpu_s();
  if (sim_run(s, a, &o, &r, &e)) {
    fprintf(stderr, "%s: %s\n", label, e.msg);
    exit(1);
  }
  double wall = bench_wall_s() - w0, cpu = bench_cpu_s() - c0;
  printf("%-34s %7d devices %-5s iteration %9.3f s (outer %9.1f s), "
         "%10llu events, cpu %7.2f s, wall %7.2f s",
         label, s->ndevices, transport_model_name(m), r.iteration_s,
         r.outer_step_s, (unsigned long long)r.events, cpu, wall);
  fflush(stdout);
  sim_result_free(&r);
  alloc_free(a);
}

/* One case in a child process, whose peak resident memory (total and per
 * device) is then the case's own. */
static void child(const char *name_or_text, bool text, transport_model m,
                  const char *label) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    err e = {0};
    scenario *s = text ? scenario_parse(name_or_text, strlen(name_or_text),
                                        label, &e)
                       : scenario_load(name_or_text, &e);
    if (!s) {
      fprintf(stderr, "%s: %s\n", label, e.msg);
      _exit(1);
    }
    run(s, m, label);
    long kib = bench_peak_rss_kib();
    printf(", peak %8.1f MB, %6.1f kB per device\n", kib / 1024.0,
           kib * 1.024 / s->ndevices);
    fflush(stdout);
    scenario_free(s);
    _exit(0);
  }
  int st;
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
      WEXITSTATUS(st))
    printf("\n%s: failed\n", label);
}

int main(int argc, char **argv) {
  bool huge = argc > 1 && strcmp(argv[1], "--huge") == 0;
  child("volunteer-10k", false, TRANSPORT_TCP, "volunteer-10k (diloco, H 100)");
  const int ns[] = {1000, 3000, 10000, 30000, 100000};
  for (int i = 0; i < 5 && (huge || ns[i] <= 10000); i++) {
    char *t = uniform(ns[i], "diloco", 2);
    char label[64];
    snprintf(label, sizeof label, "uniform diloco hier (H 100) %d", ns[i]);
    child(t, true, TRANSPORT_NETEM, label);
    free(t);
  }
  const char *ps[] = {"central-ps", "hier-ring"};
  for (int i = 0; i < 2; i++) {
    char *t = uniform(10000, ps[i], 1);
    char label[64];
    snprintf(label, sizeof label, "uniform %s, one iteration", ps[i]);
    child(t, true, TRANSPORT_NETEM, label);
    free(t);
  }
  return 0;
}
