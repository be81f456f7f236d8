/* predict: one iteration of DT-FM's runtime in closed form.
 * Invariant: pure functions of their arguments; the only memory is a few
 * per-call arrays of O(devices) entries, freed before return.
 *
 * Why each term has the form it has (sim/train.c builds what is modelled):
 *
 * Tandem. Every pipelined piece of the iteration is K jobs (micro-batches,
 * or gradient chunks) through servers in series with unbounded buffers,
 * all jobs present at the first server: a stage's compute stream, a
 * stage boundary, a ring hop. The last job leaves server m at the length
 * of the longest monotone path through the (job, server) grid. When job 0
 * may take longer (first[j]: TCP slow start) than the others (t[j]), that
 * path runs along job 0 to some server j1 and then spends its K - 2 extra
 * job steps at the slowest server from j1 on (tandem_span). A pure delay
 * after a server (a latency that does not hold the server) adds once.
 *
 * Pipeline boundary. A transfer is a rendezvous of the sender's send
 * stream and the receiver's receive stream, which is freed only when the
 * transfer arrives: at most one activation is in flight per direction, so
 * a boundary is a server whose service is latency + transfer time (not
 * the transfer time alone: with one in flight the turnaround includes the
 * one-way latency). A pass's forward phase of replica r, F_r, is the
 * tandem stage 0, boundary 0->1, stage 1, ..., its backward phase B_r the
 * tandem the other way; with free communication and equal stages this is
 * the (K + D_pp - 1)-slot GPipe pass.
 *
 * Barriers. DT-FM puts a barrier between the forward and the backward
 * phase of every pass; stage 0 starts pass p + 1 when its own backward of
 * pass p ends, and no barrier follows the backward phase. So the first
 * barrier falls at max_r F_r, each later one max_r (B_r + F_r) after the
 * previous, and the pipelines are done max_r B_r after the last (1F1B: no
 * barrier; see onef1b_pass).
 *
 * 1F1B (Megatron-style, no barriers). A pass is micro-batch 0 down and
 * back, then K - 1 periods; the period is the slowest of a stage's compute,
 * its send and receive streams, and every round trip st -> e -> st, which
 * e - st + 1 micro-batches share (stage st issues F(j + D - st) after
 * B(j); stage e issues B(k - (D - 1 - e)) after F(k)): one slow boundary
 * between adjacent stages thus costs half its round trip per micro-batch.
 * tcp's idle restarts are solved from above (onef1b_restarts): per flow,
 * once per 2-micro-batch cycle of an adjacent pair, or never.
 *
 * Data-parallel tail. Stage s of replica r finishes its last backward at
 * ready = last barrier + (backward tandem of r up to stage s): stages
 * finish at different times, and the straggler replica sets each group's
 * start. central-ps is an NCCL reduce along the ring R-1 -> ... -> 0 and
 * a broadcast 0 -> ... -> R-1, each in chunks (4 MiB, at most 128, as
 * sim/train.c): a chain hop is a server of chunk / rate followed by its
 * latency as a pure delay (NCCL keeps several chunks in flight), member i
 * joins when it is ready, so the reduce ends at max_i (ready_i + the chain
 * from i to 0); the broadcast starts there. ring: 2 (R - 1) steps of S / R,
 * a step leaving a member when the previous one has arrived: the longest
 * run of 2 (R - 1) consecutive hops (latency + transfer) from a member's
 * ready time. sharded-ps: every member sends S / R to every other at once,
 * the flows of one sender to one class sharing that class's shaper; then
 * the reduced shards go back the same way, a member's return round sharing
 * its shapers with its own reduce round when that is not done yet (a
 * member that sends many pieces to one class gets its shard early and its
 * shaper carries both rounds at once: two_rounds). Left out: the backward
 * transfers a stage still has queued when it starts its sync, which share
 * its shapers too. Each member then steps the
 * optimizer; the iteration ends with the last of them.
 *
 * Links. A hop's rate is the pair's bandwidth at t = 0, capped (netem,
 * tcp) by the sender's and receiver's NIC divided among the flows of the
 * same phase that cross that NIC (an instance's GPUs share one NIC when
 * nic_shared: all boundaries of a pipeline phase are busy at once in its
 * steady state). tcp adds the window bound W / RTT per flow (RTT = 2 x
 * one-way latency) and slow start: a connection starts at 10 segments and
 * doubles its window each RTT of sending until W or the rate binds, keeps
 * it across back-to-back flows, and restarts after a pause (every pipeline
 * phase and every gradient hop starts a fresh one). The extra time of the
 * first flows over the steady one is charged to job 0 of the tandem.
 *
 * Reported terms (they sum to the iteration): compute = passes K (max f +
 * max b) of the replica slowest with free communication; bubble = its
 * pipeline fill and drain; pp_comm = what communication and the barriers
 * add to the passes; optimizer and dp_sync = the tail after the last
 * backward of the pipelines, split into the optimizer step of the stage
 * that ends last and the rest. Left out: max-min sharing beyond the equal
 * NIC split, RTT-unfair sharing, time-varying links. */
