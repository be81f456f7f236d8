/* shape: see shape.h. The enumeration is count vector (mixed radix over
 * the sites, or the family past SHAPE_MAX_SUBSETS) x stages (divisors of
 * the devices, increasing) x micro-batch x dp algorithm x placement x
 * split; every configuration that fits is kept in that order, so sorting
 * by score with the index as the last key gives the same order every run.
 * Predicting is cheap (closed form); a view and a cost context are built
 * once per (subset, shape) and shared by its micro-batches and algos. The
 * simulations that decide among the predictor's best: shape_decide.c. */
#include "schedules/shape.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/bill.h"
#include "models/cost.h"
#include "models/diloco.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "schedules/baseline.h"
#include "schedules/shape_parts.h"
#include "traces/scenario_subset.h"
#include "traces/workload.h"

const char *const shape_goal_names[] = {
#define SHAPE_GOAL_NAME(id, name) name,
    SHAPE_GOAL_MAP(SHAPE_GOAL_NAME)
#undef SHAPE_GOAL_NAME
    NULL};

#define NPLACE 2 /* the greedy pipelines, the greedy groups realised */

void shape_opts_default(shape_opts *o) {
  *o = (shape_opts){.goal = SHAPE_THROUGHPUT, .simulate = SHAPE_SIMULATE,
                    .simulate_devices = SHAPE_SIMULATE_DEVICES,
                    .t = transport_options_default()};
}

/* One step (a subset or a simulation) done. */
void shape_step(shape_ctx *x) {
  x->done++;
  if (x->planned < x->done) x->planned = x->done;
  if (x->o->progress) x->o->progress(x->o->progress_ctx, x->done, x->planned);
}

double shape_decided_s(const shape_config *c) {
  return isnan(c->simulated_s) ? c->predicted_s : c->simulated_s;
}

double shape_usd_per_sample(const shape_config *c, double t) {
  return (c->usd_per_s * t + c->egress_usd) / c->batch;
}

double shape_usd_per_hour(const shape_config *c, double t) {
  return (c->usd_per_s + c->egress_usd / t) * 3600;
}

double shape_score(shape_goal goal, const shape_config *c, double t) {
  switch (goal) {
    case SHAPE_THROUGHPUT: return t / c->batch;
    case SHAPE_ITERATION: return t;
    case SHAPE_USD_PER_SAMPLE:
    case SHAPE_SAMPLES_PER_USD: return shape_usd_per_sample(c, t);
  }
  assert(!"unknown shape goal");
  return t;
}

/* Whether the dp algorithm called algo (workload_dp_algos) streams its
 * exchange in fragments, and whether it is DiLoCo's (spec.h). */
static bool algo_streams(const char *algo) {
  int a = spec_dp_algo_parse(algo);
  return a >= 0 && spec_dp_algo_streams((spec_dp_algo)a);
}
static bool algo_outer(const char *algo) {
  int a = spec_dp_algo_parse(algo);
  return a >= 0 && spec_dp_algo_outer((spec_dp_algo)a);
}

scenario *shape_view(const scenario *s, const int *keep, int n, int stages,
                     int replicas, int batch, int m, const char *algo,
                     const int *layers) {
  scenario tmp = *s; /* scenario_subset copies it: only s's pointers stay */
  tmp.workload.stages = stages;
  tmp.workload.replicas = replicas;
  tmp.workload.batch = batch;
  scenario *v = scenario_subset(&tmp, keep, n, replicas);
  v->workload.micro_batch = m;
  v->workload.dp_algo = (char *)algo; /* borrowed: a subset frees no name */
  v->workload.layers_per_stage = (int *)layers;
  v->workload.balanced_layers = false;
  diloco_plan p = diloco_plan_given(&s->workload);
  if (!algo_streams(algo)) p.fragments = 1, p.overlap = 0;
  diloco_plan_put(&v->workload, &p);
  /* the values the view sets are no file's */
  v->line[WORKLOAD_dp_algo] = v->line[diloco_rows[1]] = 0;
  v->line[diloco_rows[2]] = 0;
  return v;
}

