/* test_local: the simulator-in-the-loop search with a stand-in objective
 * whose optimum is known (the identity allocation), its start recording,
 * reproducibility and error propagation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "schedules/local.h"

/* Distance from the identity: sum of |device - position|. */
static double displacement(void *ctx, const alloc *a, err *e) {
  (void)e;
  int *calls = ctx;
  (*calls)++;
  double s = 0;
  for (int i = 0; i < a->replicas * a->stages; i++) s += abs(a->device[i] - i);
  return s;
}

static double failing(void *ctx, const alloc *a, err *e) {
  (void)ctx;
  (void)a;
  err_set(e, ERR_CONFIG, "model.json:3: the simulation cannot run");
  return NAN;
}

static cost_ctx *ctx(void) {
  double lat[144], bw[144];
  for (int i = 0; i < 144; i++) lat[i] = 1 + i % 5, bw[i] = 1 + i % 3;
  return cost_ctx_new(3, 4, lat, bw, 0.3, 1.0);
}

Test(local, improves_and_never_worsens) {
  cost_ctx *c = ctx();
  int calls = 0;
  search_objective obj = {.name = "disp", .alloc = displacement, .ctx = &calls};
  alloc *start = alloc_random(3, 4, 5);
  const alloc *starts[] = {start};
  search_opts o;
  search_opts_default(&o);
  o.trials = 3000;
  o.seed = 2;
  err e = {ERR_OK, ""};
  search_result *r = local_search(c, &obj, starts, 1, &o, &e);
  cr_assert_not_null(r);
  cr_assert_eq(calls, 3000);
  cr_assert_eq(r->candidates, 3000);
  cr_assert_float_eq(r->start_s, displacement(&calls, start, NULL), 0);
  cr_assert_float_eq(r->objective_s, 0, 0, "swaps reach the identity");
  cr_assert_float_eq(r->objective_s, displacement(&calls, r->best, NULL), 0);
  for (long i = 1; i < r->candidates; i++)
    cr_assert_leq(r->convergence[i], r->convergence[i - 1]);
  err_clear(&e);
  cr_assert_eq(alloc_validate(r->best, 3, 4, 12, "best", &e), ERR_OK);
  search_result_free(r);
  alloc_free(start);
  cost_ctx_free(c);
}

Test(local, seed_reproduces_and_best_start_wins) {
  cost_ctx *c = ctx();
  int calls = 0;
  search_objective obj = {.name = "disp", .alloc = displacement, .ctx = &calls};
  alloc *a = alloc_random(3, 4, 9), *b = alloc_identity(3, 4);
  const alloc *starts[] = {a, b};
  search_opts o;
  search_opts_default(&o);
  o.trials = 2;
  err e = {ERR_OK, ""};
  search_result *r = local_search(c, &obj, starts, 2, &o, &e);
  cr_assert_float_eq(r->objective_s, 0, 0);
  cr_assert_gt(r->start_s, 0, "start_s is the first start's value");
  search_result_free(r);
  o.trials = 200;
  search_result *r1 = local_search(c, &obj, starts, 1, &o, &e);
  search_result *r2 = local_search(c, &obj, starts, 1, &o, &e);
  cr_assert_arr_eq(r1->best->device, r2->best->device, 12 * sizeof(int));
  cr_assert_arr_eq(r1->convergence, r2->convergence, 200 * sizeof(double));
  search_result_free(r1);
  search_result_free(r2);
  alloc_free(a);
  alloc_free(b);
  cost_ctx_free(c);
}

Test(local, objective_error_propagates) {
  cost_ctx *c = ctx();
  search_objective obj = {.name = "sim", .alloc = failing};
  alloc *a = alloc_identity(3, 4);
  const alloc *starts[] = {a};
  search_opts o;
  search_opts_default(&o);
  err e = {ERR_OK, ""};
  cr_assert_null(local_search(c, &obj, starts, 1, &o, &e));
  cr_assert_eq(e.code, ERR_CONFIG);
  cr_assert_str_eq(e.msg, "model.json:3: the simulation cannot run");
  alloc_free(a);
  cost_ctx_free(c);
}