#include "models/predict.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "traces/mem.h"

predict_options predict_options_default(void) {
  return (predict_options){TRANSPORT_NETEM, TRANSPORT_DEFAULT_WINDOW};
}

double predict_optimizer_s(const spec_gpu *g, double params) {
  return params * PREDICT_OPT_BYTES_PER_PARAM / g->mem_bw_bytes_s;
}

/* ---- links ---- */

/* The network of one call: NIC of each device (a device index naming the
 * NIC: the site's first device when its GPUs share one), its capacity in
 * bytes/s (0: unlimited) and how many flows of the current phase leave
 * (out) and enter (in) each NIC. swap reads the counts for the flows
 * reversed (a backward phase, a reduce after counting the broadcast). */
typedef struct net {
  const scenario *s;
  predict_options o;
  int *nic, *out, *in;
  double *cap;
  bool swap;
} net;

typedef struct link {
  double lat, rate; /* seconds, bytes/s */
} link;

static void net_init(net *n, const scenario *s, const predict_options *o) {
  int nd = s->ndevices;
  n->s = s;
  n->o = o ? *o : predict_options_default();
  if (n->o.window_bytes <= 0) n->o.window_bytes = TRANSPORT_DEFAULT_WINDOW;
  n->nic = mem_alloc((size_t)nd * sizeof *n->nic);
  n->out = mem_calloc((size_t)nd, sizeof *n->out);
  n->in = mem_calloc((size_t)nd, sizeof *n->in);
  n->cap = mem_calloc((size_t)nd, sizeof *n->cap);
  n->swap = false;
  for (int d = 0; d < nd; d++) {
    const scenario_site *site = &s->sites[s->device_site[d]];
    n->nic[d] = site->nic_shared ? site->first_device : d;
    double g = site->nic_gbps;
    if (n->o.network != TRANSPORT_IDEAL && g > 0 && isfinite(g))
      n->cap[n->nic[d]] = g * 1e9 / 8.0;
  }
}

static void net_free(net *n) {
  free(n->nic), free(n->out), free(n->in), free(n->cap);
}

static void net_reset(net *n) {
  for (int d = 0; d < n->s->ndevices; d++) n->out[d] = n->in[d] = 0;
  n->swap = false;
}

/* Counts a flow a -> b of the current phase on the NICs it crosses. */
static void net_count(net *n, int a, int b) {
  if (n->nic[a] == n->nic[b]) return;
  n->out[n->nic[a]]++;
  n->in[n->nic[b]]++;
}

/* The hop a -> b for one of `share` flows of a's shaper to b's class. */
static link net_link_of(const net *n, int a, int b, int share) {
  trace_value v = scenario_link(n->s, a, b, 0);
  link l = {v.latency_ms / 1e3, v.bandwidth_gbps * 1e9 / 8.0 / share};
  int na = n->nic[a], nb = n->nic[b];
  if (na == nb) return l; /* NVLink inside an instance: no NIC */
  int eo = n->swap ? n->in[na] : n->out[na];
  int ei = n->swap ? n->out[nb] : n->in[nb];
  if (n->cap[na] > 0) l.rate = fmin(l.rate, n->cap[na] / (eo > 1 ? eo : 1));
  if (n->cap[nb] > 0) l.rate = fmin(l.rate, n->cap[nb] / (ei > 1 ? ei : 1));
  return l;
}

static link net_link(const net *n, int a, int b) { return net_link_of(n, a, b, 1); }

/* ---- flows ---- */

static bool tcp_on(const predict_options *o, double lat_s) {
  return o->network == TRANSPORT_TCP && lat_s > 0;
}

double predict_flow_s(double bytes, double lat_s, double bytes_s,
                      const predict_options *o, double *cwnd) {
  predict_options d = o ? *o : predict_options_default();
  double W = d.window_bytes > 0 ? d.window_bytes : TRANSPORT_DEFAULT_WINDOW;
  if (!tcp_on(&d, lat_s)) return bytes / bytes_s;
  double rtt = 2 * lat_s, w = cwnd && *cwnd > 0 ? *cwnd : 0, t = 0;
  if (w <= 0) w = TRANSPORT_TCP_INITIAL_SEGMENTS * TRANSPORT_TCP_SEGMENT;
  bool slow = w < W;
  /* One epoch (RTT) per turn, as the engine's epoch events: the rate is
   * the window over the RTT or the link's, the window doubles at the end
   * of an epoch, and slow start ends at W or when the link binds. */
  for (double left = bytes; left > 0;) {
    double cap = (slow ? fmin(w, W) : W) / rtt, rate = fmin(cap, bytes_s);
    if (!slow || left <= rate * rtt) {
      t += left / rate;
      break;
    }
    t += rtt;
    left -= rate * rtt;
    bool bound = rate < cap * (1 - 1e-9);
    w *= 2;
    if (bound || w >= W) slow = false;
  }
  if (cwnd) *cwnd = slow ? w : W;
  return t;
}

