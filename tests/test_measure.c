/* test_measure: `geodes reproduce --data` on a hand-written measurements
 * file (each error checked against the time `geodes simulate` gives for
 * the row's run), `geodes calibrate`'s command line (params.json written
 * and read back by --params), and every bad input with its message and
 * exit status pinned. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/measure.h"
#include "analysis/reproduce.h"
#include "tests/support.h"

TestSuite(measure, .init = support_dir_make, .fini = support_dir_remove);

/* `geodes simulate ARGS --json`'s iteration_s. */
static double simulated(const char *args) {
  json_t *j = support_geodes_json("simulate %s --json", args);
  double s = json_number_value(json_object_get(j, "iteration_s"));
  json_decref(j);
  return s;
}

static json_t *reproduce_json(const char *csv) {
  return support_geodes_json("reproduce --data '%s' --json", csv);
}

Test(measure, reproduce_data_errors_are_the_simulated_ones) {
  /* a scenario file beside the CSV, named relative to it */
  struct stat st;
  const char *dir = support_path("site");
  if (stat(dir, &st) != 0) cr_assert_eq(mkdir(dir, 0700), 0);
  support_sh(NULL, "cp '%s/traces/data/multi-dc.json' '%s/mine.json' && "
             "cp '%s/traces/data/multi-dc.csv' '%s/'", GEODES_SOURCE_DIR, dir,
             GEODES_SOURCE_DIR, dir);
  const char *csv = support_write_file(support_path("site/m.csv"),
      "# source: hand-written\n# units: measured_s seconds\n"
      "group,scenario,method,seed,network,sockets,layers,batch,measured_s\n"
      "lan,multi-dc,dtfm-identity,1,tcp,16,8,512,8.0\n"
      "lan,mine.json,,,netem,,8,512,9.0\n"
      "wan,worldwide,megatron,2,tcp,1,8,512,30.0\n");
  double sim[3] = {
      simulated("multi-dc --method dtfm-identity --seed 1 --network tcp "
                "--sockets 16 --layers 8 --batch 512"),
      simulated("multi-dc --method dtfm-identity --network netem --layers 8 "
                "--batch 512"),
      simulated("worldwide --method megatron --seed 2 --network tcp "
                "--sockets 1 --layers 8 --batch 512")};
  const double measured[3] = {8.0, 9.0, 30.0};
  json_t *j = reproduce_json(csv), *rows = json_object_get(j, "rows");
  cr_assert_eq(json_array_size(rows), 3);
  double rel[3];
  for (int i = 0; i < 3; i++) {
    json_t *x = json_array_get(rows, (size_t)i);
    rel[i] = sim[i] / measured[i] - 1;
    cr_assert_eq(json_integer_value(json_object_get(x, "line")), i + 4);
    cr_assert_float_eq(json_number_value(json_object_get(x, "sim_s")), sim[i],
                       1e-12);
    cr_assert_float_eq(json_number_value(json_object_get(x, "error")), rel[i],
                       1e-12);
  }
  json_t *sum = json_object_get(j, "summary");
  json_t *lan = json_object_get(sum, "lan"), *all = json_object_get(sum, "all");
  cr_assert_eq(json_integer_value(json_object_get(lan, "rows")), 2);
  cr_assert_float_eq(json_number_value(json_object_get(lan, "median_abs_error")),
                     (fabs(rel[0]) + fabs(rel[1])) / 2, 1e-12);
  cr_assert_float_eq(json_number_value(json_object_get(lan, "worst_abs_error")),
                     fmax(fabs(rel[0]), fabs(rel[1])), 1e-12);
  cr_assert_eq(json_integer_value(json_object_get(all, "rows")), 3);
  json_decref(j);
}

/* `geodes CMD` on a file holding text: exit status and stderr pinned. */
static void refused(const char *text, const char *cmd, int status,
                    const char *msg) {
  const char *csv = support_write_file(support_path("bad.csv"), text);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "%s --data '%s'", cmd, csv), status, "%s",
               r.err);
  char want[1024];
  snprintf(want, sizeof want, msg, csv);
  cr_assert_str_eq(r.err, want);
  support_run_clear(&r);
}

