/* test_schedule: the method entry point (every name, unknown names, `sim`
 * without an objective), the searches' results on the small built-ins
 * pinned to those of the release before the searches learnt sites, and
 * `geodes schedule` end to end: JSON output, -o and --convergence files,
 * usage errors (exit 2) and bad input (exit 1 with FILE:LINE). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedules/gcma.h"
#include "schedules/schedule.h"
#include "tests/support.h"
#include "traces/scenario.h"

static cost_ctx *ctx(void) {
  double lat[64], bw[64];
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++) {
      lat[a * 8 + b] = a / 4 == b / 4 ? 1 : 20;
      bw[a * 8 + b] = a / 4 == b / 4 ? 10 : 1;
    }
  return cost_ctx_new(2, 4, lat, bw, 0.3, 1.0);
}

static double disp(void *c, const alloc *a, err *e) {
  (void)c;
  (void)e;
  double s = 0;
  for (int i = 0; i < 8; i++) s += abs(a->device[i] - i);
  return s;
}

/* The score and allocation (FNV-1a over the pipelines, row by row) that
 * main's binary at c1a413c gave for `geodes schedule S --method M --seed N
 * --json`: the small built-ins keep them, bit for bit, whatever the
 * searches learnt for 10^4 devices (GCMA over site counts, greedy by
 * sites). */
static const struct golden {
  const char *scenario, *method;
  int seed;
  double score_s;
  uint64_t alloc_hash;
} GOLDEN[] = {
  {"worldwide", "gcma", 1, 58.66627880144894, 0x898aff6980bd5383ULL},
  {"worldwide", "gcma", 2, 58.66627880144894, 0x0198dc5a4fb1ae05ULL},
  {"worldwide", "greedy", 1, 58.66627880144894, 0x1b21904c85868efdULL},
  {"worldwide", "greedy", 2, 58.66627880144894, 0x1b21904c85868efdULL},
  {"worldwide", "random-search", 1, 83.85025990172431, 0x5fb5b3a62254e341ULL},
  {"worldwide", "random-search", 2, 82.89468538755975, 0xffbcd76d6cb9ee63ULL},
  {"regional", "gcma", 1, 31.418552584670234, 0x16707eafe02b4f71ULL},
  {"regional", "gcma", 2, 31.418552584670234, 0x2c865d77fdd514d1ULL},
  {"regional", "greedy", 1, 31.418552584670234, 0x1b21904c85868efdULL},
  {"regional", "greedy", 2, 31.418552584670234, 0x1b21904c85868efdULL},
  {"regional", "random-search", 1, 41.45634140454601, 0xa4693600e86672bbULL},
  {"regional", "random-search", 2, 39.07790476190476, 0x224f13bb6c36a5fbULL},
  {"multi-dc", "gcma", 1, 12.265857142857142, 0x363808cd363d291dULL},
  {"multi-dc", "gcma", 2, 12.265857142857142, 0x363808cd363d291dULL},
  {"multi-dc", "greedy", 1, 12.265857142857142, 0x363808cd363d291dULL},
  {"multi-dc", "greedy", 2, 12.265857142857142, 0x363808cd363d291dULL},
  {"multi-dc", "random-search", 1, 19.29442857142857, 0xde9870e150537a65ULL},
  {"multi-dc", "random-search", 2, 14.750857142857143, 0x9ab316ab88df9a8dULL},
  {"spot", "gcma", 1, 25.735, 0xa801a3a0137bdc0bULL},
  {"spot", "gcma", 2, 25.735, 0x1145fd5204fc532bULL},
  {"spot", "greedy", 1, 36.400000000000006, 0x363808cd363d291dULL},
  {"spot", "greedy", 2, 36.400000000000006, 0x363808cd363d291dULL},
  {"spot", "random-search", 1, 36.400000000000006, 0x406b2a826e7e4be1ULL},
  {"spot", "random-search", 2, 36.400000000000006, 0xbf3d202866e853f9ULL},
  {"datacenter", "gcma", 1, 4.795, 0xff7a5f6b340e91e3ULL},
  {"datacenter", "gcma", 2, 4.795, 0xcc804e672cbaeaebULL},
  {"datacenter", "greedy", 1, 4.795, 0x1b21904c85868efdULL},
  {"datacenter", "greedy", 2, 4.795, 0x1b21904c85868efdULL},
  {"datacenter", "random-search", 1, 13.165, 0x8f16956b5d4c29d9ULL},
  {"datacenter", "random-search", 2, 13.165, 0x983ac8009487f003ULL},
  {"volunteer-mix", "gcma", 1, 186.52177971987442, 0x96c28da85df866a1ULL},
  {"volunteer-mix", "gcma", 2, 186.58337666351682, 0xcd900de92861c04fULL},
  {"volunteer-mix", "greedy", 1, 192.27389806348938, 0x1a98bc0e0ecc8889ULL},
  {"volunteer-mix", "greedy", 2, 192.27389806348938, 0x1a98bc0e0ecc8889ULL},
  {"volunteer-mix", "random-search", 1, 229.73828227555282, 0x02b2ff630814151fULL},
  {"volunteer-mix", "random-search", 2, 229.66699795783495, 0xa01c4618499e6b31ULL},
};

