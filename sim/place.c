/* place: see place.h. The simulation objective borrows the scenario and the
 * options for the length of one search and owns the graph its runs reuse
 * (sim_run_reuse), freed when the search returns; nothing outlives the
 * call. */
#include "sim/place.h"

#include <math.h>

typedef struct place_objective {
  const scenario *s;
  const sim_options *o;
  sim_graph *spare; /* owned: the last run's graph, emptied */
  const sim_place_known *known;
  int nknown;
} place_objective;

/* The simulated time of a (a known one's value); +inf for one that does
 * not fit its devices' memory (a constraint the search goes around, not a
 * failure). */
static double simulate(void *ctx, const alloc *a, err *e) {
  place_objective *p = ctx;
  for (int k = 0; k < p->nknown; k++)
    if (alloc_equal(a, p->known[k].a)) return p->known[k].iteration_s;
  sim_result r = {0};
  err se = {0};
  double t = NAN;
  int rc = sim_run_reuse(p->s, a, p->o, &p->spare, &r, &se);
  if (rc == ERR_OK) t = r.iteration_s;
  else if (rc == ERR_MEMORY) t = INFINITY;
  else err_set(e, rc, "%s", se.msg);
  sim_result_free(&r);
  return t;
}

search_result *sim_place_search(const scenario *s, const cost_ctx *c,
                                const char *method, const search_opts *o,
                                const sim_options *so, err *e) {
  return sim_place_search_with(s, c, method, o, so, NULL, e);
}

/* The search of method, `sim` simulating what p does not know. */
static search_result *search(const cost_ctx *c, const char *method,
                             const search_opts *o, const search_objective *obj,
                             place_objective *p, err *e) {
  sim_options defaults = sim_options_default();
  if (!p->o) p->o = &defaults;
  search_objective sim = {.name = "simulated", .alloc = simulate, .ctx = p};
  search_result *r = schedule_method_with(method, c, o, obj, &sim, e);
  sim_graph_free(p->spare);
  return r;
}

search_result *sim_place_search_with(const scenario *s, const cost_ctx *c,
                                     const char *method, const search_opts *o,
                                     const sim_options *so,
                                     const search_objective *obj, err *e) {
  place_objective p = {.s = s, .o = so};
  return search(c, method, o, obj, &p, e);
}

search_result *sim_place_search_known(const scenario *s, const cost_ctx *c,
                                      const char *method,
                                      const search_opts *o,
                                      const sim_options *so,
                                      const sim_place_known *known,
                                      int nknown, err *e) {
  place_objective p = {.s = s, .o = so, .known = known, .nknown = nknown};
  return search(c, method, o, NULL, &p, e);
}

alloc *sim_place_as(const scenario *s, const cost_ctx *c, const char *method,
                    const search_opts *o, const sim_options *so, err *e) {
  search_result *r = sim_place_search(s, c, method, o, so, e);
  if (!r) return NULL;
  alloc *a = r->best;
  r->best = NULL;
  search_result_free(r);
  return a;
}

alloc *sim_place(const scenario *s, const cost_ctx *c, const char *method,
                 const sim_options *so, err *e) {
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  return sim_place_as(s, c, method, &o, so, e);
}

alloc *sim_place_scenario(const scenario *s, const char *method,
                          const sim_options *so, err *e) {
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  alloc *a = c ? sim_place(s, c, method, so, e) : NULL;
  cost_ctx_free(c);
  return a;
}
