/* test_plot: analysis/plot.py draws non-empty PNGs from a small database and
 * a Chrome-trace timeline (training runs: iteration time over the run with
 * faults and trace changes marked, goodput per recovery policy), skips
 * plots whose data is missing, and refuses a file that is not a geodes
 * database. It runs through the first python3 on
 * PATH, so the re-exec under /usr/bin/python3 is exercised where that one
 * lacks matplotlib. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/db.h"
#include "tests/support.h"

TestSuite(plot, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

static void fill(const char *path) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(
      d, &(db_run){"geodes schedule worldwide --method gcma", "worldwide", 1,
                   "0", "x"},
      &e);
  static const char *nets[] = {"ideal", "netem", "tcp"};
  static const char *methods[] = {"dtfm-identity", "megatron"};
  static const double scales[] = {0.5, 1, 2};
  char keys[64][64];
  int k = 0;
  db_begin(d, &e);
  for (int n = 0; n < 3; n++)
    for (int m = 0; m < 2; m++)
      for (int s = 0; s < 3; s++, k++) {
        db_result r;
        db_result_init(&r);
        snprintf(keys[k], sizeof keys[k], "key %d", k);
        r.key = keys[k], r.study = "sweep", r.scenario = "worldwide";
        r.method = methods[m], r.network_model = nets[n];
        r.bandwidth_scale = scales[s];
        r.score_s = 10.0 * (m + 1) / scales[s];
        r.predicted_iteration_s = 20 + r.score_s;
        r.iteration_s = r.predicted_iteration_s * (1 + 0.1 * n);
        cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
      }
  /* Two searches in this run, one in a second run of another scenario. */
  for (int c = 1; c <= 50; c++) {
    cr_assert_eq(db_convergence_put(d, run, "gcma", c, 70.0 - c / 5.0, &e),
                 ERR_OK, "%s", e.msg);
    cr_assert_eq(db_convergence_put(d, run, "greedy", c, 75.0 - c / 9.0, &e),
                 ERR_OK, "%s", e.msg);
  }
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  int64_t run2 = db_run_begin(
      d, &(db_run){"geodes schedule regional --method hybrid", "regional", 1,
                   "0", "x"},
      &e);
  for (int c = 1; c <= 20; c++)
    cr_assert_eq(db_convergence_put(d, run2, "hybrid", c, 40.0 - c, &e),
                 ERR_OK, "%s", e.msg);
  db_close(d);
}

/* The PNG's tEXt Description (plot.py writes its legend labels there),
 * or "" when it has none; caller frees. */
static char *png_description(const char *name) {
  size_t len;
  char *png = support_read_file(support_path("png/%s", name), &len);
  const char tag[] = "tEXtDescription";
  size_t at = 8;
  char *out = NULL;
  while (!out && at + 12 <= len) { /* chunks: length, type, data, CRC */
    const unsigned char *p = (const unsigned char *)png + at;
    size_t n = (size_t)p[0] << 24 | (size_t)p[1] << 16 | p[2] << 8 | p[3];
    if (n + 12 > len - at) break;
    if (n >= sizeof tag - 4 && !memcmp(p + 4, tag, sizeof tag - 1)) {
      size_t skip = sizeof tag - 4; /* "Description\0" */
      out = strndup((const char *)p + 8 + skip, n - skip);
    }
    at += n + 12;
  }
  free(png);
  return out ? out : strdup("");
}

static int plot(const char *db_path, const char *extra) {
  return support_sh(NULL, "'%s/analysis/plot.py' '%s' --out '%s' %s",
                    GEODES_SOURCE_DIR, db_path, support_path("png"), extra);
}

