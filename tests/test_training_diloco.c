/* test_training_diloco: DiLoCo and streaming DiLoCo as training runs on one
 * clock (sim/training_outer.c), against hand-built cases — a run without
 * faults is N times one outer step, to the bit; a replica lost at a known
 * inner step loses exactly the inner steps it made since the last sync and
 * the others finish the step; restart redoes the whole step; the dropped
 * replica rejoins after a state transfer; the counts agree with the lost
 * time; bad knobs are refused; runs repeat bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/training.h"
#include "tests/support.h"
#include "traces/fault.h"

TestSuite(training_diloco, .timeout = 300);

/* `replicas` sites of one `stages`-device pipeline each (replicas share
 * no link but the WAN's between sites, each pair its own), DiLoCo's knobs
 * in extra. */
static scenario *sites(int stages, int replicas, const char *extra) {
  char w[512];
  snprintf(w, sizeof w, "\"model\": \"gpt3-xl\", \"layers\": %d, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": %d, \"replicas\": %d, "
           "\"micro_batches_per_pass\": 2, %s", 2 * stages, 2 * replicas,
           stages, replicas, extra);
  return support_build(&(support_spec){
      .name = "dl", .nsites = replicas,
      .site = {.devices = stages, .nic_gbps = 10}, .workload = w});
}

/* One outer step alone (sim_run). */
static sim_result one(const scenario *s, const alloc *a, transport_model m) {
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_result r;
  cr_assert_eq(sim_run(s, a, &o, &r, NULL), ERR_OK);
  return r;
}

#define NEAR(a, b, tol, ...) cr_expect(fabs((a) - (b)) <= (tol), __VA_ARGS__)

Test(training_diloco, no_faults_is_n_outer_steps_to_the_bit) {
  const char *knobs[] = {
      "\"dp_algo\": \"diloco\", \"inner_steps\": 6",
      "\"dp_algo\": \"streaming-diloco\", \"inner_steps\": 8, "
      "\"fragments\": 2, \"overlap_steps\": 1"};
  transport_model nets[] = {TRANSPORT_IDEAL, TRANSPORT_NETEM};
  for (int k = 0; k < 2; k++)
    for (int m = 0; m < 2; m++) {
      scenario *s = sites(2, 3, knobs[k]);
      alloc *a = alloc_identity(3, 2);
      sim_result ref = one(s, a, nets[m]);
      int H = ref.inner_steps, N = 5;
      sim_training_result r;
      sim_training_opts o = support_training_opts(nets[m], N * H);
      support_training_run(s, a, &o, &r);
      cr_assert_eq(r.n, (size_t)N);
      int64_t step_ns = llround(ref.outer_step_s * 1e9);
      for (size_t i = 0; i < r.n; i++) {
        cr_expect_eq(r.it[i].iteration_s, ref.outer_step_s, "step %zu", i);
        cr_expect_eq(r.it[i].start_s, (double)((int64_t)i * step_ns) * 1e-9);
        cr_expect_eq(r.it[i].samples, (double)H * s->workload.batch);
        cr_expect_eq(r.it[i].replicas, 3);
      }
      cr_expect_eq(r.total_s, (double)(N * step_ns) * 1e-9);
      NEAR(r.total_s, N * ref.outer_step_s, 1e-12 * r.total_s, "N x one");
      cr_expect_eq(r.lost_total_s, 0);
      cr_expect_eq(r.samples, (double)N * H * s->workload.batch);
      /* the mean of N equal steps, sum / N: within an ulp of one */
      NEAR(r.agg.outer_step_s, ref.outer_step_s, 0x1p-52 * ref.outer_step_s,
           "%.17g vs %.17g", r.agg.outer_step_s, ref.outer_step_s);
      sim_result_free(&ref);
      sim_training_result_free(&r);
      alloc_free(a);
      scenario_free(s);
    }
}

/* Replica 1 (devices 2, 3) loses device 3 in the middle of inner step k + 1
 * of the second outer step: it had made k inner steps since the sync. */
