/* test_local: the simulator-in-the-loop search with stand-in objectives
 * whose optimum is known (the identity allocation; row and column orders
 * checked against brute force over all orders, on a landscape where no
 * device swap improves; a trap only a restart or a kick leaves), its start
 * recording, reproducibility and error propagation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Nothing fits: every placement is refused as +inf (out of memory). */
static double nothing_fits(void *ctx, const alloc *a, err *e) {
  (void)ctx;
  (void)a;
  (void)e;
  return INFINITY;
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
  err e = {0};
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
  err e = {0};
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
  err e = {0};
  cr_assert_null(local_search(c, &obj, starts, 1, &o, &e));
  cr_assert_eq(e.code, ERR_CONFIG);
  cr_assert_str_eq(e.msg, "model.json:3: the simulation cannot run");
  alloc_free(a);
  cost_ctx_free(c);
}

/* Rows and columns of an allocation that is the identity with its rows and
 * columns permuted: device[r][s] = p[r] S + q[s]. A candidate of that form
 * costs the ring over its rows (in row order, closed) plus the path over
 * its columns, distances between points of the plane; any other candidate
 * costs 1e6 more. So every device swap of such a candidate is far worse
 * (it breaks two rows or two columns), and only whole-row and whole-column
 * moves can improve it. Every candidate must be a permutation. */
#define OR 6
#define OS 5
typedef struct orders {
  double rx[OR], ry[OR], cx[OS], cy[OS];
  long calls;
} orders;

static double dist(double ax, double ay, double bx, double by) {
  return sqrt((ax - bx) * (ax - bx) + (ay - by) * (ay - by));
}

static double orders_value(const orders *o, const int *p, const int *q) {
  double v = 0;
  for (int r = 0; r < OR; r++) {
    int a = p[r], b = p[(r + 1) % OR];
    v += dist(o->rx[a], o->ry[a], o->rx[b], o->ry[b]);
  }
  for (int s = 0; s + 1 < OS; s++)
    v += dist(o->cx[q[s]], o->cy[q[s]], o->cx[q[s + 1]], o->cy[q[s + 1]]);
  return v;
}

static double orders_objective(void *ctx, const alloc *a, err *e) {
  (void)e;
  orders *o = ctx;
  o->calls++;
  int seen[OR * OS] = {0}, p[OR], q[OS];
  for (int i = 0; i < OR * OS; i++) {
    cr_assert(a->device[i] >= 0 && a->device[i] < OR * OS);
    cr_assert(!seen[a->device[i]]++, "candidate is not a permutation");
  }
  for (int r = 0; r < OR; r++) p[r] = alloc_at(a, r, 0) / OS;
  for (int s = 0; s < OS; s++) q[s] = alloc_at(a, 0, s) % OS;
  for (int r = 0; r < OR; r++)
    for (int s = 0; s < OS; s++)
      if (alloc_at(a, r, s) != p[r] * OS + q[s]) return 1e6 + orders_value(o, p, q);
  return orders_value(o, p, q);
}

static bool next_perm(int *v, int n) {
  int i = n - 2;
  while (i >= 0 && v[i] >= v[i + 1]) i--;
  if (i < 0) return false;
  int j = n - 1;
  while (v[j] <= v[i]) j--;
  int t = v[i];
  v[i] = v[j], v[j] = t;
  for (int lo = i + 1, hi = n - 1; lo < hi; lo++, hi--)
    t = v[lo], v[lo] = v[hi], v[hi] = t;
  return true;
}

