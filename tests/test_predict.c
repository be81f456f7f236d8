/* test_predict: the closed-form iteration time against closed forms — a
 * pipeline with free communication takes (M + D_pp - 1) slots per pass; a
 * chunked NCCL ring operation (D - 1) (alpha + c / beta) + (C - 1) c / beta;
 * the three DP algorithms on a uniform network; a whole iteration on a
 * uniform network composed by hand (latency-bound boundaries, barriers,
 * staggered DP starts); TCP's window bound and slow start against hand
 * sums and the ns-3 reference points — the end-to-end predictor against
 * the single-pipeline measurements it was fitted to, and against the
 * simulation on fixed placements of two geo-distributed scenarios. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "models/alloc.h"
#include "models/predict.h"
#include "models/spec.h"
#include "sim/sim.h"
#include "tests/support.h"
#include "traces/scenario.h"

typedef struct world {
  scenario *s;
  spec_workload w;
  const spec_gpu *gpu[64];
} world;

static void load(world *x, const char *name) {
  err e;
  err_clear(&e);
  x->s = support_scenario(name);
  cr_assert_eq(spec_workload_resolve(x->s, &x->w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(spec_device_gpus(x->s, x->gpu, &e), ERR_OK, "%s", e.msg);
}

static predict_result run_with(world *x, const alloc *a,
                               const predict_options *o) {
  predict_result r;
  cr_assert_eq(predict_iteration_with(&x->w, x->s, x->gpu, a, o, &r), ERR_OK);
  double sum = r.compute_s + r.bubble_s + r.pp_comm_s + r.dp_sync_s + r.optimizer_s;
  cr_assert_float_eq(r.iteration_s, sum, 1e-9, "the terms add up");
  cr_assert_geq(r.bubble_s, 0);
  cr_assert_geq(r.pp_comm_s, 0);
  cr_assert_geq(r.dp_sync_s, 0);
  return r;
}

static predict_result run(world *x, const alloc *a) { return run_with(x, a, NULL); }

Test(predict, free_communication_is_m_plus_d_minus_1_slots) {
  world x;
  load(&x, GEODES_FIXTURES "/models/single.json");
  alloc *a = alloc_identity(1, 8);
  /* ideal: no NIC (under netem the fixture's 100 Gbit/s NICs carry the
   * 8 MiB activations, as in the engine). */
  predict_options ideal = {TRANSPORT_IDEAL, 0};
  for (int m = 8; m <= 128; m *= 2) {
    x.s->workload.batch = m;
    x.s->workload.micro_batches_per_pass = m;
    cr_assert_eq(spec_workload_resolve(x.s, &x.w, NULL), ERR_OK);
    predict_result r = run_with(&x, a, &ideal);
    double slot = spec_compute_s(x.gpu[0], spec_stage_fwd_flops(&x.w, 0) +
                                               spec_stage_bwd_flops(&x.w, 0));
    cr_assert_float_eq(r.compute_s + r.bubble_s, (m + 8 - 1) * slot, 1e-9);
    cr_assert_lt(r.pp_comm_s, 1e-6);
    cr_assert_eq(r.dp_sync_s, 0, "one replica: nothing to synchronise");
  }
  alloc_free(a);
  scenario_free(x.s);
}

Test(predict, single_pipeline_measurements) {
  /* DESIGN.md section 4: 3.51 / 5.97 / 8.34 / 9.30 s. With the engine's
   * refit efficiency (spec.c) the closed form leaves at most 0.36 s. */
  world x;
  load(&x, GEODES_FIXTURES "/models/single.json");
  alloc *a = alloc_identity(1, 8);
  const int M[] = {32, 64, 96, 108};
  const double T[] = {3.51, 5.97, 8.34, 9.30};
  for (int i = 0; i < 4; i++) {
    x.s->workload.batch = x.s->workload.micro_batches_per_pass = M[i];
    cr_assert_eq(spec_workload_resolve(x.s, &x.w, NULL), ERR_OK);
    predict_result r = run(&x, a);
    cr_assert(fabs(r.iteration_s - T[i]) < 0.36, "M %d: %.3f vs %.2f", M[i],
              r.iteration_s, T[i]);
  }
  alloc_free(a);
  scenario_free(x.s);
}

