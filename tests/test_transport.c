/* Tests for models/transport (NCCL's connections and its ring) and the
 * scenario keys that feed it (a site's nic, the Megatron batch check,
 * --model), against NCCL's rules worked by hand from its sources:
 * src/transport/net_socket.cc (ncclNetSocketGetNsockNthread),
 * src/graph/paths.cc and src/enqueue.cc (p2p channels),
 * src/graph/connect.cc (ring channels), src/device/all_reduce.h (runRing). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/spec.h"
#include "models/transport.h"
#include "tests/support.h"
#include "traces/scenario.h"

/* NCCL's threads x sockets per thread, by vendor: AWS ENA 2 x 8, GCP gVNIC
 * 4 x 1, any other 0 threads (the control socket: 1). */
Test(transport, nic_sockets_follow_net_socket_cc) {
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_GENERIC, 0, 0), 1);
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_AWS_ENA, 0, 0), 16);
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_GCP_GVNIC, 0, 0), 4);
  /* NCCL_SOCKET_NTHREADS above MAX_THREADS (16) is cut to 16 */
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_GENERIC, 20, 1), 16);
  /* 16 threads x 8 > MAX_SOCKETS (64): 64 / 16 = 4 per thread */
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_AWS_ENA, 16, 0), 64);
  /* NCCL_SOCKET_NTHREADS=3 on a generic NIC: 3 x its 1 socket */
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_GENERIC, 3, 0), 3);
  /* NCCL_NSOCKS_PERTHREAD=4 on GCP: 4 threads x 4 */
  cr_assert_eq(scenario_nic_sockets(SCENARIO_NIC_GCP_GVNIC, 0, 4), 16);
}

/* Per operation, for the three NICs: a ring collective has 2 channels
 * (connect.cc doubles the one ring a single-NIC host finds), each a
 * connection of the NIC's sockets; a point-to-point send of 4 MiB in a
 * comm of 8 ranks: NCCL 2.11 (DT-FM's era) 1 channel for a remote peer;
 * current NCCL starts at nChannelsMin = 1 (2 x 8 > p2pnChannels = 2) and
 * doubles to the per-peer 2 since 4 MiB > one 128 KiB chunk; 100 kB fits
 * one chunk: 1; 16 ranks need 2 batches of 8, so the per-peer count
 * halves to 1. */
Test(transport, op_sockets_by_nccl_rule_for_three_nics) {
  const scenario_nic nics[] = {SCENARIO_NIC_GENERIC, SCENARIO_NIC_AWS_ENA,
                               SCENARIO_NIC_GCP_GVNIC};
  const int want_n[] = {1, 16, 4};
  double big = 4.0 * 1048576;
  for (int i = 0; i < 3; i++) {
    int N = scenario_nic_sockets(nics[i], 0, 0);
    cr_assert_eq(N, want_n[i]);
    cr_assert_eq(transport_op_sockets(TRANSPORT_OP_RING, N, 8, big, false), 2 * N);
    cr_assert_eq(transport_op_sockets(TRANSPORT_OP_P2P, N, 8, big, true), N);
    cr_assert_eq(transport_op_sockets(TRANSPORT_OP_P2P, N, 8, big, false), 2 * N);
    cr_assert_eq(transport_op_sockets(TRANSPORT_OP_P2P, N, 8, 100e3, false), N);
    cr_assert_eq(transport_op_sockets(TRANSPORT_OP_P2P, N, 16, big, false), N);
    /* the engine's and the predictor's p2p sends: DT-FM's era's rule */
    cr_assert_eq(transport_op_channels(TRANSPORT_OP_P2P, 8, big, true),
                 TRANSPORT_P2P_CHANNELS);
  }
}

/* A message over C channels of N sockets: each channel deals its half
 * over its own sockets in pieces of at least 64 KiB. */
Test(transport, sockets_dealt_by_channel) {
  cr_assert_eq(transport_sockets_dealt(2, 16, 4.0 * 1048576), 32);
  cr_assert_eq(transport_sockets_dealt(2, 16, 100e3), 2); /* 50 kB each */
  cr_assert_eq(transport_sockets_dealt(1, 16, 100e3), 2); /* 2 pieces */
  cr_assert_eq(transport_sockets_dealt(2, 16, 300e3), 6); /* 3 pieces each */
  cr_assert_eq(transport_sockets_dealt(2, 1, 1e9), 2);
  cr_assert_eq(transport_sockets_dealt(2, 1, 0), 2);
  cr_assert_eq(transport_sockets_dealt(1, 4, 1e9),
               transport_sockets_used(4, 1e9));
}

static scenario *parse(const char *text, err *e) {
  err_clear(e);
  return scenario_parse(text, strlen(text), "nic.json", e);
}

#define SITE_HEAD "{\"name\": \"n\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
#define SITE_TAIL                                                            \
  "}], \"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"          \
  "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 4, "     \
  "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 1}}"