/* A run of `flows` back-to-back flows of `bytes` on one fresh connection:
 * the steady time of one (*steady) and what the first ones take beyond
 * it, together (returned). The run is followed until the window stops
 * changing; without tcp both are plain. */
static double first_extra(double bytes, link l, const predict_options *o,
                          int flows, double *steady) {
  double cwnd = 0, sum = 0;
  *steady = bytes / l.rate;
  if (!tcp_on(o, l.lat)) return 0;
  for (int k = 0; k < flows; k++) {
    double before = cwnd, x = predict_flow_s(bytes, l.lat, l.rate, o, &cwnd);
    if (k > 0 && cwnd == before) {
      *steady = x;
      return sum - k * x;
    }
    sum += x;
    *steady = x;
  }
  return sum - flows * *steady;
}

/* ---- the tandem ---- */

/* Completion of the last of k jobs at server hi of servers lo..hi in
 * series, all jobs present at server lo at time 0 (see the header). */
static double tandem_span(int lo, int hi, int k, const double *first,
                          const double *t, const double *delay) {
  double d = 0, pre = 0, best = -INFINITY;
  for (int j = lo; j <= hi; j++) d += delay ? delay[j] : 0;
  if (k <= 1) {
    for (int j = lo; j <= hi; j++) pre += first[j];
    return pre + d;
  }
  for (int j1 = lo; j1 <= hi; j1++) {
    double sum = 0, most = 0;
    for (int j = j1; j <= hi; j++) sum += t[j], most = fmax(most, t[j]);
    best = fmax(best, pre + first[j1] + sum + (k - 2) * most);
    pre += first[j1];
  }
  return best + d;
}

/* ---- data-parallel synchronisation ---- */

/* Chunks of one NCCL operation over bytes, as sim/train.c cuts them. */
static int chunks_of(double bytes) {
  double c = ceil(bytes / TRANSPORT_NCCL_CHUNK_BYTES);
  return c < 1 ? 1 : c > TRANSPORT_NCCL_MAX_CHUNKS ? TRANSPORT_NCCL_MAX_CHUNKS : (int)c;
}

/* The servers of a chain along hops from[j] -> to[j], j = 0..n-1, carrying
 * C chunks of cb bytes each: chunk time, first chunk with slow start,
 * latency as a pure delay. */
static void chain_servers(const net *n, const int *from, const int *to,
                          int hops, int C, double cb, double *first,
                          double *t, double *delay) {
  for (int j = 0; j < hops; j++) {
    link l = net_link(n, from[j], to[j]);
    double extra = first_extra(cb, l, &n->o, C, &t[j]);
    first[j] = t[j] + extra;
    delay[j] = l.lat;
  }
}

/* Scratch for the chain: 5 arrays of R. */
typedef struct chain {
  int *from, *to;
  double *first, *t, *delay;
} chain;

static chain chain_new(int R) {
  return (chain){mem_alloc((size_t)R * sizeof(int)),
                 mem_alloc((size_t)R * sizeof(int)),
                 mem_alloc((size_t)R * sizeof(double)),
                 mem_alloc((size_t)R * sizeof(double)),
                 mem_alloc((size_t)R * sizeof(double))};
}

static void chain_free(chain *c) {
  free(c->from), free(c->to), free(c->first), free(c->t), free(c->delay);
}

static double at(const double *v, int i) { return v ? v[i] : 0; }

/* central-ps over grp (R members, rank order), member i ready at ready[i]
 * and stepping the optimizer for opt[i] after (NULL: zeros). Counts are
 * those of the broadcast direction (i -> i+1); the reduce reads them
 * swapped. Returns the time the last member is done. */
static double central_end(net *n, const int *grp, int R, double bytes,
                          const double *ready, const double *opt) {
  if (R < 2) return at(ready, 0) + at(opt, 0);
  int C = chunks_of(bytes);
  double cb = bytes / C;
  chain c = chain_new(R);
  /* Reduce: server j is member R-1-j sending to R-2-j. */
  for (int j = 0; j + 1 < R; j++) c.from[j] = grp[R - 1 - j], c.to[j] = grp[R - 2 - j];
  n->swap = true;
  chain_servers(n, c.from, c.to, R - 1, C, cb, c.first, c.t, c.delay);
  n->swap = false;
  double red = at(ready, 0);
  for (int i = 1; i < R; i++)
    red = fmax(red, at(ready, i) +
                        tandem_span(R - 1 - i, R - 2, C, c.first, c.t, c.delay));
  /* Broadcast: server j is member j sending to j+1; member i >= 1 has it
   * after servers 0..i-1, member 0 when its last chunk has left. */
  for (int j = 0; j + 1 < R; j++) c.from[j] = grp[j], c.to[j] = grp[j + 1];
  chain_servers(n, c.from, c.to, R - 1, C, cb, c.first, c.t, c.delay);
  double end = red + tandem_span(0, 0, C, c.first, c.t, NULL) + at(opt, 0);
  for (int i = 1; i < R; i++)
    end = fmax(end, red + tandem_span(0, i - 1, C, c.first, c.t, c.delay) +
                        at(opt, i));
  chain_free(&c);
  return end;
}

