/* test_scenario: the scenario loader against DT-FM's own device matrices
 * (every one of the 20,160 ordered device pairs), hand-written scenarios,
 * the physical and measured variants, every kind of bad input (code and
 * "FILE:LINE: field" message) and the `geodes scenarios` front end. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support.h"
#include "traces/scenario.h"

TestSuite(scenario, .init = support_dir_make, .fini = support_dir_remove);

/* The uniform-10ms example of DESIGN.md section 6, one key per line, split
 * over two sites so the per-site checks have a second element. */
static const char base[] =
    "{\n"                                                           /* 1 */
    "  \"name\": \"bad\",\n"                                        /* 2 */
    "  \"sites\": [\n"                                              /* 3 */
    "    {\"name\": \"a\", \"devices\": 32, \"gpu\": \"V100\"},\n"  /* 4 */
    "    {\"name\": \"b\", \"devices\": 32, \"gpu\": \"V100\"}\n"   /* 5 */
    "  ],\n"                                                        /* 6 */
    "  \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n" /* 7 */
    "  \"workload\": {\n"                                           /* 8 */
    "    \"model\": \"gpt3-xl\",\n"                                 /* 9 */
    "    \"layers\": 24,\n"                                         /* 10 */
    "    \"batch\": 1024,\n"                                        /* 11 */
    "    \"micro_batch\": 1,\n"                                     /* 12 */
    "    \"stages\": 8,\n"                                          /* 13 */
    "    \"replicas\": 8\n"                                         /* 14 */
    "  }\n"                                                         /* 15 */
    "}\n";                                                          /* 16 */

static char *edit(const char *from, const char *to) {
  return support_edit(base, from, to);
}

/* Loads text written to a temp file and checks that it fails with code, a
 * message starting "PATH:LINE: " and naming field. */
static void expect_error(const char *text, int code, int line,
                         const char *field) {
  const char *path = support_write_file(support_path("s.json"), text);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_null(s, "loaded a bad scenario (want %s)", field);
  cr_assert_eq(e.code, code, "code %d, want %d: %s", e.code, code, e.msg);
  cr_assert_eq(strncmp(e.msg, prefix, strlen(prefix)), 0,
               "message '%s' does not start with '%s'", e.msg, prefix);
  cr_assert_not_null(strstr(e.msg, field), "message '%s' does not name %s",
                     e.msg, field);
}

static void expect_edit_error(const char *from, const char *to, int code,
                              int line, const char *field) {
  char *text = edit(from, to);
  expect_error(text, code, line, field);
  free(text);
}

Test(scenario, dtfm_device_matrices_exact) {
  FILE *f = fopen(GEODES_FIXTURES "/dtfm_device_matrices.csv", "r");
  cr_assert_not_null(f);
  char line[256], name[64] = "";
  scenario *s = NULL;
  int rows = 0, pairs[5] = {0};
  static const char *const five[] = {"datacenter", "spot", "multi-dc",
                                     "regional", "worldwide"};
  cr_assert_not_null(fgets(line, sizeof line, f)); /* header */
  while (fgets(line, sizeof line, f)) {
    char sc[64], sa[64], sb[64], delay[32], bw[32];
    int a, b;
    cr_assert_eq(sscanf(line, "%63[^,],%d,%d,%63[^,],%63[^,],%31[^,],%31s", sc,
                        &a, &b, sa, sb, delay, bw),
                 7, "bad fixture line %s", line);
    if (strcmp(sc, name) != 0) {
      scenario_free(s);
      s = support_scenario(sc);
      snprintf(name, sizeof name, "%s", sc);
      cr_assert_eq(s->ndevices, 64);
    }
    cr_assert_str_eq(s->sites[s->device_site[a]].name, sa);
    cr_assert_str_eq(s->sites[s->device_site[b]].name, sb);
    trace_value v = scenario_link(s, a, b, 0);
    cr_assert_eq(v.latency_ms, strtod(delay, NULL), "%s %d->%d delay %g vs %s",
                 sc, a, b, v.latency_ms, delay);
    cr_assert_eq(v.bandwidth_gbps, strtod(bw, NULL), "%s %d->%d bw %g vs %s",
                 sc, a, b, v.bandwidth_gbps, bw);
    for (int i = 0; i < 5; i++)
      if (strcmp(sc, five[i]) == 0) pairs[i]++;
    rows++;
  }
  fclose(f);
  scenario_free(s);
  cr_assert_eq(rows, 20160);
  for (int i = 0; i < 5; i++) cr_assert_eq(pairs[i], 64 * 63, "%s", five[i]);
}

Test(scenario, builtin_defaults_are_dtfms_runs) {
  static const double act[] = {0.28125, 0.28125, 0.28125, 0.4, 0.5};
  static const double grad[] = {1.0, 1.0, 1.0, 0.7, 0.9};
  const char *const *names = scenario_builtin_names();
  for (int i = 0; i < 5; i++) {
    scenario *s = support_scenario(names[i]);
    const scenario_workload *w = &s->workload;
    cr_assert_str_eq(w->model, "gpt3-xl");
    cr_assert_eq(w->layers, 24);
    cr_assert_eq(w->batch, 1024);
    cr_assert_eq(w->micro_batch, 1);
    cr_assert_eq(w->stages * w->replicas, 64);
    cr_assert_eq(w->micro_batches_per_pass, 64);
    cr_assert_str_eq(w->schedule, "gpipe");
    cr_assert_str_eq(w->dp_algo, "central-ps");
    cr_assert(w->recompute);
    cr_assert_eq(s->activation_gb, act[i], "%s", names[i]);
    cr_assert_eq(s->gradient_gb, grad[i], "%s", names[i]);
    cr_assert_str_eq(s->origin, "built-in");
    cr_assert_not_null(strstr(s->latency_convention, "one-way"));
    for (int j = 0; j < s->nsites; j++)
      cr_assert_str_eq(s->sites[j].gpu, "V100");
    scenario_free(s);
  }
}

