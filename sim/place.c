/* place: see place.h. The simulation objective borrows the scenario and the
 * options for the length of one search; nothing outlives the call. */
#include "sim/place.h"

#include <math.h>

typedef struct place_objective {
  const scenario *s;
  const sim_options *o;
} place_objective;

static double simulate(void *ctx, const alloc *a, err *e) {
  const place_objective *p = ctx;
  sim_result r = {0};
  double t = NAN;
  if (sim_run(p->s, a, p->o, &r, e) == ERR_OK) t = r.iteration_s;
  sim_result_free(&r);
  return t;
}

search_result *sim_place_search(const scenario *s, const cost_ctx *c,
                                const char *method, const search_opts *o,
                                const sim_options *so, err *e) {
  sim_options defaults = sim_options_default();
  place_objective p = {s, so ? so : &defaults};
  search_objective obj = {.name = "simulated", .alloc = simulate, .ctx = &p};
  return schedule_method(method, c, o, &obj, e);
}

alloc *sim_place(const scenario *s, const cost_ctx *c, const char *method,
                 const sim_options *so, err *e) {
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  search_result *r = sim_place_search(s, c, method, &o, so, e);
  if (!r) return NULL;
  alloc *a = r->best;
  r->best = NULL;
  search_result_free(r);
  return a;
}