Test(predict, dp_algorithms_on_a_uniform_network) {
  /* 10 ms, 1 Gbit/s between every pair; NIC 10 Gbit/s never binds. */
  world x;
  load(&x, GEODES_FIXTURES "/models/uniform.json");
  int group[8] = {3, 9, 17, 25, 33, 41, 49, 57};
  double S = 296e6, beta = 1e9 / 8, alpha = 0.010;
  /* 71 chunks of S / 71 (4 MiB at most): each hop adds its latency and one
   * chunk, the other 70 chunks pass at the slowest hop. */
  double c = S / ceil(S / (4.0 * 1024 * 1024));
  cr_assert_eq(ceil(S / (4.0 * 1024 * 1024)), 71);
  for (int n = 2; n <= 8; n++) {
    double op = (n - 1) * (alpha + c / beta) + (S - c) / beta;
    cr_assert_float_eq(predict_ring_op_s(x.s, group, n, S, NULL), op, 1e-9);
    cr_assert_float_eq(predict_dp_sync_s(x.s, SPEC_CENTRAL_PS, group, n, S, NULL),
                       2 * op, 1e-9);
    cr_assert_float_eq(predict_dp_sync_s(x.s, SPEC_RING, group, n, S, NULL),
                       2 * (n - 1) * (alpha + S / n / beta), 1e-9);
    /* All destinations share one netem class: (n - 1) pieces of S/n. */
    cr_assert_float_eq(predict_dp_sync_s(x.s, SPEC_SHARDED_PS, group, n, S, NULL),
                       2 * (alpha + (n - 1) * (S / n) / beta), 1e-9);
  }
  cr_assert_eq(predict_dp_sync_s(x.s, SPEC_RING, group, 1, S, NULL), 0);
  scenario_free(x.s);
}

Test(predict, grows_with_layers_and_latency) {
  world x;
  load(&x, "worldwide");
  alloc *a = alloc_identity(8, 8);
  predict_result base = run(&x, a);
  /* DP sync of stage 0 (no lag) bounds the exposed synchronisation. */
  int group[8];
  for (int r = 0; r < 8; r++) group[r] = alloc_at(a, r, 0);
  double sync0 = predict_dp_sync_s(x.s, SPEC_CENTRAL_PS, group, 8,
                                   spec_stage_gradient_bytes(&x.w, 0), NULL);
  cr_assert_geq(base.dp_sync_s, sync0 - 1e-9);
  x.s->workload.layers = 40;
  cr_assert_eq(spec_workload_resolve(x.s, &x.w, NULL), ERR_OK);
  predict_result deeper = run(&x, a);
  cr_assert_gt(deeper.compute_s, base.compute_s);
  cr_assert_gt(deeper.iteration_s, base.iteration_s);
  trace_scale(x.s->network, 2.0, 0.5);
  predict_result slower = run(&x, a);
  cr_assert_gt(slower.pp_comm_s, deeper.pp_comm_s);
  cr_assert_gt(slower.dp_sync_s, deeper.dp_sync_s);
  alloc_free(a);
  scenario_free(x.s);
}

