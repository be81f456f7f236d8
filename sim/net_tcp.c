/* net_tcp: the TCP state of the flows — per-socket windows, slow start by
 * epochs of one RTT (the window doubles at each epoch's end until the
 * bound W or a fair share binds), RTT-unfair weights, and the window a
 * connection keeps between its messages (idle restart, when on, as Linux's
 * tcp_slow_start_after_idle).
 * Invariant: a flow in slow start has its EPOCH event one RTT ahead, and
 * none otherwise (its window is then below W); a flow's cap is
 * sim_net_tcp_cap of its window and RTT. */
#include <assert.h>
#include <math.h>

#include "sim/net_parts.h"

/* The RTT below which a window does not bound a flow: under one ns (two
 * devices on one NVLink, or a trace of zero latency) a window per RTT is
 * not a rate; the flow then runs at its path's cap, with no slow start. */
#define RTT_WINDOW_MIN_NS 1.0
/* The RTT floor of tcp's weights (1 / RTT per socket): 1 us, a LAN's
 * round trip, so that a zero-latency flow's weight stays finite and close
 * flows share as LAN peers do. */
#define RTT_WEIGHT_FLOOR_NS 1e3
/* A rate counts as below its window's bound when under it by more than
 * this relative margin: a fair share (weight x share per weight) that
 * equals the bound but for an ulp or two of rounding is the window's rate,
 * and must not end slow start. */
#define RATE_REL_TOL 1e-9

/* The window bound of f's sockets (nsock windows per round trip), within
 * its path's per-flow cap. */
double sim_net_tcp_cap(const sim_net *n, const flow *f) {
  if (f->rtt_ns < RTT_WINDOW_MIN_NS) return f->flow_cap;
  double W = n->pairs[f->pair].cwnd_max;
  return net_fmin(f->flow_cap, f->nsock *
                                  net_fmin(f->slow_start ? f->cwnd : W, W) /
                                  f->rtt_ns);
}

/* tcp's weight of f: one per socket, RTT-unfair (a socket's share of a
 * congested queue goes as 1 / RTT). */
double sim_net_tcp_weight(const flow *f) {
  return f->nsock / net_fmax(f->rtt_ns, RTT_WEIGHT_FLOOR_NS);
}

/* tcp: the connection's window when a flow starts on it; an idle one
 * restarts as Linux's tcp_slow_start_after_idle does, its RTO being the
 * RTT plus tcp_rto_min. */
static double connection_window(const sim_net *n, const pair *pr,
                                double rtt_ns, int64_t now) {
  if (!n->opt.idle_restart || pr->active > 0) return pr->cwnd;
  double idle_s = (double)(now - pr->last_end) * 1e-9;
  return transport_idle_window(pr->cwnd, idle_s,
                               rtt_ns * 1e-9 + TRANSPORT_TCP_RTO_MIN_S);
}

void sim_net_tcp_epoch(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  assert(f->slow_start && f->state == FLOW_SENDING); /* epochs only then */
  f->ev_epoch = SIM_QUEUE_NONE;
  sim_maxmin_var *v = var_at(n, id);
  /* Bound by the fair share rather than the window: slow start is over. */
  bool share_bound = v->rate < v->cap * (1 - RATE_REL_TOL);
  f->cwnd *= 2;
  f->ep_sent = net_fmin(f->size, f->sent + v->rate * (double)(now - f->t_upd));
  if (share_bound || f->cwnd >= n->pairs[f->pair].cwnd_max)
    f->slow_start = false;
  v->cap = sim_net_tcp_cap(n, f);
  if (f->slow_start)
    f->ev_epoch = sim_queue_push(n->q, now + (int64_t)f->rtt_ns,
                                 n->base + EV_EPOCH, id);
  if (!sim_net_solve_alone(n, id, now)) {
    seed(n, v->res[0]);
    sim_net_solve(n, now);
  }
}

void sim_net_tcp_begin(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  pair *pr = &n->pairs[f->pair];
  int64_t lat_ns;
  sim_net_pair_latency(n, pr, now, &lat_ns, &f->rtt_ns);
  sim_maxmin_var *v = var_at(n, id);
  v->w = sim_net_tcp_weight(f);
  pr->cwnd = connection_window(n, pr, f->rtt_ns, now);
  f->cwnd = pr->cwnd;
  f->slow_start = f->cwnd < pr->cwnd_max && f->rtt_ns >= RTT_WINDOW_MIN_NS;
  v->cap = sim_net_tcp_cap(n, f);
  assert(!f->slow_start || f->cwnd < pr->cwnd_max);
  if (f->slow_start)
    f->ev_epoch = sim_queue_push(n->q, now + (int64_t)f->rtt_ns,
                                 n->base + EV_EPOCH, id);
}

/* Slow start grows the window by the bytes acknowledged (RFC 5681): a
 * message that ends inside an epoch still grows it, by what it sent in
 * that epoch, so a stream of short messages ramps up as a long one does. */
void sim_net_tcp_left(const flow *f, pair *p) {
  p->cwnd = f->slow_start
                ? net_fmin(p->cwnd_max,
                           f->cwnd + (f->size - f->ep_sent) / f->nsock)
                : p->cwnd_max;
}
