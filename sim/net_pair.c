/* net_pair: the pair map — an open-addressing hash table (a, b, channels)
 * -> pair, a pair being the connection a -> b of the operations with that
 * many NCCL channels (a p2p send's and a collective's are separate, as
 * NCCL's channels are), with its sockets, window and the stream of its
 * messages — and the connections' send buffers: a send completes when its
 * last byte is in the sockets' buffers (channels x sockets x window bytes
 * per connection), at once when the connection's bytes still to leave
 * fit, else when enough have left.
 * Invariant: htab holds each pair's index once and is at most half full
 * (linear probing ends); a connection's messages leave in issue order, the
 * head sending while the others wait; once static_from is known, a pair's
 * latency is read once and kept. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "sim/net_parts.h"

/* The slot of (a, b, channels): the channel count mixed into b's top
 * bits (a device index is far below 2^28; the probe compares all three,
 * so a clash costs a probe, never a wrong connection). */
static size_t slot_of(int a, int b, int channels, size_t cap) {
  return hash_pair_slot(a, (int)((uint32_t)b ^ (uint32_t)channels << 28), cap);
}

static void hash_insert(sim_net *n, uint32_t p) {
  const pair *pr = &n->pairs[p];
  size_t i = slot_of(pr->a, pr->b, pr->channels, n->hcap);
  while (n->htab[i] != NONE) i = (i + 1) & (n->hcap - 1);
  n->htab[i] = p;
}

/* The pair (a, b, channels), or NONE. */
static uint32_t pair_find(const sim_net *n, int a, int b, int channels) {
  size_t i = slot_of(a, b, channels, n->hcap);
  for (; n->htab[i] != NONE; i = (i + 1) & (n->hcap - 1)) {
    const pair *p = &n->pairs[n->htab[i]];
    if (p->a == a && p->b == b && p->channels == channels) return n->htab[i];
  }
  return NONE;
}

/* A new pair's congestion window: the window where its connection grew in
 * earlier iterations (warm: its window bound cwnd_max), else TCP's initial
 * window. */
static double first_cwnd(const sim_net *n, const pair *p) {
  switch (n->conn) {
    case SIM_NET_WARM: return p->cwnd_max;
    case SIM_NET_FRESH:
    case SIM_NET_NEW: return TRANSPORT_TCP_INITIAL_WINDOW;
  }
  assert(!"unknown connection state");
  return TRANSPORT_TCP_INITIAL_WINDOW;
}

/* The link resource of a new pair a -> b (see net_res.c): ideal's private
 * link, tc's shaper, path shaping's path or private pair (the one of a's
 * connection to b of another channel count, when there is one). */
static uint32_t pair_res(sim_net *n, int a, int b, int channels) {
  if (!n->shared)
    return sim_net_res_add(n, RES_PAIR, 0, a, b);
  if (!scenario_shaping_shares_paths(n->topo->shaping))
    return sim_net_res_shaper(n, a, b);
  int id = n->topo->path(n->topo->ctx, a, b);
  if (id >= 0) return sim_net_res_path(n, id, a, b);
  for (int c = 1; c <= TRANSPORT_CHANNELS_MAX; c++) {
    uint32_t q = c == channels ? NONE : pair_find(n, a, b, c);
    if (q != NONE) return n->pairs[q].res;
  }
  return sim_net_res_add(n, RES_PAIR, 0, a, b);
}

uint32_t sim_net_pair_get(sim_net *n, int a, int b, int channels, int64_t now) {
  uint32_t found = pair_find(n, a, b, channels);
  if (found != NONE) return found;
  if (2 * (n->npairs + 1) > n->hcap) {
    free(n->htab);
    n->hcap *= 2;
    n->htab = mem_alloc(n->hcap * sizeof *n->htab);
    memset(n->htab, 0xff, n->hcap * sizeof *n->htab);
    for (uint32_t k = 0; k < n->npairs; k++) hash_insert(n, k);
  }
  mem_grow((void **)&n->pairs, &n->pairs_cap, n->npairs + 1, sizeof *n->pairs);
  uint32_t id = (uint32_t)n->npairs++;
  assert(2 * n->npairs <= n->hcap); /* at most half full: probing ends */
  const int *sk = n->topo->sockets;
  const double *fg = n->topo->flow_gbps;
  double fa = fg && fg[a] > 0 ? fg[a] : INFINITY;
  double fb = fg && fg[b] > 0 ? fg[b] : INFINITY;
  n->pairs[id] = (pair){.a = a, .b = b, .channels = channels,
                        .res = NONE, .qhead = NONE,
                        .flow_bpns = gbps_to_bpns(fmin(fa, fb)),
                        .qtail = NONE, .waiter = NONE,
                        .ev_sock = SIM_QUEUE_NONE,
                        .sockets = sk ? sk[b] : TRANSPORT_SOCKETS_DEFAULT,
                        .last_end = INT64_MIN / 2};
  int64_t lat_ns; /* its windows, for the warm window and the buffers */
  double rtt_ns;
  sim_net_pair_latency(n, &n->pairs[id], now, &lat_ns, &rtt_ns);
  n->pairs[id].cwnd = first_cwnd(n, &n->pairs[id]);
  n->pairs[id].res = pair_res(n, a, b, channels);
  hash_insert(n, id);
  return id;
}