/* ring all-reduce: 2 (R - 1) steps of S / R; member i sends step k when
 * step k - 1 has arrived from i - 1 and its own step k - 1 has left:
 * start[k][i] = max(start[k-1][i-1] + hop i-1 with latency, start[k-1][i]
 * + its own transfer). The longest path through this (step, member) grid
 * is evaluated step by step (O(R^2), no events): a slow hop's sender is
 * busy for every step, so the ring goes at its pace. A hop's first use
 * pays its slow start. */
static double ring_end(net *n, const int *grp, int R, double bytes,
                       const double *ready, const double *opt) {
  if (R < 2) return at(ready, 0) + at(opt, 0);
  double *x = mem_alloc((size_t)R * sizeof *x), *x0 = mem_alloc((size_t)R * sizeof *x0);
  double *lat = mem_alloc((size_t)R * sizeof *lat);
  double *st = mem_alloc((size_t)R * sizeof *st), *nx = mem_alloc((size_t)R * sizeof *nx);
  for (int i = 0; i < R; i++) {
    link l = net_link(n, grp[i], grp[(i + 1) % R]);
    x0[i] = first_extra(bytes / R, l, &n->o, 2 * (R - 1), &x[i]) + x[i];
    lat[i] = l.lat;
    st[i] = at(ready, i);
  }
  for (int k = 1; k < 2 * (R - 1); k++) {
    for (int i = 0; i < R; i++) {
      int p = (i + R - 1) % R;
      double xp = k == 1 ? x0[p] : x[p], xi = k == 1 ? x0[i] : x[i];
      nx[i] = fmax(st[p] + xp + lat[p], st[i] + xi);
    }
    for (int i = 0; i < R; i++) st[i] = nx[i];
  }
  double end = -INFINITY;
  for (int i = 0; i < R; i++) {
    int p = (i + R - 1) % R;
    end = fmax(end, fmax(st[p] + x[p] + lat[p], st[i] + x[i]) + at(opt, i));
  }
  free(x), free(x0), free(lat), free(st), free(nx);
  return end;
}

/* The flow i -> j of sharded-ps alone in its round: the flows of i to j's
 * netem class share that class's rate (ideal: private links). Returns the
 * latency and, as rate, the piece over its time (tcp: with slow start);
 * *both gets its rate while both rounds' flows share the class: half the
 * share, but tcp's window bound W / RTT per flow may be below either. */
static link piece_link(const net *n, const int *grp, int R, int i, int j,
                       double piece, double *both) {
  int same = 0;
  trace_value v = scenario_link(n->s, grp[i], grp[j], 0);
  for (int q = 0; q < R && n->o.network != TRANSPORT_IDEAL; q++) {
    if (q == i) continue;
    trace_value u = scenario_link(n->s, grp[i], grp[q], 0);
    same += u.latency_ms == v.latency_ms && u.bandwidth_gbps == v.bandwidth_gbps;
  }
  link l = net_link_of(n, grp[i], grp[j], same > 1 ? same : 1);
  double half = l.rate / 2;
  if (tcp_on(&n->o, l.lat)) half = fmin(half, n->o.window_bytes / (2 * l.lat));
  l.rate = piece / predict_flow_s(piece, l.lat, l.rate, &n->o, NULL);
  *both = fmin(l.rate, half);
  return l;
}

/* Two rounds of flows of p bytes on one sender's shaper, fairly shared:
 * the reduce round's start at t0, the return round's at t1 >= t0, each at
 * rate r alone and r2 while both are on. By t1 a reduce flow has sent x =
 * min(p, (t1 - t0) r); if x < p, both go at r2 until it is done (after
 * (p - x) / r2), and the return flow sends its last x alone. *a and *b get
 * the two ends (last byte out); with r2 = r / 2 the shaper never idles. */
static void two_rounds(double t0, double t1, double p, double r, double r2,
                       double *a, double *b) {
  double x = t1 > t0 ? fmin(p, (t1 - t0) * r) : 0;
  if (x >= p) {
    *a = t0 + p / r, *b = t1 + p / r;
    return;
  }
  *a = t1 + (p - x) / r2;
  *b = *a + x / r;
}

/* sharded-ps: member j reduces its shard when every piece has arrived
 * (have[j]) and sends it back to all. A member sends its return round
 * while its own reduce flows may still be leaving, on the same shapers:
 * two_rounds. have depends on the others' overlaps, so it is iterated from
 * the rounds taken apart (it only grows; at most R + 1 rounds). */
