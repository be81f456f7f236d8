/* test_hivemind: --dp-algo hivemind (models/hivemind.h, sim/train_
 * hivemind.c) against hivemind's own test answers, a naive search of its
 * LP, and hand-built groups of 3 and 4 peers worked by hand: the parts,
 * the bytes each peer sends and receives, the round's time; the host's
 * work, the matchmaking window, delayed averaging and DT-FM's barriers
 * apart by hand; the engine against the predictor; a volunteer-like case
 * against sharded-ps; the knobs' refusals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/hivemind.h"
#include "models/params.h"
#include "models/predict.h"
#include "models/runtime.h"
#include "models/spec_workload.h"
#include "sim/sim.h"
#include "sim/train.h"
#include "tests/support.h"

TestSuite(hivemind, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

/* load_balance_peers' answers in hivemind's tests/test_averaging.py:268-281
 * (at 4bd43b7): exact where the LP's optimum is unique; where the slowest
 * peer alone sets the time (the optimum is a face) hivemind asserts only
 * that its answer costs no more than the reference (check_optimality), and
 * so does this. Two peers and no declared bandwidth: halves, equal parts. */
static long long parts_of(long long size, int n, const double *bw,
                          long long *parts) {
  double frac[8];
  hivemind_partition(n, bw, frac);
  hivemind_parts(size, n, frac, parts);
  long long sum = 0;
  for (int i = 0; i < n; i++) sum += parts[i];
  return sum;
}

/* test_averaging.py's get_cost: max (size - p + (n - 1) p) / max(b, 1e-9). */
static double cost(long long size, int n, const long long *p, const double *b) {
  double c = 0;
  for (int i = 0; i < n; i++)
    c = fmax(c, ((double)size - (double)p[i] + (n - 1.0) * (double)p[i]) /
                    fmax(b[i], 1e-9));
  return c;
}

Test(hivemind, partition_gives_hiveminds_answers) {
  static const struct {
    long long size;
    int n;
    double bw[4];
    long long want[4];
    bool exact;
  } c[] = {{60, 4, {.25, .25, .25, .25}, {15, 15, 15, 15}, true},
           {60, 3, {.55, .44, .40}, {35, 16, 9}, true},
           {1 << 20, 4, {0, .5, 0, .6}, {0, 428963, 0, 619613}, true},
           {1024, 3, {.3, .5, .9}, {0, 255, 769}, false},
           {60, 3, {.44, .33, .22}, {42, 18, 0}, false},
           {1 << 20, 4, {.3, .5, .9, .6}, {0, 169327, 602629, 276620}, false},
           {100, 2, {.7, .2}, {50, 50}, false},
           {100, 2, {0, 0}, {50, 50}, true}}; /* hivemind's (None, None) */
  for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
    long long p[4];
    cr_assert_eq(parts_of(c[k].size, c[k].n, c[k].bw, p), c[k].size);
    for (int i = 0; i < c[k].n && c[k].exact; i++)
      cr_expect_eq(p[i], c[k].want[i], "case %zu peer %d: %lld", k, i, p[i]);
    cr_expect_leq(cost(c[k].size, c[k].n, p, c[k].bw),
                  cost(c[k].size, c[k].n, c[k].want, c[k].bw) * (1 + 1e-12),
                  "case %zu", k);
  }
}

/* The LP's objective at the partition is the least on a grid over the
 * simplex (a naive search), for random bandwidths of 3 and 4 peers. */
Test(hivemind, partition_is_the_lps_optimum) {
  unsigned long long x = 12345;
  for (int trial = 0; trial < 40; trial++) {
    int n = 3 + trial % 2, steps = n == 3 ? 300 : 60;
    double bw[4], f[4], best = INFINITY;
    for (int i = 0; i < n; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      bw[i] = 0.05 + (double)(x >> 11) / 9007199254740992.0;
    }
    hivemind_partition(n, bw, f);
    double sum = 0;
    for (int i = 0; i < n; i++) {
      cr_assert(f[i] >= 0 && f[i] <= 1);
      sum += f[i];
    }
    cr_assert_float_eq(sum, 1, 1e-8);
    for (int a = 0; a <= steps; a++)
      for (int b = 0; a + b <= steps; b++)
        for (int c = n == 3 ? steps - a - b : 0; a + b + c <= steps; c++) {
          double g[4] = {(double)a / steps, (double)b / steps,
                         (double)c / steps, (double)(steps - a - b - c) / steps};
          best = fmin(best, hivemind_lp_time(n, bw, g));
        }
    cr_assert_leq(hivemind_lp_time(n, bw, f), best * (1 + 1e-9),
                  "trial %d: %g vs the grid's %g", trial,
                  hivemind_lp_time(n, bw, f), best);
  }
}

