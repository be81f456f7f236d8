/* test_shape: the shape search (schedules/shape) against a brute force
 * over every device subset (not only the count vectors per site), every
 * shape and every layer split, with the search's placements, on ten mixed
 * GPUs in three cities; the simulation deciding among the predictor's
 * best; determinism; the shape knobs' and --shape auto's usage errors
 * (shape_check_given against a naive reference); a
 * search where nothing fits; the outputs (-o, --db, --json). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "schedules/baseline.h"
#include "schedules/shape.h"
#include "tests/support.h"
#include "traces/scenario_subset.h"
#include "traces/workload.h"

TestSuite(shape, .init = support_dir_make, .fini = support_dir_remove);

#define TEN GEODES_FIXTURES "/shape/three-city-10.json"
#define TWENTY_FOUR GEODES_FIXTURES "/shape/three-city-24.json"

/* The naive reference's state: the best score over everything. */
typedef struct brute {
  spec_workload *w;
  const scenario *v;
  const spec_gpu **gpu;
  const alloc *a;
  int *split;
  double best;      /* lowest score */
  double batch;
  shape_goal goal;
} brute;

static void brute_split(brute *b, int st, int left) {
  int n = b->w->stages;
  if (st < n - 1) {
    for (int k = 1; k <= left - (n - 1 - st); k++) {
      b->split[st] = k;
      brute_split(b, st + 1, left - k);
    }
    return;
  }
  b->split[st] = left;
  for (int s = 0; s < n; s++)
    for (int r = 0; r < b->w->replicas; r++) {
      int d = alloc_at(b->a, r, s);
      if (spec_stage_memory_with(b->w, s, b->split[s]) >
          spec_device_memory_bytes(b->v, d, b->gpu[d]))
        return;
    }
  b->w->stage_layers = b->split;
  predict_result pr;
  cr_assert_eq(predict_iteration_with(b->w, b->v, b->gpu, b->a, NULL, &pr), 0);
  double score = b->goal == SHAPE_THROUGHPUT ? pr.iteration_s / b->batch
                                             : pr.iteration_s;
  if (score < b->best) b->best = score;
}

/* Every split of one (subset, shape, micro-batch) on both placements. */
static void brute_view(brute *b, const scenario *s, const int *keep, int n,
                       int S, int R, int batch, int m) {
  scenario *v = shape_view(s, keep, n, S, R, batch, m,
                           s->workload.dp_algo, NULL);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(v, &w, NULL), 0);
  const spec_gpu **gpu = malloc((size_t)n * sizeof *gpu);
  cr_assert_eq(spec_device_gpus(v, gpu, NULL), 0);
  cost_ctx *c = cost_ctx_from_scenario(v, NULL);
  cr_assert_not_null(c);
  int *groups = malloc((size_t)n * sizeof *groups);
  baseline_greedy_groups(c, groups);
  cost_scratch *cs = cost_scratch_new(R, S);
  alloc *pl[2] = {baseline_greedy_pipelines(c), cost_realise(c, groups, cs)};
  int split[64];
  for (int p = 0; p < 2; p++) {
    *b = (brute){.w = &w, .v = v, .gpu = gpu, .a = pl[p], .split = split,
                 .best = b->best, .batch = batch, .goal = b->goal};
    brute_split(b, 0, w.layers);
    alloc_free(pl[p]);
  }
  cost_scratch_free(cs);
  free(groups), free(gpu);
  cost_ctx_free(c);
  scenario_subset_free(v);
}

/* The best score over every subset of s's devices (bit masks), shape,
 * micro-batch of micro and split. */
static double brute_force(const scenario *s, shape_goal goal,
                          const int *micro, int nmicro) {
  brute b = {.best = INFINITY, .goal = goal};
  int N = s->ndevices, L = s->workload.layers, keep[32];
  int per_replica = s->workload.batch / s->workload.replicas;
  long long K = s->workload.micro_batches_per_pass;
  for (unsigned mask = 1; mask < (1u << N); mask++) {
    int n = 0;
    for (int d = 0; d < N; d++)
      if (mask >> d & 1) keep[n++] = d;
    for (int S = 1; S <= n && S <= L; S++) {
      if (n % S) continue;
      int R = n / S;
      for (int i = 0; i < nmicro; i++) {
        int m = micro[i];
        /* throughput: the batch per replica kept, or the scenario's */
        int batches[2] = {goal == SHAPE_THROUGHPUT ? per_replica * R
                                                   : s->workload.batch,
                          goal == SHAPE_THROUGHPUT ? s->workload.batch : 0};
        for (int k = 0; k < 2; k++)
          if (batches[k] && !(batches[k] % (R * m * K)))
            brute_view(&b, s, keep, n, S, R, batches[k], m);
      }
    }
  }
  return b.best;
}

