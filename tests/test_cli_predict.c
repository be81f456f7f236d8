/* test_cli_predict: `geodes predict` end to end — the JSON fields of
 * DESIGN.md section 9 with the paper's known values, and bad allocation or
 * partition files: exit 1 with a message naming the file and line; usage
 * errors exit 2. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

#define FIX GEODES_FIXTURES "/models/"

TestSuite(cli_predict, .init = support_dir_make, .fini = support_dir_remove);

static double field(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  cr_assert(json_is_number(v), "no number '%s'", k);
  return json_number_value(v);
}

Test(cli_predict, json_known_values) {
  json_t *o = support_geodes_json("predict worldwide --method dtfm-identity "
                                  "--json");
  cr_assert(fabs(field(o, "score_s") - 58.666) < 5e-4);
  cr_assert_float_eq(field(o, "dp_cost_s") + field(o, "pp_cost_s"),
                     field(o, "score_s"), 1e-9);
  cr_assert_gt(field(o, "predicted_iteration_s"), 0);
  json_decref(o);
  /* A partition: the multi-dc groups inside one data centre. */
  o = support_geodes_json("predict multi-dc --partition " FIX
                          "groups_megatron.json --json");
  cr_assert(fabs(field(o, "score_s") - 12.266) < 5e-4);
  json_decref(o);
  /* --activation-gb / --gradient-gb change the score as section 3 says:
   * datacenter identity DP = 7 x 2 x 8 y / (8 x 3.125). */
  o = support_geodes_json("predict datacenter --alloc " FIX
                          "identity.json --gradient-gb 2 --json");
  cr_assert_float_eq(field(o, "dp_cost_s"), 7 * 2 * 8 * 2.0 / 25, 1e-9);
  json_decref(o);
}

Test(cli_predict, bad_files_exit_1_naming_file_and_line) {
  static const struct { const char *file, *msg; } cases[] = {
      {"reused.json", "reused.json:4: device 3 is used twice"},
      {"out_of_range.json", "out_of_range.json:9: pipeline 7 stage 7: device 64"},
      {"short_row.json", "short_row.json:9: pipeline 7"},
      /* 7 of worldwide's 8 pipelines: the others idle, and its shape
       * does not divide the batch (issue 33: a file's shape is the run's) */
      {"wrong_rows.json", "wrong_rows.json: its 7 pipelines of 8 stages: "
       "worldwide: workload.batch: 1024 is not a multiple of D_dp * m * K "
       "= 7 * 1 * 64"},
      {"not_json.json", "not_json.json:5: not JSON"},
      {"unknown_key.json", "unknown_key.json:1: unknown key"},
  };
  support_run r = {0};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(support_geodes(&r, "predict worldwide --alloc " FIX "%s",
                                cases[i].file),
                 1, "%s", cases[i].file);
    cr_assert(strstr(r.err, cases[i].msg), "%s: '%s'", cases[i].file, r.err);
  }
  cr_assert_eq(support_geodes(&r, "predict worldwide --partition " FIX
                                  "groups_reused.json"),
               1);
  cr_assert(strstr(r.err, "groups_reused.json:3: device 0 is used twice"),
            "%s", r.err);
  cr_assert_eq(
      support_geodes(&r, "predict worldwide --alloc /nonexistent.json"), 1);
  cr_assert(strstr(r.err, "/nonexistent.json: cannot read the allocation: No "
                   "such file"), "%s", r.err);
  support_run_clear(&r);
}

Test(cli_predict, usage_and_method_errors) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "predict worldwide"), 2);
  cr_assert_eq(support_geodes(&r, "predict worldwide --method megatron "
                                  "--alloc x"),
               2);
  cr_assert_eq(support_geodes(&r, "predict worldwide --method megatron "
                                  "--bogus"),
               2);
  cr_assert_eq(support_geodes(&r, "predict --help"), 0);
  cr_assert(strstr(r.out, "--partition"));
  cr_assert_eq(support_geodes(&r, "predict worldwide --method best"), 2);
  cr_assert(strstr(r.err, "not 'best'"), "%s", r.err);
  /* A stage that does not fit is reported, not predicted. */
  cr_assert_eq(support_geodes(&r, "predict worldwide --method megatron "
                                  "--layers 192 --gpu T4"),
               1);
  cr_assert(strstr(r.err, "T4") && strstr(r.err, "GB"), "%s", r.err);
  support_run_clear(&r);
}
