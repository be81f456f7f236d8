/* test_scenario_brief: scenario_load_brief, the load `geodes scenarios`
 * lists with: every built-in reads as in full but without its network
 * (the trace CSV is not parsed), network_static agrees with the full
 * trace's trace_is_static, the listing prints what full loads give, and the
 * scan behind network_static (trace_csv_all_at_zero) against hand-made
 * texts. The full load of every built-in here also keeps the check the
 * listing no longer makes: a built-in trace that does not parse fails. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "tests/support.h"
#include "traces/scenario.h"
#include "traces/trace_csv.h"

static scenario *load(const char *name, bool brief) {
  err e = {0};
  scenario *s = brief ? scenario_load_brief(name, &e) : scenario_load(name, &e);
  cr_assert_not_null(s, "%s: %s", name, e.msg);
  return s;
}

Test(scenario_brief, matches_the_full_load_of_every_builtin) {
  int nvarying = 0;
  for (const char *const *n = scenario_builtin_names(); *n; n++) {
    scenario *b = load(*n, true), *f = load(*n, false);
    cr_assert(b->brief && !f->brief, "%s", *n);
    cr_assert_null(b->network, "%s: a brief load builds no network", *n);
    cr_assert_not_null(f->network, "%s", *n);
    cr_assert_eq(b->network_static, trace_is_static(f->network),
                 "%s: the scan says %d, the trace %d", *n, b->network_static,
                 trace_is_static(f->network));
    cr_assert_eq(f->network_static, trace_is_static(f->network), "%s", *n);
    nvarying += !f->network_static;
    cr_assert_str_eq(b->name, f->name);
    cr_assert_str_eq(b->description, f->description);
    cr_assert_str_eq(b->latency_convention, f->latency_convention);
    cr_assert_str_eq(b->origin, f->origin);
    cr_assert_str_eq(b->trace_file ? b->trace_file : "",
                     f->trace_file ? f->trace_file : "", "%s", *n);
    cr_assert_eq(b->ndevices, f->ndevices, "%s", *n);
    cr_assert_eq(b->nsites, f->nsites, "%s", *n);
    cr_assert_eq(b->noverrides, f->noverrides, "%s", *n);
    for (int i = 0; i < f->nsites; i++) {
      cr_assert_str_eq(b->sites[i].name, f->sites[i].name);
      cr_assert_str_eq(b->sites[i].gpu, f->sites[i].gpu);
      cr_assert_eq(b->sites[i].ndevices, f->sites[i].ndevices);
    }
    cr_assert_str_eq(b->workload.model, f->workload.model);
    cr_assert_eq(b->workload.batch, f->workload.batch);
    scenario_free(b);
    scenario_free(f);
  }
  cr_assert_geq(nvarying, 1, "some built-in varies in time (both answers "
                "of the scan are checked)");
}

/* A scenario file (not a built-in) loads in full even when asked brief. */
Test(scenario_brief, a_file_loads_in_full) {
  const char *path = support_path("s.json");
  support_write_file(path,
                     "{\"name\": \"f\", \"sites\": [{\"name\": \"A\", "
                     "\"devices\": 2, \"gpu\": \"V100\"}], \"network\": "
                     "{\"latency_ms\": 1, \"bandwidth_gbps\": 10}, "
                     "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 2, "
                     "\"batch\": 2, \"micro_batch\": 1, \"stages\": 2, "
                     "\"replicas\": 1}}");
  scenario *s = load(path, true);
  cr_assert_not(s->brief);
  cr_assert_not_null(s->network);
  cr_assert(s->network_static);
  scenario_free(s);
}

/* `geodes scenarios --json` (brief loads) against full loads, key by key;
 * the table and --markdown print the same fields (and the GPUs, compared
 * above). */
Test(scenario_brief, listing_equals_the_full_loads) {
  json_t *root = support_geodes_json("scenarios --json");
  json_t *list = json_object_get(root, "scenarios");
  size_t i = 0;
  for (const char *const *n = scenario_builtin_names(); *n; n++, i++) {
    json_t *o = json_array_get(list, i);
    cr_assert_not_null(o, "%s missing", *n);
    scenario *f = load(*n, false);
    cr_assert_str_eq(json_string_value(json_object_get(o, "name")), f->name);
    cr_assert_eq(json_integer_value(json_object_get(o, "devices")),
                 f->ndevices);
    cr_assert_eq(json_integer_value(json_object_get(o, "sites")), f->nsites);
    json_t *sites = json_object_get(o, "site_names");
    cr_assert_eq(json_array_size(sites), (size_t)f->nsites);
    for (int k = 0; k < f->nsites; k++)
      cr_assert_str_eq(json_string_value(json_array_get(sites, (size_t)k)),
                       f->sites[k].name);
    cr_assert_str_eq(
        json_string_value(json_object_get(o, "latency_convention")),
        f->latency_convention);
    cr_assert_str_eq(json_string_value(json_object_get(o, "description")),
                     f->description);
    cr_assert_eq(json_is_true(json_object_get(o, "static")),
                 trace_is_static(f->network), "%s", *n);
    scenario_free(f);
  }
  cr_assert_eq(json_array_size(list), i);
  json_decref(root);
}

static bool at_zero(const char *text) {
  return trace_csv_all_at_zero(text, strlen(text));
}

Test(scenario_brief, scan_of_row_times) {
  static const char head[] = "# source: test\n"
                             "t_s,src,dst,latency_ms,bandwidth_gbps\n";
  char buf[512];
  snprintf(buf, sizeof buf, "%s0,*,*,1,10\n0.0,A,B,2,5\n\n", head);
  cr_assert(at_zero(buf));
  snprintf(buf, sizeof buf, "%s 0 ,*,*,1,10\r\n0e3,A,B,2,5", head);
  cr_assert(at_zero(buf), "blanks, CRLF, no last newline, an exponent");
  snprintf(buf, sizeof buf, "%s0,*,*,1,10\n1e-9,A,B,2,5\n", head);
  cr_assert_not(at_zero(buf), "one nanosecond later");
  snprintf(buf, sizeof buf, "%s0,*,*,1,10\n60,A,B,2,5\n\x01\xff garbage\n",
           head);
  cr_assert_not(at_zero(buf), "stops at the first later row");
  snprintf(buf, sizeof buf, "# loop_after_s: 60\n%s0,*,*,1,10\n", head);
  cr_assert_not(at_zero(buf), "a loop");
  snprintf(buf, sizeof buf, "%s# loop_after_s: 60\n0,*,*,1,10\n", head);
  cr_assert_not(at_zero(buf), "a loop after the header");
  snprintf(buf, sizeof buf, "%s# not a loop_after_s: 1\n0,*,*,1,10\n", head);
  cr_assert(at_zero(buf), "free text naming the key");
  snprintf(buf, sizeof buf, "%sx,*,*,1,10\n", head);
  cr_assert_not(at_zero(buf), "not a time: not known to be static");
  cr_assert(at_zero(""), "no rows: nothing changes (the parser refuses it)");
}