Test(predict, tcp_flow_closed_forms) {
  double c0 = 10 * 1448.0, W = 4.0 * 1024 * 1024, lat = 0.05, rtt = 0.1;
  predict_options tcp = {TRANSPORT_TCP, W}, netem = {TRANSPORT_NETEM, W};
  /* No tcp: bytes over the rate, whatever the latency. */
  cr_assert_float_eq(predict_flow_s(8e6, lat, 125e6, &netem, NULL), 8e6 / 125e6, 1e-12);
  /* Slow start on a fast link: c0, then 2 c0, then 3.5 c0 of 4 c0. */
  double cwnd = 0, t1 = predict_flow_s(6.5 * c0, lat, 1e12, &tcp, &cwnd);
  cr_assert_float_eq(t1, 2.875 * rtt, 1e-9); /* (the macro reads twice) */
  cr_assert_float_eq(cwnd, 4 * c0, 1e-6, "still in slow start, the window is kept: %g", cwnd);
  /* The next flow goes on from 4 c0: 4 c0, then 6 c0 of 8 c0. */
  double t2 = predict_flow_s(10 * c0, lat, 1e12, &tcp, &cwnd);
  cr_assert_float_eq(t2, 1.75 * rtt, 1e-9);
  cr_assert_float_eq(cwnd, 8 * c0, 1e-6);
  /* A full window: W / RTT per flow when it is below the link's rate... */
  cwnd = W;
  double t3 = predict_flow_s(8 * W, lat, 1e12, &tcp, &cwnd);
  cr_assert_float_eq(t3, 8 * rtt, 1e-9);
  /* ...and the link's rate when that binds. */
  double t4 = predict_flow_s(8 * W, lat, W / rtt / 2, &tcp, &cwnd);
  cr_assert_float_eq(t4, 16 * rtt, 1e-9);
  /* A link that binds ends slow start: the connection keeps W. */
  cwnd = 0;
  predict_flow_s(1e8, lat, 10 * c0 / rtt, &tcp, &cwnd);
  cr_assert_eq(cwnd, W);
  /* The ns-3 reference points (DESIGN.md section 4): 100 MB, 100 ms one-way,
   * 1 Gbit/s, TCP Cubic, plus the handshake's RTT and the last latency. */
  const double win[] = {128 * 1024.0, 4 * 1048576.0, 6 * 1048576.0, 64 * 1048576.0, 4 * 1048576.0};
  const double size[] = {1e8, 1e8, 1e8, 1e8, 5e8};
  const double ns3[] = {153.7, 6.52, 4.95, 3.11, 25.59};
  for (int i = 0; i < 5; i++) {
    predict_options o = {TRANSPORT_TCP, win[i]};
    double t = 0.3 + predict_flow_s(size[i], 0.1, 125e6, &o, NULL);
    cr_assert(fabs(t - ns3[i]) < 0.1 * ns3[i], "window %.0f: %.3f s vs ns-3 %.2f s",
              win[i], t, ns3[i]);
  }
}

/* One NCCL chain operation over n uniform hops, as the predictor chunks it. */
static double chain_op(double S, int n, double alpha, double beta) {
  double C = fmin(128, ceil(S / (4.0 * 1024 * 1024))), c = S / C;
  return (n - 1) * (alpha + c / beta) + (S - c) / beta;
}

Test(predict, uniform_iteration_composed_by_hand) {
  /* 10 ms, 1 Gbit/s everywhere: every boundary (10 ms + 8 MiB / 1 Gbit/s =
   * 77 ms, held until it arrives) is slower than a forward (20 ms) and a
   * backward (61 ms) micro-batch. */
  world x;
  load(&x, GEODES_FIXTURES "/models/uniform.json");
  alloc *a = alloc_identity(8, 8);
  int D = 8, K = x.w.micro_batches_per_pass, P = x.w.passes;
  double alpha = 0.010, beta = 1e9 / 8, t = alpha + spec_activation_bytes(&x.w) / beta;
  double f[8], b[8], sf = 0, sb = 0, mf = 0, mb = 0;
  for (int s = 0; s < D; s++) {
    f[s] = spec_compute_s(x.gpu[0], spec_stage_fwd_flops(&x.w, s));
    b[s] = spec_compute_s(x.gpu[0], spec_stage_bwd_flops(&x.w, s));
    sf += f[s], sb += b[s], mf = fmax(mf, f[s]), mb = fmax(mb, b[s]);
  }
  cr_assert_gt(t, mb, "the case is communication-bound");
  double F = sf + (D - 1) * t + (K - 1) * t, B = sb + (D - 1) * t + (K - 1) * t;
  double last_barrier = F + (P - 1) * (F + B), end = last_barrier + B;
  /* Stage s ends its last backward after the backward tandem from stage
   * D-1 down to s; then reduce and broadcast over 8 replicas, optimizer. */
  double tail = 0, sum_b = 0;
  for (int s = D - 1; s >= 0; s--) {
    sum_b += b[s];
    double E = s == D - 1 ? K * b[s] : sum_b + (D - 1 - s) * t + (K - 1) * t;
    double S = spec_stage_gradient_bytes(&x.w, s);
    double opt = predict_optimizer_s(x.gpu[0], spec_stage_params(&x.w, s));
    tail = fmax(tail, last_barrier + E + 2 * chain_op(S, 8, alpha, beta) + opt);
  }
  end = fmax(end, tail);
  predict_result r = run(&x, a);
  cr_assert_float_eq(r.iteration_s, end, 1e-9 * end, "%.9f vs %.9f", r.iteration_s, end);
  double free_comm = P * (sf + (K - 1) * mf + sb + (K - 1) * mb);
  cr_assert_float_eq(r.pp_comm_s, P * (F + B) - free_comm, 1e-9);
  cr_assert_float_eq(r.compute_s, P * K * (mf + mb), 1e-9);
  /* tcp with a 1 MiB window: RTT 20 ms, W / RTT = 52 MB/s < 125 MB/s. */
  predict_options o = {TRANSPORT_TCP, 1048576.0};
  predict_result slow = run_with(&x, a, &o);
  cr_assert_gt(slow.pp_comm_s, r.pp_comm_s + P * 2 * (K - 1) *
               (spec_activation_bytes(&x.w) * 0.02 / 1048576.0 - t + alpha) * 0.99);
  alloc_free(a);
  scenario_free(x.s);
}

