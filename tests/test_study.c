/* test_study: the study of `geodes run` as a library call — its hooks come
 * in the report's order (the table, one call per placement with a row per
 * network model, the table's end, the validation), the rows it hands over
 * are the rows it stored (as sweep points), and an unknown GPU fails its
 * check before any database is opened. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/study.h"
#include "analysis/sweep.h"
#include "base/mem.h"
#include "models/alloc.h"
#include "sim/place.h"
#include "tests/support.h"

#define SCENARIO GEODES_FIXTURES "/analysis/three-sites.json"

TestSuite(study, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

typedef struct heard {
  char log[256];
  char methods[8][32];
  double netem_s[8];
  int placements, validated_samples;
  char *packed[VALIDATE_NETWORKS][8]; /* each validation row, sweep_pack'ed */
  size_t len[VALIDATE_NETWORKS][8];
} heard;

static void on_table(void *ctx) { strcat(((heard *)ctx)->log, "T"); }

static void on_placement(void *ctx, const char *method,
                         const db_result rows[TRANSPORT_NMODELS]) {
  heard *h = ctx;
  strcat(h->log, "P");
  snprintf(h->methods[h->placements], sizeof h->methods[0], "%s", method);
  h->netem_s[h->placements++] = rows[TRANSPORT_NETEM].iteration_s;
  for (int m = 0; m < TRANSPORT_NMODELS; m++) {
    cr_expect_str_eq(rows[m].network_model,
                     transport_model_name((transport_model)m));
    cr_expect(isfinite(rows[m].iteration_s) && isfinite(rows[m].score_s));
  }
}

static void on_done(void *ctx) { strcat(((heard *)ctx)->log, "D"); }

static void on_validated(void *ctx, const validate_report *r) {
  heard *h = ctx;
  strcat(h->log, "V");
  h->validated_samples = validate_nsamples(r);
  err none = {0};
  for (int v = 0; v < validate_nverdicts(r); v++)
    for (int i = 0; i < validate_nsamples(r) && i < 8; i++)
      h->packed[v][i] = sweep_pack(ERR_OK, &none, validate_row(r, v, i),
                                   &h->len[v][i]);
}

static void heard_free(heard *h) {
  for (int v = 0; v < VALIDATE_NETWORKS; v++)
    for (int i = 0; i < 8; i++) free(h->packed[v][i]);
}

static int run_study(const char *db_path, heard *h, err *e) {
  scenario *s = scenario_load(SCENARIO, e);
  cr_assert_not_null(s, "%s", e->msg);
  scenario_knobs k;
  scenario_knobs_init(&k);
  cr_assert_eq(scenario_apply(s, &k, e), ERR_OK, "%s", e->msg);
  int rc = study_check(s, e);
  study_opts o = {
      .name = SCENARIO, .s = s, .knobs = &k,
      .transport = transport_options_default(), .samples = 4,
      .db_path = db_path,
      .run = {.command = "test", .version = "0", .git = "x"},
      .hooks = {.ctx = h, .table = on_table, .placement = on_placement,
                .table_done = on_done, .validated = on_validated}};
  if (rc == ERR_OK) rc = study_run(&o, e);
  scenario_free(s);
  return rc;
}

Test(study, hooks_in_order_rows_as_stored) {
  const char *path = support_path("s.db");
  heard h = {0};
  err e = {0};
  cr_assert_eq(run_study(path, &h, &e), ERR_OK, "%s", e.msg);
  cr_expect_str_eq(h.log, "TPPPPPPDV");
  const char *want[] = {"dtfm-identity", "megatron-order", "random",
                        "greedy",        "gcma",     "sim"};
  for (int i = 0; i < 6; i++) {
    cr_expect_str_eq(h.methods[i], want[i]);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM results WHERE study = 'sweep' AND method "
             "= '%s' AND network_model = 'netem' AND iteration_s = %.17g",
             want[i], h.netem_s[i]);
    cr_expect_eq(support_sql_int(path, sql), 1, "%s: the row handed over is "
                 "the row stored", want[i]);
  }
  cr_expect_eq(h.validated_samples, 4);
  heard_free(&h);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results WHERE "
                                   "study = 'sweep' AND identity IS NOT NULL"),
               18);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM runs WHERE status = "
                                   "'ok' AND scenario = 'three-sites' AND "
                                   "seed = 7"),
               1);
}

