/* model_hf: see model_hf.h. What each family builds, from transformers'
 * modelling code (src/transformers/models/<family>/):
 * - gpt2: wte (V x h), wpe (n_positions x h); per block ln_1, c_attn (one
 *   h x 3h Conv1D with bias), c_proj (h x h, bias), ln_2, mlp.c_fc (h x
 *   n_inner, default 4h, bias), mlp.c_proj (bias); ln_f; lm_head tied to
 *   wte (tie_word_embeddings defaults to true).
 * - gpt_neox: embed_in; per layer input_layernorm, post_attention_layernorm
 *   (LayerNorm), query_key_value (h x 3h) and dense (h x h), biased when
 *   attention_bias (default true), dense_h_to_4h and dense_4h_to_h of
 *   intermediate_size (always biased); rotary positions; final_layer_norm;
 *   embed_out (untied by default, no bias).
 * - llama, mistral, qwen2: embed_tokens; per layer input_layernorm and
 *   post_attention_layernorm (RMSNorm, a weight), q_proj (h x heads d),
 *   k_proj and v_proj (h x kv_heads d), o_proj, gate_proj, up_proj,
 *   down_proj (intermediate_size); rotary; norm; lm_head (untied by
 *   default). Biases: llama's attention_bias (q, k, v, o) and mlp_bias;
 *   mistral none; qwen2 q, k and v only. d = head_dim when the config
 *   gives it, else h / heads.
 * - bert: word, position (max_position_embeddings) and token-type
 *   (type_vocab_size) embeddings and their LayerNorm; per layer query,
 *   key, value, attention.output.dense (biased), its LayerNorm,
 *   intermediate.dense, output.dense (biased), its LayerNorm; the pooler
 *   (h x h, bias). BertModel's count: the MLM and NSP heads of
 *   pre-training are left out (the MLM decoder is the tied embedding).
 * Invariant: nothing here guesses a dimension: a key a family needs is
 * read or refused. */
#include "traces/model_hf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/mem.h"

#define FAMILY_ENUM_(id, type, prefix) HF_##id,
typedef enum hf_family { MODEL_HF_FAMILY_MAP(FAMILY_ENUM_) } hf_family;
#undef FAMILY_ENUM_
#define FAMILY_TYPE_(id, type, prefix) type,
const char *const model_hf_types[] = {MODEL_HF_FAMILY_MAP(FAMILY_TYPE_) NULL};
#undef FAMILY_TYPE_
#define FAMILY_PREFIX_(id, type, prefix) prefix,
static const char *const prefixes[] = {MODEL_HF_FAMILY_MAP(FAMILY_PREFIX_)
                                           NULL};
#undef FAMILY_PREFIX_

const char *const model_hf_keys[] = {
    "model_type", "architectures", "_name_or_path", "n_embd", "n_layer",
    "n_head", "n_positions", "n_inner", "vocab_size", "hidden_size",
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "intermediate_size", "max_position_embeddings", "tie_word_embeddings",
    "attention_bias", "mlp_bias", "head_dim", "type_vocab_size",
    "position_embedding_type", NULL};

/* A family's keys for the dimensions (kv NULL: no grouped heads). */
typedef struct family_keys {
  const char *hidden, *layers, *heads, *kv, *ffn, *seq;
} family_keys;

static family_keys keys_of(hf_family f) {
  family_keys k = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                   NULL, "intermediate_size", "max_position_embeddings"};
  switch (f) {
    case HF_GPT2:
      return (family_keys){"n_embd", "n_layer", "n_head", NULL, "n_inner",
                           "n_positions"};
    case HF_LLAMA:
    case HF_MISTRAL:
    case HF_QWEN2: k.kv = "num_key_value_heads"; break;
    case HF_GPT_NEOX:
    case HF_BERT: break;
  }
  return k;
}

/* The file being read. */
typedef struct reader {
  jfield_doc c;
  jfield_scope top;
  const json_t *o;
  const char *family; /* its model_type, for messages */
} reader;

static bool absent(const reader *r, const char *key) {
  const json_t *v = json_object_get(r->o, key);
  return !v || json_is_null(v);
}

/* o[key], an integer in [1, hi]; def when absent or null (required when
 * def < 1). */
static int dim(const reader *r, const char *key, long long hi, int def,
               int *out) {
  if (absent(r, key)) {
    if (def >= 1) return *out = def, ERR_OK;
    return jfield_fail(&r->c, &r->top, key, ERR_MISSING, "missing: a %s "
                       "config needs it (a positive integer)", r->family);
  }
  long long x = 0;
  int rc = jfield_int(&r->c, &r->top, r->o, key, 1, hi, 1, &x);
  *out = (int)x;
  return rc;
}

static int flag(const reader *r, const char *key, bool def, bool *out) {
  if (absent(r, key)) return *out = def, ERR_OK;
  return jfield_bool(&r->c, &r->top, r->o, key, def, out);
}