static void against_brute_force(shape_goal goal) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  o.goal = goal;
  o.simulate = 0; /* the predictor decides, as the reference does */
  o.nmicro = 2, o.micro[0] = 1, o.micro[1] = 2;
  shape_result r;
  err e = {0};
  cr_assert_eq(shape_search(s, &o, &r, &e), 0, "%s", e.msg);
  cr_assert(r.all_subsets);
  const shape_config *b = &r.all[r.best];
  double got = shape_score(goal, b, b->predicted_s);
  double want = brute_force(s, goal, o.micro, o.nmicro);
  cr_assert(isfinite(want));
  cr_assert(fabs(got - want) <= 1e-12 * want,
            "search %.17g, brute force %.17g (%d x %d on %d devices)", got,
            want, b->stages, b->replicas, b->ndev);
  shape_result_free(&r);
  scenario_free(s);
}

Test(shape, throughput_is_the_brute_force_optimum) {
  against_brute_force(SHAPE_THROUGHPUT);
}

Test(shape, iteration_is_the_brute_force_optimum) {
  against_brute_force(SHAPE_ITERATION);
}

/* A simulation that disagrees with the predictor: more stages cost more. */
static double fake_sim(void *ctx, const scenario *v, const alloc *a, err *e) {
  (void)e;
  (*(int *)ctx)++;
  return (double)v->workload.batch * 1e-3 * (1 + 0.5 * a->stages) +
         0.01 * v->ndevices;
}

Test(shape, the_simulation_decides_among_the_predictors_best) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  int calls = 0;
  o.sim = fake_sim, o.sim_ctx = &calls, o.simulate = 5;
  shape_result r;
  cr_assert_eq(shape_search(s, &o, &r, NULL), 0);
  cr_assert_eq(calls, r.simulated);
  /* the throughput goal's 5 best and each shape's best, and the
   * iteration search's at the scenario's batch (schedules/shape.c plan) */
  cr_assert(r.simulated >= 5 && r.simulated <= 2 * (5 + r.nshapes),
            "%ld simulated, %d shapes", r.simulated, r.nshapes);
  cr_assert_eq(r.pruned_predictor, r.nall - r.simulated);
  const shape_config *b = &r.all[r.best];
  cr_assert(!isnan(b->simulated_s));
  for (long i = 0; i < r.nall; i++) {
    const shape_config *c = &r.all[i];
    if (!isnan(c->simulated_s))
      cr_assert(shape_score(o.goal, b, b->simulated_s) <=
                shape_score(o.goal, c, c->simulated_s));
  }
  for (int g = 0; g < r.nshapes; g++)
    cr_assert(!isnan(r.all[r.per_shape[g]].simulated_s));
  shape_result_free(&r);
  scenario_free(s);
}

/* The progress hook: done never goes back, and ends equal to total. */
typedef struct steps {
  long calls, done, total;
} steps;

static void step(void *ctx, long done, long total) {
  steps *p = ctx;
  cr_assert(done >= p->done && done <= total, "%ld of %ld after %ld", done,
            total, p->done);
  p->calls++, p->done = done, p->total = total;
}

/* Past the devices' budget only the predictor's best is simulated; the
 * shapes left unsimulated keep their predicted best (simulated NAN); the
 * progress counts the subsets and that simulation, not the configurations
 * the budget skipped (which made its estimate of the time left wrong). */
Test(shape, simulations_stop_at_the_budget_of_devices) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  int calls = 0;
  steps p = {0};
  o.sim = fake_sim, o.sim_ctx = &calls, o.simulate = 5;
  o.simulate_devices = 1, o.progress = step, o.progress_ctx = &p;
  shape_result r;
  cr_assert_eq(shape_search(s, &o, &r, NULL), 0);
  cr_assert_eq(r.simulated, 1, "the predictor's best alone");
  cr_assert_eq(calls, 1);
  cr_assert(!isnan(r.all[r.best].simulated_s));
  int unsimulated = 0;
  for (int g = 0; g < r.nshapes; g++)
    unsimulated += isnan(r.all[r.per_shape[g]].simulated_s);
  cr_assert_eq(unsimulated, r.nshapes - 1, "every shape is listed");
  cr_assert(p.calls > 0 && p.done == p.total, "%ld of %ld", p.done, p.total);
  cr_assert_eq(p.done, r.nsubsets + r.simulated, "a step is a subset or a "
               "simulation, not a configuration skipped: %ld steps, %ld "
               "subsets, %ld simulated", p.done, r.nsubsets, r.simulated);
  shape_result_free(&r);
  scenario_free(s);
}

