/* cli_specs: `geodes models` and `geodes gpus` — the tables of models/spec
 * (the transformer shapes a workload names, the GPU types a site names),
 * as a plain table, or with --markdown as the Markdown table the pages
 * hold (models/MODELS.md; a test keeps their copy equal to this output);
 * and the Markdown table of the built-in scenarios (`geodes scenarios
 * --markdown`, traces/SCENARIOS.md).
 * Invariant: every row comes from the static tables or the built-in
 * scenarios themselves; nothing here is a second list of them. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "models/spec.h"
#include "sim/cli/cli.h"
#include "traces/model.h"
#include "traces/model_hf.h"

static const cli_opt_command MODELS = {
    .name = "models",
    .usage = "usage: geodes models [--markdown]\n"
             "       geodes models --show MODEL [--json]\n\n"
             "Lists the models a scenario's workload.model or --model names:"
             "\ntheir depth, width, heads, key/value heads, MLP width, "
             "sequence\nlength, vocabulary and block, and where the shape "
             "comes from.\nWith --show, one model (a name, or hf:PATH, a "
             "Hugging Face\nconfig.json): its dimensions, parameters, FLOPs "
             "per token and\nactivation bytes.\n\n",
    .width = 12};

static const cli_opt_command GPUS = {
    .name = "gpus",
    .usage = "usage: geodes gpus [--markdown]\n\n"
             "Lists the GPU types a site's gpu or --gpu names: dense fp16 "
             "tensor\nrate (mixed precision), memory and memory bandwidth, "
             "and the\ndatasheet.\n\n",
    .width = 12};

/* s with '|' escaped for a Markdown cell, into buf. */
static const char *cell(const char *s, char *buf, size_t size) {
  size_t at = 0;
  for (; *s && at + 3 < size; s++) {
    if (*s == '|') buf[at++] = '\\';
    buf[at++] = *s == '\n' ? ' ' : *s;
  }
  buf[at] = '\0';
  return buf;
}

/* m's block as "mlp/positions/norm/biases/attention" into buf. */
static const char *block_text(const spec_model *m, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s/%s/%s/%s", model_mlp_names[m->mlp],
           model_positions_names[m->positions], model_norm_names[m->norm],
           model_bias_names[m->bias], model_attention_names[m->attention]);
  return buf;
}

static void models_table(bool md) {
  int n;
  const spec_model *m = spec_models(&n);
  if (md)
    printf("| model | layers | hidden | heads | kv heads | ffn | sequence | "
           "vocabulary | block (mlp/positions/norm/biases/attention) | "
           "source |\n|---|---|---|---|---|---|---|---|---|---|\n");
  else
    printf("%-12s %6s %6s %5s %4s %6s %5s %6s  %-32s  %s\n", "NAME",
           "LAYERS", "HIDDEN", "HEADS", "KV", "FFN", "SEQ", "VOCAB", "BLOCK",
           "SOURCE");
  for (int i = 0; i < n; i++) {
    char src[512], block[96];
    const spec_model *x = &m[i];
    int kv = x->kv_heads > 0 ? x->kv_heads : x->heads;
    int ffn = x->ffn > 0 ? x->ffn : 4 * x->hidden;
    block_text(x, block, sizeof block);
    if (md)
      printf("| `%s` | %d | %d | %d | %d | %d | %d | %d | %s | %s |\n",
             x->name, x->layers, x->hidden, x->heads, kv, ffn, x->seq,
             x->vocab, block, cell(x->source, src, sizeof src));
    else
      printf("%-12s %6d %6d %5d %4d %6d %5d %6d  %-32s  %s\n", x->name,
             x->layers, x->hidden, x->heads, kv, ffn, x->seq, x->vocab, block,
             x->source);
  }
}

/* A model's counts (spec.h) as JSON: its dimensions (model_export's
 * object), parameters, FLOPs per token and activation bytes. */
static json_t *model_json(const spec_model *m) {
  double layer = spec_layer_params(m), fwd = spec_token_flops(m);
  json_t *o = json_object();
  json_object_set_new(o, "model", model_export(m));
  json_object_set_new(o, "parameters", json_pack(
      "{s:f, s:f, s:f, s:f, s:f, s:f}", "total", spec_model_params(m),
      "per_layer", layer, "layers", m->layers * layer, "embeddings",
      spec_embedding_params(m), "head", spec_head_params(m), "matrices",
      spec_token_matrix_params(m)));
  json_object_set_new(o, "flops_per_token", json_pack(
      "{s:f, s:f, s:f}", "forward", fwd, "training", 3 * fwd,
      "training_recompute", spec_token_flops_recompute(m)));
  json_object_set_new(o, "activation_bytes_per_sequence",
                      json_real((double)m->seq * m->hidden * m->value_bytes));
  return o;
}

/* The model called spec (a name of the table, or hf:PATH) into *m (the
 * config's owned in *own); CLI_OK, or the error printed. */
static int model_named(const char *spec, const spec_model **m,
                       model_dims **own) {
  if (model_is_hf(spec)) {
    err e = {0};
    if (model_hf_load(spec + strlen(MODEL_HF_PREFIX), own, &e))
      return cli_error("%s", e.msg);
    *m = *own;
    return CLI_OK;
  }
  *m = spec_model_find(spec);
  if (*m) return CLI_OK;
  char known[256];
  spec_model_list(known, sizeof known);
  return cli_usage_error(MODELS.name, "--show %s: unknown model (known: %s; "
                         "or hf:PATH, a Hugging Face config.json)", spec,
                         known);
}

