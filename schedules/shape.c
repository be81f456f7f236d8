/* shape: see shape.h. The enumeration is count vector (mixed radix over
 * the sites, or the family past SHAPE_MAX_SUBSETS) x stages (divisors of
 * the devices, increasing) x micro-batch x dp algorithm x placement x
 * split; every configuration that fits is kept in that order, so sorting
 * by score with the index as the last key gives the same order every run.
 * Predicting is cheap (closed form); a view and a cost context are built
 * once per (subset, shape) and shared by its micro-batches and algos. */
#include "schedules/shape.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost.h"
#include "models/diloco.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec.h"
#include "schedules/baseline.h"
#include "traces/scenario_subset.h"
#include "traces/workload.h"

const char *const shape_goal_names[] = {
#define SHAPE_GOAL_NAME(id, name) name,
    SHAPE_GOAL_MAP(SHAPE_GOAL_NAME)
#undef SHAPE_GOAL_NAME
    NULL};

#define NALGOS_MAX 3
#define NPLACE 2 /* the greedy pipelines, the greedy groups realised */

void shape_opts_default(shape_opts *o) {
  *o = (shape_opts){.goal = SHAPE_THROUGHPUT, .simulate = SHAPE_SIMULATE,
                    .t = transport_options_default()};
}

/* The search's state: the parent, the candidates' lists and the result. */
typedef struct ctx {
  const scenario *s;
  const shape_opts *o;
  spec_workload pw;            /* the parent's workload, resolved */
  const spec_gpu **gpu;        /* [parent devices] */
  int per_replica;             /* sequences per replica (throughput) */
  int micro[SHAPE_MAX_MICRO], nmicro;
  const char *algo[NALGOS_MAX];
  int frag[NALGOS_MAX], nalgos;
  shape_result *r;
  size_t cap;
  /* the smallest stage that did not fit, for the message */
  double nofit_need, nofit_mem;
  int nofit_st, nofit_stages, nofit_layers, nofit_m;
  const char *nofit_gpu;
  int nbatch_ok;               /* (shape, micro-batch) pairs the batch took */
  long planned;                /* simulations decide() makes (progress) */
} ctx;

