/* test_cli_setup: what every command's output states about its run
 * (sim/cli/cli_setup.c) — the physical parameters --params changed, in the
 * table and in --json, on every command that takes --params (issue 33: they
 * were stated nowhere but in the window). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_setup, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 600);

#define SMALL GEODES_FIXTURES "/analysis/three-sites.json"

/* Every command that runs a scenario under --params, its table's and its
 * --json's arguments. */
static const char *const COMMANDS[] = {
    "simulate " SMALL " --method dtfm-identity",
    "simulate " SMALL " --method dtfm-identity --iterations 2",
    "predict " SMALL " --method dtfm-identity",
    "explain " SMALL " --method dtfm-identity --top 0",
    "schedule " SMALL " --method greedy",
    "schedule " SMALL " --shape auto --simulate-best 1 --quiet",
    "validate " SMALL " --samples 4 --quiet",
};

Test(cli_setup, params_stated_in_every_output) {
  const char *params = support_write_file(
      support_path("p.json"), "{\"format\": \"geodes-params 1\", \"params\": "
      "{\"gemm_efficiency\": 0.7}}");
  support_run r = {0};
  for (size_t i = 0; i < sizeof COMMANDS / sizeof *COMMANDS; i++) {
    const char *c = COMMANDS[i];
    cr_assert_eq(support_geodes(&r, "%s --params '%s'", c, params), 0,
                 "%s: %s", c, r.err);
    cr_expect(strstr(r.out, "params      gemm_efficiency 0.7 fraction "
                     "(built-in 0.78)\n"), "%s: %s", c, r.out);
    cr_assert_eq(support_geodes(&r, "%s --params '%s' --json", c, params), 0,
                 "%s: %s", c, r.err);
    json_t *o = json_loads(r.out, 0, NULL);
    cr_assert_not_null(o, "%s: %s", c, r.out);
    json_t *p = json_object_get(o, "params");
    cr_expect_eq(json_object_size(p), 1, "%s: %s", c, r.out);
    cr_expect_eq(json_real_value(json_object_get(p, "gemm_efficiency")), 0.7,
                 "%s", c);
    json_decref(o);
    cr_assert_eq(support_geodes(&r, "%s --json", c), 0, "%s: %s", c, r.err);
    o = json_loads(r.out, 0, NULL);
    p = json_object_get(o, "params");
    cr_expect(json_is_object(p) && json_object_size(p) == 0,
              "%s: the built-in ones: {}", c);
    json_decref(o);
    cr_assert_eq(support_geodes(&r, "%s", c), 0, "%s: %s", c, r.err);
    cr_expect(!strstr(r.out, "params  "), "%s: no line", c);
  }
  const char *csv = support_write_file(support_path("m.csv"),
                                       "scenario,measured_s\n" SMALL ",3\n");
  cr_assert_eq(support_geodes(&r, "reproduce --data '%s' --params '%s' --json",
                              csv, params), 0, "%s", r.err);
  cr_expect(strstr(r.out, "\"params\":{\"gemm_efficiency\":0.7}"), "%s",
            r.out);
  cr_assert_eq(support_geodes(&r, "reproduce --data '%s' --params '%s'", csv,
                              params), 0, "%s", r.err);
  cr_expect(strstr(r.out, "params      gemm_efficiency 0.7"), "%s", r.out);
  support_run_clear(&r);
}
