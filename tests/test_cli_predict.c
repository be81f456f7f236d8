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
#include <sys/wait.h>

#define FIX GEODES_FIXTURES "/models/"

/* Runs `geodes ARGS`, captures stdout or stderr (2>&1 is not used: each
 * stream is checked on its own). Returns the exit status. */
static int geodes(const char *args, char *out, size_t cap, bool err_stream) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' %s %s", GEODES_BIN, args,
           err_stream ? "2>&1 >/dev/null" : "2>/dev/null");
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double field(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  cr_assert(json_is_number(v), "no number '%s'", k);
  return json_number_value(v);
}

Test(cli_predict, json_known_values) {
  static char out[1 << 16];
  cr_assert_eq(geodes("predict worldwide --method dtfm-identity --json", out,
                      sizeof out, false), 0);
  json_error_t je;
  json_t *o = json_loads(out, 0, &je);
  cr_assert_not_null(o, "not one JSON object: %s", out);
  cr_assert(fabs(field(o, "score_s") - 58.666) < 5e-4);
  cr_assert_float_eq(field(o, "dp_cost_s") + field(o, "pp_cost_s"),
                     field(o, "score_s"), 1e-9);
  cr_assert_gt(field(o, "predicted_iteration_s"), 0);
  json_decref(o);
  /* A partition: the multi-dc groups inside one data centre. */
  cr_assert_eq(geodes("predict multi-dc --partition " FIX "groups_megatron.json"
                      " --json", out, sizeof out, false), 0);
  o = json_loads(out, 0, &je);
  cr_assert_not_null(o);
  cr_assert(fabs(field(o, "score_s") - 12.266) < 5e-4);
  json_decref(o);
  /* --activation-gb / --gradient-gb change the score as section 3 says:
   * datacenter identity DP = 7 x 2 x 8 y / (8 x 3.125). */
  cr_assert_eq(geodes("predict datacenter --alloc " FIX "identity.json "
                      "--gradient-gb 2 --json", out, sizeof out, false), 0);
  o = json_loads(out, 0, &je);
  cr_assert_float_eq(field(o, "dp_cost_s"), 7 * 2 * 8 * 2.0 / 25, 1e-9);
  json_decref(o);
}

Test(cli_predict, bad_files_exit_1_naming_file_and_line) {
  static const struct { const char *file, *msg; } cases[] = {
      {"reused.json", "reused.json:4: device 3 is used twice"},
      {"out_of_range.json", "out_of_range.json:9: pipeline 7 stage 7: device 64"},
      {"short_row.json", "short_row.json:9: pipeline 7"},
      {"wrong_rows.json", "wrong_rows.json:9: 7 pipelines, expected 8"},
      {"not_json.json", "not_json.json:5: not JSON"},
      {"unknown_key.json", "unknown_key.json:1: unknown key"},
  };
  char args[1024], out[4096];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(args, sizeof args, "predict worldwide --alloc " FIX "%s", cases[i].file);
    cr_assert_eq(geodes(args, out, sizeof out, true), 1, "%s", cases[i].file);
    cr_assert(strstr(out, cases[i].msg), "%s: '%s'", cases[i].file, out);
  }
  cr_assert_eq(geodes("predict worldwide --partition " FIX "groups_reused.json",
                      out, sizeof out, true), 1);
  cr_assert(strstr(out, "groups_reused.json:3: device 0 is used twice"), "%s", out);
  cr_assert_eq(geodes("predict worldwide --alloc /nonexistent.json", out,
                      sizeof out, true), 1);
  cr_assert(strstr(out, "/nonexistent.json:0: cannot open"), "%s", out);
}

Test(cli_predict, usage_and_method_errors) {
  char out[4096];
  cr_assert_eq(geodes("predict worldwide", out, sizeof out, true), 2);
  cr_assert_eq(geodes("predict worldwide --method megatron --alloc x", out,
                      sizeof out, true), 2);
  cr_assert_eq(geodes("predict worldwide --method megatron --bogus", out,
                      sizeof out, true), 2);
  cr_assert_eq(geodes("predict --help", out, sizeof out, false), 0);
  cr_assert(strstr(out, "--partition"));
  cr_assert_eq(geodes("predict worldwide --method best", out, sizeof out, true), 2);
  cr_assert(strstr(out, "not 'best'"), "%s", out);
  /* A stage that does not fit is reported, not predicted. */
  cr_assert_eq(geodes("predict worldwide --method megatron --layers 96 "
                      "--gpu T4", out, sizeof out, true), 1);
  cr_assert(strstr(out, "T4") && strstr(out, "GB"), "%s", out);
}
