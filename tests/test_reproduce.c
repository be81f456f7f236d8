/* test_reproduce: `geodes reproduce` against DT-FM's measured times. The
 * calibration table is built in: a missing or malformed table, a row that
 * does not simulate, or an agreement worse than the one stated fails here.
 * The bounds are the measured ones, so a change to the engine that moves
 * them shows; and the table analysis/VALIDATION.md prints ("The
 * calibration table") is recomputed from the same run, cell by cell. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "tests/support.h"

TestSuite(reproduce, .init = support_dir_make, .fini = support_dir_remove);

/* The |error| of the rows of table (NULL: any) and system (NULL: any)
 * under model: their median and worst, and how many. */
static int summary(json_t *rows, const char *table, const char *system,
                   const char *model, double *median, double *worst) {
  double v[256];
  int n = 0;
  char key[32];
  snprintf(key, sizeof key, "%s_error", model);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *r = json_array_get(rows, i);
    if (table &&
        strcmp(json_string_value(json_object_get(r, "table")), table) != 0)
      continue;
    if (system &&
        strcmp(json_string_value(json_object_get(r, "system")), system) != 0)
      continue;
    json_t *e = json_object_get(r, key);
    if (json_is_null(e)) continue;
    cr_assert_lt(n, 256);
    v[n++] = fabs(json_number_value(e));
  }
  for (int i = 1; i < n; i++) /* insertion sort: a few dozen values */
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  if (n == 0) return 0;
  *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  *worst = v[n - 1];
  return n;
}

static void expect_within(json_t *rows, const char *table, const char *system,
                          int rows_want, double median_max, double worst_max) {
  const char *models[] = {"netem", "tcp"};
  for (int m = 0; m < 2; m++) {
    if (strcmp(table, "p2p") == 0 && m == 0) continue; /* tcp only */
    double med, worst;
    int n = summary(rows, table, system, models[m], &med, &worst);
    cr_expect_eq(n, rows_want, "%s %s %s: %d rows", table,
                 system ? system : "", models[m], n);
    cr_expect_leq(med, median_max, "%s %s %s: median %.3f", table,
                  system ? system : "", models[m], med);
    cr_expect_leq(worst, worst_max, "%s %s %s: worst %.3f", table,
                  system ? system : "", models[m], worst);
  }
}

/* "M % / W %" of the rows of table and system under model, "—" when none
 * (netem has no point-to-point rows), into buf. */
static void cell(json_t *rows, const char *table, const char *system,
                 const char *model, char *buf, size_t size) {
  double med, worst;
  if (summary(rows, table, system, model, &med, &worst) == 0)
    snprintf(buf, size, "—");
  else
    snprintf(buf, size, "%.1f %% / %.1f %%", 100 * med, 100 * worst);
}

/* One row of the page's table: "| label (`table` `system`) | rows | tcp |
 * netem |"; false when line is not a row of it. */
static bool expect_page_row(json_t *rows, const char *line) {
  char label[256], count[16], tcp[64], netem[64];
  if (sscanf(line, "| %255[^|]| %15[^ |] | %63[^|]| %63[^|]|", label, count,
             tcp, netem) != 4 || !strchr(label, '`') ||
      strspn(count, "0123456789") != strlen(count))
    return false; /* the header, the rule, or not a row */
  char table[32] = "", system[32] = "";
  const char *key = strchr(label, '`');
  sscanf(key, "`%31[^`]` `%31[^`]`", table, system);
  const char *t = strcmp(table, "all") == 0 ? NULL : table;
  const char *s = system[0] ? system : NULL;
  double med, worst;
  cr_expect_eq(summary(rows, t, s, "tcp", &med, &worst), atoi(count), "%s",
               line);
  char want[64];
  cell(rows, t, s, "tcp", want, sizeof want);
  cr_expect(strncmp(tcp, want, strlen(want)) == 0,
            "analysis/VALIDATION.md, %s %s: tcp %s, geodes reproduce: %s",
            table, system, tcp, want);
  cell(rows, t, s, "netem", want, sizeof want);
  cr_expect(strncmp(netem, want, strlen(want)) == 0,
            "analysis/VALIDATION.md, %s %s: netem %s, geodes reproduce: %s",
            table, system, netem, want);
  return true;
}

/* Every cell of the calibration table in analysis/VALIDATION.md (between
 * its markers) equals the one computed from rows. */
static void expect_page_table(json_t *rows) {
  char *text =
      support_read_file(GEODES_SOURCE_DIR "/analysis/VALIDATION.md", NULL);
  char *at = strstr(text, "<!-- checked by tests/test_reproduce.c -->\n");
  cr_assert_not_null(at, "analysis/VALIDATION.md: no checked table");
  char *end = strstr(at, "<!-- end -->");
  cr_assert_not_null(end);
  *end = '\0';
  int n = 0;
  for (char *line = strtok(at, "\n"); line; line = strtok(NULL, "\n"))
    n += expect_page_row(rows, line);
  cr_expect_geq(n, 8, "analysis/VALIDATION.md: %d checked rows", n);
  free(text);
}

Test(reproduce, agrees_with_dtfm_measurements, .timeout = 900) {
  json_t *o = support_geodes_json("reproduce --json");
  json_t *rows = json_object_get(o, "rows");
  /* every value of shared/data/dtfm_measured: 30 pipeline, 15 + 9
   * homogeneous, 2 x 2 x 10 point-to-point, 15 x 3 + 9 geo */
  cr_assert_eq(json_array_size(rows), 148);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *x = json_array_get(rows, i);
    bool p2p = strcmp(json_string_value(json_object_get(x, "table")), "p2p") == 0;
    cr_expect(json_number_value(json_object_get(x, "measured_s")) > 0);
    cr_expect(json_is_null(json_object_get(x, "netem_s")) == p2p);
    cr_expect(json_number_value(json_object_get(x, "tcp_s")) > 0);
  }
  /* what geodes reproduces (median / worst |error|) */
  expect_within(rows, "pipeline", "dtfm", 30, 0.05, 0.15);
  /* homogeneous: 5.2 % in the median since compute is a roofline; the
   * p3.2xlarge's 0.43, refitted under it on the pipeline and homogeneous
   * rows, stays the least-squares value (0.425 to 0.43) */
  expect_within(rows, "homogeneous", "dtfm", 15, 0.055, 0.15);
  expect_within(rows, "p2p", NULL, 40, 0.05, 0.15);
  expect_within(rows, "geo", "dtfm", 15, 0.05, 0.15);
  /* and what it does not, yet: these are the stated misses
   * (analysis/VALIDATION.md), held so that they cannot grow unnoticed */
  expect_within(rows, "geo", "dtfm_random", 15, 0.12, 0.50);
  expect_within(rows, "homogeneous", "megatron", 9, 0.22, 0.35);
  expect_within(rows, "geo", "megatron", 15, 0.10, 0.35);
  expect_within(rows, "geo", "megatron_random", 9, 0.15, 0.32);
  json_t *sum = json_object_get(o, "summary");
  cr_assert(json_is_object(json_object_get(json_object_get(sum, "all"), "tcp")));
  expect_page_table(rows);
  json_decref(o);
}

Test(reproduce, help_and_usage) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "reproduce --help"), 0);
  cr_expect_not_null(strstr(r.out, "usage: geodes reproduce"));
  cr_assert_eq(support_geodes(&r, "reproduce --bogus"), 2);
  cr_assert_eq(support_geodes(&r, "reproduce extra"), 2);
  support_run_clear(&r);
}
