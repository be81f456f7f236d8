/* test_diloco: the exchange schedules against a naive reference (a step-by-
 * step simulation of torchft's counters), the plan's checks naming their
 * options, fragment parameters summing to the stage's, the cycle's closed
 * form by hand, and a replica's clock through an exchange by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "models/alloc.h"
#include "models/diloco.h"
#include "models/spec.h"

/* torchft's DiLoCo step hook, step by step: a local counter up to H/F, the
 * fragment to prepare at counter H/F - tau and to sync at H/F; the manager's
 * step (which fragment) advances at each sync. */
static void reference(const diloco_plan *p, long long steps, int *start,
                      int *due) {
  int per = p->inner_steps / p->fragments, local = 0;
  long long manager = 0;
  for (long long t = 1; t <= steps; t++) {
    start[t] = due[t] = -1;
    local++;
    if (local == per - p->overlap) start[t] = (int)(manager % p->fragments);
    if (local == per) {
      due[t] = (int)(manager % p->fragments);
      manager++;
      local = 0;
    }
  }
}

Test(diloco, schedule_matches_torchft_counters) {
  const diloco_plan plans[] = {
      {100, 1, 0}, {100, 4, 1}, {100, 4, 5}, {12, 3, 3}, {6, 6, 0}, {1, 1, 0},
      {500, 5, 99}};
  enum { STEPS = 1200 };
  static int start[STEPS + 1], due[STEPS + 1];
  for (size_t i = 0; i < sizeof plans / sizeof *plans; i++) {
    const diloco_plan *p = &plans[i];
    cr_assert_eq(diloco_check(p, 60, NULL, NULL), ERR_OK, "plan %zu", i);
    reference(p, STEPS, start, due);
    for (long long t = 1; t <= STEPS; t++) {
      cr_assert_eq(diloco_starts_after(p, t), start[t], "plan %zu step %lld",
                   i, t);
      cr_assert_eq(diloco_due_after(p, t), due[t], "plan %zu step %lld", i, t);
    }
  }
}

Test(diloco, every_fragment_once_per_h_steps) {
  diloco_plan p = {100, 4, 1};
  int seen[4] = {0};
  for (long long t = 1; t <= 100; t++) {
    int f = diloco_due_after(&p, t);
    if (f >= 0) seen[f]++;
  }
  for (int f = 0; f < 4; f++) cr_assert_eq(seen[f], 1);
  /* DiLoCo: one exchange, after step H, blocking (launched and due at once) */
  diloco_plan d = {50, 1, 0};
  for (long long t = 1; t <= 200; t++) {
    int want = t % 50 == 0 ? 0 : -1;
    cr_assert_eq(diloco_due_after(&d, t), want);
    cr_assert_eq(diloco_starts_after(&d, t), want);
  }
}

static void expect_error(diloco_plan p, int layers, const char *option) {
  err e = {0};
  cr_assert_eq(diloco_check(&p, layers, NULL, &e), ERR_CONFIG, "%s", option);
  cr_assert_not_null(strstr(e.msg, option), "'%s' in '%s'", option, e.msg);
}

Test(diloco, check_names_the_option) {
  expect_error((diloco_plan){0, 1, 0}, 24, "--inner-steps");
  expect_error((diloco_plan){-5, 1, 0}, 24, "--inner-steps");
  expect_error((diloco_plan){100, 0, 0}, 24, "--fragments");
  expect_error((diloco_plan){100, 25, 0}, 24, "--fragments");  /* > layers */
  expect_error((diloco_plan){100, 5, 0}, 24, "--fragments");   /* 24 % 5 */
  expect_error((diloco_plan){100, 3, 0}, 24, "--fragments");   /* 100 % 3 */
  expect_error((diloco_plan){100, 4, 25}, 24, "--overlap-steps");
  expect_error((diloco_plan){100, 4, -1}, 24, "--overlap-steps");
  cr_assert_eq(diloco_check(&(diloco_plan){100, 4, 24}, 24, NULL, NULL), ERR_OK);
  cr_assert_eq(diloco_check(&(diloco_plan){96, 24, 3}, 24, NULL, NULL), ERR_OK);
}

