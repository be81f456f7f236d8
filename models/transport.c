/* transport: see transport.h. The model names are the ones the command
 * line, the sweep files and the results store spell. */
#include "models/transport.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

#include "base/names.h"
#include "models/params.h"

#define TRANSPORT_MODEL_NAME_(id, name) name,
const char *const transport_model_names[TRANSPORT_NMODELS + 1] = {
    TRANSPORT_MODEL_MAP(TRANSPORT_MODEL_NAME_) NULL};
#undef TRANSPORT_MODEL_NAME_

const char *transport_model_name(transport_model m) {
  return transport_model_names[m];
}

int transport_model_parse(const char *name) {
  return names_find(transport_model_names, name);
}

bool transport_is_shared(transport_model m) {
  switch (m) {
    case TRANSPORT_IDEAL: return false;
    case TRANSPORT_NETEM:
    case TRANSPORT_TCP: return true;
  }
  assert(!"unknown network model");
  return true;
}

bool transport_is_windowed(transport_model m) {
  switch (m) {
    case TRANSPORT_IDEAL:
    case TRANSPORT_NETEM: return false;
    case TRANSPORT_TCP: return true;
  }
  assert(!"unknown network model");
  return false;
}

transport_options transport_options_default(void) {
  return (transport_options){.model = TRANSPORT_MODEL_DEFAULT,
                             .window_bytes = 0,
                             .idle_restart = false};
}

/* Padhye et al.'s b: segments per cwnd increase of one MSS (see the
 * header). */
#define PADHYE_B 1.0

double transport_loss_bps(double rtt_s, double p) {
  if (!(p > 0)) return INFINITY;
  double t0 = rtt_s + TRANSPORT_TCP_RTO_MIN_S;
  double bp = PADHYE_B * p;
  double denom = rtt_s * sqrt(2 * bp / 3) +
                 t0 * fmin(1, 3 * sqrt(3 * bp / 8)) * p * (1 + 32 * p * p);
  return TRANSPORT_TCP_SEGMENT / denom;
}

/* w within the windows a path may have. */
static double window_clamp(double w) {
  return fmin(fmax(w, TRANSPORT_WINDOW_MIN_BYTES),
              (double)TRANSPORT_WINDOW_MAX_BYTES);
}

transport_path transport_path_of(const transport_path_in *in) {
  double w;
  if (in->run_window > 0) w = in->run_window;
  else if (in->link_window > 0) w = in->link_window;
  else if (in->link_flow_gbps > 0)
    w = window_clamp(in->link_flow_gbps * 1e9 / 8 * in->rtt_s);
  else if (in->fit_window > 0) w = in->fit_window;
  else
    w = fmin(in->site_window_a > 0 ? in->site_window_a : TRANSPORT_HOST_WINDOW,
             in->site_window_b > 0 ? in->site_window_b : TRANSPORT_HOST_WINDOW);
  transport_path p = {.window = w, .cwnd_max = w,
                      .loss_bps = transport_loss_bps(in->rtt_s, in->loss)};
  if (isfinite(p.loss_bps) && in->rtt_s > 0)
    p.cwnd_max = fmin(w, p.loss_bps * in->rtt_s);
  return p;
}

int transport_sockets_used(int sockets, double bytes) {
  double pieces = ceil(bytes / TRANSPORT_SOCKET_MIN_CHUNK);
  if (sockets < 1) sockets = 1;
  return pieces < 1 ? 1 : pieces < sockets ? (int)pieces : sockets;
}

int transport_sockets_dealt(int channels, int sockets, double bytes) {
  if (channels < 1) channels = 1;
  return channels * transport_sockets_used(sockets, bytes / channels);
}

double transport_idle_window(double cwnd, double idle_s, double rto_s) {
  double floor_w = fmin(TRANSPORT_TCP_INITIAL_WINDOW, cwnd);
  if (!(idle_s > rto_s) || rto_s <= 0) return cwnd;
  /* tcp_cwnd_restart: while ((delta -= rto) > 0 && cwnd > restart) cwnd >>= 1 */
  for (double delta = idle_s - rto_s; delta > 0 && cwnd > floor_w;
       delta -= rto_s)
    cwnd /= 2;
  return fmax(cwnd, floor_w);
}

