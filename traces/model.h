/* model: a transformer's dimensions as a scenario gives them — the object
 * of workload.model, or a Hugging Face config.json (model_hf.h) — plain
 * data that models/spec reads as its spec_model (spec.h: the same struct)
 * and counts parameters, FLOPs and bytes from.
 * Invariant: a model_dims that model_read_object, model_hf_load or
 * model_check accepted has positive dimensions within MODEL_MAX_DIM
 * (layers within MODEL_MAX_LAYERS), heads dividing hidden and kv_heads
 * dividing heads; its names are its owner's (a scenario's: model_free). */
#ifndef TRACES_MODEL_H
#define TRACES_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/jfield.h"
#include "base/names.h"

/* How a layer is built, X(ID, "name"), each map's first entry the zero of
 * its enum (what GPT-3 as DT-FM ran it has; the object's defaults are
 * model_read_object's):
 * - mlp: two matrices h x ffn with an activation between (GPT-2, BERT,
 *   GPT-NeoX) or three, a gate and an up projection multiplied
 *   (SwiGLU: Llama, Mistral, Qwen2);
 * - positions: a learned table of seq x hidden (GPT-2, BERT) or rotary,
 *   no parameters (GPT-NeoX, Llama, Mistral, Qwen2);
 * - norm: LayerNorm (a weight and a bias per norm) or RMSNorm (a weight);
 * - bias: which linear layers carry biases: all (q, k, v, the output
 *   projection and the MLP's), none, qkv (Qwen2), attention (q, k, v and
 *   the output: Llama's attention_bias) or mlp (Llama's mlp_bias alone,
 *   GPT-NeoX's without attention_bias);
 * - attention: eager (the scores written to memory, scaled and soft-maxed
 *   there, q, k and v as three linear layers, the heads merged by a copy,
 *   the loss copying its shifted logits: DT-FM's GPT code of 2022, and
 *   PyTorch's eager path) or flash (one q,k,v GEMM, fused attention that
 *   never writes its scores and recomputes them backward). */
#define MODEL_MLP_MAP(X) X(GELU, "gelu") X(GATED, "gated")
#define MODEL_POSITIONS_MAP(X) X(LEARNED, "learned") X(ROTARY, "rotary")
#define MODEL_NORM_MAP(X) X(LAYERNORM, "layernorm") X(RMSNORM, "rmsnorm")
#define MODEL_BIAS_MAP(X) \
  X(ALL, "all") X(NONE, "none") X(QKV, "qkv") X(ATTENTION, "attention") \
  X(MLP, "mlp")
#define MODEL_ATTENTION_MAP(X) X(EAGER, "eager") X(FLASH, "flash")

#define MODEL_ENUM_(prefix, id) MODEL_##prefix##_##id,
#define MODEL_MLP_ID_(id, name) MODEL_ENUM_(MLP, id)
#define MODEL_POSITIONS_ID_(id, name) MODEL_ENUM_(POSITIONS, id)
#define MODEL_NORM_ID_(id, name) MODEL_ENUM_(NORM, id)
#define MODEL_BIAS_ID_(id, name) MODEL_ENUM_(BIAS, id)
#define MODEL_ATTENTION_ID_(id, name) MODEL_ENUM_(ATTENTION, id)
typedef enum model_mlp { MODEL_MLP_MAP(MODEL_MLP_ID_) } model_mlp;
typedef enum model_positions {
  MODEL_POSITIONS_MAP(MODEL_POSITIONS_ID_)
} model_positions;
typedef enum model_norm { MODEL_NORM_MAP(MODEL_NORM_ID_) } model_norm;
typedef enum model_bias { MODEL_BIAS_MAP(MODEL_BIAS_ID_) } model_bias;
typedef enum model_attention {
  MODEL_ATTENTION_MAP(MODEL_ATTENTION_ID_)
} model_attention;
#undef MODEL_MLP_ID_
#undef MODEL_POSITIONS_ID_
#undef MODEL_NORM_ID_
#undef MODEL_BIAS_ID_
#undef MODEL_ATTENTION_ID_
#undef MODEL_ENUM_
enum {
  MODEL_NMLPS = 0 MODEL_MLP_MAP(NAMES_COUNT_ROW),
  MODEL_NPOSITIONS = 0 MODEL_POSITIONS_MAP(NAMES_COUNT_ROW),
  MODEL_NNORMS = 0 MODEL_NORM_MAP(NAMES_COUNT_ROW),
  MODEL_NBIASES = 0 MODEL_BIAS_MAP(NAMES_COUNT_ROW),
  MODEL_NATTENTIONS = 0 MODEL_ATTENTION_MAP(NAMES_COUNT_ROW)
};
/* Each map's names, NULL-terminated ("gelu", "gated", NULL). */
extern const char *const model_mlp_names[MODEL_NMLPS + 1];
extern const char *const model_positions_names[MODEL_NPOSITIONS + 1];
extern const char *const model_norm_names[MODEL_NNORMS + 1];
extern const char *const model_bias_names[MODEL_NBIASES + 1];
extern const char *const model_attention_names[MODEL_NATTENTIONS + 1];