/* Sites of more than SHAPE_FAMILY_FULL devices: the family's grid and its
 * refinement, far fewer subsets than devices a site. */
Test(shape, a_large_family_is_refined_not_enumerated) {
  const char *text =
      "{\"name\": \"wide\", \"sites\": [{\"name\": \"a\", \"devices\": 200,"
      " \"gpu\": \"A100\"}, {\"name\": \"b\", \"devices\": 200, \"gpu\":"
      " \"A100\"}], \"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 1},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"batch\": 400, \"micro_batch\":"
      " 1, \"stages\": 1, \"replicas\": 400}}";
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "wide.json", &e);
  cr_assert(s, "%s", e.msg);
  shape_opts o;
  shape_opts_default(&o);
  steps p = {0};
  o.progress = step, o.progress_ctx = &p;
  shape_result r;
  cr_assert_eq(shape_search(s, &o, &r, &e), 0, "%s", e.msg);
  cr_assert(!r.all_subsets);
  /* three sets of sites ({a}, {b}, both), 200 values of u each */
  cr_assert(r.nsubsets > 3 * 14 && r.nsubsets < 100, "%d subsets, not 600",
            r.nsubsets);
  cr_assert(p.done == p.total && p.done == r.nsubsets, "%ld of %ld", p.done,
            p.total);
  shape_result_free(&r);
  scenario_free(s);
}

Test(shape, the_same_inputs_give_the_same_result) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  int calls = 0;
  o.sim = fake_sim, o.sim_ctx = &calls, o.diloco = true;
  shape_result a, b;
  cr_assert_eq(shape_search(s, &o, &a, NULL), 0);
  cr_assert_eq(shape_search(s, &o, &b, NULL), 0);
  cr_assert_eq(a.nall, b.nall);
  cr_assert_eq(a.best, b.best);
  for (long i = 0; i < a.nall; i++) {
    cr_assert_eq(memcmp(&a.all[i].predicted_s, &b.all[i].predicted_s,
                        sizeof(double)), 0);
    cr_assert_eq(memcmp(a.all[i].a->device, b.all[i].a->device,
                        (size_t)a.all[i].ndev * sizeof(int)), 0);
  }
  bool diloco = false;
  for (int g = 0; g < a.nshapes; g++)
    diloco |= strcmp(a.all[a.per_shape[g]].dp_algo, "diloco") == 0;
  cr_assert(diloco, "DiLoCo's shapes are reported beside the pipeline's");
  shape_result_free(&a);
  shape_result_free(&b);
  scenario_free(s);
}

/* shape_config_alloc renumbers each configuration's allocation onto its
 * view: the view's device v is keep[v] of the parent (a naive scan), every
 * view device used once. */
Test(shape, a_configuration_allocation_on_its_view) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  int calls = 0;
  o.sim = fake_sim, o.sim_ctx = &calls;
  shape_result r;
  cr_assert_eq(shape_search(s, &o, &r, NULL), 0);
  cr_assert_gt(r.nall, 0);
  for (long i = 0; i < r.nall; i++) {
    const shape_config *c = &r.all[i];
    alloc *a = shape_config_alloc(c);
    cr_assert_eq(a->replicas, c->replicas);
    cr_assert_eq(a->stages, c->stages);
    bool seen[64] = {false};
    cr_assert_leq(c->ndev, 64);
    for (int k = 0; k < c->ndev; k++) {
      int v = a->device[k], want = -1;
      for (int j = 0; j < c->ndev; j++)
        if (c->keep[j] == c->a->device[k]) want = j;
      cr_assert_eq(v, want, "configuration %ld, device %d", i, k);
      cr_assert(!seen[v]);
      seen[v] = true;
    }
    alloc_free(a);
  }
  shape_result_free(&r);
  scenario_free(s);
}

/* Every configuration's devices per site and idle devices against a naive
 * walk over the scenario's devices (a membership test each). */