static uint64_t alloc_hash(const alloc *a) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int r = 0; r < a->replicas; r++) {
    for (int s = 0; s < a->stages; s++)
      h = (h ^ (uint64_t)alloc_at(a, r, s)) * 0x100000001b3ULL;
    h = (h ^ 0xffff) * 0x100000001b3ULL;
  }
  return h;
}

Test(schedule, small_builtins_keep_their_results) {
  for (size_t i = 0; i < sizeof GOLDEN / sizeof *GOLDEN; i++) {
    const struct golden *g = &GOLDEN[i];
    err e = {0};
    scenario *s = scenario_load(g->scenario, &e);
    cr_assert(s, "%s", e.msg);
    cost_ctx *c = cost_ctx_from_scenario(s, &e);
    cr_assert(c, "%s", e.msg);
    search_opts o;
    search_opts_default(&o);
    o.seed = (uint64_t)g->seed;
    search_result *r = schedule_method(g->method, c, &o, NULL, &e);
    cr_assert(r, "%s", e.msg);
    cr_expect(r->parts.score_s == g->score_s, "%s %s seed %d: %.17g, not %.17g",
              g->scenario, g->method, g->seed, r->parts.score_s, g->score_s);
    cr_expect_eq(alloc_hash(r->best), g->alloc_hash, "%s %s seed %d: another "
                 "allocation", g->scenario, g->method, g->seed);
    search_result_free(r);
    cost_ctx_free(c);
    scenario_free(s);
  }
}

Test(schedule, every_method_gives_a_valid_allocation) {
  cost_ctx *c = ctx();
  search_opts o;
  search_opts_default(&o);
  o.population = 10;
  o.trials = 40;
  search_objective sim = {.name = "disp", .alloc = disp};
  for (const char *const *m = schedule_method_names(); *m; m++) {
    err e = {0};
    search_result *r = schedule_method(*m, c, &o, &sim, &e);
    cr_assert_not_null(r, "%s: %s", *m, e.msg);
    cr_expect_eq(alloc_validate(r->best, 2, 4, 8, *m, &e), ERR_OK, "%s", e.msg);
    cr_expect_str_eq(r->method, *m);
    cr_expect_geq(r->candidates, 1);
    cr_expect_float_eq(r->parts.score_s, cost_alloc(c, r->best, NULL), 1e-12);
    if (strcmp(*m, "sim") == 0)
      cr_expect_leq(r->objective_s, r->start_s);
    search_result_free(r);
  }
  cost_ctx_free(c);
}

/* `sim` starts from the greedy pipelines too: with no budget beyond the
 * starts, the identity (what the greedy pipelines are on two sites of four
 * devices, and disp's optimum) is found although no GCMA candidate is it. */