static double sharded_end(net *n, const int *grp, int R, double bytes,
                          const double *ready, const double *opt) {
  if (R < 2) return at(ready, 0) + at(opt, 0);
  double *have = mem_alloc((size_t)R * sizeof *have), piece = bytes / R;
  double *nh = mem_alloc((size_t)R * sizeof *nh);
  for (int j = 0; j < R; j++) have[j] = -INFINITY; /* no overlap yet */
  for (int round = 0; round <= R + 1; round++) {
    bool changed = false;
    for (int j = 0; j < R; j++) {
      nh[j] = at(ready, j);
      for (int i = 0; i < R; i++) {
        if (i == j) continue;
        double r2, a, b, t0 = at(ready, i);
        link l = piece_link(n, grp, R, i, j, piece, &r2);
        two_rounds(t0, fmax(t0, have[i]), piece, l.rate, r2, &a, &b);
        if (!isfinite(have[i])) a = t0 + piece / l.rate;
        nh[j] = fmax(nh[j], a + l.lat);
      }
    }
    for (int j = 0; j < R; j++) {
      changed = changed || nh[j] > have[j] * (1 + 1e-12) + 1e-12;
      have[j] = nh[j];
    }
    if (!changed) break;
  }
  double end = -INFINITY;
  for (int i = 0; i < R; i++) {
    double got = have[i];
    for (int j = 0; j < R; j++) {
      if (j == i) continue;
      double r2, a, b;
      link l = piece_link(n, grp, R, j, i, piece, &r2);
      two_rounds(at(ready, j), have[j], piece, l.rate, r2, &a, &b);
      got = fmax(got, b + l.lat);
    }
    end = fmax(end, got + at(opt, i));
  }
  free(have), free(nh);
  return end;
}

/* Counts the flows of algo over group grp (R members) on the NICs. */
static void count_dp(net *n, spec_dp_algo algo, const int *grp, int R) {
  for (int i = 0; i < R && R > 1; i++) {
    if (algo != SPEC_SHARDED_PS) {
      if (algo == SPEC_RING || i + 1 < R) net_count(n, grp[i], grp[(i + 1) % R]);
      continue;
    }
    for (int j = 0; j < R; j++)
      if (j != i) net_count(n, grp[i], grp[j]);
  }
}

static double dp_end(net *n, spec_dp_algo algo, const int *grp, int R,
                     double bytes, const double *ready, const double *opt) {
  switch (algo) {
    case SPEC_RING:
      return ring_end(n, grp, R, bytes, ready, opt);
    case SPEC_SHARDED_PS:
      return sharded_end(n, grp, R, bytes, ready, opt);
    case SPEC_CENTRAL_PS:
      break;
  }
  return central_end(n, grp, R, bytes, ready, opt);
}

double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes,
                         const predict_options *o) {
  if (n < 2) return 0;
  net x;
  net_init(&x, s, o);
  count_dp(&x, algo, group, n);
  double t = dp_end(&x, algo, group, n, bytes, NULL, NULL);
  net_free(&x);
  return t;
}

double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes, const predict_options *o) {
  if (n < 2) return 0;
  net x;
  net_init(&x, s, o);
  for (int i = 0; i + 1 < n; i++) net_count(&x, group[i], group[i + 1]);
  int C = chunks_of(bytes);
  chain c = chain_new(n);
  for (int j = 0; j + 1 < n; j++) c.from[j] = group[j], c.to[j] = group[j + 1];
  chain_servers(&x, c.from, c.to, n - 1, C, bytes / C, c.first, c.t, c.delay);
  double t = tandem_span(0, n - 2, C, c.first, c.t, c.delay);
  chain_free(&c);
  net_free(&x);
  return t;
}

/* ---- the pipelines ---- */

/* Servers of one phase, 2 D_pp - 1 entries each: first and t (see the
 * tandem), comp (compute only, communication free), lat (a boundary's
 * latency) and fresh (a boundary's time when every flow starts a new
 * connection: see idle_restarts). */
typedef struct servers {
  double *first, *t, *comp, *lat, *fresh;
} servers;

/* The servers of one phase of replica r in flow order (forward: stage 0,
 * boundary 0->1, stage 1, ...; backward the other way). */
static void phase_servers(const net *n, const spec_workload *w,
                          const spec_gpu *const *gpu, const alloc *a, int r,
                          bool bwd, servers v) {
  double *first = v.first, *t = v.t, *comp = v.comp;
  int D = w->stages;
  double act = spec_activation_bytes(w);
  for (int i = 0; i < D; i++) {
    int st = bwd ? D - 1 - i : i, d = alloc_at(a, r, st);
    double c = spec_compute_s(gpu[d], bwd ? spec_stage_bwd_flops(w, st)
                                          : spec_stage_fwd_flops(w, st));
    first[2 * i] = t[2 * i] = comp[2 * i] = v.fresh[2 * i] = c;
    v.lat[2 * i] = 0;
    if (i + 1 == D) break;
    link l = net_link(n, d, alloc_at(a, r, bwd ? st - 1 : st + 1));
    double x, extra = first_extra(act, l, &n->o, w->micro_batches_per_pass, &x);
    t[2 * i + 1] = l.lat + x; /* one in flight: held until it arrives */
    first[2 * i + 1] = t[2 * i + 1] + extra;
    comp[2 * i + 1] = 0;
    v.lat[2 * i + 1] = l.lat;
    v.fresh[2 * i + 1] = l.lat + predict_flow_s(act, l.lat, l.rate, &n->o, NULL);
  }
}

