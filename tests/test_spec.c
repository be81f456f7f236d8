/* test_spec: shapes, counts and resolution of workload and GPU names, the
 * memory check, and the V100 efficiency fit repeated from its data. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "tests/support.h"
#include "traces/model_hf.h"
#include "traces/scenario.h"

static void set(char **field, const char *v) {
  free(*field);
  *field = mem_strdup(v);
}

Test(spec, names) {
  cr_assert_eq(spec_model_find("GPT3-XL"), spec_model_find("gpt3-xl"));
  cr_assert_not_null(spec_model_find("gpt3-13b"));
  cr_assert_null(spec_model_find("gpt4"));
  cr_assert_null(spec_model_find(NULL));
  cr_assert_str_eq(spec_gpu_find("rtx 3090")->name, "RTX3090");
  cr_assert_str_eq(spec_gpu_find("v100")->name, "V100");
  cr_assert_null(spec_gpu_find("K80"));
  int n;
  const spec_gpu *g = spec_gpus(&n);
  cr_assert_geq(n, 6);
  for (int i = 0; i < n; i++) {
    cr_assert(g[i].peak_flops > 0 && g[i].memory_bytes > 0 &&
              g[i].mem_bw_bytes_s > 0 && g[i].source[0]);
  }
  /* the datasheet rows, dense fp16 tensor rates with fp32 accumulate
   * (GeForce: half the fp16-accumulate rate) and memory bandwidths */
  const struct { const char *name; double peak, mem, bw; } sheet[] = {
      {"V100", 125e12, 16e9, 900e9},        {"A100", 312e12, 80e9, 2039e9},
      {"H100", 989e12, 80e9, 3350e9},       {"RTX3090", 71e12, 24e9, 936e9},
      {"RTX4090", 165.2e12, 24e9, 1008e9},  {"T4", 65e12, 16e9, 320e9},
      {"A10G", 70e12, 24e9, 600e9},         {"A40", 149.7e12, 48e9, 696e9},
      {"L4", 121e12, 24e9, 300e9},          {"L40S", 362.05e12, 48e9, 864e9},
      {"H200", 989e12, 141e9, 4800e9},      {"MI250", 362.1e12, 128e9, 3276.8e9},
      {"MI300X", 1307.4e12, 192e9, 5300e9},
      /* the memory variants users rent, each its datasheet's row */
      {"V100-16GB", 125e12, 16e9, 900e9},   {"V100-32GB", 125e12, 32e9, 900e9},
      {"A100-40GB", 312e12, 40e9, 1555e9},  {"A100-80GB", 312e12, 80e9, 2039e9},
      {"H100-SXM", 989e12, 80e9, 3350e9},   {"H100-PCIe", 756e12, 80e9, 2000e9},
      {"H100-NVL", 835.5e12, 94e9, 3900e9}};
  for (size_t i = 0; i < sizeof sheet / sizeof *sheet; i++) {
    const spec_gpu *x = spec_gpu_find(sheet[i].name);
    cr_assert_not_null(x, "%s", sheet[i].name);
    cr_assert_eq(x->peak_flops, sheet[i].peak, "%s", sheet[i].name);
    cr_assert_eq(x->memory_bytes, sheet[i].mem, "%s", sheet[i].name);
    cr_assert_eq(x->mem_bw_bytes_s, sheet[i].bw, "%s", sheet[i].name);
  }
  cr_assert_eq(spec_gpu_find("h200")->peak_flops,
               spec_gpu_find("H100")->peak_flops);
  cr_assert_str_eq(spec_gpu_find("l4")->name, "L4"); /* not L40S */
  /* the names keep what they meant: A100 the 80 GB part, H100 the SXM, V100
   * the p3's 16 GB; a variant is found however it is spaced */
  cr_assert_eq(spec_gpu_find("A100")->memory_bytes, 80e9);
  cr_assert_str_eq(spec_gpu_find("a100 40gb")->name, "A100-40GB");
  cr_assert_str_eq(spec_gpu_find("H100_NVL")->name, "H100-NVL");
  const spec_model *m = spec_models(&n);
  cr_assert_eq(n, 8);
  const spec_model *xl = spec_model_find("gpt3-xl");
  cr_assert_eq(xl->hidden, 2048);
  cr_assert_eq(xl->heads, 16);
  /* GPT-3's small shapes: 12 x 768, 24 x 1024, 24 x 1536; their 12 h^2 L
   * parameters (plus embeddings) round to 125M, 350M and 760M */
  const struct { const char *name; double params; } small[] = {
      {"gpt3-small", 125e6}, {"gpt3-medium", 350e6}, {"gpt3-large", 760e6}};
  for (int i = 0; i < 3; i++) {
    const spec_model *x = spec_model_find(small[i].name);
    cr_assert_not_null(x, "%s", small[i].name);
    double p = x->layers * spec_layer_params(x) +
               ((double)x->vocab + x->seq) * x->hidden;
    cr_assert(fabs(p / small[i].params - 1) < 0.05, "%s: %.0f", small[i].name,
              p);
  }
  (void)m;
}