void shape_diloco_plan(const shape_opts *o, scenario *v, const char *algo,
                       int fragments) {
  bool streaming = algo_streams(algo);
  if (!algo_outer(algo)) return;
  diloco_plan p = diloco_plan_given(&v->workload);
  if (o->plan.inner_steps > 0) p.inner_steps = o->plan.inner_steps;
  if (streaming && fragments > 0) p.fragments = fragments;
  if (streaming && o->plan.overlap > 0) p.overlap = o->plan.overlap;
  diloco_plan_put(&v->workload, &p);
}

/* The micro-batches tried: the caller's, else m, m/2 and 2m. */
static void micro_list(shape_ctx *x) {
  const shape_opts *o = x->o;
  if (o->nmicro > 0) {
    x->nmicro = o->nmicro;
    memcpy(x->micro, o->micro, (size_t)o->nmicro * sizeof *x->micro);
    return;
  }
  int m = x->pw.micro_batch;
  x->nmicro = 0;
  if (m % 2 == 0) x->micro[x->nmicro++] = m / 2;
  x->micro[x->nmicro++] = m;
  x->micro[x->nmicro++] = 2 * m;
}

/* The dp algorithms tried: the workload's; with o->diloco also DiLoCo and
 * streaming DiLoCo (its F, else the smallest F >= 2 dividing L and H). */
static void algo_list(shape_ctx *x) {
  const scenario_workload *w = &x->s->workload;
  x->nalgos = 0;
  x->algo[x->nalgos] = workload_dp_algos[x->pw.dp_algo];
  diloco_plan given = diloco_plan_given(w);
  x->frag[x->nalgos++] = given.fragments;
  if (!x->o->diloco) return;
  int H = x->o->plan.inner_steps > 0 ? x->o->plan.inner_steps
          : given.inner_steps > 0 ? given.inner_steps
                                  : WORKLOAD_DEFAULT_INNER_STEPS;
  int F = x->o->plan.fragments > 1 ? x->o->plan.fragments
          : given.fragments > 1 ? given.fragments : 0;
  for (int f = 2; !F && f <= 8; f++)
    if (x->pw.layers % f == 0 && H % f == 0) F = f;
  const char *names[] = {"diloco", "streaming-diloco"};
  for (int i = 0; i < 2; i++) {
    if (strcmp(names[i], x->algo[0]) == 0 || (i == 1 && !F)) continue;
    x->algo[x->nalgos] = names[i];
    x->frag[x->nalgos++] = i == 1 ? F : 1;
  }
}

int shape_check_given(const scenario *s, long stages, long replicas,
                      const diloco_plan *plan, err *e) {
  const spec_model *m = spec_scenario_model(s);
  int n = s->ndevices, layers = s->workload.layers > 0 ? s->workload.layers
                                : m ? m->layers : INT_MAX;
  if (stages > n)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "--stages %ld: no "
                         "replica of %ld stages fits the %d devices of %s",
                         stages, stages, n, s->name);
  if (stages > layers)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "--stages %ld: %ld "
                         "stages for the %d layers: every stage holds at "
                         "least one", stages, stages, layers);
  if (replicas > n)
    return err_set_field(e, WORKLOAD_replicas, ERR_CONFIG, "--replicas %ld: "
                         "more replicas than the %d devices of %s", replicas,
                         n, s->name);
  if (stages > 0 && replicas > 0 && stages * replicas > n)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "--stages %ld "
                         "--replicas %ld: %ld devices, more than the %d of "
                         "%s", stages, replicas, stages * replicas, n,
                         s->name);
  if (!plan) return ERR_OK;
  diloco_plan given = diloco_plan_given(&s->workload);
  int H = plan->inner_steps ? plan->inner_steps
          : given.inner_steps > 0 ? given.inner_steps
                                  : WORKLOAD_DEFAULT_INNER_STEPS;
  int F = plan->fragments;
  if (F > 1 && (layers % F || H % F))
    return err_set_field(e, WORKLOAD_fragments, ERR_CONFIG, "--fragments %d: "
                         "streaming DiLoCo's fragments divide the %d layers "
                         "and H = %d", F, layers, H);
  return ERR_OK;
}

/* Whether goal keeps each replica's sequences (throughput: the global batch
 * grows with the replicas) or the global batch (iteration). */
