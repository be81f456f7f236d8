/* test_predict_gap: what the predictor names as left out (predict.h's
 * PREDICT_GAP_MAP) on small cases built here, each against the engine —
 * where a case has a mechanism the closed form leaves out, its bit is
 * set and the prediction is within the bound it then states; where it
 * has none, nothing is named and the prediction is within
 * PREDICT_TOLERANCE. The cases are the consistency harness's (issue 33)
 * that claimed the tolerance while 9 to 17 % off: a 1F1B pipeline whose
 * stages' 1 Gbit/s NICs carry both boundaries (seed 1270), GPipe's
 * sharded-ps over three sites beside the last backward pass (seed 2909),
 * a synchronisation beside the pass's last transfers on a binding NIC
 * (seed 1951); and hop_nic_bound on closed cases. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/alloc.h"
#include "models/hop.h"
#include "models/predict.h"
#include "models/predict_gap.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/sim.h"
#include "tests/support.h"
#include "traces/scenario.h"

typedef support_world world;

static void load_text(world *x, const char *text) {
  support_world_text(x, text);
}

/* One site of n devices behind NICs of nic Gbit/s, 0.05 ms and 100
 * Gbit/s between them, shaping sh; the workload's JSON fields. */
static void one_site(world *x, int n, double nic, const char *sh,
                     const char *workload) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"gap\", \"sites\": [{\"name\": \"A\", \"devices\": %d,"
           " \"gpu\": \"L4\", \"nic_gbps\": %g}], \"network\": {\"shaping\": "
           "\"%s\", \"latency_ms\": 0.05, \"bandwidth_gbps\": 100},"
           " \"workload\": {%s}}",
           n, nic, sh, workload);
  load_text(x, text);
}

/* The predictor against the engine on x, identity placement, under m:
 * the relative error; *p gets the prediction. */
static double against(world *x, transport_model m, predict_result *p) {
  alloc *a = alloc_identity(x->w.replicas, x->w.stages);
  sim_result sr;
  support_world_pair(x, a, m, p, &sr);
  double err_rel = p->iteration_s / sr.iteration_s - 1;
  sim_result_free(&sr);
  alloc_free(a);
  return err_rel;
}

static bool has(const predict_result *p, predict_gap g) {
  return (p->left_out >> g) & 1u;
}

/* Named where it is, within the bound it states. */
static void named_within(world *x, transport_model m, predict_gap g,
                         const char *what) {
  predict_result p;
  double e = against(x, m, &p);
  cr_log_info("%s: %+.2f %%, bound %.2f", what, 100 * e, p.error_bound);
  cr_assert(has(&p, g), "%s: %s named", what, predict_gap_names[g]);
  cr_assert(fabs(e) <= p.error_bound, "%s: %+.3f beyond %.3f", what, e,
            p.error_bound);
}

/* Seed 1270: one 1F1B pipeline of 4 stages, one micro-batch per stage
 * in flight each way; a middle stage sends its activation and its
 * gradient (and receives both) through its own 1 Gbit/s NIC at once,
 * which the closed form counts as two phases (measured -17 % at 8
 * stages). DT-FM and Megatron alike; on 1000 Gbit/s NICs the links bind. */
Test(predict_gap, one_pipeline_two_directions_on_a_binding_nic) {
  const char *rt[] = {"dtfm", "megatron"};
  for (int k = 0; k < 2; k++) {
    char wl[512];
    snprintf(wl, sizeof wl,
             "\"model\": \"gpt3-xl\", \"layers\": 8, \"batch\": 12,"
             " \"micro_batch\": 2, \"stages\": 4, \"replicas\": 1,"
             " \"micro_batches_per_pass\": 6, \"schedule\": \"1f1b\","
             " \"runtime\": \"%s\"",
             rt[k]);
    world x;
    one_site(&x, 4, 1, "path", wl);
    named_within(&x, TRANSPORT_NETEM, PREDICT_GAP_PASS_SHARING, rt[k]);
    scenario_free(x.s);
    one_site(&x, 4, 1000, "path", wl);
    predict_result p;
    double e = against(&x, TRANSPORT_NETEM, &p);
    cr_assert_eq(p.left_out, 0u, "%s, 1000 Gbit/s: nothing", rt[k]);
    cr_assert(fabs(e) <= PREDICT_TOLERANCE, "%s: %+.4f", rt[k], e);
    scenario_free(x.s);
  }
}

