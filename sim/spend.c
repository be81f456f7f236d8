/* spend: see spend.h. */
#include "sim/spend.h"

#include <stdlib.h>

#include "base/mem.h"
#include "schedules/objective.h"
#include "sim/place.h"

/* The site bytes of r, each times k, as the bill's pairs. */
static bill_bytes *pairs_of(const sim_result *r, double k) {
  bill_bytes *v = mem_alloc(((size_t)r->nsite_bytes + 1) * sizeof *v);
  for (int i = 0; i < r->nsite_bytes; i++)
    v[i] = (bill_bytes){r->site_bytes[i].src_site, r->site_bytes[i].dst_site,
                        r->site_bytes[i].bytes * k};
  return v;
}

/* Each device's busy seconds over `wall` seconds of r's utilisation. */
static double *busy_of(const scenario *s, const sim_result *r, double wall) {
  double *b = mem_calloc((size_t)s->ndevices + 1, sizeof *b);
  for (int d = 0; d < r->ndevices && d < s->ndevices && r->utilisation; d++)
    b[d] = r->utilisation[d] * wall;
  return b;
}

int sim_spend_iteration(const scenario *s, const sim_result *r, bill *out,
                        err *e) {
  bill_bytes *v = pairs_of(r, 1);
  double *busy = busy_of(s, r, r->iteration_s);
  bill_use u = {.held_s = r->iteration_s, .busy_s = busy, .bytes = v,
                .nbytes = r->nsite_bytes, .samples = s->workload.batch};
  int rc = bill_make(s, &u, out, e);
  free(v), free(busy);
  return rc;
}

int sim_spend_predicted(const scenario *s, const spec_workload *w,
                        const alloc *a, double iteration_s, bill *out,
                        err *e) {
  int n = 0;
  bill_bytes *v = bill_traffic_pairs(s, w, a, &n);
  bill_use u = {.held_s = iteration_s, .bytes = v, .nbytes = n,
                .samples = w->batch};
  int rc = bill_make(s, &u, out, e);
  free(v);
  return rc;
}

int sim_spend_training(const scenario *s, const sim_training_result *tr,
                       const sim_result *g, bill *out, err *e) {
  int H = tr->inner_steps > 0 ? tr->inner_steps : 1;
  double row_s = tr->inner_steps > 0 ? g->outer_step_s : g->iteration_s;
  bill_bytes *v = pairs_of(g, (double)tr->completed * H);
  double *busy = busy_of(s, g, row_s * (double)tr->completed);
  const char *names[SIM_LOST_N];
  for (int c = 0; c < SIM_LOST_N; c++) names[c] = sim_lost_name((sim_lost)c);
  bill_use u = {.held_s = tr->total_s, .busy_s = busy, .bytes = v,
                .nbytes = g->nsite_bytes, .samples = tr->samples,
                .lost_s = tr->lost_s, .lost_names = names,
                .nlost = SIM_LOST_N};
  int rc = bill_make(s, &u, out, e);
  free(v), free(busy);
  return rc;
}

int sim_spend_fastest(const scenario *s, const cost_ctx *c, const char *method,
                      const sim_options *so, const search_opts *o, alloc **a,
                      sim_result *r, bill *b, err *e) {
  *a = NULL;
  objective *ob = objective_new(s, c, &so->transport, false, e);
  if (!ob) return e->code;
  search_objective obj = objective_predicted(ob);
  search_opts q = *o;
  q.progress = NULL;
  search_result *sr = sim_place_search_with(s, c, method, &q, so, &obj, e);
  int rc = sr ? sim_run(s, sr->best, so, r, e) : e->code;
  if (!rc) rc = sim_spend_iteration(s, r, b, e);
  if (!rc) *a = sr->best, sr->best = NULL;
  search_result_free(sr);
  objective_free(ob);
  return rc;
}
