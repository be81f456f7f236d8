/* test_objective: the compute-aware objective (the predictor) and the
 * memory constraint every objective keeps. The predicted objective is the
 * predictor of the realised allocation; an allocation that does not fit
 * scores +inf under every objective (DT-FM's score, the predictor, a
 * custom scorer), the fast path of DT-FM's score agrees with the checked
 * one; and GCMA, judged by the predictor, finds the brute-force optimum
 * over every partition of a small mixed-GPU case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/bill.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec_workload.h"
#include "schedules/gcma.h"
#include "schedules/objective.h"
#include "tests/support.h"

/* 9 devices, three GPU types in three sites with unequal links
 * (tests/fixtures/analysis/three-sites.csv), 3 stages x 3 replicas. */
static scenario *mixed9(void) {
  const char *text =
      "{\"name\": \"mixed9\", \"seed\": 2, \"sites\": ["
      "{\"name\": \"a\", \"devices\": 3, \"gpu\": \"V100\", \"nic_gbps\": 10},"
      "{\"name\": \"b\", \"devices\": 3, \"gpu\": \"A100\", \"nic_gbps\": 10},"
      "{\"name\": \"c\", \"devices\": 3, \"gpu\": \"T4\", \"nic_gbps\": 10}],"
      " \"network\": {\"trace\": \"three-sites.csv\"},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 9, \"batch\": 24,"
      " \"micro_batch\": 1, \"stages\": 3, \"replicas\": 3,"
      " \"micro_batches_per_pass\": 8, \"recompute\": true}}";
  err e;
  err_clear(&e);
  scenario *s = scenario_parse(text, strlen(text),
                               GEODES_FIXTURES "/analysis/mixed9.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Orders group indices by their group's first device (sort_groups). */
static const int *sort_groups;
static int cmp_first(const void *a, const void *b) {
  int x = sort_groups[3 * *(const int *)a], y = sort_groups[3 * *(const int *)b];
  return (x > y) - (x < y);
}

/* The allocation's data-parallel groups, group-major (group s = stage s). */
static void columns(const alloc *a, int *groups) {
  for (int st = 0; st < a->stages; st++)
    for (int r = 0; r < a->replicas; r++)
      groups[st * a->replicas + r] = alloc_at(a, r, st);
}

typedef struct env {
  scenario *s;
  cost_ctx *c;
  objective *o;
} env;

static env env_new(scenario *s, bool balanced) {
  err e;
  err_clear(&e);
  env x = {.s = s, .c = cost_ctx_from_scenario(s, &e)};
  cr_assert_not_null(x.c, "%s", e.msg);
  x.o = objective_new(s, x.c, NULL, balanced, &e);
  cr_assert_not_null(x.o, "%s", e.msg);
  return x;
}

static void env_free(env *x) {
  objective_free(x->o);
  cost_ctx_free(x->c);
  scenario_free(x->s);
}

/* volunteer-mix under Megatron's runtime (16 bytes a parameter on the
 * device, all 64 micro-batches in one 1F1B schedule), its workload and
 * GPUs resolved into *w and gpu[32]. */
static env megatron_volunteers(spec_workload *w, const spec_gpu **gpu) {
  scenario *s = support_scenario("volunteer-mix");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.runtime = "megatron";
  k.micro_batches_per_pass = 64;
  cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
  /* Ireland's T4s as 17 GB cards (its site's gpu_memory_gb, which every
   * objective reads): a middle stage of 4 layers (16.05 GB with the 2 GB
   * reserve) fits them, a stage with the embedding or the head does not */
  s->sites[scenario_site_index(s, "Ireland")].gpu_memory_gb = 17;
  env x = env_new(s, false);
  cr_assert_eq(spec_workload_resolve(x.s, w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(x.s, gpu, NULL), ERR_OK);
  return x;
}

static double predict_of(const scenario *s, const alloc *a, const int *layers) {
  spec_workload w;
  const spec_gpu *gpu[64];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  w.stage_layers = layers;
  predict_result r;
  cr_assert_eq(predict_iteration_with(&w, s, gpu, a, NULL, &r), ERR_OK);
  return r.iteration_s;
}

/* The dollar objectives are the kinds that name dollars; samples-per-usd
 * states the inverse of the USD per sample it minimises, every other kind
 * its score. */
Test(objective, kinds_name_their_dollars_and_their_value) {
  for (int k = 0; k < OBJECTIVE_NKINDS; k++) {
    const char *name = objective_kind_names[k];
    cr_expect_eq(objective_kind_dollars((objective_kind)k),
                 strstr(name, "usd") != NULL, "%s", name);
    double want = strcmp(name, "samples-per-usd") == 0 ? 1 / 0.25 : 0.25;
    cr_expect_eq(objective_kind_value((objective_kind)k, 0.25), want, "%s",
                 name);
  }
}

Test(objective, predicted_is_the_predictor_of_the_realised_allocation) {
  env x = env_new(mixed9(), false);
  search_objective p = objective_predicted(x.o);
  cr_assert_str_eq(p.name, "predicted");
  cost_scratch *w = cost_scratch_new(3, 3);
  for (uint64_t seed = 0; seed < 10; seed++) {
    alloc *a = alloc_random(3, 3, seed);
    double v = p.alloc(p.ctx, a, NULL);
    cr_assert_eq(v, predict_of(x.s, a, NULL));
    int groups[9], canon[9];
    columns(a, groups);
    /* canonical: devices sorted in each group, groups by first device */
    for (int g = 0; g < 3; g++)
      qsort(groups + 3 * g, 3, sizeof *groups, cmp_int);
    int order[3] = {0, 1, 2};
    sort_groups = groups;
    qsort(order, 3, sizeof *order, cmp_first);
    for (int g = 0; g < 3; g++) memcpy(canon + 3 * g, groups + 3 * order[g], 3 * sizeof *canon);
    alloc *real = cost_realise(x.c, canon, w), *rev = alloc_new(3, 3);
    for (int r = 0; r < 3; r++)
      for (int st = 0; st < 3; st++) rev->device[r * 3 + st] = alloc_at(real, r, 2 - st);
    double fwd = predict_of(x.s, real, NULL), back = predict_of(x.s, rev, NULL);
    /* any labelling of the same groups scores the same */
    int swapped[9];
    memcpy(swapped, groups + 6, 3 * sizeof *swapped);
    memcpy(swapped + 3, groups, 6 * sizeof *swapped);
    cr_assert_eq(p.partition(p.ctx, groups, NULL), fmin(fwd, back));
    cr_assert_eq(p.partition(p.ctx, swapped, NULL), fmin(fwd, back));
    alloc *best = p.realise(p.ctx, swapped);
    cr_assert_eq(predict_of(x.s, best, NULL), fmin(fwd, back));
    alloc_free(best);
    alloc_free(rev);
    alloc_free(real);
    alloc_free(a);
  }
  cost_scratch_free(w);
  cr_assert_eq(objective_refused(x.o), 0);
  env_free(&x);
}

Test(objective, balanced_layers_are_predicted_with_the_balanced_split) {
  env x = env_new(mixed9(), true);
  search_objective p = objective_predicted(x.o);
  alloc *a = alloc_random(3, 3, 5);
  int l[3];
  cr_assert_eq(objective_layers(x.o, a, l, NULL), ERR_OK);
  spec_workload w;
  const spec_gpu *gpu[9];
  cr_assert_eq(spec_workload_resolve(x.s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(x.s, gpu, NULL), ERR_OK);
  int want[3];
  cr_assert_eq(partition_balanced(&w, x.s, gpu, a, want, NULL), ERR_OK);
  cr_assert_arr_eq(l, want, sizeof l);
  cr_assert_eq(p.alloc(p.ctx, a, NULL), predict_of(x.s, a, want));
  alloc_free(a);
  env_free(&x);
}

/* A custom scorer that counts its calls. */
static double custom_one(void *ctx, const alloc *a, const spec_workload *w,
                         err *e) {
  (void)a, (void)e;
  *(int *)ctx += 1;
  return w->layers;
}

/* volunteer-mix under Megatron (GPT-3 6.7B on 17-80 GB GPUs, mixed-precision
 * Adam on the device): random allocations, some of
 * which put a stage on a GPU too small for it, checked against
 * spec_check_memory, the engine's own refusal. */
Test(objective, what_does_not_fit_is_infinite_under_every_objective) {
  spec_workload w;
  const spec_gpu *gpu[32];
  env x = megatron_volunteers(&w, gpu);
  int calls = 0;
  search_objective d = objective_dtfm(x.o), p = objective_predicted(x.o);
  search_objective u = objective_custom(x.o, "user", custom_one, &calls);
  int fits = 0, refused = 0;
  for (uint64_t seed = 0; seed < 40; seed++) {
    alloc *a = alloc_random(4, 8, seed);
    bool ok = spec_check_memory(&w, x.s, a->device, gpu, NULL) == ERR_OK;
    cr_assert_eq(objective_fits(x.o, a), ok);
    double vd = d.alloc(d.ctx, a, NULL), vp = p.alloc(p.ctx, a, NULL);
    double vu = u.alloc(u.ctx, a, NULL);
    if (ok) {
      cr_assert_eq(vd, cost_alloc(x.c, a, NULL));
      cr_assert(isfinite(vp) && vp > 0);
      cr_assert_eq(vu, 32);
      fits++;
    } else {
      cr_assert(isinf(vd) && isinf(vp) && isinf(vu), "seed %llu",
                (unsigned long long)seed);
      refused++;
    }
    alloc_free(a);
  }
  cr_assert(fits > 0 && refused > 0, "%d fit, %d refused", fits, refused);
  cr_assert_eq(calls, fits, "the scorer is not called for what does not fit");
  cr_assert_eq(objective_refused(x.o), 4 * refused); /* fits + 3 objectives */
  env_free(&x);
}

/* Where every device holds every stage the objective scores the groups by
 * cost_partition alone, without realising them: that must be the score of
 * the allocation it returns for them (what the checked path computes). */
Test(objective, dtfm_fast_path_is_the_realised_allocations_score) {
  env x = env_new(mixed9(), false); /* every device holds every stage */
  search_objective d = objective_dtfm(x.o);
  for (uint64_t seed = 0; seed < 10; seed++) {
    alloc *a = alloc_random(3, 3, seed);
    int groups[9];
    columns(a, groups);
    alloc *got = d.realise(d.ctx, groups);
    cr_assert_not_null(got);
    cr_assert_float_eq(d.partition(d.ctx, groups, NULL),
                       cost_alloc(x.c, got, NULL), 1e-9, "seed %llu",
                       (unsigned long long)seed);
    alloc_free(got);
    alloc_free(a);
  }
  env_free(&x);
}

/* Every partition of 9 devices into 3 unordered groups of 3 (280),
 * realised and predicted: the optimum GCMA must find. */
static void each_partition(int *label, int d, int used, int *size,
                           const search_objective *p, double *best) {
  if (d == 9) {
    int groups[9], fill[3] = {0};
    for (int v = 0; v < 9; v++) groups[label[v] * 3 + fill[label[v]]++] = v;
    *best = fmin(*best, p->partition(p->ctx, groups, NULL));
    return;
  }
  for (int g = 0; g < 3 && g <= used; g++) {
    if (size[g] == 3) continue;
    label[d] = g, size[g]++;
    each_partition(label, d + 1, g == used ? used + 1 : used, size, p, best);
    size[g]--;
  }
}

Test(objective, gcma_with_the_predictor_finds_the_brute_force_optimum) {
  for (int balanced = 0; balanced < 2; balanced++) {
    env x = env_new(mixed9(), balanced);
    search_objective p = objective_predicted(x.o);
    int label[9], size[3] = {0};
    double best = INFINITY;
    each_partition(label, 0, 0, size, &p, &best);
    cr_assert(isfinite(best));
    for (uint64_t seed = 1; seed <= 3; seed++) {
      search_opts o;
      search_opts_default(&o);
      o.population = 20, o.trials = 300, o.seed = seed;
      err e;
      err_clear(&e);
      search_result *r = gcma_search(x.c, GCMA_GAIN_PIPELINE, &p, &o, &e);
      cr_assert_not_null(r, "%s", e.msg);
      cr_assert_eq(r->objective_s, best, "seed %llu, balanced %d: %.9g vs "
                   "the optimum %.9g", (unsigned long long)seed, balanced,
                   r->objective_s, best);
      cr_assert_eq(p.alloc(p.ctx, r->best, NULL), best, "its allocation");
      search_result_free(r);
    }
    env_free(&x);
  }
}

/* GCMA with DT-FM's score under the memory constraint (volunteer-mix,
 * Megatron's 16 bytes a parameter) returns an allocation that fits, and
 * scores it as the cost model does, having refused candidates on the way
 * (a stage 0 or 7 of 4 layers needs more than Ireland's 17 GB T4s). */
Test(objective, gcma_keeps_to_what_fits) {
  spec_workload w;
  const spec_gpu *gpu[32];
  env x = megatron_volunteers(&w, gpu);
  search_objective d = objective_dtfm(x.o);
  search_opts o;
  search_opts_default(&o);
  o.trials = 1000, o.seed = 4;
  err e;
  err_clear(&e);
  search_result *fit = gcma_search(x.c, GCMA_GAIN_PIPELINE, &d, &o, &e);
  cr_assert_not_null(fit, "%s", e.msg);
  cr_assert_eq(spec_check_memory(&w, x.s, fit->best->device, gpu, &e), ERR_OK,
               "%s", e.msg);
  cr_assert(isfinite(fit->objective_s));
  cr_assert_eq(fit->objective_s, cost_alloc(x.c, fit->best, NULL));
  cr_assert_gt(objective_refused(x.o), 0, "the search met what does not fit");
  search_result_free(fit);
  env_free(&x);
}

/* objective_of_kind against each objective made by hand (objective_dtfm,
 * objective_price then objective_predicted at every device's price) on
 * random allocations of a priced scenario; cost-cmd is the caller's. */
Test(objective, of_kind_is_the_objective_made_by_hand) {
  scenario *s = support_scenario("intellect-1");
  double usd_per_s = bill_compute_usd_per_s(s, NULL, 0, NULL);
  cr_assert(usd_per_s > 0);
  env x = env_new(s, false);
  objective *hand = objective_new(s, x.c, NULL, false, NULL);
  const double budget[] = {0, 0, 1e9, 0};
  for (int k = 0; k < OBJECTIVE_NKINDS; k++) {
    search_objective got, want;
    int rc = objective_of_kind(x.o, (objective_kind)k, budget[k % 4], &got,
                               NULL);
    if (k == OBJECTIVE_COST_CMD) {
      cr_assert_eq(rc, ERR_CONFIG);
      continue;
    }
    cr_assert_eq(rc, ERR_OK);
    bool usd = objective_kind_dollars((objective_kind)k);
    objective_price(hand, usd, usd_per_s, budget[k % 4]);
    want = k == OBJECTIVE_DTFM ? objective_dtfm(hand)
                               : objective_predicted(hand);
    cr_assert_str_eq(got.name, usd ? objective_kind_names[k] : want.name);
    for (uint64_t seed = 0; seed < 5; seed++) {
      alloc *a = alloc_random(s->workload.replicas, s->workload.stages,
                              seed);
      cr_assert_eq(got.alloc(got.ctx, a, NULL), want.alloc(want.ctx, a, NULL),
                   "%s, seed %d", objective_kind_names[k], (int)seed);
      alloc_free(a);
    }
  }
  objective_free(hand);
  env_free(&x);
}

/* The unit of each kind's stated value: seconds but for the dollar kinds,
 * whose unit is the ratio their value states. */
Test(objective, each_kind_states_its_unit) {
  for (int k = 0; k < OBJECTIVE_NKINDS; k++) {
    const char *name = objective_kind_names[k], *unit =
        objective_kind_unit((objective_kind)k);
    if (strcmp(name, "usd-per-sample") == 0)
      cr_assert_str_eq(unit, "USD per sample");
    else if (strcmp(name, "samples-per-usd") == 0)
      cr_assert_str_eq(unit, "samples per USD");
    else
      cr_assert_str_eq(unit, "s", "%s", name);
  }
}

/* A search's best within the budget passes; +inf (nothing within it) is
 * refused with the devices' own cost per hour, the closed form of
 * bill_compute_usd_per_s. */
Test(objective, nothing_within_the_budget_states_the_devices_cost) {
  scenario *s = support_scenario("intellect-1");
  env x = env_new(s, false);
  search_objective obj;
  cr_assert_eq(objective_of_kind(x.o, OBJECTIVE_PREDICTED, 2.5, &obj, NULL),
               ERR_OK);
  cr_assert_eq(objective_within_budget(x.o, 1.0, "gcma", NULL), ERR_OK);
  err e = {0};
  cr_assert_eq(objective_within_budget(x.o, INFINITY, "gcma", &e),
               ERR_CONFIG);
  char want[ERR_MSG_MAX];
  snprintf(want, sizeof want, "intellect-1: no placement by gcma within "
           "$2.5 per hour: the devices cost $%.4g per hour before any egress",
           bill_compute_usd_per_s(s, NULL, 0, NULL) * 3600);
  cr_assert_str_eq(e.msg, want);
  env_free(&x);
}
