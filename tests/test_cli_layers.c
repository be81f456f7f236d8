/* test_cli_layers: `--layers-per-stage` end to end — bad lists are usage
 * errors naming the option, the balanced split of a hand-built case with
 * two GPU types beats the even split by the amount the closed form of a
 * two-stage GPipe pipeline gives, an explicit list equal to the even split
 * changes nothing, and a stage that does not fit is refused by simulate
 * with its numbers. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "tests/support.h"

TestSuite(cli_layers, .init = support_dir_make, .fini = support_dir_remove);

/* An A100 (stage 0) and a V100 (stage 1, with the LM head), GPT-3 Small's
 * 12 layers, one pipeline of 64 micro-batches on a network that costs
 * next to nothing. */
static const char TWO[] =
    "{\"name\": \"two-types\", \"sites\": ["
    "{\"name\": \"fast\", \"devices\": 1, \"gpu\": \"A100\"},"
    "{\"name\": \"slow\", \"devices\": 1, \"gpu\": \"V100\"}],"
    " \"network\": {\"latency_ms\": 0.001, \"bandwidth_gbps\": 10000},"
    " \"workload\": {\"model\": \"gpt3-small\", \"layers\": 12, \"batch\": 64,"
    " \"micro_batch\": 1, \"stages\": 2, \"replicas\": 1,"
    " \"recompute\": true}}";

static double simulated(const char *path, const char *extra) {
  json_t *o = support_geodes_json("simulate '%s' --method dtfm-identity "
                                  "--network ideal %s --json", path, extra);
  double t = json_number_value(json_object_get(o, "iteration_s"));
  json_decref(o);
  return t;
}

/* The closed form of one GPipe pass of K micro-batches over two stages
 * with free communication: every forward, then every backward, each phase
 * f0 + f1 + (K - 1) max(f0, f1), then each stage's optimizer step after
 * its last backward. */
static double closed_form(const char *path, int l0, int l1) {
  scenario *s = support_scenario(path);
  spec_workload w;
  const spec_gpu *gpu[2];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  int layers[2] = {l0, l1};
  w.stage_layers = layers;
  double f[2], b[2], o[2];
  for (int st = 0; st < 2; st++) {
    f[st] = roofline_stage_fwd_s(gpu[st], &w, st);
    b[st] = roofline_stage_bwd_s(gpu[st], &w, st);
    o[st] = runtime_optimizer_s(w.runtime, gpu[st], spec_stage_params(&w, st));
  }
  double K = w.micro_batches_per_pass;
  double fwd = f[0] + f[1] + (K - 1) * fmax(f[0], f[1]);
  /* the last stage runs its K backwards after its last forward, never
   * waiting; stage 0 follows at the pace of the slower */
  double b1_end = fwd + K * b[1];
  double b0_end = fwd + b[0] + b[1] + (K - 1) * fmax(b[0], b[1]);
  scenario_free(s);
  return fmax(b0_end + o[0], b1_end + o[1]);
}

/* The split balanced must find, by trying every one: x layers on the A100
 * where the slower stage, max(x u_A, (12 - x) u_V + h_V), is least (u: a
 * layer's forward, recomputation and backward on the roofline of each
 * GPU, h_V: the LM head's forward and backward on the V100). */
static int best_split(const char *path) {
  scenario *s = support_scenario(path);
  spec_workload w;
  const spec_gpu *gpu[2];
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  int best = 0;
  double best_t = INFINITY;
  for (int x = 1; x < w.layers; x++) {
    double t0 = roofline_stage_fwd_with(gpu[0], &w, 0, x) +
                roofline_stage_bwd_with(gpu[0], &w, 0, x);
    double t1 = roofline_stage_fwd_with(gpu[1], &w, 1, w.layers - x) +
                roofline_stage_bwd_with(gpu[1], &w, 1, w.layers - x);
    if (fmax(t0, t1) < best_t) best_t = fmax(t0, t1), best = x;
  }
  scenario_free(s);
  return best;
}

/* On the roofline (GPT-3 Small, m = 1, in V100-layer units: a layer 4.63
 * ms, the A100 2.32 times as fast, the head on the V100 1.75 layers):
 * even, stage 1 takes 6 + 1.75 = 7.75 against stage 0's 6 / 2.32 = 2.59;
 * balanced, 10 layers on the A100 take 4.31 and 2 + 1.75 = 3.75 on the
 * V100: the bottleneck falls 1.8 times (7.75 / 4.31). */