bool shape_per_replica_batch(shape_goal goal) {
  switch (goal) {
    case SHAPE_THROUGHPUT:
    case SHAPE_USD_PER_SAMPLE:
    case SHAPE_SAMPLES_PER_USD: return true;
    case SHAPE_ITERATION: return false;
  }
  assert(!"unknown shape goal");
  return false;
}

/* b if it divides into replicas x m x K, else 0. */
static int divides(const shape_ctx *x, long long b, int replicas, int m) {
  long long k = workload_batch_k(x->s->workload.runtime,
                                 x->s->workload.micro_batches_per_pass), pp;
  if (b > INT32_MAX || !scenario_batch_divides(b, replicas, m, k, &pp))
    return 0;
  return (int)b;
}

/* The global batches a shape with `replicas` at micro-batch m is tried
 * at, into b (0: does not divide): the goal's (the batch per replica kept,
 * or the scenario's), and for throughput the scenario's too, so that the
 * throughput search holds every configuration the iteration search judges
 * (issue 33: it reported 87.1 samples/s where the iteration objective
 * found 99.7). Returns how many. */
static int batches_of(const shape_ctx *x, int replicas, int m, int b[2]) {
  long long global = x->s->workload.batch;
  if (!shape_per_replica_batch(x->o->goal)) {
    b[0] = divides(x, global, replicas, m);
    return 1;
  }
  b[0] = divides(x, (long long)x->per_replica * replicas, replicas, m);
  b[1] = global != (long long)x->per_replica * replicas
             ? divides(x, global, replicas, m) : 0;
  return 2;
}

/* Records the even split's smallest stage that does not fit a (w its
 * workload, gpu per device of its view) when it is the smallest seen. */
static void note_nofit(shape_ctx *x, const scenario *v, const spec_workload *w,
                       const spec_gpu *const *gpu, const alloc *a) {
  for (int st = 0; st < w->stages; st++) {
    int layers = w->layers / w->stages + (st < w->layers % w->stages);
    double need = spec_stage_memory_with(w, st, layers), cap = 0;
    const spec_gpu *g = NULL;
    for (int r = 0; r < w->replicas; r++) {
      int d = alloc_at(a, r, st);
      double have = spec_device_memory_bytes(v, d, gpu[d]);
      if (!g || have > cap) g = gpu[d], cap = have;
    }
    if (need <= cap || need >= x->nofit_need) continue;
    x->nofit_need = need, x->nofit_mem = cap, x->nofit_gpu = g->name;
    x->nofit_st = st, x->nofit_stages = w->stages;
    x->nofit_layers = layers, x->nofit_m = w->micro_batch;
  }
}

/* Whether split fits every device of a (view v's numbering) under w. */
static bool split_fits(const scenario *v, const spec_workload *w,
                       const spec_gpu *const *gpu, const alloc *a,
                       const int *split) {
  for (int st = 0; st < w->stages; st++) {
    double need = spec_stage_memory_with(w, st, split[st]);
    for (int r = 0; r < w->replicas; r++) {
      int d = alloc_at(a, r, st);
      if (need > spec_device_memory_bytes(v, d, gpu[d])) return false;
    }
  }
  return true;
}

/* The best split of w on a: partition_balanced's, and every split when
 * there are at most SHAPE_MAX_SPLITS; its prediction in *t (INFINITY
 * when none fits). */
typedef struct split_search {
  spec_workload *w;
  const scenario *v;
  const spec_gpu *const *gpu;
  const alloc *a;
  const transport_options *t;
  int *cur, *best;
  double best_t, best_bound; /* the best's prediction and error bound */
} split_search;

static void try_split(split_search *q, const int *split) {
  if (!split_fits(q->v, q->w, q->gpu, q->a, split)) return;
  q->w->stage_layers = split;
  predict_result pr;
  if (predict_iteration_with(q->w, q->v, q->gpu, q->a, q->t, &pr) != ERR_OK)
    return;
  if (pr.iteration_s < q->best_t) {
    q->best_t = pr.iteration_s, q->best_bound = pr.error_bound;
    memcpy(q->best, split, (size_t)q->w->stages * sizeof *split);
  }
}

