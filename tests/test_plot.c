/* test_plot: analysis/plot.py draws non-empty PNGs from a small database and
 * a Chrome-trace timeline (training runs: iteration time over the run with
 * faults and trace changes marked, goodput per recovery policy), skips
 * plots whose data is missing, and refuses a file that is not a geodes
 * database. Each plot's series, as plot.py --series reads them back from
 * the figure it drew (analysis/plot_series.py), equal the rows they came
 * from: the points, lines and bars drawn, breaks where nothing trained, an
 * axis from 0 where a dip would mislead, x labels that do not overlap, the
 * scenario's name (not its file's) in titles. It runs through the first
 * python3 on PATH, so the re-exec under /usr/bin/python3 is exercised where
 * that one lacks matplotlib. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
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
  return support_sh(NULL, "'%s/analysis/plot.py' '%s' --out '%s' --series %s",
                    GEODES_SOURCE_DIR, db_path, support_path("png"), extra);
}

/* ---- the series drawn (png/NAME.json, written by --series) ---- */

static json_t *drawn(const char *name) {
  json_error_t je;
  json_t *j = json_load_file(support_path("png/%s", name), 0, &je);
  cr_assert_not_null(j, "%s: %s", name, je.text);
  return j;
}

/* The panel of fig titled title (borrowed). */
static json_t *panel(json_t *fig, const char *title) {
  size_t i;
  json_t *p;
  json_array_foreach(json_object_get(fig, "panels"), i, p)
    if (strcmp(json_string_value(json_object_get(p, "title")), title) == 0)
      return p;
  cr_assert_fail("no panel titled '%s'", title);
  return NULL;
}

/* The entry of p's kind ("lines", "scatters") whose label starts with
 * label (borrowed). */
static json_t *artist(json_t *p, const char *kind, const char *label) {
  size_t i;
  json_t *a;
  json_array_foreach(json_object_get(p, kind), i, a)
    if (strncmp(json_string_value(json_object_get(a, "label")), label,
                strlen(label)) == 0)
      return a;
  cr_assert_fail("no %s labelled '%s' in '%s'", kind, label,
                 json_string_value(json_object_get(p, "title")));
  return NULL;
}

/* Element i of a JSON array of numbers; null (a break) is NAN. */
static double num(const json_t *a, size_t i) {
  const json_t *v = json_array_get(a, i);
  cr_assert_not_null(v, "no element %zu", i);
  return json_is_null(v) ? NAN : json_number_value(v);
}

static bool same(double a, double b) {
  return (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

/* A line's first n points are (want_x[i], want_y[i]) (NAN: a break). */
static void expect_values(const json_t *line, const double *want_x,
                          const double *want_y, size_t n, const char *what) {
  const json_t *x = json_object_get(line, "x"), *y = json_object_get(line, "y");
  cr_assert_geq(json_array_size(x), n, "%s: %zu points drawn, %zu in the "
                "data", what, json_array_size(x), n);
  for (size_t i = 0; i < n; i++)
    cr_expect(same(num(x, i), want_x[i]) && same(num(y, i), want_y[i]),
              "%s: point %zu drawn at (%g, %g), the data's is (%g, %g)", what,
              i, num(x, i), num(y, i), want_x[i], want_y[i]);
}

/* A line's x and y are want_x and want_y (n each; NAN: a break). */
static void expect_line(const json_t *line, const double *want_x,
                        const double *want_y, size_t n, const char *what) {
  size_t got = json_array_size(json_object_get(line, "x"));
  cr_expect_eq(got, n, "%s: %zu points drawn, %zu in the data", what, got, n);
  expect_values(line, want_x, want_y, n, what);
}

static int by_xy(const void *a, const void *b) {
  const double *p = a, *q = b;
  return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1)
                      : p[1] != q[1] ? (p[1] < q[1] ? -1 : 1) : 0;
}

/* A scatter's points equal want (n (x, y) pairs), in any order. */
static void expect_points(const json_t *scatter, double (*want)[2], size_t n,
                          const char *what) {
  const json_t *xy = json_object_get(scatter, "xy");
  cr_assert_eq(json_array_size(xy), n, "%s: %zu points drawn, %zu rows",
               what, json_array_size(xy), n);
  double (*got)[2] = calloc(n ? n : 1, sizeof *got);
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 2; k++) got[i][k] = num(json_array_get(xy, i), k);
  qsort(got, n, sizeof *got, by_xy);
  qsort(want, n, sizeof *want, by_xy);
  for (size_t i = 0; i < n; i++)
    cr_expect(same(got[i][0], want[i][0]) && same(got[i][1], want[i][1]),
              "%s: point %zu drawn at (%g, %g), the rows' is (%g, %g)", what,
              i, got[i][0], got[i][1], want[i][0], want[i][1]);
  free(got);
}

