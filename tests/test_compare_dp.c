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
