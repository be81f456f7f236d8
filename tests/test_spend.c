/* test_spend: a run's bill from its statistics (sim/spend.h), by hand: a
 * two-site pipeline's egress is its bytes in each direction times that
 * direction's price; a training run with an hour-long outage under
 * restart bills the hour it waited, at the devices it held. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "models/bill.h"
#include "models/spec_workload.h"
#include "schedules/objective.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "sim/spend.h"
#include "sim/training.h"
#include "tests/support.h"

/* Two sites of one V100 each, a 2-stage pipeline of gpt3-small, 4
 * micro-batches of 1; prices as the keys say. */
static scenario *pipeline(const char *a, const char *b, const char *net) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"pipe\", \"sites\": [{\"name\": \"A\", \"devices\": 1%s},"
           "{\"name\": \"B\", \"devices\": 1%s}], \"network\": {\"latency_ms\": "
           "5, \"bandwidth_gbps\": 1%s}, \"workload\": {\"model\": "
           "\"gpt3-small\", \"batch\": 4, \"micro_batch\": 1, \"stages\": 2, "
           "\"replicas\": 1}}", a, b, net);
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "pipe.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

static alloc *in_order(void) {
  alloc *a = alloc_new(1, 2);
  a->device[0] = 0, a->device[1] = 1;
  return a;
}

/* sim_spend_fastest is the search under the predictor alone, its best
 * simulated and billed: the same allocation, time and bill as those steps
 * taken one by one. */