Test(spec, counts_closed_form) {
  const spec_model *xl = spec_model_find("gpt3-xl");
  cr_assert_eq(spec_layer_params(xl), 12.0 * 2048 * 2048 + 13.0 * 2048);
  cr_assert_eq(spec_layer_flops(xl), 240518168576.0);  /* 24sh^2 + 4s^2h */
  spec_workload w = {.model = xl, .layers = 26, .batch = 1024, .micro_batch = 1,
                     .stages = 8, .replicas = 8, .micro_batches_per_pass = 64,
                     .passes = 2, .recompute = true};
  cr_assert_eq(spec_activation_bytes(&w), 8.0 * 1024 * 1024);  /* 8 MiB */
  int sum = 0;
  for (int s = 0; s < 8; s++) {
    int l = spec_stage_layers(&w, s);
    cr_assert_eq(l, s < 2 ? 4 : 3);
    sum += l;
  }
  cr_assert_eq(sum, 26);
  /* Backward = 2x forward, + 1 forward with recomputation. */
  cr_assert_eq(spec_stage_bwd_flops(&w, 3), 3 * spec_stage_fwd_flops(&w, 3));
  w.recompute = false;
  cr_assert_eq(spec_stage_bwd_flops(&w, 3), 2 * spec_stage_fwd_flops(&w, 3));
  cr_assert_eq(spec_stage_fwd_flops(&w, 3), 3 * 240518168576.0);
  /* Embeddings on the first stage, LM head and final norm on the last. */
  double mid = spec_stage_params(&w, 4);
  cr_assert_eq(spec_stage_params(&w, 0) - 4.0 / 3.0 * mid, (50257.0 + 2048) * 2048);
  cr_assert_eq(spec_stage_params(&w, 7) - mid, 2048.0 * 50257 + 2 * 2048);
  cr_assert_eq(spec_stage_gradient_bytes(&w, 4), 2 * mid);
  /* Section 3 sizes: c_pp = (B/D_dp) s h 2 bytes in GB. */
  cr_assert_float_eq(spec_default_activation_gb(&w), 128.0 * 2048 * 2048 * 2 / 1e9, 1e-12);
  cr_assert_float_eq(spec_default_gradient_gb(&w), spec_stage_gradient_bytes(&w, 0) / 1e9, 1e-12);
}

/* INTELLECT-1's Llama-3 10B by hand from its config (dim 4096, 42 layers,
 * 32 heads, 8 kv heads, FFN 14336, vocabulary 128256, untied head, RMSNorm,
 * rotary positions): 218,112,000 parameters a layer, 10,211,381,248 in all
 * (the "10B" of its model card). */
Test(spec, llama_shape_by_hand) {
  const spec_model *m = spec_model_find("intellect-1");
  cr_assert_not_null(m);
  double h = 4096, kv = 1024, ffn = 14336, s = 8192;
  double matrices = 2 * h * h + 2 * h * kv + 3 * h * ffn;
  cr_assert_eq(spec_layer_params(m), 218112000.0);
  cr_assert_eq(spec_layer_params(m), matrices + 2 * h);
  cr_assert_eq(spec_embedding_params(m), 128256 * h);
  cr_assert_eq(spec_head_params(m), h + 128256 * h);
  spec_workload w = {.model = m, .layers = 42, .batch = 128, .micro_batch = 8,
                     .stages = 1, .replicas = 1, .micro_batches_per_pass = 16,
                     .passes = 1, .recompute = true};
  cr_assert_eq(spec_stage_params(&w, 0), 10211381248.0);
  cr_assert_eq(spec_layer_flops(m), 2 * s * matrices + 4 * s * s * h);
  /* GPT's formula is the same rule: 12 h^2 of matrices */
  const spec_model *xl = spec_model_find("gpt3-xl");
  cr_assert_eq(spec_embedding_params(xl), (50257.0 + 2048) * 2048);
  cr_assert_eq(spec_head_params(xl), 2 * 2048 + 2048.0 * 50257);
  /* one HGX-H100 node is eight H100 */
  const spec_gpu *node = spec_gpu_find("hgx h100"), *one = spec_gpu_find("H100");
  cr_assert_not_null(node);
  cr_assert_eq(node->peak_flops, 8 * one->peak_flops);
  cr_assert_eq(node->memory_bytes, 8 * one->memory_bytes);
  cr_assert_eq(node->mem_bw_bytes_s, 8 * one->mem_bw_bytes_s);
}