Test(training_diloco, a_replica_lost_loses_its_steps_since_the_sync) {
  scenario *s = sites(2, 3, "\"dp_algo\": \"diloco\", \"inner_steps\": 6");
  alloc *a = alloc_identity(3, 2);
  sim_result ref = one(s, a, TRANSPORT_IDEAL);
  double T = ref.outer_step_s, t1 = ref.inner_step_s, D = T;
  for (int k = 0; k <= 5; k++) {
    double tf = T + k * t1 + t1 / 2;
    char rows[256];
    snprintf(rows, sizeof rows, "%.9f,device_down,3,%.9f,\n", tf, D);
    fault_trace *f = support_faults(s, rows);
    for (int pol = 0; pol < 2; pol++) {
      sim_training_opts o = support_training_opts(TRANSPORT_IDEAL, 4 * 6);
      o.faults = f;
      o.recovery = pol ? SIM_RECOVERY_REPLAN : SIM_RECOVERY_REROUTE;
      sim_training_result r;
      support_training_run(s, a, &o, &r);
      cr_assert_eq(r.n, 4);
      cr_expect_eq(r.c.dropped_replicas, 1);
      cr_expect_eq(r.c.dropped_steps, k, "k = %d: %lld", k, r.c.dropped_steps);
      cr_expect_eq(r.c.dropped_samples, k * 2.0, "one replica's batch, 2");
      cr_expect_eq(r.c.faults_seen, 1);
      cr_expect_eq(r.lost_s[SIM_LOST_REDONE], 0, "the others went on");
      cr_expect_eq(r.it[0].replicas, 3);
      cr_expect_eq(r.it[1].replicas, 2, "the step synchronised two");
      cr_expect_eq(r.it[1].samples, 6 * 4.0);
      NEAR(r.it[1].start_s, T, 1e-9, "no time lost");
      /* device 3 is back after D: replica 1 rejoins, its state moved */
      cr_expect_eq(r.it[3].replicas, 3);
      cr_expect_eq(r.c.adopted, 1);
      cr_expect_gt(r.lost_s[pol ? SIM_LOST_MIGRATION : SIM_LOST_RELOADING], 0);
      cr_expect_eq(r.c.migrations, pol ? 1 : 0);
      cr_expect_eq(r.c.migration_s, r.lost_s[SIM_LOST_MIGRATION]);
      sim_training_result_free(&r);
      /* restart: the whole step is redone after the wait */
      o.recovery = SIM_RECOVERY_RESTART;
      o.checkpoint_every = 6;
      o.storage_gbps = 10;
      support_training_run(s, a, &o, &r);
      cr_expect_eq(r.c.dropped_replicas, 0);
      double ck = r.lost_s[SIM_LOST_CHECKPOINT] / 4; /* after each step */
      if (tf > T + ck) /* else the loss cut the checkpoint's write */
        NEAR(r.lost_s[SIM_LOST_REDONE], tf - T - ck, 1e-8,
           "k %d: redone %.9f vs %.9f (T %.6f ck %.6f t1 %.6f)", k, r.lost_s[SIM_LOST_REDONE], tf - T - ck, T, ck, t1);
      cr_expect_eq(r.it[1].replicas, 3);
      sim_training_result_free(&r);
    }
    fault_free(f);
  }
  sim_result_free(&ref);
  alloc_free(a);
  scenario_free(s);
}

/* A device that drops and comes back inside one step: the survivors' step
 * runs as the full graph; the step after it the shortcut again; the run
 * repeats bit for bit. */
Test(training_diloco, runs_repeat_and_count_what_happened) {
  scenario *s = sites(2, 4, "\"dp_algo\": \"streaming-diloco\", "
                      "\"inner_steps\": 4, \"fragments\": 2");
  alloc *a = alloc_identity(4, 2);
  fault_trace *f = support_faults(s, "20,device_down,5,30,\n400,device_down,1,50,\n"
                             "410,link_slow,s0:s2,100,0.5\n");
  sim_training_opts o = support_training_opts(TRANSPORT_TCP, 40);
  o.faults = f;
  o.recovery = SIM_RECOVERY_REPLAN;
  sim_training_result x, y;
  support_training_run(s, a, &o, &x);
  support_training_run(s, a, &o, &y);
  cr_assert_eq(x.n, y.n);
  for (size_t i = 0; i < x.n; i++) {
    cr_expect_eq(x.it[i].iteration_s, y.it[i].iteration_s);
    cr_expect_eq(x.it[i].start_s, y.it[i].start_s);
    cr_expect_eq(x.it[i].samples, y.it[i].samples);
  }
  cr_expect_eq(x.total_s, y.total_s);
  cr_expect_eq(x.c.migration_s, x.lost_s[SIM_LOST_MIGRATION]);
  cr_expect_eq(x.c.migrations > 0, x.lost_s[SIM_LOST_MIGRATION] > 0);
  cr_expect_leq(x.c.adopted, x.c.plans);
  double kept = 0;
  for (size_t i = 0; i < x.n; i++) kept += x.it[i].samples;
  cr_expect_eq(kept, x.samples);
  cr_expect_eq(x.samples + x.c.dropped_samples <= 40.0 * 8, true);
  sim_training_result_free(&x);
  sim_training_result_free(&y);
  fault_free(f);
  alloc_free(a);
  scenario_free(s);
}

Test(training_diloco, knobs_not_whole_outer_steps_are_refused) {
  scenario *s = sites(2, 2, "\"dp_algo\": \"diloco\", \"inner_steps\": 4");
  alloc *a = alloc_identity(2, 2);
  sim_training_opts o = support_training_opts(TRANSPORT_IDEAL, 10);
  sim_training_result r;
  err e;
  err_clear(&e);
  cr_expect_eq(sim_training_run(s, a, &o, &r, &e), ERR_CONFIG);
  cr_expect(strstr(e.msg, "--iterations 10 is not a multiple of --inner-steps 4"),
            "%s", e.msg);
  o.iterations = 8;
  o.checkpoint_every = 3;
  err_clear(&e);
  cr_expect_eq(sim_training_run(s, a, &o, &r, &e), ERR_CONFIG);
  cr_expect(strstr(e.msg, "--checkpoint-every 3"), "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
}
