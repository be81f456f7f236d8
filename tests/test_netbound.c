/* test_netbound: what held a run's transfers below their links' rates
 * (sim/netbound.c), against the engine: when nothing was held under tcp,
 * ideal, netem and tcp give the same times (issue 33: worldwide at one
 * stage gave them to the bit, and nothing said why); on the new user's
 * cluster the shared uplinks and the windows hold transfers back, and the
 * models differ. simulate states it in its table and --json. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "sim/netbound.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "tests/support.h"

TestSuite(netbound, .timeout = 300);

typedef struct ctx {
  const scenario *s;
  const transport_options *o;
  sim_rate_log rates;
  sim_netbound nb;
} ctx;

static void inspect(void *p, const sim_graph *g) {
  ctx *c = p;
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  sim_netbound_of(c->s, c->o, t, n, &c->rates, &c->nb);
}

/* s by method under m: its iteration, and what held it back into *nb:
 * from the whole log by the inspection above (the reference), or summed
 * as the run goes by sim_netbound_watch (online). */
static double run_as(const scenario *s, const char *method, transport_model m,
                     bool online, sim_netbound *nb) {
  err e = {0};
  cost_ctx *cc = cost_ctx_from_scenario(s, &e);
  cr_assert_not_null(cc, "%s", e.msg);
  sim_options o = sim_options_default();
  o.transport.model = m;
  alloc *a = sim_place(s, cc, method, &o, &e);
  cr_assert_not_null(a, "%s", e.msg);
  ctx c = {.s = s, .o = &o.transport};
  sim_netbound_watch w = {0};
  if (online) sim_netbound_watch_start(&w, s, &o, true);
  else o.rates = &c.rates, o.inspect = inspect, o.inspect_ctx = &c;
  sim_result r;
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  double t = r.iteration_s;
  cr_assert(!online || w.done, "the watch saw the run");
  *nb = online ? w.nb : c.nb;
  sim_result_free(&r);
  cr_expect(!online || w.rates.n == 0, "online: nothing logged");
  sim_rate_log_free(&c.rates);
  sim_netbound_watch_free(&w);
  alloc_free(a);
  cost_ctx_free(cc);
  return t;
}

static double run(const scenario *s, const char *method, transport_model m,
                  sim_netbound *nb) {
  return run_as(s, method, m, false, nb);
}

/* Issue 37: simulate sums what held its transfers back as the run goes
 * (no log of every rate change: 75 MB at 10^4 devices); the figures are
 * the log's, field by field, where transfers were held back by each cause
 * and where none was. */
Test(netbound, the_run_sums_what_the_log_gives) {
  const char *const names[] = {GEODES_FIXTURES "/newcomer.json", "worldwide",
                               "volunteer-mix"};
  const transport_model models[] = {TRANSPORT_TCP, TRANSPORT_NETEM};
  uint64_t held = 0;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    for (size_t m = 0; m < 2; m++) {
      scenario *s = support_scenario(names[i]);
      sim_netbound log, online;
      double t0 = run_as(s, "random", models[m], false, &log);
      double t1 = run_as(s, "random", models[m], true, &online);
      cr_expect(t0 == t1);
      cr_expect_gt(log.transfers, 0, "%s", names[i]);
      cr_expect(memcmp(&log, &online, sizeof log) == 0,
                "%s under %s: %llu/%llu held against %llu/%llu", names[i],
                transport_model_names[models[m]],
                (unsigned long long)online.held_total,
                (unsigned long long)online.transfers,
                (unsigned long long)log.held_total,
                (unsigned long long)log.transfers);
      held += log.held_total;
      scenario_free(s);
    }
  cr_expect_gt(held, 100, "some were held back");
}

Test(netbound, nothing_held_back_means_the_models_agree) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.stages = 1, k.layers = 4, k.micro_batches_per_pass = 16;
  err e = {0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  sim_netbound nb[TRANSPORT_NMODELS];
  double t[TRANSPORT_NMODELS];
  for (int m = 0; m < TRANSPORT_NMODELS; m++)
    t[m] = run(s, "dtfm-identity", (transport_model)m, &nb[m]);
  cr_expect_gt(nb[TRANSPORT_TCP].transfers, 1000);
  cr_expect_eq(nb[TRANSPORT_TCP].held_total, 0);
  cr_expect_eq(nb[TRANSPORT_NETEM].held_total, 0);
  cr_expect(t[TRANSPORT_IDEAL] == t[TRANSPORT_TCP] &&
            t[TRANSPORT_NETEM] == t[TRANSPORT_TCP]);
  scenario_free(s);
  s = support_scenario(GEODES_FIXTURES "/newcomer.json");
  t[TRANSPORT_TCP] = run(s, "random", TRANSPORT_TCP, &nb[TRANSPORT_TCP]);
  t[TRANSPORT_IDEAL] = run(s, "random", TRANSPORT_IDEAL, &nb[TRANSPORT_IDEAL]);
  const sim_netbound *h = &nb[TRANSPORT_TCP];
  cr_expect_gt(h->held[SIM_CP_CAUSE_NIC], h->transfers / 4,
               "the shared 1 Gbit/s uplinks hold the most");
  cr_expect_gt(h->held[SIM_CP_CAUSE_WINDOW], 0);
  cr_expect_eq(h->held_total, h->held[SIM_CP_CAUSE_NIC] +
               h->held[SIM_CP_CAUSE_WINDOW] + h->held[SIM_CP_CAUSE_FLOWCAP] +
               h->held[SIM_CP_CAUSE_SHARED]);
  cr_expect_eq(nb[TRANSPORT_IDEAL].held_total, 0, "ideal holds none back");
  cr_expect_gt(t[TRANSPORT_TCP], 10 * t[TRANSPORT_IDEAL]);
  scenario_free(s);
}

Test(netbound, simulate_states_it) {
  support_run r = {0};
  const char *one = "simulate worldwide --method dtfm-identity --stages 1 "
                    "--layers 4 --micro-batches-per-pass 16";
  cr_assert_eq(support_geodes(&r, "%s", one), 0, "%s", r.err);
  cr_expect(strstr(r.out, "held back   no transfer ran below its link's rate "
                   "(no NIC, flow cap, TCP window or\n            shared link "
                   "slowed one): ideal, netem and tcp give this run's times"),
            "%s", r.out);
  cr_assert_eq(support_geodes(&r, "%s --json", one), 0, "%s", r.err);
  json_t *o = json_loads(r.out, 0, NULL), *x = json_object_get(o, "transfers");
  cr_expect(json_is_true(json_object_get(x, "network_models_agree")), "%s",
            r.out);
  json_decref(o);
  cr_assert_eq(support_geodes(&r, "%s --network-model ideal --json", one), 0);
  o = json_loads(r.out, 0, NULL);
  cr_expect(json_is_null(json_object_get(o, "transfers")), "ideal: no word");
  json_decref(o);
  cr_assert_eq(support_geodes(&r, "simulate '%s/newcomer.json' --method random",
                              GEODES_FIXTURES), 0, "%s", r.err);
  cr_expect(strstr(r.out, "held back   ") && strstr(r.out, " nic, "), "%s",
            r.out);
  support_run_clear(&r);
}
