/* test_cost_memo: the scratch's memos (models/cost_memo.c) change no value
 * and no pairing: cost_group_pair, memoised, against a cold bottleneck
 * matching of the same matrix; cost_partition, memoised, against a fresh
 * scratch per call, over groups in any order and with any labels; and a
 * scratch that moves between contexts never answers from another's memo. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "models/cost_parts.h"
#include "tests/support.h"
#include "traces/scenario.h"

enum { K = 4, N = 6, D = K * N, SITES = 5 };

/* A context of D devices over SITES sites (device d at site d % SITES:
 * cost_ctx_new takes device matrices; equal rows make equal sites). */
static cost_ctx *ctx_sites(unsigned long seed, double scale) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  double lat[SITES * SITES], bwt[SITES * SITES];
  for (int i = 0; i < SITES * SITES; i++) {
    lat[i] = (double)gsl_rng_uniform_int(r, 5) * scale; /* ties */
    bwt[i] = 1 + (double)gsl_rng_uniform_int(r, 3);
  }
  static double l[D * D], b[D * D];
  for (int a = 0; a < D; a++)
    for (int c = 0; c < D; c++) {
      int x = a % SITES, y = c % SITES, lo = x < y ? x : y, hi = x < y ? y : x;
      l[a * D + c] = lat[lo * SITES + hi]; /* symmetric links */
      b[a * D + c] = bwt[lo * SITES + hi];
    }
  gsl_rng_free(r);
  return cost_ctx_new(K, N, l, b, 0.3, 0.7);
}

static double cold_pair(const cost_ctx *c, const int *ga, const int *gb,
                        int *match) {
  cost_scratch *s = cost_scratch_new(K, N);
  double w[K * K];
  for (int i = 0; i < K; i++)
    for (int j = 0; j < K; j++) w[i * K + j] = cost_pp_edge(c, ga[i], gb[j]);
  double v = cost_bottleneck_match(K, w, match, s);
  cost_scratch_free(s);
  return v;
}

Test(cost_memo, group_pair_value_and_pairing_as_a_cold_matching) {
  cost_ctx *c = ctx_sites(1, 1.0);
  cost_scratch *s = cost_scratch_new(K, N);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int dev[D], m1[K], m2[K];
  for (int i = 0; i < D; i++) dev[i] = i;
  for (int t = 0; t < 3000; t++) { /* few site multisets: many hits */
    gsl_ran_shuffle(r, dev, D, sizeof *dev);
    double want = cold_pair(c, dev, dev + K, m1);
    cr_assert(cost_group_pair(c, dev, dev + K, NULL, s) == want, "t %d", t);
    cr_assert(cost_group_pair(c, dev, dev + K, m2, s) == want, "t %d", t);
    cr_assert_arr_eq(m1, m2, sizeof m1, "pairing, t %d", t);
  }
  gsl_rng_free(r);
  cost_scratch_free(s);
  cost_ctx_free(c);
}

/* Partition g scores the same through s (its memos warm) as through a
 * fresh scratch (trial t names the failure). */
static void expect_as_fresh(const cost_ctx *c, const int *g, cost_scratch *s,
                            int t) {
  cost_scratch *fresh =
      cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  double want = cost_partition(c, g, fresh, NULL);
  cost_scratch_free(fresh);
  cr_assert(cost_partition(c, g, s, NULL) == want, "t %d", t);
}

Test(cost_memo, partition_scores_as_a_fresh_scratch_and_across_contexts) {
  cost_ctx *c1 = ctx_sites(2, 1.0), *c2 = ctx_sites(2, 3.0);
  cost_scratch *s = cost_scratch_new(K, N);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int g[D];
  for (int i = 0; i < D; i++) g[i] = i;
  for (int t = 0; t < 2000; t++) {
    const cost_ctx *c = t % 3 ? c1 : c2; /* the scratch moves between them */
    gsl_ran_shuffle(r, g, D, sizeof *g);
    expect_as_fresh(c, g, s, t);
  }
  gsl_rng_free(r);
  cost_scratch_free(s);
  cost_ctx_free(c1);
  cost_ctx_free(c2);
}

/* worldwide's scenario (into *sc) and cost context: 8 cities of 8. */
static cost_ctx *worldwide_ctx(scenario **sc) {
  err e;
  err_clear(&e);
  *sc = support_scenario("worldwide");
  cost_ctx *c = cost_ctx_from_scenario(*sc, &e);
  cr_assert_not_null(c, "%s", e.msg);
  return c;
}

