/* test_net: the flow-level network against closed forms (one transfer =
 * alpha + S/beta), hand-solved max-min shares, a naive global water-filling
 * reference on random flow sets (also as flows start and end), trace changes
 * mid-transfer (also during the first latency, and after the last change),
 * the TCP model against the ns-3 reference points, and the two shapings
 * (tc's shaper per sender, path's capacity per site pair) with the path
 * keys (a link's flow_gbps and loss, the hosts' windows) by hand. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/net.h"
#include "sim/net_parts.h"

#define MAXD 16
#define MAXF 256

/* A test network: uniform values, a per-pair override table, optionally a
 * step change of every link at t_change. */
typedef struct tnet {
  trace_value v[MAXD][MAXD];
  trace_value after; /* value of every pair from t_change on (if set) */
  int64_t t_change;  /* TRACE_NEVER: static */
  int nic[MAXD];
  double nic_gbps[MAXD];
  int sockets[MAXD];
  int site[MAXD];          /* path shaping: device -> site */
  int nsites;
  bool priv[MAXD][MAXD];   /* path shaping: an overridden pair */
  sim_net_topo topo;
  sim_queue *q;
  sim_net *net;
  int64_t left[MAXF], arrived[MAXF];
  int chain; /* flows to start from the left hook, back to back */
  double chain_bytes;
} tnet;

static trace_value tlink(const void *ctx, int a, int b, int64_t t) {
  const tnet *T = ctx;
  return t >= T->t_change ? T->after : T->v[a][b];
}

static int tpath(const void *ctx, int a, int b) {
  const tnet *T = ctx;
  if (T->site[a] == T->site[b] || T->priv[a][b]) return -1;
  return T->site[a] * T->nsites + T->site[b];
}

static int64_t tnext(const void *ctx, int64_t t) {
  const tnet *T = ctx;
  return t < T->t_change ? T->t_change : TRACE_NEVER;
}

static void hook_left(void *ctx, uint32_t tag, int64_t t) {
  tnet *T = ctx;
  T->left[tag] = t;
  if (T->chain > 0) {
    T->chain--;
    sim_net_start(T->net, t, 0, (int)tag + 2, T->chain_bytes, tag + 1);
  }
}

static void hook_arrived(void *ctx, uint32_t tag, int64_t t) {
  tnet *T = ctx;
  T->arrived[tag] = t;
}

/* (Re)creates T's net under model m with window (<= 0: each connection's
 * own: the hosts' default without topo.window). */
static void tnet_net(tnet *T, transport_model m, double window) {
  transport_options o = transport_options_default();
  o.model = m;
  o.window_bytes = window;
  sim_net_free(T->net);
  T->net = sim_net_new(&T->topo, &o, T->q, 10,
                       (sim_net_hooks){T, hook_left, hook_arrived});
}

static void tnet_init(tnet *T, int nd, double lat_ms, double gbps,
                      double nic_gbps, transport_model m, double window) {
  memset(T, 0, sizeof *T);
  for (int a = 0; a < nd; a++) {
    for (int b = 0; b < nd; b++) T->v[a][b] = (trace_value){.latency_ms = lat_ms, .bandwidth_gbps = gbps};
    T->nic[a] = a;
    T->nic_gbps[a] = nic_gbps;
  }
  T->t_change = TRACE_NEVER;
  for (int a = 0; a < nd; a++) T->sockets[a] = 1;
  T->topo = (sim_net_topo){.ndevices = nd, .ctx = T, .link = tlink,
                           .next_change = tnext, .nic = T->nic,
                           .nic_gbps = T->nic_gbps, .nnics = nd,
                           .sockets = T->sockets};
  T->q = sim_queue_new();
  tnet_net(T, m, window);
  for (int i = 0; i < MAXF; i++) T->left[i] = T->arrived[i] = -1;
}

/* Path shaping over nsites sites of nd / nsites devices each (devices in
 * site order), the net (re)made under m and window. */
static void tnet_path(tnet *T, int nd, int nsites, transport_model m,
                      double window) {
  T->nsites = nsites;
  for (int d = 0; d < nd; d++) T->site[d] = d / (nd / nsites);
  T->topo.shaping = SCENARIO_SHAPING_PATH;
  T->topo.npaths = nsites * nsites;
  T->topo.path = tpath;
  tnet_net(T, m, window);
}

static int64_t tnet_run(tnet *T) {
  sim_queue_item it;
  int64_t last = 0;
  while (sim_queue_pop(T->q, &it)) {
    cr_assert(sim_net_owns(T->net, it.kind));
    sim_net_handle(T->net, &it);
    last = it.t_ns;
  }
  return last;
}

static void tnet_done(tnet *T) {
  sim_net_free(T->net);
  sim_queue_free(T->q);
}

Test(net, one_transfer_ideal_is_alpha_plus_s_over_beta) {
  double lats[] = {0, 10, 100}, bws[] = {1, 3.125, 10}, sizes[] = {1, 8388608, 1e8};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) {
        tnet T;
        tnet_init(&T, 2, lats[i], bws[j], 0, TRANSPORT_IDEAL, 0);
        sim_net_start(T.net, 1000, 0, 1, sizes[k], 0);
        tnet_run(&T);
        double want = 1000 + lats[i] * 1e6 + sizes[k] * 8 / bws[j];
        cr_assert(fabs((double)T.arrived[0] - want) <= 1.0,
                  "lat %g bw %g size %g: %lld vs %.1f", lats[i], bws[j],
                  sizes[k], (long long)T.arrived[0], want);
        tnet_done(&T);
      }
}