/* tcp: a connection idle for longer than the minimum RTO plus an RTT
 * restarts from the initial window, as the engine's does. A boundary's
 * sender waits pace - (its transfer) between flows; when that is longer,
 * every flow starts afresh. 1F1B (upstream false): the pace is the
 * pipeline's period, which the fresh starts lengthen (iterate to the fixed
 * point: a few micro-batches in flight, no backlog). GPipe (upstream
 * true): jobs reach a server at the pace of the slowest server before it;
 * a boundary slowed by restarts beyond that pace would queue work, send
 * back to back and keep its window, so it is charged at most that pace.
 * Returns true when a server changed. */
static bool idle_restarts(int ns, double period, bool upstream, servers v) {
  bool changed = false;
  double pace = 0;
  for (int j = 0; j < ns; j++) {
    double was = v.t[j];
    pace = upstream ? fmax(pace, was) : period;
    if (j % 2 == 0 || v.fresh[j] <= was ||
        pace - (was - v.lat[j]) <= TRANSPORT_TCP_RTO_MIN_S + 2 * v.lat[j])
      continue;
    v.t[j] = v.first[j] = upstream ? fmin(v.fresh[j], pace) : v.fresh[j];
    changed = changed || v.t[j] > was;
  }
  return changed;
}

/* One 1F1B pass of a replica from its forward (f) and backward (b)
 * servers: micro-batch 0 down and back, then K - 1 periods. A period is
 * the slowest of: a stage's compute (f + b), its receive stream (holds
 * both incoming transfers until they arrive), its send stream, and the
 * round trip from stage s to the last stage and back spread over the
 * D_pp - s micro-batches stage s keeps in flight, plus the restarts that
 * trip pays once per cycle (fx, bx per server, NULL: none; see
 * onef1b_restarts). *drain gets, per stage, how long after its last
 * backward the pass ends; *bind the stage whose round trip sets the
 * period (-1: another term). */
static double onef1b_pass(int D, int K, const double *ff, const double *ft,
                          const double *bf, const double *bt,
                          const double *fx, const double *bx, double *drain,
                          double *per, int *bind, int *m) {
  int NS = 2 * D - 1;
  double fill = 0, period = 0;
  *bind = -1, *m = 0;
  for (int j = 0; j < NS; j++) fill += ff[j] + bf[j];
  for (int st = 0; st < D; st++) {
    int fi = 2 * st, bi = 2 * (D - 1 - st); /* stage st in each order */
    double cb = ft[fi] + bt[bi], rin = 0, sout = 0, loop = 0;
    if (st > 0) rin += ft[fi - 1], sout += bt[bi + 1];
    if (st + 1 < D) rin += bt[bi - 1], sout += ft[fi + 1];
    double other = fmax(fmax(cb, rin), sout);
    if (other > period) *bind = -1, *m = 0;
    period = fmax(period, other);
    /* the trip st -> e -> st: forward servers 2 st .. 2 e, backward
     * 2 (D-1-e) .. 2 (D-1-st), e - st + 1 micro-batches round it */
    for (int e = st + 1; e < D; e++) {
      int be = 2 * (D - 1 - e);
      loop += ft[2 * e - 1] + at(fx, 2 * e - 1) + ft[2 * e];
      loop += bt[be + 1] + at(bx, be + 1) + bt[be];
      if (e == st + 1) loop += ft[fi] + bt[bi];
      if (loop / (e - st + 1) > period) *bind = st, *m = e - st + 1;
      period = fmax(period, loop / (e - st + 1));
    }
    drain[st] = 0;
    for (int j = bi + 1; j < NS; j++) drain[st] += bt[j];
  }
  *per = period;
  return fill + (K - 1) * period;
}

/* Whether the sender of boundary j of phase v sits idle past the restart
 * threshold (minimum RTO + RTT) for `idle` seconds. */
static bool restarts(servers v, int j, double idle) {
  return idle > TRANSPORT_TCP_RTO_MIN_S + 2 * v.lat[j];
}

/* Whether boundary j of phase h (0 forward, 1 backward, flow order) is on
 * the round trip bind -> bind + m - 1 -> bind. */
static bool on_trip(int D, int h, int j, int bind, int m) {
  if (bind < 0 || m != 2) return false; /* see onef1b_restarts */
  int e = bind + m - 1;
  return h == 0 ? j > 2 * bind && j < 2 * e
                : j > 2 * (D - 1 - e) && j < 2 * (D - 1 - bind);
}

/* tcp under 1F1B. The connections start fresh (the warm-up's first
 * flows), and a pipeline whose boundaries restart runs at a period that
 * may keep them idle long enough to restart again: the engine stays in
 * that state. So every boundary starts restarting on every flow, and
 * steps down while the fixed point is not self-consistent (the period
 * only shrinks, so at most 2 rounds per boundary):
 * - every flow, while its gap per period (period less its sending) passes
 *   the threshold, unless it is on the round trip that sets the period;
 * - once per cycle, on that trip when it joins two adjacent stages: its
 *   m = 2 micro-batches go round as a pair and wait for the first to come
 *   back, so the sender idles once per m periods, for the cycle less its m
 *   sendings and the restart, which the trip pays once per cycle (fx, bx).
 *   (Longer trips pass stages whose alternation spreads the flows evenly:
 *   the engine shows no such bursts there, so they get the per-flow rule);
 * - never. Starting from above, this is the slowest consistent state, and
 *   it contains what idle_restarts finds upward from the steady one. */