Test(measure, bad_files_name_file_and_line) {
  refused("scenario,method\nmulti-dc,dtfm-identity\n", "reproduce", 1,
          "geodes: %s:1: missing column 'measured_s' (the header needs "
          "scenario and measured_s)\n");
  refused("scenario,method,measured_s\nmulti-dc,fastest,1\n", "reproduce", 1,
          "geodes: %s:2: methods: unknown value 'fastest'\n");
  refused("scenario,measured_s\nmulti-dc,0\n", "reproduce", 1,
          "geodes: %s:2: measured_s: '0' is not a number >= 1e-06 s\n");
  refused("scenario,measured_s\nmulti-dc,-3\n", "reproduce", 1,
          "geodes: %s:2: measured_s: '-3' is not a number >= 1e-06 s\n");
  refused("scenario,measured_s\nmulti-dc,fast\n", "reproduce", 1,
          "geodes: %s:2: measured_s: 'fast' is not a number >= 1e-06 s\n");
  /* issue 35, 12: a subnormal time was kept and its row fell out of the
   * summary (its error infinite); one knob in two columns kept the last */
  refused("scenario,measured_s\nmulti-dc,1e-320\n", "reproduce", 1,
          "geodes: %s:2: measured_s: '1e-320' is not a number >= 1e-06 s\n");
  refused("scenario,measured_s\nmulti-dc,9.9e-7\n", "reproduce", 1,
          "geodes: %s:2: measured_s: '9.9e-7' is not a number >= 1e-06 s\n");
  refused("scenario,seed,seeds,measured_s\nmulti-dc,1,2,3\n", "reproduce", 1,
          "geodes: %s:1: columns 'seed' and 'seeds' both set seeds (give "
          "one)\n");
  refused("scenario,networks,measured_s,network\nmulti-dc,tcp,3,tcp\n",
          "reproduce", 1, "geodes: %s:1: columns 'networks' and 'network' "
          "both set networks (give one)\n");
  refused("scenario,measured_s\nmulti-dc,1,2\n", "reproduce", 1,
          "geodes: %s:2: 3 fields, the header has 2\n");
  refused("scenario,method,alloc,measured_s\nmulti-dc,gcma,a.json,1\n",
          "reproduce", 1,
          "geodes: %s:2: give a method or an alloc, not both\n");
  refused("# only comments\n", "reproduce", 1, "geodes: %s:1: no header\n");
}

Test(measure, unknown_scenario_is_looked_for_beside_the_file) {
  const char *csv = support_write_file(support_path("sc.csv"),
      "# c\nscenario,measured_s\nnowhere,1\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "reproduce --data '%s'", csv), 1);
  char want[1024];
  snprintf(want, sizeof want, "geodes: %s:3: scenarios: %s/nowhere: cannot "
           "read the scenario (no built-in one has this name: see 'geodes "
           "scenarios'): No such file or directory\n", csv, support_dir());
  cr_assert_str_eq(r.err, want);
  support_run_clear(&r);
}

Test(measure, unknown_knob_is_refused_with_its_line) {
  const char *csv = support_write_file(support_path("knob.csv"),
      "scenario,speed,measured_s\nmulti-dc,3,1\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "reproduce --data '%s'", csv), 1);
  char want[512];
  snprintf(want, sizeof want, "geodes: %s:2: unknown key 'speed' (keys: ", csv);
  cr_assert(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
  support_run_clear(&r);
}

/* Netem rows on multi-dc: no TCP window, and DT-FM's runtime, so
 * Megatron's per-call cost does not matter either. */
#define NETEM_ROWS "scenario,network,layers,batch,measured_s\n" \
                   "multi-dc,netem,8,512,8\nmulti-dc,netem,16,512,12\n"

Test(measure, calibrate_refuses_what_the_rows_do_not_determine) {
  const char *out = support_path("none.json");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "calibrate --fit window_bytes -o '%s'", out);
  refused(NETEM_ROWS, cmd, 1,
          "geodes: parameter 'window_bytes': no row of %s depends on it (a "
          "zero Jacobian column); add rows it changes\n");
  refused(NETEM_ROWS, "calibrate --fit megatron_p2p_call_s", 1,
          "geodes: parameter 'megatron_p2p_call_s': no row of %s depends on "
          "it (a "
          "zero Jacobian column); add rows it changes\n");
  struct stat st;
  cr_assert_neq(stat(out, &st), 0, "a failed fit writes nothing");
  refused(NETEM_ROWS, "calibrate --fit speed", 2,
          "geodes calibrate: --fit: unknown parameter 'speed' (see geodes "
          "calibrate --help)\nTry 'geodes calibrate --help'.\n");
}

Test(measure, calibrate_writes_params_that_simulate_reads_back) {
  const char *csv = support_write_file(support_path("fit.csv"), NETEM_ROWS);
  const char *out = support_path("fit.json");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "calibrate --data '%s' --fit "
                              "site_compute_efficiency --folds 0 -o '%s'",
                              csv, out), 0, "%s", r.err);
  json_t *j = json_load_file(out, 0, NULL);
  cr_assert(j);
  json_t *p = json_object_get(json_object_get(j, "params"),
                              "site_compute_efficiency");
  double v = json_number_value(json_object_get(p, "value"));
  cr_assert(v > 0.01 && v < 1, "%g", v);
  cr_assert(json_is_number(json_object_get(p, "uncertainty")));
  json_decref(j);
  /* the fitted value, read back, moves the simulated time */
  double base = simulated("multi-dc --layers 8 --batch 512 --method "
                          "dtfm-identity");
  char args[512];
  snprintf(args, sizeof args, "multi-dc --layers 8 --batch 512 --method "
           "dtfm-identity --params '%s'", out);
  cr_assert_neq(simulated(args), base);
  /* a folder is not a file to replace */
  cr_assert_eq(support_geodes(&r, "calibrate --data '%s' --fit "
                              "site_compute_efficiency --folds 0 -o '%s'",
                              csv, support_dir()), 1);
  cr_assert(strstr(r.err, ": cannot write the parameters: a folder (name a "
                   "file to write)"), "%s", r.err);
  support_run_clear(&r);
}

