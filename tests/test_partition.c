/* test_partition: explicit lists (parse, check and their messages) and the
 * balanced partition against brute force over every composition of L into
 * D_pp positive parts, memory caps included, on a mixed-GPU case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/partition.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec_workload.h"
#include "tests/support.h"
#include "base/mem.h"

Test(partition, parse) {
  int l[4];
  cr_assert_eq(partition_parse("3,3,2", l, 4), 3);
  cr_assert(l[0] == 3 && l[1] == 3 && l[2] == 2);
  cr_assert_eq(partition_parse("7", l, 4), 1);
  cr_assert_eq(partition_parse("0,5", l, 4), 2); /* check refuses the 0 */
  static const char *const bad[] = {"", "3,,2", "3,2,", ",3", "a", "3 ,2",
                                    "-1,2", "+1", "1,2,3,4,5", "99999999999",
                                    "1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_eq(partition_parse(bad[i], l, 4), -1, "'%s'", bad[i]);
}

Test(partition, check_says_what_is_wrong) {
  err e;
  err_clear(&e);
  cr_assert_eq(partition_check((int[]){3, 3, 2}, 3, 3, 8, &e), ERR_OK);
  cr_assert_eq(partition_check((int[]){4, 4}, 2, 3, 8, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "2 entries for 3 stages");
  err_clear(&e);
  cr_assert_eq(partition_check((int[]){8, 0, 0}, 3, 3, 8, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "entry 1 is 0: every stage needs at least one layer");
  err_clear(&e);
  cr_assert_eq(partition_check((int[]){3, 3, 3}, 3, 3, 8, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "they sum to 9, not the 8 layers");
}

/* Three GPU types in three sites, 3 stages x 2 replicas (the protocol
 * test's mixed case; its links do not matter here). */
static scenario *mixed(const char *model, int layers) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"mixed\", \"sites\": ["
           "{\"name\": \"a\", \"devices\": 2, \"gpu\": \"V100\"},"
           "{\"name\": \"b\", \"devices\": 2, \"gpu\": \"A100\"},"
           "{\"name\": \"c\", \"devices\": 2, \"gpu\": \"T4\", "
           "\"compute_efficiency\": 0.5}],"
           " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},"
           " \"workload\": {\"model\": \"%s\", \"layers\": %d, \"batch\": 16,"
           " \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2,"
           " \"micro_batches_per_pass\": 8}}",
           model, layers);
  err e;
  err_clear(&e);
  scenario *s = scenario_parse(text, strlen(text), "mixed.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

/* The largest stage time of partition l on a, or inf when a stage does not
 * fit one of its devices. */
static double worst(const spec_workload *w, const scenario *s,
                    const spec_gpu *const *gpu, const alloc *a, const int *l) {
  double most = 0;
  for (int st = 0; st < w->stages; st++)
    for (int r = 0; r < w->replicas; r++) {
      int d = alloc_at(a, r, st);
      if (spec_stage_memory_with(w, st, l[st]) > gpu[d]->memory_bytes)
        return INFINITY;
      most = fmax(most, partition_stage_s(w, s, gpu, st, l[st], d));
    }
  return most;
}

/* Brute force over every (l0, l1, l2) >= 1 summing to L. */
static double brute(const spec_workload *w, const scenario *s,
                    const spec_gpu *const *gpu, const alloc *a) {
  double best = INFINITY;
  for (int x = 1; x < w->layers; x++)
    for (int y = 1; x + y < w->layers; y++) {
      int l[3] = {x, y, w->layers - x - y};
      best = fmin(best, worst(w, s, gpu, a, l));
    }
  return best;
}

static void against_brute_force(const char *model, int layers,
                                const char *runtime, int *feasible) {
  scenario *s = mixed(model, layers);
  if (runtime) {
    scenario_knobs k;
    scenario_knobs_init(&k);
    k.runtime = runtime;
    k.micro_batches_per_pass = 8;
    cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
  }
  spec_workload w;
  const spec_gpu *gpu[6];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  for (uint64_t seed = 0; seed < 30; seed++) {
    alloc *a = alloc_random(2, 3, seed);
    int l[3];
    err e;
    err_clear(&e);
    int rc = partition_balanced(&w, s, gpu, a, l, &e);
    double want = brute(&w, s, gpu, a);
    if (isinf(want)) {
      cr_assert_eq(rc, ERR_MEMORY, "seed %llu: no partition fits",
                   (unsigned long long)seed);
      cr_assert(strstr(e.msg, "mixed: "), "%s", e.msg);
    } else {
      cr_assert_eq(rc, ERR_OK, "%s", e.msg);
      cr_assert_eq(partition_check(l, 3, 3, layers, NULL), ERR_OK);
      cr_assert_eq(worst(&w, s, gpu, a, l), want, "seed %llu: %d,%d,%d",
                   (unsigned long long)seed, l[0], l[1], l[2]);
      ++*feasible;
    }
    alloc_free(a);
  }
  scenario_free(s);
}

Test(partition, balanced_is_the_brute_force_optimum) {
  int feasible = 0;
  against_brute_force("gpt3-xl", 7, NULL, &feasible);
  against_brute_force("gpt3-xl", 24, NULL, &feasible);
  cr_assert_eq(feasible, 60);
}

/* GPT-3 13B under Megatron (16 bytes a parameter): a T4's 16 GB holds one
 * or two of its layers, an A100's 80 GB several. Where the even split does
 * not fit, the balanced one works within the caps, or says no. */
Test(partition, balanced_within_memory_against_brute_force) {
  int feasible = 0;
  against_brute_force("gpt3-13b", 9, "megatron", &feasible);
  cr_assert(feasible > 0 && feasible < 30, "%d of 30 fit", feasible);
}

/* Two devices of one type but a half-speed host, 12 layers of GPT-3 Small
 * (recomputation on) and its LM head on the slow, last stage. In units of
 * a layer's roofline time u (forward, recomputation, backward) the head
 * takes r = h / u (1.75 on the V100: its GEMM is 1.5 layers' FLOPs and
 * its loss streams T V values). The fast stage with x layers takes x, the slow one
 * 2 (12 - x + r): the split is the x where max(x, 2 (12 - x + r)) is
 * least, found here by trying every x. */
Test(partition, twice_as_fast_takes_about_twice_the_layers) {
  const char *text =
      "{\"name\": \"two\", \"sites\": ["
      "{\"name\": \"fast\", \"devices\": 1, \"gpu\": \"V100\", "
      "\"compute_efficiency\": 1},"
      "{\"name\": \"slow\", \"devices\": 1, \"gpu\": \"V100\", "
      "\"compute_efficiency\": 0.5}],"
      " \"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 10},"
      " \"workload\": {\"model\": \"gpt3-small\", \"layers\": 12, \"batch\": 4,"
      " \"micro_batch\": 1, \"stages\": 2, \"replicas\": 1,"
      " \"recompute\": true}}";
  scenario *s = scenario_parse(text, strlen(text), "two.json", NULL);
  cr_assert_not_null(s);
  spec_workload w;
  const spec_gpu *gpu[2];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  double layer = roofline_stage_fwd_with(gpu[0], &w, 0, 1) +
                 roofline_stage_bwd_with(gpu[0], &w, 0, 1);
  double r = (roofline_stage_fwd_with(gpu[1], &w, 1, 0) +
              roofline_stage_bwd_with(gpu[1], &w, 1, 0)) / layer;
  double unit = partition_stage_s(&w, s, gpu, 0, 1, 0);
  cr_assert_float_eq(unit / layer,
                     spec_site_compute_factor(&s->sites[0], gpu[0]), 1e-12);
  cr_assert_float_eq(partition_stage_s(&w, s, gpu, 1, 2, 1) / unit,
                     2 * (2 + r), 1e-9);
  int best = 0;
  for (int x = 1; x < 12; x++)
    if (fmax(x, 2 * (12 - x + r)) < fmax(best, 2 * (12 - best + r)) || !best)
      best = x;
  alloc *a = alloc_identity(1, 2);
  int l[2];
  cr_assert_eq(partition_balanced(&w, s, gpu, a, l, NULL), ERR_OK);
  cr_assert(l[0] == best && l[1] == 12 - best, "%d / %d, r %.3f", l[0], l[1],
            r);
  alloc_free(a);
  scenario_free(s);
}

/* The stages and layers the knobs will give, against the naive reference:
 * apply them to a fresh copy and resolve the workload. Every combination
 * of --stages, --replicas, --layers and --model on 6 devices (3 x 2, 12
 * layers of gpt3-small), those the knobs accept. */
Test(partition, knob_shape_is_what_applying_gives) {
  static const long counts[] = {-1, 1, 2, 3, 4, 6};
  static const char *const model[] = {NULL, "gpt3-xl"};
  int compared = 0;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      for (int l = 0; l < 3; l++)
        for (int m = 0; m < 2; m++) {
          scenario *s = mixed("gpt3-small", 12);
          scenario_knobs k;
          scenario_knobs_init(&k);
          k.stages = counts[i], k.replicas = counts[j];
          k.layers = (long[]){-1, 6, 24}[l], k.model = model[m];
          int st = partition_knob_stages(s, &k);
          int ly = partition_knob_layers(s, &k);
          spec_workload w;
          if (scenario_apply(s, &k, NULL) == ERR_OK &&
              spec_workload_resolve(s, &w, NULL) == ERR_OK) {
            cr_assert_eq(st, w.stages, "stages %ld replicas %ld", k.stages,
                         k.replicas);
            cr_assert_eq(ly, w.layers, "layers %ld model %s", k.layers,
                         k.model ? k.model : "-");
            compared++;
          }
          scenario_free(s);
        }
  cr_assert_geq(compared, 40, "only %d combinations compared", compared);
}

/* Every list of 1 to 4 entries in 0..3 as --layers-per-stage on 3 stages of
 * 6 layers: taken exactly when partition_check's three rules hold (the
 * reference below), and then the split the applied workload runs. */
Test(partition, knob_split_takes_exactly_the_valid_lists) {
  int taken = 0;
  for (int n = 1; n <= 4; n++)
    for (int code = 0; code < (1 << (2 * n)); code++) {
      int l[4], sum = 0, ok = n == 3;
      char text[32] = "";
      for (int i = 0; i < n; i++) {
        l[i] = (code >> (2 * i)) & 3;
        sum += l[i], ok = ok && l[i] >= 1;
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d",
                 i ? "," : "", l[i]);
      }
      ok = ok && sum == 6;
      scenario *s = mixed("gpt3-small", 6);
      scenario_knobs k;
      scenario_knobs_init(&k);
      int *list = NULL;
      err e;
      err_clear(&e);
      int rc = partition_knob_split(s, &k, text, &list, &e);
      cr_assert_eq(rc == ERR_OK, ok, "'%s': %s", text, e.msg);
      if (ok) {
        spec_workload w;
        cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK, "'%s'", text);
        cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
        for (int st = 0; st < 3; st++)
          cr_assert_eq(spec_stage_layers(&w, st), l[st], "'%s'", text);
        taken++;
      } else {
        cr_assert_eq(rc, ERR_CONFIG, "'%s'", text);
      }
      free(list);
      scenario_free(s);
    }
  cr_assert_eq(taken, 7); /* 6 into 3 parts of 1 to 3: the 6 orders of
                             (1, 2, 3), and (2, 2, 2) */
}

Test(partition, knob_split_balanced_and_the_parse_message) {
  scenario *s = mixed("gpt3-small", 6);
  scenario_knobs k;
  scenario_knobs_init(&k);
  int *list = NULL;
  err e;
  err_clear(&e);
  cr_assert_eq(partition_knob_split(s, &k, "balanced", &list, &e), ERR_OK);
  cr_assert(k.balanced_layers && !list && !k.layers_per_stage);
  k.replicas = 1; /* 6 stages: the message counts them */
  cr_assert_eq(partition_knob_split(s, &k, "2 2", &list, &e), ERR_PARSE);
  cr_assert_str_eq(e.msg, "wants 'balanced' or 6 comma-separated layer "
                   "counts (no spaces), not '2 2'");
  free(list);
  scenario_free(s);
}

/* More stages than layers, against the naive rule (the stages as the
 * knob or the devices over the replicas, the layers as applying gives). */
Test(partition, knob_fits_refuses_more_stages_than_layers) {
  static const long counts[] = {1, 2, 3, 6};
  for (int layers = 1; layers <= 7; layers++)
    for (int i = 0; i < 4; i++)
      for (int by_replicas = 0; by_replicas < 2; by_replicas++) {
        scenario *s = mixed("gpt3-small", 12);
        scenario_knobs k;
        scenario_knobs_init(&k);
        k.layers = layers;
        if (by_replicas) k.replicas = counts[i];
        else k.stages = counts[i];
        long st = by_replicas ? 6 / counts[i] : counts[i];
        err e;
        err_clear(&e);
        int rc = partition_knob_fits(s, &k, &e);
        cr_assert_eq(rc != ERR_OK, st > layers, "%ld stages, %d layers", st,
                     layers);
        if (rc) {
          char want[128];
          snprintf(want, sizeof want, "%ld stages for the %d layers: every "
                   "stage holds at least one", st, layers);
          cr_assert_str_eq(e.msg, want);
          cr_assert_eq(err_field(&e),
                       by_replicas ? WORKLOAD_replicas : WORKLOAD_stages);
        }
        scenario_free(s);
      }
  scenario *s = mixed("gpt3-small", 3);
  scenario_knobs k;
  scenario_knobs_init(&k); /* neither given: the knobs' own check's */
  k.layers = 1;
  cr_assert_eq(partition_knob_fits(s, &k, NULL), ERR_OK);
  scenario_free(s);
}

/* partition_resolve against the workload resolved by hand: even without a
 * split, balanced for each allocation as partition_apply balances it, and
 * "balanced per allocation" without one; partition_resolve_step's step is
 * runtime_step_max_s of that split. */
Test(partition, resolve_names_the_split_it_runs_with) {
  scenario *s = mixed("gpt3-small", 12);
  spec_workload w, want;
  const spec_gpu *gpu[6];
  int split[3], l[3];
  const char *how = NULL;
  cr_assert(partition_resolve(s, NULL, &w, split, &how));
  cr_assert_str_eq(how, "even");
  cr_assert_null(w.stage_layers);
  s->workload.balanced_layers = true;
  cr_assert(partition_resolve(s, NULL, &w, split, &how));
  cr_assert_str_eq(how, "balanced per allocation");
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  for (uint64_t seed = 0; seed < 10; seed++) {
    alloc *a = alloc_random(2, 3, seed);
    cr_assert_eq(spec_workload_resolve(s, &want, NULL), ERR_OK);
    cr_assert_eq(partition_apply(&want, s, gpu, a, l, NULL), ERR_OK);
    cr_assert(partition_resolve(s, a, &w, split, &how));
    cr_assert_str_eq(how, "balanced");
    cr_assert_arr_eq(split, l, sizeof l);
    double step;
    cr_assert(partition_resolve_step(s, a, &w, &step));
    cr_assert_eq(step, runtime_step_max_s(&want, gpu, a));
    cr_assert_null(w.stage_layers);
    alloc_free(a);
  }
  scenario_free(s);
}

/* The shape's options as typed, for every combination of given and not. */
Test(partition, knob_options_spell_the_given_shape) {
  const struct { long st, rep; const char *want; } c[] = {
      {-1, -1, ""}, {4, -1, "--stages 4"}, {-1, 2, "--replicas 2"},
      {12, 3, "--stages 12 --replicas 3"}, {0, 0, ""}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    scenario_knobs k;
    scenario_knobs_init(&k);
    k.stages = c[i].st, k.replicas = c[i].rep;
    char buf[64] = "stale";
    partition_knob_options(&k, buf, sizeof buf);
    cr_assert_str_eq(buf, c[i].want);
  }
}
