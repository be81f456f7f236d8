/* Tests of models/roofline: a layer timed by hand against the module, the
 * FLOPs of its operations against spec.c's counts, a property of the
 * GDDR cards, and the V100 rows the efficiencies were fitted on. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/roofline.h"
#include "models/spec.h"
#include "tests/support.h"
#include "traces/model_hf.h"

/* The sum of one class's FLOPs over a pass. */
static double gemm_flops(const roofline_op *ops, int n) {
  double f = 0;
  for (int i = 0; i < n; i++)
    if (ops[i].cls == ROOFLINE_GEMM) f += ops[i].flops;
  return f;
}

/* GPT-3 XL on a V100, m = 1, s = 2048, h = 2048, a = 16, f = 4h = 8192,
 * fp16 (T = 2048 tokens, b = 2), at e = 0.78 for both classes: the tensor
 * roof is 125e12 x 0.78 = 97.5 TFLOP/s, the memory roof 900e9 x 0.78 =
 * 702 GB/s, the ridge 139 FLOP/byte.
 * - q, k, v, out: 2 T h^2 = 17.18 GFLOP each, 2 (2 T h + h^2) = 25.2 MB
 *   (683 FLOP/B: compute-bound); fc_1, fc_2: 2 T h f = 68.72 GFLOP each,
 *   2 (T h + h f + T f) = 75.5 MB (910 FLOP/B). Together 2 T (4 h^2 +
 *   2 h f) = 206.16 GFLOP: 2.1144 ms.
 * - QK^T and PV: 2 T s h = 17.18 GFLOP, 2 (a s^2 + 2 T h) = 151.0 MB
 *   each (114 FLOP/B, under the ridge: memory-bound), 0.21509 ms each.
 * - memory: norm_1, merge_heads, norm_2 2 T h b = 16.78 MB each; scale
 *   and softmax 2 a s^2 b = 268.4 MB each; the residual adds 3 T h b =
 *   25.17 MB each; relu 2 T f b = 67.1 MB: 704.6 MB, 1.00376 ms.
 * Forward: 2.1144 + 0.43018 + 1.00376 = 3.5483 ms. */
Test(roofline, gpt3_xl_layer_on_a_v100_by_hand) {
  const spec_model *xl = spec_model_find("gpt3-xl");
  const spec_gpu *v100 = spec_gpu_find("V100");
  roofline_eff e = {.gemm = 0.78, .mem = 0.78};
  roofline_op ops[ROOFLINE_MAX_OPS];
  int n = roofline_layer_ops(xl, 1, ROOFLINE_FWD, ops);
  double T = 2048, h = 2048, f = 8192, s = 2048, a = 16, b = 2;
  double gemm_s = 2 * T * (4 * h * h + 2 * h * f) / (125e12 * 0.78);
  double attn_s = b * (a * s * s + 2 * T * h) / (900e9 * 0.78);
  double mem_bytes = b * (3 * 2 * T * h + 2 * 2 * a * s * s + 2 * 3 * T * h +
                          2 * T * f);
  double mem_s = mem_bytes / (900e9 * 0.78);
  cr_assert_float_eq(gemm_s, 2.1144e-3, 1e-7);
  cr_assert_float_eq(attn_s, 0.21509e-3, 1e-8);
  cr_assert_float_eq(mem_s, 1.00376e-3, 1e-8);
  double want = gemm_s + 2 * attn_s + mem_s;
  cr_assert_float_eq(roofline_ops_s(v100, ops, n, &e), want, 1e-12 * want);
  cr_assert_float_eq(roofline_layer_s(v100, xl, 1, ROOFLINE_FWD, &e), want,
                     1e-12 * want);
  /* two operations by name: q compute-bound, scores memory-bound */
  for (int i = 0; i < n; i++) {
    if (!strcmp(ops[i].name, "q")) {
      cr_assert_eq(ops[i].flops, 2 * T * h * h);
      cr_assert_eq(ops[i].bytes, b * (2 * T * h + h * h));
      cr_assert_float_eq(roofline_op_s(v100, &ops[i], &e),
                         ops[i].flops / (125e12 * 0.78), 1e-18);
    }
    if (!strcmp(ops[i].name, "scores"))
      cr_assert_float_eq(roofline_op_s(v100, &ops[i], &e), attn_s, 1e-18);
  }
}

/* The GEMMs' FLOPs are spec.c's: forward m F_layer and m F_head; backward
 * twice that, but for Llama's fused attention, which recomputes its scores
 * (2.5x its 4 m s^2 h). */