static long png_size(const char *name) {
  FILE *f = fopen(support_path("png/%s", name), "rb");
  if (!f) return -1;
  unsigned char magic[8] = {0};
  size_t got = fread(magic, 1, 8, f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fclose(f);
  cr_expect(got == 8 && !memcmp(magic, "\x89PNG\r\n\x1a\n", 8),
            "%s is a PNG", name);
  return size;
}

Test(plot, writes_every_png) {
  const char *path = support_path("r.db");
  fill(path);
  const char *tl = support_write_file(
      support_path("timeline.json"),
      "{\"traceEvents\": [\n"
      "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 0,"
      " \"args\": {\"name\": \"device 0 compute\"}},\n"
      "{\"ph\": \"X\", \"cat\": \"forward\", \"name\": \"F0\", \"pid\": 0,"
      " \"tid\": 0, \"ts\": 0, \"dur\": 25000},\n"
      "{\"ph\": \"X\", \"cat\": \"backward\", \"name\": \"B0\", \"pid\": 0,"
      " \"tid\": 0, \"ts\": 40000, \"dur\": 50000},\n"
      "{\"ph\": \"B\", \"cat\": \"send\", \"name\": \"a0\", \"pid\": 1,"
      " \"tid\": 1, \"ts\": 25000},\n"
      "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 38000}]}\n");
  char extra[160];
  snprintf(extra, sizeof extra, "--timeline '%s' >/dev/null", tl);
  cr_assert_eq(plot(path, extra), 0);
  const char *pngs[] = {"score_vs_simulated.png", "predicted_vs_simulated.png",
                        "bandwidth_scale.png", "convergence.png",
                        "timeline.png"};
  for (size_t i = 0; i < 5; i++)
    cr_expect_gt(png_size(pngs[i]), 10000, "%s", pngs[i]);
  /* One line per (run, method), in that order, named with the scenario. */
  char *legend = png_description("convergence.png");
  cr_expect_str_eq(legend,
                   "run 1: gcma on worldwide\nrun 1: greedy on worldwide\n"
                   "run 2: hybrid on regional");
  free(legend);
}

/* End to end: `geodes schedule --db` stores its curve under its method's
 * name; the plot draws one line per (run, method). */
Test(plot, schedule_curves_are_named_by_method) {
  const char *path = support_path("s.db");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "schedule '%s/analysis/three-sites.json' "
                                  "--method greedy --db '%s'",
                              GEODES_FIXTURES, path),
               0, "%s", r.err);
  cr_assert_eq(support_geodes(&r, "schedule '%s/analysis/three-sites.json' "
                                  "--method random-search --trials 40 "
                                  "--db '%s'",
                              GEODES_FIXTURES, path),
               0, "%s", r.err);
  support_run_clear(&r);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM convergence WHERE "
                                     "run_id = 2 AND method = "
                                     "'random-search'"),
               40);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM convergence WHERE "
                                     "run_id = 1 AND method = 'greedy'"),
               support_sql_int(path, "SELECT count(*) FROM convergence WHERE "
                                     "run_id = 1"));
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  char *legend = png_description("convergence.png");
  cr_expect_str_eq(legend, "run 1: greedy on three-sites\n"
                           "run 2: random-search on three-sites");
  free(legend);
}

/* Rows of two GPUs: bandwidth_scale.png draws a line per (method, GPU)
 * instead of averaging the GPUs together. */
Test(plot, bandwidth_lines_per_gpu) {
  const char *path = support_path("g.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep", NULL, -1, "0", "x"},
                             &e);
  static const char *gpus[] = {"V100", "A100"};
  char keys[8][32];
  for (int g = 0, k = 0; g < 2; g++)
    for (int s = 0; s < 3; s++, k++) {
      db_result r;
      db_result_init(&r);
      snprintf(keys[k], sizeof keys[k], "key %d", k);
      r.key = keys[k], r.study = "sweep", r.scenario = "worldwide";
      r.method = "gcma", r.network_model = "netem";
      strcpy(r.gpu, gpus[g]);
      r.bandwidth_scale = 1 << s, r.iteration_s = (g + 1.0) * 10 / (1 << s);
      cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
    }
  /* A method seen at one scale only (validate's samples): no line. */
  db_result r;
  db_result_init(&r);
  r.key = "single", r.study = "validate", r.scenario = "worldwide";
  r.method = "perturbed-1", r.network_model = "netem", r.iteration_s = 12;
  strcpy(r.gpu, "V100");
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  db_close(d);
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  char *legend = png_description("bandwidth_scale.png");
  cr_expect_str_eq(legend, "worldwide, netem: gcma, gpu=A100\n"
                           "worldwide, netem: gcma, gpu=V100");
  free(legend);
}

/* Rows crossing layers and seeds: a line per layer count, each point the
 * mean over seeds only (24 and 40 layers are never averaged together). */
Test(plot, bandwidth_lines_per_crossed_knob_mean_over_seeds) {
  const char *path = support_path("l.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep", NULL, -1, "0", "x"},
                             &e);
  char keys[16][32];
  int k = 0;
  for (int layers = 24; layers <= 40; layers += 16)
    for (int scale = 1; scale <= 2; scale++)
      for (int seed = 1; seed <= 2; seed++, k++) {
        db_result r;
        db_result_init(&r);
        snprintf(keys[k], sizeof keys[k], "key %d", k);
        r.key = keys[k], r.study = "sweep", r.scenario = "worldwide";
        r.method = "gcma", r.network_model = "netem", r.seed = seed;
        r.layers = layers, r.bandwidth_scale = scale;
        r.iteration_s = layers / (double)scale + seed; /* seeds: +1, +2 */
        cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
      }
  db_close(d);
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  char *legend = png_description("bandwidth_scale.png");
  cr_expect_str_eq(legend, "worldwide, netem: gcma, layers=24\n"
                           "worldwide, netem: gcma, layers=40");
  free(legend);
}

