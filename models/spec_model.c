/* spec_model: the models' table (models/spec.h's spec_model_* and the
 * counts of one model: parameters and FLOPs by the dimensions), beside
 * spec.c's GPU table and workload counts.
 * Invariant: the table is static and read-only; every count is a pure
 * function of the model's dimensions (traces/model.h), in doubles, exact
 * for every integer count below 2^53. */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "models/spec.h"

/* GPT-3 shapes from Brown et al. 2020, table 2.1, except: GPT-3 XL runs with
 * 16 heads as DT-FM ran it (the paper lists 24; the head count changes no
 * FLOP or byte count used here), and 13B uses h = 5120 (= 40 heads x 128;
 * the table's 5140 is inconsistent with its own d_head). Their block is
 * spec_model's zero one, DT-FM's GPT code of 2022: eager attention, and
 * an LM head of its own on the last stage (untied: GPT-3 ties it, so its
 * published counts are V h lower than spec_model_params says). */
static const spec_model models[] = {
    {.name = "gpt3-small", .layers = 12, .hidden = 768, .heads = 12,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Small, 125M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-medium", .layers = 24, .hidden = 1024, .heads = 16,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Medium, 350M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-large", .layers = 24, .hidden = 1536, .heads = 16,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Large, 760M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-xl", .layers = 24, .hidden = 2048, .heads = 16, .seq = 2048,
     .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 XL (Brown et al. 2020), 16 heads as in DT-FM's runs"},
    {.name = "gpt3-2.7b", .layers = 32, .hidden = 2560, .heads = 32,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 2.7B (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-6.7b", .layers = 32, .hidden = 4096, .heads = 32,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 6.7B (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-13b", .layers = 40, .hidden = 5120, .heads = 40, .seq = 2048,
     .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 13B (Brown et al. 2020, table 2.1; h = 40 x 128)"},
    /* Llama-architecture models, after GPT's (issue 12). */
    {.name = "intellect-1", .layers = 42, .hidden = 4096, .heads = 32,
     .seq = 8192, .vocab = 128256, .value_bytes = 2,
     .source = "INTELLECT-1, 10B (PrimeIntellect-ai/prime, llama3_configs['10B']: "
               "dim 4096, 42 layers, 32 heads, 8 kv heads, ffn_dim_multiplier 1.3, "
               "multiple_of 1024 -> 14336; seq_length 8192 in configs/10B; Llama-3 "
               "vocabulary 128256)",
     .ffn = 14336, .kv_heads = 8, .mlp = MODEL_MLP_GATED,
     .positions = MODEL_POSITIONS_ROTARY, .norm = MODEL_NORM_RMSNORM,
     .bias = MODEL_BIAS_NONE, .attention = MODEL_ATTENTION_FLASH},
};

#define NMODELS ((int)(sizeof models / sizeof *models))

const spec_model *spec_model_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NMODELS; i++)
    if (strcasecmp(name, models[i].name) == 0) return &models[i];
  return NULL;
}

const spec_model *spec_models(int *n) {
  *n = NMODELS;
  return models;
}

void spec_model_list(char *buf, size_t size) {
  buf[0] = '\0';
  for (int i = 0; i < NMODELS; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
             models[i].name);
}

const spec_model *spec_scenario_model(const scenario *s) {
  const scenario_workload *w = &s->workload;
  return w->model_dims ? w->model_dims : spec_model_find(w->model);
}

/* h, ffn and the key/value width h kv_heads / heads of m, its defaults
 * resolved (ffn 0: 4h; kv_heads 0: heads). */
typedef struct widths {
  double h, ffn, kv;
} widths;

static widths widths_of(const spec_model *m) {
  double h = m->hidden;
  return (widths){.h = h, .ffn = m->ffn > 0 ? m->ffn : 4.0 * h,
                  .kv = m->kv_heads > 0 ? h * m->kv_heads / m->heads : h};
}

/* The MLP's matrices: two, or three with a gate. */
static double mlp_matrices(const spec_model *m) {
  switch (m->mlp) {
    case MODEL_MLP_GELU: return 2.0;
    case MODEL_MLP_GATED: return 3.0;
  }
  assert(!"unknown MLP");
  return 2.0;
}

/* The parameters of one norm: a weight, and a bias in LayerNorm. */
static double norm_params(const spec_model *m) {
  switch (m->norm) {
    case MODEL_NORM_LAYERNORM: return 2.0 * m->hidden;
    case MODEL_NORM_RMSNORM: return m->hidden;
  }
  assert(!"unknown norm");
  return 2.0 * m->hidden;
}

double spec_layer_matrix_params(const spec_model *m) {
  widths x = widths_of(m);
  return 2.0 * x.h * x.h + 2.0 * x.h * x.kv + mlp_matrices(m) * x.h * x.ffn;
}

double spec_layer_params(const spec_model *m) {
  widths x = widths_of(m);
  double bias = 0;
  if (model_bias_qkv(m->bias)) bias += x.h + 2.0 * x.kv;
  if (model_bias_out(m->bias)) bias += x.h;
  if (model_bias_mlp(m->bias)) bias += (mlp_matrices(m) - 1) * x.ffn + x.h;
  return spec_layer_matrix_params(m) + bias + 2.0 * norm_params(m);
}

double spec_embedding_params(const spec_model *m) {
  double pos = 0; /* learned position embeddings */
  switch (m->positions) {
    case MODEL_POSITIONS_LEARNED: pos = m->seq; break;
    case MODEL_POSITIONS_ROTARY: pos = 0; break; /* none */
  }
  double p = ((double)m->vocab + pos + m->type_vocab) * m->hidden;
  return m->encoder ? p + norm_params(m) : p;
}

double spec_head_params(const spec_model *m) {
  double h = m->hidden;
  double out = m->encoder ? h * h + h : norm_params(m); /* pooler, or norm */
  return m->tied_embeddings ? out : out + h * m->vocab;
}

double spec_model_params(const spec_model *m) {
  return m->layers * spec_layer_params(m) + spec_embedding_params(m) +
         spec_head_params(m);
}

double spec_stage_head_params(const spec_workload *w) {
  const spec_model *m = w->model;
  double copy = m->tied_embeddings && w->stages > 1
                    ? (double)m->hidden * m->vocab : 0;
  return spec_head_params(m) + copy;
}
double spec_layer_flops(const spec_model *m) {
  double s = m->seq, h = m->hidden;
  return 2.0 * s * spec_layer_matrix_params(m) + 4.0 * s * s * h;
}

double spec_head_flops(const spec_model *m) {
  return 2.0 * m->seq * m->hidden * m->vocab;
}

double spec_token_flops(const spec_model *m) {
  return (m->layers * spec_layer_flops(m) + spec_head_flops(m)) / m->seq;
}

double spec_token_matrix_params(const spec_model *m) {
  return m->layers * spec_layer_matrix_params(m) +
         (double)m->hidden * m->vocab;
}

double spec_token_flops_recompute(const spec_model *m) {
  return (4.0 * m->layers * spec_layer_flops(m) + 3.0 * spec_head_flops(m)) /
         m->seq;
}