/* plot.py --series on the database at path (extra: more options), then
 * the panel titled title of what it drew into name; *fig holds it (the
 * caller decrefs). */
static json_t *plotted(const char *path, const char *extra, const char *name,
                       const char *title, json_t **fig) {
  char more[128];
  snprintf(more, sizeof more, "%s >/dev/null 2>&1", extra);
  cr_assert_eq(plot(path, more), 0, "plot.py %s", extra);
  *fig = drawn(name);
  return panel(*fig, title);
}

static double lim(const json_t *p, const char *axis, size_t i) {
  return num(json_object_get(p, axis), i);
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

/* A Chrome trace of two devices: three slices, (start, end) in s. */
static const char TIMELINE[] =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 0,"
    " \"args\": {\"name\": \"device 0 compute\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"forward\", \"name\": \"F0\", \"pid\": 0,"
    " \"tid\": 0, \"ts\": 0, \"dur\": 25000},\n"
    "{\"ph\": \"X\", \"cat\": \"backward\", \"name\": \"B0\", \"pid\": 0,"
    " \"tid\": 0, \"ts\": 40000, \"dur\": 50000},\n"
    "{\"ph\": \"B\", \"cat\": \"send\", \"name\": \"a0\", \"pid\": 1,"
    " \"tid\": 1, \"ts\": 25000},\n"
    "{\"ph\": \"E\", \"pid\": 1, \"tid\": 1, \"ts\": 38000}]}\n";
static double TIMELINE_SLICES[][2] = {{0, 0.025}, {0.025, 0.038},
                                      {0.04, 0.09}};

/* The timeline's bars span the trace's slices, each once. */
static void expect_timeline(void) {
  json_t *fig = drawn("timeline.json");
  json_t *p = json_array_get(json_object_get(fig, "panels"), 0);
  double spans[8][2];
  size_t n = 0, i, j;
  json_t *c, *r;
  json_array_foreach(json_object_get(p, "rectangles"), i, c)
    json_array_foreach(json_object_get(c, "xy"), j, r) {
      cr_assert_lt(n, 8);
      spans[n][0] = num(r, 0), spans[n++][1] = num(r, 1);
    }
  cr_assert_eq(n, 3, "%zu bars drawn for 3 slices", n);
  qsort(spans, n, sizeof *spans, by_xy);
  for (i = 0; i < n; i++)
    cr_expect(same(spans[i][0], TIMELINE_SLICES[i][0]) &&
              same(spans[i][1], TIMELINE_SLICES[i][1]),
              "bar %zu: %g..%g", i, spans[i][0], spans[i][1]);
  json_decref(fig);
}

/* What fill() stored, by formula: net n, method m, scale index k. */
static double fill_score(int m, int k) {
  static const double scales[] = {0.5, 1, 2};
  return 10.0 * (m + 1) / scales[k];
}
static double fill_iteration(int n, int m, int k) {
  return (20 + fill_score(m, k)) * (1 + 0.1 * n);
}

/* Every PNG of fill()'s rows, and the series drawn are those rows: a
 * point per row under its network model, a line per method over the
 * scales (from 0), a step line per search, a bar per timeline slice. */
Test(plot, writes_every_png) {
  const char *path = support_path("r.db");
  fill(path);
  const char *tl = support_write_file(support_path("timeline.json"),
                                      TIMELINE);
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
  static const char *nets[] = {"ideal", "netem", "tcp"};
  static const double scales[] = {0.5, 1, 2};
  json_t *score = drawn("score_vs_simulated.json"),
         *pred = drawn("predicted_vs_simulated.json"),
         *bw = drawn("bandwidth_scale.json");
  for (int n = 0; n < 3; n++) {
    double a[6][2], b[6][2];
    for (int m = 0, i = 0; m < 2; m++)
      for (int k = 0; k < 3; k++, i++) {
        a[i][0] = fill_score(m, k), b[i][0] = 20 + fill_score(m, k);
        a[i][1] = b[i][1] = fill_iteration(n, m, k);
      }
    char label[32];
    snprintf(label, sizeof label, "%s: ", nets[n]);
    expect_points(artist(panel(score, "worldwide"), "scatters", label), a, 6,
                  "score_vs_simulated");
    expect_points(artist(panel(pred, "worldwide"), "scatters", label), b, 6,
                  "predicted_vs_simulated");
    char title[64];
    snprintf(title, sizeof title, "worldwide, %s network", nets[n]);
    json_t *p = panel(bw, title);
    cr_expect_eq(lim(p, "ylim", 0), 0, "%s: iteration time from 0", title);
    static const char *methods[] = {"dtfm-identity", "megatron"};
    for (int m = 0; m < 2; m++) {
      double y[3];
      for (int k = 0; k < 3; k++) y[k] = fill_iteration(n, m, k);
      expect_line(artist(p, "lines", methods[m]), scales, y, 3, title);
    }
  }
  json_decref(score), json_decref(pred), json_decref(bw);
  json_t *conv = drawn("convergence.json");
  json_t *p = panel(conv, "DT-FM score");
  double x[50], y[50];
  for (int c = 1; c <= 50; c++) x[c - 1] = c, y[c - 1] = 70.0 - c / 5.0;
  expect_line(artist(p, "lines", "run 1: gcma on worldwide"), x, y, 50,
              "gcma's curve");
  for (int c = 1; c <= 20; c++) x[c - 1] = c, y[c - 1] = 40.0 - c;
  expect_line(artist(p, "lines", "run 2: hybrid on regional"), x, y, 20,
              "hybrid's curve");
  json_decref(conv);
  expect_timeline();
}

/* plot.py --OPTION path alone (no database), --scenario 'three cities';
 * what it drew into name, titled "what: three cities" (json_decref). */
static json_t *plot_alone(const char *option, const char *path,
                          const char *name, const char *what) {
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "'%s/analysis/plot.py' --%s '%s' --out '%s' "
                              "--series --scenario 'three cities'",
                          GEODES_SOURCE_DIR, option, path,
                          support_path("png")),
               0, "%s", r.err);
  support_run_clear(&r);
  json_t *fig = drawn(name);
  char title[128];
  snprintf(title, sizeof title, "%s: three cities", what);
  cr_expect_str_eq(json_string_value(json_object_get(fig, "title")), title);
  return fig;
}