/* n peers, one site each with `stages` devices (a replica's pipeline)
 * and NICs of gbps[i] Gbit/s, links of lat ms and link Gbit/s (tc
 * shaping), GPT-3 Small in stages x n (batch n: one micro-batch a
 * replica), hivemind with matchmaking M s; extra: more of the workload's
 * JSON ("" for none). */
static scenario *group(int n, int stages, const double *gbps, const char *gpu,
                       double lat, double link, double M, const char *extra) {
  support_site site[8];
  cr_assert_leq(n, 8);
  for (int i = 0; i < n; i++)
    site[i] = (support_site){.devices = stages, .gpu = gpu,
                             .nic_gbps = gbps[i]};
  char net[128], w[1024];
  snprintf(net, sizeof net, "\"shaping\": \"tc\", \"latency_ms\": %g, "
           "\"bandwidth_gbps\": %g", lat, link);
  snprintf(w, sizeof w, "\"model\": \"gpt3-small\", \"batch\": %d, "
           "\"micro_batch\": 1, \"stages\": %d, \"replicas\": %d, "
           "\"dp_algo\": \"hivemind\", \"matchmaking_s\": %g%s", n, stages, n,
           M, extra);
  return support_build(&(support_spec){.name = "p", .nsites = n,
                                       .sites = site, .network = net,
                                       .workload = w});
}

/* One stage: n peers of one device each. */
static scenario *peers(int n, const double *gbps, const char *gpu, double lat,
                       double link, double M, const char *extra) {
  return group(n, 1, gbps, gpu, lat, link, M, extra);
}

/* One engine run: its result and a copy of its task records. */
typedef struct ran {
  sim_result r;
  sim_task *t;
  uint32_t n;
} ran;

static ran engine(const scenario *s, transport_model m) {
  alloc *a = alloc_identity(s->workload.replicas, s->workload.stages);
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_engine *x;
  err e = {0};
  bool stopped;
  ran out;
  cr_assert_eq(sim_engine_new(s, a, &o, NULL, NULL, SIM_NET_WARM, &x, &e),
               ERR_OK, "%s", e.msg);
  cr_assert_eq(sim_engine_run(x, 0, INT64_MAX, &out.r, &stopped, &e), ERR_OK,
               "%s", e.msg);
  const sim_task *t = sim_engine_tasks(x, &out.n);
  out.t = mem_alloc((size_t)out.n * sizeof *out.t);
  memcpy(out.t, t, (size_t)out.n * sizeof *t);
  sim_engine_free(x);
  alloc_free(a);
  return out;
}

static void ran_free(ran *r) {
  sim_result_free(&r->r);
  free(r->t);
}

/* The round's span: from its start (the group's join, role matchmaking)
 * to the last member's averages (its sync joins). */
static double round_s(const ran *r) {
  int64_t t0 = INT64_MAX, t1 = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    const sim_task *k = &r->t[i];
    if (k->kind == SIM_TASK_JOIN && k->role == SIM_ROLE_MATCH && k->t_done < t0)
      t0 = k->t_done;
    if (k->role == SIM_ROLE_SYNC && k->t_done > t1) t1 = k->t_done;
  }
  return (double)(t1 - t0) * 1e-9;
}

/* The predictor's iteration of s under m. */
static double predicted(const scenario *s, transport_model m) {
  spec_workload w;
  const spec_gpu **gpu = mem_alloc((size_t)s->ndevices * sizeof *gpu);
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert_eq(spec_device_gpus(s, gpu, NULL), ERR_OK);
  alloc *a = alloc_identity(w.replicas, w.stages);
  transport_options o = transport_options_default();
  o.model = m;
  predict_result p;
  cr_assert_eq(predict_iteration_with(&w, s, gpu, a, &o, &p), ERR_OK);
  /* a round of two or more peers is named among what it leaves out */
  cr_expect_eq((p.left_out >> PREDICT_GAP_HIVEMIND_ROUND) & 1u, w.replicas > 1,
               "hivemind-round named for %d replicas", w.replicas);
  cr_expect_eq(p.error_bound,
               w.replicas > 1 ? predict_gap_bound(PREDICT_GAP_HIVEMIND_ROUND)
                              : PREDICT_TOLERANCE);
  alloc_free(a);
  free(gpu);
  return p.iteration_s;
}

