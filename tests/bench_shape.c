/* bench_shape: `schedule --shape auto`'s search (schedules/shape), the
 * predictor on every configuration and the simulation (tcp) on the
 * predictor's best: issue 21's 24-GPU, 3-city mixed cluster (target: under
 * 10 s on two cores) and worldwide's 64 GPUs (under a minute), with
 * volunteer-mix beside them. Wall and CPU seconds. Not a test: it prints
 * numbers for the issue note. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "schedules/shape.h"
#include "sim/sim.h"
#include "tests/bench.h"

static double simulate(void *ctx, const scenario *v, const alloc *a, err *e) {
  sim_result r = {0};
  double t = sim_run(v, a, ctx, &r, e) == ERR_OK ? r.iteration_s : NAN;
  sim_result_free(&r);
  return t;
}

static void run(const char *label, const char *name) {
  err e;
  err_clear(&e);
  scenario *s = scenario_load(name, &e);
  if (!s) {
    fprintf(stderr, "bench_shape: %s\n", e.msg);
    return;
  }
  sim_options so = sim_options_default();
  so.seed = s->seed;
  shape_opts o;
  shape_opts_default(&o);
  o.t = so.transport;
  o.sim = simulate, o.sim_ctx = &so;
  shape_result r;
  double w0 = bench_wall_s(), c0 = bench_cpu_s();
  int rc = shape_search(s, &o, &r, &e);
  double wall = bench_wall_s() - w0, cpu = bench_cpu_s() - c0;
  if (rc) {
    fprintf(stderr, "bench_shape: %s\n", e.msg);
  } else {
    const shape_config *b = &r.all[r.best];
    printf("shape search %-26s %2d devices: %6.2f s wall, %6.2f CPU-s; %4d "
           "subsets, %6ld configurations, %3ld simulated; best %d x %d on "
           "%d, %.3f samples/s\n", label, s->ndevices, wall, cpu, r.nsubsets,
           r.considered, r.simulated, b->stages, b->replicas, b->ndev,
           b->samples_per_s);
    shape_result_free(&r);
  }
  scenario_free(s);
}

int main(void) {
  run("three-city-24 (issue 21)",
      GEODES_SOURCE_DIR "/tests/fixtures/shape/three-city-24.json");
  run("worldwide", "worldwide");
  run("volunteer-mix", "volunteer-mix");
  return 0;
}
