/* model: workload.model's object read, checked, exported and hashed (see
 * model.h). Invariant: model_read_object returns a model_dims whose every
 * field is explicit (ffn and kv_heads given or defaulted, never 0), so
 * that its export states every dimension and loading the export gives the
 * same dimensions and hash. */
#include "traces/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/mem.h"

#define MODEL_NAME_(id, name) name,
const char *const model_mlp_names[] = {MODEL_MLP_MAP(MODEL_NAME_) NULL};
const char *const model_positions_names[] = {
    MODEL_POSITIONS_MAP(MODEL_NAME_) NULL};
const char *const model_norm_names[] = {MODEL_NORM_MAP(MODEL_NAME_) NULL};
const char *const model_bias_names[] = {MODEL_BIAS_MAP(MODEL_NAME_) NULL};
const char *const model_attention_names[] = {
    MODEL_ATTENTION_MAP(MODEL_NAME_) NULL};
#undef MODEL_NAME_

const char *const model_object_keys[] = {
    "name",      "source",   "layers",          "hidden",  "heads",
    "kv_heads",  "ffn",      "vocab",           "seq",     "mlp",
    "positions", "norm",     "bias",            "attention",
    "tied_embeddings",       "encoder",         "type_vocab", NULL};

bool model_bias_qkv(model_bias b) {
  switch (b) {
    case MODEL_BIAS_ALL:
    case MODEL_BIAS_QKV:
    case MODEL_BIAS_ATTENTION: return true;
    case MODEL_BIAS_NONE:
    case MODEL_BIAS_MLP: return false;
  }
  return false;
}

bool model_bias_out(model_bias b) {
  switch (b) {
    case MODEL_BIAS_ALL:
    case MODEL_BIAS_ATTENTION: return true;
    case MODEL_BIAS_NONE:
    case MODEL_BIAS_QKV:
    case MODEL_BIAS_MLP: return false;
  }
  return false;
}

bool model_bias_mlp(model_bias b) {
  switch (b) {
    case MODEL_BIAS_ALL:
    case MODEL_BIAS_MLP: return true;
    case MODEL_BIAS_NONE:
    case MODEL_BIAS_QKV:
    case MODEL_BIAS_ATTENTION: return false;
  }
  return false;
}

bool model_is_hf(const char *spec) {
  return spec && strncmp(spec, MODEL_HF_PREFIX, strlen(MODEL_HF_PREFIX)) == 0;
}

/* o[key], one of names (def when absent), into *out: its index. */
static int read_name(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, const char *key,
                     const char *const *names, int def, int *out) {
  char *v = NULL;
  int rc = jfield_str(c, s, o, key, names[def], &v);
  if (rc) return rc;
  *out = names_find(names, v);
  if (*out < 0) {
    char list[128];
    names_join(names, ", ", " or ", list, sizeof list);
    rc = jfield_fail(c, s, key, ERR_UNKNOWN, "unknown value '%s' (%s)", v,
                     list);
  }
  free(v);
  return rc;
}

/* o[key], an integer in [lo, hi]; def when absent (required when def <
 * lo), into *out. */
static int read_dim(const jfield_doc *c, const jfield_scope *s,
                    const json_t *o, const char *key, long long lo,
                    long long hi, long long def, int *out) {
  long long x = 0;
  int rc = jfield_int(c, s, o, key, lo, hi, def, &x);
  *out = (int)x;
  return rc;
}

/* The layer's dimensions (ffn required with a gated MLP: it has no
 * conventional width). */
static int read_dims(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, model_dims *d) {
  int rc, mlp = 0;
  if ((rc = read_dim(c, s, o, "layers", 1, MODEL_MAX_LAYERS, 0, &d->layers)) ||
      (rc = read_dim(c, s, o, "hidden", 1, MODEL_MAX_DIM, 0, &d->hidden)) ||
      (rc = read_dim(c, s, o, "heads", 1, MODEL_MAX_DIM, 0, &d->heads)) ||
      (rc = read_dim(c, s, o, "kv_heads", 1, MODEL_MAX_DIM, d->heads,
                     &d->kv_heads)) ||
      (rc = read_dim(c, s, o, "vocab", 1, MODEL_MAX_DIM, 0, &d->vocab)) ||
      (rc = read_dim(c, s, o, "seq", 1, MODEL_MAX_DIM, 0, &d->seq)) ||
      (rc = read_dim(c, s, o, "type_vocab", 0, MODEL_MAX_DIM, 0,
                     &d->type_vocab)) ||
      (rc = read_name(c, s, o, "mlp", model_mlp_names, MODEL_MLP_GELU, &mlp)))
    return rc;
  d->mlp = (model_mlp)mlp;
  bool gated = false;
  switch (d->mlp) {
    case MODEL_MLP_GELU: gated = false; break;
    case MODEL_MLP_GATED: gated = true; break;
  }
  long long ffn = gated ? 0 : 4LL * d->hidden;
  if (ffn > MODEL_MAX_DIM) ffn = MODEL_MAX_DIM;
  return read_dim(c, s, o, "ffn", 1, MODEL_MAX_DIM, ffn, &d->ffn);
}

/* The block's choices, defaulted by the MLP: a two-matrix MLP as GPT-2's
 * block (learned positions, LayerNorm, every bias), a gated one as
 * Llama's (rotary, RMSNorm, no bias); flash attention either way. */