Test(scenario, builtin_names_listed_and_loadable) {
  static const char *const want[] = {"datacenter",    "spot",
                                     "multi-dc",      "regional",
                                     "worldwide",     "datacenter-physical",
                                     "spot-physical", "worldwide-measured"};
  const char *const *names = scenario_builtin_names();
  cr_assert_eq(names, scenario_builtin_names(), "built once");
  int n = 0;
  for (; names[n]; n++) {
    scenario *s = support_scenario(names[n]);
    cr_assert_str_eq(s->name, names[n]);
    scenario_free(s);
  }
  cr_assert_geq(n, 8);
  for (int i = 0; i < 5; i++) cr_assert_str_eq(names[i], want[i]);
  for (int i = 5; i < 8; i++) {
    bool found = false;
    for (int j = 5; j < n; j++) found |= strcmp(names[j], want[i]) == 0;
    cr_assert(found, "%s not listed", want[i]);
  }
  for (int j = 6; j < n; j++) cr_assert_lt(strcmp(names[j - 1], names[j]), 0);
}

Test(scenario, loads_from_another_working_directory) {
  cr_assert_eq(mkdir(support_path("sub"), 0700), 0);
  support_write_file(support_path("sub/t.csv"),
                     "# source: test\nt_s,src,dst,latency_ms,bandwidth_gbps\n"
                     "0,*,*,3,2\n0,a,b,7,0.5\n");
  char *text = edit("{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
                    "{\"trace\": \"t.csv\"}");
  const char *path = support_write_file(support_path("sub/s.json"), text);
  free(text);
  cr_assert_eq(chdir("/tmp"), 0);
  scenario *w = support_scenario("worldwide");
  cr_assert_eq(scenario_link(w, 0, 63, 0).latency_ms, 124); /* Oregon-Ireland */
  scenario_free(w);
  /* the trace is beside s.json, not here */
  cr_assert_eq(chdir(support_dir()), 0);
  scenario *s = support_scenario(path);
  cr_assert_str_eq(s->origin, path);
  cr_assert_eq(scenario_link(s, 0, 40, 0).latency_ms, 7);
  cr_assert_eq(scenario_link(s, 40, 0, 0).latency_ms, 3);
  cr_assert_eq(scenario_link(s, 0, 1, 0).bandwidth_gbps, 2);
  scenario_free(s);
}

Test(scenario, hand_written_uniform) {
  const char *text =
      "{\"name\": \"uniform-10ms\",\n"
      " \"sites\": [{\"name\": \"aws\", \"devices\": 64, \"gpu\": \"V100\", "
      "\"nic_gbps\": 10}],\n"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 24, \"batch\": "
      "1024,\n"
      "              \"micro_batch\": 1, \"stages\": 8, \"replicas\": 8}}\n";
  scenario *s = support_scenario(
      support_write_file(support_path("u.json"), text));
  cr_assert_str_eq(s->name, "uniform-10ms");
  cr_assert_str_eq(s->description, "");
  cr_assert_eq(s->nsites, 1);
  cr_assert_eq(s->ndevices, 64);
  cr_assert_eq(s->sites[0].nic_gbps, 10);
  cr_assert(!s->sites[0].nic_shared);
  cr_assert_eq(s->seed, 1);
  cr_assert_eq(s->workload.micro_batches_per_pass, 0);
  cr_assert_str_eq(s->workload.schedule, "gpipe");
  cr_assert_str_eq(s->workload.dp_algo, "central-ps");
  cr_assert(s->workload.recompute);
  cr_assert(isnan(s->activation_gb) && isnan(s->gradient_gb));
  cr_assert(trace_is_static(s->network));
  for (int a = 0; a < 64; a++)
    for (int b = 0; b < 64; b++) {
      if (a == b) continue;
      trace_value v = scenario_link(s, a, b, 0);
      cr_assert_eq(v.latency_ms, 10);
      cr_assert_eq(v.bandwidth_gbps, 1);
    }
  scenario_free(s);
}

Test(scenario, overrides_and_optional_keys) {
  char *text = edit(
      "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
      "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1, \"overrides\": "
      "[{\"a\": 0, \"b\": 40, \"latency_ms\": 50, \"bandwidth_gbps\": 0.1}]},\n"
      "  \"seed\": 42, \"description\": \"d\", \"latency_convention\": \"x\",\n"
      "  \"cost\": {\"activation_gb\": 0.5, \"gradient_gb\": 0.9}");
  char *t2 = support_edit(text, "\"replicas\": 8\n",
                       "\"replicas\": 8, \"schedule\": \"1f1b\", "
                       "\"dp_algo\": \"ring\", \"recompute\": false, "
                       "\"micro_batches_per_pass\": 16\n");
  free(text);
  scenario *s =
      support_scenario(support_write_file(support_path("o.json"), t2));
  free(t2);
  cr_assert_eq(s->noverrides, 1);
  cr_assert_eq(scenario_link(s, 0, 40, 0).latency_ms, 50);
  cr_assert_eq(scenario_link(s, 40, 0, 0).bandwidth_gbps, 0.1);
  cr_assert_eq(scenario_link(s, 0, 41, 0).latency_ms, 10);
  cr_assert_eq(scenario_link(s, 1, 40, 0).bandwidth_gbps, 1);
  cr_assert_eq(s->seed, 42);
  cr_assert_str_eq(s->description, "d");
  cr_assert_str_eq(s->latency_convention, "x");
  cr_assert_eq(s->activation_gb, 0.5);
  cr_assert_eq(s->gradient_gb, 0.9);
  cr_assert_str_eq(s->workload.schedule, "1f1b");
  cr_assert_str_eq(s->workload.dp_algo, "ring");
  cr_assert(!s->workload.recompute);
  cr_assert_eq(s->workload.micro_batches_per_pass, 16);
  cr_assert_eq(scenario_site_index(s, "b"), 1);
  cr_assert_eq(scenario_site_index(s, "z"), -1);
  scenario_free(s);
}

