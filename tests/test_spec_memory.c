/* test_spec_memory: a stage's device memory part by part (models/
 * spec_memory.c) under each runtime and ZeRO stage, worked by hand; the
 * refusal's words; the site key gpu_memory_gb; and issue 34's newcomer,
 * whose GPT-3 6.7B in 2 x 8 on A100-40GBs was accepted at 54.8 GB a card. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "schedules/shape.h"
#include "tests/support.h"
#include "traces/scenario.h"
#include "traces/scenario_subset.h"

TestSuite(spec_memory, .init = support_dir_make, .fini = support_dir_remove);

#define NEWCOMER GEODES_FIXTURES "/models/newcomer-a100.json"

/* worldwide (GPT-3 XL, 8 x 8, GPipe with K = 64, recompute) under knobs. */
static spec_workload worldwide_under(scenario **s, const char *runtime,
                                     int zero, const char *algo) {
  *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.runtime = runtime, k.zero = zero, k.dp_algo = algo;
  err e = {0};
  cr_assert_eq(scenario_apply(*s, &k, &e), ERR_OK, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(*s, &w, &e), ERR_OK, "%s", e.msg);
  return w;
}

/* Stage 3 of worldwide (3 layers of h = 2048, no embedding nor head) by
 * hand: P = 3 (12 h^2 + 13 h) parameters; bf16 / fp16 weights and
 * gradients 2 B each, the GPU optimizers' fp32 master weights and moments
 * 12 B, ZeRO-1 dividing those by D_dp = 8 and ZeRO-2 the gradients too;
 * activations (Korthikanti et al. 2022 with full recomputation): each of
 * the in-flight micro-batches keeps each layer's input, 2 s h bytes, and
 * one layer's s h (34 + 5 a s / h) is live while recomputed — GPipe keeps
 * the pass's 64, Megatron's 1F1B on stage 3 of 8 keeps 5; the 2 GB
 * reserve. */
Test(spec_memory, one_stage_by_hand_under_each_runtime_and_zero) {
  static const struct {
    const char *runtime, *algo;
    int zero;
    double w, g, o, in_flight;
  } cases[] = {
      {"dtfm", NULL, 0, 2, 2, 0, 64},
      {"modern", NULL, 0, 2, 2, 12, 64},
      {"modern", "ring", 1, 2, 2, 12.0 / 8, 64},
      {"modern", "ring", 2, 2, 2.0 / 8, 12.0 / 8, 64},
      {"modern", "sharded-ps", 2, 2, 2.0 / 8, 12.0 / 8, 64},
      {"megatron", NULL, 0, 2, 2, 12, 5},
      {"megatron", NULL, 1, 2, 2, 12.0 / 8, 5},
      {"megatron", NULL, 2, 2, 2.0 / 8, 12.0 / 8, 5}};
  double h = 2048, s = 2048, a = 16, P = 3 * (12 * h * h + 13 * h);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    scenario *sc;
    spec_workload w = worldwide_under(&sc, cases[i].runtime, cases[i].zero,
                                      cases[i].algo);
    spec_memory m = spec_stage_memory(&w, 3, 3);
    const char *rt = cases[i].runtime;
    double act = cases[i].in_flight * 3 * 2 * s * h + s * h * (34 + 5 * a * s / h);
    cr_expect_float_eq(m.weights, cases[i].w * P, 1e-9 * P, "%s %d", rt, cases[i].zero);
    cr_expect_float_eq(m.gradients, cases[i].g * P, 1e-9 * P, "%s %d", rt, cases[i].zero);
    cr_expect_float_eq(m.optimizer, cases[i].o * P, 1e-9 * P, "%s %d", rt, cases[i].zero);
    cr_expect_float_eq(m.activations, act, 1e-9 * act, "%s %d", rt, cases[i].zero);
    cr_expect_eq(m.reserve, 2e9);
    cr_expect_float_eq(m.total, (cases[i].w + cases[i].g + cases[i].o) * P + act + 2e9,
                       1e-9 * m.total, "%s %d", rt, cases[i].zero);
    cr_expect_eq(spec_stage_memory_bytes(&w, 3), m.total);
    /* without recomputation every layer keeps its full set */
    w.recompute = false;
    double full = cases[i].in_flight * 3 * s * h * (34 + 5 * a * s / h);
    cr_expect_float_eq(spec_stage_memory(&w, 3, 3).activations, full,
                       1e-9 * full, "%s %d", rt, cases[i].zero);
    scenario_free(sc);
  }
}

/* ZeRO needs a GPU optimizer and replicas that reduce-scatter and
 * all-gather every step: each refusal names the key and what it needs. */