/* Bytes each device sends (dir 0) or receives (dir 1) in the round. */
static double dp_bytes(const ran *r, int dev, int dir) {
  double b = 0;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->t[i].kind == SIM_TASK_XFER && r->t[i].role == SIM_ROLE_DP &&
        (dir ? r->t[i].dst : r->t[i].dev) == dev)
      b += r->t[i].bytes;
  return b;
}

/* Three peers of 4, 3, 3 Gbit/s and four of 5, 4, 4, 3 (the links 100
 * Gbit/s, no latency, the host's work negligible, no window): every peer
 * averages, at the water level T = (2 n - 2) / sum b, a part w_i = (T b_i
 * - 1) / (n - 2): 0.6, 0.2, 0.2 (T = 0.4) and 7/16, 1/4, 1/4, 1/16 (T =
 * 0.375), and each moves V (1 + (n - 2) w_i) bytes each way, its NIC busy
 * T V / b_i ... all for the same T V: no schedule ends sooner. The engine's
 * max-min shares do not reach the LP's balanced rates (a NIC shared by a
 * peer's few connections idles while another's binds): measured 23 % and
 * 18 % above it, so the bound checked above is 30 %. The predictor's fluid
 * flows follow the engine within 2 %. */
Test(hivemind, three_and_four_peers_by_hand) {
  static const struct {
    int n;
    double gbps[4], w[4], T;
  } c[] = {{3, {4, 3, 3}, {0.6, 0.2, 0.2}, 0.4},
           {4, {5, 4, 4, 3}, {7.0 / 16, 0.25, 0.25, 1.0 / 16}, 0.375}};
  params_set(PARAMS_HIVEMIND_HOST_S_PER_BYTE, 1e-13);
  for (int k = 0; k < 2; k++) {
    int n = c[k].n, grp[4] = {0, 1, 2, 3};
    scenario *s = peers(n, c[k].gbps, "A100", 0, 100, 0, "");
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    double V = compress_gradient_bytes(&w, 0), f[4];
    hivemind_fractions(s, grp, n, f);
    ran r = engine(s, TRANSPORT_NETEM);
    for (int i = 0; i < n; i++) {
      cr_expect_float_eq(f[i], c[k].w[i], 1e-9, "%d peers: w%d %g", n, i, f[i]);
      double moved = V * (1 + (n - 2) * c[k].w[i]);
      cr_expect_float_eq(dp_bytes(&r, i, 0), moved, 1e-6 * moved);
      cr_expect_float_eq(dp_bytes(&r, i, 1), moved, 1e-6 * moved);
    }
    double lp = c[k].T * V * 8 / 1e9, t = round_s(&r);
    cr_expect(t >= lp && t <= 1.3 * lp, "%d peers: %.4f s, LP %.4f s", n, t, lp);
    double p = predicted(s, TRANSPORT_NETEM);
    cr_expect(fabs(p / r.r.iteration_s - 1) < 0.02, "%d peers: predicted %.4f"
              " s, simulated %.4f s", n, p, r.r.iteration_s);
    ran_free(&r);
    scenario_free(s);
  }
  params_reset();
}

/* The host's work alone (links free, ideal): equal parts (no bandwidth
 * binds), each of C = 8 chunks reduced in red = v / (n C) x ((n - 1)(32 +
 * 2 w) + 36) x s and applied in app = v / (n C) x (24 + w) x s (w = 2
 * bytes a value, s the host's seconds per byte). Reducer j's chunks are
 * done at red, 2 red, ..., C red; a member applies peer 0's as they come
 * (app < red), the other peers' then one after the other: the round is
 * C red + app (1 + (n - 1) C). */
