/* test_cli_models: `geodes models --show` (sim/cli/cli_specs.c) and a model
 * from its config.json through every front door a user takes: a scenario's
 * workload.model "hf:PATH" simulated, --model hf:PATH, the export, a
 * sweep's model key; bad input at FILE:LINE with exit status 1, a usage
 * error with 2 (issue 34). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_models, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 600);

#define HF GEODES_FIXTURES "/hf/"

static json_t *json_out(const support_run *r) {
  json_t *o = json_loads(r->out, 0, NULL);
  cr_assert_not_null(o, "%s", r->out);
  return o;
}

static double at(const json_t *o, const char *a, const char *b) {
  return json_number_value(json_object_get(json_object_get(o, a), b));
}

Test(cli_models, show_prints_the_counts) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "models --show hf:" HF "llama-2-7b.json"),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "model meta-llama/Llama-2-7b-hf\n"), "%s", r.out);
  cr_expect(strstr(r.out, "parameters     6738415616\n"), "%s", r.out);
  cr_expect(strstr(r.out, "6 N + 12 L h s"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "models --show hf:" HF "mistral-7b.json "
                              "--json"), 0, "%s", r.err);
  json_t *o = json_out(&r);
  cr_expect_eq(at(o, "parameters", "total"), 7241732096.0);
  cr_expect_eq(at(o, "model", "kv_heads"), 8);
  cr_expect_eq(json_number_value(json_object_get(
                   o, "activation_bytes_per_sequence")),
               32768.0 * 4096 * 2);
  json_decref(o);
  cr_assert_eq(support_geodes(&r, "models --show GPT3-XL --json"), 0, "%s",
               r.err);
  o = json_out(&r);
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(o, "model"), "attention")), "eager");
  json_decref(o);
  /* the listing keeps the built-ins only */
  cr_assert_eq(support_geodes(&r, "models"), 0);
  cr_expect(strstr(r.out, "intellect-1") && strstr(r.out, "gated/rotary"),
            "%s", r.out);
  support_run_clear(&r);
}

Test(cli_models, show_refuses_bad_input) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "models --show llama-7b"), 2);
  cr_expect(strstr(r.err, "--show llama-7b: unknown model (known: "
                          "gpt3-small,") && strstr(r.err, "or hf:PATH"),
            "%s", r.err);
  cr_expect_eq(support_geodes(&r, "models --json"), 2);
  cr_expect_eq(support_geodes(&r, "models --show gpt3-xl --markdown"), 2);
  const char *bad = support_write_file(support_path("bad.json"),
                                       "{\"model_type\": \"llama\",\n"
                                       "\"hidden_size\": 0}\n");
  cr_expect_eq(support_geodes(&r, "models --show 'hf:%s'", bad), 1);
  cr_expect(strstr(r.err, "bad.json:2: hidden_size: must be in [1, "
                          "16777216], not 0"), "%s", r.err);
  support_run_clear(&r);
}

/* A scenario whose model is a config beside it simulates, names the model
 * in its outputs and exports the config's dimensions; --model hf:PATH
 * reads a config from the working directory, a bad one is refused at its
 * line. */
Test(cli_models, a_config_through_the_scenario_and_the_option) {
  const char *scen = HF "llama-2-7b-four-cities.json";
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--json", scen), 0, "%s", r.err);
  json_t *o = json_out(&r);
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(o, "workload"), "model")),
                   "meta-llama/Llama-2-7b-hf");
  double t = json_number_value(json_object_get(o, "iteration_s"));
  cr_expect_gt(t, 0);
  json_decref(o);
  const char *out = support_path("exported.json");
  cr_assert_eq(support_geodes(&r, "scenarios --export '%s' -o '%s'", scen,
                              out), 0, "%s", r.err);
  char *text = support_read_file(out, NULL);
  cr_expect(strstr(text, "\"intermediate_size\"") == NULL &&
                strstr(text, "\"ffn\": 11008"), "%s", text);
  free(text);
  scenario *a = support_scenario(scen), *b = support_scenario(out);
  cr_expect_eq(scenario_hash(a), scenario_hash(b));
  scenario_free(a);
  scenario_free(b);
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--json", out), 0, "%s", r.err);
  o = json_out(&r);
  cr_expect_eq(json_number_value(json_object_get(o, "iteration_s")), t,
               "the export simulates the same iteration");
  json_decref(o);
  /* --model from the working directory; the model's own depth */
  cr_assert_eq(support_sh(&r, "cd '%s' && '%s' simulate worldwide --method "
                          "dtfm-identity --model "
                          "hf:tests/fixtures/hf/gpt2-xl.json --gpu A100 "
                          "--json", GEODES_SOURCE_DIR, GEODES_BIN), 0, "%s",
               r.err);
  o = json_out(&r);
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(o, "workload"), "model")), "gpt2-xl");
  cr_expect_eq(json_integer_value(json_object_get(
                   json_object_get(o, "workload"), "layers")), 48);
  json_decref(o);
  const char *bad = support_write_file(support_path("cfg.json"),
                                       "{\"model_type\": \"gpt2\",\n"
                                       "\"n_embd\": 1600, \"n_layer\": 48,\n"
                                       "\"n_head\": 24, \"n_positions\": 1024,"
                                       " \"vocab_size\": 50257}\n");
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                              "--model 'hf:%s'", bad), 1);
  cr_expect(strstr(r.err, "cfg.json:3: n_head: 24 heads do not divide n_embd "
                          "1600"), "%s", r.err);
  support_run_clear(&r);
}

/* A sweep's model key takes hf:PATH beside the sweep file: one row per
 * model, the config's own. */
Test(cli_models, a_sweep_over_a_config_and_a_name) {
  support_write_file(support_path("tiny.json"),
                     "{\"model_type\": \"llama\", \"hidden_size\": 256, "
                     "\"num_hidden_layers\": 4, \"num_attention_heads\": 8, "
                     "\"num_key_value_heads\": 2, \"intermediate_size\": 688, "
                     "\"vocab_size\": 32000, \"max_position_embeddings\": "
                     "512}");
  support_write_file(
      support_path("two.json"),
      "{\"name\": \"two\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
      "\"gpu\": \"A100\"}], \"network\": {\"latency_ms\": 1, "
      "\"bandwidth_gbps\": 10}, \"workload\": {\"model\": \"gpt3-small\", "
      "\"batch\": 8, \"micro_batch\": 1, \"stages\": 2, \"replicas\": 1}}");
  const char *sw = support_write_file(support_path("sw.json"),
                                      "{\"scenario\": \"two.json\", \"model\":"
                                      " [\"hf:tiny.json\", \"gpt3-small\"]}");
  const char *db = support_path("s.db");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results"), 2);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "point_key LIKE '% model=hf:%tiny.json%'"),
               1);
  /* a bad config fails the sweep before its first point, at the key */
  support_write_file(support_path("tiny.json"), "{\"model_type\": \"llama\"}");
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("t.db")), 1);
  cr_expect(strstr(r.err, "sw.json:1: model: ") &&
                strstr(r.err, "tiny.json:1: hidden_size: missing"),
            "%s", r.err);
  support_run_clear(&r);
}