/* Every composition of `left` layers into the stages from st on. */
static void compositions(split_search *q, int st, int left) {
  int n = q->w->stages;
  if (st == n - 1) {
    q->cur[st] = left;
    try_split(q, q->cur);
    return;
  }
  for (int k = 1; k <= left - (n - 1 - st); k++) {
    q->cur[st] = k;
    compositions(q, st + 1, left - k);
  }
}

/* C(n, k), saturating above cap. */
static double choose(int n, int k, double cap) {
  double c = 1;
  for (int i = 1; i <= k && c <= cap; i++) c = c * (n - k + i) / i;
  return c;
}

static double best_split(split_search *q) {
  q->best_t = INFINITY;
  int *bal = mem_alloc((size_t)q->w->stages * sizeof *bal);
  if (partition_balanced(q->w, q->v, q->gpu, q->a, bal, NULL) == ERR_OK)
    try_split(q, bal);
  free(bal);
  if (q->v->ndevices <= SHAPE_SPLIT_DEVICES &&
      choose(q->w->layers - 1, q->w->stages - 1, SHAPE_MAX_SPLITS) <=
          SHAPE_MAX_SPLITS)
    compositions(q, 0, q->w->layers);
  q->w->stage_layers = NULL;
  return q->best_t;
}

/* A new configuration at the end of r->all. */
static shape_config *push(shape_ctx *x) {
  shape_result *r = x->r;
  if ((size_t)r->nall == x->cap)
    mem_grow((void **)&r->all, &x->cap, (size_t)r->nall + 1, sizeof *r->all);
  shape_config *c = &r->all[r->nall++];
  *c = (shape_config){.simulated_s = NAN};
  return c;
}

/* The placements of a (subset, shape) on its view: the greedy pipelines
 * and the greedy groups realised by the cost model. NULL entries when the
 * cost context cannot be built. */
static void placements(const scenario *v, alloc **pl) {
  for (int i = 0; i < NPLACE; i++) pl[i] = NULL;
  cost_ctx *c = cost_ctx_from_scenario(v, NULL);
  if (!c) return;
  pl[0] = baseline_greedy_pipelines(c);
  int n = v->ndevices;
  int *groups = mem_alloc((size_t)n * sizeof *groups);
  baseline_greedy_groups(c, groups);
  cost_scratch *w = cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  pl[1] = cost_realise(c, groups, w);
  cost_scratch_free(w);
  free(groups);
  cost_ctx_free(c);
}

/* a (view numbering) on the parent's numbers: device i is keep[i]. */
static alloc *to_parent(const alloc *a, const int *keep) {
  alloc *b = alloc_new(a->replicas, a->stages);
  for (int i = 0; i < a->replicas * a->stages; i++)
    b->device[i] = keep[a->device[i]];
  return b;
}

/* One (subset, shape, micro-batch, algo): the better placement with its
 * best split, kept when it fits. */
static void judge(shape_ctx *x, const int *keep, int n, int S, int R, int m,
                  int batch, int ai, alloc *const *pl) {
  scenario *v = shape_view(x->s, keep, n, S, R, batch, m, x->algo[ai], NULL);
  shape_diloco_plan(x->o, v, x->algo[ai], x->frag[ai]);
  spec_workload w;
  const spec_gpu **gpu = mem_alloc((size_t)n * sizeof *gpu);
  for (int i = 0; i < n; i++) gpu[i] = x->gpu[keep[i]];
  int *cur = mem_alloc(2 * (size_t)S * sizeof *cur), *best = NULL;
  double best_t = INFINITY, bound = PREDICT_TOLERANCE;
  int best_p = -1;
  if (spec_workload_resolve(v, &w, NULL) == ERR_OK)
    for (int p = 0; p < NPLACE; p++) {
      if (!pl[p]) continue;
      x->r->considered++;
      split_search q = {.w = &w, .v = v, .gpu = gpu, .a = pl[p], .t = &x->o->t,
                        .cur = cur, .best = cur + S};
      double t = best_split(&q);
      if (isinf(t)) x->r->pruned_memory++, note_nofit(x, v, &w, gpu, pl[p]);
      if (t < best_t) {
        best_t = t, best_p = p, bound = q.best_bound;
        free(best);
        best = mem_alloc((size_t)S * sizeof *best);
        memcpy(best, cur + S, (size_t)S * sizeof *best);
      }
    }
  if (best_p >= 0) {
    shape_config *c = push(x);
    *c = (shape_config){.stages = S, .replicas = R, .micro_batch = m,
                        .batch = batch, .dp_algo = x->algo[ai],
                        .fragments = algo_streams(x->algo[ai]) ? x->frag[ai]
                                                               : 0,
                        .ndev = n, .layers = best,
                        .a = to_parent(pl[best_p], keep),
                        .predicted_s = best_t, .error_bound = bound,
                        .simulated_s = NAN};
    c->keep = mem_alloc((size_t)n * sizeof *c->keep);
    memcpy(c->keep, keep, (size_t)n * sizeof *c->keep);
    if (x->o->price) { /* its devices, and its bytes at the pairs' prices */
      c->usd_per_s = bill_compute_usd_per_s(x->s, keep, n, NULL);
      w.stage_layers = best;
      c->egress_usd = bill_egress_usd(v, &w, pl[best_p], NULL);
    }
    best = NULL;
  }
  free(best), free(cur), free(gpu);
  scenario_subset_free(v);
}