Test(hivemind, host_work_by_hand) {
  const double gbps[4] = {1e6, 1e6, 1e6, 1e6}, hs = 1e-9;
  params_set(PARAMS_HIVEMIND_HOST_S_PER_BYTE, hs);
  for (int n = 3; n <= 4; n++) {
    scenario *s = peers(n, gbps, "A100", 0, 1e6, 0, "");
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    double v = spec_stage_params(&w, 0), V = compress_gradient_bytes(&w, 0);
    cr_assert_eq(hivemind_chunks(V / n), 8); /* 327 MB / n: 8 of 512 KiB up */
    double per = v / n / 8;
    double red = per * ((n - 1) * (32 + 2 * 2) + 36) * hs;
    double app = per * (24 + 2) * hs;
    double want = 8 * red + app * (1 + (n - 1) * 8);
    ran r = engine(s, TRANSPORT_IDEAL);
    cr_expect(fabs(round_s(&r) - want) < 1e-4, "%d peers: %.6f vs %.6f", n,
              round_s(&r), want);
    double p = predicted(s, TRANSPORT_IDEAL);
    cr_expect(fabs(p - r.r.iteration_s) < 1e-4, "%.6f vs %.6f", p,
              r.r.iteration_s);
    ran_free(&r);
    scenario_free(s);
  }
  params_reset();
}

/* The window: max(matchmaking_s, (2 h + 1) RTT), h the DHT's round trips
 * (1 up to 20 peers, one more per doubling); the group begins when it has
 * passed and every gradient is in, each follower one leader's latency
 * later; a step shorter than the window takes the window. */
Test(hivemind, matchmaking_by_hand) {
  cr_expect_eq(hivemind_dht_hops(2), 1);
  cr_expect_eq(hivemind_dht_hops(20), 1);
  cr_expect_eq(hivemind_dht_hops(21), 2);
  cr_expect_eq(hivemind_dht_hops(40), 2);
  cr_expect_eq(hivemind_dht_hops(41), 3);
  const double gbps[3] = {10, 10, 10};
  int grp[3] = {0, 1, 2};
  scenario *s = peers(3, gbps, "A100", 100, 10, 20, "");
  cr_expect_float_eq(hivemind_matchmaking_s(s, grp, 3, 0.1), 0.6, 1e-12);
  cr_expect_float_eq(hivemind_matchmaking_s(s, grp, 3, 5), 5, 1e-12);
  ran r20 = engine(s, TRANSPORT_NETEM);
  int latencies = 0;
  for (uint32_t i = 0; i < r20.n; i++)
    if (r20.t[i].kind == SIM_TASK_COMPUTE && r20.t[i].role == SIM_ROLE_MATCH &&
        r20.t[i].dur_ns != 20000000000LL) {
      cr_expect_eq(r20.t[i].dur_ns, 100000000LL); /* 100 ms from the leader */
      latencies++;
    }
  cr_expect_eq(latencies, 2);
  scenario_free(s);
  s = peers(3, gbps, "A100", 100, 10, 30, "");
  ran r30 = engine(s, TRANSPORT_NETEM);
  cr_expect(fabs(r30.r.iteration_s - r20.r.iteration_s - 10) < 1e-8,
            "%.9f vs %.9f", r30.r.iteration_s, r20.r.iteration_s);
  ran_free(&r20);
  ran_free(&r30);
  scenario_free(s);
}

/* Delayed averaging: the previous step's round and optimizer step run
 * beside this step's passes, so a step ends at max(its passes, the round +
 * the optimizer step, the next round's window): with a 20 s window, 20 s;
 * with none, max(C, T - C) where C is the passes' end and T the step
 * without delay (C + the round + the optimizer step). */
Test(hivemind, delayed_averaging_by_hand) {
  const double gbps[3] = {4, 3, 3};
  const char *delay = ", \"delay_averaging\": true";
  scenario *s = peers(3, gbps, "A100", 0, 10, 20, delay);
  ran r = engine(s, TRANSPORT_NETEM);
  cr_expect(fabs(r.r.iteration_s - 20) < 1e-9, "%.9f", r.r.iteration_s);
  ran_free(&r);
  scenario_free(s);
  s = peers(3, gbps, "A100", 0, 10, 0, ""); /* no latency: no window */
  r = engine(s, TRANSPORT_NETEM);
  int64_t C = 0;
  for (uint32_t i = 0; i < r.n; i++)
    if (r.t[i].role == SIM_ROLE_BWD && r.t[i].t_done > C) C = r.t[i].t_done;
  double T = r.r.iteration_s, c = (double)C * 1e-9;
  ran_free(&r);
  scenario_free(s);
  s = peers(3, gbps, "A100", 0, 10, 0, delay);
  r = engine(s, TRANSPORT_NETEM);
  cr_expect(fabs(r.r.iteration_s - fmax(c, T - c)) < 1e-8, "%.9f vs max(%.9f, "
            "%.9f)", r.r.iteration_s, c, T - c);
  cr_expect(fabs(predicted(s, TRANSPORT_NETEM) / r.r.iteration_s - 1) < 0.01);
  ran_free(&r);
  scenario_free(s);
}

