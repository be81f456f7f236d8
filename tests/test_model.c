/* test_model: a model's dimensions read (traces/model.c, model_hf.c) —
 * the published config.json of four families (tests/fixtures/hf) into the
 * block their modelling code builds; each family's switches; workload.model
 * as an object; every bad input of issue 34 at FILE:LINE with the valid
 * choices; the export of a scenario that gives its model by dimensions
 * loading back with the same hash, which covers every dimension and not
 * the model's name. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"
#include "traces/model.h"
#include "traces/model_hf.h"
#include "traces/scenario_export.h"

TestSuite(model, .init = support_dir_make, .fini = support_dir_remove);

#define HF GEODES_FIXTURES "/hf/"

static model_dims *load(const char *path) {
  err e = {0};
  model_dims *d = NULL;
  cr_assert_eq(model_hf_load(path, &d, &e), ERR_OK, "%s", e.msg);
  return d;
}

/* text as a config.json in the temporary folder, read: the error's code
 * and message (a model read is a failure of the test). */
static int refused(const char *text, char *msg, size_t size) {
  const char *path = support_write_file(support_path("config.json"), text);
  err e = {0};
  model_dims *d = NULL;
  int rc = model_hf_load(path, &d, &e);
  cr_assert_neq(rc, ERR_OK, "read: %s", text);
  cr_assert_null(d);
  snprintf(msg, size, "%s", e.msg + strlen(support_dir()) + 1);
  return rc;
}

Test(model, published_configs_give_their_families_blocks) {
  struct {
    const char *file, *name;
    int layers, hidden, heads, kv, ffn, seq, vocab, types;
    model_mlp mlp;
    model_positions pos;
    model_norm norm;
    model_bias bias;
    bool tied, encoder;
  } want[] = {
      {"llama-2-7b.json", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 11008,
       4096, 32000, 0, MODEL_MLP_GATED, MODEL_POSITIONS_ROTARY,
       MODEL_NORM_RMSNORM, MODEL_BIAS_NONE, false, false},
      {"mistral-7b.json", "mistral-7b", 32, 4096, 32, 8, 14336, 32768, 32000,
       0, MODEL_MLP_GATED, MODEL_POSITIONS_ROTARY, MODEL_NORM_RMSNORM,
       MODEL_BIAS_NONE, false, false},
      {"gpt2-xl.json", "gpt2-xl", 48, 1600, 25, 25, 6400, 1024, 50257, 0,
       MODEL_MLP_GELU, MODEL_POSITIONS_LEARNED, MODEL_NORM_LAYERNORM,
       MODEL_BIAS_ALL, true, false},
      {"bert-large-uncased.json", "bert-large-uncased", 24, 1024, 16, 16, 4096,
       512, 30522, 2, MODEL_MLP_GELU, MODEL_POSITIONS_LEARNED,
       MODEL_NORM_LAYERNORM, MODEL_BIAS_ALL, true, true}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char path[512];
    snprintf(path, sizeof path, HF "%s", want[i].file);
    model_dims *d = load(path);
    cr_expect_str_eq(d->name, want[i].name);
    cr_expect(strstr(d->source, want[i].file), "%s", d->source);
    cr_expect_eq(d->layers, want[i].layers, "%s", want[i].file);
    cr_expect_eq(d->hidden, want[i].hidden, "%s", want[i].file);
    cr_expect_eq(d->heads, want[i].heads, "%s", want[i].file);
    cr_expect_eq(d->kv_heads, want[i].kv, "%s", want[i].file);
    cr_expect_eq(d->ffn, want[i].ffn, "%s", want[i].file);
    cr_expect_eq(d->seq, want[i].seq, "%s", want[i].file);
    cr_expect_eq(d->vocab, want[i].vocab, "%s", want[i].file);
    cr_expect_eq(d->type_vocab, want[i].types, "%s", want[i].file);
    cr_expect_eq(d->value_bytes, 2);
    cr_expect_eq(d->mlp, want[i].mlp, "%s", want[i].file);
    cr_expect_eq(d->positions, want[i].pos, "%s", want[i].file);
    cr_expect_eq(d->norm, want[i].norm, "%s", want[i].file);
    cr_expect_eq(d->bias, want[i].bias, "%s", want[i].file);
    cr_expect_eq(d->attention, MODEL_ATTENTION_FLASH, "%s", want[i].file);
    cr_expect_eq(d->tied_embeddings, want[i].tied, "%s", want[i].file);
    cr_expect_eq(d->encoder, want[i].encoder, "%s", want[i].file);
    model_free(d);
  }
}

