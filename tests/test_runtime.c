/* test_runtime: the runtimes' table (models/runtime.c) — what each
 * implies, the default a scenario that names none gets — and the modern
 * runtime's iteration against its closed form on a tiny pipeline, in the
 * engine and the predictor. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/alloc.h"
#include "models/predict.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/sim.h"
#include "sim/train.h"
#include "tests/support.h"

TestSuite(runtime, .init = support_dir_make, .fini = support_dir_remove);

/* Every runtime has its row; the figures the outputs state. */
Test(runtime, each_row_states_what_it_implies) {
  static const struct {
    spec_runtime rt;
    const char *optimizer;
    runtime_place place;
    double gpu_bytes, state_bytes, gbps;
    bool barrier, calls;
  } want[] = {
      {SPEC_RUNTIME_MODERN, "GPU AdamW", RUNTIME_ON_GPU, 16, 12, 16, false, false},
      {SPEC_RUNTIME_DTFM, "host SGD", RUNTIME_ON_HOST, 4, 4, 1.5, true, false},
      {SPEC_RUNTIME_MEGATRON, "GPU Adam", RUNTIME_ON_GPU, 16, 12, 1.5, false, true}};
  cr_assert_eq(sizeof want / sizeof *want, (size_t)SPEC_NRUNTIMES);
  for (int i = 0; i < SPEC_NRUNTIMES; i++) {
    const runtime_row *r = runtime_of(want[i].rt);
    const char *name = spec_runtime_name(want[i].rt);
    cr_expect_str_eq(r->optimizer, want[i].optimizer, "%s", name);
    cr_expect_eq(r->place, want[i].place, "%s", name);
    cr_expect_eq(r->weight_bytes + r->gradient_bytes + r->optimizer_bytes,
                 want[i].gpu_bytes, "%s", name);
    cr_expect_eq(runtime_state_bytes(want[i].rt, 1), want[i].state_bytes);
    cr_expect_eq(runtime_checkpoint_gbps(want[i].rt), want[i].gbps, "%s", name);
    cr_expect_eq(r->pass_barrier, want[i].barrier, "%s", name);
    cr_expect_eq(runtime_p2p_call_s(want[i].rt) > 0, want[i].calls, "%s", name);
    cr_expect(r->activations[0] && r->boundary[0] && r->checkpoint[0] &&
              r->source[0], "%s", name);
  }
  /* the modern runtime is the default: a scenario that names none */
  cr_expect_str_eq(workload_runtimes[0], "modern");
  cr_expect_eq(spec_runtime_parse(NULL), SPEC_RUNTIME_MODERN);
  /* AdamW on the GPU streams 28 B a parameter; DT-FM's host SGD 1.5 ns */
  const spec_gpu *g = spec_gpu_find("A100");
  cr_expect_eq(runtime_optimizer_s(SPEC_RUNTIME_MODERN, g, 1e9),
               roofline_stream_s(g, 28e9));
  cr_expect_float_eq(runtime_optimizer_s(SPEC_RUNTIME_DTFM, g, 1e9), 1.5,
                     1e-12);
}

/* ZeRO: each of the D_dp replicas steps (and checkpoints) 1 / D_dp of the
 * stage's optimizer state; the text says what a GPU keeps per parameter. */
Test(runtime, zero_shards_the_step_and_the_state) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.runtime = "modern", k.dp_algo = "ring", k.zero = 1;
  cr_assert_eq(scenario_apply(s, &k, NULL), ERR_OK);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  const spec_gpu *g = spec_gpu_find("V100");
  double P = spec_stage_params(&w, 3);
  cr_expect_eq(runtime_step_s(&w, g, 3),
               runtime_optimizer_s(SPEC_RUNTIME_MODERN, g, P / 8));
  cr_expect_float_eq(runtime_stage_state_bytes(&w, 3), 12 * P / 8, 1e-6 * P);
  char text[128];
  runtime_text(&w, 1, 100, text, sizeof text);
  cr_expect_str_eq(text, "GPU AdamW, ZeRO-1: 5.5 B/param, optimizer 1 % of "
                         "the iteration");
  w.given.zero = 2;
  runtime_text(&w, NAN, 100, text, sizeof text);
  cr_expect_str_eq(text, "GPU AdamW, ZeRO-2: 3.75 B/param");
  w.given.zero = 0;
  runtime_text(&w, 0.5, 50, text, sizeof text);
  cr_expect_str_eq(text, "GPU AdamW, 16 B/param, optimizer 1 % of the "
                         "iteration");
  scenario_free(s);
}

/* Two stages of GPT-3 XL (2 layers each; the head makes stage 1 the
 * slower one, f1 > f0 and b1 > b0), one replica, GPipe with K = 4 and two
 * passes, links of alpha = 20 ms one way and a rate that makes a transfer
 * take a nanosecond. The modern runtime has no barrier: a pass's forward
 * phase ends f0 + alpha + K f1 after it starts, its backward phase K b1 +
 * alpha + b0 after that, the next pass starts as stage 0's last backward
 * ends, and the iteration ends with stage 0's optimizer step (GPU AdamW):
 *   T = P (f0 + K f1 + K b1 + b0 + 2 alpha) + o0.
 * DT-FM's runtime adds a barrier of alpha between the phases of each pass
 * and at the end, and steps on the host. */