Test(scenario, physical_variants) {
  scenario *d = support_scenario("datacenter-physical");
  cr_assert_eq(d->ndevices, 64);
  cr_assert_eq(d->nsites, 8);
  for (int i = 0; i < 8; i++) {
    cr_assert(d->sites[i].nic_shared);
    cr_assert_eq(d->sites[i].nic_gbps, 25);
    cr_assert_eq(d->sites[i].ndevices, 8);
  }
  trace_value in = scenario_link(d, 0, 7, 0), out = scenario_link(d, 0, 8, 0);
  cr_assert_gt(in.bandwidth_gbps, 20 * out.bandwidth_gbps, "NVLink >> NIC");
  cr_assert_eq(out.bandwidth_gbps, 25);
  cr_assert_lt(in.latency_ms, out.latency_ms);
  cr_assert(out.latency_ms > 0 && out.latency_ms < 1, "intra-region < 1 ms");
  scenario_free(d);

  scenario *s = support_scenario("spot-physical");
  cr_assert_eq(s->ndevices, 64);
  int st = scenario_site_index(s, "standalone");
  cr_assert_geq(st, 0);
  cr_assert_eq(s->sites[st].ndevices, 32);
  cr_assert(!s->sites[st].nic_shared);
  cr_assert(s->sites[0].nic_shared);
  cr_assert_eq(s->sites[0].nic_gbps, 10);
  cr_assert_eq(scenario_link(s, 32, 33, 0).bandwidth_gbps, 10);
  cr_assert_gt(scenario_link(s, 0, 1, 0).bandwidth_gbps, 100);
  cr_assert_eq(scenario_link(s, 0, 4, 0).bandwidth_gbps, 10);
  scenario_free(s);
}

Test(scenario, measured_variant_is_half_the_paper_rtt) {
  scenario *m = support_scenario("worldwide-measured");
  scenario *w = support_scenario("worldwide");
  cr_assert_str_eq(m->latency_convention, "RTT/2 (measured)");
  cr_assert_eq(m->nsites, 8);
  for (int i = 0; i < 8; i++)
    cr_assert_str_eq(m->sites[i].name, w->sites[i].name);
  trace_value ov = scenario_link(m, 0, 8, 0); /* Oregon -> Virginia */
  cr_assert(fabs(ov.latency_ms - 34.2) < 1, "%g", ov.latency_ms);
  cr_assert(ov.bandwidth_gbps > 4 && ov.bandwidth_gbps < 5);
  for (int a = 0; a < 64; a += 8)
    for (int b = 0; b < 64; b += 8) {
      if (a == b) continue;
      trace_value vm = scenario_link(m, a, b, 0),
                  vw = scenario_link(w, a, b, 0);
      double r = vm.latency_ms / vw.latency_ms;
      cr_assert(r > 0.4 && r < 0.7, "%d->%d one-way %g vs table RTT %g", a, b,
                vm.latency_ms, vw.latency_ms);
      cr_assert(vm.bandwidth_gbps > 2 && vm.bandwidth_gbps < 5, "64 streams");
    }
  cr_assert_lt(scenario_link(m, 0, 1, 0).latency_ms, 1);
  scenario_free(m);
  scenario_free(w);
}

Test(scenario, bad_unknown_keys) {
  expect_edit_error("\"name\": \"bad\",", "\"name\": \"bad\", \"colour\": 1,",
                    ERR_UNKNOWN, 2, "colour");
  expect_edit_error("{\"name\": \"b\", \"devices\"",
                    "{\"name\": \"b\", \"colour\": 1, \"devices\"", ERR_UNKNOWN,
                    5, "sites[1].colour");
  expect_edit_error("\"replicas\": 8\n", "\"replicas\": 8, \"colour\": 2\n",
                    ERR_UNKNOWN, 14, "workload.colour");
  expect_edit_error("\"bandwidth_gbps\": 1}",
                    "\"bandwidth_gbps\": 1, \"x\": 0}", ERR_UNKNOWN, 7,
                    "network.x");
}