/* Relative error of the predictor against the simulation for placement a. */
static double error_vs_sim(world *x, const alloc *a, transport_model pn,
                           transport_model sn) {
  predict_options po = {pn, 0};
  predict_result pr = run_with(x, a, &po);
  sim_options so = sim_options_default();
  so.network = sn;
  sim_result sr;
  err e;
  err_clear(&e);
  cr_assert_eq(sim_run(x->s, a, &so, &sr, &e), ERR_OK, "%s", e.msg);
  double rel = (pr.iteration_s - sr.iteration_s) / sr.iteration_s;
  sim_result_free(&sr);
  return rel;
}

Test(predict, close_to_the_simulation_on_fixed_placements) {
  /* Measured (validate, 40 samples each): netem MAPE <= 0.3 % on the five
   * paper scenarios, most points exact (pipelines and chains whose flows do
   * not share are max-plus systems the closed form solves); the worst point
   * found is worldwide random seed 3, 3.3 % low (its DP tail). tcp: MAPE
   * <= 1 %, the worst point this same placement, 7.5 % low. */
  const char *scen[] = {"worldwide", "regional"};
  for (int i = 0; i < 2; i++) {
    world x;
    load(&x, scen[i]);
    alloc *al[] = {alloc_identity(8, 8), alloc_megatron(8, 8), alloc_random(8, 8, 3)};
    for (int k = 0; k < 3; k++) {
      double en = error_vs_sim(&x, al[k], TRANSPORT_NETEM, TRANSPORT_NETEM);
      double et = error_vs_sim(&x, al[k], TRANSPORT_TCP, TRANSPORT_TCP);
      cr_assert(fabs(en) < 0.04, "%s placement %d netem: %.2f %%", scen[i], k, 100 * en);
      cr_assert(fabs(et) < 0.10, "%s placement %d tcp: %.2f %%", scen[i], k, 100 * et);
      cr_log_info("%s placement %d: netem %+.2f %%, tcp %+.2f %%", scen[i], k,
                  100 * en, 100 * et);
      alloc_free(al[k]);
    }
    scenario_free(x.s);
  }
}

/* multi-dc, Megatron's placement: every pipeline crosses from Ohio to
 * Virginia once, between stages 3 and 4 (1 ms / 5 Gbit/s inside a site,
 * 11 ms / 1.12 Gbit/s across, 10 Gbit/s NICs that do not bind). The
 * 1F1B period when that boundary is the slow one: the round trip 3 -> 4
 * -> 3 carries 2 micro-batches, so period = (f3 + b3 + f4 + b4 + the
 * boundary both ways) / 2. Two K at the same number of passes differ by
 * P (K2 - K1) periods (fill, drain and the DP tail shift as a whole). */