Test(spec, resolve_builtin) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  err e;
  err_clear(&e);
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(w.passes, 2);
  cr_assert_eq(w.micro_batches_per_pass, 64);
  cr_assert_eq(w.dp_algo, SPEC_CENTRAL_PS);
  cr_assert_eq(w.schedule, SPEC_GPIPE);
  cr_assert_str_eq(spec_dp_algo_name(w.dp_algo), "central-ps");
  /* K = 0: no accumulation, K = B / (D_dp m). */
  s->workload.micro_batches_per_pass = 0;
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK);
  cr_assert_eq(w.micro_batches_per_pass, 128);
  cr_assert_eq(w.passes, 1);
  scenario_free(s);
}

/* Resolution failures: the code and the field named in the message. */
Test(spec, resolve_rejects) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  err e;
  struct { const char *field; int code; } cases[] = {
      {"workload.model", ERR_UNKNOWN}, {"workload.dp_algo", ERR_UNKNOWN},
      {"workload.schedule", ERR_UNKNOWN}, {"workload.stages", ERR_CONFIG},
      {"workload.batch", ERR_CONFIG}, {"workload.layers", ERR_CONFIG}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    scenario_free(s);
    s = support_scenario("worldwide");
    if (i == 0) set(&s->workload.model, "gpt-9");
    if (i == 1) set(&s->workload.dp_algo, "gossip");
    if (i == 2) set(&s->workload.schedule, "zb-h1");
    if (i == 3) s->workload.stages = 4;
    if (i == 4) s->workload.batch = 1000;
    if (i == 5) s->workload.layers = 5;
    err_clear(&e);
    cr_assert_eq(spec_workload_resolve(s, &w, &e), cases[i].code, "%s", e.msg);
    /* a file's value is cited at its line, a knob's under the name */
    const char *at = i == 0 || i == 5 ? "worldwide.json:" : "worldwide: ";
    cr_assert(strncmp(e.msg, at, strlen(at)) == 0, "%s", e.msg);
    cr_assert(strstr(e.msg, cases[i].field), "'%s' lacks %s", e.msg, cases[i].field);
  }
  set(&s->sites[3].gpu, "K80");
  const spec_gpu *gpu[64];
  err_clear(&e);
  cr_assert_eq(spec_device_gpus(s, gpu, &e), ERR_UNKNOWN);
  cr_assert(strstr(e.msg, "Tokyo") && strstr(e.msg, "K80"), "%s", e.msg);
  scenario_free(s);
}

/* D_dp m K overflowed 64 bits (UB; UBSan catches it) when m and K are both
 * near INT_MAX; the check must reject it without forming the product. */
Test(spec, resolve_rejects_overflowing_pass) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  err e;
  s->workload.micro_batch = 2147483647;
  s->workload.micro_batches_per_pass = 2147483647;
  err_clear(&e);
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_CONFIG, "%s", e.msg);
  cr_assert(strstr(e.msg, "8 x 2147483647 x 2147483647"), "%s", e.msg);
  s->workload.micro_batch = 128, s->workload.micro_batches_per_pass = 0;
  err_clear(&e);
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(w.micro_batches_per_pass, 1);
  cr_assert_eq(w.passes, 1);
  s->workload.micro_batch = 256;  /* more than B / D_dp: K would be 0 */
  err_clear(&e);
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_CONFIG, "%s", e.msg);
  scenario_free(s);
}