Test(shape, a_configuration_sites_and_idle_devices) {
  scenario *s = support_scenario(TEN);
  shape_opts o;
  shape_opts_default(&o);
  shape_result r;
  cr_assert_eq(shape_search(s, &o, &r, NULL), 0);
  int idle[64];
  cr_assert_leq(s->ndevices, 64);
  for (long i = 0; i < r.nall; i++) {
    const shape_config *c = &r.all[i];
    int want_site[16] = {0}, want_idle = 0, sum = 0;
    int n = shape_config_idle(s, c, idle);
    for (int d = 0; d < s->ndevices; d++) {
      bool in = false;
      for (int k = 0; k < c->ndev; k++) in |= c->keep[k] == d;
      if (in) want_site[s->device_site[d]]++;
      else cr_assert_eq(idle[want_idle++], d, "configuration %ld", i);
    }
    cr_assert_eq(n, want_idle);
    for (int k = 0; k < s->nsites; k++) {
      cr_assert_eq(shape_config_at_site(s, c, k), want_site[k]);
      sum += want_site[k];
    }
    cr_assert_eq(sum + n, s->ndevices);
  }
  shape_result_free(&r);
  scenario_free(s);
}

/* geodes ARGS: exit status want, and stderr holds every one of the
 * NULL-terminated texts. */
static void fails(int want, const char *args, ...) {
  support_run r = {0};
  int got = support_geodes(&r, "%s", args);
  cr_assert_eq(got, want, "geodes %s: exit %d, stderr %s", args, got, r.err);
  va_list ap;
  va_start(ap, args);
  for (const char *t; (t = va_arg(ap, const char *));)
    cr_assert(strstr(r.err, t), "geodes %s: '%s' not in: %s", args, t, r.err);
  va_end(ap);
  support_run_clear(&r);
}

Test(shape, usage_errors_name_the_option) {
  fails(2, "simulate worldwide --method megatron --stages 5", "--stages 5",
        "does not divide the 64 devices", NULL);
  fails(2, "simulate worldwide --method megatron --replicas 3",
        "--replicas 3", "does not divide the 64 devices", NULL);
  fails(2, "predict worldwide --method megatron --stages 4 --replicas 8",
        "4 x 8 = 32, but the scenario has 64 devices", NULL);
  fails(2, "simulate worldwide --method megatron --stages 32",
        "--stages 32: 32 stages for the 24 layers", NULL);
  fails(2, "simulate worldwide --method megatron --replicas 32",
        "--replicas 32", "is not a multiple of D_dp * m * K", NULL);
  fails(2, "schedule " TEN " --shape auto --stages 11",
        "--stages 11: no replica of 11 stages fits the 10 devices", NULL);
  fails(2, "schedule " TEN " --shape auto --stages 7",
        "7 stages for the 6 layers", NULL);
  fails(2, "schedule " TEN " --shape auto --stages 4 --replicas 3",
        "12 devices, more than the 10", NULL);
  fails(2, "schedule " TEN " --shape auto --replicas 11",
        "--replicas 11: more replicas than the 10 devices", NULL);
  fails(2, "schedule " TEN " --shape auto --shape-objective iteration "
        "--replicas 7", "--stages/--replicas 0 x 7 (0: searched): "
        "three-city-10: no shape divides the batch: 60 sequences", NULL);
  fails(2, "schedule " TEN " --dp-algo auto", "--dp-algo auto needs --shape "
        "auto", NULL);
  fails(2, "schedule " TEN " --shape auto --dp-algo auto --inner-steps 50 "
        "--fragments 3", "--fragments 3: streaming DiLoCo's fragments divide "
        "the 6 layers and H = 50", NULL);
  fails(2, "schedule " TEN " --shape auto --micro-batches 1,0",
        "--micro-batches", NULL);
  /* issue 35, 15: the micro-batch is named with the option, not "no shape
   * divides the batch" */
  fails(2, "schedule " TEN " --shape auto --micro-batches 999999999",
        "--micro-batches 999999999: 999999999 is more than the batch of 60 "
        "sequences", NULL);
  /* issue 35, 5: a placement search's options were ignored */
  static const char *const unused[] = {
      "--method greedy", "--objective predicted", "--trials 5",
      "--population 4", "--starts 2", "--cost-cmd true",
      "--convergence c.csv"};
  for (size_t i = 0; i < sizeof unused / sizeof *unused; i++) {
    char args[256], want[64];
    snprintf(args, sizeof args, "schedule " TEN " --shape auto %s", unused[i]);
    snprintf(want, sizeof want, "%.*s is a placement search's",
             (int)strcspn(unused[i], " "), unused[i]);
    fails(2, args, want, "--shape auto does not run", NULL);
  }
  fails(1, "schedule " TEN " --shape auto --model gpt3-13b --gpu T4 "
        "--runtime megatron --schedule 1f1b",
        "no configuration fits in memory; the smallest stage that does not "
        "fit is stage", "a T4, holds 16.00 GB", NULL);
}

