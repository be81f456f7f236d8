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

/* A new pair's congestion window: the window where its connection grew in
 * earlier iterations (warm), else TCP's initial window. */
static double first_cwnd(const sim_net *n) {
  switch (n->conn) {
    case SIM_NET_WARM: return n->window;
    case SIM_NET_FRESH:
    case SIM_NET_NEW: return TRANSPORT_TCP_INITIAL_WINDOW;
  }
  assert(!"unknown connection state");
  return TRANSPORT_TCP_INITIAL_WINDOW;
}

uint32_t sim_net_pair_get(sim_net *n, int a, int b, int channels) {
  size_t i = slot_of(a, b, channels, n->hcap);
  for (; n->htab[i] != NONE; i = (i + 1) & (n->hcap - 1)) {
    pair *p = &n->pairs[n->htab[i]];
    if (p->a == a && p->b == b && p->channels == channels) return n->htab[i];
  }
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
                        .cwnd = first_cwnd(n),
                        .last_end = INT64_MIN / 2};
  if (transport_is_shared(n->model)) n->pairs[id].res = sim_net_res_shaper(n, a, b);
  else n->pairs[id].res = sim_net_res_add(n, RES_PAIR, 0, a, b);
  hash_insert(n, id);
  return id;
}

/* The one-way latency of pair p at now, in ms; *ns gets it in whole ns and
 * *rtt_ns the round trip there and back (the two directions may differ). */
double sim_net_pair_latency(sim_net *n, pair *p, int64_t now, int64_t *ns,
                            double *rtt_ns) {
  if (p->lat_ok) {
    *ns = p->lat_ns;
    *rtt_ns = p->rtt_ns;
    return p->lat_ms;
  }
  double ms = link_at(n, p->a, p->b, now).latency_ms;
  *ns = llround(ms * 1e6);
  *rtt_ns = rtt_ns_of(ms, link_at(n, p->b, p->a, now).latency_ms);
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
  double room = pair_room(n, pr), rate = var_at(n, pr->qhead)->rate;
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
    double need = w->end_pos - pair_room(n, pr) - stream_left(n, pr, now);
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