/* DT-FM's barriers under hivemind are each replica's own (spec_dp_algo_
 * apart): two replicas of one stage, a V100 and an H100, P = 4 passes of
 * one micro-batch. Under sharded-ps every pass's barrier waits for the
 * V100's forward, g later (the barrier's latency over the two), so the
 * H100's last backward ends at P (F_s + g) + (P - 1) B_s + B_f; under
 * hivemind it ends at P (F_f + B_f), its own passes back to back. */
Test(hivemind, replicas_barrier_apart_by_hand) {
  const char *algo[2] = {"sharded-ps", "hivemind"};
  for (int k = 0; k < 2; k++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"b\", \"sites\": [{\"name\": \"slow\", \"devices\":"
             " 1, \"gpu\": \"V100\"}, {\"name\": \"fast\", \"devices\": 1, "
             "\"gpu\": \"H100\"}], \"network\": {\"latency_ms\": 10, "
             "\"bandwidth_gbps\": 10}, \"workload\": {\"model\": "
             "\"gpt3-small\", \"batch\": 8, \"micro_batch\": 1, \"stages\": 1,"
             " \"replicas\": 2, \"micro_batches_per_pass\": 1, \"dp_algo\": "
             "\"%s\", \"runtime\": \"dtfm\"}}", algo[k]);
    err e = {0};
    scenario *s = scenario_parse(text, strlen(text), "b.json", &e);
    cr_assert_not_null(s, "%s", e.msg);
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    cr_assert_eq(w.passes, 4);
    sim_compute sl = sim_train_compute(&w, 0, spec_gpu_find("V100"), 1, 1);
    sim_compute fa = sim_train_compute(&w, 0, spec_gpu_find("H100"), 1, 1);
    alloc *a = alloc_identity(2, 1);
    int64_t g = runtime_barrier_ns(s, a), P = 4;
    int64_t want = k ? P * (fa.fwd_ns + fa.bwd_ns)
                     : P * (sl.fwd_ns + g) + (P - 1) * sl.bwd_ns + fa.bwd_ns;
    ran r = engine(s, TRANSPORT_NETEM);
    int64_t last = 0;
    for (uint32_t i = 0; i < r.n; i++)
      if (r.t[i].role == SIM_ROLE_BWD && r.t[i].dev == 1 && r.t[i].t_done > last)
        last = r.t[i].t_done;
    cr_expect_eq(last, want, "%s: %lld vs %lld ns", algo[k], (long long)last,
                 (long long)want);
    ran_free(&r);
    alloc_free(a);
    scenario_free(s);
  }
}

/* The graph stays within its bound, delayed or not, one stage or two. */
Test(hivemind, task_bound_holds) {
  const double gbps[4] = {5, 4, 4, 3};
  for (int k = 0; k < 4; k++) {
    scenario *s = group(4, 1 + k / 2, gbps, "A100", 5, 10, 1,
                        k % 2 ? ", \"delay_averaging\": true" : "");
    ran r = engine(s, TRANSPORT_NETEM);
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    cr_expect_leq(r.n, sim_train_task_bound(&w, 4), "case %d: %u", k, r.n);
    ran_free(&r);
    scenario_free(s);
  }
}

/* The engine against the predictor on two-stage groups over tc shapers
 * with latency, netem and tcp, the window binding or not: within 2 %
 * under netem, 4 % under tcp (measured: -0.9 %, +3.3 %, -0.1 %, +0.6 %;
 * the closed form does not follow the engine's interleaving of slices
 * and averages on a window-bound connection). */
