/* test_scenario_export: `geodes scenarios --export` of every built-in loads
 * back as the same scenario (equal scenario_hash, which covers every site
 * and workload key and every pair of the network, and the same simulated
 * time to the bit for some); inline links by site name with asymmetric
 * directions give exactly the matrix written; device overrides by
 * "Site:index"; the old a/b refused where they could be site numbers; bad
 * links (unknown site, missing direction, duplicate pair, uncovered pair)
 * are FILE:LINE errors with exit status 1; --show marks defaults (issue
 * 20, 2 and 3). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"
#include "traces/scenario_export.h"

TestSuite(scenario_export, .init = support_dir_make,
          .fini = support_dir_remove, .timeout = 600);

static double iteration_s(const char *path) {
  json_t *o = support_geodes_json("simulate '%s' --method dtfm-identity "
                                  "--json", path);
  double t = json_number_value(json_object_get(o, "iteration_s"));
  json_decref(o);
  return t;
}

Test(scenario_export, every_built_in_loads_back_the_same) {
  support_run r = {0};
  for (const char *const *n = scenario_builtin_names(); *n; n++) {
    const char *out = support_path("%s.json", *n);
    cr_assert_eq(support_geodes(&r, "scenarios --export %s -o '%s'", *n, out),
                 0, "%s: %s", *n, r.err);
    scenario *a = support_scenario(*n), *b = support_scenario(out);
    cr_expect_eq(scenario_hash(a), scenario_hash(b), "%s: the export is "
                 "another scenario", *n);
    cr_expect_str_eq(a->name, b->name);
    for (int i = 0; i < a->nsites; i++)
      cr_expect_str_eq(a->sites[i].instance, b->sites[i].instance);
    cr_expect(trace_is_static(a->network) == !b->trace_file ||
              !trace_is_static(a->network), "%s: a static network is "
              "inline", *n);
    scenario_free(a);
    scenario_free(b);
  }
  static const char *const timed[] = {"worldwide", "volunteer-mix",
                                      "worldwide-varying"};
  for (int i = 0; i < 3; i++)
    cr_expect(iteration_s(timed[i]) ==
                  iteration_s(support_path("%s.json", timed[i])),
              "%s", timed[i]);
  /* a varying network needs a file to put its trace beside */
  cr_expect_eq(support_geodes(&r, "scenarios --export worldwide-varying"), 1);
  cr_expect(strstr(r.err, "varies in time"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "scenarios --export nowhere"), 1);
  cr_expect_eq(support_geodes(&r, "scenarios -o x.json"), 2);
  support_run_clear(&r);
}

/* Three sites, asymmetric Oregon <-> Tokyo, a uniform value for the rest. */
static const char THREE[] =
    "{\"name\": \"three\",\n"
    " \"sites\": [\n"
    "  {\"name\": \"Oregon\", \"devices\": 2, \"gpu\": \"A100\"},\n"
    "  {\"name\": \"Ohio\", \"devices\": 2},\n"
    "  {\"name\": \"Tokyo\", \"devices\": 2, \"gpu\": \"T4\"}],\n"
    " \"workload\": {\"model\": \"gpt3-small\", \"batch\": 8,\n"
    "  \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2},\n"
    " \"network\": {\"latency_ms\": 0.5, \"bandwidth_gbps\": 25,\n"
    "  \"links\": [\n"
    "   {\"between\": [\"Oregon\", \"Ohio\"], \"latency_ms\": 25, "
    "\"bandwidth_gbps\": 3},\n"
    "   {\"from\": \"Oregon\", \"to\": \"Tokyo\", \"latency_ms\": 50, "
    "\"bandwidth_gbps\": 1.5},\n"
    "   {\"from\": \"Tokyo\", \"to\": \"Oregon\", \"latency_ms\": 60, "
    "\"bandwidth_gbps\": 0.8}\n"
    "  ],\n"
    "  \"overrides\": [{\"from\": \"Tokyo:0\", \"to\": \"Ohio:1\", "
    "\"latency_ms\": 1, \"bandwidth_gbps\": 7}]}}\n";

