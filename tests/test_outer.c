/* test_outer: DiLoCo and streaming DiLoCo in the engine (sim/outer.h)
 * against hand computations: one stage per replica (a replica is one
 * device), so an inner step has no pipeline traffic and an exchange is
 * the ring all-reduce of test_train's closed form, 2 (R - 1) (alpha +
 * S / (R beta)); the sync volume and period of DiLoCo; the periodic
 * shortcut against the full graph of all H inner steps; streaming
 * DiLoCo's exchange hidden behind the steps it overlaps, and one too long
 * to hide (diloco_cycle_s); bytes exactly proportional to the widths;
 * utilisation 1 with free communication; the CLI's usage errors. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/alloc.h"
#include "models/compress.h"
#include "models/diloco.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/sim.h"
#include "tests/support.h"

TestSuite(outer, .init = support_dir_make, .fini = support_dir_remove);

/* R one-device replicas (or S x R) on one site with uniform links, and
 * the workload's DiLoCo keys as JSON text (extra). */
static scenario *site(int stages, int replicas, int layers, double lat_ms,
                      double gbps, const char *extra) {
  char text[1400];
  snprintf(text, sizeof text,
           "{\"name\": \"u\", \"sites\": [{\"name\": \"a\", \"devices\": %d, "
           "\"gpu\": \"V100\", \"nic_gbps\": %g}],\n"
           "\"network\": {\"latency_ms\": %g, \"bandwidth_gbps\": %g},\n"
           "\"workload\": {\"model\": \"gpt3-small\", \"layers\": %d, "
           "\"batch\": %d, \"micro_batch\": 1, \"stages\": %d, \"replicas\": "
           "%d, \"micro_batches_per_pass\": 4, %s}}\n",
           stages * replicas, gbps, lat_ms, gbps, layers, 4 * replicas,
           stages, replicas, extra);
  const char *path = support_write_file(support_path("u.json"), text);
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

static sim_result run(const scenario *s, transport_model m, bool full) {
  alloc *a = alloc_identity(s->workload.replicas, s->workload.stages);
  sim_options o = sim_options_default();
  o.transport.model = m;
  o.diloco_full = full;
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  alloc_free(a);
  return r;
}

static spec_workload resolved(const scenario *s) {
  spec_workload w;
  err e = {0};
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  return w;
}

/* NCCL's ring all-reduce of bytes over R members (support.h). */
static double ring_s(int R, double bytes, double lat_ms, double gbps) {
  return support_ring_uniform_s(bytes, R, lat_ms * 1e-3, gbps * 1e9 / 8);
}

/* What fragment f's update costs on a V100: dequantise + outer step. */
static double update_s(const spec_workload *w, int f) {
  diloco_plan p = diloco_plan_of(w);
  const spec_gpu *g = spec_gpu_find("V100");
  double params = diloco_fragment_params(w, &p, 0, f);
  return compress_dequantise_s(g, params * 2, w->given.grad_bits) +
         diloco_outer_s(g, params);
}

Test(outer, diloco_volume_and_period_by_hand) {
  int R = 4, H = 5;
  scenario *s = site(1, R, 12, 20, 1,
                     "\"dp_algo\": \"diloco\", \"inner_steps\": 5");
  spec_workload w = resolved(s);
  sim_result r = run(s, TRANSPORT_NETEM, false);
  double bytes = spec_stage_gradient_bytes(&w, 0); /* fp16 parameters */
  /* volume: each member sends 2 (R - 1) pieces of bytes / R per outer step */
  cr_assert_float_eq(r.dp_bytes * H, 2.0 * (R - 1) * bytes, 1e-6 * bytes);
  cr_assert_eq(r.pp_bytes, 0);
  /* period: H inner steps, then the ring, then the outer step */
  double want = H * r.inner_step_s + ring_s(R, bytes, 20, 1) + update_s(&w, 0);
  cr_assert(fabs(r.outer_step_s - want) < 0.01 * want, "%.6f vs %.6f",
            r.outer_step_s, want);
  cr_assert_float_eq(r.iteration_s, r.outer_step_s / H, 1e-12);
  cr_assert_eq(r.explicit_steps, 1);
  /* an inner step is the iteration without synchronisation: a lone
   * replica's (same per-replica batch) */
  scenario *one = site(1, 1, 12, 20, 1, "\"dp_algo\": \"ring\"");
  sim_result r1 = run(one, TRANSPORT_NETEM, false);
  cr_assert_float_eq(r.inner_step_s, r1.iteration_s, 1e-9);
  sim_result_free(&r), sim_result_free(&r1);
  scenario_free(s), scenario_free(one);
}

Test(outer, shortcut_equals_the_full_graph) {
  const char *plans[] = {
      "\"dp_algo\": \"diloco\", \"inner_steps\": 6",
      "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 8, "
      "\"fragments\": 2, \"overlap_steps\": 1, \"grad_bits\": 4",
      "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 6, "
      "\"fragments\": 3, \"overlap_steps\": 0"};
  for (int i = 0; i < 3; i++) {
    scenario *s = site(2, 3, 6, 30, 0.5, plans[i]);
    sim_result a = run(s, TRANSPORT_NETEM, false);
    sim_result b = run(s, TRANSPORT_NETEM, true);
    cr_assert_lt(a.explicit_steps, b.explicit_steps);
    cr_assert(fabs(a.outer_step_s - b.outer_step_s) < 1e-9 * b.outer_step_s,
              "%s: %.9f vs %.9f", plans[i], a.outer_step_s, b.outer_step_s);
    cr_assert_float_eq(a.dp_bytes, b.dp_bytes, 1e-9 * b.dp_bytes);
    cr_assert_float_eq(a.compute_utilisation, b.compute_utilisation, 1e-9);
    sim_result_free(&a), sim_result_free(&b);
    scenario_free(s);
  }
}

Test(outer, streaming_exchange_hides_behind_compute) {
  /* a fast network: each fragment's ring (well under an inner step) hides
   * behind the one step it overlaps; only the updates remain */
  scenario *s = site(1, 4, 12, 1, 100,
                     "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": "
                     "12, \"fragments\": 3, \"overlap_steps\": 1");
  spec_workload w = resolved(s);
  sim_result r = run(s, TRANSPORT_NETEM, false);
  double updates = 0;
  for (int f = 0; f < 3; f++) updates += update_s(&w, f);
  double exposed = r.outer_step_s - 12 * r.inner_step_s;
  cr_assert(fabs(exposed - updates) < 1e-6, "%.9f vs %.9f", exposed, updates);
  sim_result_free(&r);
  scenario_free(s);
}

Test(outer, streaming_exchange_too_long_to_hide) {
  /* a slow network: each ring takes many inner steps, one is overlapped,
   * the rest shows: diloco_cycle_s with the ring's closed form */
  int R = 4;
  scenario *s = site(1, R, 12, 50, 0.2,
                     "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": "
                     "12, \"fragments\": 3, \"overlap_steps\": 1");
  spec_workload w = resolved(s);
  diloco_plan p = diloco_plan_of(&w);
  sim_result r = run(s, TRANSPORT_NETEM, false);
  double sync[3], updates = 0;
  for (int f = 0; f < 3; f++) {
    double b = diloco_fragment_bytes(&w, &p, 0, f);
    sync[f] = ring_s(R, b, 50, 0.2);
    cr_assert_gt(sync[f], 2 * r.inner_step_s);
    updates += update_s(&w, f);
  }
  double want = diloco_cycle_s(&p, r.inner_step_s, sync) + updates;
  cr_assert(fabs(r.outer_step_s - want) < 0.01 * want, "%.6f vs %.6f",
            r.outer_step_s, want);
  sim_result_free(&r);
  scenario_free(s);
}

Test(outer, bytes_scale_with_bits_exactly) {
  scenario *s16 = site(2, 2, 12, 10, 1, "\"dp_algo\": \"ring\"");
  sim_result r16 = run(s16, TRANSPORT_NETEM, false);
  const char *bits[] = {"8", "4"};
  for (int i = 0; i < 2; i++) {
    char extra[200];
    snprintf(extra, sizeof extra, "\"dp_algo\": \"ring\", \"grad_bits\": %s, "
             "\"activation_bits\": %s", bits[i], bits[i]);
    scenario *s = site(2, 2, 12, 10, 1, extra);
    sim_result r = run(s, TRANSPORT_NETEM, false);
    double k = atof(bits[i]) / 16;
    /* the ring's pieces are cut per loop: equal up to rounding */
    cr_assert_float_eq(r.dp_bytes, r16.dp_bytes * k, 1e-9 * r.dp_bytes,
                       "%s bits", bits[i]);
    cr_assert_eq(r.pp_bytes, r16.pp_bytes * k, "%s bits", bits[i]);
    cr_assert_lt(r.iteration_s, r16.iteration_s);
    sim_result_free(&r);
    scenario_free(s);
  }
  scenario *d16 = site(1, 3, 12, 10, 1, "\"dp_algo\": \"diloco\"");
  scenario *d4 = site(1, 3, 12, 10, 1,
                      "\"dp_algo\": \"diloco\", \"grad_bits\": 4");
  sim_result a = run(d16, TRANSPORT_NETEM, false), b = run(d4, TRANSPORT_NETEM, false);
  cr_assert_float_eq(b.dp_bytes, a.dp_bytes / 4, 1e-9 * b.dp_bytes);
  sim_result_free(&a), sim_result_free(&b), sim_result_free(&r16);
  scenario_free(d16), scenario_free(d4), scenario_free(s16);
}

Test(outer, utilisation_is_one_with_free_communication) {
  /* one device: nothing to wait for, the compute stream never idles */
  scenario *s = site(1, 1, 12, 0, 1000, "\"dp_algo\": \"ring\"");
  sim_result r = run(s, TRANSPORT_IDEAL, false);
  cr_assert_float_eq(r.compute_utilisation, 1, 1e-12);
  cr_assert_float_eq(r.utilisation[0], 1, 1e-12);
  sim_result_free(&r);
  scenario_free(s);
  /* DiLoCo over replicas with a (nearly) free network: the exchange is all
   * that is not compute, and it vanishes */
  s = site(1, 4, 12, 0, 1e5, "\"dp_algo\": \"diloco\", \"inner_steps\": 50");
  r = run(s, TRANSPORT_IDEAL, false);
  cr_assert_gt(r.compute_utilisation, 0.9999);
  cr_assert_leq(r.compute_utilisation, 1 + 1e-12);
  for (int d = 0; d < r.ndevices; d++)
    cr_assert_float_eq(r.utilisation[d], r.compute_utilisation, 1e-12);
  sim_result_free(&r);
  scenario_free(s);
}

Test(outer, deterministic) {
  scenario *s = site(2, 3, 6, 30, 0.5,
                     "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 8, "
                     "\"fragments\": 2, \"overlap_steps\": 1");
  sim_result a = run(s, TRANSPORT_TCP, false), b = run(s, TRANSPORT_TCP, false);
  cr_assert_eq(a.outer_step_s, b.outer_step_s);
  cr_assert_eq(a.events, b.events);
  sim_result_free(&a), sim_result_free(&b);
  scenario_free(s);
}

Test(outer, bad_knobs_are_usage_errors_naming_the_option) {
  struct { const char *args, *names; } bad[] = {
      {"--dp-algo diloco --inner-steps 0", "--inner-steps"},
      {"--dp-algo streaming-diloco --fragments 48", "--fragments"},
      {"--dp-algo streaming-diloco --fragments 5", "--fragments"},
      {"--dp-algo streaming-diloco --inner-steps 100 --fragments 8", "--fragments"},
      {"--dp-algo streaming-diloco --fragments 4 --inner-steps 100 "
       "--overlap-steps 25", "--overlap-steps"},
      {"--grad-bits 3", "--grad-bits"},
      {"--activation-bits 1", "--activation-bits"},
      {"--inner-steps 50", "--inner-steps"},
      {"--dp-algo diloco --fragments 2", "--fragments"},
      {"--dp-algo diloco --runtime megatron", "one stage per replica"}};
  support_run r = {0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                    "%s", bad[i].args), 2, "%s: %s",
                 bad[i].args, r.err);
    cr_assert(strstr(r.err, bad[i].names) != NULL, "%s: %s", bad[i].args,
              r.err);
    cr_assert_eq(support_geodes(&r, "predict worldwide --method dtfm-identity "
                                    "%s", bad[i].args), 2, "%s: %s",
                 bad[i].args, r.err);
  }
  support_run_clear(&r);
}