/* The validation's sample of 4 is the placements dtfm-identity,
 * megatron-order, greedy and gcma, which the study simulated already: it
 * takes their rows (validate_known), and every row is, byte for byte in
 * every figure sweep_pack carries, what a validation on its own
 * simulates. */
Test(study, validation_takes_the_placements_rows) {
  heard h = {0};
  err e = {0};
  cr_assert_eq(run_study(support_path("v.db"), &h, &e), ERR_OK, "%s", e.msg);
  scenario *s = scenario_load(SCENARIO, &e);
  cr_assert_not_null(s, "%s", e.msg);
  validate_opts vo = {.samples = 4, .networks = VALIDATE_ALL_NETWORKS,
                      .transport = transport_options_default()};
  validate_report *r = validate_run(s, &vo, &e);
  cr_assert_not_null(r, "%s", e.msg);
  const char *kinds[] = {"dtfm-identity", "megatron-order", "greedy", "gcma"};
  err none = {0};
  for (int i = 0; i < 4; i++) {
    cr_expect_str_eq(validate_kind(r, i), kinds[i]);
    for (int v = 0; v < validate_nverdicts(r); v++) {
      size_t len;
      char *alone = sweep_pack(ERR_OK, &none, validate_row(r, v, i), &len);
      cr_expect(len == h.len[v][i] && !memcmp(alone, h.packed[v][i], len),
                "%s under model %d: the study's row is not validate's",
                kinds[i], v);
      free(alone);
    }
  }
  validate_report_free(r);
  scenario_free(s);
  heard_free(&h);
}

/* A sample equal to a known placement (dtfm-identity's; greedy and gcma
 * place alike on this scenario) takes the known row (here marked
 * by an iteration time no simulation gives); the others are simulated.
 * Then greedy's sample is handed the same placement (validate_opts.placed)
 * instead of its search: it takes the known row too. */
Test(study, validate_takes_a_known_row) {
  err e = {0};
  scenario *s = scenario_load(SCENARIO, &e);
  cr_assert_not_null(s, "%s", e.msg);
  alloc *a = sim_place_scenario(s, "dtfm-identity", NULL, &e);
  cr_assert_not_null(a, "%s", e.msg);
  db_result rows[TRANSPORT_NMODELS];
  for (int m = 0; m < TRANSPORT_NMODELS; m++) {
    db_result_init(&rows[m]);
    rows[m].iteration_s = 1000 + m;
    rows[m].alloc = mem_strdup("{}");
  }
  validate_known k = {.a = a, .rows = rows};
  validate_opts vo = {.samples = 4, .networks = VALIDATE_ALL_NETWORKS,
                      .transport = transport_options_default(),
                      .known = &k, .nknown = 1};
  validate_report *r = validate_run(s, &vo, &e);
  cr_assert_not_null(r, "%s", e.msg);
  for (int v = 0; v < validate_nverdicts(r); v++)
    for (int i = 0; i < validate_nsamples(r); i++) {
      double t = validate_row(r, v, i)->iteration_s;
      if (!strcmp(validate_kind(r, i), "dtfm-identity"))
        cr_expect_eq(t, 1000 + (int)validate_verdict_at(r, v)->network);
      else
        cr_expect(t > 0 && t < 1000, "%s: simulated, %g s",
                  validate_kind(r, i), t);
    }
  validate_report_free(r);
  const alloc *placed[SCHEDULE_NMETHODS] = {0};
  placed[SCHEDULE_GREEDY] = a;
  vo.placed = placed;
  r = validate_run(s, &vo, &e);
  cr_assert_not_null(r, "%s", e.msg);
  cr_assert_str_eq(validate_kind(r, 2), "greedy");
  for (int v = 0; v < validate_nverdicts(r); v++)
    cr_expect_eq(validate_row(r, v, 2)->iteration_s,
                 1000 + (int)validate_verdict_at(r, v)->network);
  validate_report_free(r);
  for (int m = 0; m < TRANSPORT_NMODELS; m++) db_result_clear(&rows[m]);
  alloc_free(a);
  scenario_free(s);
}

/* What the draw's searches reported (validate_opts.searching). */
typedef struct searches_heard {
  long calls, gcma_done;
  bool ordered;
} searches_heard;