/* A config's family switches, each against its modelling code's default
 * (model_hf.c's header): gpt_neox's attention_bias, llama's attention_bias
 * and mlp_bias, qwen2's biased q, k, v, tie_word_embeddings; a family from
 * architectures when model_type is absent; a folder's name for config.json. */
Test(model, family_switches) {
  const char *base = "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 4, \"intermediate_size\": "
                     "128, \"vocab_size\": 100, \"max_position_embeddings\": "
                     "32";
  struct {
    const char *extra;
    model_bias bias;
    bool tied;
    model_mlp mlp;
  } cases[] = {
      {"\"model_type\": \"gpt_neox\"", MODEL_BIAS_ALL, false, MODEL_MLP_GELU},
      {"\"model_type\": \"gpt_neox\", \"attention_bias\": false",
       MODEL_BIAS_MLP, false, MODEL_MLP_GELU},
      {"\"model_type\": \"llama\"", MODEL_BIAS_NONE, false, MODEL_MLP_GATED},
      {"\"model_type\": \"llama\", \"attention_bias\": true",
       MODEL_BIAS_ATTENTION, false, MODEL_MLP_GATED},
      {"\"model_type\": \"llama\", \"mlp_bias\": true", MODEL_BIAS_MLP, false,
       MODEL_MLP_GATED},
      {"\"model_type\": \"llama\", \"attention_bias\": true, \"mlp_bias\": "
       "true, \"tie_word_embeddings\": true", MODEL_BIAS_ALL, true,
       MODEL_MLP_GATED},
      {"\"model_type\": \"qwen2\", \"tie_word_embeddings\": true",
       MODEL_BIAS_QKV, true, MODEL_MLP_GATED},
      {"\"architectures\": [\"Qwen2ForCausalLM\"]", MODEL_BIAS_QKV, false,
       MODEL_MLP_GATED},
      {"\"architectures\": [\"GPTNeoXForCausalLM\"]", MODEL_BIAS_ALL, false,
       MODEL_MLP_GELU}};
  char *dir = strdup(support_path("Tiny-Model"));
  support_sh(NULL, "mkdir -p '%s'", dir);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[1024], path[600];
    snprintf(text, sizeof text, "{%s, %s}", base, cases[i].extra);
    snprintf(path, sizeof path, "%s/config.json", dir);
    support_write_file(path, text);
    model_dims *d = load(path);
    cr_expect_eq(d->bias, cases[i].bias, "%s", cases[i].extra);
    cr_expect_eq(d->tied_embeddings, cases[i].tied, "%s", cases[i].extra);
    cr_expect_eq(d->mlp, cases[i].mlp, "%s", cases[i].extra);
    cr_expect_str_eq(d->name, "Tiny-Model");
    model_free(d);
  }
  /* GPT-2's n_inner null is 4h; its tie defaults to true */
  support_write_file(support_path("gpt2.json"), "{\"model_type\": \"gpt2\", "
                     "\"n_embd\": 64, \"n_layer\": 2, \"n_head\": 4, "
                     "\"n_positions\": 32, \"vocab_size\": 100, "
                     "\"n_inner\": null}");
  model_dims *d = load(support_path("gpt2.json"));
  cr_expect_eq(d->ffn, 256);
  cr_expect(d->tied_embeddings);
  cr_expect_str_eq(d->name, "gpt2");
  model_free(d);
  free(dir);
}

/* Issue 34's bad input, each at its FILE:LINE with the valid choices where
 * there are some, pinned byte for byte. */
