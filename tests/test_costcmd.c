/* test_costcmd: the --cost-cmd protocol end to end with the shipped Python
 * models (analysis/cost_alphabeta.py, analysis/cost_alpa.py): their
 * predictions against the same equations written here in C (a naive
 * reference), batches against one-at-a-time, and every failure the
 * protocol names — a model that exits, hangs, prints non-JSON, answers
 * another id, gives a negative, NaN or missing prediction, prints too
 * much or exits badly — each an error naming the command and the
 * candidate, with the child reaped and geodes alive (SIGPIPE). */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "analysis/costcmd.h"
#include "analysis/costcmd_header.h"
#include "models/cost.h"
#include "models/roofline.h"
#include "models/spec_workload.h"
#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "schedules/objective.h"
#include "support.h"
#include "base/mem.h"

#define ALPHABETA "python3 " GEODES_SOURCE_DIR "/analysis/cost_alphabeta.py"
#define ALPA "python3 " GEODES_SOURCE_DIR "/analysis/cost_alpa.py"

/* Six devices of three GPU types in three sites with unequal links
 * (tests/fixtures/analysis/three-sites.csv): 3 stages x 2 replicas. */
static const char mixed_json[] =
    "{\"name\": \"mixed\", \"seed\": 3,\n"
    " \"sites\": [{\"name\": \"a\", \"devices\": 2, \"gpu\": \"V100\", "
    "\"nic_gbps\": 10},\n"
    "           {\"name\": \"b\", \"devices\": 2, \"gpu\": \"A100\", "
    "\"nic_gbps\": 10},\n"
    "           {\"name\": \"c\", \"devices\": 2, \"gpu\": \"T4\", "
    "\"nic_gbps\": 10, \"compute_efficiency\": 0.5}],\n"
    " \"network\": {\"trace\": \"three-sites.csv\"},\n"
    " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 7, \"batch\": 16,\n"
    "              \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2,\n"
    "              \"micro_batches_per_pass\": 4}}\n";

typedef struct world {
  scenario *s;
  spec_workload w;
  const spec_gpu *gpu[6];
  char *header;
  int layers[3];
} world;

