/* bench_training: a training run of many iterations in one process (issue
 * 10) -- 100 iterations of the 64-GPU worldwide workload (8 stages x 8
 * replicas, GPT-3 XL, 24 layers) with 4 and 32 micro-batches per pipeline
 * (one GPipe pass of M micro-batches: batch 8 M), under netem and tcp:
 * flows and events per CPU-second, wall time, and peak memory after 10 and
 * after 100 iterations (flat in N: the run keeps one task graph, rebuilt per
 * iteration in place, not one for all iterations). Figures, not tests.
 *
 * SimGrid's figure on the same workload follows these rows: the program
 * tests/simgrid_training.c, built when libsimgrid-dev is installed, runs
 * the workload of tests/bench_training.h (the one definition) and prints
 * its rows with bench_training_row, so both tables read alike; without it
 * the bench says so. GEODES_BENCH_ITERATIONS overrides 100. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/training.h"
#include "tests/bench.h"
#include "tests/bench_training.h"
#include "traces/scenario.h"

static int run_case(int M, transport_model net, int iterations) {
  alloc *a = NULL;
  scenario *s = bench_training_workload(M, &a);
  if (!s) return 1;
  sim_training_opts o = sim_training_opts_default();
  o.sim.transport.model = net;
  sim_training_result r;
  err e = {0};
  o.iterations = 10;
  if (sim_training_run(s, a, &o, &r, &e) != ERR_OK) {
    fprintf(stderr, "bench_training: %s\n", e.msg);
    return 1;
  }
  sim_training_result_free(&r);
  long rss10 = bench_peak_rss_kib();
  o.iterations = iterations;
  double c0 = bench_cpu_s(), w0 = bench_wall_s();
  if (sim_training_run(s, a, &o, &r, &e) != ERR_OK) {
    fprintf(stderr, "bench_training: %s\n", e.msg);
    return 1;
  }
  double cpu = bench_cpu_s() - c0, wall = bench_wall_s() - w0;
  bench_training_row("geodes", M, transport_model_name(net), iterations,
                     (double)r.agg.flows, (double)r.agg.events, cpu, wall,
                     (double)rss10, (double)bench_peak_rss_kib());
  sim_training_result_free(&r);
  alloc_free(a);
  scenario_free(s);
  return 0;
}

int main(void) {
  const char *env = getenv("GEODES_BENCH_ITERATIONS");
  int iterations = env ? atoi(env) : 100;
  if (iterations < 1) iterations = 100;
  printf("bench_training: %d iterations of worldwide (64 GPUs, 8 x 8, "
         "dtfm-identity), one process\n", iterations);
  int rc = 0;
  const int Ms[] = {4, 32};
  const transport_model nets[] = {TRANSPORT_NETEM, TRANSPORT_TCP};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) rc |= run_case(Ms[i], nets[j], iterations);
#ifdef GEODES_SIMGRID_TRAINING
  fflush(stdout);
  for (int i = 0; i < 2; i++) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %d %d", GEODES_SIMGRID_TRAINING, Ms[i],
             iterations);
    rc |= system(cmd) != 0;
  }
#else
  printf("simgrid  not built: libsimgrid-dev was not found when configuring "
         "(apt-get install libsimgrid-dev, then configure again)\n");
#endif
  return rc;
}
