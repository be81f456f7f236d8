/* shape_decide: the decision of a shape search (shape_parts.h): the
 * predictor's best and each shape's best simulated, by prediction, while
 * their devices fit the budget; the best by the deciding time, among the
 * simulated only when any was.
 * Invariant: a configuration is simulated at most once, and which ones are
 * does not depend on the order they are simulated in. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/predict.h"
#include "schedules/shape_parts.h"
#include "traces/scenario_subset.h"

/* Whether a and b are one shape: (stages, replicas, dp_algo). */
static bool same_shape(const shape_config *a, const shape_config *b) {
  return a->stages == b->stages && a->replicas == b->replicas &&
         strcmp(a->dp_algo, b->dp_algo) == 0;
}

typedef struct ranked { double score; long i; } ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Simulates configuration i (once). */
static int simulate(shape_ctx *x, long i, err *e) {
  shape_config *c = &x->r->all[i];
  if (!isnan(c->simulated_s)) return ERR_OK;
  scenario *v = shape_config_view(x->s, x->o, c);
  alloc *a = shape_config_alloc(c);
  err se = {0};
  double t = x->o->sim(x->o->sim_ctx, v, a, &se);
  alloc_free(a);
  scenario_subset_free(v);
  if (isnan(t))
    return err_set(e, se.code ? se.code : ERR_CONFIG, "%s", se.msg);
  c->simulated_s = t;
  x->r->simulated++;
  shape_step(x);
  return ERR_OK;
}

/* Whether configuration i is simulated within *budget (always: even past
 * it), which it then uses: not when it was simulated already. */
static bool fits(const shape_ctx *x, long i, bool always, long *budget) {
  const shape_config *c = &x->r->all[i];
  if (!isnan(c->simulated_s) || (!always && c->ndev > *budget)) return false;
  *budget -= c->ndev;
  return true;
}

/* The devices' budget of the decision's simulations. */
static long budget_of(const shape_ctx *x) {
  return x->o->simulate_devices > 0 ? x->o->simulate_devices : LONG_MAX;
}

/* A shape's sort key: devices, then stages, then dp algorithm name. */
typedef struct shape_key {
  int ndev, stages;
  const char *algo;
  long i;
} shape_key;

static int cmp_shape(const void *a, const void *b) {
  const shape_key *x = a, *y = b;
  if (x->ndev != y->ndev) return x->ndev < y->ndev ? -1 : 1;
  if (x->stages != y->stages) return x->stages < y->stages ? -1 : 1;
  return strcmp(x->algo, y->algo);
}

static void sort_shapes(shape_result *r) {
  shape_key *k = mem_alloc((size_t)(r->nshapes + 1) * sizeof *k);
  for (int g = 0; g < r->nshapes; g++) {
    const shape_config *c = &r->all[r->per_shape[g]];
    k[g] = (shape_key){c->ndev, c->stages, c->dp_algo, r->per_shape[g]};
  }
  qsort(k, (size_t)r->nshapes, sizeof *k, cmp_shape);
  for (int g = 0; g < r->nshapes; g++) r->per_shape[g] = k[g].i;
  free(k);
}

/* The best of each (stages, replicas, dp_algo) into r by the deciding
 * time, among the simulated ones only when sim_only. */
static void group(shape_result *r, shape_goal goal, bool sim_only) {
  r->per_shape = mem_alloc((size_t)(r->nall > 0 ? r->nall : 1) *
                           sizeof *r->per_shape);
  r->nshapes = 0;
  int simulated = 0; /* shapes with a simulated configuration */
  for (long j = 0; j < (sim_only ? 2 : 1) * r->nall; j++) {
    /* sim_only: the simulated first; then a shape none of whose
     * configurations was simulated (past the budget) keeps its predicted
     * best */
    long i = j % r->nall;
    const shape_config *c = &r->all[i];
    if (j == r->nall) simulated = r->nshapes;
    if (sim_only && (j < r->nall) == isnan(c->simulated_s)) continue;
    int g = 0;
    while (g < r->nshapes && !same_shape(&r->all[r->per_shape[g]], c)) g++;
    if (g < simulated) continue;
    if (g == r->nshapes) r->per_shape[r->nshapes++] = i;
    else if (shape_score(goal, c, shape_decided_s(c)) <
             shape_score(goal, &r->all[r->per_shape[g]],
                         shape_decided_s(&r->all[r->per_shape[g]])))
      r->per_shape[g] = i;
  }
  sort_shapes(r);
}