Test(model, bad_configs_are_refused_at_their_line) {
  const char *llama = "{\n\"model_type\": \"llama\",\n\"hidden_size\": 4096,"
                      "\n\"num_hidden_layers\": 32,\n\"num_attention_heads\": "
                      "32,\n\"num_key_value_heads\": 8,\n\"intermediate_size\""
                      ": 11008,\n\"vocab_size\": 32000,\n"
                      "\"max_position_embeddings\": 4096\n}\n";
  struct {
    const char *from, *to, *want;
    int code;
  } cases[] = {
      {"\"vocab_size\": 32000,", "\"vocab_size\": 32000",
       "config.json:9: invalid JSON: '}' expected (a config.json is one "
       "JSON object)", ERR_PARSE},
      {"\"intermediate_size\": 11008,\n", "",
       "config.json:1: intermediate_size: missing: a llama config needs it "
       "(a positive integer)", ERR_MISSING},
      {"\"hidden_size\": 4096", "\"hidden_size\": 4096.5",
       "config.json:3: hidden_size: must be an integer", ERR_PARSE},
      {"\"hidden_size\": 4096", "\"hidden_size\": \"4096\"",
       "config.json:3: hidden_size: must be an integer", ERR_PARSE},
      {"\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0",
       "config.json:4: num_hidden_layers: must be in [1, 100000], not 0",
       ERR_RANGE},
      {"\"vocab_size\": 32000", "\"vocab_size\": -5",
       "config.json:8: vocab_size: must be in [1, 16777216], not -5",
       ERR_RANGE},
      {"\"num_attention_heads\": 32", "\"num_attention_heads\": 30",
       "config.json:5: num_attention_heads: 30 heads do not divide "
       "hidden_size 4096 (each head is hidden / heads wide)", ERR_CONFIG},
      {"\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5",
       "config.json:6: num_key_value_heads: 5 key/value heads do not divide "
       "num_attention_heads 32 (each serves a group of query heads)",
       ERR_CONFIG},
      {"\"llama\"", "\"mixtral\"",
       "config.json:2: model_type: unknown architecture 'mixtral' "
       "(model_type gpt2, gpt_neox, llama, mistral, qwen2 or bert)",
       ERR_UNKNOWN},
      {"\"model_type\": \"llama\",", "\"architectures\": [\"T5Model\"],",
       "config.json:2: architectures: unknown architecture 'T5Model' "
       "(model_type gpt2, gpt_neox, llama, mistral, qwen2 or bert)",
       ERR_UNKNOWN},
      {"\"model_type\": \"llama\",", "",
       "config.json:1: model_type: missing, and no architectures: one of "
       "gpt2, gpt_neox, llama, mistral, qwen2 or bert", ERR_MISSING},
      {"\"vocab_size\": 32000,", "\"vocab_size\": 32000, \"head_dim\": 256,",
       "config.json:8: head_dim: 256 x num_attention_heads 32 is not "
       "hidden_size 4096: heads narrower or wider than hidden / heads are "
       "not modelled", ERR_CONFIG},
      {"\"model_type\": \"llama\"", "\"model_type\": \"mistral\"", NULL,
       ERR_OK}};
  char msg[ERR_MSG_MAX];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text = support_edit(llama, cases[i].from, cases[i].to);
    if (!cases[i].want) { /* mistral's 8 key/value heads are stated: read */
      support_write_file(support_path("config.json"), text);
      model_free(load(support_path("config.json")));
      char *no_kv = support_edit(text, "\"num_key_value_heads\": 8,\n", "");
      cr_expect_eq(refused(no_kv, msg, sizeof msg), ERR_MISSING);
      cr_expect_str_eq(msg, "config.json:1: num_key_value_heads: missing: a "
                       "mistral config needs it (a positive integer)");
      free(no_kv);
    } else {
      cr_expect_eq(refused(text, msg, sizeof msg), cases[i].code, "%s", msg);
      cr_expect_str_eq(msg, cases[i].want);
    }
    free(text);
  }
  cr_expect_eq(refused("[1, 2]", msg, sizeof msg), ERR_PARSE);
  cr_expect_str_eq(msg, "config.json:1: a config.json is one JSON object");
  cr_expect_eq(refused("", msg, sizeof msg), ERR_PARSE);
  cr_expect(strstr(msg, "config.json:1: invalid JSON"), "%s", msg);
  cr_expect_eq(refused("{\"model_type\": \"bert\", \"hidden_size\": 64, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
                       " \"intermediate_size\": 128, \"vocab_size\": 100, "
                       "\"max_position_embeddings\": 32, "
                       "\"position_embedding_type\": \"relative_key\"}", msg,
                       sizeof msg), ERR_CONFIG);
  cr_expect(strstr(msg, "position_embedding_type: only \"absolute\""), "%s",
            msg);
  err e = {0};
  model_dims *d = NULL;
  cr_expect_eq(model_hf_load(support_path("absent.json"), &d, &e), ERR_IO);
  cr_expect(strstr(e.msg, "cannot read the model's config.json"), "%s",
            e.msg);
}