Test(scenario, bad_types_and_values) {
  expect_edit_error("{\"name\": \"b\", \"devices\": 32",
                    "{\"name\": \"b\", \"devices\": \"32\"", ERR_PARSE, 5,
                    "sites[1].devices");
  expect_edit_error("\"layers\": 24", "\"layers\": 2.5", ERR_PARSE, 10,
                    "workload.layers");
  expect_edit_error("\"bandwidth_gbps\": 1", "\"bandwidth_gbps\": 0", ERR_RANGE,
                    7, "network.bandwidth_gbps");
  expect_edit_error("\"bandwidth_gbps\": 1", "\"bandwidth_gbps\": -3",
                    ERR_RANGE, 7, "network.bandwidth_gbps");
  expect_edit_error("\"latency_ms\": 10", "\"latency_ms\": -1", ERR_RANGE, 7,
                    "network.latency_ms");
  expect_edit_error("\"latency_ms\": 10", "\"latency_ms\": 1e999", ERR_PARSE, 7,
                    "invalid JSON");
  expect_edit_error("{\"name\": \"a\", \"devices\": 32",
                    "{\"name\": \"a\", \"devices\": 0", ERR_RANGE, 4,
                    "sites[0].devices");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"nic_gbps\": -10}\n", ERR_RANGE,
                    5, "sites[1].nic_gbps");
  /* NCCL opens 1..64 sockets per connection */
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"nccl_sockets\": 0}\n",
                    ERR_RANGE, 5, "sites[1].nccl_sockets");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"nccl_sockets\": 65}\n",
                    ERR_RANGE, 5, "sites[1].nccl_sockets");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"nccl_sockets\": 2.5}\n",
                    ERR_PARSE, 5, "sites[1].nccl_sockets");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"compute_efficiency\": 0}\n",
                    ERR_RANGE, 5, "sites[1].compute_efficiency");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"compute_efficiency\": 1.5}\n",
                    ERR_RANGE, 5, "sites[1].compute_efficiency");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"flow_gbps\": -5}\n",
                    ERR_RANGE, 5, "sites[1].flow_gbps");
  /* a GPU's memory: (0, 1e4] GB */
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"gpu_memory_gb\": 0}\n",
                    ERR_RANGE, 5, "sites[1].gpu_memory_gb");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"gpu_memory_gb\": 10001}\n",
                    ERR_RANGE, 5, "sites[1].gpu_memory_gb");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"gpu_memory_gb\": \"40\"}\n",
                    ERR_PARSE, 5, "sites[1].gpu_memory_gb");
  expect_edit_error("\"replicas\": 8\n", "\"replicas\": 8, \"runtime\": \"ds\"\n",
                    ERR_UNKNOWN, 14, "workload.runtime");
  expect_edit_error("\"name\": \"bad\",", "\"name\": \"bad\", \"seed\": -1,",
                    ERR_RANGE, 2, "seed");
  expect_error(
      "{\"name\": \"e\",\n \"sites\": [],\n"
      " \"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"
      " \"workload\": {\"model\": \"m\", \"layers\": 1, \"batch\": 1,"
      " \"micro_batch\": 1, \"stages\": 1, \"replicas\": 1}}\n",
      ERR_PARSE, 2, "sites");
  expect_edit_error("\"stages\": 8", "\"stages\": 4", ERR_CONFIG, 13,
                    "workload.stages");
  expect_edit_error("{\"name\": \"b\"", "{\"name\": \"a\"", ERR_DUPLICATE, 5,
                    "sites[1].name");
  expect_edit_error("\"replicas\": 8\n",
                    "\"replicas\": 8, \"schedule\": \"zz\"\n", ERR_UNKNOWN, 14,
                    "workload.schedule");
  expect_edit_error("\"model\": \"gpt3-xl\",\n", "", ERR_MISSING, 8,
                    "workload.model");
  expect_edit_error("\"batch\": 1024", "\"batch\": 1020", ERR_CONFIG, 11,
                    "workload.batch");
  expect_edit_error(
      "\"bandwidth_gbps\": 1}",
      "\"bandwidth_gbps\": 1, \"overrides\": [{\"a\": 0, \"b\": 64, "
      "\"latency_ms\": 1, \"bandwidth_gbps\": 1}]}",
      ERR_RANGE, 7, "network.overrides[0].b");
  expect_edit_error("{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
                    "{\"trace\": 5}", ERR_PARSE, 7, "network.trace");
  expect_edit_error("{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
                    "{\"trace\": \"t.csv\", \"latency_ms\": 1}", ERR_CONFIG, 7,
                    "network.trace");
}

Test(scenario, bad_trace_references) {
  char *text = edit("{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
                    "{\"trace\": \"nope.csv\"}");
  expect_error(text, ERR_IO, 7, "network.trace");
  free(text);

  support_write_file(support_path("t.csv"),
                     "# source: test\n"
                     "t_s,src,dst,latency_ms,bandwidth_gbps\n"
                     "0,a,a,1,1\n0,a,c,1,1\n");
  text = edit("{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
              "{\"trace\": \"t.csv\"}");
  const char *path = support_write_file(support_path("s.json"), text);
  free(text);
  err e = {0};
  cr_assert_null(scenario_load(path, &e));
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/t.csv:4: ", support_dir());
  cr_assert_eq(e.code, ERR_UNKNOWN, "%s", e.msg);
  cr_assert_eq(strncmp(e.msg, prefix, strlen(prefix)), 0, "%s", e.msg);
  cr_assert_not_null(strstr(e.msg, "'c'"), "%s", e.msg);
}

Test(scenario, bad_files) {
  expect_edit_error("\"layers\": 24,", "\"layers\": 24", ERR_PARSE, 11,
                    "invalid JSON");
  expect_error("", ERR_PARSE, 1, "empty");
  expect_error("\n  \n", ERR_PARSE, 1, "empty");
  expect_error("[1, 2]\n", ERR_PARSE, 1, "object");
  expect_edit_error("\"name\": \"bad\",", "\"name\": \"bad\", \"name\": \"x\",",
                    ERR_PARSE, 2, "invalid JSON");
  err e = {0};
  cr_assert_null(scenario_load("/nonexistent/s.json", &e));
  cr_assert_eq(e.code, ERR_IO);
  cr_assert_not_null(strstr(e.msg, "/nonexistent/s.json"));
  err_clear(&e);
  cr_assert_null(scenario_load("no-such-builtin", &e));
  cr_assert_eq(e.code, ERR_IO);
  scenario_free(NULL);
}

Test(scenario, cli_scenarios_json) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "scenarios --json"), 0);
  json_error_t je;
  json_t *root = json_loads(r.out, 0, &je);
  cr_assert_not_null(root, "not JSON: %s", je.text);
  json_t *list = json_object_get(root, "scenarios");
  int n = 0;
  for (const char *const *names = scenario_builtin_names(); *names; names++)
    n++;
  cr_assert_eq(json_array_size(list), (size_t)n);
  json_t *first = json_array_get(list, 0);
  cr_assert_str_eq(json_string_value(json_object_get(first, "name")),
                   "datacenter");
  cr_assert_eq(json_integer_value(json_object_get(first, "devices")), 64);
  cr_assert_eq(json_integer_value(json_object_get(first, "sites")), 8);
  cr_assert_not_null(
      json_string_value(json_object_get(first, "latency_convention")));
  json_decref(root);

  cr_assert_eq(support_geodes(&r, "scenarios"), 0);
  cr_assert_not_null(strstr(r.out, "worldwide-measured"));
  cr_assert_eq(support_geodes(&r, "scenarios --help"), 0);
  cr_assert_eq(support_geodes(&r, "scenarios --bogus 2>&1"), 2);
  cr_assert_eq(support_geodes(&r, "scenarios extra 2>&1"), 2);
  support_run_clear(&r);
}