Test(measure, params_file_refuses_unknown_and_out_of_range) {
  const char *bad = support_write_file(support_path("p.json"),
      "{\"params\": {\"speed\": 2}}\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate multi-dc --method dtfm-identity "
                              "--params '%s'", bad), 1);
  cr_assert(strstr(r.err, ": params.speed: unknown parameter (known: "
                   "gemm_efficiency, memory_efficiency, "), "%s", r.err);
  support_write_file(bad, "{\"params\": {\"window_bytes\": {\"value\": 1}}}\n");
  cr_assert_eq(support_geodes(&r, "simulate multi-dc --method dtfm-identity "
                              "--params '%s'", bad), 1);
  cr_assert(strstr(r.err, ": params.window_bytes: 1 is not in [1448, "), "%s",
            r.err);
  support_run_clear(&r);
}

Test(measure, sweep_params_are_in_the_rows_identity) {
  const char *sw = support_write_file(support_path("sw.json"),
      "{\"scenarios\": [\"multi-dc\"], \"methods\": [\"dtfm-identity\"], "
      "\"layers\": 8, \"batch\": 512}\n");
  const char *p = support_write_file(support_path("w.json"),
      "{\"params\": {\"window_bytes\": 1e6}}\n");
  const char *db = support_path("sw.db");
  const char *runs[][2] = {{"", "\"present\":0,\"stale\":0,\"computed\":1"},
                           {"", "\"present\":1,\"stale\":0,\"computed\":0"},
                           {"--params", "\"present\":0,\"stale\":1,\"computed\":1"},
                           {"--params", "\"present\":1,\"stale\":0,\"computed\":0"}};
  support_run r = {0};
  for (int i = 0; i < 4; i++) {
    char opt[512] = "";
    if (runs[i][0][0]) snprintf(opt, sizeof opt, "--params '%s'", p);
    cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json %s", sw, db,
                                opt), 0, "%s", r.err);
    cr_assert(strstr(r.out, runs[i][1]), "run %d: %s", i, r.out);
  }
  support_run_clear(&r);
}

/* The built-in table's rows that a measurements file can state (geo cases
 * without tc inside a region, the methods' own placements) simulate to its
 * numbers bit for bit when written in the format. */