double transport_message_s(double bytes, double rtt_s, double bytes_s,
                           int channels, int sockets, transport_model model,
                           double W, double *cwnd) {
  if (!transport_is_windowed(model) || !(rtt_s > 0)) return bytes / bytes_s;
  int N = transport_sockets_dealt(channels, sockets, bytes);
  double w = cwnd && *cwnd > 0 ? *cwnd : TRANSPORT_TCP_INITIAL_WINDOW, t = 0;
  bool slow = w < W;
  /* One epoch (RTT) per turn, as the engine's epoch events: the rate is N
   * windows over the RTT or the path's, the window doubles at the end of an
   * epoch, and slow start ends at W or when the path binds. */
  for (double left = bytes; left > 0;) {
    double cap = N * fmin(w, W) / rtt_s, rate = fmin(cap, bytes_s);
    if (!slow || left <= rate * rtt_s) {
      t += left / rate;
      if (slow) w = fmin(W, w + left / N); /* grown by what it sent */
      break;
    }
    t += rtt_s;
    left -= rate * rtt_s;
    bool bound = rate < cap * (1 - 1e-9);
    w *= 2;
    if (bound || w >= W) slow = false;
  }
  if (cwnd) *cwnd = slow ? w : W;
  return t;
}

transport_ring transport_ring_plan(double bytes, int nranks) {
  assert(nranks >= 2);
  double chunk = TRANSPORT_NCCL_ALLREDUCE_CHUNKSTEPS * TRANSPORT_NCCL_STEP_BYTES;
  double loops = ceil(bytes / (TRANSPORT_NCCL_RING_CHANNELS * nranks * chunk));
  transport_ring r = {
      .loops = loops < 1 ? 1
               : loops > TRANSPORT_NCCL_MAX_LOOPS ? TRANSPORT_NCCL_MAX_LOOPS
                                                   : (int)loops,
      .slices = TRANSPORT_NCCL_ALLREDUCE_CHUNKSTEPS /
                TRANSPORT_NCCL_ALLREDUCE_SLICESTEPS};
  /* a chunk below one slice goes as one (prims' loop over slices ends at
   * nelem): small all-reduces pay the latency once per step */
  double slice = TRANSPORT_NCCL_ALLREDUCE_SLICESTEPS * TRANSPORT_NCCL_STEP_BYTES;
  double per = ceil(bytes / (TRANSPORT_NCCL_RING_CHANNELS * nranks * r.loops) / slice);
  if (per < r.slices) r.slices = per < 1 ? 1 : (int)per;
  r.piece = bytes / ((double)nranks * r.loops * r.slices);
  return r;
}

int transport_ring_wait(const transport_ring *r, int nranks, int p) {
  int steps = 2 * (nranks - 1), per_loop = steps * r->slices;
  int loop = p / per_loop, q = p % per_loop, step = q / r->slices;
  if (step > 0) return p - r->slices; /* the same slice of the step before */
  if (loop == 0 || q > 0) return -1;
  return p - 1; /* runRing's final directRecv of the loop before */
}

/* The p2p channels of one send of bytes in a comm of nranks between hosts
 * (2 coll channels: TRANSPORT_NCCL_RING_CHANNELS). Current NCCL:
 * ncclTopoComputeP2pChannels makes p2pnChannels = pow2Up(2) and cuts the
 * per-peer count while perPeer x divUp(nranks, 8) > p2pnChannels (paths.cc,
 * NCCL_MAX_DEV_WORK_P2P_PER_BATCH); addP2pToPlan starts from nChannelsMin
 * (halved while x nranks > p2pnChannels) and doubles up to the per-peer
 * count while a part exceeds one p2p chunk (NCCL_P2P_NET_CHUNKSIZE,
 * 128 KiB). NCCL 2.11 (paths.cc ncclTopoGetNchannels): 1 for a remote
 * rank. */
#define NCCL_P2P_NET_CHUNK_BYTES 131072.0
#define NCCL_MAX_DEV_WORK_P2P_PER_BATCH 8
static int p2p_channels(int nranks, double bytes, bool old_nccl) {
  if (old_nccl) return TRANSPORT_P2P_CHANNELS;
  int p2p = TRANSPORT_NCCL_RING_CHANNELS, per_peer =
      TRANSPORT_NCCL_P2P_CHANNELS_PER_PEER;
  int batches = (nranks + NCCL_MAX_DEV_WORK_P2P_PER_BATCH - 1) /
                NCCL_MAX_DEV_WORK_P2P_PER_BATCH;
  while (per_peer * batches > p2p && per_peer > 1) per_peer /= 2;
  int nmin = per_peer;
  while (nmin * nranks > p2p && nmin > 1) nmin /= 2;
  int c = nmin; /* divUp(bytes, minPartSize) >= 1 for bytes > 0 */
  while (bytes / c > NCCL_P2P_NET_CHUNK_BYTES && c <= per_peer / 2) c *= 2;
  return c;
}

int transport_op_channels(transport_op op, int nranks, double bytes,
                          bool old_nccl) {
  int ch = TRANSPORT_NCCL_RING_CHANNELS;
  switch (op) {
    case TRANSPORT_OP_P2P: ch = p2p_channels(nranks, bytes, old_nccl); break;
    case TRANSPORT_OP_RING: ch = TRANSPORT_NCCL_RING_CHANNELS; break;
  }
  assert(ch >= 1 && ch <= TRANSPORT_CHANNELS_MAX);
  return ch;
}

