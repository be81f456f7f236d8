/* test_validate: `geodes validate` on a small scenario — the statistics it
 * prints are recomputed here, with naive O(n^2) formulas, from the rows it
 * stored; the sample is reproducible; bad input exits 1 or 2 with a message
 * naming the file. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define SCENARIO GEODES_FIXTURES "/analysis/three-sites.json"

static char dir[64];

static void make_dir(void) {
  strcpy(dir, "/tmp/geodes_test_validate_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(validate, .init = make_dir, .fini = remove_dir, .timeout = 300);

static char out_text[1 << 17], err_text[8192];

static int geodes(const char *args) {
  char cmd[1024], o[128], e[128];
  snprintf(o, sizeof o, "%s/out", dir);
  snprintf(e, sizeof e, "%s/err", dir);
  snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", GEODES_BIN, args, o, e);
  int status = system(cmd);
  FILE *f = fopen(o, "r");
  out_text[fread(out_text, 1, sizeof out_text - 1, f)] = '\0';
  fclose(f);
  f = fopen(e, "r");
  err_text[fread(err_text, 1, sizeof err_text - 1, f)] = '\0';
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Naive references. */
static double rank_of(const double *x, int n, int i) {
  double less = 0, equal = 0;
  for (int j = 0; j < n; j++) less += x[j] < x[i], equal += x[j] == x[i];
  return less + (equal + 1) / 2;
}

static double spearman(const double *x, const double *y, int n) {
  double rx[64], ry[64], m = (n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) rx[i] = rank_of(x, n, i), ry[i] = rank_of(y, n, i);
  for (int i = 0; i < n; i++) {
    sxy += (rx[i] - m) * (ry[i] - m);
    sxx += (rx[i] - m) * (rx[i] - m), syy += (ry[i] - m) * (ry[i] - m);
  }
  return sxy / sqrt(sxx * syy);
}

static double kendall(const double *x, const double *y, int n, int *disc) {
  double c = 0, d = 0, tx = 0, ty = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      if (x[i] == x[j] && y[i] == y[j]) continue;
      if (x[i] == x[j]) tx++;
      else if (y[i] == y[j]) ty++;
      else if ((x[i] - x[j]) * (y[i] - y[j]) > 0) c++;
      else d++;
    }
  *disc = (int)d;
  return (c - d) / sqrt((c + d + tx) * (c + d + ty));
}

/* How many rows of db, under network net, have this score and time. */
static int stored(const char *db, const char *net, double score, double sim) {
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h,
                                  "SELECT count(*) FROM results WHERE "
                                  "network_model = ? AND score_s = ? AND "
                                  "iteration_s = ? AND study = 'validate'",
                                  -1, &st, NULL),
               SQLITE_OK);
  sqlite3_bind_text(st, 1, net, -1, SQLITE_STATIC);
  sqlite3_bind_double(st, 2, score);
  sqlite3_bind_double(st, 3, sim);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  int n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

static double field(const json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  cr_assert_not_null(v, "field %s", k);
  return json_is_null(v) ? NAN : json_number_value(v);
}