static void world_load(world *x) {
  err e;
  err_clear(&e);
  x->s = scenario_parse(mixed_json, strlen(mixed_json),
                        GEODES_FIXTURES "/analysis/mixed.json", &e);
  cr_assert_not_null(x->s, "%s", e.msg);
  cr_assert_eq(spec_workload_resolve(x->s, &x->w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(spec_device_gpus(x->s, x->gpu, &e), ERR_OK, "%s", e.msg);
  double ag, gg;
  cr_assert_eq(cost_sizes(x->s, &ag, &gg, &e), ERR_OK, "%s", e.msg);
  x->header = costcmd_header_json(x->s, &x->w, x->gpu, ag, gg,
                                  TRANSPORT_NETEM);
  for (int st = 0; st < 3; st++) x->layers[st] = spec_stage_layers(&x->w, st);
}

static void world_free(world *x) {
  free(x->header);
  scenario_free(x->s);
}

/* No child of this test process is left, running or zombie. */
static void assert_no_children(void) {
  errno = 0;
  cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "a child is left");
  cr_assert_eq(errno, ECHILD);
}

/* Seconds of compute per micro-batch (forward + backward) of stage st on
 * device d, as the cost models compute it from the header: the stage's
 * FLOPs over the device's flops_per_s (the roofline's fraction of peak on
 * a layer, over the site's factor). */
static double stage_s(const world *x, int st, int d) {
  const scenario_site *site = &x->s->sites[x->s->device_site[d]];
  double f = spec_stage_fwd_flops(&x->w, st) + spec_stage_bwd_flops(&x->w, st);
  return f / (x->gpu[d]->peak_flops * roofline_layer_fraction(x->gpu[d], &x->w)) *
         spec_site_compute_factor(site, x->gpu[d]);
}

/* analysis/cost_alphabeta.py's equations, written out again. */
static double alphabeta_ref(const world *x, const alloc *a) {
  int S = a->stages, D = a->replicas;
  double act = spec_activation_bytes(&x->w), slot = 0, sync = 0;
  for (int st = 0; st < S; st++) {
    double c = 0;
    for (int r = 0; r < D; r++) c = fmax(c, stage_s(x, st, alloc_at(a, r, st)));
    for (int r = 0; st < S - 1 && r < D; r++) {
      trace_value v = scenario_link(x->s, alloc_at(a, r, st),
                                    alloc_at(a, r, st + 1), 0);
      c = fmax(c, 2 * (v.latency_ms / 1e3 + act * 8 / (v.bandwidth_gbps * 1e9)));
    }
    slot = fmax(slot, c);
    double amax = 0, ibmax = 0;
    for (int r = 0; r < D; r++) {
      trace_value v = scenario_link(x->s, alloc_at(a, r, st),
                                    alloc_at(a, (r + 1) % D, st), 0);
      amax = fmax(amax, v.latency_ms / 1e3);
      ibmax = fmax(ibmax, 8 / (v.bandwidth_gbps * 1e9));
    }
    double g = spec_stage_gradient_bytes(&x->w, st);
    sync = fmax(sync, 2.0 * (D - 1) * (amax + g / D * ibmax));
  }
  return x->w.passes * (x->w.micro_batches_per_pass + S - 1) * slot + sync;
}

/* analysis/cost_alpa.py: Alpa's equation (2), per pass. */
static double alpa_ref(const world *x, const alloc *a) {
  double sum = 0, most = 0;
  for (int st = 0; st < a->stages; st++) {
    double t = 0;
    for (int r = 0; r < a->replicas; r++)
      t = fmax(t, stage_s(x, st, alloc_at(a, r, st)));
    sum += t, most = fmax(most, t);
  }
  return x->w.passes * (sum + (x->w.micro_batches_per_pass - 1) * most);
}

/* Scores n seeded random allocations through cmd in one batch and checks
 * each against ref. */
static void check_model(const char *cmd, double (*ref)(const world *,
                                                       const alloc *)) {
  world x;
  world_load(&x);
  enum { N = 40 };
  alloc *a[N];
  const int *l[N];
  double got[N];
  for (int i = 0; i < N; i++) a[i] = alloc_random(2, 3, 100 + i), l[i] = x.layers;
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(cmd, x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  cr_assert_eq(costcmd_score(c, N, (const alloc *const *)a, l, got, &e),
               ERR_OK, "%s", e.msg);
  for (int i = 0; i < N; i++) {
    double want = ref(&x, a[i]);
    cr_assert(want > 0);
    cr_assert_float_eq(got[i], want, 1e-9 * want, "candidate %d: %.17g vs "
                       "%.17g", i, got[i], want);
  }
  cr_assert_eq(costcmd_answered(c), N);
  cr_assert_eq(costcmd_close(c, &e), ERR_OK, "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  world_free(&x);
}

Test(costcmd, alphabeta_model_matches_its_equations) {
  check_model(ALPHABETA, alphabeta_ref);
}

Test(costcmd, alpa_model_matches_its_equations) {
  check_model(ALPA, alpa_ref);
}

/* A stream of candidates far larger than a pipe holds, both ways (the
 * lines out, the answers back), submitted without a collect between: no
 * deadlock, and every answer is the model's equation, in order. */
Test(costcmd, a_long_stream_fills_no_pipe_for_good) {
  world x;
  world_load(&x);
  enum { N = 8000 };
  alloc **a = mem_alloc(N * sizeof *a);
  double *got = mem_alloc(N * sizeof *got);
  for (int i = 0; i < N; i++) a[i] = alloc_random(2, 3, 900 + i);
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(ALPHABETA, x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  for (int i = 0; i < N; i++)
    cr_assert_eq(costcmd_submit(c, a[i], x.layers, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(costcmd_pending(c), N);
  cr_assert_eq(costcmd_collect(c, N, got, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(costcmd_pending(c), 0);
  for (int i = 0; i < N; i += 97) {
    double want = alphabeta_ref(&x, a[i]);
    cr_assert_float_eq(got[i], want, 1e-9 * want, "candidate %d", i);
  }
  cr_assert_eq(costcmd_answered(c), N);
  cr_assert_eq(costcmd_close(c, &e), ERR_OK, "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  free(a), free(got);
  world_free(&x);
}

Test(costcmd, batches_and_single_candidates_agree_and_ids_run_on) {
  world x;
  world_load(&x);
  enum { N = 12 };
  alloc *a[N];
  const int *l[N];
  double batch[N];
  for (int i = 0; i < N; i++) a[i] = alloc_random(2, 3, 7 + i), l[i] = x.layers;
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(ALPHABETA, x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  cr_assert_eq(costcmd_score(c, N, (const alloc *const *)a, l, batch, &e),
               ERR_OK, "%s", e.msg);
  for (int i = 0; i < N; i++) {
    double one = costcmd_score_one(c, a[i], x.layers, &e);
    cr_assert(one == batch[i], "candidate %d: %.17g alone, %.17g in a batch",
              i, one, batch[i]);
  }
  cr_assert_eq(costcmd_score(c, 0, NULL, NULL, NULL, &e), ERR_OK);
  cr_assert_eq(costcmd_answered(c), 2 * N);
  cr_assert_eq(costcmd_close(c, &e), ERR_OK, "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  world_free(&x);
}

/* The n candidates a[i] with l[i] streamed: each submitted, then a pause
 * (so that the model's answers, or its failure, arrive while candidates
 * are still being submitted), then collected into out. costcmd_score's
 * result. */
static int stream_slowly(costcmd *c, int n, alloc **a, const int **l,
                         double *out, err *e) {
  int rc = ERR_OK;
  for (int i = 0; i < n && rc == ERR_OK; i++) {
    rc = costcmd_submit(c, a[i], l[i], e);
    nanosleep(&(struct timespec){0, 30000000}, NULL);
  }
  int got = costcmd_collect(c, costcmd_pending(c), out, e);
  return rc ? rc : got;
}

/* Runs the α–β model with --misbehave MODE:3 on 6 candidates in one batch
 * (or, with close_only, answers all then ends) and returns the error; the
 * same candidates streamed slowly give the same error, to the letter. */
static err misbehave_at(const char *mode, int at, double timeout_s,
                        bool close_only) {
  world x;
  world_load(&x);
  enum { N = 6 };
  alloc *a[N];
  const int *l[N];
  double out[N];
  for (int i = 0; i < N; i++) a[i] = alloc_random(2, 3, 40 + i), l[i] = x.layers;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --misbehave %s:%d", ALPHABETA, mode, at);
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(cmd, x.header, timeout_s, &e);
  cr_assert_not_null(c, "%s", e.msg);
  int rc = stream_slowly(c, N, a, l, out, &e);
  if (close_only) {
    cr_assert_eq(rc, ERR_OK, "%s", e.msg);
    rc = costcmd_close(c, &e);
  }
  costcmd_free(c);
  err streamed = e;
  err_clear(&e);
  c = costcmd_start(cmd, x.header, timeout_s, &e);
  cr_assert_not_null(c, "%s", e.msg);
  rc = costcmd_score(c, N, (const alloc *const *)a, l, out, &e);
  if (close_only) {
    cr_assert_eq(rc, ERR_OK, "%s", e.msg);
    rc = costcmd_close(c, &e);
  }
  cr_assert_neq(rc, ERR_OK, "mode %s went unnoticed", mode);
  cr_assert_eq(rc, e.code);
  /* the session stays failed, with the same message */
  err again;
  err_clear(&again);
  cr_assert_eq(costcmd_score(c, 1, (const alloc *const *)a, l, out, &again), rc);
  cr_assert_str_eq(again.msg, e.msg);
  costcmd_free(c);
  assert_no_children();
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  world_free(&x);
  cr_assert(strstr(e.msg, "cost command 'python3 "), "%s", e.msg);
  cr_assert(strstr(e.msg, "--misbehave"), "the command is named: %s", e.msg);
  cr_assert_eq(streamed.code, e.code);
  cr_assert_str_eq(streamed.msg, e.msg);
  return e;
}

static err misbehave(const char *mode, double timeout_s, bool close_only) {
  return misbehave_at(mode, 3, timeout_s, close_only);
}

static void expect_candidate(const err *e, const char *what) {
  cr_assert(strstr(e->msg, "candidate 3 {\"pipelines\": [["), "%s", e->msg);
  cr_assert(strstr(e->msg, what), "'%s' in: %s", what, e->msg);
}

Test(costcmd, a_model_that_exits_is_named_with_its_status) {
  err e = misbehave("exit", 20, false);
  cr_assert_eq(e.code, ERR_IO);
  expect_candidate(&e, "exited with status 3");
}

Test(costcmd, a_model_that_hangs_times_out_per_candidate) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  err e = misbehave("hang", 0.5, false);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  cr_assert_eq(e.code, ERR_IO);
  expect_candidate(&e, "gave no answer to candidate 3");
  cr_assert(strstr(e.msg, "within 0.5 s"), "%s", e.msg);
  cr_assert(dt >= 0.5 && dt < 10, "gave up after %.2f s", dt);
}

Test(costcmd, a_line_that_is_not_json) {
  err e = misbehave("garbage", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "not JSON: 'predicted: soon'");
  /* issue 24, 16: JSON that jansson cannot hold is said to be that */
  e = misbehave("huge", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "with a number past what a double or a 64-bit "
                   "integer holds: '{\"id\": 3, \"predicted_s\": 1e400}'");
  e = misbehave("bigid", 20, false);
  expect_candidate(&e, "with a number past what a double or a 64-bit "
                   "integer holds: '{\"id\": 18446744073709551616, ");
  e = misbehave("nul", 20, false);
  expect_candidate(&e, "with a line that holds a NUL byte: '{\"id\": 3, ");
}

Test(costcmd, an_answer_with_the_wrong_id) {
  err e = misbehave("wrong-id", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "answered id 4 where candidate 3");
}

Test(costcmd, a_negative_prediction) {
  err e = misbehave("negative", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "negative predicted_s");
}

Test(costcmd, a_nan_prediction) {
  err e = misbehave("nan", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "not a finite number");
}

/* Issue 35, 13: a key given twice is refused naming the key (jansson kept
 * the last), and a prediction past COSTCMD_MAX_PREDICTED_S (1e308 s was
 * printed as objective_s) naming the line. */
Test(costcmd, a_key_given_twice) {
  err e = misbehave("dup-key", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "with a key given twice ('\"predicted_s\"'): '{\"id\": "
                   "3, \"predicted_s\": ");
  e = misbehave("dup-id", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "with a key given twice ('\"id\"'): '{\"id\": 3, "
                   "\"id\": 3, ");
}

Test(costcmd, an_absurd_prediction) {
  err e = misbehave("absurd", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "with a predicted_s of 1e+308 s, past the ceiling of "
                   "1e+09 s (31.7 years): '{\"id\": 3, \"predicted_s\": "
                   "1e308}'");
}

Test(costcmd, a_missing_prediction) {
  err e = misbehave("missing", 20, false);
  cr_assert_eq(e.code, ERR_PARSE);
  expect_candidate(&e, "without a \"predicted_s\"");
}

Test(costcmd, a_line_beyond_the_answers) {
  err e = misbehave("extra", 20, false);  /* read as candidate 4's answer */
  cr_assert_eq(e.code, ERR_PARSE);
  cr_assert(strstr(e.msg, "answered id 3 where candidate 4"), "%s", e.msg);
  e = misbehave_at("extra", 5, 20, false);  /* after the batch's last */
  cr_assert_eq(e.code, ERR_PARSE);
  cr_assert(strstr(e.msg, "printed a line beyond its 6 answers"), "%s", e.msg);
}

Test(costcmd, a_model_that_exits_badly_at_the_end) {
  err e = misbehave("status", 20, true);
  cr_assert_eq(e.code, ERR_IO);
  cr_assert(strstr(e.msg, "exited with status 4 after its 6 answers"), "%s",
            e.msg);
}

/* A command that never reads its input: the header (100 KB for 64
 * devices, more than a pipe holds) meets a closed pipe. Without SIGPIPE
 * blocked this test process would die. */
Test(costcmd, a_command_that_does_not_read_is_an_error_not_a_signal) {
  scenario *s = support_scenario("worldwide");
  spec_workload w;
  const spec_gpu *gpu[64];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  char *h = costcmd_header_json(s, &w, gpu, 0.5, 0.9, TRANSPORT_NETEM);
  cr_assert_gt(strlen(h), 65536);
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start("exit 0", h, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  alloc *a = alloc_identity(8, 8);
  int layers[8] = {3, 3, 3, 3, 3, 3, 3, 3};
  cr_assert(isnan(costcmd_score_one(c, a, layers, &e)));
  cr_assert_eq(e.code, ERR_IO);
  cr_assert(strstr(e.msg, "cost command 'exit 0' exited with status 0"),
            "%s", e.msg);
  cr_assert(strstr(e.msg, "before answering candidate 0"), "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  sigset_t pending;
  sigpending(&pending);
  cr_assert_not(sigismember(&pending, SIGPIPE), "no SIGPIPE left pending");
  alloc_free(a);
  free(h);
  scenario_free(s);
}

Test(costcmd, a_command_that_does_not_exist) {
  world x;
  world_load(&x);
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start("/nonexistent/model --fast 2>/dev/null",
                             x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  alloc *a = alloc_identity(2, 3);
  cr_assert(isnan(costcmd_score_one(c, a, x.layers, &e)));
  cr_assert(strstr(e.msg, "'/nonexistent/model --fast 2>/dev/null' exited "
                   "with status 127"), "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  alloc_free(a);
  world_free(&x);
}

Test(costcmd, freeing_a_running_session_reaps_it) {
  world x;
  world_load(&x);
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(ALPHABETA, x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  costcmd_free(c);
  assert_no_children();
  world_free(&x);
}

Test(costcmd, the_header_is_one_json_line_with_the_links) {
  world x;
  world_load(&x);
  cr_assert_null(strchr(x.header, '\n'));
  json_error_t je;
  json_t *h = json_loads(x.header, 0, &je);
  cr_assert_not_null(h, "%s", je.text);
  cr_assert_str_eq(json_string_value(json_object_get(h, "protocol")),
                   "geodes-cost-cmd/1");
  json_t *sc = json_object_get(h, "scenario");
  json_t *lat = json_object_get(sc, "latency_ms");
  json_t *bw = json_object_get(sc, "bandwidth_gbps");
  cr_assert_eq(json_array_size(lat), 6);
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 6; b++) {
      json_t *l = json_array_get(json_array_get(lat, a), b);
      json_t *v = json_array_get(json_array_get(bw, a), b);
      if (a == b) {
        cr_assert(json_is_null(v));
        continue;
      }
      trace_value t = scenario_link(x.s, a, b, 0);
      cr_assert_eq(json_real_value(l), t.latency_ms);
      cr_assert_eq(json_real_value(v), t.bandwidth_gbps);
    }
  json_t *dev = json_array_get(json_object_get(sc, "devices"), 4);
  cr_assert_str_eq(json_string_value(json_object_get(dev, "gpu")), "T4");
  /* the roofline's fraction of the T4's peak on this layer, over the
   * site's factor: a layer's FLOPs over it give the engine's time */
  const scenario_site *t4 = &x.s->sites[x.s->device_site[4]];
  cr_assert_float_eq(json_real_value(json_object_get(dev, "flops_per_s")),
                     65e12 * roofline_layer_fraction(x.gpu[4], &x.w) /
                         spec_site_compute_factor(t4, x.gpu[4]),
                     1e3);
  json_t *w = json_object_get(h, "workload");
  cr_assert_eq(json_integer_value(json_object_get(w, "passes")), x.w.passes);
  cr_assert_eq(json_real_value(json_object_get(w, "layer_fwd_flops")),
               spec_layer_flops(x.w.model));
  json_decref(h);
  world_free(&x);
}

/* GCMA searching with the α–β model as its objective (one candidate per
 * round trip): its best is the α–β value of the allocation it returns, no
 * candidate it scored was unanswered, and the session ends cleanly. */
Test(costcmd, gcma_searches_with_the_plugged_model) {
  world x;
  world_load(&x);
  err e;
  err_clear(&e);
  cost_ctx *c = cost_ctx_from_scenario(x.s, &e);
  objective *o = objective_new(x.s, c, NULL, false, &e);
  costcmd *cc = costcmd_start(ALPHABETA, x.header, 20, &e);
  cr_assert(c && o && cc, "%s", e.msg);
  search_objective obj = objective_custom(o, "cost-cmd", costcmd_judge, cc);
  search_opts so;
  search_opts_default(&so);
  so.population = 10, so.trials = 60, so.seed = 2;
  search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, &obj, &so, &e);
  cr_assert_not_null(r, "%s", e.msg);
  cr_assert_float_eq(r->objective_s, alphabeta_ref(&x, r->best),
                     1e-9 * r->objective_s);
  /* each partition: the realised allocation and its reverse */
  cr_assert_geq(costcmd_answered(cc), 2 * r->candidates);
  cr_assert_eq(costcmd_close(cc, &e), ERR_OK, "%s", e.msg);
  search_result_free(r);
  costcmd_free(cc);
  objective_free(o);
  cost_ctx_free(c);
  assert_no_children();
  world_free(&x);
}

/* GCMA through the model one candidate per round trip (batch 1, the
 * one-at-a-time scorer) or in batches (objective_custom_batch; stream:
 * objective_custom_stream, each candidate sent when made): the model
 * answers the same candidates, and the search's convergence, score and
 * allocation are the same to the bit. */
static search_result *gcma_through_model(world *x, bool random, int batch,
                                         bool stream, long *answered) {
  err e;
  err_clear(&e);
  cost_ctx *c = cost_ctx_from_scenario(x->s, &e);
  objective *o = objective_new(x->s, c, NULL, false, &e);
  costcmd *cc = costcmd_start(ALPHABETA, x->header, 20, &e);
  cr_assert(c && o && cc, "%s", e.msg);
  search_objective obj =
      batch == 1 ? objective_custom(o, "cost-cmd", costcmd_judge, cc)
      : stream   ? objective_custom_stream(o, "cost-cmd", costcmd_judge,
                                           costcmd_judge_submit,
                                           costcmd_judge_collect, cc)
                 : objective_custom_batch(o, "cost-cmd", costcmd_judge,
                                          costcmd_judge_many, cc);
  search_opts so;
  search_opts_default(&so);
  so.population = 12, so.trials = 80, so.seed = 4, so.batch = batch;
  search_result *r = random ? baseline_random_search(c, &obj, &so, &e)
                            : gcma_search(c, GCMA_GAIN_PIPELINE, &obj, &so, &e);
  cr_assert_not_null(r, "%s", e.msg);
  *answered = costcmd_answered(cc);
  cr_assert_eq(costcmd_close(cc, &e), ERR_OK, "%s", e.msg);
  costcmd_free(cc);
  objective_free(o);
  cost_ctx_free(c);
  return r;
}

/* The search through the model in batches of `batch` (streamed or not)
 * equals the search one candidate at a time, to the bit. */
static void gcma_equals_one_at_a_time(bool random, int batch, bool stream) {
  world x;
  world_load(&x);
  long n1, nb;
  search_result *one = gcma_through_model(&x, random, 1, false, &n1);
  search_result *many = gcma_through_model(&x, random, batch, stream, &nb);
  cr_assert_eq(nb, n1);
  cr_assert_eq(many->candidates, one->candidates);
  cr_assert_eq(memcmp(many->convergence, one->convergence,
                      (size_t)one->candidates * sizeof *one->convergence),
               0);
  cr_assert_eq(memcmp(&many->objective_s, &one->objective_s,
                      sizeof one->objective_s), 0);
  cr_assert_eq(many->best->replicas * many->best->stages,
               one->best->replicas * one->best->stages);
  cr_assert_eq(memcmp(many->best->device, one->best->device,
                      (size_t)(one->best->replicas * one->best->stages) *
                          sizeof *one->best->device),
               0);
  search_result_free(one);
  search_result_free(many);
  assert_no_children();
  world_free(&x);
}

Test(costcmd, gcma_in_batches_equals_one_at_a_time) {
  gcma_equals_one_at_a_time(false, 0, false);
}

/* Each candidate sent as soon as it is made (the CLI's way), broods of the
 * default size and of 3: the same search. */
Test(costcmd, gcma_streamed_equals_one_at_a_time) {
  gcma_equals_one_at_a_time(false, 0, true);
  gcma_equals_one_at_a_time(false, 3, true);
}

/* random-search's samples streamed in batches (default, and 7 over 80
 * samples: a short last batch) or batched: the one-at-a-time search. */
Test(costcmd, random_search_streamed_equals_one_at_a_time) {
  gcma_equals_one_at_a_time(true, 0, true);
  gcma_equals_one_at_a_time(true, 7, true);
  gcma_equals_one_at_a_time(true, 0, false);
}

/* Answers in the shipped models' exact form are read by a short path, the
 * others by jansson: the same doubles either way, for the number forms a
 * model prints (Python's repr, integers, exponents, other spacing). */
Test(costcmd, answers_read_as_jansson_reads_them) {
  world x;
  world_load(&x);
  support_dir_make();
  static const char *const v[] = {
      "0.1", "7", "1e-05", "2.5E+3", "987654321",
      "0.30000000000000004", "146.07600000000002", "0"};
  static const double want[] = {0.1, 7.0, 1e-05, 2500.0, 987654321.0,
                                0.30000000000000004, 146.07600000000002, 0};
  enum { N = 8 };
  /* the even candidates answered in the exact form, the odd ones packed */
  const char *model = support_write_file(support_path("model.py"),
      "import sys\n"
      "v = ['0.1', '7', '1e-05', '2.5E+3', '987654321',\n"
      "     '0.30000000000000004', '146.07600000000002', '0']\n"
      "sys.stdin.readline()\n"
      "for k, line in enumerate(sys.stdin):\n"
      "    f = '{\"id\": %d, \"predicted_s\": %s}' if k % 2 == 0 else "
      "'{\"id\":%d,\"predicted_s\":%s}'\n"
      "    print(f % (k, v[k % 8]), flush=True)\n");
  char cmd[600];
  snprintf(cmd, sizeof cmd, "python3 %s", model);
  alloc *a[2 * N];
  const int *l[2 * N];
  double got[2 * N];
  for (int i = 0; i < 2 * N; i++) a[i] = alloc_random(2, 3, i), l[i] = x.layers;
  err e;
  err_clear(&e);
  costcmd *c = costcmd_start(cmd, x.header, 20, &e);
  cr_assert_not_null(c, "%s", e.msg);
  cr_assert_eq(costcmd_score(c, 2 * N, (const alloc *const *)a, l, got, &e),
               ERR_OK, "%s", e.msg);
  for (int i = 0; i < 2 * N; i++)
    cr_assert(memcmp(&got[i], &want[i % N], sizeof got[i]) == 0,
              "%s: %.17g, want %.17g", v[i % N], got[i], want[i % N]);
  cr_assert_eq(costcmd_close(c, &e), ERR_OK, "%s", e.msg);
  costcmd_free(c);
  for (int i = 0; i < 2 * N; i++) alloc_free(a[i]);
  assert_no_children();
  support_dir_remove();
  world_free(&x);
}