Test(net, two_flows_on_one_shaper_get_half_each) {
  tnet T;
  tnet_init(&T, 3, 10, 1, 10, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1e8, 0);
  sim_net_start(T.net, 0, 0, 2, 5e7, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 0.0625e9, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 1), 0.0625e9, 1);
  tnet_run(&T);
  /* flow 1: 5e7 B at 1/2 Gbit/s = 0.8 s; then flow 0 alone: 5e7 B more at
   * 1 Gbit/s = 0.4 s: leaves at 1.2 s. */
  cr_assert(llabs(T.arrived[1] - 810000000) <= 1);
  cr_assert(llabs(T.arrived[0] - 1210000000) <= 2);
  tnet_done(&T);
}

Test(net, three_flows_hand_solved_shares) {
  /* Sender 0 has two destination classes (to 1 and 2: 10 ms, 1 Gbit/s; to 3:
   * 50 ms, 1 Gbit/s) and a 1.6 Gbit/s NIC. Progressive filling: shaper A
   * saturates at 0.5 each, the NIC leaves 0.6 for the flow to 3. */
  tnet T;
  tnet_init(&T, 4, 10, 1, 1.6, TRANSPORT_NETEM, 0);
  T.v[0][3] = (trace_value){.latency_ms = 50, .bandwidth_gbps = 1};
  sim_net_start(T.net, 0, 0, 1, 1e9, 0);
  sim_net_start(T.net, 0, 0, 2, 1e9, 1);
  sim_net_start(T.net, 0, 0, 3, 1e9, 2);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 0.5e9 / 8, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 1), 0.5e9 / 8, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 2), 0.6e9 / 8, 1);
  tnet_done(&T);
  /* Receiver NIC of 1 Gbit/s shared by 0->1 and 2->1; 2's shaper (1.5) also
   * carries 2->3: shares 0.5, 0.5, 1.0. */
  tnet_init(&T, 4, 10, 1.5, 1e9, TRANSPORT_NETEM, 0);
  T.nic_gbps[1] = 1;
  tnet_net(&T, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1e9, 0);
  sim_net_start(T.net, 0, 2, 1, 1e9, 1);
  sim_net_start(T.net, 0, 2, 3, 1e9, 2);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 0.5e9 / 8, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 1), 0.5e9 / 8, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 2), 1.0e9 / 8, 1);
  tnet_done(&T);
}

/* Naive reference: global water-filling, raising all unfrozen flows together
 * in small exact steps (each step: the tightest resource). */
static void naive_maxmin(int nf, int fres[][3], int nres, const double *cap,
                         double *rate) {
  bool frozen[MAXF] = {0};
  double rem[64];
  for (int r = 0; r < nres; r++) rem[r] = cap[r];
  for (int f = 0; f < nf; f++) rate[f] = 0;
  for (;;) {
    double best = INFINITY;
    int br = -1;
    for (int r = 0; r < nres; r++) {
      int cnt = 0;
      for (int f = 0; f < nf; f++)
        if (!frozen[f] && (fres[f][0] == r || fres[f][1] == r || fres[f][2] == r))
          cnt++;
      if (cnt && rem[r] / cnt < best) best = rem[r] / cnt, br = r;
    }
    if (br < 0) return;
    for (int f = 0; f < nf; f++)
      if (!frozen[f]) {
        rate[f] += best;
        for (int j = 0; j < 3; j++) rem[fres[f][j]] -= best;
      }
    for (int f = 0; f < nf; f++)
      if (!frozen[f] && (fres[f][0] == br || fres[f][1] == br || fres[f][2] == br))
        frozen[f] = true;
  }
}

Test(net, random_flow_sets_match_global_water_filling) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (unsigned long seed = 1; seed <= 30; seed++) {
    gsl_rng_set(g, seed);
    int nd = 6;
    tnet T;
    tnet_init(&T, nd, 10, 1, 1, TRANSPORT_NETEM, 0);
    /* resources: shaper a = a, NIC out a = nd + a, NIC in b = 2 nd + b */
    double cap[3 * MAXD];
    for (int a = 0; a < nd; a++) {
      double s = 0.5 + gsl_rng_uniform_int(g, 4) * 0.5;
      for (int b = 0; b < nd; b++) T.v[a][b].bandwidth_gbps = s;
      T.nic_gbps[a] = 0.5 + gsl_rng_uniform_int(g, 6) * 0.5;
      cap[a] = s;
      cap[nd + a] = cap[2 * nd + a] = T.nic_gbps[a];
    }
    tnet_net(&T, TRANSPORT_NETEM, 0);
    /* a second message on a busy pair waits behind the first (its
     * connection sends in order): it is not among the sending flows */
    int fres[MAXF][3], tag[MAXF], nf = 0, ntag = 0;
    bool busy[MAXD][MAXD] = {{false}};
    for (int k = 0; k < 20; k++) {
      int a = (int)gsl_rng_uniform_int(g, (unsigned long)nd), b;
      do b = (int)gsl_rng_uniform_int(g, (unsigned long)nd); while (b == a);
      sim_net_start(T.net, 0, a, b, 1e12, (uint32_t)ntag);
      if (busy[a][b]) {
        cr_assert_eq(sim_net_rate_of(T.net, (uint32_t)ntag++), -1);
        continue;
      }
      busy[a][b] = true;
      tag[nf] = ntag++;
      fres[nf][0] = a, fres[nf][1] = nd + a, fres[nf][2] = 2 * nd + b;
      nf++;
      double want[MAXF];
      naive_maxmin(nf, fres, 3 * nd, cap, want);
      for (int f = 0; f < nf; f++)
        cr_assert(fabs(sim_net_rate_of(T.net, (uint32_t)tag[f]) * 8e-9 -
                       want[f]) < 1e-9,
                  "seed %lu flow %d: %g vs %g", seed, f,
                  sim_net_rate_of(T.net, (uint32_t)tag[f]) * 8e-9, want[f]);
    }
    tnet_done(&T);
  }
  gsl_rng_free(g);
}

/* Flows that start and end over time (most alone on idle resources, solved
 * without the component search, some sharing): after every event, the rate
 * of every sending flow equals the naive global water-filling of the flows
 * sending then. Start events use a kind outside the net's. */
