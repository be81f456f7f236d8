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
