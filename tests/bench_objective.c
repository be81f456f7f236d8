/* bench_objective: what the memory constraint and the compute-aware
 * objective cost inside a search — GCMA, 5000 candidates, judged by DT-FM's
 * score plain, by DT-FM's score under the memory check (worldwide: every
 * V100 holds every stage, the check is made once; volunteer-mix under
 * Megatron: 16 GB GPUs cannot hold every stage, so each candidate is
 * realised and checked), and by the predictor. CPU seconds. Not a test:
 * it prints numbers for the issue note. */
#include <stdio.h>
#include <stdlib.h>

#include "schedules/gcma.h"
#include "schedules/objective.h"
#include "tests/bench.h"

static void run(const char *label, const cost_ctx *c,
                const search_objective *obj, const objective *o) {
  search_opts so;
  search_opts_default(&so);
  so.seed = 1;
  err e;
  err_clear(&e);
  long refused0 = o ? objective_refused(o) : 0; /* o counts for every search */
  double t0 = bench_cpu_s();
  search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, obj, &so, &e);
  double dt = bench_cpu_s() - t0;
  if (!r) {
    fprintf(stderr, "bench_objective: %s\n", e.msg);
    return;
  }
  printf("%-44s %5ld candidates: %.3f CPU-s (%.1f us each), best %.4g s, "
         "%ld refused\n", label, r->candidates, dt, 1e6 * dt / r->candidates,
         r->objective_s, (o ? objective_refused(o) : 0L) - refused0);
  search_result_free(r);
}

static void scenario_bench(const char *name, const char *runtime) {
  err e;
  err_clear(&e);
  scenario *s = scenario_load(name, &e);
  bool applied = true;
  if (s && runtime) {
    scenario_knobs k;
    scenario_knobs_init(&k);
    k.runtime = runtime;
    k.micro_batches_per_pass = s->workload.batch / s->workload.replicas;
    applied = scenario_apply(s, &k, &e) == ERR_OK;
  }
  cost_ctx *c = s && applied ? cost_ctx_from_scenario(s, &e) : NULL;
  objective *o = c ? objective_new(s, c, NULL, false, &e) : NULL;
  objective *ob = c ? objective_new(s, c, NULL, true, &e) : NULL;
  if (!o || !ob) {
    fprintf(stderr, "bench_objective: %s\n", e.msg);
    return;
  }
  char label[128];
  snprintf(label, sizeof label, "%s%s%s: dtfm-score", name, runtime ? " " : "",
           runtime ? runtime : "");
  run(label, c, NULL, NULL);
  search_objective d = objective_dtfm(o), p = objective_predicted(o);
  search_objective pb = objective_predicted(ob);
  snprintf(label, sizeof label, "%s%s%s: dtfm-score, memory checked", name,
           runtime ? " " : "", runtime ? runtime : "");
  run(label, c, &d, o);
  snprintf(label, sizeof label, "%s%s%s: predicted", name, runtime ? " " : "",
           runtime ? runtime : "");
  run(label, c, &p, o);
  snprintf(label, sizeof label, "%s%s%s: predicted, balanced", name,
           runtime ? " " : "", runtime ? runtime : "");
  run(label, c, &pb, ob);
  objective_free(ob);
  objective_free(o);
  cost_ctx_free(c);
  scenario_free(s);
}

int main(void) {
  scenario_bench("worldwide", NULL);
  scenario_bench("volunteer-mix", NULL);
  scenario_bench("volunteer-mix", "megatron");
  return 0;
}