Test(net, starts_and_ends_match_global_water_filling) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (unsigned long seed = 1; seed <= 20; seed++) {
    gsl_rng_set(g, seed);
    int nd = 8, nf = 40;
    tnet T;
    tnet_init(&T, nd, 5, 1, 1, TRANSPORT_NETEM, 0);
    double cap[3 * MAXD];
    for (int a = 0; a < nd; a++) {
      double sh = 0.5 + gsl_rng_uniform_int(g, 4) * 0.5;
      for (int b = 0; b < nd; b++) T.v[a][b].bandwidth_gbps = sh;
      T.nic_gbps[a] = 0.5 + gsl_rng_uniform_int(g, 6) * 0.5;
      cap[a] = sh;
      cap[nd + a] = cap[2 * nd + a] = T.nic_gbps[a];
    }
    tnet_net(&T, TRANSPORT_NETEM, 0); /* NIC capacities are read at creation */
    int fres[MAXF][3], src[MAXF], dst[MAXF];
    double bytes[MAXF];
    for (int f = 0; f < nf; f++) {
      src[f] = (int)gsl_rng_uniform_int(g, (unsigned long)nd);
      do dst[f] = (int)gsl_rng_uniform_int(g, (unsigned long)nd);
      while (dst[f] == src[f]);
      bytes[f] = 1e5 + (double)gsl_rng_uniform_int(g, 1000) * 1e4;
      fres[f][0] = src[f], fres[f][1] = nd + src[f], fres[f][2] = 2 * nd + dst[f];
      int64_t t0 = (int64_t)gsl_rng_uniform_int(g, 200) * 1000000;
      sim_queue_push(T.q, t0, 1, (uint32_t)f);
    }
    sim_queue_item it;
    int events = 0;
    while (sim_queue_pop(T.q, &it)) {
      if (it.kind == 1)
        sim_net_start(T.net, it.t_ns, src[it.arg], dst[it.arg], bytes[it.arg],
                      it.arg);
      else
        sim_net_handle(T.net, &it);
      events++;
      int on[MAXF], non = 0, sub[MAXF][3];
      for (int f = 0; f < nf; f++)
        if (sim_net_rate_of(T.net, (uint32_t)f) >= 0) {
          memcpy(sub[non], fres[f], sizeof sub[non]);
          on[non++] = f;
        }
      double want[MAXF];
      naive_maxmin(non, sub, 3 * nd, cap, want);
      for (int i = 0; i < non; i++) {
        double got = sim_net_rate_of(T.net, (uint32_t)on[i]) * 8e-9;
        cr_assert(fabs(got - want[i]) < 1e-9, "seed %lu event %d flow %d: %g vs %g",
                  seed, events, on[i], got, want[i]);
      }
    }
    for (int f = 0; f < nf; f++) cr_assert_geq(T.arrived[f], 0);
    cr_assert_eq(sim_net_sending(T.net), 0);
    tnet_done(&T);
  }
  gsl_rng_free(g);
}

/* Once the topology says nothing changes any more, the net caches link
 * values: flows started after the last change must see the values from the
 * change on although the same pair and shaper were read before it (flow 3),
 * and a flow that straddles the change its bytes at both rates. */
Test(net, values_after_the_last_change_are_the_new_ones) {
  tnet T;
  tnet_init(&T, 3, 100, 1, 0, TRANSPORT_NETEM, 0);
  T.t_change = 50000000;
  T.after = (trace_value){.latency_ms = 20, .bandwidth_gbps = 0.5};
  sim_net_start(T.net, 0, 0, 1, 1e7, 0);
  sim_net_start(T.net, 0, 0, 2, 1000, 3);
  sim_queue_push(T.q, 200000000, 1, 1);
  sim_queue_push(T.q, 400000000, 1, 2);
  sim_queue_item it;
  while (sim_queue_pop(T.q, &it)) {
    if (it.kind == 1)
      sim_net_start(T.net, it.t_ns, 0, 2, 1e7, it.arg);
    else
      sim_net_handle(T.net, &it);
  }
  /* flow 3 shares the shaper with flow 0 (0.5 Gbit/s each): leaves at
   * 16 us, arrives 100 ms later. Flow 0: 1000 B by then, 6,248,000 B more
   * by 50 ms at 1 Gbit/s, the last 3,751,000 B at 0.5: leaves at
   * 110.016 ms, arrives 20 ms later. Flows 1, 2: 160 ms each at 0.5. */
  cr_assert(llabs(T.arrived[3] - 100016000) <= 1);
  cr_assert(llabs(T.arrived[0] - 130016000) <= 2, "%lld",
            (long long)T.arrived[0]);
  cr_assert(llabs(T.arrived[1] - 380000000) <= 1, "%lld",
            (long long)T.arrived[1]);
  cr_assert(llabs(T.arrived[2] - 580000000) <= 1, "%lld",
            (long long)T.arrived[2]);
  tnet_done(&T);
}

Test(net, back_to_back_sends_overlap_their_latency) {
  tnet T;
  tnet_init(&T, 5, 50, 1, 0, TRANSPORT_NETEM, 0);
  T.chain = 2;
  T.chain_bytes = 1e7;
  sim_net_start(T.net, 0, 0, 2, 1e7, 0);
  tnet_run(&T);
  /* three sends of 80 ms each, one after the other's last byte left; the
   * last arrives 50 ms after it left: 3 * 80 + 50 ms, not 3 * 130. */
  cr_assert(llabs(T.arrived[2] - 290000000) <= 3, "%lld",
            (long long)T.arrived[2]);
  cr_assert(llabs(T.arrived[0] - 130000000) <= 1);
  tnet_done(&T);
}