Test(scenario_export, inline_links_by_site_name) {
  scenario *s = support_scenario(
      support_write_file(support_path("three.json"), THREE));
  struct { int a, b; double lat, bw; } want[] = {
      {0, 0, 0.5, 25}, {0, 1, 25, 3}, {1, 0, 25, 3}, {0, 2, 50, 1.5},
      {2, 0, 60, 0.8}, {1, 2, 0.5, 25}, {2, 2, 0.5, 25}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    trace_value v = trace_at(s->network, want[i].a, want[i].b, 0);
    cr_expect(v.latency_ms == want[i].lat && v.bandwidth_gbps == want[i].bw,
              "%d -> %d: %g ms %g Gbit/s", want[i].a, want[i].b, v.latency_ms,
              v.bandwidth_gbps);
  }
  cr_assert_eq(s->noverrides, 1);
  cr_expect(s->overrides[0].a == 4 && s->overrides[0].b == 3);
  cr_expect_eq(scenario_link(s, 3, 4, 0).bandwidth_gbps, 7);
  cr_expect_eq(scenario_link(s, 0, 5, 0).latency_ms, 50);
  cr_expect_eq(scenario_link(s, 5, 0, 0).latency_ms, 60);
  /* export and reload: the same scenario */
  support_run r = {0};
  const char *out = support_path("three-export.json");
  cr_assert_eq(support_geodes(&r, "scenarios --export '%s' -o '%s'",
                              support_path("three.json"), out), 0, "%s",
               r.err);
  scenario *b = support_scenario(out);
  cr_expect_eq(scenario_hash(s), scenario_hash(b));
  scenario_free(b);
  scenario_free(s);
  support_run_clear(&r);
}

/* THREE with one edit, expected to fail at FILE:LINE naming key. */
static void expect_bad(const char *from, const char *to, int line,
                       const char *key, const char *msg) {
  const char *p = strstr(THREE, from);
  cr_assert_not_null(p, "%s", from);
  char text[4096];
  snprintf(text, sizeof text, "%.*s%s%s", (int)(p - THREE), THREE, to,
           p + strlen(from));
  const char *path = support_write_file(support_path("bad.json"), text);
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity",
                              path), 1, "%s: %s", key, r.err);
  char head[1024];
  snprintf(head, sizeof head, "%s:%d: %s", path, line, key);
  cr_expect(strstr(r.err, head) && strstr(r.err, msg), "want '%s ... %s', "
            "got %s", head, msg, r.err);
  support_run_clear(&r);
}