/* The family from model_type, else from architectures[0]'s prefix. */
static int family_of(reader *r, hf_family *f) {
  char list[160];
  names_join(model_hf_types, ", ", " or ", list, sizeof list);
  const json_t *t = json_object_get(r->o, "model_type");
  const json_t *a = json_array_get(json_object_get(r->o, "architectures"), 0);
  if (json_is_string(t)) {
    int k = names_find(model_hf_types, json_string_value(t));
    if (k >= 0) return *f = (hf_family)k, ERR_OK;
    return jfield_fail(&r->c, &r->top, "model_type", ERR_UNKNOWN, "unknown "
                       "architecture '%s' (model_type %s)",
                       json_string_value(t), list);
  }
  if (t)
    return jfield_fail(&r->c, &r->top, "model_type", ERR_PARSE,
                       "must be a string (%s)", list);
  if (!json_is_string(a))
    return jfield_fail(&r->c, &r->top, "model_type", ERR_MISSING, "missing, "
                       "and no architectures: one of %s", list);
  const char *name = json_string_value(a);
  for (int k = 0; prefixes[k]; k++)
    if (strncmp(name, prefixes[k], strlen(prefixes[k])) == 0)
      return *f = (hf_family)k, ERR_OK;
  return jfield_fail(&r->c, &r->top, "architectures", ERR_UNKNOWN, "unknown "
                     "architecture '%s' (model_type %s)", name, list);
}

/* The block a family builds (model_hf.c's header). */
static void block_of(hf_family f, model_dims *d) {
  d->mlp = MODEL_MLP_GELU, d->positions = MODEL_POSITIONS_ROTARY;
  d->norm = MODEL_NORM_LAYERNORM, d->bias = MODEL_BIAS_ALL;
  d->attention = MODEL_ATTENTION_FLASH;
  switch (f) {
    case HF_GPT2: d->positions = MODEL_POSITIONS_LEARNED; break;
    case HF_GPT_NEOX: break;
    case HF_LLAMA:
    case HF_MISTRAL:
    case HF_QWEN2:
      d->mlp = MODEL_MLP_GATED, d->norm = MODEL_NORM_RMSNORM;
      d->bias = f == HF_QWEN2 ? MODEL_BIAS_QKV : MODEL_BIAS_NONE;
      break;
    case HF_BERT:
      d->positions = MODEL_POSITIONS_LEARNED, d->encoder = true;
      break;
  }
}

/* The biases a config switches: gpt_neox's attention_bias, llama's
 * attention_bias and mlp_bias; the tied head (tie_word_embeddings, whose
 * default is the family's config class's). */
static int switches(const reader *r, hf_family f, model_dims *d) {
  bool att = false, mlp = false, tied = false;
  int rc = ERR_OK;
  switch (f) {
    case HF_GPT_NEOX:
      rc = flag(r, "attention_bias", true, &att);
      d->bias = att ? MODEL_BIAS_ALL : MODEL_BIAS_MLP;
      break;
    case HF_LLAMA:
      if (!(rc = flag(r, "attention_bias", false, &att)))
        rc = flag(r, "mlp_bias", false, &mlp);
      d->bias = att && mlp ? MODEL_BIAS_ALL
                : att      ? MODEL_BIAS_ATTENTION
                : mlp      ? MODEL_BIAS_MLP
                           : MODEL_BIAS_NONE;
      break;
    case HF_GPT2:
    case HF_MISTRAL:
    case HF_QWEN2:
    case HF_BERT: break;
  }
  bool def = f == HF_GPT2 || f == HF_BERT; /* PretrainedConfig's true */
  if (!rc) rc = flag(r, "tie_word_embeddings", def, &tied);
  d->tied_embeddings = tied;
  return rc;
}

/* head_dim, when given, is hidden / heads (geodes's q, k, v are heads x
 * hidden / heads wide); BERT's positions are absolute. */
static int unsupported(const reader *r, const model_dims *d,
                       const family_keys *k) {
  int hd = 0, rc;
  if (!absent(r, "head_dim") &&
      (rc = dim(r, "head_dim", MODEL_MAX_DIM, 0, &hd)))
    return rc;
  if (hd && (long long)hd * d->heads != d->hidden)
    return jfield_fail(&r->c, &r->top, "head_dim", ERR_CONFIG, "%d x %s %d "
                       "is not %s %d: heads narrower or wider than hidden / "
                       "heads are not modelled", hd, k->heads, d->heads,
                       k->hidden, d->hidden);
  const json_t *p = json_object_get(r->o, "position_embedding_type");
  if (p && !(json_is_string(p) &&
             strcmp(json_string_value(p), "absolute") == 0))
    return jfield_fail(&r->c, &r->top, "position_embedding_type", ERR_CONFIG,
                       "only \"absolute\" is modelled (relative_key adds "
                       "distance embeddings per layer)");
  return ERR_OK;
}