static void on_search(void *ctx, long done, long total, double best_s) {
  searches_heard *h = ctx;
  (void)best_s;
  h->ordered &= done >= 1 && done <= total;
  if (total == SEARCH_POPULATION + SEARCH_TRIALS) h->gcma_done = done;
  h->calls++;
}

/* validate's draw reports its searches' candidates (GCMA's 5,000 among
 * them, to the last), and draws what it draws without the hook. */
Test(study, validate_reports_the_draws_searches) {
  err e = {0};
  scenario *s = scenario_load(SCENARIO, &e);
  cr_assert_not_null(s, "%s", e.msg);
  validate_opts vo = {.samples = 4, .networks = 1u << TRANSPORT_IDEAL,
                      .transport = transport_options_default()};
  validate_report *quiet = validate_run(s, &vo, &e);
  cr_assert_not_null(quiet, "%s", e.msg);
  searches_heard h = {.ordered = true};
  vo.searching = on_search, vo.progress_ctx = &h;
  validate_report *r = validate_run(s, &vo, &e);
  cr_assert_not_null(r, "%s", e.msg);
  cr_expect(h.calls > 0 && h.ordered, "%ld calls", h.calls);
  cr_expect_eq(h.gcma_done, SEARCH_POPULATION + SEARCH_TRIALS);
  cr_assert_eq(validate_nsamples(r), validate_nsamples(quiet));
  for (int i = 0; i < validate_nsamples(r); i++)
    cr_expect_eq(validate_row(r, 0, i)->iteration_s,
                 validate_row(quiet, 0, i)->iteration_s, "sample %d", i);
  validate_report_free(r);
  validate_report_free(quiet);
  scenario_free(s);
}

Test(study, unknown_gpu_fails_before_the_database) {
  err e = {0};
  scenario *s = scenario_load(SCENARIO, &e);
  cr_assert_not_null(s);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.gpu = "B200";
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(study_check(s, &e), ERR_UNKNOWN);
  cr_expect(strstr(e.msg, "'B200' is unknown"), "%s", e.msg);
  scenario_free(s);
}

/* Issue 33: `geodes run` printed "gpt3-xl, 0 layers" for a scenario that
 * leaves the layers to its model (0 in the record): it prints the model's
 * depth. */
Test(study, run_prints_the_models_depth) {
  const char *scen = support_write_file(
      support_path("tiny.json"),
      "{\"name\": \"tiny\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
      "\"gpu\": \"A100\"}, {\"name\": \"b\", \"devices\": 2, \"gpu\": "
      "\"A100\"}], \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1}, "
      "\"workload\": {\"model\": \"gpt3-small\", \"batch\": 8, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "run '%s' --samples 2 --db '%s' --quiet",
                              scen, support_path("tiny.db")), 0, "%s", r.err);
  cr_expect(strstr(r.out, "workload  gpt3-small, 12 layers,"), "%s", r.out);
  cr_expect(strstr(r.out, "latency_ms (one-way, t = 0)"), "two sites: the "
            "matrices");
  support_run_clear(&r);
}

/* Past 16 sites `geodes run` summarises each site's links (the least,
 * median and greatest: trace_site_spread, tested in test_trace) instead of
 * printing two matrices wider than a screen. */
Test(study, run_summarises_many_sites) {
  char text[4096] = "{\"name\": \"many\", \"sites\": [";
  for (int i = 0; i < 17; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text),
             "%s{\"name\": \"s%d\", \"devices\": 1, \"gpu\": \"A100\"}",
             i ? ", " : "", i);
  strcat(text, "], \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1}, "
               "\"workload\": {\"model\": \"gpt3-small\", \"batch\": 17, "
               "\"micro_batch\": 1, \"stages\": 1, \"replicas\": 17}}");
  const char *scen = support_write_file(support_path("many.json"), text);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "run '%s' --samples 2 --db '%s' --quiet",
                              scen, support_path("many.db")), 0, "%s", r.err);
  cr_expect(strstr(r.out, "links to the other sites at t = 0 (17 sites"),
            "%s", r.out);
  cr_expect(strstr(r.out, "geodes scenarios --export many"), "%s", r.out);
  cr_expect(strstr(r.out, "\n16  s16                       10        10"
                          "        10        10          1         1"
                          "         1         1\n"), "%s", r.out);
  cr_expect(!strstr(r.out, "latency_ms (one-way"), "no matrix");
  support_run_clear(&r);
}