/* plot.py --timeline alone (no database) draws the timeline, titled with
 * --scenario's name. */
Test(plot, timeline_alone) {
  const char *tl = support_write_file(support_path("t.json"), TIMELINE);
  json_decref(plot_alone("timeline", tl, "timeline.json",
                         "Per-device timeline"));
  cr_expect_gt(png_size("timeline.png"), 10000);
  expect_timeline();
  cr_expect_eq(png_size("score_vs_simulated.png"), -1);
}

/* explain --link-stats at 0.1 s: times written 0.3, 0.7 ... (not 3 x 0.1
 * as a float); every step of the top panel's lines is the CSV's. */
Test(plot, links_draw_every_step_of_the_csv) {
  enum { STEPS = 40 };
  char *csv = strdup("t_s,kind,resource,src,dst,bytes,rate_gbps,"
                     "utilisation,flows\n");
  double ab[STEPS], bc[STEPS], t[STEPS];
  for (int k = 0; k < STEPS; k++) {
    ab[k] = 0.02 * k, bc[k] = k % 3 ? 0 : 0.5, t[k] = 0.1 * k;
    char row[256];
    snprintf(row, sizeof row, "%.9g,link,A>B,A,B,1e6,1,%.9g,1\n"
             "%.9g,link,A>A,A,A,5e6,1,0.9,1\n", 0.1 * k, ab[k], 0.1 * k);
    if (bc[k] > 0)
      snprintf(row + strlen(row), sizeof row - strlen(row),
               "%.9g,link,B>C,B,C,2e6,1,%.9g,2\n", 0.1 * k, bc[k]);
    csv = realloc(csv, strlen(csv) + strlen(row) + 1);
    strcat(csv, row);
  }
  const char *path = support_write_file(support_path("l.csv"), csv);
  free(csv);
  json_t *fig = plot_alone("links", path, "links.json", "Link utilisation");
  json_t *top = json_array_get(json_object_get(fig, "panels"), 0);
  double y[STEPS];
  for (int k = 0; k < STEPS; k++) y[k] = 100 * ab[k];
  expect_values(artist(top, "lines", "A>B"), t, y, STEPS, "A>B");
  for (int k = 0; k < STEPS; k++) y[k] = 100 * bc[k];
  expect_values(artist(top, "lines", "B>C"), t, y, STEPS, "B>C");
  json_decref(fig);
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
  /* goodput above, time lost below, at the outages per hour the marks
   * give (2 and 6 device_down in an hour), each from 0 */
  json_t *fig = drawn("policies.json");
  json_t *top = panel(fig, "worldwide-varying, netem network"),
         *bottom = json_array_get(json_object_get(fig, "panels"), 1);
  static const char *policies[] = {"restart", "reroute", "replan"};
  for (int p = 0; p < 3; p++) {
    double x[2] = {2, 6}, good[2], lost[2];
    for (int rate = 0; rate < 2; rate++)
      good[rate] = 20 - p - 4 * rate,
      lost[rate] = 100 * 100.0 * (rate + 1) * (p + 1) / 3600;
    expect_line(artist(top, "lines", policies[p]), x, good, 2, "goodput");
    expect_line(artist(bottom, "lines", policies[p]), x, lost, 2, "lost");
  }
  cr_expect_eq(lim(top, "ylim", 0), 0);
  cr_expect_eq(lim(bottom, "ylim", 0), 0);
  json_decref(fig);
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

/* A training run of 8 kept iterations of 40 s: three back to back, then
 * lost (a checkpoint of 5 s), then a 3-hour outage; the fifth trains 12 %
 * fewer samples (a replica lost a while). Its start times in starts. */
static const double STARTS[8] = {0, 40, 80, 125, 165, 205 + 10800,
                                 245 + 10800, 285 + 10800};
static double run_samples(int i) { return i == 4 ? 1024 * 0.88 : 1024; }

static void fill_gaps(const char *path) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep t.json", NULL, -1,
                                          "0", "x"}, &e);
  db_result r;
  db_result_init(&r);
  r.key = "k", r.study = "sweep", r.scenario = "worldwide";
  r.method = "dtfm-identity", r.network_model = "tcp", r.recovery = "restart";
  r.iterations = 8, r.total_s = STARTS[7] + 40, r.samples_per_s = 1;
  r.lost_s = r.total_s - 8 * 40;
  r.nit = 8;
  r.it = calloc(8, sizeof *r.it);
  for (int i = 0; i < 8; i++)
    r.it[i] = (db_iteration){.index = i, .start_s = STARTS[i],
                             .iteration_s = 40, .replicas = 8 - (i == 4),
                             .samples = run_samples(i),
                             .lost_s = i ? STARTS[i] - STARTS[i - 1] - 40 : 0};
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  db_result_clear(&r);
  db_close(d);
}