/* Every shape of one subset (keep, n devices). */
static void subset(shape_ctx *x, const int *keep, int n) {
  const shape_opts *o = x->o;
  for (int S = 1; S <= n; S++) {
    int R = n / S;
    if (n % S || S > x->pw.layers || (o->stages > 0 && S != o->stages) ||
        (o->replicas > 0 && R != o->replicas))
      continue;
    alloc *pl[NPLACE] = {NULL};
    bool placed = false;
    for (int mi = 0; mi < x->nmicro; mi++) {
      int m = x->micro[mi], b[2];
      for (int bi = 0, nb = batches_of(x, R, m, b); bi < nb; bi++) {
        if (!b[bi]) continue;
        x->nbatch_ok++;
        if (!placed) {
          scenario *v = shape_view(x->s, keep, n, S, R, b[bi], m, x->algo[0],
                                   NULL);
          placements(v, pl);
          scenario_subset_free(v);
          placed = true;
        }
        for (int ai = 0; ai < x->nalgos; ai++)
          judge(x, keep, n, S, R, m, b[bi], ai, pl);
      }
    }
    for (int p = 0; p < NPLACE; p++) alloc_free(pl[p]);
  }
}

/* The devices of count vector c: the first c[k] of each site. */
static int keep_of(const scenario *s, const int *c, int *keep) {
  int n = 0;
  for (int k = 0; k < s->nsites; k++)
    for (int i = 0; i < c[k]; i++) keep[n++] = s->sites[k].first_device + i;
  return n;
}

/* Whether every count vector is tried (their number is small enough). */
static bool all_vectors(const scenario *s) {
  double n = 1;
  for (int k = 0; k < s->nsites; k++) n *= s->sites[k].ndevices + 1;
  return n <= SHAPE_MAX_SUBSETS;
}

/* The family's vector of one set of sites (every site when all) at u:
 * each chosen site gives u devices (all when it has fewer). The best
 * score (shape_score of the prediction) of the configurations it added,
 * INFINITY when none fits. */
static double family_at(shape_ctx *x, unsigned long mask, bool all, int u, int *c,
                        int *keep) {
  const scenario *s = x->s;
  for (int k = 0; k < s->nsites; k++) {
    int n = s->sites[k].ndevices;
    c[k] = all || (mask >> k & 1) ? (u < n ? u : n) : 0;
  }
  x->r->nsubsets++;
  long first = x->r->nall;
  subset(x, keep, keep_of(s, c, keep));
  double best = INFINITY;
  for (long i = first; i < x->r->nall; i++) {
    const shape_config *cf = &x->r->all[i];
    best = fmin(best, shape_score(x->o->goal, cf, cf->predicted_s));
  }
  shape_step(x);
  return best;
}