/* shape_check_given against a naive reference over every given shape of
 * the ten devices and six layers (0: searched): a stage count within both,
 * replicas within the devices, and both together within the devices; the
 * failure names its field. And DiLoCo's fragments divide the layers and H
 * (the knob's, or the default 100). */
Test(shape, the_given_shape_is_checked_against_devices_and_layers) {
  scenario *s = support_scenario(TEN);
  cr_assert_eq(s->ndevices, 10);
  for (long st = 0; st <= 12; st++)
    for (long rep = 0; rep <= 12; rep++) {
      err e = {0};
      int rc = shape_check_given(s, st, rep, NULL, &e);
      bool ok = st <= 6 && rep <= 10 && (st == 0 || rep == 0 || st * rep <= 10);
      cr_expect_eq(rc == ERR_OK, ok, "%ld x %ld: %s", st, rep, e.msg);
      if (!ok)
        cr_expect_eq(err_field(&e), st > 6 || (st > 0 && rep > 0 && rep <= 10)
                                        ? WORKLOAD_stages : WORKLOAD_replicas,
                     "%ld x %ld: %s", st, rep, e.msg);
    }
  const struct {
    int H, F;
    bool ok;
  } cases[] = {{0, 2, true}, {0, 3, false}, {50, 2, true}, {50, 3, false},
               {60, 3, true}, {60, 4, false}, {0, 1, true}, {0, 0, true}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    diloco_plan p = {.inner_steps = cases[i].H, .fragments = cases[i].F};
    err e = {0};
    int rc = shape_check_given(s, 0, 0, &p, &e);
    cr_expect_eq(rc == ERR_OK, cases[i].ok, "H %d F %d: %s", cases[i].H,
                 cases[i].F, e.msg);
    if (rc) cr_expect_eq(err_field(&e), WORKLOAD_fragments);
  }
  scenario_free(s);
}

Test(shape, a_sweep_key_fails_at_its_line) {
  const char *sw = support_write_file(
      support_path("bad.json"),
      "{\"scenarios\": [\"worldwide\"], \"methods\": [\"megatron\"],\n"
      "\"stages\": [4, 5]}\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("bad.db")), 1);
  cr_assert(strstr(r.err, "bad.json:2: stages: worldwide: workload.stages: 5 "
                   "does not divide the 64 devices"), "%s", r.err);
  /* a sweep varies the shape: each point's allocation has its own */
  const char *ok = support_write_file(
      support_path("ok.json"),
      "{\"scenarios\": [\"worldwide\"], \"methods\": [\"megatron\"],\n"
      "\"networks\": [\"ideal\"], \"stages\": [4, 16]}\n");
  const char *db = support_path("ok.db");
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", ok, db), 0, "%s",
               r.err);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "point_key LIKE '%stages=4' AND alloc LIKE "
                               "'{\"pipelines\": [[0, 16, 32, 48], %'"), 1);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "point_key LIKE '%stages=16' AND alloc LIKE "
                               "'{\"pipelines\": [[0, 4, 8, %'"), 1);
  support_run_clear(&r);
}

/* --shape auto's JSON, twice the same; -o writes the best's allocation;
 * --db stores every configuration that fits. */
Test(shape, outputs) {
  const char *db = support_path("s.db"), *out = support_path("best.json");
  support_run a = {0}, b = {0};
  cr_assert_eq(support_geodes(&a, "schedule " TEN " --shape auto --json "
                              "-o '%s' --db '%s'", out, db), 0, "%s", a.err);
  cr_assert_eq(support_geodes(&b, "schedule " TEN " --shape auto --json"), 0);
  json_t *o = json_loads(a.out, 0, NULL), *o2 = json_loads(b.out, 0, NULL);
  cr_assert_not_null(o);
  json_object_del(o2, "reproduce"); /* only the first names a file */
  json_t *o1 = json_deep_copy(o);
  json_object_del(o1, "reproduce");
  cr_assert(json_equal(o1, o2), "the same search twice gives one answer");
  json_decref(o1), json_decref(o2);
  json_t *best = json_object_get(o, "best");
  cr_assert(json_number_value(json_object_get(best, "samples_per_s")) > 0);
  long idle = (long)json_integer_value(json_object_get(best, "idle"));
  cr_assert_eq((long)json_array_size(json_object_get(o, "idle_devices")), idle);
  cr_assert(json_array_size(json_object_get(o, "shapes")) > 5);
  char *text = support_read_file(out, NULL);
  json_t *f = json_loads(text, 0, NULL);
  cr_assert(json_equal(json_object_get(f, "pipelines"),
                       json_object_get(best, "alloc")));
  cr_assert(support_sql_int(db, "SELECT count(*) FROM results WHERE method "
                            "= 'shape'") > 100);
  cr_assert_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                               "iteration_s IS NOT NULL"),
               (long long)json_integer_value(json_object_get(o, "simulated")));
  /* plot.py draws them against the shape */
  cr_assert_eq(support_sh(NULL, "'%s/analysis/plot.py' '%s' --out '%s' "
                          "--shapes >/dev/null 2>&1", GEODES_SOURCE_DIR, db,
                          support_path("figs")), 0);
  size_t png = 0;
  free(support_read_file(support_path("figs/shapes.png"), &png));
  cr_assert(png > 1000);
  json_decref(f), json_decref(o);
  free(text);
  support_run_clear(&a), support_run_clear(&b);
}