Test(schedule, sim_starts_from_the_greedy_pipelines) {
  cost_ctx *c = ctx();
  search_opts o;
  search_opts_default(&o);
  o.population = 10;
  o.trials = 0;
  search_objective sim = {.name = "disp", .alloc = disp};
  err e = {0};
  search_result *r = schedule_method("sim", c, &o, &sim, &e);
  cr_assert_not_null(r, "%s", e.msg);
  cr_expect_eq(r->candidates, SEARCH_SIM_STARTS + 1);
  cr_expect_gt(r->start_s, 0, "the cost model's choice is not the identity");
  cr_expect_float_eq(r->objective_s, 0, 0);
  search_result_free(r);
  cost_ctx_free(c);
}

/* The DT-FM score, counting the partitions it judges. */
typedef struct counted {
  search_dtfm *d;
  long n;
} counted;

static double count_partition(void *ctx, const int *groups, err *e) {
  counted *k = ctx;
  k->n++;
  search_objective o = search_dtfm_objective(k->d);
  return o.partition(o.ctx, groups, e);
}

/* A memo (search_opts.memo) keeps gcma's best partitions for sim: sim
 * then judges no partition of its own (no second evolution) and finds what
 * it finds without the memo, candidate for candidate; another seed, or
 * gcma's own run, evolves again. */
Test(schedule, sim_starts_from_gcmas_kept_evolution) {
  cost_ctx *c = ctx();
  counted k = {.d = search_dtfm_new(c)};
  search_objective obj = {.name = "counted", .partition = count_partition,
                          .ctx = &k};
  search_objective sim = {.name = "disp", .alloc = disp};
  search_opts o;
  search_opts_default(&o);
  o.population = 10;
  o.trials = 6;
  err e = {0};
  search_result *alone = schedule_method_with("sim", c, &o, &obj, &sim, &e);
  cr_assert_not_null(alone, "%s", e.msg);
  long evolution = k.n;
  cr_assert_gt(evolution, SEARCH_TRIALS, "sim evolves GCMA (DT-FM's budget)");
  search_opts om = o;
  om.memo = gcma_memo_new();
  om.trials = -1; /* gcma's default budget is sim's */
  k.n = 0;
  search_result *g = schedule_method_with("gcma", c, &om, &obj, NULL, &e);
  cr_assert_not_null(g, "%s", e.msg);
  cr_expect_eq(k.n, evolution, "gcma runs the same evolution");
  om.trials = o.trials;
  k.n = 0;
  search_result *r = schedule_method_with("sim", c, &om, &obj, &sim, &e);
  cr_assert_not_null(r, "%s", e.msg);
  cr_expect_eq(k.n, 0, "sim took the memo's partitions");
  cr_expect(alloc_equal(r->best, alone->best));
  cr_expect_eq(r->objective_s, alone->objective_s);
  cr_expect_eq(r->start_s, alone->start_s);
  cr_assert_eq(r->candidates, alone->candidates);
  for (long i = 0; i < r->candidates; i++)
    cr_expect_eq(r->convergence[i], alone->convergence[i], "candidate %ld", i);
  om.seed = o.seed + 1;
  search_result *r2 = schedule_method_with("sim", c, &om, &obj, &sim, &e);
  cr_assert_not_null(r2, "%s", e.msg);
  cr_expect_eq(k.n, evolution, "another seed, another evolution");
  k.n = 0;
  om.trials = -1;
  search_result *g2 = schedule_method_with("gcma", c, &om, &obj, NULL, &e);
  cr_assert_not_null(g2, "%s", e.msg);
  cr_expect_eq(k.n, evolution, "gcma logs its own evolution every time");
  cr_expect_eq(g2->candidates, g->candidates);
  search_result_free(g2);
  search_result_free(r2);
  search_result_free(r);
  search_result_free(g);
  search_result_free(alone);
  gcma_memo_free(om.memo);
  search_dtfm_free(k.d);
  cost_ctx_free(c);
}

Test(schedule, unknown_and_unwired_methods_fail) {
  cost_ctx *c = ctx();
  search_opts o;
  search_opts_default(&o);
  err e = {0};
  cr_assert_null(schedule_method("annealing", c, &o, NULL, &e));
  cr_assert_eq(e.code, ERR_UNKNOWN);
  cr_assert(strstr(e.msg, "annealing") && strstr(e.msg, "gcma"));
  err_clear(&e);
  cr_assert_null(schedule_method("sim", c, &o, NULL, &e));
  cr_assert_eq(e.code, ERR_CONFIG);
  cr_assert(schedule_method_known("hybrid") && !schedule_method_known("x"));
  cost_ctx_free(c);
}