Test(scenario, cli_run_prints_the_matrix) {
  support_run r = {0};
  const char *db = support_path("run.db");
  cr_assert_eq(support_geodes(&r, "run --db '%s' --samples 6", db), 0);
  cr_assert_not_null(strstr(r.out, "worldwide"));
  cr_assert_not_null(strstr(r.out, "Frankfurt"));
  cr_assert_eq(support_geodes(&r, "run multi-dc --db '%s' --samples 6", db), 0);
  cr_assert_not_null(strstr(r.out, "1.12"));
  cr_assert_eq(support_geodes(&r, "run --help"), 0);
  cr_assert_eq(support_geodes(&r, "run --nope 2>&1"), 2);
  cr_assert_eq(support_geodes(&r, "run --batch 1000 2>&1"), 1);
  const char *path =
      support_write_file(support_path("bad.json"), "{\"name\": 1}\n");
  char prefix[300];
  cr_assert_eq(support_geodes(&r, "run %s 2>&1", path), 1);
  snprintf(prefix, sizeof prefix, "%s:1: name", path);
  cr_assert_not_null(strstr(r.out, prefix), "%s", r.out);
  support_run_clear(&r);
}

/* ---- review fixes: overflow, bounds, duplicates, knobs ---- */

/* replicas * micro_batch * micro_batches_per_pass = 8 * (2^31-1)^2 does not
 * fit in 64 bits: the check must say so, not print a wrapped product. */
Test(scenario, bad_batch_product_overflow) {
  /* the ranges keep the product far from 64 bits: a micro-batch past its
   * range is refused as such */
  char *t = edit("\"micro_batch\": 1,", "\"micro_batch\": 2147483647,");
  expect_error(t, ERR_RANGE, 12, "workload.micro_batch: must be in [1, "
               "1000000], not 2147483647");
  free(t);
  /* and the product itself never wraps, whatever its factors */
  long long per_pass = 0;
  cr_expect_not(scenario_batch_divides(1024, 8, 2147483647, 2147483647,
                                       &per_pass));
  cr_expect_eq(per_pass, -1);
  cr_expect_not(scenario_batch_divides(2147483647, 2147483647, 2147483647,
                                       2147483647, &per_pass));
  cr_expect_eq(per_pass, -1);
}

/* A scenario of n sites of one device each, n stages. */
static char *many_sites(int n) {
  size_t cap = 200 + (size_t)n * 40, len = 0;
  char *t = malloc(cap);
  len += (size_t)snprintf(t + len, cap - len, "{\"name\": \"many\",\n"
                          "\"sites\": [\n");
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(t + len, cap - len, "%s{\"name\": \"s%d\", "
                            "\"devices\": 1}", i ? ",\n" : "", i);
  snprintf(t + len, cap - len, "],\n\"network\": {\"latency_ms\": 1, "
           "\"bandwidth_gbps\": 1},\n\"workload\": {\"model\": \"gpt3-xl\", "
           "\"layers\": %d, \"batch\": 1, \"micro_batch\": 1, \"stages\": %d, "
           "\"replicas\": 1}}\n", n, n);
  return t;
}

/* Sites are quadratic in the trace: 70000 of them used to trip an assertion
 * (site pairs beyond 32 bits); the limit is TRACE_MAX_SITES. */