/* The u of seen[] (INFINITY: not tried) nearest below and above b. */
static void neighbours(const double *seen, int most, int b, int *lo,
                       int *hi) {
  for (*lo = b - 1; *lo > 0 && isnan(seen[*lo]); (*lo)--) {}
  for (*hi = b + 1; *hi <= most && isnan(seen[*hi]); (*hi)++) {}
}

/* The family's grid past SHAPE_FAMILY_FULL: 1, 2, 3, 4, then 1.5 and 4/3
 * times in turn (6, 8, 12, 16, 24, ...). */
static int grid_next(int u) {
  return u < 4 ? u + 1 : u % 3 ? u * 3 / 2 : u * 4 / 3;
}

/* Past SHAPE_FAMILY_FULL values: the grid up to most (and most), then
 * midpoints towards the best's nearest tried neighbours until both are
 * adjacent (shape.h). seen[u]: u's best score, NAN while untried. */
static void family_refined(shape_ctx *x, unsigned long mask, bool all, int most,
                           int *c, int *keep) {
  double *seen = mem_alloc(((size_t)most + 2) * sizeof *seen);
  for (int u = 0; u <= most + 1; u++) seen[u] = NAN;
  int grid = 1, b = 1;
  for (int u = 1; u < most; u = grid_next(u)) grid++;
  x->planned += grid + 2 * (long)ceil(log2(most));
  for (int u = 1;; u = grid_next(u)) {
    u = u < most ? u : most;
    seen[u] = family_at(x, mask, all, u, c, keep);
    if (seen[u] < seen[b]) b = u;
    if (u == most) break;
  }
  for (int tried = 1; tried;) {
    int lo, hi;
    neighbours(seen, most, b, &lo, &hi);
    int at[2] = {b - lo > 1 ? (lo + b) / 2 : 0,
                 hi - b > 1 && hi <= most ? (b + hi) / 2 : 0};
    tried = 0;
    for (int i = 0; i < 2; i++)
      if (at[i] > 0 && isnan(seen[at[i]])) {
        seen[at[i]] = family_at(x, mask, all, at[i], c, keep);
        tried++;
      }
    for (int u = 1; u <= most; u++)
      if (!isnan(seen[u]) && seen[u] < seen[b]) b = u;
  }
  free(seen);
}

/* The family's vectors of one set of sites (every site when all), u up to
 * the largest site of the set: each, or past SHAPE_FAMILY_FULL the grid
 * and its refinement. */
static void family(shape_ctx *x, unsigned long mask, bool all, int *c, int *keep) {
  const scenario *s = x->s;
  int most = 0;
  for (int k = 0; k < s->nsites; k++)
    if ((all || (mask >> k & 1)) && s->sites[k].ndevices > most)
      most = s->sites[k].ndevices;
  if (most > SHAPE_FAMILY_FULL) {
    family_refined(x, mask, all, most, c, keep);
    return;
  }
  x->planned += most;
  for (int u = 1; u <= most; u++) family_at(x, mask, all, u, c, keep);
}

/* Every count vector (mixed radix, site 0 fastest), or the family: a set
 * of sites (bit mask, site 0 the lowest bit) each giving u devices (all
 * when it has fewer), u up to the largest site of the set. */
static void enumerate(shape_ctx *x) {
  const scenario *s = x->s;
  int ns = s->nsites;
  int *c = mem_calloc((size_t)ns, sizeof *c);
  int *keep = mem_alloc((size_t)s->ndevices * sizeof *keep);
  x->r->all_subsets = all_vectors(s);
  if (x->r->all_subsets) {
    x->planned = 1;
    for (int k = 0; k < ns; k++) x->planned *= s->sites[k].ndevices + 1;
    x->planned--;
    for (;;) {
      int k = 0;
      while (k < ns && c[k] == s->sites[k].ndevices) c[k++] = 0;
      if (k == ns) break;
      c[k]++;
      x->r->nsubsets++;
      subset(x, keep, keep_of(s, c, keep));
      shape_step(x);
    }
  } else if (ns <= SHAPE_MAX_SITE_SETS) {
    for (unsigned long mask = 1; mask < (1UL << ns); mask++)
      family(x, mask, false, c, keep);
  } else { /* too many sets of sites: every site, u devices each */
    family(x, 0, true, c, keep);
  }
  free(c), free(keep);
}

