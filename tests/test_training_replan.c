/* test_training_replan: re-planning that starts from the user (issue 23) —
 * with the user's allocation and no method, replan keeps its placement
 * (whole replicas as they were: here the same plan reroute forms, so the
 * same iterations, and nothing migrates), where dtfm-identity re-places
 * and migrates; --objective without a search method and
 * --replan-on-change without one are usage errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/training.h"
#include "tests/support.h"
#include "traces/fault.h"

TestSuite(training_replan, .init = support_dir_make,
          .fini = support_dir_remove, .timeout = 300);

static scenario *grid(void) {
  const char *json =
      "{\"name\": \"grid\", \"sites\": [{\"name\": \"s0\", \"devices\": 4, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}, {\"name\": \"s1\", \"devices\": "
      "4, \"gpu\": \"V100\", \"nic_gbps\": 10}], \"network\": "
      "{\"latency_ms\": 10, \"bandwidth_gbps\": 1}, \"workload\": {\"model\": "
      "\"gpt3-xl\", \"layers\": 4, \"batch\": 8, \"micro_batch\": 1, "
      "\"stages\": 2, \"replicas\": 4, \"micro_batches_per_pass\": 2}}";
  err e;
  err_clear(&e);
  scenario *s = scenario_parse(json, strlen(json), "grid.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

Test(training_replan, replan_starts_from_the_users_allocation) {
  scenario *s = grid();
  /* the user's: each replica's stages swapped against the identity */
  alloc *a = alloc_new(4, 2);
  for (int r = 0; r < 4; r++) a->device[2 * r] = 2 * r + 1, a->device[2 * r + 1] = 2 * r;
  sim_options so = sim_options_default();
  so.transport.model = TRANSPORT_IDEAL;
  sim_result one;
  cr_assert_eq(sim_run(s, a, &so, &one, NULL), ERR_OK);
  double T = one.iteration_s;
  sim_result_free(&one);
  char text[256];
  snprintf(text, sizeof text, FAULT_HEADER "\n%.9f,device_down,2,inf,\n", 1.5 * T);
  err e;
  err_clear(&e);
  fault_trace *f = fault_parse(text, strlen(text), "f.csv", s, &e);
  cr_assert_not_null(f, "%s", e.msg);
  sim_training_opts o = sim_training_opts_default();
  o.sim = so, o.iterations = 6, o.faults = f;
  sim_training_result user, reroute, identity;
  o.recovery = SIM_RECOVERY_REPLAN, o.replan_from_alloc = true;
  support_training_run(s, a, &o, &user);
  o.recovery = SIM_RECOVERY_REROUTE, o.replan_from_alloc = false;
  support_training_run(s, a, &o, &reroute);
  o.recovery = SIM_RECOVERY_REPLAN;
  support_training_run(s, a, &o, &identity);
  cr_assert_eq(user.n, 6);
  cr_expect_eq(user.c.adopted, 1);
  cr_expect_eq(user.c.migrations, 0, "its whole replicas stay: no move");
  cr_expect_eq(user.lost_s[SIM_LOST_MIGRATION], 0);
  cr_expect_eq(user.it[5].replicas, 3);
  for (size_t k = 0; k < user.n; k++) {
    cr_expect_eq(user.it[k].iteration_s, reroute.it[k].iteration_s, "%zu", k);
    cr_expect_eq(user.it[k].start_s, reroute.it[k].start_s, "%zu", k);
  }
  cr_expect_eq(user.total_s, reroute.total_s);
  /* dtfm-identity places the identity: every device's stage changes */
  cr_expect_gt(identity.c.migrations, 0);
  cr_expect_gt(identity.lost_s[SIM_LOST_MIGRATION], 0);
  cr_expect_eq(identity.c.migration_s, identity.lost_s[SIM_LOST_MIGRATION]);
  sim_training_result_free(&user);
  sim_training_result_free(&reroute);
  sim_training_result_free(&identity);
  fault_free(f);
  alloc_free(a);
  scenario_free(s);
}

Test(training_replan, objective_and_replan_on_change_need_a_method) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--iterations 2 --objective predicted"), 2);
  cr_expect_not_null(strstr(r.err, "--objective predicted needs a search "
                                   "method"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method gcma "
                                  "--iterations 2 --objective cost-cmd"), 2);
  cr_expect_not_null(strstr(r.err, "--objective cost-cmd"), "%s", r.err);
  const char *al = support_path("a.json");
  cr_assert_eq(support_geodes(&r, "schedule worldwide --method megatron -o '%s'",
                              al), 0, "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --alloc '%s' "
                                  "--iterations 2 --replan-on-change", al), 2);
  cr_expect_not_null(strstr(r.err, "give --replan-method"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --alloc '%s' "
                                  "--iterations 2 --objective predicted", al), 2);
  cr_expect_not_null(strstr(r.err, "the --alloc placement"), "%s", r.err);
  support_run_clear(&r);
}

/* A scenario's replicas use every device (scenario.c refuses stages x
 * replicas short of its devices), so a fault on a device no replica uses
 * is one on a device the scenario lacks: refused at its line, exit 1, for
 * a DiLoCo run as for any. */
Test(training_replan, a_fault_on_a_device_no_replica_uses) {
  const char *f = support_path("f.csv");
  support_write_file(f, "t_s,event,target,duration_s,factor\n"
                        "1,device_down,64,10,\n");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--dp-algo diloco --inner-steps 2 "
                                  "--iterations 4 --faults '%s' --recovery "
                                  "reroute", f), 1);
  char want[512];
  snprintf(want, sizeof want, "%s:2: target: device 64 is not in scenario "
           "worldwide", f);
  cr_expect_not_null(strstr(r.err, want), "%s", r.err);
  support_run_clear(&r);
}