Test(spec, memory_check) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  const spec_gpu *gpu[64];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  alloc *a = alloc_identity(8, 8);
  err e;
  err_clear(&e);
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_OK, "%s", e.msg);
  /* Without recomputation GPipe keeps 64 micro-batches of full
   * activations: about 92 GB per 3-layer stage. */
  w.recompute = false;
  cr_assert_gt(spec_stage_memory_bytes(&w, 3), 90e9);
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_MEMORY);
  cr_assert(strstr(e.msg, "stage 0") && strstr(e.msg, "V100"), "%s", e.msg);
  cr_assert(strstr(e.msg, "under runtime dtfm (host SGD)"), "%s", e.msg);
  /* 13B in 8 stages under Megatron: 16 bytes per parameter alone exceed a
   * V100's 16 GB but fit an A100's 80 GB; DT-FM keeps 4 on the device
   * (15.2 GB with its activations: with the 2 GB reserve, a 32 GB V100) */
  w.recompute = true;
  w.model = spec_model_find("gpt3-13b");
  w.layers = 40;
  w.runtime = SPEC_RUNTIME_MEGATRON, w.schedule = SPEC_1F1B;
  err_clear(&e);
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_MEMORY);
  w.runtime = SPEC_RUNTIME_DTFM, w.schedule = SPEC_GPIPE;
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, NULL), ERR_MEMORY);
  for (int d = 0; d < 64; d++) gpu[d] = spec_gpu_find("V100-32GB");
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, NULL), ERR_OK);
  w.runtime = SPEC_RUNTIME_MEGATRON, w.schedule = SPEC_1F1B;
  for (int d = 0; d < 64; d++) gpu[d] = spec_gpu_find("A100");
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, NULL), ERR_OK);
  alloc_free(a);
  scenario_free(s);
}

/* The last stage also computes the LM head, 2 s h V a sequence forward,
 * twice that backward and never recomputed; the others only their layers.
 * A site's compute_efficiency is a factor on its GPUs' efficiency. */
Test(spec, head_flops_and_site_efficiency) {
  scenario *s = support_scenario(GEODES_FIXTURES "/models/single.json");
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  const spec_model *m = w.model;
  double head = 2.0 * m->seq * m->hidden * m->vocab;
  cr_assert_float_eq(spec_head_flops(m), head, 1);
  double layers = spec_stage_layers(&w, 7) * spec_layer_flops(m);
  cr_assert_float_eq(spec_stage_fwd_flops(&w, 7), layers + head, 1);
  cr_assert_float_eq(spec_stage_bwd_flops(&w, 7), 3 * layers + 2 * head, 1);
  cr_assert_float_eq(spec_stage_fwd_flops(&w, 0),
                     spec_stage_layers(&w, 0) * spec_layer_flops(m), 1);
  const spec_gpu *v100 = spec_gpu_find("V100");
  scenario_site site = {.compute_efficiency = 0};
  cr_assert_eq(spec_site_compute_factor(&site, v100), 1);
  /* a factor on the GPU's speed: half of it takes twice as long,
   * whatever the GPU */
  site.compute_efficiency = 0.5;
  cr_assert_float_eq(spec_site_compute_factor(&site, v100), 2, 1e-12);
  cr_assert_float_eq(spec_site_compute_factor(&site, spec_gpu_find("T4")), 2,
                     1e-12);
  scenario_free(s);
}

/* The memory count in closed form, and the refusal at the exact boundary:
 * a device with exactly the stage's bytes holds it, one byte less (the
 * next double below) does not, and the message carries both numbers. */