static double onef1b_restarts(int D, int K, servers f, servers b,
                              double *drain, double *per) {
  int NS = 2 * D - 1, bind, m;
  double *keep = mem_alloc(4 * (size_t)NS * sizeof *keep);
  double *x = mem_calloc(2 * (size_t)NS, sizeof *x), p;
  servers ph[2] = {f, b};
  for (int h = 0; h < 2; h++)
    for (int j = 1; j < NS; j += 2) {
      keep[(2 * h) * NS + j] = ph[h].t[j], keep[(2 * h + 1) * NS + j] = ph[h].first[j];
      if (ph[h].fresh[j] > ph[h].t[j]) ph[h].t[j] = ph[h].first[j] = ph[h].fresh[j];
    }
  for (bool changed = true; changed;) {
    p = onef1b_pass(D, K, f.first, f.t, b.first, b.t, x, x + NS, drain, per, &bind, &m);
    changed = false;
    for (int h = 0; h < 2; h++)
      for (int j = 1; j < NS; j += 2) {
        servers v = ph[h];
        double st = keep[(2 * h) * NS + j], *xj = &x[h * NS + j];
        bool on = on_trip(D, h, j, bind, m);
        if (v.t[j] != st) { /* every flow */
          if (!on && restarts(v, j, *per - (v.fresh[j] - v.lat[j]))) continue;
          *xj = v.t[j] - st; /* to once per cycle */
          v.t[j] = st, v.first[j] = keep[(2 * h + 1) * NS + j];
          changed = true;
        } else if (*xj > 0) { /* once per cycle */
          if (on && restarts(v, j, m * (*per - (v.t[j] - v.lat[j])) - *xj)) continue;
          *xj = 0;
          changed = true;
        }
      }
  }
  free(keep);
  free(x);
  return p;
}

/* Per-call arrays: servers [2][R][2 D - 1], per replica phase times, the
 * compute-only pass, ready times [R][D] and a DP group's scratch. */
typedef struct work {
  double *first, *t, *comp, *lat, *fresh, *ph, *nc, *ready, *drain, *rd, *op;
  int *grp;
} work;

/* The servers of phase bwd of replica r. */
static servers work_servers(const work *k, int R, int NS, int bwd, int r) {
  size_t o = ((size_t)bwd * R + r) * NS;
  return (servers){k->first + o, k->t + o, k->comp + o, k->lat + o, k->fresh + o};
}

static work work_new(int R, int D) {
  size_t ns = 2 * (size_t)R * (2 * (size_t)D - 1), rd = (size_t)R * D;
  return (work){mem_alloc(ns * sizeof(double)), mem_alloc(ns * sizeof(double)),
                mem_alloc(ns * sizeof(double)), mem_alloc(ns * sizeof(double)),
                mem_alloc(ns * sizeof(double)), mem_calloc(2 * (size_t)R, sizeof(double)),
                mem_calloc((size_t)R, sizeof(double)), mem_alloc(rd * sizeof(double)),
                mem_alloc((size_t)D * sizeof(double)), mem_alloc((size_t)R * sizeof(double)),
                mem_alloc((size_t)R * sizeof(double)), mem_alloc((size_t)R * sizeof(int))};
}

static void work_free(work *k) {
  free(k->first), free(k->t), free(k->comp), free(k->lat), free(k->fresh);
  free(k->ph), free(k->nc);
  free(k->ready), free(k->drain), free(k->rd), free(k->op), free(k->grp);
}

/* Both phases of every replica: ph[bwd R + r], nc[r] (free communication)
 * and, from the backward tandem, ready[r D + s] = stage s's last backward
 * after the phase starts. Pipeline flows of a phase share NICs. */
static void pipelines(net *n, const spec_workload *w, const spec_gpu *const *gpu,
                      const alloc *a, work *k) {
  int D = w->stages, R = w->replicas, K = w->micro_batches_per_pass;
  int NS = 2 * D - 1;
  net_reset(n);
  for (int r = 0; r < R; r++)
    for (int st = 0; st + 1 < D; st++)
      net_count(n, alloc_at(a, r, st), alloc_at(a, r, st + 1));
  for (int bwd = 0; bwd < 2; bwd++) {
    n->swap = bwd;
    for (int r = 0; r < R; r++) {
      servers v = work_servers(k, R, NS, bwd, r);
      double *f = v.first, *t = v.t, *c = v.comp;
      phase_servers(n, w, gpu, a, r, bwd, v);
      while (w->schedule == SPEC_GPIPE && idle_restarts(NS, 0, true, v)) {}
      k->ph[bwd * R + r] = tandem_span(0, NS - 1, K, f, t, NULL);
      k->nc[r] += tandem_span(0, NS - 1, K, c, c, NULL);
      for (int i = 0; bwd && i < D; i++)
        k->ready[(size_t)r * D + D - 1 - i] = tandem_span(0, 2 * i, K, f, t, NULL);
    }
  }
  n->swap = false;
}