TestSuite(schedule_cli, .init = support_dir_make, .fini = support_dir_remove);

Test(schedule_cli, json_and_files) {
  const char *dir = support_dir();
  json_t *o = support_geodes_json("schedule multi-dc --trials 200 --seed 3 "
                                  "--json -o '%s/a.json' --convergence "
                                  "'%s/c.csv'", dir, dir);
  cr_expect_str_eq(json_string_value(json_object_get(o, "method")), "gcma");
  cr_expect_eq(json_integer_value(json_object_get(o, "candidates")), 300);
  double score = json_real_value(json_object_get(o, "score_s"));
  cr_expect_leq(score, 14.751 + 1e-3, "at least the identity's score");
  cr_expect_gt(json_real_value(json_object_get(o, "iteration_s")), 0);
  cr_expect_eq(json_array_size(json_object_get(o, "alloc")), 8);
  json_decref(o);
  FILE *f = fopen(support_path("c.csv"), "r");
  cr_assert_not_null(f);
  char line[128];
  cr_assert_not_null(fgets(line, sizeof line, f));
  cr_expect_str_eq(line, "candidate,best_score_s\n");
  int rows = 0;
  double last = INFINITY, v;
  long cand;
  while (fscanf(f, "%ld,%lf", &cand, &v) == 2) {
    cr_expect_leq(v, last);
    last = v;
    rows++;
  }
  fclose(f);
  cr_expect_eq(rows, 300);
  cr_expect_float_eq(last, score, 1e-6);
  cr_expect_eq(access(support_path("a.json"), R_OK), 0);
}

Test(schedule_cli, usage_errors_exit_2) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "schedule"), 2);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --trials -3"), 2);
  cr_expect(strstr(r.err, "--trials") != NULL, "%s", r.err);
  /* --trials 0 was accepted: a "search" of no candidates */
  cr_expect_eq(support_geodes(&r, "schedule worldwide --method gcma "
                              "--trials 0"), 2);
  cr_expect(strstr(r.err, "--trials wants an integer in [1, 100000000], not "
                   "'0'") != NULL, "%s", r.err);
  /* issue 33: an exact integer written as a real is taken (--window-bytes
   * 16e6 was refused where --bytes 64e6 was taken); 2.5e0 and hex are not */
  cr_expect_eq(support_geodes(&r, "predict worldwide --method dtfm-identity "
                              "--window-bytes 16e6 --batch 1.024e3 --json"),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "\"window_bytes\":16000000") != NULL, "%s", r.out);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --trials 2.5e0"), 2);
  cr_expect(strstr(r.err, "--trials wants an integer in [1, 100000000], not "
                   "'2.5e0'") != NULL, "%s", r.err);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --trials 0x10"), 2);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --method annealing"), 2);
  cr_expect(strstr(r.err, "annealing") != NULL, "%s", r.err);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --bogus"), 2);
  cr_expect_eq(support_geodes(&r, "schedule --help"), 0);
  cr_expect(strstr(r.out, "--convergence") != NULL);
  support_run_clear(&r);
}

Test(schedule_cli, bad_scenario_names_file_and_line) {
  const char *path = support_write_file(
      support_path("bad.json"),
      "{\"name\": \"bad\",\n \"sites\": [{\"name\": \"a\", \"devices\": 4}],\n"
      " \"bogus_key\": 1\n}\n");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "schedule '%s'", path), 1);
  char want[300];
  snprintf(want, sizeof want, "%s:", path);
  const char *at = strstr(r.err, want);
  cr_expect(at && at[strlen(want)] >= '1' && at[strlen(want)] <= '9',
            "message names file and line: %s", r.err);
  cr_expect_eq(support_geodes(&r, "schedule worldwide --trials 10 -o "
                              "'%s/no/such/dir/a.json'", support_dir()), 1);
  cr_expect(strstr(r.err, "no/such/dir/a.json") != NULL, "%s", r.err);
  support_run_clear(&r);
}