Test(spec_memory, zero_refused_where_it_has_no_meaning) {
  static const struct {
    const char *runtime, *algo, *says;
  } bad[] = {{"dtfm", "ring", "worldwide: --zero 1 shards an optimizer on "
                              "the GPU, and --runtime dtfm steps it on the "
                              "host (modern or megatron step on the GPU)"},
             {"modern", "central-ps", "not central-ps"},
             {"modern", "diloco", "not diloco"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    scenario *s = support_scenario("worldwide");
    scenario_knobs k;
    scenario_knobs_init(&k);
    k.runtime = bad[i].runtime, k.zero = 1, k.dp_algo = bad[i].algo;
    err e = {0};
    cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
    spec_workload w;
    cr_expect_eq(spec_workload_resolve(s, &w, &e), ERR_CONFIG, "%s", bad[i].says);
    cr_expect(strstr(e.msg, bad[i].says), "'%s' in %s", bad[i].says, e.msg);
    scenario_free(s);
  }
}

/* The newcomer's 6.7B in 2 x 8 on sixteen A100-40GBs: stage 0 holds 16
 * layers and the embedding, 3.43 B parameters, 58.5 GB under the modern
 * runtime (and Megatron's): refused, naming the device, its site, GPU and
 * memory and the need part by part. ZeRO-1 over the 8 replicas fits it in
 * 40 GB; DT-FM's 4 B a parameter too. */
Test(spec_memory, the_newcomers_6_7b_is_refused_or_fits_40_gb) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity",
                              NEWCOMER), 1);
  cr_expect_str_eq(r.err, "geodes: newcomer-a100: device 0 (site Oregon, "
                   "A100-40GB, 40 GB) cannot hold stage 0 (16 layers): it "
                   "needs 58.5 GB = weights 6.87 + gradients 6.87 + optimizer "
                   "41.2 + activations 1.49 + reserve 2 GB under runtime "
                   "modern (GPU AdamW)\n");
  cr_expect_eq(r.out_len, 0u, "%s", r.out);
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--runtime megatron", NEWCOMER), 1);
  cr_expect(strstr(r.err, "A100-40GB, 40 GB) cannot hold stage 0") &&
            strstr(r.err, "under runtime megatron (GPU Adam)"), "%s", r.err);
  const char *fits[] = {"--zero 1", "--zero 2", "--runtime dtfm"};
  for (size_t i = 0; i < 3; i++) {
    cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity %s",
                                NEWCOMER, fits[i]), 0, "%s: %s", fits[i], r.err);
    scenario *s = support_scenario(NEWCOMER);
    scenario_knobs k;
    scenario_knobs_init(&k);
    if (i < 2) k.zero = (long)i + 1;
    else k.runtime = "dtfm";
    cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    for (int st = 0; st < 2; st++)
      cr_expect_leq(spec_stage_memory_bytes(&w, st), 40e9, "%s", fits[i]);
    scenario_free(s);
  }
  support_run_clear(&r);
}

/* A site's gpu_memory_gb is the memory every check reads: the 80 GB A100
 * told it holds 40 refuses as the A100-40GB does, naming its own GPU. */
Test(spec_memory, a_sites_gpu_memory_gb_is_the_memory_checked) {
  const char *path = support_write_file(
      support_path("g.json"),
      "{\"name\": \"g\", \"sites\": [{\"name\": \"Oregon\", \"devices\": 8, "
      "\"gpu\": \"A100\", \"gpu_memory_gb\": 40}, {\"name\": \"Virginia\", "
      "\"devices\": 8, \"gpu\": \"A100\", \"gpu_memory_gb\": 40}],\n"
      "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 5},\n"
      "\"workload\": {\"model\": \"gpt3-6.7b\", \"batch\": 256, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 8, "
      "\"micro_batches_per_pass\": 32, \"schedule\": \"1f1b\", "
      "\"dp_algo\": \"ring\"}}\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity", path),
               1, "%s", r.out);
  cr_expect(strstr(r.err, "device 0 (site Oregon, A100, 40 GB) cannot hold "
                   "stage 0 (16 layers): it needs 58.5 GB"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--zero 1", path), 0, "%s", r.err);
  scenario *s = support_scenario(path);
  const spec_gpu *g = spec_gpu_find("A100");
  cr_expect_eq(spec_device_memory_bytes(s, 3, g), 40e9);
  cr_expect_eq(g->memory_bytes, 80e9);
  scenario_free(s);
  support_run_clear(&r);
}

/* The shape search keeps to what fits: on the newcomer's A100-40GBs
 * under the modern runtime (the predictor deciding) every stage of its
 * best fits its devices, and it counts the placements that do not. */
Test(spec_memory, the_shape_search_keeps_to_40_gb) {
  scenario *s = support_scenario(NEWCOMER);
  shape_opts o;
  shape_opts_default(&o);
  shape_result res;
  err e = {0};
  cr_assert_eq(shape_search(s, &o, &res, &e), ERR_OK, "%s", e.msg);
  cr_expect_gt(res.pruned_memory, 0);
  const shape_config *c = &res.all[res.best];
  scenario *v = shape_view(s, c->keep, c->ndev, c->stages, c->replicas,
                           c->batch, c->micro_batch, c->dp_algo, c->layers);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(v, &w, &e), ERR_OK, "%s", e.msg);
  for (int st = 0; st < c->stages; st++)
    cr_expect_leq(spec_stage_memory_bytes(&w, st), 40e9, "stage %d of %d x %d",
                  st, c->stages, c->replicas);
  cr_expect_gt(c->stages, 1, "16 B/param of 6.7 B need a pipeline");
  scenario_subset_free(v);
  shape_result_free(&res);
  scenario_free(s);
}
