/* test_formats: traces/FORMATS.md is the reference users read (issue 20,
 * 1), so every key a reader takes must be in it: each key of the scenario
 * loader's lists (top level, sites, network, links, overrides) and of
 * WORKLOAD_MAP's rows (workload, cost) as `prefix.key` in the scenario
 * section, each sweep key, each results column and each optional column
 * of a trace CSV (its path keys) as a row "| `key` |" of its section. A
 * key added to a reader without a line in the reference fails here. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/db.h"
#include "analysis/sweep.h"
#include "tests/support.h"
#include "traces/model_hf.h"
#include "traces/trace.h"

/* The text of FORMATS.md between the heading "## title" and the next
 * "## " heading (malloc'd). */
static char *section(const char *title) {
  char *all = support_read_file(GEODES_SOURCE_DIR "/traces/FORMATS.md", NULL);
  char head[128];
  snprintf(head, sizeof head, "\n## %s\n", title);
  char *a = strstr(all, head);
  cr_assert_not_null(a, "FORMATS.md has no section '%s'", title);
  a += strlen(head);
  char *b = strstr(a, "\n## ");
  size_t n = b ? (size_t)(b - a) : strlen(a);
  char *s = strndup(a, n);
  free(all);
  return s;
}

/* "`prefix.key`" (or "`key`" with an empty prefix) is in text. */
static void expect_key(const char *text, const char *prefix, const char *key,
                       const char *what) {
  char want[160];
  snprintf(want, sizeof want, "`%s%s`", prefix, key);
  cr_expect(strstr(text, want), "%s key %s%s is not documented in "
            "traces/FORMATS.md", what, prefix, key);
}

Test(formats, every_scenario_key_is_documented) {
  char *s = section("Scenario file");
  struct { const char *const *keys; const char *prefix; } lists[] = {
      {scenario_top_keys, ""},
      {scenario_site_keys, "sites[]."},
      {scenario_site_info_keys, "sites[]."},
      {scenario_network_keys, "network."},
      {scenario_link_keys, "network.links[]."},
      {scenario_override_keys, "network.overrides[]."}};
  int n = 0;
  for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
    for (const char *const *k = lists[l].keys; *k; k++, n++)
      expect_key(s, lists[l].prefix, *k, "scenario");
  /* the workload's and cost's keys: WORKLOAD_MAP's rows */
  for (int r = 0; r < WORKLOAD_NFIELDS; r++, n++) {
    const workload_row *row = &workload_rows[r];
    if (row->target == WORKLOAD_IN_WORKLOAD)
      expect_key(s, "workload.", row->key, "scenario");
    if (row->target == WORKLOAD_IN_COST)
      expect_key(s, "cost.", row->key, "scenario");
  }
  cr_expect_gt(n, 40, "the lists hold the loader's keys");
  /* workload.model's object, and the keys of a config.json read */
  for (const char *const *k = model_object_keys; *k; k++, n++)
    expect_key(s, "workload.model.", *k, "model object");
  for (const char *const *k = model_hf_keys; *k; k++, n++)
    expect_key(s, "", *k, "config.json");
  for (const char *const *k = model_hf_types; *k; k++, n++)
    expect_key(s, "", *k, "model_type");
  free(s);
}

Test(formats, every_sweep_key_is_documented) {
  char *s = section("Sweep file");
  size_t n = 0;
  for (; sweep_key_name(n); n++) {
    char row[96];
    snprintf(row, sizeof row, "| `%s` |", sweep_key_name(n));
    cr_expect(strstr(s, row), "sweep key %s is not documented in "
              "traces/FORMATS.md", sweep_key_name(n));
  }
  cr_expect_gt(n, 20);
  free(s);
}

Test(formats, every_results_column_is_documented) {
  char *s = section("Results database");
#define COL_(f, col, type, sql, absent, since, origin) col,
  static const char *const cols[] = {DB_RESULT_MAP(COL_) NULL};
#undef COL_
  for (const char *const *c = cols; *c; c++) {
    char row[96];
    snprintf(row, sizeof row, "| `%s` |", *c);
    cr_expect(strstr(s, row), "results column %s is not documented in "
              "traces/FORMATS.md", *c);
  }
  free(s);
}

Test(formats, every_trace_column_is_documented) {
  char *s = section("Trace CSV");
  for (int k = 0; k < TRACE_NPATH_KEYS; k++) {
    char row[96];
    snprintf(row, sizeof row, "| `%s` |", trace_path_keys[k].name);
    cr_expect(strstr(s, row), "trace column %s is not documented in "
              "traces/FORMATS.md", trace_path_keys[k].name);
  }
  free(s);
}