Test(roofline, flops_are_spec_counts) {
  const char *names[] = {"gpt3-small", "gpt3-xl", "gpt3-13b", "intellect-1"};
  roofline_op ops[ROOFLINE_MAX_OPS];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const spec_model *m = spec_model_find(names[i]);
    for (int mb = 1; mb <= 4; mb *= 2) {
      double layer = mb * spec_layer_flops(m), head = mb * spec_head_flops(m);
      double attn = 4.0 * mb * m->seq * (double)m->seq * m->hidden;
      double extra = m->attention == MODEL_ATTENTION_FLASH ? 0.5 * attn : 0;
      int n = roofline_layer_ops(m, mb, ROOFLINE_FWD, ops);
      cr_assert_leq(n, ROOFLINE_MAX_OPS);
      cr_assert_float_eq(gemm_flops(ops, n), layer, 1e-9 * layer, "%s", names[i]);
      n = roofline_layer_ops(m, mb, ROOFLINE_BWD, ops);
      cr_assert_float_eq(gemm_flops(ops, n), 2 * layer + extra, 1e-9 * layer,
                         "%s", names[i]);
      n = roofline_head_ops(m, mb, ROOFLINE_FWD, ops);
      cr_assert_float_eq(gemm_flops(ops, n), head, 1e-9 * head);
      n = roofline_head_ops(m, mb, ROOFLINE_BWD, ops);
      cr_assert_float_eq(gemm_flops(ops, n), 2 * head, 1e-9 * head);
      for (int k = 0; k < n; k++) cr_assert_gt(ops[k].bytes, 0, "%s", ops[k].name);
    }
  }
}

/* A card with less memory bandwidth per tensor FLOP reaches a lower
 * fraction of its peak on the same layer: the GDDR6 A40 and L4 against
 * HBM cards with more bytes per FLOP; and one GPU with its bandwidth
 * halved is slower, but by less than twice (the GEMMs do not move). */
Test(roofline, gddr_cards_reach_a_lower_fraction_of_peak) {
  const char *pairs[][2] = {{"A40", "A100"}, {"A40", "V100"}, {"L4", "V100"},
                            {"L4", "H100"}, {"L4", "A100"}};
  const spec_model *names[] = {spec_model_find("gpt3-xl"),
                               spec_model_find("intellect-1")};
  for (size_t k = 0; k < 2; k++) {
    spec_workload w = {.model = names[k], .micro_batch = 1, .recompute = true,
                       .stages = 1, .layers = 1};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
      const spec_gpu *g = spec_gpu_find(pairs[i][0]),
                     *hbm = spec_gpu_find(pairs[i][1]);
      cr_assert_lt(g->mem_bw_bytes_s / g->peak_flops,
                   hbm->mem_bw_bytes_s / hbm->peak_flops);
      cr_assert_lt(roofline_layer_fraction(g, &w),
                   roofline_layer_fraction(hbm, &w), "%s vs %s",
                   pairs[i][0], pairs[i][1]);
    }
  }
  spec_gpu half = *spec_gpu_find("V100");
  half.mem_bw_bytes_s /= 2;
  const spec_model *xl = spec_model_find("gpt3-xl");
  double full = roofline_layer_s(spec_gpu_find("V100"), xl, 1, ROOFLINE_FWD,
                                 &roofline_fitted);
  double slow = roofline_layer_s(&half, xl, 1, ROOFLINE_FWD, &roofline_fitted);
  cr_assert(slow > full && slow < 2 * full, "%g vs %g", slow, full);
}

/* A site's compute_efficiency is a factor on the roofline's speed
 * (spec.c): the built-in p3.2xlarge sites carry 0.43 / 0.5656
 * (gen_builtins.py), so that their V100 reaches the fitted 0.43 of its
 * peak at DT-FM's shape, where the roofline gives it 0.5656: to 1e-4. */
Test(roofline, p3_2xlarge_sites_reach_the_fitted_fraction) {
  spec_workload w = {.model = spec_model_find("gpt3-xl"), .micro_batch = 1,
                     .recompute = true, .stages = 1, .layers = 1};
  const spec_gpu *v100 = spec_gpu_find("V100");
  err e = {0};
  scenario *s = scenario_load("worldwide", &e);
  cr_assert_not_null(s, "%s", e.msg);
  const scenario_site *site = &s->sites[0];
  cr_assert_gt(site->compute_efficiency, 0, "a p3.2xlarge site");
  double fraction = roofline_layer_fraction(v100, &w) /
                    spec_site_compute_factor(site, v100);
  cr_assert_float_eq(fraction, 0.43, 1e-4, "%.6f", fraction);
  scenario_free(s);
}