static scenario *tiny(const char *runtime) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"tiny\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
           "\"gpu\": \"V100\", \"nic_gbps\": 1e9}],\n"
           "\"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 1e8},\n"
           "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8, "
           "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 1, "
           "\"micro_batches_per_pass\": 4, \"schedule\": \"gpipe\"%s%s%s}}\n",
           runtime ? ", \"runtime\": \"" : "", runtime ? runtime : "",
           runtime ? "\"" : "");
  return support_scenario(support_write_file(support_path("tiny.json"), text));
}

static double simulated(const scenario *s, const alloc *a) {
  sim_options o = sim_options_default();
  o.transport.model = TRANSPORT_NETEM;
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  double t = r.iteration_s;
  sim_result_free(&r);
  return t;
}

Test(runtime, modern_iteration_is_its_closed_form) {
  scenario *s = tiny(NULL); /* the default */
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(w.runtime, SPEC_RUNTIME_MODERN);
  cr_assert(w.passes == 2 && w.micro_batches_per_pass == 4);
  const spec_gpu *v = spec_gpu_find("V100"), *gpu[2] = {v, v};
  sim_compute c0 = sim_train_compute(&w, 0, v, 1, 1);
  sim_compute c1 = sim_train_compute(&w, 1, v, 1, 1);
  cr_assert(c1.fwd_ns > c0.fwd_ns && c1.bwd_ns > c0.bwd_ns);
  cr_assert_eq(c0.opt_ns, llround(runtime_step_s(&w, v, 0) * 1e9));
  double alpha = 20e6, K = 4, P = 2;
  double pass = (double)c0.fwd_ns + K * (double)c1.fwd_ns +
                K * (double)c1.bwd_ns + (double)c0.bwd_ns + 2 * alpha;
  double want = P * pass + (double)c0.opt_ns;
  alloc *a = alloc_identity(1, 2);
  double t = simulated(s, a) * 1e9;
  /* each of the 2 P K transfers takes its nanosecond */
  cr_expect(fabs(t - want) <= 2 * P * K + 2, "engine %.0f ns, want %.0f", t,
            want);
  predict_result pr;
  transport_options netem = transport_options_default();
  netem.model = TRANSPORT_NETEM;
  cr_assert_eq(predict_iteration_with(&w, s, gpu, a, &netem, &pr), ERR_OK);
  cr_expect(fabs(pr.iteration_s * 1e9 - want) <= 2 * P * K + 2,
            "predictor %.0f ns, want %.0f", pr.iteration_s * 1e9, want);
  /* DT-FM's runtime on the same pipeline: a barrier (one round over two
   * ranks: alpha) between the phases of each pass and one at the end */
  scenario *d = tiny("dtfm");
  spec_workload wd;
  cr_assert_eq(spec_workload_resolve(d, &wd, NULL), ERR_OK);
  double od = fmax(runtime_step_s(&wd, v, 0), runtime_step_s(&wd, v, 1)) * 1e9;
  double td = simulated(d, a) * 1e9;
  cr_expect(fabs(td - (P * (pass + alpha) + od + alpha)) <= 2 * P * K + 2,
            "dtfm %.0f ns, want %.0f", td, P * (pass + alpha) + od + alpha);
  alloc_free(a);
  scenario_free(s);
  scenario_free(d);
}

/* explain names the runtime too, with its optimizer's share; a built-in
 * names its own (worldwide: DT-FM's), a scenario without the key gets the
 * modern one. */
Test(runtime, explain_and_the_default_name_it) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "explain worldwide --method dtfm-identity "
                              "--network-model netem --json"), 0, "%s", r.err);
  json_t *o = json_loads(r.out, 0, NULL), *rt = json_object_get(o, "runtime");
  cr_expect_str_eq(json_string_value(json_object_get(rt, "name")), "dtfm");
  cr_expect_str_eq(json_string_value(json_object_get(rt, "optimizer_on")),
                   "host");
  double share = json_number_value(json_object_get(rt, "optimizer_share"));
  double opt = json_number_value(json_object_get(rt, "optimizer_s"));
  double it = json_number_value(json_object_get(o, "iteration_s"));
  cr_expect(share > 0 && fabs(share - opt / it) < 1e-12, "%g", share);
  json_decref(o);
  scenario *t = tiny(NULL);
  cr_assert_eq(support_geodes(&r, "explain '%s' --method dtfm-identity", t->file),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "\nruntime     modern (GPU AdamW, 16 B/param, "
                          "optimizer "), "%s", r.out);
  scenario_free(t);
  support_run_clear(&r);
}
