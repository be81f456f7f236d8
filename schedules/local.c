/* local: see local.h. First-improvement hill climbing over swaps: cheap to
 * reason about, and every evaluation is a full objective call, so the
 * budget is counted in evaluations rather than moves. */
#include "schedules/local.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/mem.h"

static double evaluate(const search_objective *obj, const alloc *a, err *e) {
  double v = obj->alloc(obj->ctx, a, e);
  if (isnan(v) && e && e->code == ERR_OK)
    err_set(e, ERR_RANGE, "%s: the objective returned no value",
            obj->name ? obj->name : "objective");
  return v;
}

/* Draws a swap (i, j) of entries of a->device: inside one column (the two
 * replicas exchange their device at that stage) or across two columns. */
static void draw_swap(gsl_rng *rng, const alloc *a, int *i, int *j) {
  int R = a->replicas, S = a->stages;
  bool within = R > 1 && (S == 1 || gsl_rng_uniform(rng) < 0.5);
  int r1 = (int)gsl_rng_uniform_int(rng, (unsigned long)R);
  int s1 = (int)gsl_rng_uniform_int(rng, (unsigned long)S);
  int r2, s2;
  if (within) {
    s2 = s1;
    r2 = (r1 + 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(R - 1))) % R;
  } else {
    r2 = (int)gsl_rng_uniform_int(rng, (unsigned long)R);
    s2 = (s1 + 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(S - 1))) % S;
  }
  *i = r1 * S + s1;
  *j = r2 * S + s2;
}

search_result *local_search(const cost_ctx *c, const search_objective *obj,
                            const alloc *const *starts, int nstarts,
                            const search_opts *o, err *e) {
  int R = starts[0]->replicas, S = starts[0]->stages, n = R * S;
  long budget = o->trials >= 0 ? o->trials : SEARCH_SIM_TRIALS;
  if (budget < nstarts) budget = nstarts;
  search_log log;
  search_log_init(&log, o, budget);
  alloc *best = alloc_new(R, S), *cur = alloc_new(R, S);
  double best_s = INFINITY, start_s = NAN;
  search_result *r = NULL;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, (unsigned long)o->seed);
  for (int k = 0; k < nstarts; k++) {
    double v = evaluate(obj, starts[k], e);
    if (isnan(v)) goto done;
    if (k == 0) start_s = v;
    if (search_log_push(&log, v)) {
      best_s = v;
      memcpy(best->device, starts[k]->device, (size_t)n * sizeof(int));
    }
  }
  if (n > 1)
    for (long t = nstarts; t < budget; t++) {
      int i, j;
      memcpy(cur->device, best->device, (size_t)n * sizeof(int));
      draw_swap(rng, cur, &i, &j);
      int tmp = cur->device[i];
      cur->device[i] = cur->device[j];
      cur->device[j] = tmp;
      double v = evaluate(obj, cur, e);
      if (isnan(v)) goto done;
      if (search_log_push(&log, v)) {
        best_s = v;
        alloc *swap = best;
        best = cur;
        cur = swap;
      }
    }
  r = search_result_new("sim", best, c);
  best = NULL;
  r->objective_s = best_s;
  r->start_s = start_s;
  search_log_finish(&log, r);
done:
  if (!r) free(log.best);
  alloc_free(best);
  alloc_free(cur);
  gsl_rng_free(rng);
  return r;
}