/* The python3 first on PATH lacks matplotlib (here: Debian's own run with
 * -S, no site packages, as a venv without them is): plot.py re-executes
 * under /usr/bin/python3 and writes the PNGs. */
Test(plot, python_without_matplotlib_first_on_path) {
  if (access("/usr/bin/python3", X_OK) != 0)
    cr_skip_test("no /usr/bin/python3");
  const char *bin = support_path("bin");
  cr_assert_eq(support_sh(NULL, "mkdir -p '%s'", bin), 0);
  const char *py = support_write_file(support_path("bin/python3"),
                                      "#!/bin/sh\nexec /usr/bin/python3 -S "
                                      "\"$@\"\n");
  cr_assert_eq(chmod(py, 0755), 0);
  support_run r = {0};
  cr_assert_neq(support_sh(&r, "PATH='%s':$PATH python3 -c 'import "
                               "matplotlib'", bin),
                0, "the stand-in python3 must lack matplotlib");
  const char *path = support_path("p.db");
  fill(path);
  cr_expect_eq(support_sh(&r, "PATH='%s':$PATH '%s/analysis/plot.py' '%s' "
                              "--out '%s'",
                          bin, GEODES_SOURCE_DIR, path, support_path("png")),
               0, "%s", r.err);
  cr_expect_gt(png_size("convergence.png"), 10000);
  /* A venv of Debian's python3 links the same binary but lacks its
   * dist-packages: re-executing must not be refused as "the same". */
  const char *venv = support_path("venv");
  if (support_sh(NULL, "/usr/bin/python3 -m venv --without-pip '%s'",
                 venv) == 0) {
    cr_expect_eq(support_sh(&r, "PATH='%s/bin':$PATH '%s/analysis/plot.py' "
                                "'%s' --out '%s'",
                            venv, GEODES_SOURCE_DIR, path,
                            support_path("png2")),
                 0, "%s", r.err);
  }
  support_run_clear(&r);
}

Test(plot, missing_data_is_skipped) {
  const char *path = support_path("empty.db");
  err e = {0};
  db_close(db_open(path, &e));
  cr_assert_eq(plot(path, "2>/dev/null"), 0);
  cr_expect_eq(png_size("score_vs_simulated.png"), -1);
  cr_expect_eq(png_size("convergence.png"), -1);
}

Test(plot, refuses_a_foreign_file) {
  const char *path =
      support_write_file(support_path("notes.txt"), "not a database\n");
  cr_expect_eq(plot(path, "2>/dev/null"), 1);
}

/* A results store of another schema version: refused with a message, not a
 * Python traceback; plot.py's version is the C store's. */
Test(plot, refuses_another_schema_version) {
  const char *path = support_path("old.db");
  err e = {0};
  db_close(db_open(path, &e));
  char sql[256];
  snprintf(sql, sizeof sql, "sqlite3 '%s' 'PRAGMA user_version = %d'", path,
           DB_SCHEMA_VERSION - 1);
  cr_assert_eq(support_sh(NULL, "%s", sql), 0);
  support_run r = {0};
  cr_expect_eq(support_sh(&r, "'%s/analysis/plot.py' '%s' --out '%s'",
                          GEODES_SOURCE_DIR, path, support_path("out")),
               1);
  cr_expect(strstr(r.err, "schema version") != NULL, "%s", r.err);
  cr_expect(strstr(r.err, "Traceback") == NULL, "%s", r.err);
  support_run_clear(&r);
  char want[64];
  snprintf(want, sizeof want, "SCHEMA_VERSION = %d", DB_SCHEMA_VERSION);
  char *text = support_read_file(GEODES_SOURCE_DIR "/analysis/plot.py", NULL);
  cr_expect(strstr(text, want) != NULL, "plot.py must read schema %d",
            DB_SCHEMA_VERSION);
  free(text);
}

/* Training runs: three policies at two outage rates, each with iterations
 * and marks (a fault, trace changes). */