/* Sites shared by many devices (worldwide: 8 cities of 8): groups of other
 * devices at the same sites are answered from the memo, with the values a
 * fresh scratch computes. */
Test(cost_memo, shared_sites_worldwide) {
  scenario *sc;
  cost_ctx *c = worldwide_ctx(&sc);
  int k = cost_ctx_replicas(c), n = k * cost_ctx_stages(c);
  cost_scratch *s = cost_scratch_new(k, cost_ctx_stages(c));
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int *g = malloc((size_t)n * sizeof *g);
  for (int i = 0; i < n; i++) g[i] = i;
  for (int t = 0; t < 300; t++) {
    gsl_ran_shuffle(r, g, (size_t)n, sizeof *g);
    expect_as_fresh(c, g, s, t);
  }
  free(g);
  gsl_rng_free(r);
  cost_scratch_free(s);
  cost_ctx_free(c);
  scenario_free(sc);
}

/* k rows drawn into classes of random sizes, at most COST_CLASSES_MAX
 * (the last takes what is left): their number; c[i] their sizes. */
static int draw_classes(gsl_rng *r, int k, int *c) {
  int n = 0;
  for (int left = k; left > 0 && n < COST_CLASSES_MAX; n++) {
    c[n] = n + 1 == COST_CLASSES_MAX
               ? left
               : 1 + (int)gsl_rng_uniform_int(r, (unsigned long)left);
    left -= c[n];
  }
  return n;
}

/* The matching over classes of equal rows and columns gives the matching
 * of the expanded matrix its value, to the bit: random class sizes (equal
 * totals up to 16), weights with ties (small integers) or spread. */
Test(cost_memo, classes_equal_the_expanded_matching) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  cost_scratch *s = cost_scratch_new(16, 2);
  for (int t = 0; t < 4000; t++) {
    int k = 1 + (int)gsl_rng_uniform_int(r, 16);
    int ca[COST_CLASSES_MAX], cb[COST_CLASSES_MAX];
    int da = draw_classes(r, k, ca), db = draw_classes(r, k, cb);
    double v[COST_CLASSES_MAX * COST_CLASSES_MAX], w[16 * 16];
    for (int i = 0; i < da * db; i++)
      v[i] = t % 2 ? (double)gsl_rng_uniform_int(r, 5)
                   : gsl_rng_uniform(r) * 100;
    int row = 0;
    for (int x = 0; x < da; x++)
      for (int a = 0; a < ca[x]; a++, row++) {
        int col = 0;
        for (int y = 0; y < db; y++)
          for (int b = 0; b < cb[y]; b++, col++) w[row * k + col] = v[x * db + y];
      }
    double want = cost_bottleneck_match(k, w, NULL, s);
    double got = cost_bottleneck_classes(da, ca, db, cb, v);
    cr_assert(got == want, "t %d k %d: %.17g vs %.17g", t, k, got, want);
  }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* Worldwide's groups share sites: memoised, class-solved pair values and
 * pairings equal a cold matching of the device matrix. */
Test(cost_memo, worldwide_pairs_as_a_cold_matching) {
  scenario *sc;
  cost_ctx *c = worldwide_ctx(&sc);
  int k = cost_ctx_replicas(c), n = k * cost_ctx_stages(c);
  cost_scratch *s = cost_scratch_new(k, cost_ctx_stages(c));
  cost_scratch *cold = cost_scratch_new(k, cost_ctx_stages(c));
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int *g = malloc((size_t)n * sizeof *g), m1[64], m2[64];
  double *w = malloc((size_t)k * k * sizeof *w);
  for (int i = 0; i < n; i++) g[i] = i;
  for (int t = 0; t < 2000; t++) {
    gsl_ran_shuffle(r, g, (size_t)n, sizeof *g);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) w[i * k + j] = cost_pp_edge(c, g[i], g[k + j]);
    double want = cost_bottleneck_match(k, w, m1, cold);
    cr_assert(cost_group_pair(c, g, g + k, NULL, s) == want, "t %d", t);
    cr_assert(cost_group_pair(c, g, g + k, m2, s) == want, "t %d", t);
    cr_assert_arr_eq(m1, m2, (size_t)k * sizeof *m1, "pairing, t %d", t);
  }
  free(g), free(w);
  gsl_rng_free(r);
  cost_scratch_free(s);
  cost_scratch_free(cold);
  cost_ctx_free(c);
  scenario_free(sc);
}