static void halving_case(int64_t tc, transport_model m) {
  tnet T;
  tnet_init(&T, 2, 100, 1, 0, m, 0);
  T.t_change = tc;
  T.after = (trace_value){.latency_ms = 100, .bandwidth_gbps = 0.5};
  double S = 5e8;
  sim_net_start(T.net, 0, 0, 1, S, 0);
  tnet_run(&T);
  /* bytes sent by tc at 1 Gbit/s, the rest at 0.5 Gbit/s */
  double sent = 0.125 * (double)tc;
  double want_left = (double)tc + (S - sent) / 0.0625;
  cr_assert(fabs((double)T.arrived[0] - want_left - 1e8) <= 2,
            "tc %lld: arrived %lld want %.0f", (long long)tc,
            (long long)T.arrived[0], want_left + 1e8);
  tnet_done(&T);
}

Test(net, bandwidth_halving_mid_transfer) {
  halving_case(1000000000, TRANSPORT_NETEM); /* after 1 s */
  halving_case(1000000000, TRANSPORT_IDEAL);
}

Test(net, bandwidth_halving_while_first_bytes_in_flight) {
  /* 30 ms after the start, the first bytes have not arrived (100 ms): the
   * flow must still take 4 s - 30 ms * ... not finish at once (SimGrid 3.32). */
  halving_case(30000000, TRANSPORT_NETEM);
  halving_case(30000000, TRANSPORT_IDEAL);
}

Test(net, latency_change_applies_when_last_byte_leaves) {
  tnet T;
  tnet_init(&T, 2, 100, 1, 0, TRANSPORT_NETEM, 0);
  T.t_change = 50000000;
  T.after = (trace_value){.latency_ms = 20, .bandwidth_gbps = 1};
  sim_net_start(T.net, 0, 0, 1, 1e8, 0);
  tnet_run(&T);
  cr_assert(llabs(T.arrived[0] - 820000000) <= 1);
  tnet_done(&T);
}

static double tcp_time(double lat_ms, double gbps, double bytes, double window) {
  tnet T;
  tnet_init(&T, 2, lat_ms, gbps, 10, TRANSPORT_TCP, window);
  sim_net_set_connections(T.net, SIM_NET_NEW);
  sim_net_start(T.net, 0, 0, 1, bytes, 0);
  tnet_run(&T);
  double t = (double)T.arrived[0] * 1e-9;
  tnet_done(&T);
  return t;
}

/* ns-3 (TCP Cubic, 100 ms one-way, 1 Gbit/s): DESIGN.md section 4. The
 * tolerances are what the flow model reaches (see the report table). */
Test(net, tcp_matches_ns3_reference_points) {
  struct { double bytes, window, ns3, tol; } pts[] = {
      {1e8, 128 * 1024, 153.7, 0.01},
      {1e8, 4 * 1048576, 6.52, 0.01},
      {1e8, 6 * 1048576, 4.95, 0.03},
      {1e8, 64 * 1048576, 3.11, 0.03},
      {5e8, 4 * 1048576, 25.59, 0.01},
  };
  for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
    double t = tcp_time(100, 1, pts[i].bytes, pts[i].window);
    fprintf(stderr, "tcp W=%.0f S=%.0f: %.3f s (ns-3 %.2f, %+.1f%%)\n",
            pts[i].window, pts[i].bytes, t, pts[i].ns3,
            100 * (t / pts[i].ns3 - 1));
    cr_assert(fabs(t / pts[i].ns3 - 1) < pts[i].tol, "W %g: %g vs ns-3 %g",
              pts[i].window, t, pts[i].ns3);
  }
}

Test(net, tcp_is_never_faster_than_netem_for_one_flow) {
  double lats[] = {0, 5, 100}, sizes[] = {1e5, 8388608, 3e8};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) {
      tnet T;
      tnet_init(&T, 2, lats[i], 1, 10, TRANSPORT_NETEM, 0);
      sim_net_start(T.net, 0, 0, 1, sizes[k], 0);
      tnet_run(&T);
      double netem = (double)T.arrived[0] * 1e-9;
      tnet_done(&T);
      cr_assert_geq(tcp_time(lats[i], 1, sizes[k], 0), netem - 1e-9);
    }
}

Test(net, model_names_round_trip) {
  for (int m = 0; m < 3; m++)
    cr_assert_eq(transport_model_parse(transport_model_name((transport_model)m)), m);
  cr_assert_eq(transport_model_parse("ns3"), -1);
}

/* ---- NCCL sockets, socket buffers, per-flow caps ---- */

/* One message of S bytes from 0 to 1 over N sockets under model m on a
 * connection in state conn; returns its arrival (ns) and, in *handed, when
 * its send completed. */
static int64_t message(double lat_ms, double gbps, double S, int N,
                       transport_model m, double window, sim_net_conn conn,
                       int64_t *handed) {
  tnet T;
  tnet_init(&T, 2, lat_ms, gbps, 0, m, window);
  T.sockets[0] = T.sockets[1] = N;
  tnet_net(&T, m, window);
  sim_net_set_connections(T.net, conn);
  sim_net_start(T.net, 0, 0, 1, S, 0);
  tnet_run(&T);
  if (handed) *handed = T.left[0];
  int64_t t = T.arrived[0];
  tnet_done(&T);
  return t;
}

Test(net, sockets_without_a_window_bind_take_alpha_plus_s_over_beta) {
  /* 16 sockets of 64 MiB windows at 50 ms: 16 x 64 MiB / 0.1 s >> 1 Gbit/s */
  double S = 1e8, want = 50e6 + S * 8 / 1.0;
  for (int N = 1; N <= 16; N *= 4) {
    int64_t netem = message(50, 1, S, N, TRANSPORT_NETEM, 0, SIM_NET_WARM, NULL);
    int64_t tcp = message(50, 1, S, 16, TRANSPORT_TCP, 64.0 * 1048576,
                          SIM_NET_WARM, NULL);
    cr_assert(llabs(netem - (int64_t)want) <= 1, "N %d: %lld", N, (long long)netem);
    cr_assert(llabs(tcp - (int64_t)want) <= 1, "tcp: %lld", (long long)tcp);
  }
}