Test(spec, memory_refusal_at_the_exact_boundary) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  const spec_model *m = w.model;
  double sh = (double)m->seq * m->hidden;
  /* stage 3: 3 layers, no embedding or head; GPipe keeps 64 micro-batches
   * of each layer's input, plus one layer's working set */
  double want = 4.0 * 3 * spec_layer_params(m) + 64.0 * 3 * sh * 2 +
                sh * (34.0 + 5.0 * m->heads * m->seq / m->hidden) + 2e9;
  cr_assert_float_eq(spec_stage_memory_bytes(&w, 3), want, 1e-6 * want);
  w.runtime = SPEC_RUNTIME_MEGATRON, w.schedule = SPEC_1F1B;
  /* 1F1B: stage 3 of 8 holds 8 - 3 = 5 micro-batches; 16 bytes a parameter */
  want = 16.0 * 3 * spec_layer_params(m) + 5.0 * 3 * sh * 2 +
         sh * (34.0 + 5.0 * m->heads * m->seq / m->hidden) + 2e9;
  cr_assert_float_eq(spec_stage_memory_bytes(&w, 3), want, 1e-6 * want);
  double most = 0;
  int top = 0;
  for (int st = 0; st < 8; st++)
    if (spec_stage_memory_bytes(&w, st) > most)
      most = spec_stage_memory_bytes(&w, st), top = st;
  cr_assert_eq(top, 0, "the embeddings and 8 micro-batches in flight");
  spec_gpu exact = *spec_gpu_find("V100");
  exact.memory_bytes = most;
  spec_gpu less = exact;
  less.memory_bytes = nextafter(most, 0);
  const spec_gpu *gpu[64];
  alloc *a = alloc_identity(8, 8);
  for (int d = 0; d < 64; d++) gpu[d] = &exact;
  err e;
  err_clear(&e);
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_OK, "%s", e.msg);
  gpu[37] = &less; /* replica 4, stage 5 needs less than the most */
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_OK, "%s", e.msg);
  gpu[32] = &less; /* replica 4, stage 0: one byte short */
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_MEMORY);
  cr_assert(strstr(e.msg, "device 32 (site ") &&
            strstr(e.msg, "cannot hold stage 0 (3 layers)"), "%s", e.msg);
  gpu[32] = &exact;
  for (int d = 0; d < 64; d++) gpu[d] = &less;
  err_clear(&e);
  cr_assert_eq(spec_check_memory(&w, s, a->device, gpu, &e), ERR_MEMORY);
  cr_assert(strstr(e.msg, ", V100, ") && strstr(e.msg, " GB = weights "),
            "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
}

/* ---- models from their dimensions (issue 34) ---- */

static spec_model *hf_model(const char *file) {
  char path[512];
  snprintf(path, sizeof path, GEODES_FIXTURES "/hf/%s", file);
  model_dims *d = NULL;
  err e = {0};
  cr_assert_eq(model_hf_load(path, &d, &e), ERR_OK, "%s", e.msg);
  return d;
}

/* The published parameter counts, exactly, from the published config.json
 * of each (tests/fixtures/hf, sources in tests/fixtures/README.md):
 * - Llama-2-7B 6,738,415,616 (Touvron et al. 2023's "7B"; what
 *   LlamaForCausalLM.num_parameters() gives): 32 layers of 4 h^2 + 3 h ffn
 *   + 2 h, the embedding and the untied LM head V h each, the final norm h;
 * - Mistral-7B 7,241,732,096: the same with 8 key/value heads (k and v
 *   h x 1024) and ffn 14336;
 * - GPT-2 XL 1,557,611,200 (GPT2LMHeadModel, the "1.5B"): 48 layers of
 *   12 h^2 + 13 h, wte V h, wpe 1024 h, ln_f 2h, the head tied to wte;
 * - BERT-large 335,141,888: BertModel's count (bert-large-uncased with its
 *   pooler, the checkpoint's base model, what HF's num_parameters() gives
 *   for it, and the "340M" of Devlin et al. 2019): 24 layers of 12 h^2 +
 *   13 h, word, position and token-type embeddings and their LayerNorm, the
 *   pooler h^2 + h. BertForPreTraining's heads (the MLM transform h^2 + 3h,
 *   its decoder's bias V, NSP's 2h + 2) would add 1,084,220 more: a
 *   pre-training run's, not the published model's count. */
Test(spec, published_parameter_counts_from_their_configs) {
  struct {
    const char *file;
    double total, layer, embedding, head;
  } want[] = {
      {"llama-2-7b.json", 6738415616.0,
       4 * 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096, 32000 * 4096.0,
       4096 + 32000 * 4096.0},
      {"mistral-7b.json", 7241732096.0,
       2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336 + 2 * 4096,
       32000 * 4096.0, 4096 + 32000 * 4096.0},
      {"gpt2-xl.json", 1557611200.0, 12 * 1600.0 * 1600 + 13 * 1600,
       (50257 + 1024) * 1600.0, 2 * 1600},
      {"bert-large-uncased.json", 335141888.0, 12 * 1024.0 * 1024 + 13 * 1024,
       (30522 + 512 + 2) * 1024.0 + 2 * 1024, 1024.0 * 1024 + 1024}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    spec_model *m = hf_model(want[i].file);
    cr_expect_eq(spec_model_params(m), want[i].total, "%s: %.0f",
                 want[i].file, spec_model_params(m));
    cr_expect_eq(spec_layer_params(m), want[i].layer, "%s", want[i].file);
    cr_expect_eq(spec_embedding_params(m), want[i].embedding, "%s",
                 want[i].file);
    cr_expect_eq(spec_head_params(m), want[i].head, "%s", want[i].file);
    model_free(m);
  }
}