Test(scenario, bad_too_many_sites) {
  char *t = many_sites(TRACE_MAX_SITES);
  err e = {0};
  scenario *s = scenario_parse(t, strlen(t), "m.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(trace_nsites(s->network), TRACE_MAX_SITES);
  scenario_free(s);
  free(t);
  int counts[] = {TRACE_MAX_SITES + 1, 70000};
  for (int i = 0; i < 2; i++) {
    t = many_sites(counts[i]);
    expect_error(t, ERR_RANGE, 2, "sites");
    free(t);
  }
}

/* No fixed cap but the int range: 8,193 devices load up to the workload's
 * check; more than INT_MAX in all, or in one site, do not. */
Test(scenario, bad_too_many_devices) {
  char *t = edit("\"devices\": 32", "\"devices\": 8161");
  expect_error(t, ERR_CONFIG, 13, "8193 devices");
  free(t);
  t = edit("\"devices\": 32", "\"devices\": 2147483647");
  expect_error(t, ERR_RANGE, 5, "sites[1].devices: more than 2147483647 "
               "devices in all");
  free(t);
  t = edit("\"devices\": 32", "\"devices\": 2147483648");
  expect_error(t, ERR_RANGE, 4, "sites[0].devices");
  free(t);
}

/* Latencies and bandwidths must convert to int64 nanoseconds downstream. */
Test(scenario, bad_link_magnitudes) {
  expect_edit_error("\"latency_ms\": 10", "\"latency_ms\": 1e300", ERR_RANGE,
                    7, "network.latency_ms");
  expect_edit_error("\"bandwidth_gbps\": 1", "\"bandwidth_gbps\": 1e-300",
                    ERR_RANGE, 7, "network.bandwidth_gbps");
  expect_edit_error("\"gpu\": \"V100\"}\n", "\"nic_gbps\": 1e-12}\n",
                    ERR_RANGE, 5, "sites[1].nic_gbps");
  expect_edit_error(
      "\"bandwidth_gbps\": 1}",
      "\"bandwidth_gbps\": 1, \"overrides\": [{\"a\": 0, \"b\": 1, "
      "\"latency_ms\": 1e12, \"bandwidth_gbps\": 1}]}",
      ERR_RANGE, 7, "network.overrides[0].latency_ms");
  /* free communication is still expressible */
  char *t = edit("\"bandwidth_gbps\": 1", "\"bandwidth_gbps\": 1e9");
  err e = {0};
  scenario *s = scenario_parse(t, strlen(t), "s.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  scenario_free(s);
  free(t);
}

/* Two overrides of one pair (either order): scenario_link used whichever
 * came first; now it is an error naming the second. */
Test(scenario, bad_duplicate_overrides) {
  expect_edit_error(
      "\"bandwidth_gbps\": 1}",
      "\"bandwidth_gbps\": 1, \"overrides\": [\n"
      "{\"a\": 0, \"b\": 40, \"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"
      "{\"a\": 3, \"b\": 4, \"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"
      "{\"a\": 40, \"b\": 0, \"latency_ms\": 2, \"bandwidth_gbps\": 2}]}",
      ERR_DUPLICATE, 10, "network.overrides[2].b");
}

/* scenario_apply: every knob checked before anything changes. */
Test(scenario, apply_checks_before_changing) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  err e;
  struct { long layers, batch, mb, kpp; double ls, bs; int code;
           const char *what; } cases[] = {
      {5000000000L, -1, -1, -1, 1, 1, ERR_RANGE, "workload.layers"},
      {-1, 4294967296L, -1, -1, 1, 1, ERR_RANGE, "workload.batch"},
      {-1, -1, 2147483647L, 2147483647L, 1, 1, ERR_RANGE,
       "workload.micro_batch: 2147483647 is not in [1, 1000000]"},
      {-1, 1000, -1, -1, 1, 1, ERR_CONFIG, "workload.batch"},
      {48, -1, -1, -1, 1e9, 1, ERR_RANGE,
       "latency_scale: 1000000000 is not in (0, 1e+06]"},
      {48, -1, -1, -1, 1, 1e-9, ERR_RANGE, "bandwidth scale"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    scenario_knobs_init(&k);
    k.layers = cases[i].layers, k.batch = cases[i].batch;
    k.micro_batch = cases[i].mb, k.micro_batches_per_pass = cases[i].kpp;
    k.latency_scale = cases[i].ls, k.bandwidth_scale = cases[i].bs;
    err_clear(&e);
    cr_assert_eq(scenario_apply(s, &k, &e), cases[i].code, "case %zu: %s", i,
                 e.msg);
    cr_assert(strstr(e.msg, cases[i].what), "'%s' lacks '%s'", e.msg,
              cases[i].what);
    cr_assert_null(strstr(e.msg, "= -"), "%s", e.msg);
    cr_assert_eq(s->workload.layers, 24, "case %zu changed layers", i);
    cr_assert_eq(s->workload.batch, 1024, "case %zu changed batch", i);
    cr_assert_eq(s->workload.micro_batch, 1, "case %zu changed m", i);
    cr_assert_eq(scenario_link(s, 0, 8, 0).latency_ms, 67,
                 "case %zu scaled the links", i);
  }
  scenario_knobs_init(&k);
  k.layers = 48, k.latency_scale = 2;
  err_clear(&e);
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(s->workload.layers, 48);
  cr_assert_eq(scenario_link(s, 0, 8, 0).latency_ms, 134);
  scenario_free(s);
}

/* ---- fuzz: mutated scenario JSON loads or fails cleanly ---- */

static uint64_t fz_state;
static uint64_t fz(uint64_t n) {  /* xorshift64*, fixed seed per test */
  fz_state ^= fz_state >> 12, fz_state ^= fz_state << 25;
  fz_state ^= fz_state >> 27;
  return (fz_state * 0x2545F4914F6CDD1DULL) % n;
}

static const char *const fz_values[] = {
    "-1", "0", "-0", "1.5", "1e308", "1e-300", "2147483647", "2147483648",
    "9223372036854775807", "9223372036854775808", "4294967297", "8193",
    "\"x\"", "null", "true", "[]", "{}", "[[1]]", "{\"a\": {\"b\": []}}",
    "\"\"", "1e999", "64"};

/* text with one mutation (fresh malloc'd copy, NUL-terminated, *len set):
 * bytes flipped to JSON-ish characters, a number replaced by a nasty value,
 * or a duplicate/unknown key injected after a '{'. */
static char *fz_mutate(const char *text, size_t *len) {
  size_t n = strlen(text), cap = n + 64;
  char *t = malloc(cap);
  memcpy(t, text, n + 1);
  static const char alphabet[] = "{}[]\":,-+.eE019 \n\\tfnu\0";
  uint64_t kind = fz(3);
  if (kind == 0) {
    for (int k = 1 + (int)fz(3); k > 0; k--)
      t[fz(n)] = alphabet[fz(sizeof alphabet - 1)];
  } else {
    const char *ins;
    size_t at = fz(n), cut = 0;
    if (kind == 1) {  /* the number at or after `at` */
      while (at < n && !(t[at] >= '0' && t[at] <= '9')) at++;
      while (at + cut < n && strchr("0123456789.eE+-", t[at + cut])) cut++;
      ins = fz_values[fz(sizeof fz_values / sizeof *fz_values)];
    } else {
      while (at < n && t[at] != '{') at++;
      at += at < n;
      ins = fz(2) ? "\"name\": \"dup\", " : "\"zz\": 1, ";
    }
    size_t m = strlen(ins);
    memmove(t + at + m, t + at + cut, n - at - cut + 1);
    memcpy(t + at, ins, m);
    n = n - cut + m;
  }
  *len = n;
  return t;
}

/* A message "NAME:LINE: ..." with LINE >= 1. */
static void fz_assert_located(const err *e, const char *name, int iter) {
  size_t k = strlen(name);
  cr_assert_lt(e->code, 0, "iteration %d", iter);
  cr_assert(strncmp(e->msg, name, k) == 0 && e->msg[k] == ':' &&
                e->msg[k + 1] >= '1' && e->msg[k + 1] <= '9',
            "iteration %d: '%s'", iter, e->msg);
}

Test(scenario, fuzz_mutations_fail_cleanly) {
  char *seeded = edit(
      "\"bandwidth_gbps\": 1}",
      "\"bandwidth_gbps\": 1, \"overrides\": [{\"a\": 0, \"b\": 40, "
      "\"latency_ms\": 5, \"bandwidth_gbps\": 2}]},\n"
      "  \"seed\": 7, \"cost\": {\"activation_gb\": 0.5, \"gradient_gb\": 1}");
  fz_state = 0x5EED5CE7A210ULL;
  int loaded = 0;
  for (int iter = 0; iter < 3000; iter++) {
    size_t len;
    char *t = fz_mutate(seeded, &len);
    err e = {0};
    scenario *s = scenario_parse(t, len, "s.json", &e);
    if (s) {
      loaded++;
      cr_assert_eq(e.code, ERR_OK);
      cr_assert_eq((long)s->workload.stages * s->workload.replicas,
                   s->ndevices, "iteration %d", iter);
      cr_assert(s->ndevices >= 1 && s->ndevices <= 8192);
      cr_assert_eq(trace_nsites(s->network), s->nsites);
      for (int a = 0; a < s->ndevices; a += 7)
        for (int b = 0; b < s->ndevices; b += 5) {
          if (a == b) continue;
          trace_value v = scenario_link(s, a, b, 0);
          cr_assert(v.latency_ms >= 0 && v.latency_ms <= TRACE_MAX_LATENCY_MS &&
                        v.bandwidth_gbps >= TRACE_MIN_BANDWIDTH_GBPS &&
                        isfinite(v.bandwidth_gbps),
                    "iteration %d: %s", iter, t);
        }
      scenario_free(s);
    } else {
      fz_assert_located(&e, "s.json", iter);
    }
    free(t);
  }
  cr_assert_gt(loaded, 100, "the mutations should leave many loadable");
  free(seeded);
}

/* volunteer-mix: worldwide-measured's cities with mixed GPUs; a consumer
 * city's paths carry its access leg (hivemind's on-premise link, 8.383 ms
 * one-way, at most 0.43 Gbit/s) once per consumer end, the rest is
 * worldwide-measured's value (traces/gen/gen_builtins.py). */
Test(scenario, volunteer_mix_composes_the_measured_legs) {
  scenario *v = support_scenario("volunteer-mix");
  scenario *m = support_scenario("worldwide-measured");
  static const char *const gpu[] = {"A100", "H100", "A10G", "RTX4090",
                                    "RTX3090", "L4", "RTX4090", "T4"};
  cr_assert_eq(v->ndevices, 32);
  cr_assert_eq(v->workload.stages * v->workload.replicas, 32);
  bool consumer[8];
  for (int i = 0; i < 8; i++) {
    cr_assert_str_eq(v->sites[i].name, m->sites[i].name);
    cr_assert_str_eq(v->sites[i].gpu, gpu[i]);
    consumer[i] = strncmp(gpu[i], "RTX", 3) == 0;
    cr_assert_eq(v->sites[i].nccl_sockets, consumer[i] ? 1 : 16);
    cr_assert_eq(v->sites[i].nic_gbps, consumer[i] ? 1 : 10);
  }
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++) {
      trace_value got = scenario_link(v, 4 * a, 4 * b + (a == b), 0);
      int ends = consumer[a] + consumer[b];
      if (a == b) {
        cr_assert_eq(got.latency_ms, consumer[a] ? 8.383 : 0.076);
        cr_assert_eq(got.bandwidth_gbps, consumer[a] ? 0.43 : 10);
        continue;
      }
      trace_value w = scenario_link(m, 8 * a, 8 * b, 0);
      cr_assert(fabs(got.latency_ms - (w.latency_ms + 8.383 * ends)) < 2e-3,
                "%s -> %s: %g", v->sites[a].name, v->sites[b].name,
                got.latency_ms);
      double bw = ends ? fmin(w.bandwidth_gbps, 0.43) : w.bandwidth_gbps;
      cr_assert(fabs(got.bandwidth_gbps - bw) < 1e-3);
    }
  scenario_free(m);
  scenario_free(v);
}

/* ---- shaping, path keys and hosts' windows (issue 31) ---- */

/* The keys as a file gives them: the network-level path keys for the pairs
 * links leave out, a link's own, a site's window, the shaping; an override
 * carries latency and bandwidth only. */
Test(scenario, path_keys_shaping_and_windows) {
  char *text = edit(
      "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
      "\"network\": {\"shaping\": \"tc\", \"latency_ms\": 10, "
      "\"bandwidth_gbps\": 1, \"loss\": 1e-5, \"links\": [{\"from\": \"a\", "
      "\"to\": \"b\", \"latency_ms\": 40, \"bandwidth_gbps\": 2, "
      "\"flow_gbps\": 0.25, \"window_bytes\": 4e6}, {\"from\": \"b\", "
      "\"to\": \"a\", \"latency_ms\": 40, \"bandwidth_gbps\": 2}], "
      "\"overrides\": [{\"a\": 0, \"b\": 40, \"latency_ms\": 50, "
      "\"bandwidth_gbps\": 0.1}]}");
  char *t2 = support_edit(text, "{\"name\": \"b\", \"devices\": 32, \"gpu\": \"V100\"",
                       "{\"name\": \"b\", \"devices\": 32, \"gpu\": \"V100\", "
                       "\"tcp_window_bytes\": 1e6");
  free(text);
  scenario *s = support_scenario(support_write_file(support_path("p.json"), t2));
  free(t2);
  cr_assert_eq(s->shaping, SCENARIO_SHAPING_TC);
  trace_value ab = scenario_link(s, 1, 33, 0), ba = scenario_link(s, 33, 1, 0);
  cr_expect(ab.flow_gbps == 0.25 && ab.window_bytes == 4e6 && ab.loss == 0);
  cr_expect(ba.flow_gbps == 0 && ba.window_bytes == 0 && ba.loss == 0);
  trace_value aa = scenario_link(s, 0, 1, 0);
  cr_expect(aa.loss == 1e-5 && aa.latency_ms == 10, "a pair links leave out");
  trace_value ov = scenario_link(s, 0, 40, 0);
  cr_expect(ov.latency_ms == 50 && ov.loss == 0, "an override's own link");
  cr_expect(scenario_overridden(s, 40, 0));
  cr_expect_eq(scenario_path(s, 0, 40), -1, "an overridden pair: private");
  cr_expect_eq(scenario_path(s, 0, 1), -1, "one site: private");
  cr_expect_eq(scenario_path(s, 1, 33), 1, "a -> b: pair 0 x 2 + 1");
  cr_expect_eq(scenario_path(s, 33, 1), 2);
  cr_expect_eq(s->sites[0].tcp_window_bytes, SCENARIO_TCP_WINDOW_DEFAULT);
  cr_expect_eq(s->sites[1].tcp_window_bytes, 1e6);
  scenario_free(s);
  /* a file that does not say: path */
  s = support_scenario(support_write_file(support_path("q.json"), base));
  cr_expect_eq(s->shaping, SCENARIO_SHAPING_PATH);
  scenario_free(s);
}

/* Bad shaping, path keys and windows, each message whole. */
static void expect_message(const char *text, int code, const char *msg) {
  const char *path = support_write_file(support_path("s.json"), text);
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_null(s, "loaded a bad scenario (want %s)", msg);
  cr_expect_eq(e.code, code, "%s", e.msg);
  char want[512];
  snprintf(want, sizeof want, "%s:%s", path, msg);
  cr_expect_str_eq(e.msg, want);
}

Test(scenario, bad_shaping_path_keys_and_windows) {
  static const struct {
    const char *from, *to;
    int code;
    const char *msg;
  } cases[] = {
      {"{\"latency_ms\": 10,", "{\"shaping\": \"tcp\", \"latency_ms\": 10,",
       ERR_UNKNOWN, "7: network.shaping: unknown shaping 'tcp' (tc or path)"},
      {"{\"latency_ms\": 10,", "{\"shaping\": 1, \"latency_ms\": 10,",
       ERR_PARSE, "7: network.shaping: must be a string"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"flow_gbps\": -1}",
       ERR_RANGE, "7: network.flow_gbps: -1 is not >= 1e-06 Gbit/s and finite"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"loss\": 1}",
       ERR_RANGE, "7: network.loss: 1 is not in [0, 1)"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"loss\": -0.5}",
       ERR_RANGE, "7: network.loss: -0.5 is not in [0, 1)"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"window_bytes\": 1000}",
       ERR_RANGE, "7: network.window_bytes: 1000 is not in [1448, "
       "1099511627776] bytes (one TCP segment to 1 TiB)"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"links\": [{\"between\":"
       " [\"a\", \"b\"], \"latency_ms\": 1, \"bandwidth_gbps\": 1, "
       "\"flow_gbps\": \"fast\"}]}",
       ERR_PARSE, "7: network.links[0].flow_gbps: must be a number"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"links\": [{\"between\":"
       " [\"a\", \"b\"], \"latency_ms\": 1, \"bandwidth_gbps\": 1, "
       "\"loss\": 2}]}",
       ERR_RANGE, "7: network.links[0].loss: 2 is not in [0, 1)"},
      {"\"bandwidth_gbps\": 1}", "\"bandwidth_gbps\": 1, \"overrides\": [{"
       "\"a\": 0, \"b\": 40, \"latency_ms\": 1, \"bandwidth_gbps\": 1, "
       "\"loss\": 0.1}]}",
       ERR_UNKNOWN, "7: network.overrides[0].loss: unknown key (known: from, "
       "to, device_a, device_b, a, b, latency_ms, bandwidth_gbps)"},
      {"\"gpu\": \"V100\"}\n", "\"tcp_window_bytes\": 1000}\n", ERR_RANGE,
       "5: sites[1].tcp_window_bytes: must be >= 1448, not 1000"},
      {"{\"latency_ms\": 10, \"bandwidth_gbps\": 1}",
       "{\"trace\": \"t.csv\", \"loss\": 0.1}", ERR_CONFIG,
       "7: network.trace: give either trace or latency_ms and bandwidth_gbps "
       "(with links, or alone; the path keys beside them), not both"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text = edit(cases[i].from, cases[i].to);
    expect_message(text, cases[i].code, cases[i].msg);
    free(text);
  }
}

/* The built-ins that state DT-FM's tc emulation and its hosts' window keep
 * the content hashes they had before shapings and path keys existed
 * (computed by main at 9692758): stored results stay theirs. */
Test(scenario, tc_builtins_keep_their_hashes) {
  static const struct {
    const char *name;
    unsigned long long hash;
  } keep[] = {{"datacenter", 0x8605004b8227bd3bULL},
              {"spot", 0xe3af717295908b75ULL},
              {"multi-dc", 0xf00eef710cabb84dULL},
              {"regional", 0x7cd9789267fe7f6dULL},
              {"worldwide", 0x0d9947b3f7eadacbULL},
              {"datacenter-physical", 0x544f5db1f00a34e4ULL},
              {"spot-physical", 0xa5d59578b67bb4b4ULL},
              {"worldwide-measured", 0x712dd26d797c6fc9ULL},
              {"worldwide-varying", 0x9c345d62dce828e4ULL}};
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
    scenario *s = support_scenario(keep[i].name);
    cr_expect_eq(s->shaping, SCENARIO_SHAPING_TC, "%s", keep[i].name);
    for (int k = 0; k < s->nsites; k++)
      cr_expect_eq(s->sites[k].tcp_window_bytes, SCENARIO_TCP_WINDOW_DTFM);
    cr_expect_eq((unsigned long long)scenario_hash(s), keep[i].hash, "%s: %016llx",
                 keep[i].name, (unsigned long long)scenario_hash(s));
    scenario_free(s);
  }
  /* every built-in states tc */
  for (const char *const *n = scenario_builtin_names(); *n; n++) {
    scenario *s = support_scenario(*n);
    cr_expect_eq(s->shaping, SCENARIO_SHAPING_TC, "%s", *n);
    scenario_free(s);
  }
}
