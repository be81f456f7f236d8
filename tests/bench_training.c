/* bench_training: a training run of many iterations in one process (issue
 * 10) -- 100 iterations of the 64-GPU worldwide workload (8 stages x 8
 * replicas, GPT-3 XL, 24 layers) with 4 and 32 micro-batches per pipeline
 * (one GPipe pass of M micro-batches: batch 8 M), under netem and tcp:
 * flows and events per CPU-second, wall time, and peak memory after 10 and
 * after 100 iterations (flat in N: the run keeps one task graph, rebuilt per
 * iteration in place, not one for all iterations). Each case runs in a
 * process of its own, so its peak is its own and not the previous case's
 * (ru_maxrss never falls). Figures, not tests.
 *
 * SimGrid's figure on the same workload (the same task graph, read back
 * from sim/train.c) is tests/simgrid/simgrid_train's, which the bench
 * target runs after this program where libsimgrid-dev is installed.
 * GEODES_BENCH_ITERATIONS overrides 100. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/alloc.h"
#include "sim/training.h"
#include "tests/bench.h"
#include "traces/scenario.h"

/* The workload of the comparison: the built-in worldwide scenario (64 V100
 * in 8 cities), dtfm-identity placement (pipeline r inside city r), one
 * GPipe pass of M micro-batches per pipeline (batch 8 M, micro-batch 1),
 * central-ps gradient synchronisation. NULL on error (printed). The caller
 * frees both. */
static scenario *bench_training_workload(int M, alloc **a) {
  err e = {0};
  scenario *s = scenario_load("worldwide", &e);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.batch = 8L * M;
  k.micro_batch = 1;
  k.micro_batches_per_pass = M;
  if (!s || scenario_apply(s, &k, &e) != ERR_OK) {
    fprintf(stderr, "bench_training: %s\n", e.msg);
    scenario_free(s);
    return NULL;
  }
  *a = alloc_identity(s->workload.replicas, s->workload.stages);
  return s;
}

/* One row of the table: who ran it, the workload, its counts and costs. */
static void bench_training_row(const char *engine, int M, const char *net,
                               int iterations, double flows, double events,
                               double cpu_s, double wall_s, long rss10_kib,
                               long rss_kib) {
  printf("%-8s M=%-3d %-6s %4d it  %9.0f flows %10.0f events  %7.3f cpu s "
         "%7.3f wall s  %6.2f M flows/cpu-s %6.2f M ev/cpu-s  peak RSS "
         "%6.1f MiB at 10 it, %6.1f MiB at %d\n",
         engine, M, net, iterations, flows, events, cpu_s, wall_s,
         flows / cpu_s * 1e-6, events / cpu_s * 1e-6, rss10_kib / 1024.0,
         rss_kib / 1024.0, iterations);
}

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
                     rss10, bench_peak_rss_kib());
  sim_training_result_free(&r);
  alloc_free(a);
  scenario_free(s);
  return 0;
}

/* run_case in a child process: the peak RSS it reports is that case's. */
static int run_apart(int M, transport_model net, int iterations) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_training: fork");
    return 1;
  }
  if (pid == 0) {
    int rc = run_case(M, net, iterations);
    fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(void) {
  const char *env = getenv("GEODES_BENCH_ITERATIONS");
  int iterations = env ? atoi(env) : 100;
  if (iterations < 1) iterations = 100;
  printf("bench_training: %d iterations of worldwide (64 GPUs, 8 x 8, "
         "dtfm-identity), one process per case\n", iterations);
  int rc = 0;
  const int Ms[] = {4, 32};
  const transport_model nets[] = {TRANSPORT_NETEM, TRANSPORT_TCP};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) rc |= run_apart(Ms[i], nets[j], iterations);
  return rc;
}