static double onef1b_k_step(world *x, const alloc *a, const predict_options *o,
                            int k1, int k2) {
  int P = x->w.passes, R = x->w.replicas;
  double it[2];
  for (int i = 0; i < 2; i++) {
    int k = i ? k2 : k1;
    x->s->workload.micro_batches_per_pass = k;
    x->s->workload.batch = P * k * R * x->s->workload.micro_batch;
    cr_assert_eq(spec_workload_resolve(x->s, &x->w, NULL), ERR_OK);
    cr_assert_eq(x->w.passes, P);
    it[i] = run_with(x, a, o).iteration_s;
  }
  return (it[1] - it[0]) / (P * (k2 - k1));
}

Test(predict, onef1b_adjacent_round_trip_sets_the_period) {
  world x;
  load(&x, "multi-dc");
  scenario_knobs kn;
  scenario_knobs_init(&kn);
  kn.schedule = "1f1b";
  cr_assert_eq(scenario_apply(x.s, &kn, NULL), ERR_OK);
  cr_assert_eq(spec_workload_resolve(x.s, &x.w, NULL), ERR_OK);
  alloc *a = alloc_megatron(8, 8);
  cr_assert_eq(x.s->device_site[alloc_at(a, 0, 3)], 0);
  cr_assert_eq(x.s->device_site[alloc_at(a, 0, 4)], 1);
  double A = spec_activation_bytes(&x.w), f[8], b[8];
  for (int s = 0; s < 8; s++) {
    f[s] = spec_compute_s(x.gpu[0], spec_stage_fwd_flops(&x.w, s));
    b[s] = spec_compute_s(x.gpu[0], spec_stage_bwd_flops(&x.w, s));
  }
  double ti = 0.001 + A / (5e9 / 8), tc = 0.011 + A / (1.12e9 / 8);
  double period = (f[3] + b[3] + f[4] + b[4] + 2 * tc) / 2;
  /* what bounded it before: the trip from stage 0 to the last and back
   * over 8 micro-batches, a stage's receive stream */
  double full = 2 * (6 * ti + tc);
  for (int s = 0; s < 8; s++) full += f[s] + b[s];
  cr_assert_gt(period, full / 8 * 1.2);
  cr_assert_gt(period, (tc + ti) * 1.2);
  predict_options netem = {TRANSPORT_NETEM, 0};
  double got = onef1b_k_step(&x, a, &netem, 32, 64);
  cr_assert_float_eq(got, period, 1e-9, "%.9f vs %.9f", got, period);
  /* tcp: the 4 MiB window over 22 ms RTT (190 MB/s) does not bind. The
   * pair 3 <-> 4 sends 2 micro-batches per cycle and then idles past the
   * 0.2 s RTO: one flow per cycle each way restarts from 10 segments, on
   * the trip, so the cycle is the trip with both restarts. */
  predict_options tcp = {TRANSPORT_TCP, 0};
  double fresh = 0.011 + predict_flow_s(A, 0.011, 1.12e9 / 8, &tcp, NULL);
  double cyc = f[3] + b[3] + f[4] + b[4] + 2 * fresh;
  cr_assert_gt(2 * (cyc / 2 - (tc - 0.011)) - (fresh - tc), 0.2 + 0.022,
               "the pair idles past the RTO once per cycle");
  cr_assert_lt(cyc / 2 - (fresh - 0.011), 0.2 + 0.022,
               "but not after every flow");
  got = onef1b_k_step(&x, a, &tcp, 32, 64);
  cr_assert_float_eq(got, cyc / 2, 1e-9, "%.9f vs %.9f", got, cyc / 2);
  alloc_free(a);
  scenario_free(x.s);
}