Test(diloco, fragment_params_strided_and_complete) {
  const spec_model *xl = spec_model_find("gpt3-xl");
  spec_workload w = {.model = xl, .layers = 24, .batch = 64, .micro_batch = 1,
                     .stages = 3, .replicas = 1, .micro_batches_per_pass = 64,
                     .passes = 1, .recompute = true};
  diloco_plan p = {100, 4, 1};
  double layer = spec_layer_params(xl);
  for (int st = 0; st < 3; st++) {
    double sum = 0;
    for (int f = 0; f < 4; f++) {
      double x = diloco_fragment_params(&w, &p, st, f);
      sum += x;
      /* 8 layers a stage, strided over 4 fragments: 2 each */
      double want = 2 * layer;
      if (st == 0 && f == 0) want += spec_embedding_params(xl);
      if (st == 2 && f == 3) want += spec_head_params(xl);
      cr_assert_eq(x, want, "stage %d fragment %d", st, f);
    }
    cr_assert_eq(sum, spec_stage_params(&w, st));
  }
  /* layers 0..23 by hand: fragment of 13 is 1, of 12 is 0 */
  cr_assert_eq(diloco_fragment_of_layer(&p, 13), 1);
  cr_assert_eq(diloco_fragment_of_layer(&p, 12), 0);
}

Test(diloco, cycle_closed_form_by_hand) {
  /* DiLoCo, H = 100 steps of 2 s, a 30 s exchange: 230 s */
  double one = 30;
  cr_assert_eq(diloco_cycle_s(&(diloco_plan){100, 1, 0}, 2, &one), 230);
  /* streaming, 4 fragments overlapping 2 steps (4 s) with 3, 10, 5, 7 s
   * exchanges: 3 s hides, 10 s shows 6 s, 5 s 1 s, 7 s 3 s */
  double sync[4] = {3, 10, 5, 7};
  cr_assert_eq(diloco_cycle_s(&(diloco_plan){100, 4, 2}, 2, sync),
               200 + 0 + 6 + 1 + 3);
}

/* Four one-layer stages, two replicas, F = 2: fragment 0 is stages 0 (with
 * the embedding) and 2, stages 1 and 3 hold none of it (their results are
 * not waited for). Replica r launches at at[r] after a step of step[r];
 * it goes on after its tau overlapped steps and, on each stage holding the
 * fragment, its own member's result and update (16-bit values: no
 * quantisation, the outer step alone). */
Test(diloco, exchange_land_each_replica_from_its_own_result) {
  const spec_model *xl = spec_model_find("gpt3-xl");
  spec_workload w = {.model = xl, .layers = 4, .batch = 8, .micro_batch = 1,
                     .stages = 4, .replicas = 2, .micro_batches_per_pass = 4,
                     .passes = 1, .recompute = true};
  w.given.grad_bits = 16;
  alloc *a = alloc_identity(2, 4);
  const spec_gpu *v100 = spec_gpu_find("V100"), *gpu[8];
  for (int d = 0; d < 8; d++) gpu[d] = v100;
  double layer = spec_layer_params(xl);
  double u0 = diloco_outer_s(v100, layer + spec_embedding_params(xl));
  double u2 = diloco_outer_s(v100, layer);
  cr_assert_gt(u0, u2 + 1e-4, "the embedding's update is the longer");
  double step[2] = {1, 3}, rd[8];
  /* [st R + r]: stages 1 and 3 hold nothing of fragment 0 */
  double done[8] = {5, 4, 100, 100, 2, 6, 100, 100};
  for (int tau = 0; tau < 2; tau++) {
    diloco_plan p = {4, 2, tau};
    double at[2] = {1, 3};
    diloco_exchange_ready(&w, a, gpu, &p, 0, at, rd);
    for (int i = 0; i < 8; i++) cr_assert_eq(rd[i], at[i % 2]);
    diloco_exchange_land(&w, a, gpu, &p, 0, step, done, at);
    /* tau 0: r0 max(5 + u0, 2 + u2), r1 max(4 + u0, 6 + u2); tau 1 (go at
     * 2 and 6): r0 max(5 + u0, 2 + u2), r1 max(6 + u0, 6 + u2) */
    cr_assert_float_eq(at[0], 5 + u0, 1e-12, "tau %d", tau);
    cr_assert_float_eq(at[1], tau ? 6 + u0 : 6 + u2, 1e-12, "tau %d", tau);
  }
  alloc_free(a);
}