scenario *shape_config_view(const scenario *s, const shape_opts *o,
                            const shape_config *c) {
  scenario *v = shape_view(s, c->keep, c->ndev, c->stages, c->replicas,
                           c->batch, c->micro_batch, c->dp_algo, c->layers);
  shape_diloco_plan(o, v, c->dp_algo, c->fragments);
  return v;
}

static int cmp_int_(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

alloc *shape_config_alloc(const shape_config *c) {
  alloc *a = alloc_new(c->replicas, c->stages);
  for (int k = 0; k < c->ndev; k++) { /* parent -> view: keep increases */
    const int *at = bsearch(&c->a->device[k], c->keep, (size_t)c->ndev,
                            sizeof *c->keep, cmp_int_);
    assert(at);
    a->device[k] = (int)(at - c->keep);
  }
  return a;
}

int shape_search(const scenario *s, const shape_opts *o, shape_result *r,
                 err *e) {
  *r = (shape_result){.best = -1};
  shape_ctx x = {.s = s, .o = o, .r = r, .nofit_need = INFINITY};
  if (spec_workload_resolve(s, &x.pw, e)) return e->code;
  x.gpu = mem_alloc((size_t)s->ndevices * sizeof *x.gpu);
  if (spec_device_gpus(s, x.gpu, e)) {
    free(x.gpu);
    return e->code;
  }
  x.per_replica = s->workload.batch / s->workload.replicas;
  micro_list(&x);
  algo_list(&x);
  enumerate(&x);
  int rc;
  if (!x.nbatch_ok)
    rc = err_set_field(e, WORKLOAD_batch, ERR_CONFIG, "%s: no shape divides "
                       "the batch: %d sequences%s into replicas x "
                       "micro-batch x K", s->name,
                       shape_per_replica_batch(o->goal) ? x.per_replica
                                                  : s->workload.batch,
                       shape_per_replica_batch(o->goal) ? " per replica" : "");
  else if (!r->nall && !x.nofit_gpu)
    rc = err_set(e, ERR_CONFIG, "%s: no configuration of the workload "
                 "resolves (spec_workload_resolve refused every one)",
                 s->name);
  else if (!r->nall)
    rc = err_set(e, ERR_MEMORY, "%s: no configuration fits in memory; the "
                 "smallest stage that does not fit is stage %d of %d (%d "
                 "layers, micro-batch %d): %.2f GB, and its largest device, "
                 "a %s, holds %.2f GB", s->name, x.nofit_st, x.nofit_stages,
                 x.nofit_layers, x.nofit_m, x.nofit_need * 1e-9,
                 x.nofit_gpu, x.nofit_mem * 1e-9);
  else
    rc = shape_decide(&x, e);
  free(x.gpu);
  if (rc) shape_result_free(r);
  return rc;
}

void shape_result_free(shape_result *r) {
  if (!r) return;
  for (long i = 0; i < r->nall; i++) {
    free(r->all[i].keep);
    free(r->all[i].layers);
    alloc_free(r->all[i].a);
  }
  free(r->all);
  free(r->per_shape);
  *r = (shape_result){.best = -1};
}

int shape_config_at_site(const scenario *s, const shape_config *c, int k) {
  int n = 0;
  for (int i = 0; i < c->ndev; i++) n += s->device_site[c->keep[i]] == k;
  return n;
}

int shape_config_idle(const scenario *s, const shape_config *c, int *idle) {
  int n = 0;
  for (int d = 0, i = 0; d < s->ndevices; d++) {
    while (i < c->ndev && c->keep[i] < d) i++;
    if (i >= c->ndev || c->keep[i] != d) idle[n++] = d;
  }
  return n;
}

long shape_idle_alternative(const scenario *s, const shape_result *r,
                            int site) {
  const shape_config *b = &r->all[r->best];
  int used = shape_config_at_site(s, b, site);
  long best = -1;
  for (long i = 0; i < r->nall; i++) {
    const shape_config *c = &r->all[i];
    if (shape_config_at_site(s, c, site) <= used) continue;
    if (best < 0 || c->batch / c->predicted_s >
                        r->all[best].batch / r->all[best].predicted_s)
      best = i;
  }
  return best;
}