static int read_block(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, model_dims *d) {
  bool gated = false;
  switch (d->mlp) {
    case MODEL_MLP_GELU: gated = false; break;
    case MODEL_MLP_GATED: gated = true; break;
  }
  int pos, norm, bias, attn, rc;
  if ((rc = read_name(c, s, o, "positions", model_positions_names,
                      gated ? MODEL_POSITIONS_ROTARY : MODEL_POSITIONS_LEARNED,
                      &pos)) ||
      (rc = read_name(c, s, o, "norm", model_norm_names,
                      gated ? MODEL_NORM_RMSNORM : MODEL_NORM_LAYERNORM,
                      &norm)) ||
      (rc = read_name(c, s, o, "bias", model_bias_names,
                      gated ? MODEL_BIAS_NONE : MODEL_BIAS_ALL, &bias)) ||
      (rc = read_name(c, s, o, "attention", model_attention_names,
                      MODEL_ATTENTION_FLASH, &attn)) ||
      (rc = jfield_bool(c, s, o, "tied_embeddings", false,
                        &d->tied_embeddings)) ||
      (rc = jfield_bool(c, s, o, "encoder", false, &d->encoder)))
    return rc;
  d->positions = (model_positions)pos, d->norm = (model_norm)norm;
  d->bias = (model_bias)bias, d->attention = (model_attention)attn;
  return ERR_OK;
}

int model_check(const model_dims *d, const jfield_doc *c,
                const jfield_scope *s, const char *const names[3]) {
  if (d->hidden % d->heads)
    return jfield_fail(c, s, names[1], ERR_CONFIG, "%d heads do not divide "
                       "%s %d (each head is hidden / heads wide)", d->heads,
                       names[0], d->hidden);
  if (d->kv_heads > d->heads || d->heads % d->kv_heads)
    return jfield_fail(c, s, names[2], ERR_CONFIG, "%d key/value heads do not "
                       "divide %s %d (each serves a group of query heads)",
                       d->kv_heads, names[1], d->heads);
  return ERR_OK;
}

int model_read_object(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, model_dims **out) {
  static const char *const names[3] = {"hidden", "heads", "kv_heads"};
  model_dims *d = mem_calloc(1, sizeof *d);
  char *name = NULL, *source = NULL;
  int rc;
  d->value_bytes = 2;
  if ((rc = jfield_known(c, s, o, model_object_keys)) ||
      (rc = jfield_str(c, s, o, "name", "custom", &name)) ||
      (rc = jfield_str(c, s, o, "source", "", &source)) ||
      (rc = read_dims(c, s, o, d)) || (rc = read_block(c, s, o, d)) ||
      (rc = model_check(d, c, s, names))) {
    free(name);
    free(source);
    free(d);
    return rc;
  }
  if (!name[0]) {
    free(name), free(source), free(d);
    return jfield_fail(c, s, "name", ERR_PARSE, "must not be empty");
  }
  d->name = name, d->source = source;
  *out = d;
  return ERR_OK;
}

static void set(json_t *o, const char *key, json_t *v) {
  json_object_set_new(o, key, v);
}

json_t *model_export(const model_dims *d) {
  json_t *o = json_object();
  set(o, "name", json_string(d->name));
  if (d->source && d->source[0]) set(o, "source", json_string(d->source));
  set(o, "layers", json_integer(d->layers));
  set(o, "hidden", json_integer(d->hidden));
  set(o, "heads", json_integer(d->heads));
  set(o, "kv_heads", json_integer(d->kv_heads > 0 ? d->kv_heads : d->heads));
  set(o, "ffn", json_integer(d->ffn > 0 ? d->ffn : 4LL * d->hidden));
  set(o, "vocab", json_integer(d->vocab));
  set(o, "seq", json_integer(d->seq));
  set(o, "mlp", json_string(model_mlp_names[d->mlp]));
  set(o, "positions", json_string(model_positions_names[d->positions]));
  set(o, "norm", json_string(model_norm_names[d->norm]));
  set(o, "bias", json_string(model_bias_names[d->bias]));
  set(o, "attention", json_string(model_attention_names[d->attention]));
  set(o, "tied_embeddings", json_boolean(d->tied_embeddings));
  set(o, "encoder", json_boolean(d->encoder));
  set(o, "type_vocab", json_integer(d->type_vocab));
  return o;
}

uint64_t model_hash(uint64_t h, const model_dims *d) {
  const int dims[] = {d->layers,   d->hidden,   d->heads,
                      d->seq,      d->vocab,    d->value_bytes,
                      d->ffn,      d->kv_heads, (int)d->mlp,
                      (int)d->positions,        (int)d->norm,
                      (int)d->bias,             (int)d->attention,
                      d->tied_embeddings,       d->encoder,
                      d->type_vocab};
  h = hash_str(h, "model dimensions");
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
    h = hash_u64(h, (uint64_t)(int64_t)dims[i]);
  return h;
}

model_dims *model_dup(const model_dims *d) {
  if (!d) return NULL;
  model_dims *x = mem_alloc(sizeof *x);
  *x = *d;
  x->name = mem_strdup(d->name);
  x->source = mem_strdup(d->source ? d->source : "");
  return x;
}

void model_free(model_dims *d) {
  if (!d) return;
  free((char *)d->name);
  free((char *)d->source);
  free(d);
}
