/* Tests of tests/simgrid/simgrid_train.c, the SimGrid program of the speed
 * comparison (issue 10): that it runs geodes's workload (its communications
 * are geodes's flows, N iterations N times as many, each as long as the
 * first) and that, given geodes's semantics (--latency after: the latency
 * paid after the bytes have left; --model cm02: no correction factors),
 * SimGrid's max-min solver gives geodes's iteration time where nothing is
 * shared. Nothing here is timed. Built only where SimGrid is installed. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/sim.h"
#include "tests/support.h"

/* One figure line of simgrid_train ARGS --json (expecting success). */
static json_t *simgrid(const char *args) {
  support_run r = {0};
  support_sh(&r, "'%s' %s --json", SIMGRID_TRAIN_BIN, args);
  cr_assert_eq(r.status, 0, "simgrid_train %s: exit %d: %s", args, r.status,
               r.err);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  cr_assert(j, "simgrid_train %s: not JSON (%s): %s", args, je.text, r.out);
  support_run_clear(&r);
  return j;
}

static double num(const json_t *j, const char *key) {
  json_t *v = json_object_get(j, key);
  cr_assert(json_is_number(v), "no number %s", key);
  return json_number_value(v);
}

/* geodes's own iteration of the same workload: worldwide, M micro-batches
 * per pipeline in one pass, placement method, network model m. */
static sim_result geodes(const char *method, int M, transport_model m) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.batch = (long)s->workload.replicas * s->workload.micro_batch * M;
  k.micro_batches_per_pass = M;
  err e = {0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  alloc *a = alloc_fixed(method, s->workload.replicas, s->workload.stages,
                         s->seed);
  cr_assert(a);
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_result r;
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
  return r;
}

/* The tolerance where nothing is shared: geodes rounds each latency and
 * each transfer's end to whole nanoseconds along the critical path
 * (measured: 5 us in 30 s). */
#define NO_CONTENTION_REL 1e-6

Test(simgrid_train, geodes_semantics_match_ideal_without_contention) {
  int ms[] = {4, 32};
  for (int i = 0; i < 2; i++) {
    char args[128];
    snprintf(args, sizeof args, "--micro-batches %d --network ideal "
             "--model cm02 --latency after", ms[i]);
    json_t *j = simgrid(args);
    sim_result r = geodes("dtfm-identity", ms[i], TRANSPORT_IDEAL);
    double t = num(j, "first_iteration_s");
    cr_expect(fabs(t - r.iteration_s) <= NO_CONTENTION_REL * r.iteration_s,
              "M=%d: SimGrid %.9f s, geodes ideal %.9f s", ms[i], t,
              r.iteration_s);
    cr_expect_eq((uint64_t)num(j, "comms"), r.flows);
    sim_result_free(&r);
    json_decref(j);
  }
}

/* The netem platform (shapers per destination class, NICs) under the same
 * placement: dtfm-identity shares nothing in geodes (netem = ideal there),
 * and SimGrid agrees. */
Test(simgrid_train, netem_platform_matches_netem) {
  json_t *j = simgrid("--micro-batches 4 --network netem --model cm02 "
                      "--latency after");
  sim_result r = geodes("dtfm-identity", 4, TRANSPORT_NETEM);
  double t = num(j, "first_iteration_s");
  cr_expect(fabs(t - r.iteration_s) <= NO_CONTENTION_REL * r.iteration_s,
            "SimGrid %.9f s, geodes netem %.9f s", t, r.iteration_s);
  sim_result_free(&r);
  json_decref(j);
}

/* With contention (a random placement shares shapers), geodes's sends
 * complete when the message is in the socket buffers, so a device's next
 * message to another destination starts while the last is still leaving;
 * this program holds the send stream until the bytes have left. The two
 * stay within 1 % (measured 0.33 %), SimGrid the faster: it shares less. */