Test(local, row_and_column_moves_match_brute_force_over_orders) {
  static double lat[OR * OS * OR * OS], bw[OR * OS * OR * OS];
  for (int i = 0; i < OR * OS * OR * OS; i++) bw[i] = 1;
  cost_ctx *c = cost_ctx_new(OR, OS, lat, bw, 0.3, 1.0);
  for (unsigned inst = 1; inst <= 3; inst++) {
    orders o = {.calls = 0};
    unsigned x = inst;
    double *coords[] = {o.rx, o.ry, o.cx, o.cy};
    int lens[] = {OR, OR, OS, OS};
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < lens[k]; i++) {
        x = x * 1103515245u + 12345u;
        coords[k][i] = (double)((x >> 16) % 1000);
      }
    double opt = INFINITY;
    int p[OR], q[OS];
    for (int i = 0; i < OR; i++) p[i] = i;
    do {
      for (int i = 0; i < OS; i++) q[i] = i;
      do {
        double v = orders_value(&o, p, q);
        if (v < opt) opt = v;
      } while (next_perm(q, OS));
    } while (next_perm(p, OR));
    /* start: the identity with rows and columns in a scrambled order */
    alloc *start = alloc_new(OR, OS);
    int sp[OR] = {3, 0, 5, 1, 4, 2}, sq[OS] = {2, 4, 0, 3, 1};
    for (int r = 0; r < OR; r++)
      for (int s = 0; s < OS; s++) start->device[r * OS + s] = sp[r] * OS + sq[s];
    search_objective obj = {.name = "orders", .alloc = orders_objective, .ctx = &o};
    const alloc *starts[] = {start};
    search_opts so;
    search_opts_default(&so);
    so.trials = 800;
    so.seed = inst;
    err e = {0};
    search_result *r = local_search(c, &obj, starts, 1, &so, &e);
    cr_assert_not_null(r, "%s", e.msg);
    cr_expect_gt(r->start_s, opt + 1e-9, "instance %u: the start is not optimal", inst);
    cr_expect_float_eq(r->objective_s, opt, 1e-9, "instance %u: %.3f, brute force %.3f",
                       inst, r->objective_s, opt);
    cr_expect_eq(o.calls, so.trials);
    search_result_free(r);
    alloc_free(start);
  }
  cost_ctx_free(c);
}

/* A trap: the identity costs 1, every other candidate 5 + its distance to
 * a target (which costs 0), so the identity is a strict local optimum. */
typedef struct trap {
  const alloc *target;
} trap;

static double trap_objective(void *ctx, const alloc *a, err *e) {
  (void)e;
  const trap *t = ctx;
  int n = a->replicas * a->stages, ident = 1;
  double d = 0;
  for (int i = 0; i < n; i++) {
    ident &= a->device[i] == i;
    d += a->device[i] != t->target->device[i];
  }
  return ident ? 1 : d == 0 ? 0 : 5 + d;
}

Test(local, restarts_and_kicks_leave_a_strict_local_optimum) {
  cost_ctx *c = ctx();
  alloc *target = alloc_random(3, 4, 17), *ident = alloc_identity(3, 4);
  alloc *other = alloc_random(3, 4, 23);
  trap t = {target};
  search_objective obj = {.name = "trap", .alloc = trap_objective, .ctx = &t};
  search_opts o;
  search_opts_default(&o);
  o.trials = 2000;
  err e = {0};
  /* the identity first and best; the walk must restart from the other */
  const alloc *two[] = {ident, other};
  search_result *r = local_search(c, &obj, two, 2, &o, &e);
  cr_assert_not_null(r);
  cr_expect_float_eq(r->start_s, 1, 0);
  cr_expect_float_eq(r->objective_s, 0, 0, "restart from the second start");
  cr_expect_arr_eq(r->best->device, target->device, 12 * sizeof(int));
  search_result_free(r);
  /* only the identity: kicks must leave it */
  const alloc *one[] = {ident};
  r = local_search(c, &obj, one, 1, &o, &e);
  cr_assert_not_null(r);
  cr_expect_float_eq(r->objective_s, 0, 0, "a kick leaves the trap");
  search_result_free(r);
  alloc_free(target);
  alloc_free(ident);
  alloc_free(other);
  cost_ctx_free(c);
}

/* Issue 24, 2: when no placement fits, the best is still a placement that
 * was evaluated (the best start), never an uninitialised one. */
Test(local, nothing_fits_returns_an_evaluated_start) {
  cost_ctx *c = ctx();
  search_objective obj = {.name = "oom", .alloc = nothing_fits};
  alloc *a = alloc_random(3, 4, 5), *b = alloc_random(3, 4, 6);
  const alloc *starts[] = {a, b};
  search_opts o;
  search_opts_default(&o);
  o.trials = 50;
  err e = {0};
  search_result *r = local_search(c, &obj, starts, 2, &o, &e);
  cr_assert_not_null(r);
  cr_assert(isinf(r->objective_s));
  cr_assert_arr_eq(r->best->device, a->device, 12 * sizeof(int));
  cr_assert_eq(alloc_validate(r->best, 3, 4, 12, "best", &e), ERR_OK);
  search_result_free(r);
  alloc_free(a);
  alloc_free(b);
  cost_ctx_free(c);
}
