/* bench_cost: DT-FM scores of 64-device partitions (worldwide, 8 x 8) per
 * CPU-second, the scheduler's hot path. DT-FM's Python reference takes
 * about 13 ms of CPU per score (about 75 per CPU-second). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <time.h>

#include "models/cost.h"
#include "tests/bench.h"
#include "traces/scenario.h"

int main(void) {
  err e;
  err_clear(&e);
  scenario *sc = scenario_load("worldwide", &e);
  if (!sc) return fprintf(stderr, "%s\n", e.msg), 1;
  cost_ctx *c = cost_ctx_from_scenario(sc, &e);
  if (!c) return fprintf(stderr, "%s\n", e.msg), 1;
  enum { NPART = 256 };
  static int parts[NPART][64];
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 1);
  for (int p = 0; p < NPART; p++) {
    for (int i = 0; i < 64; i++) parts[p][i] = i;
    gsl_ran_shuffle(r, parts[p], 64, sizeof(int));
  }
  cost_scratch *s = cost_scratch_new(8, 8);
  double sink = 0, t0 = bench_cpu_s(), t;
  long n = 0;
  do {
    for (int p = 0; p < NPART; p++) sink += cost_partition(c, parts[p], s, NULL);
    n += NPART;
  } while ((t = bench_cpu_s() - t0) < 2.0);
  printf("bench_cost: %ld random 64-device partitions (worldwide, 8 x 8) in "
         "%.2f CPU-s: %.0f scores per CPU-second, %.1f us each "
         "(DT-FM's Python: about 75, 13 ms each) [checksum %.3f]\n",
         n, t, n / t, 1e6 * t / n, sink / n);
  cost_scratch_free(s);
  gsl_rng_free(r);
  cost_ctx_free(c);
  scenario_free(sc);
  return 0;
}