Test(validate, statistics_match_the_stored_rows) {
  char args[512], db[128];
  snprintf(db, sizeof db, "%s/v.db", dir);
  snprintf(args, sizeof args,
           "validate '%s' --samples 12 --network all --db '%s' --json",
           SCENARIO, db);
  cr_assert_eq(geodes(args), 0, "%s", err_text);
  json_error_t je;
  json_t *root = json_loads(out_text, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  cr_expect_eq(json_integer_value(json_object_get(root, "samples")), 12);
  json_t *by = json_object_get(root, "by_network");
  cr_assert_eq(json_object_size(by), 3);
  const char *nets[] = {"ideal", "netem", "tcp"};
  for (int k = 0; k < 3; k++) {
    json_t *v = json_object_get(by, nets[k]);
    cr_assert_not_null(v, "%s", nets[k]);
    double score[64], pred[64], sim[64];
    json_t *points = json_object_get(v, "points");
    int n = (int)json_array_size(points);
    cr_assert_eq(n, 12);
    for (int i = 0; i < n; i++) {
      json_t *p = json_array_get(points, (size_t)i);
      score[i] = field(p, "score_s"), pred[i] = field(p, "predicted_iteration_s");
      sim[i] = field(p, "iteration_s");
      cr_expect_geq(stored(db, nets[k], score[i], sim[i]), 1,
                   "sample %d under %s is stored", i, nets[k]);
    }
    cr_expect_float_eq(field(v, "spearman"), spearman(score, sim, n), 1e-9);
    int disc;
    cr_expect_float_eq(field(v, "kendall"), kendall(score, sim, n, &disc),
                       1e-9);
    cr_expect_eq(field(v, "discordant"), disc);
    double best_sim = INFINITY, best_score = INFINITY, at_best_score = 0;
    double mape = 0;
    for (int i = 0; i < n; i++) {
      best_sim = fmin(best_sim, sim[i]);
      if (score[i] < best_score) best_score = score[i], at_best_score = sim[i];
      mape += fabs(pred[i] - sim[i]) / sim[i];
    }
    cr_expect_float_eq(field(v, "regret"), at_best_score / best_sim - 1, 1e-9,
                       "%s", nets[k]);
    cr_expect_float_eq(field(v, "mape"), 100 * mape / n, 1e-9);
    double rho = field(v, "spearman");
    cr_expect(rho >= -1 && rho <= 1);
  }
  json_decref(root);
}

Test(validate, reproducible_and_single_network) {
  char args[512];
  snprintf(args, sizeof args, "validate '%s' --samples 8 --network tcp --json",
           SCENARIO);
  cr_assert_eq(geodes(args), 0, "%s", err_text);
  static char first[sizeof out_text];
  memcpy(first, out_text, sizeof first);
  cr_assert_eq(geodes(args), 0);
  cr_expect_str_eq(out_text, first, "same seed, same report");
  json_t *root = json_loads(out_text, 0, NULL);
  cr_assert_not_null(root);
  cr_expect_str_eq(json_string_value(json_object_get(root, "network_model")),
                   "tcp");
  cr_expect_eq(field(root, "samples"), 8);
  cr_expect_eq(field(root, "pairs"), 28);
  json_decref(root);
  cr_assert_eq(geodes("validate '" SCENARIO "' --samples 8"), 0);
  cr_expect_not_null(strstr(out_text, "spearman"));
  cr_expect_not_null(strstr(out_text, "netem"));
}

Test(validate, bad_input) {
  cr_expect_eq(geodes("validate"), 2);
  cr_expect_eq(geodes("validate worldwide --network wifi"), 2);
  cr_expect_not_null(strstr(err_text, "--network"));
  cr_expect_eq(geodes("validate worldwide --samples 1"), 2);
  cr_expect_eq(geodes("validate --help"), 0);
  cr_expect_not_null(strstr(out_text, "regret"));
  cr_expect_eq(geodes("validate /nonexistent/s.json"), 1);
  cr_expect_not_null(strstr(err_text, "/nonexistent/s.json"), "%s", err_text);
  cr_expect_eq(geodes("validate '" SCENARIO "' --batch 10"), 1);
  cr_expect_not_null(strstr(err_text, "batch"), "%s", err_text);
  char bad[160], args[300];
  snprintf(bad, sizeof bad, "%s/bad.json", dir);
  FILE *f = fopen(bad, "w");
  fputs("{\"name\": \"x\",\n \"sites\": 3}\n", f);
  fclose(f);
  snprintf(args, sizeof args, "validate '%s'", bad);
  cr_expect_eq(geodes(args), 1);
  char where[200];
  snprintf(where, sizeof where, "%s:", bad);
  cr_expect_not_null(strstr(err_text, where), "%s", err_text);
}

static long long count_rows(const char *db, const char *q) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long n = -1;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  if (sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/* geodes run: the placements under three network models as sweep points,
 * the validation rows, gcma's convergence and the run, all in the database;
 * a sweep over the same points then computes nothing. */
Test(validate, run_study_fills_the_database) {
  char args[512], db[128], sw[128];
  snprintf(db, sizeof db, "%s/run.db", dir);
  snprintf(args, sizeof args, "run '%s' --samples 6 --db '%s'", SCENARIO, db);
  cr_assert_eq(geodes(args), 0, "%s", err_text);
  cr_expect_not_null(strstr(out_text, "plot.py"));
  cr_expect_eq(count_rows(db, "SELECT count(*) FROM results WHERE study = "
                              "'sweep'"), 15);
  cr_expect_geq(count_rows(db, "SELECT count(*) FROM results WHERE study = "
                               "'validate'"), 9);
  cr_expect_eq(count_rows(db, "SELECT count(*) FROM convergence"), 5000);
  cr_expect_eq(count_rows(db, "SELECT count(*) FROM runs WHERE status = "
                              "'ok'"), 1);
  snprintf(sw, sizeof sw, "%s/same.json", dir);
  FILE *f = fopen(sw, "w");
  fprintf(f, "{\"scenarios\": \"%s\", \"methods\": [\"dtfm-identity\", "
             "\"megatron\", \"random\", \"greedy\", \"gcma\"],\n"
             " \"networks\": [\"ideal\", \"netem\", \"tcp\"]}\n", SCENARIO);
  fclose(f);
  snprintf(args, sizeof args, "sweep '%s' --db '%s' --json", sw, db);
  cr_assert_eq(geodes(args), 0, "%s", err_text);
  cr_expect_not_null(strstr(out_text, "\"computed\":0"), "%s", out_text);
  cr_expect_eq(geodes("run --samples 1"), 2);
  cr_expect_eq(geodes("run /nonexistent.json"), 1);
  cr_expect_not_null(strstr(err_text, "/nonexistent.json"), "%s", err_text);
}
