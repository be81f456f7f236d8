/* bench_diloco: simulated inner steps per CPU-second of a 64-replica DiLoCo
 * run — worldwide's 64 devices as 64 one-device replicas of GPT-3 XL on
 * A100s (8 sequences each per inner step), H = 50 and 500, plain DiLoCo
 * and streaming DiLoCo (4 fragments, 2 overlapped steps, 4-bit), through
 * the periodic shortcut (sim/outer.h) and, for H = 50 and 48, through the
 * full graph of every inner step, under netem and tcp (where the shortcut
 * is an approximation: compare its outer step with the full graph's).
 * Figures, not tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "sim/sim.h"
#include "tests/bench.h"

static void set(char **field, const char *v) {
  free(*field);
  *field = mem_strdup(v);
}

static void bench(scenario *s, const char *algo, int H, int F, int tau,
                  int bits, bool full, transport_model net) {
  scenario_workload *w = &s->workload;
  set(&w->dp_algo, algo);
  w->inner_steps = H, w->fragments = F, w->overlap_steps = tau;
  w->grad_bits = bits;
  alloc *a = alloc_identity(w->replicas, w->stages);
  sim_options o = sim_options_default();
  o.diloco_full = full;
  o.transport.model = net;
  sim_result r;
  err e = {0};
  int reps = full ? 1 : 3;
  double c0 = bench_cpu_s(), w0 = bench_wall_s();
  for (int i = 0; i < reps; i++) {
    if (sim_run(s, a, &o, &r, &e)) {
      fprintf(stderr, "%s\n", e.msg);
      exit(1);
    }
    if (i + 1 < reps) sim_result_free(&r);
  }
  double cpu = (bench_cpu_s() - c0) / reps, wall = (bench_wall_s() - w0) / reps;
  printf("%-17s %-5s H %3d F %d tau %d %2d-bit %-8s outer %9.2f s, util %5.1f %% | "
         "%3d steps in the graph, %8llu events, cpu %7.3f s, wall %7.3f s: "
         "%9.0f inner steps per CPU-second\n",
         algo, transport_model_name(net), H, F, tau, bits,
         full ? "full" : "shortcut", r.outer_step_s,
         100 * r.compute_utilisation, r.explicit_steps,
         (unsigned long long)r.events, cpu, wall, H / cpu);
  sim_result_free(&r);
  alloc_free(a);
}

int main(void) {
  scenario *s = bench_scenario("worldwide");
  for (int i = 0; i < s->nsites; i++) set(&s->sites[i].gpu, "A100");
  scenario_workload *w = &s->workload;
  w->stages = 1, w->replicas = 64, w->batch = 64 * 8, w->micro_batch = 1;
  w->micro_batches_per_pass = 8;
  for (int m = TRANSPORT_NETEM; m <= TRANSPORT_TCP; m++) {
    transport_model net = (transport_model)m;
    bench(s, "diloco", 50, 1, 0, 16, false, net);
    bench(s, "diloco", 500, 1, 0, 16, false, net);
    bench(s, "diloco", 50, 1, 0, 16, true, net);
    bench(s, "streaming-diloco", 48, 4, 2, 4, false, net);
    bench(s, "streaming-diloco", 500, 4, 2, 4, false, net);
    bench(s, "streaming-diloco", 48, 4, 2, 4, true, net);
  }
  scenario_free(s);
  return 0;
}