Test(spend, the_fastest_is_the_predictors_search_simulated_and_billed) {
  scenario *s = support_scenario("multi-dc");
  err e = {0};
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  cr_assert_not_null(c, "%s", e.msg);
  sim_options so = sim_options_default();
  search_opts o;
  search_opts_default(&o);
  o.seed = 3, o.trials = 200;
  alloc *a = NULL;
  sim_result r = {0};
  bill b = {0};
  cr_assert_eq(sim_spend_fastest(s, c, "gcma", &so, &o, &a, &r, &b, &e),
               ERR_OK, "%s", e.msg);
  objective *ob = objective_new(s, c, &so.transport, false, &e);
  search_objective obj = objective_predicted(ob);
  search_result *want = sim_place_search_with(s, c, "gcma", &o, &so, &obj, &e);
  cr_assert_not_null(want, "%s", e.msg);
  cr_expect_eq(memcmp(a->device, want->best->device,
                      (size_t)(a->replicas * a->stages) * sizeof *a->device),
               0);
  sim_result wr = {0};
  bill wb = {0};
  cr_assert_eq(sim_run(s, want->best, &so, &wr, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(sim_spend_iteration(s, &wr, &wb, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(r.iteration_s, wr.iteration_s);
  cr_expect(b.usd == wb.usd || (isnan(b.usd) && isnan(wb.usd)));
  bill_free(&b), bill_free(&wb);
  sim_result_free(&r), sim_result_free(&wr);
  search_result_free(want);
  objective_free(ob);
  alloc_free(a);
  cost_ctx_free(c);
  scenario_free(s);
}

Test(spend, two_site_pipeline_egress_by_direction) {
  scenario *s = pipeline(", \"usd_per_gpu_hour\": 1, \"usd_per_gb\": 0.09",
                         ", \"usd_per_gpu_hour\": 1, \"usd_per_gb\": 0.02", "");
  alloc *a = in_order();
  sim_options o = sim_options_default();
  sim_result r = {0};
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  bill b;
  cr_assert_eq(sim_spend_iteration(s, &r, &b, &e), ERR_OK, "%s", e.msg);
  /* each way, 4 micro-batches of 1 x 2048 tokens x 768 fp16 values */
  double bytes = 4.0 * 2048 * 768 * 2;
  double ab = NAN, ba = NAN, ab_usd = NAN, ba_usd = NAN;
  for (int i = 0; i < b.npairs; i++) {
    if (b.pair[i].src == 0 && b.pair[i].dst == 1)
      ab = b.pair[i].bytes, ab_usd = b.pair[i].usd;
    if (b.pair[i].src == 1 && b.pair[i].dst == 0)
      ba = b.pair[i].bytes, ba_usd = b.pair[i].usd;
  }
  cr_expect_eq(ab, bytes, "A -> B: the activations, %.17g", ab);
  cr_expect_eq(ba, bytes, "B -> A: their gradients");
  cr_expect(fabs(ab_usd - bytes * 0.09 / 1e9) < 1e-15, "%.17g", ab_usd);
  cr_expect(fabs(ba_usd - bytes * 0.02 / 1e9) < 1e-15, "%.17g", ba_usd);
  cr_expect(fabs(b.egress_usd - bytes * 0.11 / 1e9) < 1e-15);
  cr_expect(fabs(b.compute_usd - 2 * r.iteration_s / 3600) < 1e-15,
            "two GPUs held for the iteration, idle time included");
  cr_expect_eq(b.samples, 4);
  bill_free(&b);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* Device 1 is down for an hour from t = 0.1 s (within the first
 * iteration under every runtime): restart waits for it, and
 * the bill's waiting line is that hour (less the part of the iteration
 * it cut, which is redone) at two GPUs of $3. */
Test(spend, an_outage_under_restart_bills_the_waiting_hour) {
  scenario *s = pipeline(", \"usd_per_gpu_hour\": 3", ", \"usd_per_gpu_hour\": 3",
                         ", \"usd_per_gb\": 0");
  alloc *a = in_order();
  fault_trace *f = support_faults(s, "0.1,device_down,1,3600,\n");
  sim_training_opts o = support_training_opts(TRANSPORT_TCP, 3);
  o.faults = f;
  sim_training_result tr = {0};
  support_training_run(s, a, &o, &tr);
  double waiting = tr.lost_s[SIM_LOST_WAITING];
  cr_expect(waiting > 3598 && waiting <= 3600, "waited %.6f s", waiting);
  bill b;
  err e = {0};
  cr_assert_eq(sim_spend_training(s, &tr, &tr.agg, &b, &e), ERR_OK, "%s", e.msg);
  int w = -1;
  for (int c = 0; c < b.nlost; c++)
    if (strcmp(b.lost_names[c], "waiting") == 0) w = c;
  cr_assert_geq(w, 0);
  cr_expect(fabs(b.lost_usd_by[w] - waiting / 3600 * 6) < 1e-12,
            "waiting bill $%.6f for %.3f s", b.lost_usd_by[w], waiting);
  cr_expect(fabs(b.compute_usd - tr.total_s / 3600 * 6) < 1e-9,
            "the run's hours, the outage in them");
  cr_expect_gt(b.compute_usd, 6 * 0.99, "at least the hour");
  cr_expect_eq(b.egress_usd, 0, "egress priced at 0");
  bill_free(&b);
  sim_training_result_free(&tr);
  fault_free(f);
  alloc_free(a);
  scenario_free(s);
}

/* A predicted iteration of the same pipeline, an hour long, billed in
 * closed form: two GPUs for the hour at $1, the activations and their
 * gradients each way at the sender's price, no busy time. */
Test(spend, a_predicted_hour_bills_the_closed_forms_bytes) {
  scenario *s = pipeline(", \"usd_per_gpu_hour\": 1, \"usd_per_gb\": 0.09",
                         ", \"usd_per_gpu_hour\": 1, \"usd_per_gb\": 0.02", "");
  alloc *a = in_order();
  spec_workload w;
  err e = {0};
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  bill b;
  cr_assert_eq(sim_spend_predicted(s, &w, a, 3600, &b, &e), ERR_OK, "%s",
               e.msg);
  double bytes = 4.0 * 2048 * 768 * 2; /* each way, as above */
  cr_expect_eq(b.held_s, 3600);
  cr_expect_eq(b.devices, 2);
  cr_expect(fabs(b.compute_usd - 2.0) < 1e-12, "%.17g", b.compute_usd);
  cr_expect(fabs(b.egress_usd - bytes * 0.11 / 1e9) < 1e-15, "%.17g",
            b.egress_usd);
  cr_expect(fabs(b.usd - b.compute_usd - b.egress_usd) < 1e-12);
  cr_expect_eq(b.samples, 4);
  cr_expect(!b.busy_known, "the predictor gives no busy time");
  bill_free(&b);
  alloc_free(a);
  scenario_free(s);
}