Test(cli_layers, balanced_beats_even_by_the_closed_form) {
  const char *path = support_write_file(support_path("two.json"), TWO);
  double even = simulated(path, ""), bal = simulated(path,
                                                     "--layers-per-stage balanced");
  int x = best_split(path);
  char split[64];
  snprintf(split, sizeof split, "--layers-per-stage %d,%d", x, 12 - x);
  double listed = simulated(path, split);
  cr_assert_eq(bal, listed, "balanced is %d,%d here: %.9g vs %.9g", x, 12 - x,
               bal, listed);
  double ce = closed_form(path, 6, 6), cb = closed_form(path, x, 12 - x);
  /* communication costs microseconds a transfer: 0.1 % of a second */
  cr_assert(fabs(even - ce) < 1e-3 * ce, "even %.6f vs closed form %.6f", even, ce);
  cr_assert(fabs(bal - cb) < 1e-3 * cb, "balanced %.6f vs %.6f", bal, cb);
  cr_assert(fabs((even - bal) - (ce - cb)) < 2e-3 * (ce - cb),
            "gain %.6f vs closed form %.6f", even - bal, ce - cb);
  cr_assert_gt(even / bal, 1.6, "the bottleneck halved: %.3f", even / bal);
  /* the even split written out is the even split */
  cr_assert_eq(simulated(path, "--layers-per-stage 6,6"), even);
}

Test(cli_layers, bad_lists_are_usage_errors_naming_the_option) {
  static const struct { const char *arg, *msg; } cases[] = {
      {"3,3,3", "3 entries for 8 stages"},
      {"3,3,3,3,3,3,3,0", "entry 7 is 0"},
      {"4,3,3,3,3,3,3,3", "they sum to 25, not the 24 layers"},
      {"3,3,3,3,3,3,3,x", "comma-separated"},
      {"3,3,3,3,3,3,3,-3", "comma-separated"},
      {"", "--layers-per-stage: an empty value"}};
  const char *cmds[] = {"simulate worldwide --method dtfm-identity",
                        "predict worldwide --method dtfm-identity",
                        "schedule worldwide --method greedy",
                        "validate worldwide --samples 2"};
  support_run r = {0};
  for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      cr_assert_eq(support_geodes(&r, "%s --layers-per-stage '%s'", cmds[c],
                                  cases[i].arg),
                   2, "%s %s: %s", cmds[c], cases[i].arg, r.err);
      cr_assert(strstr(r.err, "--layers-per-stage"), "%s", r.err);
      cr_assert(strstr(r.err, cases[i].msg), "'%s' in %s", cases[i].msg, r.err);
      cr_assert_eq(r.out_len, 0u, "nothing on stdout: %s", r.out);
    }
  /* with --layers, the sum is checked against the new count */
  cr_assert_eq(support_geodes(&r, "predict worldwide --method dtfm-identity "
                              "--layers 16 --layers-per-stage 2,2,2,2,2,2,2,2 "
                              "--json"), 0, "%s", r.err);
  cr_assert_eq(support_geodes(&r, "run worldwide --layers-per-stage balanced"),
               2);
  cr_assert(strstr(r.err, "--layers-per-stage"), "%s", r.err);
  support_run_clear(&r);
}

Test(cli_layers, simulate_refuses_what_does_not_fit_with_its_numbers) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate volunteer-mix --method "
                              "dtfm-identity --layers-per-stage "
                              "25,1,1,1,1,1,1,1"),
               1);
  cr_assert(strstr(r.err, "geodes: volunteer-mix: device 8 (site Ohio, A10G, "
                   "24 GB) cannot hold stage 0 (25 layers): it needs 37.4 GB "
                   "= weights 10.5 + gradients 10.5 + optimizer 0 + "
                   "activations 14.4 + reserve 2 GB under runtime dtfm (host "
                   "SGD)"), "%s", r.err);
  cr_assert_eq(r.out_len, 0u, "%s", r.out);
  /* balanced for the same devices fits */
  cr_assert_eq(support_geodes(&r, "simulate volunteer-mix --method "
                              "dtfm-identity --layers-per-stage balanced"),
               0, "%s", r.err);
  support_run_clear(&r);
}