Test(net, window_bound_sockets_move_n_windows_per_rtt_after_slow_start) {
  /* 4 sockets, W = 256 KiB, RTT 2 x 20 ms, 10 Gbit/s: the window binds at
   * 4 W / RTT = 26.2 MB/s. A fresh connection slow-starts per socket from
   * 10 segments: epochs of 4 x 14480, 28960, 57920, 115840, 231680 bytes
   * (the next doubling reaches W), then 4 W per RTT. */
  double W = 262144, rtt = 0.04, S = 2e7, N = 4, c0 = 14480;
  double sent = 0, t = 0;
  for (double w = c0; w < W; w *= 2) {
    sent += N * w;
    t += rtt;
  }
  double want = t + (S - sent) / (N * W / rtt) + 0.02; /* + one-way latency */
  int64_t got = message(20, 10, S, 4, TRANSPORT_TCP, W, SIM_NET_FRESH, NULL);
  cr_assert(fabs((double)got * 1e-9 - want) < 1e-6, "%.6f vs %.6f",
            (double)got * 1e-9, want);
  /* warm: no slow start */
  int64_t warm = message(20, 10, S, 4, TRANSPORT_TCP, W, SIM_NET_WARM, NULL);
  cr_assert(fabs((double)warm * 1e-9 - (S / (N * W / rtt) + 0.02)) < 1e-6);
}

Test(net, a_small_message_uses_fewer_sockets) {
  cr_assert_eq(transport_sockets_used(16, 100), 1);
  cr_assert_eq(transport_sockets_used(16, 65536), 1);
  cr_assert_eq(transport_sockets_used(16, 65537), 2);
  cr_assert_eq(transport_sockets_used(16, 8388608), 16);
  cr_assert_eq(transport_sockets_used(1, 8388608), 1);
  /* 128 KiB over 16 window-bound sockets moves at 2 windows per RTT */
  double W = 65536, S = 131072;
  int64_t t = message(50, 10, S, 16, TRANSPORT_TCP, W, SIM_NET_WARM, NULL);
  cr_assert(llabs(t - (int64_t)(S / (2 * W / 0.1) * 1e9 + 50e6)) <= 1);
}

Test(net, a_send_completes_when_its_bytes_fit_in_the_socket_buffers) {
  /* netem, 1 Gbit/s (0.125 B/ns), W = 1 MB per socket: an 8 MB message
   * over 16 sockets fits at once; over 2 sockets its last byte enters the
   * buffers when 6 MB have left (48 ms). */
  int64_t handed;
  message(10, 1, 8e6, 16, TRANSPORT_NETEM, 1e6, SIM_NET_WARM, &handed);
  cr_assert_eq(handed, 0);
  int64_t arrived = message(10, 1, 8e6, 2, TRANSPORT_NETEM, 1e6, SIM_NET_WARM,
                            &handed);
  cr_assert(llabs(handed - 48000000) <= 1, "%lld", (long long)handed);
  cr_assert(llabs(arrived - 74000000) <= 1); /* 64 + 10 ms */
}

Test(net, messages_on_one_connection_leave_in_order_back_to_back) {
  /* Two 1e7-byte messages 0 -> 1 issued together: the second's bytes leave
   * after the first's (not shared): arrivals at 80 + 50 and 160 + 50 ms. */
  tnet T;
  tnet_init(&T, 2, 50, 1, 0, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1e7, 0);
  sim_net_start(T.net, 0, 0, 1, 1e7, 1);
  cr_assert_eq(sim_net_rate_of(T.net, 1), -1); /* waiting in the buffers */
  tnet_run(&T);
  cr_assert(llabs(T.arrived[0] - 130000000) <= 1);
  cr_assert(llabs(T.arrived[1] - 210000000) <= 2, "%lld",
            (long long)T.arrived[1]);
  tnet_done(&T);
}

Test(net, the_per_flow_cap_binds_per_socket) {
  /* 10 Gbit/s link, 5 Gbit/s per flow: one socket moves 5, four move 10 */
  double S = 1e9;
  for (int N = 1; N <= 4; N *= 4) {
    tnet T;
    tnet_init(&T, 2, 0, 10, 0, TRANSPORT_NETEM, 0);
    T.sockets[0] = T.sockets[1] = N;
    double fg[2] = {5, 5};
    T.topo.flow_gbps = fg;
    tnet_net(&T, TRANSPORT_NETEM, 0);
    sim_net_start(T.net, 0, 0, 1, S, 0);
    cr_assert_float_eq(sim_net_rate_of(T.net, 0), (N == 1 ? 5e9 : 10e9) / 8,
                       1);
    tnet_run(&T);
    tnet_done(&T);
  }
}

Test(net, tcp_round_trip_adds_both_directions) {
  /* window-bound, one socket: rate W / (L + R); L = 10, R = 0.05 ms */
  tnet T;
  double W = 1e6, S = 1e8;
  tnet_init(&T, 2, 10, 10, 0, TRANSPORT_TCP, W);
  T.v[1][0].latency_ms = 0.05;
  tnet_net(&T, TRANSPORT_TCP, W);
  sim_net_start(T.net, 0, 0, 1, S, 0);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), W / 10.05e-3, 1e-3);
  tnet_run(&T);
  cr_assert(fabs((double)T.arrived[0] - (S / (W / 10.05e-3) * 1e9 + 10e6)) <= 2);
  tnet_done(&T);
}

Test(net, idle_restart_halves_the_window_per_rto) {
  /* Linux: idle beyond one RTO halves cwnd per RTO elapsed after the first,
   * never below the initial window */
  double W = 4194304, init = TRANSPORT_TCP_INITIAL_WINDOW;
  cr_assert_eq(transport_idle_window(W, 0.1, 0.3), W);
  cr_assert_eq(transport_idle_window(W, 0.31, 0.3), W / 2);
  cr_assert_eq(transport_idle_window(W, 0.6, 0.3), W / 2);
  cr_assert_eq(transport_idle_window(W, 0.61, 0.3), W / 4);
  cr_assert_eq(transport_idle_window(W, 100, 0.3), init);
  cr_assert_eq(transport_idle_window(init / 2, 100, 0.3), init / 2);
}