/* `geodes models --show MODEL`. */
static int show_model(const char *spec, bool json) {
  const spec_model *m = NULL;
  model_dims *own = NULL;
  int rc = model_named(spec, &m, &own);
  if (rc) return rc;
  json_t *o = model_json(m);
  if (json) {
    cli_print_json(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    model_free(own);
    return CLI_OK;
  }
  char block[96];
  int kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
  int ffn = m->ffn > 0 ? m->ffn : 4 * m->hidden;
  json_t *p = json_object_get(o, "parameters");
  json_t *f = json_object_get(o, "flops_per_token");
#define NUM(obj, key) json_number_value(json_object_get(obj, key))
  printf("model %s\n  source       %s\n", m->name,
         m->source && m->source[0] ? m->source : "(none given)");
  printf("  dimensions   %d layers, hidden %d, %d heads (%d key/value), "
         "ffn %d, sequence %d, vocabulary %d\n", m->layers, m->hidden,
         m->heads, kv, ffn, m->seq, m->vocab);
  printf("  block        %s (mlp/positions/norm/biases/attention), %s head, "
         "%s%s\n", block_text(m, block, sizeof block),
         m->tied_embeddings ? "tied" : "untied",
         m->encoder ? "encoder" : "decoder",
         m->type_vocab ? ", token types" : "");
  printf("parameters     %.0f\n  per layer    %.0f (x %d = %.0f)\n"
         "  embeddings   %.0f\n  head         %.0f (%s)\n", NUM(p, "total"),
         NUM(p, "per_layer"), m->layers, NUM(p, "layers"),
         NUM(p, "embeddings"), NUM(p, "head"),
         m->encoder ? "the pooler" : m->tied_embeddings
                                         ? "the final norm; the LM head is "
                                           "the token embedding"
                                         : "the final norm and the LM head");
  printf("FLOPs/token    %.4g forward; training %.4g (6 N + 12 L h s, N = "
         "%.0f in the layers' matrices and the LM head), %.4g with "
         "recomputation\n", NUM(f, "forward"), NUM(f, "training"),
         NUM(p, "matrices"), NUM(f, "training_recompute"));
  printf("activations    %.0f bytes per sequence across a stage boundary "
         "(s h x %d bytes)\n", NUM(o, "activation_bytes_per_sequence"),
         m->value_bytes);
#undef NUM
  json_decref(o);
  model_free(own);
  return CLI_OK;
}

int cli_models(int argc, char **argv) {
  bool md = false, json = false;
  const char *show = NULL;
  const cli_opt opts[] = {
      CLI_OPT_FLAG(0, "markdown", &md, "a Markdown table (models/MODELS.md's)"),
      CLI_OPT_STRING(0, "show", "MODEL", &show,
                     "one model: a name, or hf:PATH (a config.json)"),
      CLI_OPT_FLAG(0, "json", &json, "--show as JSON"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs;
  int rc = cli_opt_parse(&MODELS, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  if (show && md)
    return cli_usage_error(MODELS.name, "--show and --markdown: one of them");
  if (json && !show)
    return cli_usage_error(MODELS.name, "--json goes with --show MODEL");
  if (show) return show_model(show, json);
  models_table(md);
  return CLI_OK;
}

int cli_gpus(int argc, char **argv) {
  bool md = false;
  const cli_opt opts[] = {
      CLI_OPT_FLAG(0, "markdown", &md, "a Markdown table (models/MODELS.md's)"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&GPUS, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  int n;
  const spec_gpu *g = spec_gpus(&n);
  if (md)
    printf("| GPU | fp16 TFLOP/s | memory GB | memory GB/s | board W | "
           "source |\n|---|---|---|---|---|---|\n");
  else
    printf("%-9s %12s %9s %11s %7s  %s\n", "NAME", "FP16_TFLOPS",
           "MEMORY_GB", "MEM_BW_GB_S", "BOARD_W", "SOURCE");
  for (int i = 0; i < n; i++) {
    char src[1024], both[1024], w[16] = "-";
    if (g[i].board_w > 0) snprintf(w, sizeof w, "%g", g[i].board_w);
    snprintf(both, sizeof both, "%s; power: %s", g[i].source,
             g[i].power_source ? g[i].power_source : "not stated");
    if (md)
      printf("| `%s` | %g | %g | %g | %s | %s |\n", g[i].name,
             g[i].peak_flops / 1e12, g[i].memory_bytes / 1e9,
             g[i].mem_bw_bytes_s / 1e9, w, cell(both, src, sizeof src));
    else
      printf("%-9s %12g %9g %11g %7s  %s\n", g[i].name,
             g[i].peak_flops / 1e12, g[i].memory_bytes / 1e9,
             g[i].mem_bw_bytes_s / 1e9, w, both);
  }
  return CLI_OK;
}

/* Cuts text after its first sentence: at the first ". " outside
 * parentheses, so that "(Jaghouar et al. 2024)" or "(e.g. ...)" stays. */
static void first_sentence(char *text) {
  int depth = 0;
  for (char *p = text; *p; p++) {
    depth += (*p == '(') - (*p == ')');
    if (depth == 0 && p[0] == '.' && p[1] == ' ') {
      p[1] = '\0';
      return;
    }
  }
}

void cli_scenarios_markdown(scenario *const *all, int n) {
  printf("| scenario | devices | sites | GPUs | description |\n"
         "|---|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    const scenario *s = all[i];
    char gpus[256] = "", desc[2048];
    for (int k = 0; k < s->nsites; k++) {
      const char *gname = s->sites[k].gpu;
      bool seen = false;
      for (int j = 0; j < k; j++) seen |= strcmp(s->sites[j].gpu, gname) == 0;
      if (!seen)
        snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%s",
                 gpus[0] ? ", " : "", gname);
    }
    cell(s->description, desc, sizeof desc);
    first_sentence(desc);
    printf("| `%s` | %d | %d | %s | %s |\n", s->name, s->ndevices, s->nsites,
           gpus, desc);
  }
}