/* Training FLOPs per token, by hand: 6 N + 12 L h s (PaLM's appendix B,
 * Chowdhery et al. 2022, with attention over the whole sequence: geodes
 * counts no causal halving), N the parameters of the matrices a token
 * multiplies (every layer's q, k, v, output and MLP matrices, and the LM
 * head's h V, tied or not), L h s the attention's: QK^T and PV, 2 s h each
 * per token and layer forward, three times that in training. */
Test(spec, flops_per_token_are_6n_plus_attention) {
  struct {
    const char *file;
    double L, h, kv, ffn, mlp, V, s;
  } m[] = {{"llama-2-7b.json", 32, 4096, 4096, 11008, 3, 32000, 4096},
           {"mistral-7b.json", 32, 4096, 1024, 14336, 3, 32000, 32768},
           {"gpt2-xl.json", 48, 1600, 1600, 6400, 2, 50257, 1024},
           {"bert-large-uncased.json", 24, 1024, 1024, 4096, 2, 30522, 512}};
  for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
    double N = m[i].L * (2 * m[i].h * m[i].h + 2 * m[i].h * m[i].kv +
                         m[i].mlp * m[i].h * m[i].ffn) + m[i].h * m[i].V;
    double want = 6 * N + 12 * m[i].L * m[i].h * m[i].s;
    spec_model *x = hf_model(m[i].file);
    double got = 3 * spec_token_flops(x);
    cr_expect(fabs(got / want - 1) < 1e-15, "%s: %.17g, by hand %.17g",
              m[i].file, got, want);
    cr_expect(fabs(spec_token_matrix_params(x) / N - 1) < 1e-15, "%s",
              m[i].file);
    /* with recomputation: 8 N + 16 L h s of the layers, 6 h V the head's */
    double hv = m[i].h * m[i].V, layers = N - hv;
    double again = 8 * layers + 16 * m[i].L * m[i].h * m[i].s + 6 * hv;
    cr_expect(fabs(spec_token_flops_recompute(x) / again - 1) < 1e-15,
              "%s: %.17g, by hand %.17g", m[i].file,
              spec_token_flops_recompute(x), again);
    model_free(x);
  }
  /* Llama-2-7B: 46.08 GFLOP per token, 6.44 of them attention's */
  spec_model *l = hf_model("llama-2-7b.json");
  cr_expect_eq(3 * spec_token_flops(l), 46084915200.0);
  model_free(l);
}

/* The built-ins count as before (their outputs are the fixed set's): GPT-3
 * XL's 12 h^2 + 13 h per layer with learned positions and an untied head,
 * INTELLECT-1's 10,211,381,248. A tied head's matrix is counted once, but
 * a pipeline's last stage holds a copy of it (Megatron-LM's way). */
Test(spec, built_in_counts_and_the_tied_head_on_the_last_stage) {
  const spec_model *xl = spec_model_find("gpt3-xl");
  double h = 2048, V = 50257, s = 2048;
  cr_expect_eq(spec_model_params(xl), 24 * (12 * h * h + 13 * h) +
                                          (V + s) * h + 2 * h + h * V);
  cr_expect_eq(spec_model_params(spec_model_find("intellect-1")),
               10211381248.0);
  cr_expect_eq(spec_layer_matrix_params(xl), 12 * h * h);
  spec_model *g = hf_model("gpt2-xl.json");
  spec_workload w = {.model = g, .layers = 48, .stages = 1};
  cr_expect_eq(spec_stage_params(&w, 0), spec_model_params(g));
  w.stages = 2;
  cr_expect_eq(spec_stage_params(&w, 0) + spec_stage_params(&w, 1),
               spec_model_params(g) + 50257.0 * 1600);
  model_free(g);
}