/* p's windows for its link v and round trip rtt_ns (transport_path_of).
 * Without path keys they depend on neither (the run's, the fitted or the
 * sites' window): computed once, not on every read of a varying link. */
static void pair_windows(const sim_net *n, pair *p, const trace_value *v,
                         double rtt_ns) {
  bool keys = trace_value_has_path(v);
  if (p->window > 0 && !keys && !p->path_keys) return;
  p->path_keys = keys;
  const double *w = n->topo->window;
  transport_path_in in = {.rtt_s = rtt_ns * 1e-9,
                          .run_window = n->opt.window_bytes,
                          .link_window = v->window_bytes,
                          .link_flow_gbps = v->flow_gbps, .loss = v->loss,
                          .fit_window = n->fit_window,
                          .site_window_a = w ? w[p->a] : 0,
                          .site_window_b = w ? w[p->b] : 0};
  transport_path tp = transport_path_of(&in);
  p->window = tp.window;
  p->cwnd_max = tp.cwnd_max;
}

/* The one-way latency of pair p at now, in ms; *ns gets it in whole ns and
 * *rtt_ns the round trip there and back (the two directions may differ);
 * p's windows are read at now too. */
double sim_net_pair_latency_read(sim_net *n, pair *p, int64_t now,
                                 int64_t *ns, double *rtt_ns) {
  trace_value v = link_at(n, p->a, p->b, now);
  double ms = v.latency_ms;
  *ns = llround(ms * 1e6);
  *rtt_ns = rtt_ns_of(ms, link_at(n, p->b, p->a, now).latency_ms);
  pair_windows(n, p, &v, *rtt_ns);
  if (now >= n->static_from) {
    p->lat_ok = true;
    p->lat_ms = ms;
    p->lat_ns = *ns;
    p->rtt_ns = *rtt_ns;
  }
  return ms;
}

/* Bytes of p's stream that have left its sender by now. */
static double stream_left(const sim_net *n, const pair *p, int64_t now) {
  if (p->qhead == NONE) return p->done_bytes;
  const flow *h = &n->flows[p->qhead];
  if (h->state != FLOW_SENDING) return p->done_bytes;
  return p->done_bytes + net_fmin(h->size, h->sent + var_at(n, p->qhead)->rate *
                                                      (double)(now - h->t_upd));
}

/* Arms EV_SOCK for when the head's rate brings p's waiter into the buffers
 * (need bytes must leave first), or disarms it when that is not known yet
 * (the waiter lies beyond the head message: the head's end rechecks). */
static void sock_arm(sim_net *n, uint32_t p, double need, int64_t now) {
  pair *pr = &n->pairs[p];
  const flow *h = &n->flows[pr->qhead], *w = &n->flows[pr->waiter];
  double room = pair_room(pr), rate = var_at(n, pr->qhead)->rate;
  int64_t t = -1;
  if (need > 0 && h->state == FLOW_SENDING && rate > 0 &&
      w->end_pos - room <= pr->done_bytes + h->size)
    t = now + (int64_t)ceil(need / rate);
  if (t < 0) {
    if (pr->ev_sock != SIM_QUEUE_NONE) sim_queue_cancel(n->q, pr->ev_sock);
    pr->ev_sock = SIM_QUEUE_NONE;
  } else if (pr->ev_sock == SIM_QUEUE_NONE) {
    pr->ev_sock = sim_queue_push(n->q, t, n->base + EV_SOCK, p);
  } else if (sim_queue_time(n->q, pr->ev_sock) != t) {
    sim_queue_move(n->q, pr->ev_sock, t);
  }
}

/* Hands to the sockets every waiting message of p that fits now, and arms
 * EV_SOCK for the next one. direct: the owner's hook runs here (the caller
 * is an event handler with nothing held); else through an EV_HANDED event
 * at now, since the caller may be the owner itself or a rate solve. */
void sim_net_sock_check(sim_net *n, uint32_t p, int64_t now, bool direct) {
  while (n->pairs[p].waiter != NONE) {
    pair *pr = &n->pairs[p];
    uint32_t id = pr->waiter;
    flow *w = &n->flows[id];
    double need = w->end_pos - pair_room(pr) - stream_left(n, pr, now);
    if (need > BYTES_EPS) {
      sock_arm(n, p, need, now);
      return;
    }
    w->handed = true;
    pr->waiter = w->next_q;
    if (!direct) sim_queue_push(n->q, now, n->base + EV_HANDED, id);
    else if (n->hooks.left) /* may start flows: n->pairs and n->flows move */
      n->hooks.left(n->hooks.ctx, w->tag, now);
  }
  pair *pr = &n->pairs[p];
  if (pr->ev_sock != SIM_QUEUE_NONE) {
    sim_queue_cancel(n->q, pr->ev_sock);
    pr->ev_sock = SIM_QUEUE_NONE;
  }
}