Test(scenario_export, bad_links_and_overrides) {
  expect_bad("\"to\": \"Tokyo\"", "\"to\": \"Osaka\"", 11,
             "network.links[1].to", "no site called 'Osaka'");
  expect_bad("[\"Oregon\", \"Ohio\"]", "[\"Oregon\", \"Ohio:1\"]", 10,
             "network.links[0].between", "(a pair of devices goes in "
             "network.overrides)");
  expect_bad("   {\"from\": \"Tokyo\", \"to\": \"Oregon\", \"latency_ms\": 60, "
             "\"bandwidth_gbps\": 0.8}\n",
             "   {\"between\": [\"Ohio\", \"Oregon\"], \"latency_ms\": 60, "
             "\"bandwidth_gbps\": 0.8}\n", 12, "network.links[2].between",
             "Ohio -> Oregon is already given by links[0]");
  expect_bad(",\n   {\"from\": \"Tokyo\", \"to\": \"Oregon\", \"latency_ms\": "
             "60, \"bandwidth_gbps\": 0.8}\n", "\n", 11,
             "network.links[1].from", "Tokyo -> Oregon is missing");
  expect_bad("\"latency_ms\": 0.5, \"bandwidth_gbps\": 25,\n", "", 8,
             "network.links", "no link from Oregon to Oregon");
  expect_bad("\"links\": [", "\"trace\": \"x.csv\", \"links\": [", 9,
             "network.trace", "not both");
  expect_bad("\"Tokyo:0\"", "\"Tokyo:2\"", 14, "network.overrides[0].from",
             "Tokyo has devices 0..1");
  expect_bad("\"Tokyo:0\"", "\"Tokyo\"", 14, "network.overrides[0].from",
             "is not \"Site:index\"");
  expect_bad("\"from\": \"Tokyo:0\", \"to\": \"Ohio:1\"", "\"a\": 1, \"b\": 2",
             14, "network.overrides[0].a", "could be site numbers");
  expect_bad("\"from\": \"Tokyo:0\", \"to\": \"Ohio:1\"",
             "\"from\": \"Tokyo:0\", \"device_b\": 3", 14,
             "network.overrides[0]", "name the two devices once");
  /* device ids beyond the site numbers, and explicit ids, still load */
  support_run r = {0};
  static const char *const ok[] = {"\"a\": 4, \"b\": 3",
                                   "\"device_a\": 1, \"device_b\": 2"};
  for (int i = 0; i < 2; i++) {
    const char *from = "\"from\": \"Tokyo:0\", \"to\": \"Ohio:1\"";
    const char *p = strstr(THREE, from);
    char text[4096];
    snprintf(text, sizeof text, "%.*s%s%s", (int)(p - THREE), THREE, ok[i],
             p + strlen(from));
    scenario *s = support_scenario(
        support_write_file(support_path("ok%d.json", i), text));
    cr_expect_eq(s->noverrides, 1);
    scenario_free(s);
  }
  support_run_clear(&r);
}

Test(scenario_export, show_marks_defaults) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "scenarios --show '%s'",
                              support_write_file(support_path("three.json"),
                                                 THREE)), 0, "%s", r.err);
  static const char *const lines[] = {
      "sites[1].gpu                       \"V100\"   (default)\n",
      "sites[0].gpu                       \"A100\"\n",
      "sites[0].nccl_sockets              1   (default)\n",
      "workload.runtime                   \"modern\"   (default)\n",
      "workload.batch                     8\n",
      "seed                               1   (default)\n",
      "workload.layers                    12 (the model's depth)   (default)\n",
      "sites[2].instance                  none   (default"};
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
    cr_expect(strstr(r.out, lines[i]), "no line '%s' in\n%s", lines[i], r.out);
  support_run_clear(&r);
}

/* The export writes the shaping, every site's window and each link's path
 * keys, and loads back as the same scenario (issue 31): a user's file under
 * path, a lossy link, a link's measured single stream, a site's window. */