/* c's score under goal at time t, +inf when over o's budget in dollars
 * per hour. */
static double within(const shape_opts *o, shape_goal goal,
                     const shape_config *c, double t) {
  bool over = o->max_usd_per_hour > 0 &&
              !(shape_usd_per_hour(c, t) <= o->max_usd_per_hour);
  return over ? INFINITY : shape_score(goal, c, t);
}

/* Marks in on[] what a search under goal simulates among the
 * configurations of r at batch (0: every one): the predictor's k best by
 * goal's score within o's budget, and the best of each (stages, replicas,
 * dp_algo). */
static void mark(const shape_result *r, const shape_opts *o, shape_goal goal,
                 int batch, long k, bool *on) {
  ranked *v = mem_alloc((size_t)(r->nall + 1) * sizeof *v);
  long n = 0;
  for (long i = 0; i < r->nall; i++)
    if (!batch || r->all[i].batch == batch)
      v[n++] = (ranked){within(o, goal, &r->all[i], r->all[i].predicted_s), i};
  qsort(v, (size_t)n, sizeof *v, cmp_ranked);
  for (long i = 0; i < n && i < k; i++) on[v[i].i] = true;
  long *best = mem_alloc((size_t)(n + 1) * sizeof *best);
  int ng = 0;
  for (long j = 0; j < n; j++) { /* v's order: the first of a group is its best */
    const shape_config *c = &r->all[v[j].i];
    int g = 0;
    while (g < ng && !same_shape(&r->all[best[g]], c)) g++;
    if (g == ng) best[ng++] = v[j].i, on[v[j].i] = true;
  }
  free(best), free(v);
}

/* What the decision simulates, in order into v (returns how many): mark's
 * under the goal and, for throughput, the iteration search's own at the
 * scenario's batch (so that its best, more samples/s or not, is simulated
 * here too), by the goal's predicted score: its k best come first. */
static long plan(const shape_ctx *x, ranked *v) {
  const shape_result *r = x->r;
  bool *on = mem_calloc((size_t)r->nall + 1, sizeof *on);
  mark(r, x->o, x->o->goal, 0, x->o->simulate, on);
  if (shape_per_replica_batch(x->o->goal))
    mark(r, x->o, SHAPE_ITERATION, x->s->workload.batch, x->o->simulate, on);
  long n = 0;
  for (long i = 0; i < r->nall; i++)
    if (on[i])
      v[n++] = (ranked){within(x->o, x->o->goal, &r->all[i],
                               r->all[i].predicted_s), i};
  qsort(v, (size_t)n, sizeof *v, cmp_ranked);
  free(on);
  return n;
}

/* The best by the deciding time within the budget (only simulated ones
 * when any was; -1 when none is within it), the fastest beside it, and
 * how many were over the budget. */
static void pick(shape_ctx *x) {
  shape_result *r = x->r;
  shape_goal goal = x->o->goal;
  r->best = r->fastest = -1;
  for (long i = 0; i < r->nall; i++) {
    shape_config *c = &r->all[i];
    double t = shape_decided_s(c), mine = within(x->o, goal, c, t);
    c->samples_per_s = c->batch / t;
    bool counts = !x->o->sim || x->o->simulate <= 0 || !isnan(c->simulated_s);
    if (!counts) continue;
    r->over_budget += isinf(mine) && !isinf(shape_score(goal, c, t));
    if (!isinf(mine) &&
        (r->best < 0 || mine < within(x->o, goal, &r->all[r->best],
                                      shape_decided_s(&r->all[r->best]))))
      r->best = i;
    if (r->fastest < 0 || c->samples_per_s > r->all[r->fastest].samples_per_s)
      r->fastest = i;
  }
}

