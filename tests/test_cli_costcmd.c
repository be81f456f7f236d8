/* test_cli_costcmd: `--cost-cmd` end to end with the shipped Python models
 * — validate's statistics of the plugged model against a naive reference
 * over its own points, schedule searching with it (and with the predictor)
 * as the objective, and every failure of the protocol: exit 1, a message
 * naming the command and the candidate, nothing on stdout. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

#define MODEL "python3 " GEODES_SOURCE_DIR "/analysis/cost_alphabeta.py"
#define ALPA "python3 " GEODES_SOURCE_DIR "/analysis/cost_alpa.py"

TestSuite(cli_costcmd, .init = support_dir_make, .fini = support_dir_remove);

static json_t *run_json(const char *fmt, const char *a, const char *b) {
  char line[1024];
  snprintf(line, sizeof line, fmt, a, b);
  return support_geodes_json("%s", line);
}

static double num(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  cr_assert(json_is_number(v), "no number '%s'", k);
  return json_number_value(v);
}

/* Naive references over every pair: ranks with ties averaged, Spearman
 * as Pearson's correlation of the ranks, Kendall's tau-b. */
static void ranks(const double *x, int n, double *r) {
  for (int i = 0; i < n; i++) {
    double less = 0, same = 0;
    for (int j = 0; j < n; j++) less += x[j] < x[i], same += x[j] == x[i];
    r[i] = 1 + less + (same - 1) / 2;
  }
}

static double spearman(const double *x, const double *y, int n) {
  double rx[64], ry[64], mx = (n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
  ranks(x, n, rx), ranks(y, n, ry);
  for (int i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - mx);
    sxx += (rx[i] - mx) * (rx[i] - mx), syy += (ry[i] - mx) * (ry[i] - mx);
  }
  return sxy / sqrt(sxx * syy);
}

static double kendall(const double *x, const double *y, int n) {
  double c = 0, d = 0, tx = 0, ty = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double s = (x[i] - x[j]) * (y[i] - y[j]);
      c += s > 0, d += s < 0;
      tx += x[i] == x[j] && y[i] != y[j], ty += y[i] == y[j] && x[i] != x[j];
    }
  return (c - d) / sqrt((c + d + tx) * (c + d + ty));
}

static void check_validation(const char *model) {
  json_t *o = run_json("validate volunteer-mix --samples 12 --cost-cmd '%s' "
                       "--json%s", model, "");
  const json_t *cc = json_object_get(o, "cost_cmd");
  cr_assert(json_is_object(cc), "a cost_cmd object");
  cr_assert(json_is_object(json_object_get(o, "predictor")));
  const json_t *pts = json_object_get(o, "points");
  int n = (int)json_array_size(pts);
  cr_assert_eq(n, 12);
  double x[64], y[64], mape = 0, best_sim = INFINITY;
  int best = 0;
  for (int i = 0; i < n; i++) {
    const json_t *p = json_array_get(pts, (size_t)i);
    x[i] = num(p, "cost_cmd_s"), y[i] = num(p, "iteration_s");
    cr_assert(x[i] > 0 && isfinite(x[i]));
    mape += fabs(x[i] - y[i]) / y[i];
    if (x[i] < x[best]) best = i;
    best_sim = fmin(best_sim, y[i]);
  }
  cr_assert_float_eq(num(cc, "spearman"), spearman(x, y, n), 1e-9, "%.17g vs %.17g",
                     num(cc, "spearman"), spearman(x, y, n));
  cr_assert_float_eq(num(cc, "kendall"), kendall(x, y, n), 1e-9);
  cr_assert_float_eq(num(cc, "mape"), 100 * mape / n, 1e-9);
  cr_assert_float_eq(num(cc, "regret"), y[best] / best_sim - 1, 1e-12);
  json_decref(o);
}

Test(cli_costcmd, validate_reports_the_plugged_models_statistics) {
  check_validation(MODEL);
  check_validation(ALPA);
}

Test(cli_costcmd, schedule_searches_with_the_plugged_model) {
  /* the model's value of a fixed placement is what validate's sample of
   * the same placement got from it */
  json_t *v = run_json("validate volunteer-mix --samples 2 --cost-cmd '%s' "
                       "--json%s", MODEL, "");
  json_t *p0 = json_array_get(json_object_get(v, "points"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(p0, "kind")),
                   "dtfm-identity");
  json_t *f = run_json("schedule volunteer-mix --method dtfm-identity "
                       "--cost-cmd '%s' --json%s", MODEL, "");
  cr_assert_str_eq(json_string_value(json_object_get(f, "objective")),
                   "cost-cmd");
  cr_assert_eq(num(f, "objective_s"), num(p0, "cost_cmd_s"));
  /* GCMA under the model finds no worse a value than the fixed one */
  json_t *g = run_json("schedule volunteer-mix --method gcma --trials 300 "
                       "--cost-cmd '%s' --json%s", MODEL, "");
  cr_assert_leq(num(g, "objective_s"), num(f, "objective_s"));
  json_decref(v), json_decref(f), json_decref(g);
}

