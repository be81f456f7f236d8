/* bench_explain: what `geodes explain` costs on worldwide (64 GPUs, L24,
 * B1024, tcp) — the iteration with its critical path and link statistics
 * (target: under 1 s), and with the sensitivities of the top 10 resources
 * re-simulated (target: under 10 s) — for dtfm-identity and random.
 * Figures, not tests. */
#include <stdio.h>
#include <stdlib.h>

#include "models/alloc.h"
#include "sim/whatif.h"
#include "tests/bench.h"

static void bench(const scenario *s, const char *method, int top) {
  alloc *a = alloc_fixed(method, s->workload.replicas, s->workload.stages, 1);
  sim_options o = sim_options_default();
  err e = {0};
  double w0 = bench_wall_s(), c0 = bench_cpu_s();
  sim_result r;
  sim_critpath cp;
  sim_linkstats ls;
  sim_sensitivity *v = NULL;
  int n = 0;
  if (sim_whatif_explain(s, a, &o, &r, &cp, &ls, false, &e) ||
      (top && sim_whatif_sensitivities(
                  s, a, &o,
                  &(sim_sens_opts){.cp = &cp, .top = top,
                                   .base_s = r.iteration_s},
                  &v, &n, &e))) {
    fprintf(stderr, "%s\n", e.msg);
    exit(1);
  }
  double wall = bench_wall_s() - w0, cpu = bench_cpu_s() - c0;
  printf("explain worldwide %-13s top %2d: iter %8.3f s, path %5zu steps, "
         "%3d re-runs | wall %7.3f s cpu %7.3f s%s\n", method, top,
         r.iteration_s, cp.nsteps, n, wall, cpu,
         top ? (wall < 10 ? "  (< 10 s)" : "  (OVER 10 s)")
             : (wall < 1 ? "  (< 1 s)" : "  (OVER 1 s)"));
  free(v);
  sim_linkstats_free(&ls);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
}

int main(void) {
  scenario *s = bench_scenario("worldwide");
  const char *methods[] = {"dtfm-identity", "random"};
  for (int i = 0; i < 2; i++) {
    bench(s, methods[i], 0);
    bench(s, methods[i], 10);
  }
  scenario_free(s);
  printf("peak memory (max RSS) %.1f MiB\n",
         (double)bench_peak_rss_kib() / 1024);
  return 0;
}