Test(hivemind, engine_and_predictor_agree) {
  const double gbps[3] = {10, 4, 1};
  const double M[2] = {0, 20};
  const transport_model m[2] = {TRANSPORT_NETEM, TRANSPORT_TCP};
  for (int k = 0; k < 4; k++) {
    scenario *s = group(3, 2, gbps, "A100", 30, 5, M[k / 2], "");
    ran r = engine(s, m[k % 2]);
    double p = predicted(s, m[k % 2]);
    cr_expect(fabs(p / r.r.iteration_s - 1) < (k % 2 ? 0.04 : 0.02),
              "case %d: predicted %.4f"
              " s, simulated %.4f s", k, p, r.r.iteration_s);
    ran_free(&r);
    scenario_free(s);
  }
}

/* Bad input: hivemind's knobs without hivemind, and hivemind on Megatron's
 * runtime, refused at the file's line (exit 1) or naming the option (a
 * usage error, exit 2); a window past an hour, at the range. */
Test(hivemind, knobs_refused_where_they_came_from) {
  const char *ring = support_write_file(
      support_path("ring.json"),
      "{\"name\": \"r\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
      "\"gpu\": \"A100\"}],\n\"network\": {\"latency_ms\": 1, "
      "\"bandwidth_gbps\": 10},\n\"workload\": {\"model\": \"gpt3-small\", "
      "\"batch\": 2, \"micro_batch\": 1, \"stages\": 1, \"replicas\": 2,\n"
      "  \"dp_algo\": \"ring\",\n  \"delay_averaging\": true}}\n");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity",
                              ring), 1);
  cr_expect(strstr(r.err, "ring.json:5: workload.delay_averaging: needs "
                   "hivemind as the data-parallel algorithm, not ring") != NULL,
            "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                              "--matchmaking-s 5"), 2);
  cr_expect(strstr(r.err, "worldwide: --matchmaking-s needs hivemind") != NULL,
            "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                              "--dp-algo hivemind --runtime megatron"), 2);
  cr_expect(strstr(r.err, "--dp-algo hivemind on --runtime megatron") != NULL,
            "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                              "--dp-algo hivemind --matchmaking-s 3601"), 2);
  cr_expect(strstr(r.err, "--matchmaking-s") != NULL, "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--dp-algo hivemind", ring), 0, "%s", r.err);
  cr_expect(strstr(r.out, "hivemind (matchmaking 15 s, averaging delayed a "
                   "step)") != NULL, "%s", r.out);
  support_run_clear(&r);
}

/* The volunteer-like case (volunteer-mix's eight cities, GPT-3 XL in 4
 * stages x 8 replicas of mixed GPUs): sharded-ps under DT-FM's runtime
 * waits at a barrier across all 32 devices in every pass; hivemind's
 * peers barrier apart, so their passes idle less (measured: 7.6 s of
 * bubble a device against 3.1 s) and end sooner; the predictor follows
 * hivemind's step within 5 %. */
Test(hivemind, volunteer_like_barriers_against_sharded_ps) {
  const char *algo[2] = {"sharded-ps", "hivemind"};
  double bubble[2], pipe[2];
  for (int k = 0; k < 2; k++) {
    scenario *s = support_scenario("volunteer-mix");
    scenario_knobs kn;
    scenario_knobs_init(&kn);
    kn.model = "gpt3-xl", kn.stages = 4, kn.replicas = 8;
    kn.dp_algo = (char *)algo[k];
    err e = {0};
    cr_assert_eq(scenario_apply(s, &kn, &e), ERR_OK, "%s", e.msg);
    ran r = engine(s, TRANSPORT_TCP);
    int64_t last = 0;
    for (uint32_t i = 0; i < r.n; i++)
      if (r.t[i].role == SIM_ROLE_BWD && r.t[i].t_done > last)
        last = r.t[i].t_done;
    bubble[k] = r.r.mean.bubble_s, pipe[k] = (double)last * 1e-9;
    if (k) /* the predictor's fluid, weighted as tcp weighs: 43.4 s, 42.6 */
      cr_expect(fabs(predicted(s, TRANSPORT_TCP) / r.r.iteration_s - 1) < 0.05,
                "predicted %.3f s, simulated %.3f s",
                predicted(s, TRANSPORT_TCP), r.r.iteration_s);
    ran_free(&r);
    scenario_free(s);
  }
  cr_expect_lt(bubble[1], bubble[0] / 2, "%.3f vs %.3f", bubble[1], bubble[0]);
  cr_expect_lt(pipe[1], pipe[0], "%.3f vs %.3f", pipe[1], pipe[0]);
}
