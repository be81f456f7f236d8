/* model_hf: a Hugging Face config.json read as a model's dimensions
 * (traces/model.h) — workload.model "hf:PATH", --model hf:PATH and
 * `geodes models --show hf:PATH`.
 * Invariant: a family's block (its MLP, positions, norm, biases, tied
 * head, encoder) is what its modelling code in transformers builds
 * (modeling_gpt2.py, modeling_gpt_neox.py, modeling_llama.py,
 * modeling_mistral.py, modeling_qwen2.py, modeling_bert.py), the
 * dimensions are the config's keys, and a key the family needs that the
 * file lacks is refused rather than taken from a class default. */
#ifndef TRACES_MODEL_HF_H
#define TRACES_MODEL_HF_H

#include "base/err.h"
#include "traces/model.h"

/* The families read, X(ID, model_type, the prefix of its architectures'
 * class names). */
#define MODEL_HF_FAMILY_MAP(X)        \
  X(GPT2, "gpt2", "GPT2")             \
  X(GPT_NEOX, "gpt_neox", "GPTNeoX")  \
  X(LLAMA, "llama", "Llama")          \
  X(MISTRAL, "mistral", "Mistral")    \
  X(QWEN2, "qwen2", "Qwen2")          \
  X(BERT, "bert", "Bert")

/* The model_type of each family, NULL-terminated ("gpt2", ..., NULL). */
extern const char *const model_hf_types[];

/* Every key of a config.json that some family reads (NULL-terminated):
 * traces/FORMATS.md documents each. */
extern const char *const model_hf_keys[];

/* Reads the config.json at path into a new *out (the caller frees it with
 * model_free): its family from model_type (else architectures[0]), its
 * dimensions from the family's keys. Its name is the file's _name_or_path,
 * else its folder's name, else the file's; its source names the file.
 * On failure (unreadable, not JSON, an unknown family, a missing key, a
 * dimension that is no positive integer or does not divide): ERR_* with
 * "PATH:LINE: key: message" (the valid choices where there are some) in
 * e, and nothing left. */
int model_hf_load(const char *path, model_dims **out, err *e);

/* model_hf_load of text[0 .. len), the file at path. */
int model_hf_parse(const char *text, size_t len, const char *path,
                   model_dims **out, err *e);

#endif
