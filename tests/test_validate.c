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
#include <unistd.h>

#include "tests/support.h"

#define SCENARIO GEODES_FIXTURES "/analysis/three-sites.json"

TestSuite(validate, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

static support_run r; /* the last geodes run */

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
  const char *db = support_path("v.db");
  cr_assert_eq(support_geodes(&r, "validate '%s' --samples 12 --network all "
                                  "--db '%s' --json",
                              SCENARIO, db),
               0, "%s", r.err);
  json_error_t je;
  json_t *root = json_loads(r.out, 0, &je);
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
    double mape = 0, ties = 0;
    for (int i = 0; i < n; i++) {
      best_sim = fmin(best_sim, sim[i]);
      best_score = fmin(best_score, score[i]);
      mape += fabs(pred[i] - sim[i]) / sim[i];
    }
    for (int i = 0; i < n; i++) /* tied best scores: their mean time */
      if (score[i] - best_score <= 1e-9 * best_score)
        at_best_score += sim[i], ties++;
    at_best_score /= ties;
    cr_expect_float_eq(field(v, "regret"), at_best_score / best_sim - 1, 1e-9,
                       "%s", nets[k]);
    cr_expect_float_eq(field(v, "mape"), 100 * mape / n, 1e-9);
    double rho = field(v, "spearman");
    cr_expect(rho >= -1 && rho <= 1);
  }
  json_decref(root);
  support_run_clear(&r);
}

Test(validate, reproducible_and_single_network) {
  const char *args = "validate '" SCENARIO "' --samples 8 --network tcp --json";
  cr_assert_eq(support_geodes(&r, "%s", args), 0, "%s", r.err);
  char *first = r.out;
  r.out = NULL;
  cr_assert_eq(support_geodes(&r, "%s", args), 0);
  cr_expect_str_eq(r.out, first, "same seed, same report");
  free(first);
  json_t *root = json_loads(r.out, 0, NULL);
  cr_assert_not_null(root);
  cr_expect_str_eq(json_string_value(json_object_get(root, "network_model")),
                   "tcp");
  cr_expect_eq(field(root, "samples"), 8);
  cr_expect_eq(field(root, "pairs"), 28);
  json_decref(root);
  cr_assert_eq(support_geodes(&r, "validate '" SCENARIO "' --samples 8"), 0);
  cr_expect_not_null(strstr(r.out, "SPEARMAN"));
  cr_expect_not_null(strstr(r.out, "tcp")); /* the default model */
  support_run_clear(&r);
}

Test(validate, bad_input) {
  cr_expect_eq(support_geodes(&r, "validate"), 2);
  cr_expect_eq(support_geodes(&r, "validate worldwide --network wifi"), 2);
  cr_expect_not_null(strstr(r.err, "--network"));
  cr_expect_eq(support_geodes(&r, "validate worldwide --samples 1"), 2);
  cr_expect_eq(support_geodes(&r, "validate --help"), 0);
  cr_expect_not_null(strstr(r.out, "regret"));
  cr_expect_eq(support_geodes(&r, "validate /nonexistent/s.json"), 1);
  cr_expect_not_null(strstr(r.err, "/nonexistent/s.json"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "validate '" SCENARIO "' --batch 10"), 1);
  cr_expect_not_null(strstr(r.err, "batch"), "%s", r.err);
  const char *bad = support_write_file(support_path("bad.json"),
                                       "{\"name\": \"x\",\n \"sites\": 3}\n");
  cr_expect_eq(support_geodes(&r, "validate '%s'", bad), 1);
  char where[200];
  snprintf(where, sizeof where, "%s:", bad);
  cr_expect_not_null(strstr(r.err, where), "%s", r.err);
  support_run_clear(&r);
}

/* geodes run: the six placements under three network models as sweep
 * points, the validation rows, the convergence of greedy, gcma and sim's
 * search under each model, and the run, all in
 * the database; a sweep over the same points then computes nothing. With
 * --gpu the points are others (their key and gpu say which GPU), and a
 * sweep over that GPU finds them. */