/* Flows of more than 1e8 s used to be clamped to INT64_MAX / 2 ns, so a
 * flow ten times larger "finished" no later. 1e-6 Gbit/s is 125 B/s. */
Test(net, a_flow_longer_than_1e8_s_is_timed_exactly) {
  tnet T;
  tnet_init(&T, 2, 1, 1e-6, 0, TRANSPORT_IDEAL, 0);
  sim_net_start(T.net, 0, 0, 1, 2.5e10, 0); /* 2e8 s */
  tnet_run(&T);
  cr_expect(llabs(T.arrived[0] - 200000000001000000LL) <= 1, "arrived at %lld",
            (long long)T.arrived[0]);
  cr_expect_not(sim_net_overflowed(T.net));
  tnet_done(&T);
}

/* A flow that cannot leave before the horizon stops there, recorded. */
Test(net, a_flow_past_the_horizon_is_an_overflow) {
  tnet T;
  tnet_init(&T, 3, 0, 1e-6, 1e9, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1e12, 0); /* 8e9 s > 2.3e9 s */
  sim_net_start(T.net, 0, 0, 2, 1e3, 1);
  tnet_run(&T);
  cr_expect_eq(T.left[0], SIM_NET_HORIZON_NS);
  cr_expect(sim_net_overflowed(T.net));
  cr_expect_lt(T.left[1], (int64_t)1e12, "the small flow is unaffected");
  tnet_done(&T);
}

/* A projection past the horizon that a later re-solve brings back in time
 * is no overflow: 1.5e11 B alone take 1.2e9 s, but while it shares the shaper
 * with two flows its projection at a third of the rate passes 4.6e9 s. */
Test(net, a_projection_past_the_horizon_may_come_back) {
  tnet T;
  tnet_init(&T, 4, 0, 1e-6, 1e9, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1.5e11, 0);
  sim_net_start(T.net, 0, 0, 2, 1e3, 1);
  sim_net_start(T.net, 0, 0, 3, 1e3, 2);
  tnet_run(&T);
  cr_expect_not(sim_net_overflowed(T.net));
  /* the two small ones leave together after 24 s at a third of 125 B/s
   * each, 1e3 B of the large one sent by then; the rest goes alone */
  double want = (1.5e11 - 1e3) / 125 * 1e9 + 24e9; /* no latency: arrival */
  cr_expect(fabs((double)T.arrived[0] - want) < 1e4, "%lld vs %.0f",
            (long long)T.arrived[0], want);
  tnet_done(&T);
}

/* NCCL's channels on one pair (issue 18): a collective (2 ring channels)
 * and a p2p send (1 channel) between the same two devices are separate
 * connections, each with its own windows and slow start. One socket per
 * connection, a 1.45 MB window over a 20 ms round trip, 10 Gbit/s that
 * never binds: a collective first grows its connection to the window;
 * then a p2p send and another collective start together. The p2p send
 * leaves at once (not queued behind the collective, as on one shared
 * connection), from the initial window of its own fresh connection, one
 * window per RTT; the collective from the window its connection kept, two
 * windows per RTT: each as transport_message_s (the predictor's) has it
 * alone. */
Test(net, p2p_and_collective_are_separate_connections) {
  double W = TRANSPORT_DTFM_WINDOW, S = 3e7, rtt = 0.020, rate = 10e9 / 8;
  tnet T;
  tnet_init(&T, 2, 10, 10, 0, TRANSPORT_TCP, W);
  sim_net_set_connections(T.net, SIM_NET_FRESH);
  int coll = TRANSPORT_NCCL_RING_CHANNELS, p2p = TRANSPORT_P2P_CHANNELS;
  sim_net_start_on(T.net, 0, 0, 1, S, coll, 0);
  int64_t t1 = tnet_run(&T);
  transport_model tcp = TRANSPORT_TCP;
  double cw = 0, first = transport_message_s(S, rtt, rate, coll, 1, tcp, W, &cw);
  cr_assert_float_eq(cw, W, 1e-9, "the collective's connection grew: %g", cw);
  cr_assert(fabs((double)T.arrived[0] * 1e-9 - first - 0.010) < 1e-6);
  sim_net_start_on(T.net, t1, 0, 1, S, p2p, 1);
  sim_net_start_on(T.net, t1, 0, 1, S, coll, 2);
  tnet_run(&T);
  double pw = 0, p2p_s = transport_message_s(S, rtt, rate, p2p, 1, tcp, W, &pw);
  double warm = transport_message_s(S, rtt, rate, coll, 1, tcp, W, &cw);
  cr_assert_float_eq(warm, S / (2 * W / rtt), 1e-9, "warm: 2 windows per RTT");
  double got1 = (double)(T.arrived[1] - t1) * 1e-9 - 0.010;
  double got2 = (double)(T.arrived[2] - t1) * 1e-9 - 0.010;
  cr_assert(fabs(got1 - p2p_s) < 1e-6, "p2p %.9f vs %.9f", got1, p2p_s);
  cr_assert(fabs(got2 - warm) < 1e-6, "collective %.9f vs %.9f", got2, warm);
  cr_assert_gt(p2p_s, 2 * warm, "one window from slow start vs two warm");
  tnet_done(&T);
}

/* net_fmin stands in for fmin on the per-event paths: the same bits for
 * every pair of special and ordinary values, signed zeros and NaN too.
 * fmin is called through a volatile pointer: the C library's, as the
 * engine called it, not the compiler's folding of constant arguments
 * (which, at some optimisation levels, picks the other zero of
 * fmin(0, -0)). */