Test(cli_costcmd, schedule_with_the_predictor_is_what_predict_says) {
  const char *out = support_path("best.json");
  json_t *g = run_json("schedule volunteer-mix --method gcma --trials 300 "
                       "--objective predicted -o '%s' --json%s", out, "");
  json_t *p = run_json("predict volunteer-mix --alloc '%s' --json%s", out, "");
  cr_assert_eq(num(g, "objective_s"), num(p, "predicted_iteration_s"));
  /* the predictor's value of its pick is its prediction, not the score */
  cr_assert_neq(num(g, "objective_s"), num(g, "score_s"));
  json_decref(g), json_decref(p);
}

/* Each failure, at candidate 2, through validate and schedule. */
Test(cli_costcmd, every_failure_names_the_command_and_the_candidate) {
  static const struct { const char *mode, *msg; } cases[] = {
      {"exit", "exited with status 3"},
      {"hang", "s (the per-candidate timeout)"},
      {"garbage", "not JSON"},
      {"wrong-id", "answered id 3 where candidate 2"},
      {"negative", "candidate 2"},
      {"nan", "candidate 2"},
      {"missing", "candidate 2"},
      {"status", "exited with status 4 after its"},
      {"dup-key", "with a key given twice ('\"predicted_s\"')"},
      {"dup-id", "with a key given twice ('\"id\"')"},
      {"absurd", "past the ceiling of 1e+09 s"}};
  const char *cmds[] = {"validate worldwide --samples 3",
                        "schedule worldwide --method random-search "
                        "--trials 6"};
  support_run r = {0};
  for (size_t c = 0; c < 2; c++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      cr_assert_eq(support_geodes(&r, "%s --cost-timeout-s 0.5 --cost-cmd "
                                  "'" MODEL " --misbehave %s:2'",
                                  cmds[c], cases[i].mode),
                   1, "%s %s: %s", cmds[c], cases[i].mode, r.err);
      cr_assert(strstr(r.err, "geodes: cost command 'python3 "), "%s", r.err);
      cr_assert(strstr(r.err, "--misbehave"), "%s", r.err);
      cr_assert(strstr(r.err, cases[i].msg), "%s: '%s' in %s", cmds[c],
                cases[i].msg, r.err);
      cr_assert_eq(r.out_len, 0u, "no partial output: %s", r.out);
      if (strcmp(cases[i].mode, "hang") == 0)
        cr_assert(strstr(r.err, "gave no answer to candidate 2 {") &&
                  strstr(r.err, "} within 0.5 s"), "%s", r.err);
    }
  support_run_clear(&r);
}

Test(cli_costcmd, usage_errors) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "schedule worldwide --objective cost-cmd"), 2);
  cr_assert(strstr(r.err, "--cost-cmd"), "%s", r.err);
  cr_assert_eq(support_geodes(&r, "schedule worldwide --objective predicted "
                              "--cost-cmd true"), 2);
  cr_assert_eq(support_geodes(&r, "schedule worldwide --objective fastest"), 2);
  cr_assert_eq(support_geodes(&r, "validate worldwide --cost-timeout-s 0"), 2);
  support_run_clear(&r);
}

/* A sweep with --cost-cmd: its points are apart from the same sweep's
 * without one (the command is in their keys), every point also gets the
 * model's prediction, and a model that fails fails its points: exit 1,
 * none of them stored. */
Test(cli_costcmd, sweep_stores_the_models_prediction_per_point) {
  const char *sw = support_write_file(
      support_path("sw.json"),
      "{\"scenarios\": [\"volunteer-mix\"], \"methods\": [\"dtfm-identity\", "
      "\"megatron\"], \"seeds\": [1, 2]}");
  const char *db = support_path("sw.db");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --jobs 2 --cost-cmd "
                              "'" MODEL "'", sw, db), 0, "%s", r.err);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results"), 8);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "point_key LIKE '% cost_cmd=python3 %'"), 4);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "cost_cmd_s > 0 AND point_key LIKE "
                               "'% cost_cmd=%'"), 4, "its own column");
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "cost_cmd_s IS NULL"), 4, "none without it");
  const char *bad = support_path("bad.db");
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --cost-cmd "
                              "'" MODEL " --misbehave garbage:0'", sw, bad),
               1);
  cr_assert(strstr(r.err, "geodes: cost command 'python3 "), "%s", r.err);
  cr_assert(strstr(r.err, "candidate 0"), "%s", r.err);
  cr_assert_eq(support_sql_int(bad, "SELECT count(*) FROM results"), 0);
  support_run_clear(&r);
}

/* `sim` starts from GCMA's pick under the objective: its start is what
 * gcma with that objective returns, simulated. */
Test(cli_costcmd, sim_starts_from_the_objectives_pick) {
  json_t *g = run_json("schedule volunteer-mix --method gcma --objective "
                       "predicted --layers-per-stage balanced --json%s%s", "",
                       "");
  json_t *s = run_json("schedule volunteer-mix --method sim --objective "
                       "predicted --layers-per-stage balanced --trials 20 "
                       "--json%s%s", "", "");
  cr_assert_eq(num(s, "start_iteration_s"), num(g, "iteration_s"));
  cr_assert_leq(num(s, "iteration_s"), num(g, "iteration_s"));
  json_decref(g), json_decref(s);
}
