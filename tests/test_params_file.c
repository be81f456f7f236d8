/* test_params_file: params.json's format line (issue 35, 12: a file that
 * said "geodes-params 2" was read as version 1) — absent or this version
 * read, any other refused at its line with nothing set. */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/params_file.h"
#include "models/params.h"

TestSuite(params_file, .init = params_reset, .fini = params_reset);

static int apply(const char *text, err *e) {
  err_clear(e);
  return params_file_apply_text(text, strlen(text), "p.json", e);
}

Test(params_file, this_version_or_none_is_read) {
  err e;
  cr_assert_eq(apply("{\"format\": \"" PARAMS_FILE_FORMAT "\",\n"
                     " \"params\": {\"gemm_efficiency\": 0.7}}", &e), ERR_OK,
               "%s", e.msg);
  cr_expect_eq(params_get(params_find("gemm_efficiency")), 0.7);
  params_reset();
  cr_assert_eq(apply("{\"params\": {\"gemm_efficiency\": 0.6}}", &e), ERR_OK,
               "%s", e.msg);
  cr_expect_eq(params_get(params_find("gemm_efficiency")), 0.6);
}

Test(params_file, another_version_is_refused_at_its_line) {
  static const struct { const char *format, *msg; } c[] = {
      {"\"geodes-params 2\"", "p.json:2: format: 'geodes-params 2' is not "
       "\"geodes-params 1\", the version this geodes reads"},
      {"\"geodes-params 1 \"", "p.json:2: format: 'geodes-params 1 ' is not"},
      {"\"\"", "p.json:2: format: '' is not \"geodes-params 1\""},
      {"1", "p.json:2: format: must be the string \"geodes-params 1\""},
      {"null", "p.json:2: format: must be the string"}};
  double before = params_get(params_find("gemm_efficiency"));
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    char text[256];
    snprintf(text, sizeof text, "{\"params\": {\"gemm_efficiency\": 0.7},\n"
             " \"format\": %s}", c[i].format);
    err e;
    cr_assert_eq(apply(text, &e), ERR_PARSE, "%s", c[i].format);
    cr_expect(strncmp(e.msg, c[i].msg, strlen(c[i].msg)) == 0, "%s: %s",
              c[i].format, e.msg);
    cr_expect_eq(params_get(params_find("gemm_efficiency")), before,
                 "nothing set");
  }
}

/* The params object of a fit: the fitted ones in their order with their
 * uncertainties (none where NAN), then every other parameter set away
 * from its built-in (the naive reference: a walk of the table). */
Test(params_file, fitted_then_the_others_set) {
  int a = params_find("gemm_efficiency"), b = params_find("memory_efficiency");
  int c = params_find("megatron_p2p_call_s");
  cr_assert(a >= 0 && b >= 0 && c >= 0);
  cr_assert(params_set(a, 0.5) && params_set(b, 0.6) && params_set(c, 0.02));
  int ids[] = {b, a};
  double sigma[] = {0.01, NAN};
  json_t *o = params_file_json(ids, sigma, 2);
  const char *want[PARAMS_N + 2] = {params_table[b].name,
                                    params_table[a].name};
  int n = 2;
  for (int p = 0; p < PARAMS_N; p++)
    if (p != a && p != b && params_get(p) != params_table[p].def)
      want[n++] = params_table[p].name;
  cr_assert_eq(n, 3);
  cr_assert_eq(json_object_size(o), (size_t)n);
  int k = 0;
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    cr_expect_str_eq(key, want[k], "entry %d", k);
    int id = params_find(key);
    cr_expect_eq(json_real_value(json_object_get(v, "value")),
                 params_get(id));
    cr_expect_eq(json_real_value(json_object_get(v, "default")),
                 params_table[id].def);
    cr_expect_str_eq(json_string_value(json_object_get(v, "unit")),
                     params_table[id].unit);
    cr_expect_eq(json_object_get(v, "uncertainty") != NULL, k == 0);
    k++;
  }
  cr_expect_eq(json_real_value(json_object_get(json_object_get(
                   o, params_table[b].name), "uncertainty")), 0.01);
  json_decref(o);
}