/* Whether biases b put a bias on q, k and v; on the attention's output
 * projection; on the MLP's matrices. */
bool model_bias_qkv(model_bias b);
bool model_bias_out(model_bias b);
bool model_bias_mlp(model_bias b);

/* The largest dimension read (hidden, heads, ffn, vocabulary, sequence,
 * token types), and the most layers (SCENARIO_MAX_LAYERS, the scenario's
 * bound on workload.layers): every count stays an exact double. */
#define MODEL_MAX_DIM 16777216
#define MODEL_MAX_LAYERS 100000

/* A transformer's dimensions (plain data). The built-in table of models/
 * spec.c holds literals; a scenario's (workload.model as an object or
 * hf:PATH) owns its name and source (model_free). */
typedef struct model_dims {
  const char *name;     /* "gpt3-xl", or the object's name */
  int layers;           /* the model's own depth (a workload may override) */
  int hidden;           /* h */
  int heads;            /* attention heads a */
  int seq;              /* sequence length s (learned positions: the
                           table's rows) */
  int vocab;            /* V */
  int value_bytes;      /* bytes per activation / weight value: 2 (fp16) */
  const char *source;   /* where the shape comes from ("" when unsaid) */
  int ffn;              /* MLP width (0: 4h) */
  int kv_heads;         /* key/value heads (0: heads, no grouping) */
  model_mlp mlp;
  model_positions positions;
  model_norm norm;
  model_bias bias;
  model_attention attention;
  bool tied_embeddings; /* the LM head is the token embedding */
  bool encoder;         /* BERT's: bidirectional attention (the same
                           FLOPs), a LayerNorm on the embeddings instead
                           of a final one, and a pooler (h x h + h) */
  int type_vocab;       /* token-type (segment) embeddings: BERT's 2; 0 */
} model_dims;

/* The keys of workload.model's object (NULL-terminated), in the order
 * model_export writes them; traces/FORMATS.md documents each. */
extern const char *const model_object_keys[];

/* Whether a workload.model string names a config file: "hf:PATH". */
#define MODEL_HF_PREFIX "hf:"
bool model_is_hf(const char *spec);

/* Reads workload.model's object o (scope s: its FILE:LINE) into a new
 * model_dims *out: the keys of model_object_keys, hidden, layers, heads,
 * vocab and seq required (ffn too with a gated MLP), the others with the
 * defaults traces/FORMATS.md states, then model_check. On failure
 * jfield's "FILE:LINE: workload.model.key: message" and nothing left. */
int model_read_object(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, model_dims **out);

/* The dimensions against each other: heads divide hidden, kv_heads
 * divide heads. ERR_CONFIG naming the key (as jfield_fail does, at the
 * line of key of scope s; keys spelled by `names`, the reader's own
 * spelling of hidden, heads and kv_heads), or ERR_OK. */
int model_check(const model_dims *d, const jfield_doc *c,
                const jfield_scope *s, const char *const names[3]);

/* d as workload.model's object: every key of model_object_keys (source
 * when not ""). A new reference. */
json_t *model_export(const model_dims *d);

/* h with every dimension of d (not its name nor its source). */
uint64_t model_hash(uint64_t h, const model_dims *d);

/* A deep copy (names copied); model_free frees it and its names. NULL is
 * fine for both. */
model_dims *model_dup(const model_dims *d);
void model_free(model_dims *d);

#endif