/* iterations.png draws each kept iteration over its own span at its
 * samples/s (start, middle, end), breaks the line where nothing trained
 * (the checkpoint, the outage) and only there, and starts its axis at 0
 * (a 12 % dip is not a collapse). */
Test(plot, iterations_break_where_nothing_trained_and_start_at_zero) {
  const char *path = support_path("gaps.db");
  fill_gaps(path);
  json_t *fig, *p = plotted(path, "", "iterations.json", "worldwide", &fig);
  cr_expect_eq(lim(p, "ylim", 0), 0, "throughput's axis starts at %g",
               lim(p, "ylim", 0));
  double x[8 * 3 + 2], y[8 * 3 + 2];
  size_t n = 0;
  for (int i = 0; i < 8; i++) {
    if (i == 3 || i == 5) x[n] = y[n] = NAN, n++; /* lost before it */
    for (int k = 0; k < 3; k++, n++)
      x[n] = (STARTS[i] + 20.0 * k) / 3600, y[n] = run_samples(i) / 40;
  }
  expect_line(artist(p, "lines", "run"), x, y, n, "the run");
  json_decref(fig);
}

/* A shape search's database: every stages x replicas of 1..12 x 1..10
 * (120 shapes), each predicted, every tenth simulated. */
static void fill_shapes(const char *path) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes schedule x --shape auto",
                                          "my cluster", 1, "0", "x"}, &e);
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  for (int st = 1; st <= 12; st++)
    for (int rep = 1; rep <= 10; rep++) {
      char key[32], pipes[1024] = "{\"pipelines\": [";
      for (int r = 0, dev = 0; r < rep; r++) {
        strcat(pipes, r ? ", [" : "[");
        for (int k = 0; k < st; k++, dev++)
          snprintf(pipes + strlen(pipes), sizeof pipes - strlen(pipes),
                   "%s%d", k ? ", " : "", dev);
        strcat(pipes, "]");
      }
      strcat(pipes, "]}");
      db_result r;
      db_result_init(&r);
      snprintf(key, sizeof key, "shape %d x %d", st, rep);
      r.key = key, r.study = "shape", r.scenario = "my cluster";
      r.method = "shape", r.network_model = "tcp";
      strcpy(r.dp_algo, "ring");
      r.alloc = strdup(pipes), r.batch = 64;
      r.predicted_iteration_s = 10.0 + st + 0.5 * rep;
      if ((st * 10 + rep) % 10 == 0) r.iteration_s = 11.0 + st;
      cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
      free(r.alloc);
    }
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  db_close(d);
}

