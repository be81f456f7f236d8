/* bench_diloco_run: a DiLoCo training run with faults in one process (issue
 * 23) — 10,000 inner steps (100 outer steps of H = 100) of the 64-GPU
 * worldwide workload under reroute, with spot interruptions synthesised at
 * 30 times the measured rate (traces/fault_synth.h, seed 1): CPU and wall
 * time, peak memory, and how many outer steps the faults sent to the full
 * graph of all H inner steps (sim/training_outer.c) — those are the run's
 * cost; a steady step costs one inner step's graph. Figures, not tests.
 * GEODES_BENCH_INNER overrides 10,000 (a multiple of 100). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/training.h"
#include "tests/bench.h"
#include "traces/fault.h"
#include "traces/fault_synth.h"
#include "traces/scenario.h"

#define H 100

/* Spot interruptions of s over duration_s at rate_scale x, parsed. */
static fault_trace *synth(const scenario *s, double duration_s,
                          double rate_scale, err *e) {
  fault_params *p = fault_params_builtin(e);
  if (!p) return NULL;
  fault_synth_opts o = fault_synth_opts_default();
  o.duration_s = duration_s, o.seed = 1, o.rate_scale = rate_scale;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int rc = f ? fault_synth_write(f, "bench.csv", s, p, &o, e) : ERR_IO;
  if (f) fclose(f);
  fault_params_free(p);
  fault_trace *t = rc == ERR_OK ? fault_parse(text, len, "bench.csv", s, e)
                                : NULL;
  free(text);
  return t;
}

int main(void) {
  const char *env = getenv("GEODES_BENCH_INNER");
  int inner = env ? atoi(env) : 10000;
  if (inner < H || inner % H) inner = 10000;
  err e = {0};
  scenario *s = scenario_load("worldwide", &e);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.dp_algo = "diloco";
  k.inner_steps = H;
  if (!s || scenario_apply(s, &k, &e) != ERR_OK) {
    fprintf(stderr, "bench_diloco_run: %s\n", e.msg);
    scenario_free(s);
    return 1;
  }
  alloc *a = alloc_identity(s->workload.replicas, s->workload.stages);
  /* an outer step is about 1,340 s: faults over four times the run */
  fault_trace *f = synth(s, 4.0 * 1340 * inner / H, 30, &e);
  if (!f) {
    fprintf(stderr, "bench_diloco_run: %s\n", e.msg);
    return 1;
  }
  sim_training_opts o = sim_training_opts_default();
  o.iterations = inner;
  o.faults = f;
  o.recovery = SIM_RECOVERY_REROUTE;
  sim_training_result r;
  double c0 = bench_cpu_s(), w0 = bench_wall_s();
  int rc = sim_training_run(s, a, &o, &r, &e);
  double cpu = bench_cpu_s() - c0, wall = bench_wall_s() - w0;
  if (rc != ERR_OK) {
    fprintf(stderr, "bench_diloco_run: %s\n", e.msg);
    return 1;
  }
  printf("DiLoCo run, worldwide, H=%d, %d inner steps (%zu outer steps), "
         "reroute, spot faults x30: %d losses, %d replicas dropped (%lld "
         "inner steps lost), %.0f s simulated, goodput %.2f samples/s, %llu "
         "events  %.2f cpu s  %.2f wall s  peak RSS %.1f MiB\n",
         H, inner, r.n, r.c.faults_seen, r.c.dropped_replicas,
         r.c.dropped_steps, r.total_s, r.samples_per_s,
         (unsigned long long)r.agg.events, cpu, wall,
         bench_peak_rss_kib() / 1024.0);
  sim_training_result_free(&r);
  fault_free(f);
  alloc_free(a);
  scenario_free(s);
  return 0;
}
