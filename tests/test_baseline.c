/* test_baseline: random search against a naive replay of its permutations
 * (same generator, same seed: the best must be their minimum), and greedy's
 * result against the cost model. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "schedules/baseline.h"

static cost_ctx *ctx(void) {
  int k = 4, ng = 4, n = 16;
  double lat[256], bw[256];
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      bool same = a / 4 == b / 4;
      lat[a * n + b] = same ? 1 : 10 + (a + b) % 7;
      bw[a * n + b] = same ? 10 : 1 + (a * b) % 3 * 0.25;
    }
  return cost_ctx_new(k, ng, lat, bw, 0.3, 1.0);
}

Test(baseline, random_search_is_the_minimum_of_its_permutations) {
  cost_ctx *c = ctx();
  search_opts o;
  search_opts_default(&o);
  o.trials = 300;
  o.seed = 17;
  err e = {0};
  search_result *r = baseline_random_search(c, NULL, &o, &e);
  cr_assert_not_null(r);
  cr_assert_eq(r->candidates, 300);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 17);
  cost_scratch *w = cost_scratch_new(4, 4);
  int perm[16];
  double naive = INFINITY;
  for (int t = 0; t < 300; t++) {
    for (int i = 0; i < 16; i++) perm[i] = i;
    gsl_ran_shuffle(rng, perm, 16, sizeof *perm);
    double s = cost_partition(c, perm, w, NULL);
    if (s < naive) naive = s;
    cr_assert_float_eq(r->convergence[t], naive, 1e-12);
  }
  cr_assert_float_eq(r->objective_s, naive, 1e-12);
  cr_assert_float_eq(r->parts.score_s, naive, 1e-9, "pipelines realise it");
  cr_assert_eq(alloc_validate(r->best, 4, 4, 16, "best", &e), ERR_OK);
  gsl_rng_free(rng);
  cost_scratch_free(w);
  search_result_free(r);
  cost_ctx_free(c);
}

Test(baseline, greedy_is_valid_and_keeps_the_better_construction) {
  cost_ctx *c = ctx();
  search_opts o;
  search_opts_default(&o);
  search_result *r = baseline_greedy(c, &o);
  err e = {0};
  cr_assert_eq(alloc_validate(r->best, 4, 4, 16, "greedy", &e), ERR_OK, "%s",
               e.msg);
  cr_assert_eq(r->candidates, 2);
  cr_assert_float_eq(r->parts.score_s, cost_alloc(c, r->best, NULL), 0);
  cr_assert_float_eq(r->parts.score_s,
                     fmin(r->convergence[0], r->convergence[1]) , 1e-12);
  /* sites of 4 with fast links inside: the greedy groups are the sites */
  int groups[16];
  baseline_greedy_groups(c, groups);
  for (int s = 0; s < 4; s++)
    for (int m = 0; m < 4; m++)
      cr_expect_eq(groups[s * 4 + m] / 4, s);
  search_result_free(r);
  cost_ctx_free(c);
}