Test(outer, sweep_rows_hold_utilisation_and_the_knobs) {
  scenario *s = site(1, 4, 12, 20, 1, "\"dp_algo\": \"ring\"");
  scenario_free(s);
  const char *sw = support_write_file(
      support_path("sw.json"),
      "{\"scenarios\": [\"u.json\"], \"dp_algo\": [\"diloco\"], "
      "\"inner_steps\": [5, 50], \"grad_bits\": [16, 4]}\n");
  const char *db = support_path("sw.db");
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "cd '%s' && '%s' sweep '%s' --db '%s'",
                          support_dir(), GEODES_BIN, sw, db),
               0, "%s", r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "compute_utilisation > 0 AND "
                                   "compute_utilisation <= 1 AND "
                                   "outer_step_s > 0"), 4);
  cr_expect_eq(support_sql_int(db, "SELECT sum(inner_steps) FROM results"),
               110);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "grad_bits = 4 AND dp_algo = 'diloco'"), 2);
  /* fewer exchanges, less data-parallel traffic per iteration: 10x */
  cr_expect_eq(support_sql_int(db, "SELECT round(1000 * (SELECT dp_bytes "
                                   "FROM results WHERE inner_steps = 5 AND "
                                   "grad_bits = 16) / (SELECT dp_bytes FROM "
                                   "results WHERE inner_steps = 50 AND "
                                   "grad_bits = 16))"), 10000);
  support_run_clear(&r);
}