Test(net, fmin_inline_is_fmin_bit_for_bit) {
  double (*volatile libm_fmin)(double, double) = fmin;
  const double v[] = {0.0, -0.0, 1.0, -1.0, 1e300, -1e-300, INFINITY,
                      -INFINITY, NAN, 3.5};
  size_t nv = sizeof v / sizeof *v;
  for (size_t i = 0; i < nv; i++)
    for (size_t j = 0; j < nv; j++) {
      double a = net_fmin(v[i], v[j]), b = libm_fmin(v[i], v[j]);
      cr_assert(memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)),
                "net_fmin(%g, %g) = %g, fmin gives %g", v[i], v[j], a, b);
    }
}

/* net_ceil_ns against ceil: the same but a few ulps above an integer,
 * which a rate an ulp off its cap gives (issue 33, harness seed 3380). */
Test(net, ceil_ns_forgives_an_ulp_only) {
  const double whole[] = {1.0, 4194304.0, 1e9, 123456789012.0};
  for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
    double q = whole[i];
    cr_expect_eq(net_ceil_ns(q), q);
    cr_expect_eq(net_ceil_ns(nextafter(nextafter(q, INFINITY), INFINITY)), q,
                 "two ulps above %.17g", q);
    cr_expect_eq(net_ceil_ns(q + 1e-3 * q > q + 0.25 ? q + 0.25 : q + 1e-3),
                 q + 1, "a real fraction above %.17g", q);
    cr_expect_eq(net_ceil_ns(nextafter(q, 0)), q, "an ulp below %.17g", q);
  }
  cr_expect_eq(net_ceil_ns(0), 0);
  cr_expect_eq(net_ceil_ns(0.5), 1);
  cr_expect_eq(net_ceil_ns(0x1p60 + 4096), 0x1p60 + 4096); /* all whole */
}

/* Path shaping (issue 31): N flows from N devices of site A to N devices of
 * site B, each window-bound alone at W / RTT = 1e6 B / 20 ms = 50 MB/s
 * (0.4 Gbit/s, one socket, warm). On a 10 Gbit/s path N x 0.4 fits: each
 * gets its window's rate; on a 1 Gbit/s path they share it, 1 / N each.
 * Under tc each sender has its own shaper of the link's rate, so the same
 * 1 Gbit/s link carries N x 0.4 Gbit/s. */
Test(net, path_flows_between_two_sites_share_its_capacity) {
  const int N = 4;
  const double W = 1e6, rate = W / 0.020;
  const double gbps[] = {10, 1};
  for (int k = 0; k < 2; k++)
    for (int sh = 0; sh < 2; sh++) {
      tnet T;
      tnet_init(&T, 2 * N, 10, gbps[k], 0, TRANSPORT_TCP, W);
      if (sh) tnet_path(&T, 2 * N, 2, TRANSPORT_TCP, W);
      for (int i = 0; i < N; i++) sim_net_start(T.net, 0, i, N + i, 1e9, (uint32_t)i);
      double want = sh && k ? 1e9 / 8 / N : rate, sum = 0;
      for (int i = 0; i < N; i++) {
        double r = sim_net_rate_of(T.net, (uint32_t)i);
        cr_assert_float_eq(r, want, 1e-6 * want, "%s, %g Gbit/s: flow %d at "
                           "%g B/s, not %g", sh ? "path" : "tc", gbps[k], i,
                           r, want);
        sum += r;
      }
      if (sh && k) cr_assert_float_eq(sum, 1e9 / 8, 1, "the path's capacity");
      if (!sh && k) cr_assert_gt(sum, 1e9 / 8, "tc: a shaper per sender");
      tnet_done(&T);
    }
}

/* Inside a site the fabric is non-blocking: device 0's flows to 1 and to 2
 * (one site, 1 Gbit/s, no NICs) get the link's rate each under path; under
 * tc they share 0's shaper for that class, half each. */
Test(net, path_inside_a_site_does_not_share) {
  for (int sh = 0; sh < 2; sh++) {
    tnet T;
    tnet_init(&T, 3, 1, 1, 0, TRANSPORT_NETEM, 0);
    if (sh) tnet_path(&T, 3, 1, TRANSPORT_NETEM, 0);
    sim_net_start(T.net, 0, 0, 1, 1e9, 0);
    sim_net_start(T.net, 0, 0, 2, 1e9, 1);
    double want = sh ? 1e9 / 8 : 1e9 / 16;
    cr_assert_float_eq(sim_net_rate_of(T.net, 0), want, 1e-3);
    cr_assert_float_eq(sim_net_rate_of(T.net, 1), want, 1e-3);
    tnet_done(&T);
  }
}

/* An overridden device pair has its own link: sites A = {0, 1} and
 * B = {2, 3}, a 1 Gbit/s path; 0 -> 2 overridden (its own 1 Gbit/s) and
 * 1 -> 3 on the path get 1 Gbit/s each; without the override they share
 * the path, half each. A p2p send and a collective between the overridden
 * pair share its one private link (by their sockets, 1 and 2). */
Test(net, path_an_overridden_pair_has_its_own_link) {
  for (int o = 0; o < 2; o++) {
    tnet T;
    tnet_init(&T, 4, 5, 1, 0, TRANSPORT_NETEM, 0);
    T.priv[0][2] = T.priv[2][0] = o;
    tnet_path(&T, 4, 2, TRANSPORT_NETEM, 0);
    sim_net_start(T.net, 0, 0, 2, 1e9, 0);
    sim_net_start(T.net, 0, 1, 3, 1e9, 1);
    double want = o ? 1e9 / 8 : 1e9 / 16;
    cr_assert_float_eq(sim_net_rate_of(T.net, 0), want, 1e-3);
    cr_assert_float_eq(sim_net_rate_of(T.net, 1), want, 1e-3);
    if (o) {
      /* weights by sockets: the p2p send's 1 against the collective's 2 */
      sim_net_start_on(T.net, 0, 0, 2, 1e9, TRANSPORT_NCCL_RING_CHANNELS, 2);
      cr_assert_float_eq(sim_net_rate_of(T.net, 0), 1e9 / 8 / 3, 1e-3);
      cr_assert_float_eq(sim_net_rate_of(T.net, 2), 2e9 / 8 / 3, 1e-3);
    }
    tnet_done(&T);
  }
}