Test(scenario_export, shaping_windows_and_path_keys_load_back_the_same) {
  const char *text =
      "{\"name\": \"keys\", \"sites\": [{\"name\": \"A\", \"devices\": 2},"
      " {\"name\": \"B\", \"devices\": 2, \"tcp_window_bytes\": 6291456}],"
      " \"network\": {\"latency_ms\": 0.5, \"bandwidth_gbps\": 10, \"links\": ["
      "{\"from\": \"A\", \"to\": \"B\", \"latency_ms\": 40, \"bandwidth_gbps\": 2,"
      " \"flow_gbps\": 0.3, \"loss\": 1e-4},"
      "{\"from\": \"B\", \"to\": \"A\", \"latency_ms\": 40, \"bandwidth_gbps\": 2,"
      " \"window_bytes\": 5e6}]},"
      " \"workload\": {\"model\": \"gpt3-small\", \"batch\": 4, \"micro_batch\": 1,"
      " \"stages\": 2, \"replicas\": 2}}";
  const char *in = support_write_file(support_path("keys.json"), text);
  const char *out = support_path("keys-export.json");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "scenarios --export '%s' -o '%s'", in, out),
               0, "%s", r.err);
  char *exported = support_read_file(out, NULL);
  cr_expect(strstr(exported, "\"shaping\": \"path\""), "%s", exported);
  cr_expect(strstr(exported, "\"tcp_window_bytes\": 3145728.0"), "%s", exported);
  cr_expect(strstr(exported, "\"tcp_window_bytes\": 6291456.0"), "%s", exported);
  cr_expect(strstr(exported, "\"flow_gbps\": 0.3, \"loss\": 0.0001"), "%s",
            exported);
  cr_expect(strstr(exported, "\"window_bytes\": 5000000.0"), "%s", exported);
  free(exported);
  scenario *a = support_scenario(in), *b = support_scenario(out);
  cr_expect_eq(scenario_hash(a), scenario_hash(b));
  scenario_free(a);
  scenario_free(b);
  cr_expect(iteration_s(in) == iteration_s(out), "the same bits");
  /* --show names the shaping the file leaves to its default */
  cr_assert_eq(support_geodes(&r, "scenarios --show '%s'", in), 0, "%s", r.err);
  cr_expect(strstr(r.out, "network.shaping                    \"path\"   "
                          "(default)"), "%s", r.out);
  cr_expect(strstr(r.out, "sites[1].tcp_window_bytes          6291456.0\n"),
            "%s", r.out);
  support_run_clear(&r);
}

/* What put writes of v, as text (malloc'ed). */
static char *text_of(void (*put)(const json_t *, FILE *), const json_t *v) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  put(v, f);
  fclose(f);
  return text;
}

/* The writer alone: every built-in's export written and read back is the
 * same JSON (each real the same double: json_equal compares them with ==),
 * a key per line at the top. */
Test(scenario_export, written_reads_back_the_same_json) {
  for (const char *const *n = scenario_builtin_names(); *n; n++) {
    scenario *s = support_scenario(*n);
    json_t *o = scenario_export(s, NULL);
    char *text = text_of(scenario_export_write, o);
    size_t len = strlen(text);
    json_error_t je;
    json_t *back = json_loads(text, 0, &je);
    cr_assert_not_null(back, "%s: %s at %d", *n, je.text, je.line);
    cr_expect(json_equal(o, back), "%s: the written export reads back "
              "otherwise", *n);
    cr_expect_eq(strncmp(text, "{\n  \"name\": ", 12), 0, "%s", *n);
    cr_expect_eq(text[len - 1], '\n');
    json_decref(back), json_decref(o);
    free(text);
    scenario_free(s);
  }
}

/* Reals in the fewest digits that read back, positional in [1e-5, 1e16)
 * with ".0" on an integral one; others as they are. */
Test(scenario_export, values_on_one_line) {
  static const struct { double x; const char *want; } r[] = {
      {10, "10.0"}, {0.1, "0.1"}, {1e-5, "0.00001"}, {1e-6, "1e-06"},
      {1e16, "1e+16"}, {1450000, "1450000.0"}, {-2.5, "-2.5"},
      {0.30000000000000004, "0.30000000000000004"}, {3145728, "3145728.0"},
      {123456789012345678.0, "1.2345678901234568e+17"}};
  for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
    json_t *v = json_real(r[i].x);
    char *text = text_of(scenario_export_value, v);
    cr_expect_str_eq(text, r[i].want, "%.17g", r[i].x);
    cr_expect_eq(strtod(text, NULL), r[i].x);
    json_decref(v);
    free(text);
  }
  json_t *o = json_pack("{s:[i,s,b],s:{s:n}}", "a", 1, "x\"y", 1, "b", "c");
  char *text = text_of(scenario_export_value, o);
  cr_expect_str_eq(text, "{\"a\": [1, \"x\\\"y\", true], \"b\": {\"c\": null}}");
  json_decref(o);
  free(text);
}