/* -o's allocation of some devices (the others idle) with the printed
 * command: simulate gives the search's simulated time again. */
Test(shape, simulate_reproduces_a_subset) {
  /* issue 35, 15: the printed command is shell-quoted (a file name with a
   * space, a '$' and parentheses ran as something else, or not at all) */
  const char *out = support_path("sub $x (1).json");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "schedule " TEN " --shape auto --json -o "
                              "'%s'", out), 0, "%s", r.err);
  json_t *o = json_loads(r.out, 0, NULL);
  json_t *best = json_object_get(o, "best");
  cr_assert(json_integer_value(json_object_get(best, "idle")) > 0);
  double want = json_number_value(json_object_get(best, "simulated_s"));
  const char *cmd = json_string_value(json_object_get(o, "reproduce"));
  cr_assert_not_null(cmd);
  cr_assert(strstr(cmd, "--stages") == NULL, "%s", cmd);
  char quoted[1024];
  snprintf(quoted, sizeof quoted, " --alloc '%s' --network-model ", out);
  cr_assert(strstr(cmd, quoted), "%s", cmd);
  cr_assert_eq(support_sh(&r, "%s%s --json", GEODES_BIN,
                          cmd + strlen("geodes")), 0, "%s", r.err);
  json_t *sim = json_loads(r.out, 0, NULL);
  cr_assert_eq(json_number_value(json_object_get(sim, "iteration_s")), want);
  json_decref(sim), json_decref(o);
  char bad[512];
  snprintf(bad, sizeof bad, "simulate " TEN " --alloc '%s' --stages 9", out);
  fails(2, bad, "pipelines of", "stages disagree with the run's --stages 9",
        "drop one of them", NULL);
  support_run_clear(&r);
}

/* The shape knobs in scenario_apply: one alone takes the other from the
 * devices; a refused one leaves the scenario as loaded. */
Test(shape, knobs_apply_and_refuse) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.stages = 16;
  cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
  cr_assert_eq(s->workload.stages, 16);
  cr_assert_eq(s->workload.replicas, 4);
  scenario_knobs_init(&k);
  k.replicas = 16;
  cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
  cr_assert_eq(s->workload.stages, 4);
  cr_assert_eq(s->workload.replicas, 16);
  err e = {0};
  scenario_knobs_init(&k);
  k.stages = 4, k.replicas = 4;
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "4 x 4 = 16, but the scenario has 64 devices"),
            "%s", e.msg);
  cr_assert_eq(s->workload.stages, 4, "a refused knob changes nothing");
  scenario_knobs_init(&k);
  k.replicas = 2; /* 32 stages for 24 layers */
  e = (err){0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "32 stages for 24 layers"), "%s", e.msg);
  scenario_knobs_init(&k);
  k.replicas = 128;
  e = (err){0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "workload.replicas: 128 does not divide the 64 "
                   "devices"), "%s", e.msg);
  scenario_free(s);
}

/* Issue 34: the same search under each runtime. Ten mixed GPUs (4 A100,
 * 3 V100, 3 T4) and an 8-layer GPT-3 2.7B: DT-FM's 4 bytes a parameter
 * fit everywhere (its host SGD 14 % of the iteration of its best, a
 * pipeline of the four A100s); the modern runtime's 16 bytes leave the
 * 16 GB cards out and its fast GPU AdamW favours a pipeline of three
 * A100s; Megatron's (1F1B, ring) data parallelism over the four A100s.
 * The answers recorded here are analysis/FINDINGS.md's. */