Test(outer, intellect_1_scenarios_are_diloco_runs) {
  const char *names[] = {"intellect-1-usa", "intellect-1-usa-europe",
                         "intellect-1"};
  const int nodes[] = {8, 12, 14};
  double last = 0;
  for (int i = 0; i < 3; i++) {
    scenario *s = support_scenario(names[i]);
    spec_workload w = resolved(s);
    cr_expect_eq(w.dp_algo, SPEC_DILOCO);
    cr_expect_eq(w.given.inner_steps, 100);
    cr_expect_eq(w.given.grad_bits, 8);
    cr_expect_eq(w.replicas, nodes[i]);
    sim_result r = run(s, TRANSPORT_TCP, false);
    /* the farther the nodes, the longer the all-reduce */
    double exposed = r.outer_step_s - 100 * r.inner_step_s;
    cr_expect_gt(exposed, last, "%s", names[i]);
    last = exposed;
    cr_expect(r.compute_utilisation > 0.5 && r.compute_utilisation < 1);
    sim_result_free(&r);
    scenario_free(s);
  }
}

/* The DT-FM score's sizes follow the widths and DiLoCo's H: worldwide's
 * cost sizes are 0.5 GB of activations and 0.9 GB of gradient. */
Test(outer, score_sizes_follow_bits_and_inner_steps) {
  json_t *o = support_geodes_json("predict worldwide --method dtfm-identity "
                                  "--dp-algo diloco --inner-steps 100 "
                                  "--grad-bits 8 --activation-bits 4 --json");
  cr_expect_float_eq(json_real_value(json_object_get(o, "activation_gb")),
                     0.5 / 4, 1e-15);
  cr_expect_float_eq(json_real_value(json_object_get(o, "gradient_gb")),
                     0.9 / 2 / 100, 1e-15);
  cr_expect_gt(json_real_value(json_object_get(o, "outer_step_s")), 0);
  json_decref(o);
}