/* shapes.png: its x labels readable (8 pt or more, none over another,
 * in order of devices then stages), a point per configuration at its
 * predicted samples/s, the panel titled with the scenario's name. */
Test(plot, shapes_labels_are_readable) {
  const char *path = support_path("shapes.db");
  fill_shapes(path);
  json_t *fig, *p = plotted(path, "--shapes", "shapes.json",
                            "my cluster (run 1)", &fig);
  cr_expect_geq(json_number_value(json_object_get(p, "xticklabel_fontsize")),
                8);
  cr_expect_eq(json_integer_value(json_object_get(p,
                                                  "xticklabels_overlapping")),
               0, "overlapping x labels");
  /* the labels, in order: devices, then stages; some may be left blank */
  const json_t *labels = json_object_get(p, "xticklabels");
  cr_expect_geq(json_array_size(labels), 30, "most shapes named");
  int last_dev = 0, last_st = 0;
  for (size_t i = 0; i < json_array_size(labels); i++) {
    int st, rep;
    const char *l = json_string_value(json_array_get(labels, i));
    cr_assert_eq(sscanf(l, "%dx%d", &st, &rep), 2, "label '%s'", l);
    cr_expect(st * rep > last_dev || (st * rep == last_dev && st > last_st),
              "label '%s' after %d devices, %d stages", l, last_dev, last_st);
    last_dev = st * rep, last_st = st;
  }
  /* x: the shape's rank by (devices, stages) */
  double want[120][2];
  int rank[13][11] = {{0}}, n = 0;
  for (int dev = 1; dev <= 120; dev++)
    for (int st = 1; st <= 12; st++)
      if (dev % st == 0 && dev / st <= 10) rank[st][dev / st] = n++;
  for (int st = 1, i = 0; st <= 12; st++)
    for (int rep = 1; rep <= 10; rep++, i++)
      want[i][0] = rank[st][rep], want[i][1] = 64 / (10.0 + st + 0.5 * rep);
  expect_points(artist(p, "scatters", "predicted"), want, 120, "predicted");
  json_decref(fig);
}

/* Titles name a scenario by its name, not its file's: a `geodes run
 * cl.json` stores its points as "dir/cl.json" and its run as "my mixed
 * cluster" (validate's rows too): one panel of that name; a sweep's file
 * beside the database is read for its "name". */