Test(shape, each_runtime_answers_on_a_small_mixed_cluster) {
  static const struct {
    const char *runtime, *dp_algo;
    int stages, replicas, micro;
    bool pruned;
    const char *line;
  } want[] = {
      {"modern", "central-ps", 3, 1, 2, true, "GPU AdamW, 16 B/param, optimizer"},
      {"dtfm", "central-ps", 4, 1, 2, false, "host SGD, 4 B/param, optimizer 14 %"},
      {"megatron", "ring", 1, 4, 2, true, "GPU Adam, 16 B/param, optimizer"}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    support_run r = {0};
    cr_assert_eq(support_geodes(&r, "schedule '%s' --shape auto --runtime %s "
                                "--model gpt3-2.7b --layers 8 --quiet --json",
                                TEN, want[i].runtime), 0, "%s", r.err);
    json_t *o = json_loads(r.out, 0, NULL), *b = json_object_get(o, "best");
    cr_assert_not_null(b, "%s", r.out);
    cr_expect_eq(json_integer_value(json_object_get(b, "stages")),
                 want[i].stages, "%s", want[i].runtime);
    cr_expect_eq(json_integer_value(json_object_get(b, "replicas")),
                 want[i].replicas, "%s", want[i].runtime);
    cr_expect_eq(json_integer_value(json_object_get(b, "micro_batch")),
                 want[i].micro, "%s", want[i].runtime);
    cr_expect_str_eq(json_string_value(json_object_get(b, "dp_algo")),
                     want[i].dp_algo, "%s", want[i].runtime);
    cr_expect_eq(json_integer_value(json_object_get(o, "pruned_memory")) > 0,
                 want[i].pruned, "%s", want[i].runtime);
    json_t *rt = json_object_get(o, "runtime");
    cr_expect_str_eq(json_string_value(json_object_get(rt, "name")),
                     want[i].runtime);
    const char *line = json_string_value(json_object_get(rt, "line"));
    cr_expect(line && strstr(line, want[i].line), "%s: %s", want[i].runtime,
              line ? line : "(null)");
    json_decref(o);
    /* the table names it beside its best */
    cr_assert_eq(support_geodes(&r, "schedule '%s' --shape auto --runtime %s "
                                "--model gpt3-2.7b --layers 8 --quiet", TEN,
                                want[i].runtime), 0, "%s", r.err);
    char head[64];
    snprintf(head, sizeof head, "\nruntime     %s (%s", want[i].runtime,
             want[i].line);
    cr_expect(strstr(r.out, head), "'%s' in %s", head, r.out);
    support_run_clear(&r);
  }
}

/* The best of schedule --shape auto on f under extra options, as JSON. */
static json_t *shape_best(const char *f, const char *extra, long *simulated) {
  json_t *o = support_geodes_json("schedule %s --shape auto --quiet --json "
                                  "%s", f, extra);
  if (simulated)
    *simulated = (long)json_integer_value(json_object_get(o, "simulated"));
  json_t *b = json_incref(json_object_get(o, "best"));
  json_decref(o);
  return b;
}

static double samples(const json_t *b) {
  return json_number_value(json_object_get(b, "samples_per_s"));
}

/* Issue 33: the throughput objective reported 10.67 samples/s on this
 * 24-device case (87.1 on the new user's) where the iteration objective
 * found 10.99 (99.7): it never judged the scenario's batch. It finds the
 * iteration objective's best when that has more samples/s, and its best is
 * the best of a run that simulates every configuration (none pruned by the
 * predictor). The best line and every row name the sites a shape works. */
Test(shape, objectives_agree_and_name_their_sites, .timeout = 900) {
  const char *f = GEODES_FIXTURES "/shape/three-city-24.json";
  json_t *t = shape_best(f, "", NULL);
  json_t *i = shape_best(f, "--shape-objective iteration", NULL);
  cr_expect_geq(samples(t), samples(i), "throughput %.6g, iteration %.6g",
                samples(t), samples(i));
  long all;
  json_t *u = shape_best(f, "--simulate-best 100000", &all);
  cr_expect_gt(all, 1000, "every configuration simulated");
  cr_expect_eq(samples(t), samples(u), "pruned %.17g, unpruned %.17g",
               samples(t), samples(u));
  json_t *sites = json_object_get(t, "sites");
  cr_assert(json_is_object(sites) && json_object_size(sites) > 0);
  long n = 0;
  const char *k;
  json_t *v;
  json_object_foreach(sites, k, v) n += (long)json_integer_value(v);
  cr_expect_eq(n, json_integer_value(json_object_get(t, "devices")));
  json_decref(t), json_decref(i), json_decref(u);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "schedule %s --shape auto --quiet", f), 0);
  cr_expect(strstr(r.out, "devices (Virginia 8; 16 idle)"), "%s", r.out);
  cr_expect(strstr(r.out, "PREDICTED_S  SITES\n"), "%s", r.out);
  support_run_clear(&r);
}