int transport_op_sockets(transport_op op, int sockets, int nranks,
                         double bytes, bool old_nccl) {
  return transport_op_channels(op, nranks, bytes, old_nccl) *
         (sockets > 0 ? sockets : TRANSPORT_SOCKETS_DEFAULT);
}

transport_path transport_site_path(const transport_options *o,
                                   const scenario *s, int sa, int sb,
                                   const trace_value *v, double rtt_s) {
  transport_path_in in = {.rtt_s = rtt_s, .run_window = o->window_bytes,
                          .link_window = v->window_bytes,
                          .link_flow_gbps = v->flow_gbps, .loss = v->loss,
                          .fit_window = params_get(PARAMS_WINDOW_BYTES),
                          .site_window_a = s->sites[sa].tcp_window_bytes,
                          .site_window_b = s->sites[sb].tcp_window_bytes};
  return transport_path_of(&in);
}

/* The window of connections from site a to site b at t = 0 (their devices'
 * links: the site pair's value; a brief load's sites alone). */
static double site_pair_window(const transport_options *o, const scenario *s,
                               int a, int b) {
  trace_value v = {0};
  double rtt_s = 0;
  if (s->network) {
    v = trace_at(s->network, a, b, 0);
    rtt_s = (v.latency_ms + trace_at(s->network, b, a, 0).latency_ms) / 1e3;
  }
  return transport_site_path(o, s, a, b, &v, rtt_s).window;
}

transport_facts transport_describe(const transport_options *o,
                                   const scenario *s) {
  transport_options d = o ? *o : transport_options_default();
  transport_facts f = {.model = d.model, .shaping = s->shaping,
                       .idle_restart = d.idle_restart,
                       .p2p_channels = TRANSPORT_P2P_CHANNELS,
                       .ring_channels = TRANSPORT_NCCL_RING_CHANNELS,
                       .ring_loops_max = TRANSPORT_NCCL_MAX_LOOPS,
                       .runtime = s->workload.runtime};
  for (int i = 0; i < s->nsites; i++) {
    int n = s->sites[i].nccl_sockets > 0 ? s->sites[i].nccl_sockets
                                         : TRANSPORT_SOCKETS_DEFAULT;
    if (!i || n < f.p2p_sockets_min) f.p2p_sockets_min = n;
    if (!i || n > f.p2p_sockets_max) f.p2p_sockets_max = n;
  }
  f.coll_sockets_min = f.p2p_sockets_min, f.coll_sockets_max = f.p2p_sockets_max;
  f.window_min = INFINITY, f.window_max = 0;
  for (int a = 0; a < s->nsites; a++)
    for (int b = 0; b < s->nsites; b++) {
      double w = site_pair_window(&d, s, a, b);
      f.window_min = fmin(f.window_min, w), f.window_max = fmax(f.window_max, w);
    }
  return f;
}

/* "16" or "1-16" */
static int span(char *buf, size_t n, int lo, int hi) {
  return lo == hi ? snprintf(buf, n, "%d", lo) : snprintf(buf, n, "%d-%d", lo, hi);
}

int transport_facts_line(const transport_facts *f, char *buf, size_t n) {
  char p2p[32], coll[32], win[80] = "", shaping[32] = "";
  span(p2p, sizeof p2p, f->p2p_sockets_min, f->p2p_sockets_max);
  span(coll, sizeof coll, f->coll_sockets_min, f->coll_sockets_max);
  if (transport_is_shared(f->model)) /* ideal: a private link per pair */
    snprintf(shaping, sizeof shaping, ", %s shaping",
             scenario_shaping_names[f->shaping]);
  if (transport_is_windowed(f->model) && f->window_min == f->window_max)
    snprintf(win, sizeof win, ", window %.3g MB%s", f->window_min / 1e6,
             f->idle_restart ? ", idle restart" : "");
  else if (transport_is_windowed(f->model))
    snprintf(win, sizeof win, ", windows %.3g-%.3g MB%s", f->window_min / 1e6,
             f->window_max / 1e6, f->idle_restart ? ", idle restart" : "");
  return snprintf(buf, n,
                  "%s%s%s, sockets per connection: p2p %s (%d channel%s), "
                  "collectives %s (%d channels, a connection each), "
                  "runtime %s",
                  transport_model_name(f->model), shaping, win, p2p,
                  f->p2p_channels,
                  f->p2p_channels == 1 ? "" : "s", coll, f->ring_channels,
                  f->runtime ? f->runtime : workload_runtimes[0]);
}