/* The best score simulated so far (INFINITY: none). */
static double best_simulated(const shape_result *r, shape_goal goal) {
  double best = INFINITY;
  for (long i = 0; i < r->nall; i++)
    if (!isnan(r->all[i].simulated_s))
      best = fmin(best, shape_score(goal, &r->all[i], r->all[i].simulated_s));
  return best;
}

/* The configurations, by predicted score, whose prediction leaves out
 * more than PREDICT_TOLERANCE (error_bound) and could beat the best
 * simulated within their bound: simulated rather than pruned (outside the
 * budget of devices: a prediction that may be that far off decides
 * nothing). */
static int simulate_inexact(shape_ctx *x, err *e) {
  shape_result *r = x->r;
  shape_goal goal = x->o->goal;
  ranked *v = mem_alloc((size_t)(r->nall + 1) * sizeof *v);
  for (long i = 0; i < r->nall; i++)
    v[i] = (ranked){within(x->o, goal, &r->all[i], r->all[i].predicted_s), i};
  qsort(v, (size_t)r->nall, sizeof *v, cmp_ranked);
  double best = best_simulated(r, goal);
  int rc = ERR_OK;
  for (long k = 0; rc == ERR_OK && k < r->nall; k++) {
    shape_config *c = &r->all[v[k].i];
    if (!(c->error_bound > PREDICT_TOLERANCE) || !isnan(c->simulated_s) ||
        isinf(v[k].score))
      continue;
    if (isfinite(c->error_bound) && v[k].score * (1 - c->error_bound) >= best)
      continue;
    x->planned++;
    rc = simulate(x, v[k].i, e);
    if (rc) break;
    r->simulated_inexact++;
    best = fmin(best, shape_score(goal, c, c->simulated_s));
  }
  free(v);
  return rc;
}

/* plan()'s simulations, while their devices fit the budget (the first
 * always); the best by the deciding time (only simulated ones when any
 * was). */
int shape_decide(shape_ctx *x, err *e) {
  shape_result *r = x->r;
  shape_goal goal = x->o->goal;
  group(r, goal, false);
  if (x->o->sim && x->o->simulate > 0) {
    ranked *v = mem_alloc((size_t)(r->nall + 1) * sizeof *v);
    long n = plan(x, v), budget = budget_of(x);
    x->planned = x->done; /* the simulations that fit, not those skipped */
    for (long k = 0; k < n; k++) x->planned += fits(x, v[k].i, k == 0, &budget);
    int rc = ERR_OK;
    budget = budget_of(x);
    for (long k = 0; rc == ERR_OK && k < n; k++)
      if (fits(x, v[k].i, k == 0, &budget)) rc = simulate(x, v[k].i, e);
    free(v);
    if (rc == ERR_OK) rc = simulate_inexact(x, e);
    if (rc) return rc;
    free(r->per_shape); /* regrouped: the simulation decides */
    group(r, goal, true);
  }
  pick(x);
  r->pruned_predictor = r->nall - r->simulated;
  if (x->o->progress && x->planned != x->done) /* duplicates: all done */
    x->o->progress(x->o->progress_ctx, x->done, x->planned = x->done);
  if (r->best < 0)
    return err_set(e, ERR_CONFIG, "%s: no configuration within $%g per hour "
                   "(the fastest, %d devices, costs $%.4g per hour)",
                   x->s->name, x->o->max_usd_per_hour, r->all[r->fastest].ndev,
                   shape_usd_per_hour(&r->all[r->fastest],
                                      shape_decided_s(&r->all[r->fastest])));
  return ERR_OK;
}