/* The rows the efficiencies were fitted on stay reproduced: DT-FM on
 * datacenter-physical, its identity placement, 64 micro-batches a pass,
 * measured 10.14 / 17.69 / 33.05 s at batch 1024 / 2048 / 4096
 * (calibration.csv); the fit left -2.1 / +0.7 / +1.6 %. */
Test(roofline, v100_rows_stay_calibrated, .timeout = 120) {
  const int batch[] = {1024, 2048, 4096};
  const double measured[] = {10.14, 17.69, 33.05};
  for (int i = 0; i < 3; i++) {
    json_t *o = support_geodes_json("simulate datacenter-physical --method "
                                    "dtfm-identity --network netem --batch %d "
                                    "--micro-batches-per-pass 64 --json",
                                    batch[i]);
    double t = json_number_value(json_object_get(o, "iteration_s"));
    cr_assert(fabs(t / measured[i] - 1) < 0.025, "batch %d: %.3f vs %.2f",
              batch[i], t, measured[i]);
    json_decref(o);
  }
}

/* A layer from its dimensions (issue 34): grouped-query attention's K and
 * V projections are h x kv wide, the gated MLP's three matrices are one
 * h x 2f GEMM and one f x h, and the forward GEMMs sum to spec.c's count
 * for every published config; an encoder (BERT: no causal mask, the norm
 * after the residual) costs what the same dimensions cost as a decoder;
 * eager attention does the same FLOPs as flash but moves its scores. */
Test(roofline, layers_from_their_dimensions) {
  const char *files[] = {"llama-2-7b.json", "mistral-7b.json", "gpt2-xl.json",
                         "bert-large-uncased.json"};
  roofline_op ops[ROOFLINE_MAX_OPS];
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[512];
    snprintf(path, sizeof path, GEODES_FIXTURES "/hf/%s", files[i]);
    model_dims *m = NULL;
    err e = {0};
    cr_assert_eq(model_hf_load(path, &m, &e), ERR_OK, "%s", e.msg);
    double T = 2.0 * m->seq, h = m->hidden, f = m->ffn;
    double kv = h * m->kv_heads / m->heads;
    int n = roofline_layer_ops(m, 2, ROOFLINE_FWD, ops);
    cr_expect_float_eq(gemm_flops(ops, n), 2 * spec_layer_flops(m),
                       1e-9 * spec_layer_flops(m), "%s", files[i]);
    bool gated = m->mlp == MODEL_MLP_GATED;
    for (int k = 0; k < n; k++) {
      if (!strcmp(ops[k].name, "qkv"))
        cr_expect_eq(ops[k].flops, 2 * T * h * (h + 2 * kv), "%s", files[i]);
      if (!strcmp(ops[k].name, "gate_up"))
        cr_expect(gated && ops[k].flops == 2 * T * h * 2 * f, "%s", files[i]);
      if (!strcmp(ops[k].name, "fc_1"))
        cr_expect(!gated && ops[k].flops == 2 * T * h * f, "%s", files[i]);
    }
    n = roofline_layer_ops(m, 2, ROOFLINE_BWD, ops);
    double attn = 4.0 * 2 * m->seq * (double)m->seq * h;
    cr_expect_float_eq(gemm_flops(ops, n),
                       2 * 2 * spec_layer_flops(m) + 0.5 * attn,
                       1e-9 * spec_layer_flops(m), "%s", files[i]);
    /* the same dimensions as a decoder, and eagerly */
    model_dims dec = *m, eager = *m;
    dec.encoder = false;
    eager.attention = MODEL_ATTENTION_EAGER;
    const spec_gpu *a100 = spec_gpu_find("A100");
    for (int p = ROOFLINE_FWD; p <= ROOFLINE_BWD; p++) {
      double t = roofline_layer_s(a100, m, 1, p, &roofline_fitted);
      cr_expect_eq(roofline_layer_s(a100, &dec, 1, p, &roofline_fitted), t);
      cr_expect_gt(roofline_layer_s(a100, &eager, 1, p, &roofline_fitted), t,
                   "%s: eager attention writes its scores", files[i]);
    }
    int ne = roofline_layer_ops(&eager, 1, ROOFLINE_FWD, ops);
    cr_expect_float_eq(gemm_flops(ops, ne), spec_layer_flops(m),
                       1e-9 * spec_layer_flops(m));
    model_free(m);
  }
}
