/* test_traffic: the closed-form bytes of one iteration per ordered site
 * pair (models/traffic.h, what a search prices an allocation's egress by)
 * against the engine's own transfers (sim_result.site_bytes), for every
 * data-parallel algorithm, both runtimes, DiLoCo and its streaming form
 * with one and two exchange levels, and compressed widths; and the engine's
 * site bytes against its wan_bytes, pp_bytes and dp_bytes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/bill.h"
#include "models/compress.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "models/traffic.h"
#include "models/transport.h"
#include "sim/sim.h"
#include "tests/support.h"

/* Three sites of 4, 2 and 2 V100s, every pair 10 ms and 1 Gbit/s; the
 * workload's keys beyond these. */
static scenario *three(const char *workload) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"t\", \"sites\": ["
           "{\"name\": \"A\", \"devices\": 4}, {\"name\": \"B\", \"devices\": 2},"
           "{\"name\": \"C\", \"devices\": 2}],"
           "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},"
           "\"workload\": {\"model\": \"gpt3-small\", \"layers\": 4, "
           "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 4, %s}}",
           workload);
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "t.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

/* Replicas across the sites (devices 0-3 at A, 4-5 at B, 6-7 at C):
 * every algorithm's groups and pipelines cross sites. */
static alloc *mixed(void) {
  static const int dev[] = {0, 4, 6, 1, 2, 5, 3, 7};
  alloc *a = alloc_new(4, 2);
  memcpy(a->device, dev, sizeof dev);
  return a;
}

/* The closed form's bytes per ordered site pair equal the engine's. */
static void agree(const char *workload) {
  scenario *s = three(workload);
  alloc *a = mixed();
  spec_workload w;
  err e = {0};
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  sim_options o = sim_options_default();
  sim_result r = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  int n = 0;
  bill_bytes *v = bill_traffic_pairs(s, &w, a, &n);
  cr_expect_eq(n, r.nsite_bytes, "%s: %d site pairs, the engine %d",
               workload, n, r.nsite_bytes);
  double wan = 0, all = 0;
  for (int i = 0; i < r.nsite_bytes; i++) {
    const sim_link_class *c = &r.site_bytes[i];
    double want = 0;
    for (int k = 0; k < n; k++)
      if (v[k].src == c->src_site && v[k].dst == c->dst_site) want = v[k].bytes;
    cr_expect(fabs(want - c->bytes) <= 1e-9 * c->bytes, "%s: %d -> %d: "
              "closed form %.17g, engine %.17g", workload, c->src_site,
              c->dst_site, want, c->bytes);
    all += c->bytes;
    if (c->src_site != c->dst_site) wan += c->bytes;
  }
  cr_expect(fabs(wan - r.wan_bytes) <= 1e-9 * r.wan_bytes, "%s: wan %.17g "
            "vs %.17g", workload, wan, r.wan_bytes);
  cr_expect(fabs(all - r.pp_bytes - r.dp_bytes) <= 1e-9 * all, "%s", workload);
  free(v);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(traffic, central_ps) { agree("\"batch\": 8, \"dp_algo\": \"central-ps\""); }
Test(traffic, ring_1f1b) {
  agree("\"batch\": 8, \"dp_algo\": \"ring\", \"schedule\": \"1f1b\"");
}
Test(traffic, sharded_ps) { agree("\"batch\": 8, \"dp_algo\": \"sharded-ps\""); }
Test(traffic, hier_ring) { agree("\"batch\": 8, \"dp_algo\": \"hier-ring\""); }
Test(traffic, hivemind) { agree("\"batch\": 8, \"dp_algo\": \"hivemind\""); }
Test(traffic, megatron) {
  agree("\"batch\": 8, \"runtime\": \"megatron\", \"schedule\": \"1f1b\"");
}
Test(traffic, compressed) {
  agree("\"batch\": 16, \"dp_algo\": \"ring\", \"grad_bits\": 4, "
        "\"activation_bits\": 8");
}
Test(traffic, diloco) {
  agree("\"batch\": 8, \"dp_algo\": \"diloco\", \"inner_steps\": 4");
}
Test(traffic, streaming_diloco_two_levels) {
  agree("\"batch\": 8, \"dp_algo\": \"streaming-diloco\", \"inner_steps\": 4, "
        "\"fragments\": 2, \"exchange_levels\": 2");
}

/* The pipeline's bytes by hand: gpt3-small's activations of one
 * micro-batch, m x seq x hidden fp16 values, each way per micro-batch. */
Test(traffic, pipeline_by_hand) {
  scenario *s = three("\"batch\": 8, \"dp_algo\": \"ring\"");
  alloc *a = mixed();
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  int n = 0;
  bill_bytes *v = bill_traffic_pairs(s, &w, a, &n);
  double act = 1.0 * 2048 * 768 * 2, per_replica = 8 / 4;
  double ab = 0;
  for (int k = 0; k < n; k++)
    if (v[k].src == 0 && v[k].dst == 1) ab = v[k].bytes;
  /* A -> B: replica 0's activations (0 -> 4) and replica 2's (2 -> 5),
   * plus the ring's share of the gradients of stage 0 (members 0, 6, 2,
   * 3: A -> C, C -> A, A -> A, A -> A; none A -> B) and stage 1 (4, 1,
   * 5, 7: B -> A, A -> B, B -> C, C -> B). */
  transport_ring r = transport_ring_plan(compress_gradient_bytes(&w, 1), 4);
  double ring = (double)(2 * 3 * r.loops * r.slices) * r.piece;
  cr_expect(fabs(ab - (2 * per_replica * act + ring)) <= 1e-9 * ab,
            "A -> B %.17g", ab);
  free(v);
  alloc_free(a);
  scenario_free(s);
}