/* A scenario of two A100s whose workload.model is text. */
static char *with_model(const char *model) {
  char *s = malloc(2048);
  snprintf(s, 2048, "{\"name\": \"own\", \"sites\": [{\"name\": \"a\", "
           "\"devices\": 2, \"gpu\": \"A100\"}], \"network\": "
           "{\"latency_ms\": 1, \"bandwidth_gbps\": 10},\n\"workload\": "
           "{\"model\": %s,\n\"batch\": 8, \"micro_batch\": 1, \"stages\": 2, "
           "\"replicas\": 1}}", model);
  return s;
}

static const char *TINY =
    "{\"name\": \"tiny\", \"layers\": 4, \"hidden\": 256,\n\"heads\": 8, "
    "\"kv_heads\": 2, \"ffn\": 688, \"vocab\": 32000, \"seq\": 512,\n"
    "\"mlp\": \"gated\", \"tied_embeddings\": true}";

static scenario *parsed(const char *text, err *e) {
  return scenario_parse(text, strlen(text), support_path("own.json"), e);
}

/* The object's defaults follow its MLP (a gated one is Llama's block), and
 * a bad object is refused at its key's line with the choices. */
Test(model, workload_model_as_an_object) {
  char *text = with_model(TINY);
  err e = {0};
  scenario *s = parsed(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  const model_dims *d = s->workload.model_dims;
  cr_assert_not_null(d);
  cr_expect_str_eq(s->workload.model, "tiny");
  cr_expect_eq(d->kv_heads, 2);
  cr_expect_eq(d->positions, MODEL_POSITIONS_ROTARY);
  cr_expect_eq(d->norm, MODEL_NORM_RMSNORM);
  cr_expect_eq(d->bias, MODEL_BIAS_NONE);
  cr_expect_eq(d->attention, MODEL_ATTENTION_FLASH);
  cr_expect(d->tied_embeddings && !d->encoder);
  scenario_free(s);
  free(text);
  struct {
    const char *from, *to, *want;
  } bad[] = {
      {"\"mlp\": \"gated\"", "\"mlp\": \"swiglu\"",
       "own.json:4: workload.model.mlp: unknown value 'swiglu' (gelu or "
       "gated)"},
      {"\"ffn\": 688, ", "",
       "own.json:2: workload.model.ffn: missing (an integer)"},
      {"\"heads\": 8", "\"heads\": 6",
       "own.json:3: workload.model.heads: 6 heads do not divide hidden 256 "
       "(each head is hidden / heads wide)"},
      {"\"kv_heads\": 2", "\"kv_heads\": 3",
       "own.json:3: workload.model.kv_heads: 3 key/value heads do not divide "
       "heads 8 (each serves a group of query heads)"},
      {"\"seq\": 512", "\"seq\": 0",
       "own.json:3: workload.model.seq: must be in [1, 16777216], not 0"},
      {"\"seq\": 512", "\"sequence\": 512",
       "own.json:3: workload.model.sequence: unknown key (known: name, "
       "source, layers, hidden, heads, kv_heads, ffn, vocab, seq, mlp, "
       "positions, norm, bias, attention, tied_embeddings, encoder, "
       "type_vocab)"},
      {"\"tied_embeddings\": true", "\"tied_embeddings\": 1",
       "own.json:4: workload.model.tied_embeddings: must be true or false"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *obj = support_edit(TINY, bad[i].from, bad[i].to);
    char *t = with_model(obj);
    err be = {0};
    cr_expect_null(parsed(t, &be));
    const char *msg = strstr(be.msg, "own.json");
    cr_expect_str_eq(msg ? msg : be.msg, bad[i].want);
    free(t);
    free(obj);
  }
}

/* The export of a scenario that gives its model by dimensions loads back
 * with the same hash; the hash covers every dimension, not the name; a
 * config.json beside the scenario reads as hf:PATH and exports as the
 * object of its dimensions. */
Test(model, export_loads_back_and_the_hash_covers_the_dimensions) {
  char *text = with_model(TINY);
  err e = {0};
  scenario *s = parsed(text, &e);
  cr_assert_not_null(s, "%s", e.msg);
  json_t *j = scenario_export(s, NULL);
  char *dump = json_dumps(j, JSON_INDENT(1));
  scenario *back = parsed(dump, &e);
  cr_assert_not_null(back, "%s", e.msg);
  cr_expect_eq(scenario_hash(back), scenario_hash(s));
  cr_expect(json_is_object(json_object_get(json_object_get(j, "workload"),
                                           "model")));
  scenario_free(back);
  free(dump);
  json_decref(j);
  const char *edits[][2] = {
      {"\"layers\": 4", "\"layers\": 5"},   {"\"hidden\": 256", "\"hidden\": 512"},
      {"\"heads\": 8", "\"heads\": 4"},     {"\"kv_heads\": 2", "\"kv_heads\": 4"},
      {"\"ffn\": 688", "\"ffn\": 689"},     {"\"vocab\": 32000", "\"vocab\": 32001"},
      {"\"seq\": 512", "\"seq\": 1024"},    {"\"gated\"", "\"gelu\""},
      {"\"tied_embeddings\": true", "\"tied_embeddings\": false"},
      {"\"mlp\"", "\"positions\": \"learned\", \"mlp\""},
      {"\"mlp\"", "\"norm\": \"layernorm\", \"mlp\""},
      {"\"mlp\"", "\"bias\": \"qkv\", \"mlp\""},
      {"\"mlp\"", "\"attention\": \"eager\", \"mlp\""},
      {"\"mlp\"", "\"encoder\": true, \"mlp\""},
      {"\"mlp\"", "\"type_vocab\": 2, \"mlp\""},
      {"\"name\": \"tiny\"", "\"name\": \"other\", \"source\": \"mine\""}};
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    char *obj = support_edit(TINY, edits[i][0], edits[i][1]);
    char *t = with_model(obj);
    scenario *x = parsed(t, &e);
    cr_assert_not_null(x, "%s: %s", edits[i][1], e.msg);
    bool named = i + 1 == sizeof edits / sizeof *edits;
    if (named)
      cr_expect_eq(scenario_hash(x), scenario_hash(s), "a name is no "
                   "dimension");
    else
      cr_expect_neq(scenario_hash(x), scenario_hash(s), "%s: not hashed",
                    edits[i][1]);
    scenario_free(x);
    free(t);
    free(obj);
  }
  /* hf:PATH beside the scenario: its dimensions; the export's object */
  char *cfg = support_read_file(HF "llama-2-7b.json", NULL);
  support_write_file(support_path("llama.json"), cfg);
  free(cfg);
  char *hf = with_model("\"hf:llama.json\"");
  scenario *h = parsed(hf, &e);
  cr_assert_not_null(h, "%s", e.msg);
  cr_expect_str_eq(h->workload.model, "meta-llama/Llama-2-7b-hf");
  cr_expect_eq(h->workload.model_dims->ffn, 11008);
  j = scenario_export(h, NULL);
  dump = json_dumps(j, 0);
  back = parsed(dump, &e);
  cr_assert_not_null(back, "%s", e.msg);
  cr_expect_eq(scenario_hash(back), scenario_hash(h));
  cr_expect_neq(scenario_hash(h), scenario_hash(s));
  scenario_free(back);
  free(dump);
  json_decref(j);
  scenario_free(h);
  free(hf);
  /* a config that is not there is named at the scenario's key */
  char *none = with_model("\"hf:none.json\"");
  cr_expect_null(parsed(none, &e));
  cr_expect(strstr(e.msg, "own.json:2: workload.model: ") &&
                strstr(e.msg, "none.json: cannot read the model's "
                              "config.json"), "%s", e.msg);
  free(none);
  scenario_free(s);
  free(text);
}

/* --model hf:PATH as a knob (scenario_apply): the config's dimensions and
 * name replace the scenario's, a name drops them again, a bad config is
 * refused and leaves the scenario as it was. */
Test(model, the_model_knob_reads_a_config) {
  scenario *s = support_scenario("worldwide");
  uint64_t h0 = scenario_hash(s);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.model = "hf:" HF "mistral-7b.json";
  err e = {0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  cr_expect_str_eq(s->workload.model, "mistral-7b");
  cr_expect_eq(s->workload.model_dims->kv_heads, 8);
  uint64_t h1 = scenario_hash(s);
  cr_expect_neq(h1, h0);
  k.model = "hf:" HF "absent.json";
  cr_expect_eq(scenario_apply(s, &k, &e), ERR_IO);
  cr_expect_eq(err_field(&e), WORKLOAD_model);
  cr_expect_eq(scenario_hash(s), h1, "a refused knob changes nothing");
  k.model = "gpt3-xl";
  err_clear(&e);
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  cr_expect_null(s->workload.model_dims);
  scenario *plain = support_scenario("worldwide");
  cr_assert_eq(scenario_apply(plain, &k, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(scenario_hash(s), scenario_hash(plain), "a name's hash, as "
               "if no config had been read");
  scenario_free(plain);
  scenario_free(s);
}