Test(measure, builtin_geo_rows_written_as_a_file_agree) {
  err e = {0};
  measure_set *m = measure_load(GEODES_FIXTURES "/dtfm_geo_measured.csv", &e);
  cr_assert(m, "%s", e.msg);
  reproduce_report *b = reproduce_load(&e);
  cr_assert(b, "%s", e.msg);
  int k = 0;
  for (int i = 0; i < b->n; i++) {
    const reproduce_row *x = &b->rows[i];
    if (strcmp(x->table, "geo") != 0 || x->batch > 2048 ||
        (strcmp(x->system, "dtfm") != 0 && strcmp(x->system, "megatron") != 0) ||
        (strcmp(x->setting, "datacenter") != 0 &&
         strcmp(x->setting, "spot") != 0 && strcmp(x->setting, "multi-dc") != 0))
      continue;
    cr_assert_lt(k, measure_count(m));
    cr_assert_eq(measure_row_at(m, k)->measured_s, x->measured_s);
    double want, got;
    cr_assert_eq(reproduce_row_tcp(b, i, &want, &e), ERR_OK, "%s", e.msg);
    cr_assert_eq(measure_sim(m, k, &got, &e), ERR_OK, "%s", e.msg);
    cr_assert_eq(got, want, "line %d: %.17g, built in %.17g",
                 measure_row_at(m, k)->line, got, want);
    k++;
  }
  cr_assert_eq(k, measure_count(m));
  reproduce_report_free(b);
  measure_free(m);
}

/* measure_run's hook: rows done, in order. */
static void count_rows(void *ctx, int done, int total) {
  int *seen = ctx;
  cr_assert_eq(done, seen[0] + 1);
  seen[0] = done, seen[1] = total;
}

Test(measure, run_gives_each_rows_simulated_time_and_error) {
  err e = {0};
  measure_set *m = measure_load(GEODES_FIXTURES "/dtfm_geo_measured.csv", &e);
  cr_assert(m, "%s", e.msg);
  int n = measure_count(m), seen[2] = {0, 0};
  double sim[64], error[64];
  cr_assert_leq(n, 64);
  cr_assert_eq(measure_run(m, sim, error, count_rows, seen, &e), ERR_OK, "%s",
               e.msg);
  cr_assert_eq(seen[0], n);
  cr_assert_eq(seen[1], n);
  for (int i = 0; i < n; i++) {
    double want;
    cr_assert_eq(measure_sim(m, i, &want, &e), ERR_OK, "%s", e.msg);
    cr_assert_eq(sim[i], want);
    cr_assert_eq(error[i], want / measure_row_at(m, i)->measured_s - 1);
  }
  measure_free(m);
}

/* The naive reference: group g's (NULL: every row's) finite |error|,
 * sorted by selection, its median and worst. */
static int naive_summary(const measure_set *m, const double *error,
                         const char *g, double *median, double *worst) {
  double v[64];
  int n = 0;
  for (int i = 0; i < measure_count(m); i++)
    if ((!g || strcmp(measure_row_at(m, i)->group, g) == 0) &&
        isfinite(error[i]))
      v[n++] = fabs(error[i]);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (v[j] < v[i]) {
        double t = v[i];
        v[i] = v[j], v[j] = t;
      }
  *median = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
  *worst = n ? v[n - 1] : NAN;
  return n;
}

Test(measure, group_summaries_are_each_groups_then_every_rows) {
  err e = {0};
  measure_set *m = measure_load(GEODES_FIXTURES "/dtfm_geo_measured.csv", &e);
  cr_assert(m, "%s", e.msg);
  int n = measure_count(m), ng;
  double error[64];
  cr_assert_leq(n, 64);
  for (int i = 0; i < n; i++) /* signed, unsorted, one not finite */
    error[i] = i == 3 ? NAN : (i % 2 ? -1.0 : 1.0) * (double)((7 * i) % 5) / 10;
  measure_group *g = measure_group_summaries(m, error, &ng);
  cr_assert_gt(ng, 2);
  cr_assert_null(g[ng - 1].name);
  for (int k = 0; k < ng; k++) {
    for (int j = 0; j < k && k < ng - 1; j++) /* distinct groups */
      cr_assert(g[k].name && strcmp(g[j].name, g[k].name) != 0);
    double med, worst;
    cr_assert_eq(g[k].rows, naive_summary(m, error, g[k].name, &med, &worst));
    cr_assert_eq(g[k].median, med, "%s", g[k].name ? g[k].name : "all");
    cr_assert_eq(g[k].worst, worst);
  }
  cr_assert_eq(g[ng - 1].rows, n - 1);
  /* in order of first appearance: the first group is the first row's */
  cr_assert_str_eq(g[0].name, measure_row_at(m, 0)->group);
  free(g);
  measure_free(m);
}
