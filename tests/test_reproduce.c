/* test_reproduce: `geodes reproduce` against DT-FM's measured times. The
 * calibration table is built in: a missing or malformed table, a row that
 * does not simulate, or an agreement worse than the one the README states
 * fails here. The bounds are the measured ones (README "How far to trust
 * the simulator"), so a change to the engine that moves them shows. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "tests/support.h"

TestSuite(reproduce, .init = support_dir_make, .fini = support_dir_remove);

/* The |error| of the rows of table (and system, NULL: any) under model:
 * their median and worst, and how many. */
static int summary(json_t *rows, const char *table, const char *system,
                   const char *model, double *median, double *worst) {
  double v[256];
  int n = 0;
  char key[32];
  snprintf(key, sizeof key, "%s_error", model);
  for (size_t i = 0; i < json_array_size(rows); i++) {
    json_t *r = json_array_get(rows, i);
    if (strcmp(json_string_value(json_object_get(r, "table")), table) != 0)
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

Test(reproduce, agrees_with_dtfm_measurements, .timeout = 900) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "reproduce --json"), 0, "%s", r.err);
  json_t *o = json_loads(r.out, 0, NULL);
  cr_assert_not_null(o);
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
  /* and what it does not, yet: these are the README's stated misses, held
   * so that they cannot grow unnoticed */
  expect_within(rows, "geo", "dtfm_random", 15, 0.12, 0.50);
  expect_within(rows, "homogeneous", "megatron", 9, 0.22, 0.35);
  expect_within(rows, "geo", "megatron", 15, 0.10, 0.35);
  expect_within(rows, "geo", "megatron_random", 9, 0.15, 0.32);
  json_t *sum = json_object_get(o, "summary");
  cr_assert(json_is_object(json_object_get(json_object_get(sum, "all"), "tcp")));
  json_decref(o);
  support_run_clear(&r);
}

Test(reproduce, help_and_usage) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "reproduce --help"), 0);
  cr_expect_not_null(strstr(r.out, "usage: geodes reproduce"));
  cr_assert_eq(support_geodes(&r, "reproduce --bogus"), 2);
  cr_assert_eq(support_geodes(&r, "reproduce extra"), 2);
  support_run_clear(&r);
}