/* The path keys on one warm socket, 10 Gbit/s that never binds: a link's
 * flow_gbps sets its window to flow x RTT, so the flow runs at flow_gbps
 * (0.3 Gbit/s over 40 ms); a loss rate bounds it to Padhye's rate (1 %, a
 * 50 ms round trip: 318715.84 B/s, transport_test's hand value); the hosts'
 * windows give min(a's, b's) / RTT. */
Test(net, path_keys_bound_a_socket) {
  tnet T;
  tnet_init(&T, 2, 20, 10, 0, TRANSPORT_TCP, 0);
  T.v[0][1].flow_gbps = 0.3;
  tnet_net(&T, TRANSPORT_TCP, 0);
  sim_net_start(T.net, 0, 0, 1, 1e9, 0);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 0.3e9 / 8, 1e-3);
  tnet_done(&T);
  tnet_init(&T, 2, 25, 10, 0, TRANSPORT_TCP, 0);
  T.v[0][1].loss = 0.01;
  tnet_net(&T, TRANSPORT_TCP, 0);
  sim_net_start(T.net, 0, 0, 1, 1e9, 0);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 318715.84, 0.1);
  tnet_done(&T);
  double win[2] = {1e6, 2e6};
  tnet_init(&T, 2, 10, 10, 0, TRANSPORT_TCP, 0);
  T.topo.window = win;
  tnet_net(&T, TRANSPORT_TCP, 0);
  sim_net_start(T.net, 0, 0, 1, 1e9, 0);
  sim_net_start(T.net, 0, 1, 0, 1e9, 1);
  cr_assert_float_eq(sim_net_rate_of(T.net, 0), 1e6 / 0.020, 1e-3);
  cr_assert_float_eq(sim_net_rate_of(T.net, 1), 1e6 / 0.020, 1e-3);
  tnet_done(&T);
}

/* A remembered tag (sim_net_expect_tags) started again as another message
 * (other ends, other bytes, so other sockets) is that message: each
 * arrival is the one a net that remembers nothing gives. Netem over 16
 * sockets of 1 MB windows at 1 Gbit/s: 8 MB leave as one flow of 16
 * sockets, 64 KiB as one of a single socket, whose weight differs. */
Test(net, a_remembered_tag_started_as_another_message_is_that_message) {
  const int ends[][2] = {{0, 1}, {0, 2}, {0, 2}, {1, 2}, {0, 1}};
  const double bytes[] = {8e6, 8e6, 65536, 65536, 8e6};
  int64_t want[5], got[5];
  for (int memo = 0; memo < 2; memo++) {
    tnet T;
    tnet_init(&T, 3, 10, 1, 0, TRANSPORT_NETEM, 1e6);
    for (int d = 0; d < 3; d++) T.sockets[d] = 16;
    T.v[0][2].latency_ms = 30;
    tnet_net(&T, TRANSPORT_NETEM, 1e6);
    if (memo) sim_net_expect_tags(T.net, 4);
    int64_t t0 = 0;
    for (int k = 0; k < 5; k++) {
      /* a second flow from the same sender to the third device shares
       * its shaper by weight when the class is the same */
      int a = ends[k][0], b = ends[k][1];
      sim_net_start(T.net, t0, a, b, bytes[k], 0);
      sim_net_start(T.net, t0, a, 3 - a - b, 8e6, 3);
      t0 = tnet_run(&T);
      (memo ? got : want)[k] = T.arrived[0];
    }
    tnet_done(&T);
  }
  for (int k = 0; k < 5; k++)
    cr_assert_eq(got[k], want[k], "message %d: %lld, want %lld", k,
                 (long long)got[k], (long long)want[k]);
}

/* When a connection's message leaves with the next one queued behind it
 * and alone on its resources, the next takes them over (sim/net.c,
 * hand_over): it must be listed on each, the receiver's NIC included, so
 * that a flow joining that NIC later shares it. 1 Gbit/s receiver NIC,
 * 10 ms: m0 and m1 (1e8 B each) on 0 -> 1; m0 leaves at 0.8 s, m1 starts
 * alone; at 1 s a flow 2 -> 1 of 1e8 B joins: half each, so m1's last
 * 7.5e7 B take 1.2 s (it leaves at 2.2 s), then the other's last 2.5e7 B
 * 0.2 s alone (2.4 s). */
Test(net, a_next_message_handed_the_resources_shares_them) {
  tnet T;
  tnet_init(&T, 3, 10, 10, 100, TRANSPORT_NETEM, 0);
  T.nic_gbps[1] = 1;
  tnet_net(&T, TRANSPORT_NETEM, 0);
  sim_net_start(T.net, 0, 0, 1, 1e8, 0);
  sim_net_start(T.net, 0, 0, 1, 1e8, 1);
  sim_queue_item it;
  while (sim_queue_pop_before(T.q, 1000000000, &it)) sim_net_handle(T.net, &it);
  cr_assert(llabs(T.arrived[0] - 810000000) <= 1);
  sim_net_start(T.net, 1000000000, 2, 1, 1e8, 2);
  cr_assert_float_eq(sim_net_rate_of(T.net, 1), 0.5e9 / 8, 1);
  tnet_run(&T);
  cr_assert(llabs(T.arrived[1] - 2210000000) <= 2, "%lld",
            (long long)T.arrived[1]);
  cr_assert(llabs(T.arrived[2] - 2410000000) <= 2, "%lld",
            (long long)T.arrived[2]);
  tnet_done(&T);
}