/* Seed 1951 cut to 2 x 2: GPipe, sharded-ps between the replicas of each
 * stage; each pipeline alone and each group alone are exact, together
 * the groups start while the last backward transfers still cross the
 * same 1 Gbit/s NICs (measured -3.1 % here, -10.7 % at 4 x 2). */
Test(predict_gap, sync_beside_the_pass_on_a_binding_nic) {
  const char *wl =
      "\"model\": \"gpt3-xl\", \"layers\": 5, \"batch\": 32,"
      " \"micro_batch\": 2, \"stages\": 2, \"replicas\": 2,"
      " \"micro_batches_per_pass\": 4, \"schedule\": \"gpipe\","
      " \"dp_algo\": \"sharded-ps\", \"runtime\": \"dtfm\"";
  world x;
  one_site(&x, 4, 1, "tc", wl);
  named_within(&x, TRANSPORT_NETEM, PREDICT_GAP_SYNC_BESIDE_PASS, "1 Gbit/s");
  scenario_free(x.s);
  one_site(&x, 4, 1000, "tc", wl);
  predict_result p;
  double e = against(&x, TRANSPORT_NETEM, &p);
  cr_assert_eq(p.left_out, 0u, "1000 Gbit/s: nothing");
  cr_assert(fabs(e) <= PREDICT_TOLERANCE, "%+.4f", e);
  scenario_free(x.s);
}

/* Seed 2909: three sites of one device, GPipe's last backward pass and
 * sharded-ps's pieces to every member in one phase (dp_tail, path
 * shaping): sync-overlap, which dp_tail did not name (-13 % claimed
 * within 2 %). */
Test(predict_gap, sharded_ps_in_the_tail_is_named) {
  const char *text =
      "{\"name\": \"three\", \"sites\": ["
      "{\"name\": \"A\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 1},"
      "{\"name\": \"B\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 1},"
      "{\"name\": \"C\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 1}],"
      "\"network\": {\"shaping\": \"path\", \"latency_ms\": 20,"
      " \"bandwidth_gbps\": 0.8},"
      "\"workload\": {\"model\": \"gpt3-large\", \"layers\": 4, \"batch\": 48,"
      " \"micro_batch\": 2, \"stages\": 1, \"replicas\": 3,"
      " \"micro_batches_per_pass\": 4, \"schedule\": \"gpipe\","
      " \"dp_algo\": \"sharded-ps\", \"runtime\": \"dtfm\"}}";
  world x;
  load_text(&x, text);
  named_within(&x, TRANSPORT_NETEM, PREDICT_GAP_SYNC_OVERLAP, "tail");
  scenario_free(x.s);
}

/* hop_nic_bound: the slower end's NIC where it is below the link and
 * the per-flow cap, none where the link binds or under ideal. */
Test(predict_gap, nic_bound_closed_cases) {
  world x;
  one_site(&x, 2, 1, "tc", "\"model\": \"gpt3-small\", \"stages\": 2,"
                           " \"replicas\": 1, \"batch\": 2, \"micro_batch\": 1");
  hop_net n;
  transport_options o = transport_options_default();
  o.model = TRANSPORT_NETEM;
  hop_net_init(&n, x.s, &o);
  cr_assert_eq(hop_nic_bound(&n, 0, 1, 1e6, TRANSPORT_P2P_CHANNELS), n.nic[0]);
  hop_net_free(&n);
  o.model = TRANSPORT_IDEAL;
  hop_net_init(&n, x.s, &o);
  cr_assert_eq(hop_nic_bound(&n, 0, 1, 1e6, TRANSPORT_P2P_CHANNELS), -1);
  hop_net_free(&n);
  scenario_free(x.s);
  one_site(&x, 2, 1000, "tc", "\"model\": \"gpt3-small\", \"stages\": 2,"
                              " \"replicas\": 1, \"batch\": 2, \"micro_batch\": 1");
  o.model = TRANSPORT_NETEM;
  hop_net_init(&n, x.s, &o);
  cr_assert_eq(hop_nic_bound(&n, 0, 1, 1e6, TRANSPORT_P2P_CHANNELS), -1,
               "the 100 Gbit/s link binds");
  hop_net_free(&n);
  scenario_free(x.s);
}
