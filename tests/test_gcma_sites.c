/* test_gcma_sites: GCMA over site counts (schedules/gcma_sites.c): every
 * candidate the objective sees is a partition of the devices into groups
 * of D_dp; the result's pipelines cost its score to the bit; a seed
 * reproduces a run and batches change nothing; and on small random
 * scenarios it reaches the optimum of an enumeration of every count matrix
 * (a partition's score depends on its counts alone, test_cost_flow.c). */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "schedules/bysite.h"
#include "schedules/gcma.h"
#include "schedules/search.h"
#include "tests/support.h"

/* An objective that checks each partition before scoring it. */
typedef struct checker {
  cost_ctx *c;
  cost_scratch *w;
  int n, k;
  long seen;
  char *mark;
} checker;

static double check_partition(void *ctx, const int *groups, err *e) {
  (void)e;
  checker *x = ctx;
  memset(x->mark, 0, (size_t)x->n);
  for (int i = 0; i < x->n; i++) {
    cr_assert(groups[i] >= 0 && groups[i] < x->n && !x->mark[groups[i]],
              "candidate %ld: not a partition of the devices", x->seen);
    x->mark[groups[i]] = 1;
  }
  x->seen++;
  return cost_partition(x->c, groups, x->w, NULL);
}

static search_result *sites_search(cost_ctx *c, uint64_t seed, int trials,
                                   int batch, checker *x) {
  int k = cost_ctx_replicas(c), n = k * cost_ctx_stages(c);
  *x = (checker){.c = c, .w = cost_scratch_new(k, cost_ctx_stages(c)),
                 .n = n, .k = k, .mark = malloc((size_t)n)};
  search_objective obj = {.name = "checked", .partition = check_partition,
                          .ctx = x};
  search_opts o;
  search_opts_default(&o);
  o.population = 20, o.trials = trials, o.seed = seed, o.by_site = 1;
  o.batch = batch;
  err e = {0};
  search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, &obj, &o, &e);
  cr_assert(r, "%s", e.msg);
  cost_scratch_free(x->w);
  free(x->mark);
  return r;
}

Test(gcma_sites, candidates_are_partitions_and_realise_their_score) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  for (int t = 0; t < 14; t++) { /* the last two: grains of 4 and 8 */
    int stages = 2 + t % 4, k = 3 + (int)gsl_rng_uniform_int(rng, 90);
    if (t >= 12) k = 256 * (t - 11);
    scenario *s = support_random_scenario(rng, 2 + t % 7, stages, k, t % 2);
    err e = {0};
    cost_ctx *c = cost_ctx_from_scenario(s, &e);
    cr_assert(c, "%s", e.msg);
    checker x;
    search_result *r = sites_search(c, (uint64_t)t, 200, 0, &x);
    cr_assert_eq(x.seen, 20 + 2 * 200, "every child before and after");
    cr_assert_eq(alloc_validate(r->best, k, stages, k * stages, "best", &e),
                 ERR_OK, "%s", e.msg);
    /* to the bit above 64 replicas (DataPCost by sites sums in site
     * order); below, the pairwise sums follow the members' order, which
     * the realised columns change: to rounding */
    if (k > 64)
      cr_assert(r->objective_s == r->parts.score_s,
                "t %d (k %d): the pipelines cost %.17g, the partition %.17g",
                t, k, r->parts.score_s, r->objective_s);
    else
      cr_assert_float_eq(r->objective_s, r->parts.score_s,
                         1e-12 * r->objective_s, "t %d (k %d)", t, k);
    for (long i = 1; i < r->candidates; i++)
      cr_assert_leq(r->convergence[i], r->convergence[i - 1]);
    search_result_free(r);
    cost_ctx_free(c);
    scenario_free(s);
  }
  gsl_rng_free(rng);
}

Test(gcma_sites, a_seed_reproduces_a_run_and_batches_change_nothing) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  scenario *s = support_random_scenario(rng, 6, 4, 40, true);
  err e = {0};
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  checker x;
  search_result *a = sites_search(c, 5, 300, 1, &x);
  const int batches[] = {0, 3, 64};
  for (int i = 0; i < 3; i++) {
    search_result *b = sites_search(c, 5, 300, batches[i], &x);
    cr_assert_eq(b->candidates, a->candidates);
    cr_assert_arr_eq(b->convergence, a->convergence,
                     (size_t)a->candidates * sizeof *a->convergence);
    cr_assert_arr_eq(b->best->device, a->best->device, 160 * sizeof(int));
    search_result_free(b);
  }
  search_result_free(a);
  cost_ctx_free(c);
  scenario_free(s);
  gsl_rng_free(rng);
}

/* ---- the optimum over every count matrix ---- */

typedef struct enumeration {
  const bysite *b;
  const cost_ctx *c;
  cost_scratch *w;
  int ng, k, *cnt, *left, *groups;
  double best;
} enumeration;

/* Fills row g from site x on (left[x]: site x's devices not yet placed). */
static void enumerate(enumeration *q, int g, int x, int room) {
  int ns = q->b->ns;
  if (g == q->ng) {
    bysite_groups(q->b, q->ng, q->k, q->cnt, q->groups);
    q->best = fmin(q->best, cost_partition(q->c, q->groups, q->w, NULL));
    return;
  }
  if (x == ns) {
    if (room == 0) enumerate(q, g + 1, 0, q->k);
    return;
  }
  if (g == q->ng - 1) { /* the last row takes what is left */
    int sum = 0;
    for (int y = 0; y < ns; y++) sum += q->cnt[g * ns + y] = q->left[y];
    if (sum == q->k) enumerate(q, q->ng, 0, 0);
    return;
  }
  for (int v = 0; v <= q->left[x] && v <= room; v++) {
    q->cnt[g * ns + x] = v;
    q->left[x] -= v;
    enumerate(q, g, x + 1, room - v);
    q->left[x] += v;
  }
}

/* Seven of eight: instance 5 is a plateau where GCMA over labels stalls
 * too (9.58 against 8.86 with the same budget; 9.24 with 5000 trials). */
Test(gcma_sites, reaches_the_optimum_over_count_matrices) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 3);
  int hits = 0;
  for (int t = 0; t < 8; t++) {
    int stages = 2 + t % 2, k = 4 + t % 3, ns = 3 + t % 2;
    scenario *s = support_random_scenario(rng, ns, stages, k, t % 2);
    err e = {0};
    cost_ctx *c = cost_ctx_from_scenario(s, &e);
    bysite *b = bysite_new(c);
    int n = k * stages;
    enumeration q = {.b = b, .c = c, .w = cost_scratch_new(k, stages),
                     .ng = stages, .k = k, .best = INFINITY,
                     .cnt = calloc((size_t)stages * b->ns, sizeof(int)),
                     .left = malloc((size_t)b->ns * sizeof(int)),
                     .groups = malloc((size_t)n * sizeof(int))};
    for (int x = 0; x < b->ns; x++) q.left[x] = bysite_size(b, x);
    enumerate(&q, 0, 0, k);
    checker x;
    search_result *r = sites_search(c, (uint64_t)t + 1, 600, 0, &x);
    hits += r->objective_s == q.best;
    cr_assert_geq(r->objective_s, q.best, "t %d: below the optimum", t);
    search_result_free(r);
    free(q.cnt), free(q.left), free(q.groups);
    cost_scratch_free(q.w);
    bysite_free(b);
    cost_ctx_free(c);
    scenario_free(s);
  }
  cr_assert_geq(hits, 7, "the optimum %d times of 8", hits);
  gsl_rng_free(rng);
}
