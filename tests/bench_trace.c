/* bench_trace: loading and replaying a large trace. Writes a 10^6-row trace
 * (8 sites, a full snapshot of 64 ordered pairs every second) to a temporary
 * file, times trace_load, then 10^7 random trace_at and 10^6 random
 * trace_next_change queries; prints rows/s, queries/s and peak RSS. */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench.h"
#include "traces/trace.h"

#define SITES 8
#define ROWS 1000000
#define QUERIES 10000000

/* Writes ROWS rows; returns the time of the last snapshot, seconds. */
static long write_trace(FILE *f, gsl_rng *rng) {
  fprintf(f, "# source: bench_trace (random values)\n"
             "t_s,src,dst,latency_ms,bandwidth_gbps\n");
  long rows = 0, t = 0;
  for (; rows < ROWS; t++)
    for (int a = 0; a < SITES && rows < ROWS; a++)
      for (int b = 0; b < SITES && rows < ROWS; b++, rows++)
        fprintf(f, "%ld,s%d,s%d,%.3f,%.4f\n", t, a, b,
                5 + 200 * gsl_rng_uniform(rng),
                0.1 + 2 * gsl_rng_uniform(rng));
  return t - 1;
}

int main(void) {
  char path[] = "/tmp/bench_trace_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  FILE *f = fdopen(fd, "w");
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 1);
  long last_s = write_trace(f, rng);
  fclose(f);
  long rss0 = bench_peak_rss_kib();

  err e;
  err_clear(&e);
  double t0 = bench_wall_s();
  trace *t = trace_load(path, NULL, 0, &e);
  double load_s = bench_wall_s() - t0;
  unlink(path);
  if (!t) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  long rss_load = bench_peak_rss_kib();

  int64_t span = (last_s + 1) * TRACE_NS_PER_S;
  double sum = 0;
  t0 = bench_wall_s();
  for (long q = 0; q < QUERIES; q++) {
    unsigned long r = gsl_rng_get(rng);
    int a = (int)(r % SITES), b = (int)(r / SITES % SITES);
    int64_t at = (int64_t)(gsl_rng_uniform(rng) * (double)span);
    sum += trace_at(t, a, b, at).latency_ms;
  }
  double at_s = bench_wall_s() - t0;
  t0 = bench_wall_s();  /* the same random draws without the query: the overhead */
  for (long q = 0; q < QUERIES; q++) {
    unsigned long r = gsl_rng_get(rng);
    sum += (double)(r % SITES) + gsl_rng_uniform(rng) * (double)span;
  }
  double rng_s = bench_wall_s() - t0;
  int64_t xs = 0;
  t0 = bench_wall_s();
  for (long q = 0; q < QUERIES / 10; q++) {
    unsigned long r = gsl_rng_get(rng);
    int64_t at = (int64_t)(gsl_rng_uniform(rng) * (double)span);
    xs ^= trace_next_change(t, (int)(r % SITES), (int)(r / SITES % SITES), at);
  }
  double next_s = bench_wall_s() - t0;

  printf("bench_trace: %zu rows, %zu change points, %d sites, %ld s\n",
         trace_rows(t), trace_points(t), trace_nsites(t), last_s);
  printf("  trace_load         %.3f s  %.3g rows/s\n", load_s, ROWS / load_s);
  printf("  trace_at           %.3f s  %.3g queries/s (%d queries; %.3g/s "
         "without the %.3f s of random draws)\n", at_s, QUERIES / at_s, QUERIES,
         QUERIES / (at_s - rng_s), rng_s);
  printf("  trace_next_change  %.3f s  %.3g queries/s\n", next_s,
         QUERIES / 10 / next_s);
  printf("  peak RSS           %ld KiB (before load %ld KiB)\n", rss_load, rss0);
  printf("  (checksum %g %lld)\n", sum, (long long)xs);
  trace_free(t);
  gsl_rng_free(rng);
  return 0;
}