/* Issue 24, 8: 2^31 - 1 inner steps make an outer step of 2.9e10 s, past
 * the span a simulation covers: refused with the one limit's message. */
Test(outer, an_outer_step_past_the_span_is_refused) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--dp-algo diloco --inner-steps 2147483647"),
               1, "%s", r.out);
  cr_expect(strstr(r.err, "worldwide: one outer step of 2147483647 inner "
                          "steps takes ") != NULL, "%s", r.err);
  cr_expect(strstr(r.err, "past the 1e+09 s (31.7 years) that a simulation "
                          "covers") != NULL, "%s", r.err);
  cr_expect_eq(r.out_len, 0, "nothing printed as a result");
  support_run_clear(&r);
}

/* Issue 24, 15: DiLoCo's knobs from a scenario file are the file's errors
 * (FILE:LINE of the key, exit 1), not options nobody typed (exit 2); the
 * same values given as options stay usage errors naming the option. */
Test(outer, scenario_file_knobs_name_their_line) {
  const char *head =
      "{\"name\": \"dl\", \"sites\": [{\"name\": \"a\", \"devices\": 4, "
      "\"gpu\": \"V100\"}],\n \"network\": {\"latency_ms\": 1, "
      "\"bandwidth_gbps\": 1},\n \"workload\": {\"model\": \"gpt3-xl\", "
      "\"layers\": 4, \"batch\": 4, \"micro_batch\": 1, \"stages\": 2, "
      "\"replicas\": 2,\n";
  struct { const char *tail, *msg; } bad[] = {
      {"  \"dp_algo\": \"streaming-diloco\",\n  \"fragments\": 3}}\n",
       "dl.json:5: workload.fragments: 3 does not divide the 4 layers"},
      {"  \"dp_algo\": \"streaming-diloco\", \"fragments\": 2,\n"
       "  \"overlap_steps\": 60}}\n",
       "dl.json:5: workload.overlap_steps: 60: must be from 0 to H / F - 1 "
       "= 49"},
      {"  \"inner_steps\": 50}}\n",
       "dl.json:4: workload.inner_steps: needs diloco or streaming-diloco as "
       "the data-parallel algorithm, not central-ps (dl: workload.dp_algo "
       "(default))"},
      {"  \"dp_algo\": \"diloco\",\n  \"fragments\": 2}}\n",
       "dl.json:5: workload.fragments: needs workload.dp_algo "
       "streaming-diloco"}};
  support_run r = {0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", head, bad[i].tail);
    const char *f = support_write_file(support_path("dl.json"), text);
    cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity", f),
                 1, "%s", r.err);
    cr_expect(strstr(r.err, bad[i].msg) != NULL, "want '%s' in %s",
              bad[i].msg, r.err);
  }
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--dp-algo streaming-diloco --fragments 5",
                              support_path("dl.json")), 2, "%s", r.err);
  cr_expect(strstr(r.err, "dl: --fragments 5: must be from 1 to the 4 "
                   "layers") != NULL, "%s", r.err);
  support_run_clear(&r);
}