Test(validate, run_study_fills_the_database) {
  const char *db = support_path("run.db");
  cr_assert_eq(support_geodes(&r, "run '%s' --samples 6 --db '%s'", SCENARIO,
                              db),
               0, "%s", r.err);
  cr_expect_not_null(strstr(r.out, "plot.py"));
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "study = 'sweep'"),
               18);
  cr_expect_geq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                    "study = 'validate'"),
                9);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM convergence WHERE "
                                   "method = 'gcma'"),
               5000);
  cr_expect_geq(support_sql_int(db, "SELECT count(*) FROM convergence WHERE "
                                    "method = 'greedy'"),
                1);
  cr_expect_eq(support_sql_int(db, "SELECT count(DISTINCT method) FROM "
                                   "convergence"),
               5, "each search of the run keeps its curve");
  cr_expect_eq(support_sql_int(db, "SELECT count(DISTINCT method) FROM "
                                   "convergence WHERE method LIKE 'sim/%'"),
               3, "sim searches once per network model");
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "gpu = 'V100'"),
               support_sql_int(db, "SELECT count(*) FROM results"));
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM runs WHERE "
                                   "status = 'ok'"),
               1);
  const char *sw = support_write_file(
      support_path("same.json"),
      "{\"scenarios\": \"" SCENARIO "\", \"methods\": [\"dtfm-identity\", "
      "\"megatron\", \"random\", \"greedy\", \"gcma\", \"sim\"],\n"
      " \"networks\": [\"ideal\", \"netem\", \"tcp\"]}\n");
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, db), 0,
               "%s", r.err);
  cr_expect_not_null(strstr(r.out, "\"computed\":0"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "run '%s' --samples 6 --db '%s' --gpu a100",
                              SCENARIO, db),
               0, "%s", r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "study = 'sweep' AND gpu = 'A100' AND "
                                   "point_key LIKE '% gpu=A100 %'"),
               18, "run --gpu: new points, not the V100 ones");
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "study = 'sweep'"),
               36);
  const char *a100 = support_write_file(
      support_path("a100.json"),
      "{\"scenarios\": \"" SCENARIO "\", \"methods\": [\"dtfm-identity\", "
      "\"megatron\", \"random\", \"greedy\", \"gcma\", \"sim\"],\n"
      " \"networks\": [\"ideal\", \"netem\", \"tcp\"], \"gpus\": \"A100\"}\n");
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", a100, db), 0,
               "%s", r.err);
  cr_expect_not_null(strstr(r.out, "\"computed\":0"), "%s", r.out);
  const char *none = support_path("none.db");
  cr_expect_eq(support_geodes(&r, "run '%s' --gpu B200 --db '%s'", SCENARIO,
                              none),
               1);
  cr_expect_not_null(strstr(r.err, "'B200' is unknown"), "%s", r.err);
  cr_expect_neq(access(none, F_OK), 0, "no database for a bad --gpu");
  cr_expect_eq(support_geodes(&r, "run --samples 1"), 2);
  cr_expect_eq(support_geodes(&r, "run /nonexistent.json"), 1);
  cr_expect_not_null(strstr(r.err, "/nonexistent.json"), "%s", r.err);
  support_run_clear(&r);
}

/* One site, every link alike: every allocation has the same score and the
 * same simulated time, so the rank statistics are undefined: null in JSON
 * (the keys present, DESIGN.md section 9), "nan" in the table; regret 0. */
Test(validate, constant_sample_gives_null) {
  support_write_file(support_path("flat.csv"),
                     "t_s,src,dst,latency_ms,bandwidth_gbps\n0,a,a,1,10\n");
  const char *sc = support_write_file(
      support_path("flat.json"),
      "{\"name\": \"flat\", \"seed\": 3,\n"
      " \"sites\": [{\"name\": \"a\", \"devices\": 6, \"gpu\": \"V100\","
      " \"nic_gbps\": 100}],\n"
      " \"network\": {\"trace\": \"flat.csv\"},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 6, \"batch\": 16,"
      " \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2,"
      " \"micro_batches_per_pass\": 8}}\n");
  cr_assert_eq(support_geodes(&r, "validate '%s' --samples 5 --network ideal "
                                  "--json", sc),
               0, "%s", r.err);
  json_error_t je;
  json_t *root = json_loads(r.out, 0, &je);
  cr_assert_not_null(root, "one JSON object: %s (%s)", je.text, r.out);
  const char *undefined[] = {"spearman", "kendall"};
  for (int i = 0; i < 2; i++) {
    json_t *v = json_object_get(root, undefined[i]);
    cr_expect(v && json_is_null(v), "%s: %s", undefined[i], r.out);
  }
  cr_expect_eq(json_number_value(json_object_get(root, "regret")), 0.0);
  cr_expect_eq(json_integer_value(json_object_get(root, "discordant")), 0);
  json_decref(root);
  cr_assert_eq(support_geodes(&r, "validate '%s' --samples 5 --network ideal",
                              sc),
               0, "%s", r.err);
  cr_expect_not_null(strstr(r.out, " undefined "), "%s", r.out);
  cr_expect_null(strstr(r.out, "nan"), "%s", r.out);
  support_run_clear(&r);
}