Test(transport, site_nic_key_and_override) {
  err e;
  const char *nic[] = {"", ", \"nic\": \"generic\"", ", \"nic\": \"aws-ena\"",
                       ", \"nic\": \"gcp-gvnic\"",
                       ", \"nic\": \"aws-ena\", \"nccl_sockets\": 3"};
  const int want[] = {1, 1, 16, 4, 3};
  for (int i = 0; i < 5; i++) {
    char text[1024];
    snprintf(text, sizeof text, SITE_HEAD "\"gpu\": \"V100\"%s" SITE_TAIL, nic[i]);
    scenario *s = parse(text, &e);
    cr_assert_not_null(s, "%s", e.msg);
    cr_assert_eq(s->sites[0].nccl_sockets, want[i], "%s", nic[i]);
    scenario_free(s);
  }
  scenario *s = parse(SITE_HEAD "\"gpu\": \"V100\",\n\"nic\": \"mlx5\"" SITE_TAIL, &e);
  cr_assert_null(s);
  cr_assert_str_eq(e.msg, "nic.json:2: sites[0].nic: unknown NIC (generic, "
                          "aws-ena, gcp-gvnic)");
}

/* NCCL's cut of 300 MB over 8 ranks: loops of 2 channels x 8 ranks x 2 MiB
 * (33.5 MB): 9, each chunk in 2 slices; 20 kB: one loop of one slice. */
Test(transport, ring_plan_and_waits_by_hand) {
  transport_ring r = transport_ring_plan(300e6, 8);
  cr_assert_eq(r.loops, 9);
  cr_assert_eq(r.slices, 2);
  cr_assert_float_eq(r.piece, 300e6 / (8 * 9 * 2), 1e-6);
  /* 14 steps x 2 slices per loop: step 0 waits for none, slice 0 of step 1
   * (position 2) for the predecessor's position 0; loop 1's first message
   * (28) for the predecessor's last of loop 0 (27), its second (29) only
   * for its own 28 */
  cr_assert_eq(transport_ring_wait(&r, 8, 0), -1);
  cr_assert_eq(transport_ring_wait(&r, 8, 1), -1);
  cr_assert_eq(transport_ring_wait(&r, 8, 2), 0);
  cr_assert_eq(transport_ring_wait(&r, 8, 3), 1);
  cr_assert_eq(transport_ring_wait(&r, 8, 28), 27);
  cr_assert_eq(transport_ring_wait(&r, 8, 29), -1);
  cr_assert_eq(transport_ring_wait(&r, 8, 30), 28);
  transport_ring t = transport_ring_plan(20e3, 4);
  cr_assert_eq(t.loops, 1);
  cr_assert_eq(t.slices, 1);
  int L, sl;
  double p;
  cr_assert_eq(support_ring_plan(300e6, 8, &L, &sl, &p), 2 * 7 * 9 * 2);
  cr_assert_eq(L, r.loops);
  cr_assert_eq(sl, r.slices);
}

/* The default is the faithful model, and the facts every output prints. */
Test(transport, default_is_tcp_and_described) {
  transport_options o = transport_options_default();
  cr_assert_eq(o.model, TRANSPORT_TCP);
  scenario *s = support_scenario("volunteer-mix");
  transport_facts f = transport_describe(NULL, s);
  cr_assert_eq(f.p2p_sockets_min, 1);
  cr_assert_eq(f.p2p_sockets_max, 16);
  char line[256];
  transport_facts_line(&f, line, sizeof line);
  cr_assert_str_eq(line, "tcp, tc shaping, window 3.15 MB, sockets per "
                         "connection: p2p 1-16 (1 channel), collectives 1-16 "
                         "(2 channels, a connection each), runtime dtfm");
  scenario_free(s);
}

/* Megatron ignores micro_batches_per_pass: its batch need only be a
 * multiple of D_dp x m; DT-FM's passes still need K. */
Test(transport, megatron_batch_check_ignores_k) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.runtime = "megatron", k.micro_batch = 4, k.batch = 1024;
  err e = {0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(w.micro_batches_per_pass, 1024 / 8 / 4);
  scenario_free(s);
  s = support_scenario("worldwide");
  k.runtime = "dtfm";
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_CONFIG);
  scenario_free(s);
}

/* --model: another model, its own depth unless layers are given. */
Test(transport, model_knob_takes_its_depth) {
  scenario *s = support_scenario("worldwide");
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.model = "gpt3-small";
  err e = {0};
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_assert_str_eq(w.model->name, "gpt3-small");
  cr_assert_eq(w.layers, 12);
  scenario_free(s);
  s = support_scenario("worldwide");
  k.layers = 16;
  cr_assert_eq(scenario_apply(s, &k, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(w.layers, 16);
  scenario_free(s);
}