static void fill_runs(const char *path) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep t.json", NULL, -1,
                                          "0", "x"}, &e);
  static const char *policies[] = {"restart", "reroute", "replan"};
  char keys[6][32];
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  for (int p = 0; p < 3; p++)
    for (int rate = 0; rate < 2; rate++) {
      db_result r;
      db_result_init(&r);
      int k = p * 2 + rate;
      snprintf(keys[k], sizeof keys[k], "run %d", k);
      r.key = keys[k], r.study = "sweep", r.scenario = "worldwide-varying";
      r.method = "dtfm-identity", r.network_model = "netem";
      r.recovery = policies[p], r.faults = rate ? "f30.csv" : "f1.csv";
      r.iterations = 10, r.total_s = 3600;
      r.samples_per_s = 20 - p - 4 * rate, r.lost_s = 100 * (rate + 1) * (p + 1);
      r.nit = 10;
      r.it = calloc(10, sizeof *r.it);
      for (int i = 0; i < 10; i++)
        r.it[i] = (db_iteration){.index = i, .start_s = 350.0 * i,
                                 .iteration_s = 40 + (i == 4) * 10 * (p + 1),
                                 .replicas = 8, .samples = 1024};
      r.nmarks = 3 + 4 * rate;
      r.marks = calloc(r.nmarks, sizeof *r.marks);
      for (size_t m = 0; m < r.nmarks; m++)
        r.marks[m] = (db_mark){.t_s = 300.0 * (double)(m + 1),
                               .kind = "device_down", .what = "5"};
      strcpy(r.marks[0].kind, "trace"), r.marks[0].what[0] = '\0';
      cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
      db_result_clear(&r);
    }
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  db_close(d);
}

Test(plot, training_runs_over_time_and_per_policy) {
  const char *path = support_path("runs.db");
  fill_runs(path);
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  cr_expect_gt(png_size("iterations.png"), 20000);
  cr_expect_gt(png_size("policies.png"), 20000);
  char *legend = png_description("iterations.png");
  cr_expect(strstr(legend, "worldwide-varying: restart, faults=f1.csv") != NULL,
            "%s", legend);
  free(legend);
  legend = png_description("policies.png");
  cr_expect(strstr(legend, "worldwide-varying, netem: reroute") != NULL, "%s",
            legend);
  free(legend);
  /* one outage rate only: policies.png has nothing to compare, skipped */
  const char *one = support_path("one.db");
  err e = {0};
  db *d = db_open(one, &e);
  int64_t run1 = db_run_begin(d, &(db_run){"x", NULL, -1, "0", "x"}, &e);
  db_result r;
  db_result_init(&r);
  r.key = "k", r.study = "sweep", r.scenario = "worldwide";
  r.method = "dtfm-identity", r.network_model = "netem";
  r.iterations = 1, r.total_s = 40, r.samples_per_s = 25, r.lost_s = 0;
  r.nit = 1;
  r.it = calloc(1, sizeof *r.it);
  r.it[0] = (db_iteration){.iteration_s = 40, .replicas = 8, .samples = 1024};
  cr_assert_eq(db_result_put(d, run1, &r, &e), 1, "%s", e.msg);
  db_result_clear(&r);
  db_close(d);
  support_sh(NULL, "rm -f '%s'", support_path("png/policies.png"));
  cr_assert_eq(plot(one, ">/dev/null 2>/dev/null"), 0);
  cr_expect_gt(png_size("iterations.png"), 10000);
  cr_expect_eq(png_size("policies.png"), -1);
}

/* Labels name only what varies inside a panel: two scenarios of different
 * activation sizes (the panel titles tell them apart) and a single point of
 * another window (no line: left out) add nothing to the legend; a knob
 * crossed inside a panel (layers) is named, one that follows it
 * (gradient_gb) is not. */
Test(plot, labels_name_only_the_knobs_that_vary) {
  const char *path = support_path("v.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep", NULL, -1, "0", "x"},
                             &e);
  static const char *scen[] = {"regional", "worldwide"};
  char keys[16][32];
  int k = 0;
  for (int sc = 0; sc < 2; sc++)
    for (int layers = 24; layers <= 40; layers += 16)
      for (int scale = 1; scale <= 2; scale++, k++) {
        db_result r;
        db_result_init(&r);
        snprintf(keys[k], sizeof keys[k], "key %d", k);
        r.key = keys[k], r.study = "sweep", r.scenario = scen[sc];
        r.method = "gcma", r.network_model = "tcp", r.layers = layers;
        r.activation_gb = 0.5 + sc, r.bandwidth_scale = scale;
        r.gradient_gb = layers / 24.0; /* follows layers: not named */
        r.iteration_s = layers / (double)scale;
        cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
      }
  db_result r;
  db_result_init(&r);
  r.key = "single", r.study = "validate", r.scenario = "worldwide";
  r.method = "gcma", r.network_model = "tcp", r.layers = 24;
  r.activation_gb = 1.5, r.window_bytes = 65536, r.iteration_s = 30;
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  db_close(d);
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  char *legend = png_description("bandwidth_scale.png");
  cr_expect_str_eq(legend, "regional, tcp: gcma, layers=24\n"
                           "regional, tcp: gcma, layers=40\n"
                           "worldwide, tcp: gcma, layers=24\n"
                           "worldwide, tcp: gcma, layers=40");
  free(legend);
}