/* Issue 36: two sites of one V100 each, the dearer first, equal in every
 * way but the price. */
static scenario *dear_and_cheap(void) {
  const char *text =
      "{\"name\": \"dc\", \"sites\": ["
      "{\"name\": \"Dear\", \"devices\": 1, \"usd_per_gpu_hour\": 3},"
      "{\"name\": \"Cheap\", \"devices\": 1, \"usd_per_gpu_hour\": 1}],"
      "\"network\": {\"latency_ms\": 5, \"bandwidth_gbps\": 10, "
      "\"usd_per_gb\": 0.02},"
      "\"workload\": {\"model\": \"gpt3-small\", \"batch\": 4, "
      "\"micro_batch\": 1, \"stages\": 1, \"replicas\": 2}}";
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "dc.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

/* The site of configuration c's single device. */
static const char *site_of(const scenario *s, const shape_config *c) {
  return s->sites[s->device_site[c->keep[0]]].name;
}

/* One device, one replica: Dear's and Cheap's configurations run equally
 * fast; throughput keeps the first found (Dear), the dollar goals the
 * cheaper, at its price by hand. */
Test(shape, the_cost_goal_picks_the_cheaper_of_two_equal_speeds) {
  scenario *s = dear_and_cheap();
  shape_goal goals[] = {SHAPE_THROUGHPUT, SHAPE_USD_PER_SAMPLE,
                        SHAPE_SAMPLES_PER_USD};
  const char *want[] = {"Dear", "Cheap", "Cheap"};
  for (int g = 0; g < 3; g++) {
    shape_opts o;
    shape_opts_default(&o);
    o.goal = goals[g], o.price = true, o.simulate = 0;
    o.stages = 1, o.replicas = 1, o.nmicro = 1, o.micro[0] = 1;
    shape_result r;
    err e = {0};
    cr_assert_eq(shape_search(s, &o, &r, &e), 0, "%s", e.msg);
    /* Dear alone, then Cheap alone, each at the batch per replica kept (2)
     * and the scenario's (4) */
    cr_assert_eq(r.nall, 4, "Dear alone and Cheap alone at two batches");
    cr_expect_eq(r.all[0].predicted_s, r.all[2].predicted_s, "equal speeds");
    cr_expect_eq(r.all[1].predicted_s, r.all[3].predicted_s, "equal speeds");
    const shape_config *b = &r.all[r.best];
    cr_expect_str_eq(site_of(s, b), want[g], "goal %s", shape_goal_names[g]);
    double t = b->predicted_s;
    double usd = (strcmp(want[g], "Dear") ? 1.0 : 3.0) / 3600 * t / b->batch;
    cr_expect(fabs(shape_usd_per_sample(b, t) - usd) <= 1e-15, "by hand");
    cr_expect_eq(b->egress_usd, 0, "one device sends nothing");
    shape_result_free(&r);
  }
  scenario_free(s);
}

/* A budget of $2 per hour leaves Cheap alone: Dear ($3) and both ($4 and
 * their egress) are over it, though both run the most samples/s; the
 * fastest is still reported. Under $1 nothing fits. */
Test(shape, the_budget_excludes_the_shapes_over_it) {
  scenario *s = dear_and_cheap();
  shape_opts o;
  shape_opts_default(&o);
  o.price = true, o.simulate = 0, o.max_usd_per_hour = 2;
  o.nmicro = 1, o.micro[0] = 1;
  shape_result r;
  err e = {0};
  cr_assert_eq(shape_search(s, &o, &r, &e), 0, "%s", e.msg);
  const shape_config *b = &r.all[r.best], *f = &r.all[r.fastest];
  cr_expect_eq(b->ndev, 1);
  cr_expect_str_eq(site_of(s, b), "Cheap");
  cr_expect_leq(shape_usd_per_hour(b, b->predicted_s), 2);
  cr_expect_eq(f->ndev, 2, "the fastest works both devices");
  cr_expect_gt(shape_usd_per_hour(f, f->predicted_s), 4, "GPUs and egress");
  cr_expect_eq(r.over_budget, r.nall - 2, "all but Cheap's (two batches)");
  shape_result_free(&r);
  o.max_usd_per_hour = 0.5;
  cr_expect_eq(shape_search(s, &o, &r, &e), ERR_CONFIG);
  cr_expect(strstr(e.msg, "no configuration within $0.5 per hour") != NULL,
            "%s", e.msg);
  scenario_free(s);
}