/* Data-parallel group st into k: members, ready times, optimizer steps. */
static void group_of(const spec_workload *w, const alloc *a,
                     const spec_gpu *const *gpu, work *k, int st) {
  for (int r = 0; r < w->replicas; r++) {
    k->grp[r] = alloc_at(a, r, st);
    k->rd[r] = k->ready[(size_t)r * w->stages + st];
    k->op[r] = predict_optimizer_s(gpu[k->grp[r]], spec_stage_params(w, st));
  }
}

int predict_iteration_with(const spec_workload *w, const scenario *s,
                           const spec_gpu *const *gpu, const alloc *a,
                           const predict_options *o, predict_result *out) {
  int D = w->stages, R = w->replicas, K = w->micro_batches_per_pass;
  int P = w->passes, NS = 2 * D - 1;
  net n;
  net_init(&n, s, o);
  work k = work_new(R, D);
  pipelines(&n, w, gpu, a, &k);
  /* The passes: when the last one's backward phase starts (t_last) and
   * when every pipeline is done (t_pipe). */
  double t_last = 0, t_pipe = 0;
  if (w->schedule == SPEC_GPIPE) {
    double fm = 0, bm = 0, fbm = 0;
    for (int r = 0; r < R; r++) {
      fm = fmax(fm, k.ph[r]), bm = fmax(bm, k.ph[R + r]);
      fbm = fmax(fbm, k.ph[r] + k.ph[R + r]);
    }
    t_last = fm + (P - 1) * fbm;
    t_pipe = t_last + bm;
    for (size_t i = 0; i < (size_t)R * D; i++) k.ready[i] += t_last;
  } else {
    double most = 0;
    for (int r = 0; r < R; r++) {
      servers f = work_servers(&k, R, NS, 0, r), b = work_servers(&k, R, NS, 1, r);
      double p, per;
      p = onef1b_restarts(D, K, f, b, k.drain, &per);
      for (int st = 0; st < D; st++) k.ready[(size_t)r * D + st] = p - k.drain[st];
      most = fmax(most, p);
    }
    t_last = (P - 1) * most;
    t_pipe = P * most;
    for (size_t i = 0; i < (size_t)R * D; i++) k.ready[i] += t_last;
  }
  /* The tail: every group synchronises from its members' ready times. */
  net_reset(&n);
  for (int st = 0; st < D; st++) {
    for (int r = 0; r < R; r++) k.grp[r] = alloc_at(a, r, st);
    count_dp(&n, w->dp_algo, k.grp, R);
  }
  double end = t_pipe, sync_end = t_pipe;
  int last = -1;
  for (int st = 0; st < D; st++) {
    group_of(w, a, gpu, &k, st);
    double e = dp_end(&n, w->dp_algo, k.grp, R,
                      spec_stage_gradient_bytes(w, st), k.rd, k.op);
    if (e > end) end = e, last = st;
  }
  if (last >= 0) { /* the same group without its optimizer steps */
    group_of(w, a, gpu, &k, last);
    sync_end = dp_end(&n, w->dp_algo, k.grp, R,
                      spec_stage_gradient_bytes(w, last), k.rd, NULL);
  }
  /* The breakdown, from the replica slowest with free communication. */
  int rs = 0;
  for (int r = 1; r < R; r++) if (k.nc[r] > k.nc[rs]) rs = r;
  double fmax_all = 0, bmax_all = 0, fs = 0, bs = 0;
  for (int r = 0; r < R; r++)
    for (int st = 0; st < D; st++) {
      size_t fi = (size_t)r * NS + 2 * st, bi = ((size_t)R + r) * NS + 2 * st;
      fmax_all = fmax(fmax_all, k.comp[fi]), bmax_all = fmax(bmax_all, k.comp[bi]);
      if (r == rs) fs = fmax(fs, k.comp[fi]), bs = fmax(bs, k.comp[bi]);
    }
  double cnb = fmin(P * k.nc[rs], t_pipe), comp = fmin(P * K * (fs + bs), cnb);
  double dp = fmax(0, sync_end - t_pipe);
  *out = (predict_result){
      .passes = P, .micro_batches = K, .fwd_s = fmax_all, .bwd_s = bmax_all,
      .compute_s = comp, .bubble_s = cnb - comp, .pp_comm_s = t_pipe - cnb,
      .dp_sync_s = dp, .optimizer_s = fmax(0, end - t_pipe - dp)};
  out->iteration_s = out->compute_s + out->bubble_s + out->pp_comm_s +
                     out->dp_sync_s + out->optimizer_s;
  work_free(&k);
  net_free(&n);
  return ERR_OK;
}

int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out) {
  return predict_iteration_with(w, s, gpu, a, NULL, out);
}