/* The dimensions by the family's keys, checked against each other. */
static int dims_of(const reader *r, hf_family f, model_dims *d) {
  family_keys k = keys_of(f);
  int rc;
  d->value_bytes = 2;
  if ((rc = dim(r, k.hidden, MODEL_MAX_DIM, 0, &d->hidden)) ||
      (rc = dim(r, k.layers, MODEL_MAX_LAYERS, 0, &d->layers)) ||
      (rc = dim(r, k.heads, MODEL_MAX_DIM, 0, &d->heads)) ||
      (rc = dim(r, "vocab_size", MODEL_MAX_DIM, 0, &d->vocab)) ||
      (rc = dim(r, k.seq, MODEL_MAX_DIM, 0, &d->seq)))
    return rc;
  /* GPT-2's n_inner may be null (4h); Mistral's class default of 8
   * key/value heads is no rule: the key is needed */
  int ffn = f == HF_GPT2 && d->hidden <= MODEL_MAX_DIM / 4 ? 4 * d->hidden : 0;
  int kv = f == HF_MISTRAL ? 0 : d->heads;
  if ((rc = dim(r, k.ffn, MODEL_MAX_DIM, ffn, &d->ffn)) ||
      (k.kv && (rc = dim(r, k.kv, MODEL_MAX_DIM, kv, &d->kv_heads))))
    return rc;
  if (!k.kv) d->kv_heads = d->heads;
  if (f == HF_BERT &&
      (rc = dim(r, "type_vocab_size", MODEL_MAX_DIM, 2, &d->type_vocab)))
    return rc;
  const char *names[3] = {k.hidden, k.heads, k.kv ? k.kv : k.heads};
  if ((rc = model_check(d, &r->c, &r->top, names))) return rc;
  return unsupported(r, d, &k);
}

/* The name: _name_or_path, else for a file called config.json its
 * folder's name (a snapshot's "Llama-2-7b-hf/config.json"), else the
 * file's name without its extension. */
static char *name_of(const reader *r, const char *path) {
  const json_t *n = json_object_get(r->o, "_name_or_path");
  if (json_is_string(n) && json_string_value(n)[0])
    return mem_strdup(json_string_value(n));
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (strcmp(base, "config.json") == 0 && slash && slash > path) {
    const char *dir = slash;
    while (dir > path && dir[-1] != '/') dir--;
    size_t len = (size_t)(slash - dir);
    if (len && strncmp(dir, ".", len) && strncmp(dir, "..", len))
      return mem_strndup(dir, len);
  }
  const char *dot = strrchr(base, '.');
  return mem_strndup(base, dot && dot > base ? (size_t)(dot - base)
                                             : strlen(base));
}

static int read_config(reader *r, const char *path, model_dims *d) {
  hf_family f = HF_GPT2;
  int rc = family_of(r, &f);
  if (rc) return rc;
  r->family = model_hf_types[f];
  block_of(f, d);
  if ((rc = switches(r, f, d)) || (rc = dims_of(r, f, d))) return rc;
  char source[512];
  snprintf(source, sizeof source, "Hugging Face config.json %s (model_type "
           "%s)", path, r->family);
  d->name = name_of(r, path);
  d->source = mem_strdup(source);
  return ERR_OK;
}

/* The text, parsed: a JSON object, or the error at its line. */
static json_t *parse(const char *path, const char *text, size_t len,
                     err *e) {
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    err_set(e, ERR_PARSE, "%s:%d: invalid JSON: %s (a config.json is one "
            "JSON object)", path, je.line > 0 ? je.line : 1, je.text);
    return NULL;
  }
  if (json_is_object(root)) return root;
  json_decref(root);
  err_set(e, ERR_PARSE, "%s:1: a config.json is one JSON object", path);
  return NULL;
}

int model_hf_parse(const char *text, size_t len, const char *path,
                   model_dims **out, err *e) {
  json_t *root = parse(path, text, len, e);
  if (!root) return ERR_PARSE;
  model_dims *d = mem_calloc(1, sizeof *d);
  reader r = {.c = {.file = path, .text = text, .len = len, .e = e},
              .top = jfield_top(), .o = root, .family = "config"};
  int rc = read_config(&r, path, d);
  json_decref(root);
  if (rc) {
    model_free(d);
    return rc;
  }
  *out = d;
  return ERR_OK;
}

int model_hf_load(const char *path, model_dims **out, err *e) {
  size_t len = 0;
  char *text = file_load(path, "the model's config.json", FILE_MAX_JSON_BYTES,
                         &len, e);
  if (!text) return e ? e->code : ERR_IO;
  int rc = model_hf_parse(text, len, path, out, e);
  free(text);
  return rc;
}