Test(predict, close_to_the_simulation_for_1f1b_and_sharded_ps) {
  /* The same fixed placements (identity, Megatron, random seed 3) on
   * worldwide, regional and multi-dc, for the 1F1B schedule and for
   * sharded-ps. Measured worst points: 1F1B netem 5.4 % (worldwide
   * Megatron, low), tcp 20.6 % (regional identity, low: its idle
   * restarts are partial, between the states the closed form knows);
   * sharded-ps netem 16.1 % and tcp 14.4 % (multi-dc random, low: a
   * stage's DP flows share its shapers with its last backward transfers,
   * queued behind its compute, and slow the pipeline below it, which the
   * closed form does not model). Most points are within 2 %. */
  const char *scen[] = {"worldwide", "regional", "multi-dc"};
  const char *knob[] = {"1f1b", "sharded-ps"};
  const double tol[2][2] = {{0.07, 0.23}, {0.18, 0.17}}; /* [knob][tcp] */
  for (int i = 0; i < 3; i++)
    for (int v = 0; v < 2; v++) {
      world x;
      load(&x, scen[i]);
      scenario_knobs kn;
      scenario_knobs_init(&kn);
      if (v == 0) kn.schedule = knob[v];
      else kn.dp_algo = knob[v];
      cr_assert_eq(scenario_apply(x.s, &kn, NULL), ERR_OK);
      cr_assert_eq(spec_workload_resolve(x.s, &x.w, NULL), ERR_OK);
      alloc *al[] = {alloc_identity(8, 8), alloc_megatron(8, 8), alloc_random(8, 8, 3)};
      for (int k = 0; k < 3; k++) {
        double en = error_vs_sim(&x, al[k], TRANSPORT_NETEM, TRANSPORT_NETEM);
        double et = error_vs_sim(&x, al[k], TRANSPORT_TCP, TRANSPORT_TCP);
        cr_assert(fabs(en) < tol[v][0], "%s %s placement %d netem: %.2f %%",
                  scen[i], knob[v], k, 100 * en);
        cr_assert(fabs(et) < tol[v][1], "%s %s placement %d tcp: %.2f %%",
                  scen[i], knob[v], k, 100 * et);
        cr_log_info("%s %s placement %d: netem %+.2f %%, tcp %+.2f %%", scen[i],
                    knob[v], k, 100 * en, 100 * et);
        alloc_free(al[k]);
      }
      scenario_free(x.s);
    }
}

Test(predict, sharded_ps_rounds_share_the_sender_shaper) {
  /* multi-dc: member 0 in Ohio, seven in Virginia (1 ms / 5 Gbit/s inside,
   * 11 ms / 1.12 Gbit/s across; 10 Gbit/s NICs do not bind: 7 flows get
   * 178 MB/s each). Member 0 sends its 7 pieces to one class: 20 MB/s each.
   * Its own shard is reduced at t1 = 11 ms + p / 140 MB/s, while its
   * reduce flows have only sent x = t1 20 MB/s: from t1 its return flows
   * share the shaper (10 MB/s each) until the reduce flows are done at a;
   * the Virginia members have their shards at a + 11 ms, member 0's return
   * flows end x / 20 MB/s later. Work conserving: 14 p at 140 MB/s. */
  world x;
  load(&x, "multi-dc");
  int g[8] = {0, 32, 33, 34, 35, 36, 37, 38};
  double p = 37e6, S = 8 * p, rc = 1.12e9 / 8, ri = 5e9 / 8 / 6;
  double t1 = 0.011 + p / rc, xs = t1 * rc / 7;
  double a = t1 + (p - xs) / (rc / 14), have_v = a + 0.011;
  double b = a + xs / (rc / 7);
  double end = fmax(b + 0.011, have_v + 0.011 + p / rc);
  end = fmax(end, have_v + 0.001 + p / ri);
  double got = predict_dp_sync_s(x.s, SPEC_SHARDED_PS, g, 8, S, NULL);
  cr_assert_float_eq(got, end, 1e-9, "%.9f vs %.9f", got, end);
  cr_assert_geq(got, 14 * p / rc, "no faster than the shaper carries it");
  /* Taken apart (the reduce round first), it would be 11 ms + 7 p / rc
   * + 11 ms + p / rc: the shaper would carry 14 p in 8 p's time. */
  cr_assert_gt(got, 0.022 + 8 * p / rc + 1.0);
  scenario_free(x.s);
}