double shape_score(shape_goal goal, const shape_config *c, double t) {
  switch (goal) {
    case SHAPE_THROUGHPUT: return t / c->batch;
    case SHAPE_ITERATION: return t;
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

/* DiLoCo's plan on view v for algo with F fragments: o's H and tau where
 * given (the view keeps the workload's otherwise). */
static void plan_view(const shape_opts *o, scenario *v, const char *algo,
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
static void micro_list(ctx *x) {
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
static void algo_list(ctx *x) {
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

/* Whether goal keeps each replica's sequences (throughput: the global batch
 * grows with the replicas) or the global batch (iteration). */
static bool per_replica_batch(shape_goal goal) {
  switch (goal) {
    case SHAPE_THROUGHPUT: return true;
    case SHAPE_ITERATION: return false;
  }
  assert(!"unknown shape goal");
  return false;
}

/* The global batch of a shape with `replicas` at micro-batch m, or 0 when
 * it does not divide into replicas x m x K. */
static int batch_of(const ctx *x, int replicas, int m) {
  long long b = per_replica_batch(x->o->goal)
                    ? (long long)x->per_replica * replicas
                    : x->s->workload.batch;
  long long k = workload_batch_k(x->s->workload.runtime,
                                 x->s->workload.micro_batches_per_pass), pp;
  if (b > INT32_MAX || !scenario_batch_divides(b, replicas, m, k, &pp))
    return 0;
  return (int)b;
}

/* Records the even split's smallest stage that does not fit a (w its
 * workload, gpu per device of its view) when it is the smallest seen. */
static void note_nofit(ctx *x, const spec_workload *w,
                       const spec_gpu *const *gpu, const alloc *a) {
  for (int st = 0; st < w->stages; st++) {
    int layers = w->layers / w->stages + (st < w->layers % w->stages);
    double need = spec_stage_memory_with(w, st, layers), cap = 0;
    const spec_gpu *g = NULL;
    for (int r = 0; r < w->replicas; r++) {
      const spec_gpu *d = gpu[alloc_at(a, r, st)];
      if (!g || d->memory_bytes > cap) g = d, cap = d->memory_bytes;
    }
    if (need <= cap || need >= x->nofit_need) continue;
    x->nofit_need = need, x->nofit_mem = cap, x->nofit_gpu = g->name;
    x->nofit_st = st, x->nofit_stages = w->stages;
    x->nofit_layers = layers, x->nofit_m = w->micro_batch;
  }
}

/* Whether split fits every device of a (view numbering) under w. */
static bool split_fits(const spec_workload *w, const spec_gpu *const *gpu,
                       const alloc *a, const int *split) {
  for (int st = 0; st < w->stages; st++) {
    double need = spec_stage_memory_with(w, st, split[st]);
    for (int r = 0; r < w->replicas; r++)
      if (need > gpu[alloc_at(a, r, st)]->memory_bytes) return false;
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
  if (!split_fits(q->w, q->gpu, q->a, split)) return;
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
  if (choose(q->w->layers - 1, q->w->stages - 1, SHAPE_MAX_SPLITS) <=
      SHAPE_MAX_SPLITS)
    compositions(q, 0, q->w->layers);
  q->w->stage_layers = NULL;
  return q->best_t;
}

/* A new configuration at the end of r->all. */
static shape_config *push(ctx *x) {
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
static void judge(ctx *x, const int *keep, int n, int S, int R, int m,
                  int batch, int ai, alloc *const *pl) {
  scenario *v = shape_view(x->s, keep, n, S, R, batch, m, x->algo[ai], NULL);
  plan_view(x->o, v, x->algo[ai], x->frag[ai]);
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
      if (isinf(t)) x->r->pruned_memory++, note_nofit(x, &w, gpu, pl[p]);
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
    best = NULL;
  }
  free(best), free(cur), free(gpu);
  scenario_subset_free(v);
}

/* Every shape of one subset (keep, n devices). */
static void subset(ctx *x, const int *keep, int n) {
  const shape_opts *o = x->o;
  for (int S = 1; S <= n; S++) {
    int R = n / S;
    if (n % S || S > x->pw.layers || (o->stages > 0 && S != o->stages) ||
        (o->replicas > 0 && R != o->replicas))
      continue;
    alloc *pl[NPLACE] = {NULL};
    bool placed = false;
    for (int mi = 0; mi < x->nmicro; mi++) {
      int m = x->micro[mi], batch = batch_of(x, R, m);
      if (!batch) continue;
      x->nbatch_ok++;
      if (!placed) {
        scenario *v = shape_view(x->s, keep, n, S, R, batch, m, x->algo[0],
                                 NULL);
        placements(v, pl);
        scenario_subset_free(v);
        placed = true;
      }
      for (int ai = 0; ai < x->nalgos; ai++)
        judge(x, keep, n, S, R, m, batch, ai, pl);
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

/* The family's vectors of one set of sites (every site when all). */
static void family(ctx *x, unsigned long mask, bool all, int *c, int *keep) {
  const scenario *s = x->s;
  int most = 0;
  for (int k = 0; k < s->nsites; k++)
    if ((all || (mask >> k & 1)) && s->sites[k].ndevices > most)
      most = s->sites[k].ndevices;
  for (int u = 1; u <= most; u++) {
    for (int k = 0; k < s->nsites; k++) {
      int n = s->sites[k].ndevices;
      c[k] = all || (mask >> k & 1) ? (u < n ? u : n) : 0;
    }
    x->r->nsubsets++;
    subset(x, keep, keep_of(s, c, keep));
  }
}

/* Every count vector (mixed radix, site 0 fastest), or the family: a set
 * of sites (bit mask, site 0 the lowest bit) each giving u devices (all
 * when it has fewer), u up to the largest site of the set. */
static void enumerate(ctx *x) {
  const scenario *s = x->s;
  int ns = s->nsites;
  int *c = mem_calloc((size_t)ns, sizeof *c);
  int *keep = mem_alloc((size_t)s->ndevices * sizeof *keep);
  x->r->all_subsets = all_vectors(s);
  if (x->r->all_subsets) {
    for (;;) {
      int k = 0;
      while (k < ns && c[k] == s->sites[k].ndevices) c[k++] = 0;
      if (k == ns) break;
      c[k]++;
      x->r->nsubsets++;
      subset(x, keep, keep_of(s, c, keep));
    }
  } else if (ns <= SHAPE_MAX_SITE_SETS) {
    for (unsigned long mask = 1; mask < (1UL << ns); mask++)
      family(x, mask, false, c, keep);
  } else { /* too many sets of sites: every site, u devices each */
    family(x, 0, true, c, keep);
  }
  free(c), free(keep);
}

/* The time that decides for c: simulated when it was, else predicted. */
static double decided_s(const shape_config *c) {
  return isnan(c->simulated_s) ? c->predicted_s : c->simulated_s;
}

typedef struct ranked {
  double score;
  long i;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int cmp_int_(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Simulates configuration i (once). */
static int simulate(ctx *x, long i, err *e) {
  shape_config *c = &x->r->all[i];
  if (!isnan(c->simulated_s)) return ERR_OK;
  scenario *v = shape_view(x->s, c->keep, c->ndev, c->stages, c->replicas,
                           c->batch, c->micro_batch, c->dp_algo, c->layers);
  plan_view(x->o, v, c->dp_algo, c->fragments);
  alloc *a = alloc_new(c->replicas, c->stages);
  for (int k = 0; k < c->ndev; k++) { /* parent -> view: keep increases */
    const int *at = bsearch(&c->a->device[k], c->keep, (size_t)c->ndev,
                            sizeof *c->keep, cmp_int_);
    a->device[k] = (int)(at - c->keep);
  }
  err se = {0};
  double t = x->o->sim(x->o->sim_ctx, v, a, &se);
  alloc_free(a);
  scenario_subset_free(v);
  if (isnan(t))
    return err_set(e, se.code ? se.code : ERR_CONFIG, "%s", se.msg);
  c->simulated_s = t;
  x->r->simulated++;
  if (x->o->progress)
    x->o->progress(x->o->progress_ctx, x->r->simulated, x->planned);
  return ERR_OK;
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
  for (long i = 0; i < r->nall; i++) {
    const shape_config *c = &r->all[i];
    if (sim_only && isnan(c->simulated_s)) continue;
    int g = 0;
    for (; g < r->nshapes; g++) {
      const shape_config *b = &r->all[r->per_shape[g]];
      if (b->stages == c->stages && b->replicas == c->replicas &&
          strcmp(b->dp_algo, c->dp_algo) == 0)
        break;
    }
    if (g == r->nshapes) r->per_shape[r->nshapes++] = i;
    else if (shape_score(goal, c, decided_s(c)) <
             shape_score(goal, &r->all[r->per_shape[g]],
                         decided_s(&r->all[r->per_shape[g]])))
      r->per_shape[g] = i;
  }
  sort_shapes(r);
}

/* How many configurations decide() simulates: the k best of v (ranked)
 * and each shape's best, each once. */
static long planned(const shape_result *r, const ranked *v, long k) {
  bool *on = mem_calloc((size_t)r->nall, sizeof *on);
  for (long i = 0; i < r->nall && i < k; i++) on[v[i].i] = true;
  for (int g = 0; g < r->nshapes; g++) on[r->per_shape[g]] = true;
  long n = 0;
  for (long i = 0; i < r->nall; i++) n += on[i];
  free(on);
  return n;
}

/* The best score simulated so far (INFINITY: none). */
static double best_simulated(const shape_result *r, shape_goal goal) {
  double best = INFINITY;
  for (long i = 0; i < r->nall; i++)
    if (!isnan(r->all[i].simulated_s))
      best = fmin(best, shape_score(goal, &r->all[i], r->all[i].simulated_s));
  return best;
}

/* The configurations, in v's order (by predicted score), whose prediction
 * leaves out more than PREDICT_TOLERANCE (error_bound) and could beat the
 * best simulated within their bound: simulated rather than pruned. */
static int simulate_inexact(ctx *x, const ranked *v, err *e) {
  shape_result *r = x->r;
  shape_goal goal = x->o->goal;
  double best = best_simulated(r, goal);
  for (long k = 0; k < r->nall; k++) {
    shape_config *c = &r->all[v[k].i];
    if (!(c->error_bound > PREDICT_TOLERANCE) || !isnan(c->simulated_s))
      continue;
    if (isfinite(c->error_bound) && v[k].score * (1 - c->error_bound) >= best)
      continue;
    x->planned++;
    int rc = simulate(x, v[k].i, e);
    if (rc) return rc;
    r->simulated_inexact++;
    best = fmin(best, shape_score(goal, c, c->simulated_s));
  }
  return ERR_OK;
}

/* The predictor's best o->simulate and each shape's best simulated, and
 * those its bound cannot rule out where it leaves something out; the best
 * by the deciding time (only simulated ones when any was). */
static int decide(ctx *x, err *e) {
  shape_result *r = x->r;
  shape_goal goal = x->o->goal;
  group(r, goal, false);
  if (x->o->sim && x->o->simulate > 0) {
    ranked *v = mem_alloc((size_t)r->nall * sizeof *v);
    for (long i = 0; i < r->nall; i++)
      v[i] = (ranked){shape_score(goal, &r->all[i], r->all[i].predicted_s), i};
    qsort(v, (size_t)r->nall, sizeof *v, cmp_ranked);
    x->planned = planned(r, v, x->o->simulate);
    int rc = ERR_OK;
    for (long k = 0; rc == ERR_OK && k < r->nall && k < x->o->simulate; k++)
      rc = simulate(x, v[k].i, e);
    for (int g = 0; rc == ERR_OK && g < r->nshapes; g++)
      rc = simulate(x, r->per_shape[g], e);
    if (rc == ERR_OK) rc = simulate_inexact(x, v, e);
    free(v);
    if (rc) return rc;
    free(r->per_shape); /* regrouped: the simulation decides */
    group(r, goal, true);
  }
  r->best = -1;
  for (long i = 0; i < r->nall; i++) {
    shape_config *c = &r->all[i];
    c->samples_per_s = c->batch / decided_s(c);
    bool counts = !x->o->sim || x->o->simulate <= 0 || !isnan(c->simulated_s);
    if (counts && (r->best < 0 ||
                   shape_score(goal, c, decided_s(c)) <
                       shape_score(goal, &r->all[r->best],
                                   decided_s(&r->all[r->best]))))
      r->best = i;
  }
  r->pruned_predictor = r->nall - r->simulated;
  return ERR_OK;
}

int shape_search(const scenario *s, const shape_opts *o, shape_result *r,
                 err *e) {
  *r = (shape_result){.best = -1};
  ctx x = {.s = s, .o = o, .r = r, .nofit_need = INFINITY};
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
                       per_replica_batch(o->goal) ? x.per_replica
                                                  : s->workload.batch,
                       per_replica_batch(o->goal) ? " per replica" : "");
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
    rc = decide(&x, e);
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

/* Devices of site k among c's. */
static int at_site(const scenario *s, const shape_config *c, int k) {
  int n = 0;
  for (int i = 0; i < c->ndev; i++) n += s->device_site[c->keep[i]] == k;
  return n;
}

long shape_idle_alternative(const scenario *s, const shape_result *r,
                            int site) {
  const shape_config *b = &r->all[r->best];
  int used = at_site(s, b, site);
  long best = -1;
  for (long i = 0; i < r->nall; i++) {
    const shape_config *c = &r->all[i];
    if (at_site(s, c, site) <= used) continue;
    if (best < 0 || c->batch / c->predicted_s >
                        r->all[best].batch / r->all[best].predicted_s)
      best = i;
  }
  return best;
}
