/* bench_training: the workload and the row of tests/bench_training.c and
 * of its SimGrid counterpart tests/simgrid_training.c (one definition, so
 * both sides simulate the same thing and their rows read alike). Header
 * only: each program is one translation unit. */
#ifndef TESTS_BENCH_TRAINING_H
#define TESTS_BENCH_TRAINING_H

#include <math.h>
#include <stdio.h>

#include "models/alloc.h"
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

/* One row of the table: who ran it, the workload, its counts and costs;
 * NAN for a figure a side does not have (SimGrid counts no events). */
static void bench_training_row(const char *engine, int M, const char *net,
                               int iterations, double flows, double events,
                               double cpu_s, double wall_s, double rss10_kib,
                               double rss_kib) {
  printf("%-8s M=%-3d %-6s %4d it  %9.0f flows %10.0f events  %7.3f cpu s "
         "%7.3f wall s  %6.3f M flows/cpu-s %6.2f M ev/cpu-s  peak RSS "
         "%6.1f MiB at 10 it, %6.1f MiB at %d\n",
         engine, M, net, iterations, flows, events, cpu_s, wall_s,
         flows / cpu_s * 1e-6, events / cpu_s * 1e-6, rss10_kib / 1024.0,
         rss_kib / 1024.0, iterations);
}

#endif