Test(simgrid_train, contention_within_one_percent) {
  json_t *j = simgrid("--method random --micro-batches 4 --network netem "
                      "--model cm02 --latency after");
  sim_result r = geodes("random", 4, TRANSPORT_NETEM);
  double t = num(j, "first_iteration_s");
  cr_expect(t <= r.iteration_s && t >= 0.99 * r.iteration_s,
            "SimGrid %.9f s, geodes netem %.9f s", t, r.iteration_s);
  sim_result_free(&r);
  json_decref(j);
}

/* N iterations on one clock: N times the communications, each iteration
 * as long as the first on a static network, and the run ends at N times
 * it. */
Test(simgrid_train, iterations_repeat_the_workload) {
  json_t *one = simgrid("--micro-batches 4 --model cm02");
  json_t *three = simgrid("--micro-batches 4 --model cm02 --iterations 3");
  double t = num(one, "first_iteration_s");
  cr_expect_eq(num(three, "comms"), 3 * num(one, "comms"));
  cr_expect_eq(num(three, "computes"), 3 * num(one, "computes"));
  cr_expect_eq(num(three, "first_iteration_s"), t);
  cr_expect(fabs(num(three, "min_iteration_s") - t) <= 1e-9 * t);
  cr_expect(fabs(num(three, "max_iteration_s") - t) <= 1e-9 * t);
  cr_expect(fabs(num(three, "simulated_s") - 3 * t) <= 1e-9 * t);
  json_decref(one);
  json_decref(three);
}

/* SimGrid's own ways only add time here, where nothing is shared: latency
 * on the links holds each send stream until the arrival (one latency more
 * per message than geodes's), and LV08's factors (latency x 13.01,
 * bandwidth x 0.97, a 4 MiB window per flow) slow every transfer. */
Test(simgrid_train, simgrid_models_are_slower_here) {
  sim_result r = geodes("dtfm-identity", 4, TRANSPORT_IDEAL);
  json_t *cm02 = simgrid("--micro-batches 4 --network ideal --model cm02");
  json_t *lv08 = simgrid("--micro-batches 4 --network ideal --model lv08");
  json_t *after = simgrid("--micro-batches 4 --network ideal --model lv08 "
                          "--latency after");
  double c = num(cm02, "first_iteration_s"), l = num(lv08, "first_iteration_s");
  cr_expect_gt(c, 1.5 * r.iteration_s, "cm02 %.3f s, geodes %.3f s", c,
               r.iteration_s);
  cr_expect_gt(l, 5 * c, "lv08 %.3f s, cm02 %.3f s", l, c);
  /* without latency on the links LV08 keeps only its bandwidth factor */
  double a = num(after, "first_iteration_s");
  cr_expect(a > r.iteration_s && a <= r.iteration_s / 0.97,
            "lv08 after %.6f s, geodes %.6f s", a, r.iteration_s);
  sim_result_free(&r);
  json_decref(cm02);
  json_decref(lv08);
  json_decref(after);
}

Test(simgrid_train, deterministic) {
  json_t *x = simgrid("--method random --micro-batches 4 --iterations 2");
  json_t *y = simgrid("--method random --micro-batches 4 --iterations 2");
  cr_expect_eq(num(x, "simulated_s"), num(y, "simulated_s"));
  cr_expect_eq(num(x, "first_iteration_s"), num(y, "first_iteration_s"));
  cr_expect_eq(num(x, "comms"), num(y, "comms"));
  json_decref(x);
  json_decref(y);
}

Test(simgrid_train, bad_input) {
  support_run r = {0};
  support_sh(&r, "'%s' --bogus", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 2);
  support_sh(&r, "'%s' --iterations 0", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 2);
  support_sh(&r, "'%s' --latency sometimes", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 2);
  support_sh(&r, "'%s' --method nope", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "nope"), "%s", r.err);
  support_sh(&r, "'%s' --scenario worldwide-varying", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 1);
  cr_expect(strstr(r.err, "changes over time"), "%s", r.err);
  support_sh(&r, "'%s' --network tcp", SIMGRID_TRAIN_BIN);
  cr_expect_eq(r.status, 1);
  support_run_clear(&r);
}