Test(plot, titles_name_the_scenario_not_its_file) {
  const char *path = support_path("names.db");
  support_write_file(support_path("cl2.json"),
                     "{\"name\": \"second cluster\", \"sites\": []}\n");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run1 = db_run_begin(d, &(db_run){"geodes run dir/cl.json",
                                           "my mixed cluster", 1, "0", "x"},
                              &e);
  int64_t run2 = db_run_begin(d, &(db_run){"geodes sweep --db n.db sw.json",
                                           NULL, -1, "0", "x"}, &e);
  const struct { int64_t run; const char *study, *scenario; } rows[] = {
      {run1, "sweep", "dir/cl.json"}, {run1, "validate", "my mixed cluster"},
      {run2, "sweep", "cl2.json"}};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 2; k++) {
      char key[32];
      snprintf(key, sizeof key, "key %d %d", i, k);
      db_result r;
      db_result_init(&r);
      r.key = key, r.study = rows[i].study, r.scenario = rows[i].scenario;
      r.method = "random", r.network_model = "tcp";
      r.score_s = 10 + i + k, r.iteration_s = 20 + i + k;
      cr_assert_eq(db_result_put(d, rows[i].run, &r, &e), 1, "%s", e.msg);
    }
  db_close(d);
  cr_assert_eq(plot(path, ">/dev/null 2>&1"), 0);
  json_t *fig = drawn("score_vs_simulated.json");
  cr_expect_eq(json_array_size(json_object_get(fig, "panels")), 2);
  double mine[4][2] = {{10, 20}, {11, 21}, {11, 21}, {12, 22}};
  expect_points(artist(panel(fig, "my mixed cluster"), "scatters", "tcp"),
                mine, 4, "my mixed cluster");
  double second[2][2] = {{12, 22}, {13, 23}};
  expect_points(artist(panel(fig, "second cluster"), "scatters", "tcp"),
                second, 2, "second cluster");
  json_decref(fig);
}

/* Issue 36: costs.png draws each priced method of a scenario at its mean
 * samples/s and dollars per 1,000 samples (the two seeds of a method
 * averaged), a panel per scenario; rows without a price are left out. */
Test(plot, costs_draw_dollars_against_speed) {
  const char *path = support_path("costs.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes sweep c.json", NULL, -1,
                                          "0", "x"}, &e);
  static const char *algos[] = {"central-ps", "diloco", "central-ps"};
  static const int abits[] = {16, 16, 4};
  char keys[16][32];
  int k = 0;
  db_begin(d, &e);
  for (int a = 0; a < 3; a++)
    for (int seed = 0; seed < 2; seed++, k++) {
      db_result r;
      db_result_init(&r);
      snprintf(keys[k], sizeof keys[k], "c %d", k);
      r.key = keys[k], r.study = "sweep", r.scenario = "ww";
      r.method = "gcma", r.network_model = "tcp";
      snprintf(r.dp_algo, sizeof r.dp_algo, "%s", algos[a]);
      r.activation_bits = abits[a], r.grad_bits = 16;
      if (a == 1) r.inner_steps = 100;
      r.samples_per_s = 10 + a + seed;
      r.usd_per_1k_samples = 2.0 - 0.5 * a + 0.1 * seed;
      r.usd = 4, r.egress_usd = a == 1 ? 0.04 : 1;
      cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
    }
  db_result r; /* not priced: not drawn */
  db_result_init(&r);
  r.key = "free", r.study = "sweep", r.scenario = "ww", r.method = "gcma";
  r.network_model = "tcp", r.samples_per_s = 99;
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  cr_assert_eq(db_commit(d, &e), ERR_OK);
  db_close(d);
  json_t *fig, *p = plotted(path, "", "costs.json", "ww", &fig);
  double want[3][2] = {{10.5, 2.05}, {11.5, 1.55}, {12.5, 1.05}};
  const char *labels[] = {"pipeline, central-ps (gcma",
                          "diloco H=100 (gcma",
                          "pipeline, central-ps, 4-bit activations (gcma"};
  for (int a = 0; a < 3; a++)
    expect_points(artist(p, "scatters", labels[a]), &want[a], 1, labels[a]);
  cr_expect_eq(json_array_size(json_object_get(p, "scatters")), 3);
  json_t *t = json_object_get(p, "texts");
  char *texts = json_dumps(t, 0);
  cr_expect(strstr(texts, "egress 25 %") && strstr(texts, "egress 1 %"),
            "%s", texts);
  free(texts);
  cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "xlim"),
                                                0)), 0, "from 0");
  json_decref(fig);
}
