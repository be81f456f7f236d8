/* test_paths: a path written inside a file resolves relative to that
 * file's folder, whatever the working directory: a sweep's scenarios and
 * faults, a scenario's trace, a measurements file's scenario. Each case runs
 * geodes from another directory (/) on files in the test's folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "tests/support.h"

TestSuite(paths, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

static const char SCENARIO[] =
    "{\"name\": \"pair\", \"sites\": ["
    "{\"name\": \"A\", \"devices\": 2, \"gpu\": \"A100\"},"
    "{\"name\": \"B\", \"devices\": 2, \"gpu\": \"A100\"}],"
    " \"network\": {\"trace\": \"pair.csv\"},"
    " \"workload\": {\"model\": \"gpt3-small\", \"batch\": 16,"
    " \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}";

static const char TRACE[] =
    "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,10,2\n";

/* The folder sub/ of the test's folder with the scenario, its trace and a
 * fault file; returns sub's path. */
static const char *setup(void) {
  const char *sub = support_path("sub");
  cr_assert_eq(support_sh(NULL, "mkdir -p '%s'", sub), 0);
  support_write_file(support_path("sub/pair.json"), SCENARIO);
  support_write_file(support_path("sub/pair.csv"), TRACE);
  cr_assert_eq(support_geodes(NULL, "faults synth '%s/pair.json' "
                              "--duration-s 1000 --seed 3 --monthly-frac 0.05 -o '%s/f.csv'",
                              sub, sub), 0);
  return sub;
}

Test(paths, file_beside_is_relative_to_the_file) {
  char *p = file_beside("a/b/s.json", "x.csv");
  cr_expect_str_eq(p, "a/b/x.csv");
  free(p);
  p = file_beside("s.json", "x.csv");
  cr_expect_str_eq(p, "x.csv");
  free(p);
  p = file_beside("a/s.json", "/abs/x.csv");
  cr_expect_str_eq(p, "/abs/x.csv");
  free(p);
  p = file_beside("/r/s.json", "../x.csv");
  cr_expect_str_eq(p, "/r/../x.csv");
  free(p);
}

Test(paths, a_sweeps_files_resolve_beside_it) {
  const char *sub = setup();
  support_write_file(support_path("sub/sweep.json"),
                     "{\"scenario\": [\"pair.json\"], \"iterations\": 2,\n"
                     " \"faults\": [\"f.csv\"]}");
  support_run r = {0};
  /* from /, naming the sweep by its relative path from the test folder */
  cr_expect_eq(support_sh(&r, "cd '%s' && cd / && '%s' sweep '%s/sweep.json' "
                          "--db '%s/o.db'", sub, GEODES_BIN, sub,
                          sub), 0, "%s", r.err);
  support_run_clear(&r);
  cr_expect_eq(support_sql_int(support_path("sub/o.db"),
                               "SELECT count(*) FROM results"), 1);
  /* and from the sweep's own folder, with a relative path to it */
  cr_expect_eq(support_sh(&r, "cd '%s/..' && '%s' sweep sub/sweep.json "
                          "--db sub/p.db", sub, GEODES_BIN), 0,
               "%s", r.err);
  support_run_clear(&r);
  cr_expect_eq(support_sql_int(support_path("sub/p.db"),
                               "SELECT count(*) FROM results"), 1);
}

Test(paths, a_missing_file_names_the_path_tried) {
  const char *sub = setup();
  support_write_file(support_path("sub/bad.json"),
                     "{\"scenario\": [\"nowhere.json\"]}");
  support_run r = {0};
  cr_expect_eq(support_sh(&r, "cd / && '%s' sweep '%s/bad.json' --db "
                          "'%s/b.db'", GEODES_BIN, sub, sub), 1);
  cr_expect(strstr(r.err, "sub/nowhere.json"), "%s", r.err);
  support_run_clear(&r);
}

Test(paths, a_scenarios_trace_and_a_measurement_from_elsewhere) {
  const char *sub = setup();
  support_write_file(support_path("sub/m.csv"),
                     "scenario,method,measured_s\npair.json,dtfm-identity,1\n");
  support_run r = {0};
  cr_expect_eq(support_sh(&r, "cd / && '%s' simulate '%s/pair.json' --method "
                          "random", GEODES_BIN, sub), 0, "%s", r.err);
  support_run_clear(&r);
  cr_expect_eq(support_sh(&r, "cd / && '%s' reproduce --data '%s/m.csv'",
                          GEODES_BIN, sub), 0, "%s", r.err);
  support_run_clear(&r);
}
