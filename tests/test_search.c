/* test_search: the search record (best-so-far convergence, NaN never a best,
 * progress calls) and the DT-FM objective against the cost model itself. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedules/search.h"

static long calls, last_done;
static double last_best;
static void count(void *ctx, long done, long total, double best) {
  (void)ctx;
  (void)total;
  calls++;
  last_done = done;
  last_best = best;
}

Test(search, log_keeps_the_running_minimum) {
  search_opts o;
  search_opts_default(&o);
  o.progress = count;
  search_log l;
  search_log_init(&l, &o, 6);
  const double v[] = {5, 7, 3, NAN, 3, 1};
  const bool better[] = {true, false, true, false, false, true};
  double naive = INFINITY;
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(search_log_push(&l, v[i]), better[i], "candidate %d", i);
    if (v[i] < naive) naive = v[i];
    cr_assert_float_eq(l.best[i], naive, 0);
  }
  cr_assert_eq(calls, 6);
  cr_assert_eq(last_done, 6);
  cr_assert_float_eq(last_best, 1, 0);
  search_result r = {0};
  search_log_finish(&l, &r);
  cr_assert_eq(r.candidates, 6);
  cr_assert_float_eq(r.convergence[2], 3, 0);
  cr_assert_null(l.best);
  free(r.convergence);
}

Test(search, empty_log_is_infinite) {
  search_log l;
  search_log_init(&l, NULL, 0);
  cr_assert(isinf(search_log_best(&l)));
}

Test(search, dtfm_objective_is_the_cost_model) {
  int k = 4, ng = 3, n = k * ng;
  double lat[144], bw[144];
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      lat[a * n + b] = 1 + (a * 7 + b * 3) % 11;
      bw[a * n + b] = 0.5 + (a + b) % 5;
    }
  cost_ctx *c = cost_ctx_new(k, ng, lat, bw, 0.3, 0.9);
  search_dtfm *d = search_dtfm_new(c);
  search_objective obj = search_dtfm_objective(d);
  cost_scratch *w = cost_scratch_new(k, ng);
  int groups[12];
  for (int t = 0; t < 20; t++) {
    for (int i = 0; i < n; i++) groups[i] = (i * 5 + t) % n;
    cr_assert_float_eq(obj.partition(obj.ctx, groups, NULL),
                       cost_partition(c, groups, w, NULL), 0);
  }
  alloc *a = alloc_identity(k, ng);
  cr_assert_float_eq(obj.alloc(obj.ctx, a, NULL), cost_alloc(c, a, NULL), 0);
  search_result *r = search_result_new("x", a, c);
  cr_assert_float_eq(r->parts.score_s, cost_alloc(c, a, NULL), 0);
  cr_assert(isnan(r->start_s));
  search_result_free(r);
  search_result_free(NULL);
  cost_scratch_free(w);
  search_dtfm_free(d);
  search_dtfm_free(NULL);
  cost_ctx_free(c);
}

/* The default objective of a search: the caller's when given (nothing made),
 * else the DT-FM score, owned by the caller. */
Test(search, objective_or_dtfm) {
  int k = 2, ng = 2, n = k * ng;
  double lat[16], bw[16];
  for (int i = 0; i < n * n; i++) lat[i] = 1 + i % 3, bw[i] = 1 + i % 4;
  cost_ctx *c = cost_ctx_new(k, ng, lat, bw, 0.3, 0.9);
  search_objective mine = {.name = "mine"}, buf;
  search_dtfm *own = (search_dtfm *)&buf; /* must be overwritten */
  cr_assert_eq(search_objective_or_dtfm(&mine, c, &own, &buf), &mine);
  cr_assert_null(own);
  const search_objective *o = search_objective_or_dtfm(NULL, c, &own, &buf);
  cr_assert_eq(o, &buf);
  cr_assert_not_null(own);
  cr_assert_str_eq(o->name, "dtfm-score");
  alloc *a = alloc_identity(k, ng);
  cr_assert_float_eq(o->alloc(o->ctx, a, NULL), cost_alloc(c, a, NULL), 0);
  alloc_free(a);
  search_dtfm_free(own);
  cost_ctx_free(c);
}

/* The convergence CSV against rows formatted one by one. */
Test(search, convergence_csv_is_one_row_a_candidate) {
  double best[] = {3.5, 2.25, 2.25, 1.0 / 3};
  search_result r = {.candidates = 4, .convergence = best};
  char *text = NULL, want[256] = "candidate,best_score_s\n";
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  cr_assert_eq(search_convergence_write(&r, f), ERR_OK);
  fclose(f);
  for (int i = 0; i < 4; i++)
    snprintf(want + strlen(want), sizeof want - strlen(want), "%d,%.9g\n",
             i + 1, best[i]);
  cr_assert_str_eq(text, want);
  cr_assert(strstr(text, "4,0.333333333\n"));
  free(text);
}
