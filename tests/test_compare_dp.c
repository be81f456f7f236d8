/* test_compare_dp: analysis/compare_dp.py simulates every method on a small
 * two-city scenario and writes its CSV and a non-empty PNG: the hours are
 * the samples over the simulated throughput, int8 pseudo-gradients send
 * half the synchronisation bytes of fp16 ones, DiLoCo's bytes between
 * cities shrink with H, and a replot from the CSV works alone. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support.h"

TestSuite(compare_dp, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

static const char *two_cities(void) {
  return support_write_file(
      support_path("two.json"),
      "{\"name\": \"two\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}, {\"name\": \"b\", \"devices\": "
      "2, \"gpu\": \"V100\", \"nic_gbps\": 10}],\n"
      "\"network\": {\"latency_ms\": 40, \"bandwidth_gbps\": 1},\n"
      "\"workload\": {\"model\": \"gpt3-small\", \"layers\": 12, \"batch\": "
      "8, \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2, "
      "\"micro_batches_per_pass\": 4}}\n");
}

/* Column col of the row whose method is method, from the CSV text. */
static double field(const char *csv, const char *method, int col) {
  const char *line = strstr(csv, method);
  cr_assert_not_null(line, "%s", method);
  while (line > csv && line[-1] != '\n') line--;
  for (int i = 0; i < col; i++) line = strchr(line, ',') + 1;
  return atof(line);
}

Test(compare_dp, writes_the_table_and_the_figure) {
  support_run r = {0};
  const char *out = support_path("out");
  cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out '%s' "
                              "--geodes '%s' --method dtfm-identity "
                              "--samples 8000 --model 'small=%s'",
                          GEODES_SOURCE_DIR, out, GEODES_BIN, two_cities()),
               0, "%s", r.err);
  char *csv = support_read_file(support_path("out/compare_dp.csv"), NULL);
  int rows = 0;
  for (const char *p = csv; (p = strchr(p, '\n')); p++) rows++;
  cr_assert_eq(rows, 8, "a header and 7 methods:\n%s", csv);
  /* columns: model method placement iteration_s samples_per_s util samples
   * hours pp_tb dp_tb wan_tb */
  const char *m[] = {"pipeline (DT-FM)", "DiLoCo H=100,", "DiLoCo H=500"};
  for (int i = 0; i < 3; i++)
    cr_assert_float_eq(field(csv, m[i], 7),
                       8000 / field(csv, m[i], 4) / 3600, 1e-9, "%s", m[i]);
  cr_assert_float_eq(field(csv, "DiLoCo H=100 int8", 9),
                     field(csv, "DiLoCo H=100,", 9) / 2, 1e-15);
  cr_assert_gt(field(csv, "DiLoCo H=50", 10), field(csv, "DiLoCo H=500", 10));
  struct stat st;
  cr_assert_eq(stat(support_path("out/compare_dp.png"), &st), 0);
  cr_assert_gt(st.st_size, 5000);
  cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out '%s/re' "
                              "--from-csv '%s/compare_dp.csv'",
                          GEODES_SOURCE_DIR, out, out),
               0, "%s", r.err);
  cr_assert_eq(stat(support_path("out/re/compare_dp.png"), &st), 0);
  cr_assert_neq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out '%s' "
                               "--samples 0", GEODES_SOURCE_DIR, out), 0);
  free(csv);
  support_run_clear(&r);
}

/* Column col (0-based) of CSV line `line` (1 = the first row), as text;
 * quoted fields are kept whole. Caller frees. */
static char *cell(const char *csv, int line, int col) {
  const char *p = csv;
  for (int i = 0; i < line; i++) p = strchr(p, '\n') + 1;
  for (int c = 0; c < col; c++) {
    for (bool quoted = false; *p && (quoted || *p != ','); p++)
      if (*p == '"') quoted = !quoted;
    p++;
  }
  const char *end = p;
  for (bool quoted = false;
       *end && !strchr("\r\n", *end) && (quoted || *end != ','); end++)
    if (*end == '"') quoted = !quoted;
  return strndup(p, (size_t)(end - p));
}

/* A user's allocation: every row runs on it (the 4-bit row too, unless
 * --place-each), the first row is labelled as the user's allocation, the
 * scenario's name is in the CSV; --jobs does not change a byte. */
Test(compare_dp, a_users_allocation_serves_every_row) {
  support_run r = {0};
  const char *scen = two_cities();
  const char *alloc_file = support_path("mine.json");
  cr_assert_eq(support_geodes(&r, "schedule '%s' --method dtfm-identity "
                                  "-o '%s'", scen, alloc_file),
               0, "%s", r.err);
  for (int jobs = 1; jobs <= 3; jobs += 2)
    cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out "
                                "'%s/j%d' --geodes '%s' --samples 8000 "
                                "--jobs %d --model 'small=%s@%s'",
                            GEODES_SOURCE_DIR, support_path("o"), jobs,
                            GEODES_BIN, jobs, scen, alloc_file),
                 0, "%s", r.err);
  char *one = support_read_file(support_path("o/j1/compare_dp.csv"), NULL);
  char *three = support_read_file(support_path("o/j3/compare_dp.csv"), NULL);
  cr_expect_str_eq(one, three);
  char *label = cell(one, 1, 1);
  cr_expect_str_eq(label, "pipeline (allocation mine.json)");
  free(label);
  for (int line = 1; line <= 7; line++) {
    char *where = cell(one, line, 2), *name = cell(one, line, 11);
    cr_expect_str_eq(where, "mine.json", "row %d", line);
    cr_expect_str_eq(name, "two", "row %d", line);
    free(where), free(name);
  }
  /* --place-each: the 4-bit row is searched with its own sizes. */
  cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out "
                              "'%s/each' --geodes '%s' --samples 8000 "
                              "--method dtfm-identity --place-each "
                              "--model 'small=%s@%s'",
                          GEODES_SOURCE_DIR, support_path("o"), GEODES_BIN,
                          scen, alloc_file),
               0, "%s", r.err);
  char *each = support_read_file(support_path("o/each/compare_dp.csv"), NULL);
  char *where = cell(each, 2, 2), *first = cell(each, 1, 2);
  cr_expect_str_eq(where, "dtfm-identity (own sizes)");
  cr_expect_str_eq(first, "mine.json");
  free(where), free(first), free(each), free(one), free(three);
  support_run_clear(&r);
}

/* --help on the analysis scripts (the studies, plot.py, the example cost
 * models) prints usage and exits 0, touching nothing;
 * a malformed --model is a usage error (2). */
Test(compare_dp, help_and_usage_errors) {
  support_run r = {0};
  char here[512];
  snprintf(here, sizeof here, "%s", support_path("cwd"));
  cr_assert_eq(support_sh(NULL, "mkdir -p '%s'", here), 0);
  cr_expect_eq(support_sh(&r, "cd '%s' && python3 %s/analysis/compare_dp.py "
                              "--help", here, GEODES_SOURCE_DIR),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "--place-each") != NULL, "%s", r.out);
  cr_expect_eq(support_sh(&r, "cd '%s' && sh %s/analysis/policies.sh --help",
                          here, GEODES_SOURCE_DIR),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "usage") != NULL, "%s", r.out);
  cr_expect_eq(support_sh(&r, "cd '%s' && ls", here), 0);
  cr_expect(strstr(r.out, "--help") == NULL, "nothing made: %s", r.out);
  cr_expect_eq(support_sh(&r, "cd '%s' && sh %s/analysis/policies.sh "
                              "--jobz 2", here,
                          GEODES_SOURCE_DIR),
               2, "%s", r.err);
  cr_expect_eq(support_sh(&r, "python3 %s/analysis/plot.py --help",
                          GEODES_SOURCE_DIR),
               0, "%s", r.err);
  static const char *models[] = {"cost_alpa.py", "cost_alphabeta.py"};
  for (int i = 0; i < 2; i++) {
    cr_expect_eq(support_sh(&r, "python3 %s/analysis/%s --help </dev/null",
                            GEODES_SOURCE_DIR, models[i]),
                 0, "%s", r.err);
    cr_expect(strstr(r.out, "usage") != NULL, "%s: %s", models[i], r.out);
  }
  cr_expect_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out '%s' "
                              "--model nolabel 2>/dev/null",
                          GEODES_SOURCE_DIR, support_path("x")),
               2);
  support_run_clear(&r);
}

/* Issue 36: a priced scenario's rows carry the dollars per 1,000 samples
 * and the egress share simulate --json reports; an unpriced one's are
 * empty; the replot from such a CSV draws the dollars panel. */
Test(compare_dp, dollars_per_1k_samples_beside_samples_per_s) {
  char *base = support_read_file(two_cities(), NULL);
  char *text = support_edit(base, "\"nic_gbps\": 10}, {",
                            "\"nic_gbps\": 10, \"usd_per_gpu_hour\": 2, "
                            "\"usd_per_gb\": 0.09}, {");
  char *t2 = support_edit(text, "\"nic_gbps\": 10}],",
                          "\"nic_gbps\": 10, \"usd_per_gpu_hour\": 1, "
                          "\"usd_per_gb\": 0.02}],");
  const char *f = support_write_file(support_path("priced.json"), t2);
  free(base), free(text), free(t2);
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out '%s' "
                              "--geodes '%s' --method dtfm-identity "
                              "--model 'p=%s' --model 'free=%s'",
                          GEODES_SOURCE_DIR, support_path("d"), GEODES_BIN, f,
                          two_cities()), 0, "%s", r.err);
  char *csv = support_read_file(support_path("d/compare_dp.csv"), NULL);
  cr_assert(strstr(csv, ",scenario,usd_per_1k_samples,egress_share\r\n"),
            "%s", csv); /* csv.DictWriter ends a row with CRLF */
  /* the pipeline row of p: its dollars equal simulate's */
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --json", f,
                              support_path("d/alloc-0.json")), 0, "%s", r.err);
  const char *at = strstr(r.out, "\"usd_per_1k_samples\":");
  cr_assert_not_null(at, "%s", r.out);
  double want = atof(at + strlen("\"usd_per_1k_samples\":"));
  const char *row = strstr(csv, "p,pipeline (DT-FM)");
  cr_assert_not_null(row);
  double got = field(row, "p,pipeline (DT-FM)", 12);
  cr_expect(fabs(got - want) <= 1e-9 * want, "%g vs %g", got, want);
  double share = field(row, "p,pipeline (DT-FM)", 13);
  cr_expect(share > 0 && share < 1, "egress share %g", share);
  const char *free_row = strstr(csv, "\nfree,pipeline (DT-FM)");
  cr_assert_not_null(free_row);
  const char *eol = strchr(free_row + 1, '\r');
  cr_expect(eol[-1] == ',' && eol[-2] == ',', "not priced: empty columns");
  struct stat st;
  cr_assert_eq(support_sh(&r, "python3 %s/analysis/compare_dp.py --out "
                              "'%s/re' --from-csv '%s/compare_dp.csv'",
                          GEODES_SOURCE_DIR, support_path("d"),
                          support_path("d")), 0, "%s", r.err);
  cr_assert_eq(stat(support_path("d/re/compare_dp.png"), &st), 0);
  free(csv);
  support_run_clear(&r);
}
