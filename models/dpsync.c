/* dpsync: see dpsync.h. The chunking, the rank order of the chains, the
 * order of the ring's steps and each message's channels are those of
 * sim/train.c (sync_central, sync_ring, sync_sharded, sim_train_hier_ring):
 * the ring and the central-PS chains are NCCL collectives (COLL below;
 * hier-ring's levels over the caller's ring channels), sharded-PS's pieces
 * NCCL send/recv (TRANSPORT_P2P_CHANNELS). */
#include "models/dpsync.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/hivemind.h"
#include "models/tandem.h"

static double at(const double *v, int i) { return v ? v[i] : 0; }

#define COLL TRANSPORT_NCCL_RING_CHANNELS

/* Chunks of one NCCL chain operation over bytes, as sim/train.c cuts them. */
static int chunks_of(double bytes) {
  double c = ceil(bytes / TRANSPORT_NCCL_CHUNK_BYTES);
  return c < 1 ? 1 : c > TRANSPORT_NCCL_MAX_CHUNKS ? TRANSPORT_NCCL_MAX_CHUNKS
                                                   : (int)c;
}

/* The servers of a chain of `hops` hops from[j] -> to[j] carrying C chunks
 * of cb bytes: first chunk (with a restart's slow start), the others,
 * latency as a pure delay; room over rate in hand[j] (hop_handed). */
typedef struct chain {
  int *from, *to;
  double *first, *t, *delay, *hand;
} chain;

static chain chain_new(int R) {
  size_t n = (size_t)R;
  return (chain){.from = mem_alloc(n * sizeof(int)),
                 .to = mem_alloc(n * sizeof(int)),
                 .first = mem_alloc(n * sizeof(double)),
                 .t = mem_alloc(n * sizeof(double)),
                 .delay = mem_alloc(n * sizeof(double)),
                 .hand = mem_alloc(n * sizeof(double))};
}

static void chain_free(chain *c) {
  free(c->from), free(c->to), free(c->first), free(c->t), free(c->delay);
  free(c->hand);
}

static void chain_servers(const hop_net *n, chain *c, int hops, int C,
                          double cb, int channels) {
  double pace = 0, x; /* the slowest hop so far: hop_paced */
  for (int j = 0; j < hops; j++) {
    hop h = hop_of(n, c->from[j], c->to[j], cb, 1, channels);
    double extra = hop_first_extra(n, &h, cb, C, &x);
    c->t[j] = hop_paced(n, &h, cb, x, pace);
    c->first[j] = fmax(c->t[j], x + extra);
    c->delay[j] = h.lat;
    c->hand[j] = h.room * c->t[j] / cb;
    pace = fmax(pace, c->t[j]);
  }
}

/* central-ps's reduce over `channels` channels: NCCL's ring reduce to
 * root 0 (src/device/reduce.h runRing: the rank whose ring predecessor is
 * the root sends, the root receives last): grp[1] -> grp[2] -> ... ->
 * grp[R-1] -> grp[0], member i joining at hop i - 1. Returns when the root
 * has the sum. */
static double chain_reduce(hop_net *n, const int *grp, int R, double bytes,
                           int channels, const double *ready) {
  int C = chunks_of(bytes);
  double cb = bytes / C;
  chain c = chain_new(R);
  for (int j = 0; j + 1 < R; j++) c.from[j] = grp[j + 1], c.to[j] = grp[(j + 2) % R];
  chain_servers(n, &c, R - 1, C, cb, channels);
  double red = at(ready, 0);
  for (int i = 1; i < R; i++)
    red = fmax(red, at(ready, i) + tandem_span(i - 1, R - 2, C, c.first,
                                               c.t, c.delay));
  chain_free(&c);
  return red;
}

/* central-ps's broadcast from grp[0] from red on: member 0 is done when
 * its last chunk is in its socket buffers, member i > 0 when every chunk
 * has arrived (the last member) or its last chunk has arrived and its own
 * last one is in its buffers. */
static void chain_bcast(hop_net *n, const int *grp, int R, double bytes,
                        int channels, double red, double *done) {
  int C = chunks_of(bytes);
  double cb = bytes / C;
  chain c = chain_new(R);
  for (int j = 0; j + 1 < R; j++) c.from[j] = grp[j], c.to[j] = grp[j + 1];
  chain_servers(n, &c, R - 1, C, cb, channels);
  for (int i = 0; i < R; i++) {
    double got = i ? red + tandem_span(0, i - 1, C, c.first, c.t, c.delay) : red;
    if (i + 1 < R) { /* its own last chunk leaves server i */
      double left = red + tandem_span(0, i, C, c.first, c.t, c.delay) - c.delay[i];
      got = fmax(got, left - c.hand[i]);
    }
    done[i] = got;
  }
  chain_free(&c);
}

/* central-ps. Counts are the ring's (i -> i+1 and R-1 -> 0): the
 * broadcast's hops and the reduce's together. */
static void central(hop_net *n, const int *grp, int R, double bytes,
                    const double *ready, double *done) {
  double red = chain_reduce(n, grp, R, bytes, COLL, ready);
  n->part = 1; /* the flow's second part (dpsync_count) */
  chain_bcast(n, grp, R, bytes, COLL, red, done);
  n->part = 0;
}

/* A ring's last messages, member by member (ring's `tail`): when each
 * leaves alone (sent), at what rate (bytes/s) and the hop's latency. */
typedef struct ring_tail {
  double *sent, *rate, *lat;
} ring_tail;

/* ring: NCCL's cut (transport_ring_plan); st[p][i], when member i's
 * message p starts = max(its message p - 1 has left, the previous member's
 * message transport_ring_wait(p) has arrived), position by position; a
 * hop's first message pays a restart's slow start. O(R K) for K messages
 * per member; tail (NULL: none) gets its last messages. */
static void ring(hop_net *n, const int *grp, int R, double bytes,
                 int channels, const double *ready, double *done,
                 ring_tail *tail) {
  transport_ring r = transport_ring_plan(bytes, R);
  int K = 2 * (R - 1) * r.loops * r.slices;
  double *x = mem_alloc(4 * (size_t)R * sizeof *x), p = r.piece;
  double *x0 = x + R, *lat = x0 + R, *hand = lat + R;
  double *st = mem_alloc((size_t)R * (size_t)K * sizeof *st); /* [p][i] */
  hop *h = mem_alloc((size_t)R * sizeof *h);
  double pace = 0; /* the ring goes at its slowest hop's pace: hop_paced */
  for (int i = 0; i < R; i++) {
    h[i] = hop_of(n, grp[i], grp[(i + 1) % R], p, 1, channels);
    double extra = hop_first_extra(n, &h[i], p, K, &x[i]);
    x0[i] = x[i] + extra;
    lat[i] = h[i].lat, hand[i] = h[i].room;
    pace = fmax(pace, x[i]);
  }
  for (int i = 0; i < R; i++) {
    x[i] = hop_paced(n, &h[i], p, x[i], pace);
    x0[i] = fmax(x0[i], x[i]);
    hand[i] *= x[i] / p;
  }
  for (int k = 0; k < K; k++) {
    int w = transport_ring_wait(&r, R, k);
    for (int i = 0; i < R; i++) {
      int q = (i + R - 1) % R;
      double t = k ? st[(size_t)(k - 1) * R + i] + (k == 1 ? x0[i] : x[i])
                   : at(ready, i);
      if (w >= 0)
        t = fmax(t, st[(size_t)w * R + q] + (w ? x[q] : x0[q]) + lat[q]);
      st[(size_t)k * R + i] = t;
    }
  }
  double *last = st + (size_t)(K - 1) * R;
  for (int i = 0; i < R; i++) {
    int q = (i + R - 1) % R;
    double xi = K > 1 ? x[i] : x0[i], xq = K > 1 ? x[q] : x0[q];
    /* its last piece in and its socket holding its own last message,
     * which it may take before that message starts sending (hop_handed) */
    done[i] = fmax(last[q] + xq + lat[q], last[i] + xi - hand[i]);
    if (tail)
      tail->sent[i] = last[i] + xi, tail->rate[i] = p / xi,
      tail->lat[i] = lat[i];
  }
  free(st);
  free(h);
  free(x);
}

/* The connection i -> j of sharded-ps: the flows of i to j's netem class
 * share that class's shaper (ideal: private links; path shaping: the
 * counted flows share each path). *x1 and *x2 get the
 * times of its reduce and its return piece (the second on a connection
 * that has just sent the first: a restart's slow start is paid once). */
static hop piece_hop(hop_net *n, const int *grp, int R, int i, int j,
                     double piece, double *x1, double *x2) {
  int same = 0;
  trace_value v = scenario_link(n->s, grp[i], grp[j], 0);
  for (int q = 0; q < R && transport_is_shared(n->o.model); q++) {
    if (q == i) continue;
    trace_value u = scenario_link(n->s, grp[i], grp[q], 0);
    same += u.latency_ms == v.latency_ms && u.bandwidth_gbps == v.bandwidth_gbps;
  }
  hop h = hop_of(n, grp[i], grp[j], piece, same, TRANSPORT_P2P_CHANNELS);
  n->part = 1; /* the return round: the flow's second part */
  hop back = hop_of(n, grp[i], grp[j], piece, same, TRANSPORT_P2P_CHANNELS);
  n->part = 0;
  double cwnd = hop_restarts(n) ? 0 : h.window;
  *x1 = hop_time_from(n, &h, piece, &cwnd);
  *x2 = hop_time_from(n, &back, piece, &cwnd);
  return h;
}

/* sharded-ps: member j has its shard reduced at have[j], when every piece
 * of the reduce round has arrived; its return piece to i leaves after its
 * reduce piece to i on the same connection. */
static void sharded(hop_net *n, const int *grp, int R, double bytes,
                    const double *ready, double *done) {
  double p = bytes / R, *have = mem_alloc((size_t)R * sizeof *have), x1, x2;
  for (int j = 0; j < R; j++) {
    have[j] = at(ready, j);
    for (int i = 0; i < R; i++) {
      if (i == j) continue;
      hop h = piece_hop(n, grp, R, i, j, p, &x1, &x2);
      have[j] = fmax(have[j], at(ready, i) + x1 + h.lat);
    }
  }
  for (int i = 0; i < R; i++) {
    double got = have[i];
    for (int j = 0; j < R; j++) {
      if (j == i) continue;
      hop in = piece_hop(n, grp, R, j, i, p, &x1, &x2); /* j's shard to i */
      double b = fmax(have[j], at(ready, j) + x1) + x2;
      got = fmax(got, b + in.lat);
      hop out = piece_hop(n, grp, R, i, j, p, &x1, &x2); /* i's to j */
      double left = fmax(have[i], at(ready, i) + x1) + x2;
      got = fmax(got, hop_handed(&out, have[i], left, p, x2));
    }
    done[i] = got;
  }
  free(have);
}

/* hier-ring's levels (sim_train_hier_ring): grp's members by site (sites
 * in order of first appearance, members in grp order); at[] lists member
 * indices site by site, first[l] .. first[l + 1] those of site l. Returns
 * the sites. */
static int by_site(const hop_net *n, const int *grp, int R, int *first,
                   int *at) {
  const int *site = n->s->device_site;
  int top = 0, L = 0;
  for (int i = 0; i < R; i++) top = site[grp[i]] > top ? site[grp[i]] : top;
  int *slot = mem_alloc(((size_t)top + 1) * sizeof *slot);
  int *of = mem_alloc((size_t)R * sizeof *of);
  for (int i = 0; i < R; i++) slot[site[grp[i]]] = -1;
  for (int l = 0; l <= R; l++) first[l] = 0;
  for (int i = 0; i < R; i++) {
    int *sl = &slot[site[grp[i]]];
    if (*sl < 0) *sl = L++;
    of[i] = *sl;
    first[*sl + 1]++;
  }
  for (int l = 0; l < L; l++) first[l + 1] += first[l];
  int *fill = mem_alloc((size_t)L * sizeof *fill);
  for (int l = 0; l < L; l++) fill[l] = first[l];
  for (int i = 0; i < R; i++) at[fill[of[i]]++] = i;
  free(slot), free(of), free(fill);
  return L;
}

/* hier-ring's ring beside the broadcasts: a leader starts its site's
 * broadcast when it has the ring's result (cross), while its own last
 * ring message may still be leaving from its socket buffers (its send
 * stream frees the broadcast's first chunk then); on its NIC the two
 * share by the engine's weights (tcp: over the round trip, which favours
 * the site's short hop), so the next leader gets its last piece, and the
 * result, later. A few sweeps round the ring: a later result starts a
 * broadcast later, beside less of its own tail. */
static void tails_beside(hop_net *n, const int *m, const int *first, int L,
                         double bytes, int channels, const ring_tail *t,
                         double *cross) {
  double *c0 = mem_alloc(3 * (size_t)L * sizeof *c0);
  double *rt = c0 + L, *rb = c0 + 2 * L; /* each leader's, beside its
                                            broadcast's first hop */
  double piece = transport_ring_plan(bytes, L).piece;
  double cb = bytes / chunks_of(bytes);
  for (int l = 0; l < L; l++) {
    int f = first[l], nx = (l + 1) % L;
    c0[l] = cross[l], rt[l] = t->rate[l], rb[l] = 0;
    if (first[l + 1] - f > 1)
      rt[l] = fmin(rt[l], hop_beside_rate(n, m[f], m[first[nx]], piece,
                                          channels, m[f + 1], cb, channels,
                                          &rb[l]));
  }
  for (int sweep = 0; sweep < L + 1; sweep++)
    for (int l = 0; l < L; l++) {
      int nx = (l + 1) % L;
      double left = t->sent[l] - cross[l], r = t->rate[l];
      cross[nx] = c0[nx];
      if (!(left > 0) || !(rt[l] < r) || !(rb[l] > 0)) continue;
      double rem = left * r, busy = bytes / rb[l]; /* its broadcast's hop */
      double sent = rem > rt[l] * busy
                        ? cross[l] + busy + (rem - rt[l] * busy) / r
                        : cross[l] + rem / rt[l];
      cross[nx] = fmax(c0[nx], sent + t->lat[l]);
    }
  free(c0);
}

/* hier-ring: each site's reduce to its first member, the ring across the
 * sites' first members from when each has its site's sum, each site's
 * broadcast from when its first member has the ring's result. */
static void hier(hop_net *n, const int *grp, int R, double bytes,
                 int channels, const double *ready, double *done) {
  int *first = mem_alloc(((size_t)R + 1) * sizeof *first);
  int *ix = mem_alloc((size_t)R * sizeof *ix), *m = mem_alloc((size_t)R * sizeof *m);
  int L = by_site(n, grp, R, first, ix);
  double *rd = mem_alloc(2 * (size_t)R * sizeof *rd), *dn = rd + R;
  double *red = mem_alloc(2 * (size_t)L * sizeof *red), *cross = red + L;
  int *lead = mem_alloc((size_t)L * sizeof *lead);
  for (int i = 0; i < R; i++) m[i] = grp[ix[i]], rd[i] = at(ready, ix[i]);
  for (int l = 0; l < L; l++) {
    lead[l] = m[first[l]];
    red[l] = chain_reduce(n, m + first[l], first[l + 1] - first[l], bytes,
                          channels, rd + first[l]);
  }
  n->part = 1; /* the flow's parts: reduces, ring, broadcasts */
  double *tl = mem_alloc(3 * (size_t)L * sizeof *tl);
  ring_tail t = {.sent = tl, .rate = tl + L, .lat = tl + 2 * L};
  if (L > 1) ring(n, lead, L, bytes, channels, red, cross, &t);
  else cross[0] = red[0];
  n->part = 2;
  if (L > 1) tails_beside(n, m, first, L, bytes, channels, &t, cross);
  free(tl);
  for (int l = 0; l < L; l++)
    chain_bcast(n, m + first[l], first[l + 1] - first[l], bytes, channels,
                cross[l], dn + first[l]);
  n->part = 0;
  for (int i = 0; i < R; i++) done[ix[i]] = dn[i];
  free(first), free(ix), free(m), free(rd), free(red), free(lead);
}

/* A ring's connections as one part: grp[i] -> grp[i + 1 mod R], each
 * carrying 2 (R - 1) x loops x slices pieces. */
static void legs_ring(hop_net *n, const int *grp, int R, double bytes,
                      int channels) {
  transport_ring r = transport_ring_plan(bytes, R);
  for (int i = 0; i < R; i++)
    hop_net_leg(n, grp[i], grp[(i + 1) % R], r.piece,
                2.0 * (R - 1) * r.loops * r.slices * r.piece, channels);
}

/* A chain's connections from `start`, each carrying bytes in chunks, a
 * tandem (each hop forwards what arrived): reduce (NCCL's order grp[1] ->
 * ... -> grp[R-1] -> grp[0]) or broadcast (grp[0] -> ... -> grp[R-1]),
 * beside the part's other chains. */
static void legs_chain(hop_net *n, const int *grp, int R, double bytes,
                       int channels, bool reduce, double start) {
  double c = bytes / chunks_of(bytes);
  for (int j = 0; j + 1 < R; j++) {
    if (j) hop_net_next(n, start, INFINITY, INFINITY);
    else hop_net_beside(n, start);
    reduce ? hop_net_leg(n, grp[j + 1], grp[(j + 2) % R], c, bytes, channels)
           : hop_net_leg(n, grp[j], grp[j + 1], c, bytes, channels);
  }
}

/* Counts hier-ring's messages: the chains in each site, the ring; its
 * parts: the sites' reduces, the ring, the sites' broadcasts. */
static void count_hier(hop_net *n, const int *grp, int R, double bytes,
                       int ring_channels, const double *ready) {
  int *first = mem_alloc(((size_t)R + 1) * sizeof *first);
  int *ix = mem_alloc((size_t)R * sizeof *ix), *lead = mem_alloc((size_t)R * sizeof *lead);
  int *m = mem_alloc((size_t)R * sizeof *m);
  int L = by_site(n, grp, R, first, ix);
  double c = bytes / chunks_of(bytes), last = 0;
  for (int i = 0; i < R; i++) m[i] = grp[ix[i]], last = fmax(last, at(ready, i));
  for (int l = 0; l < L; l++) {
    int f = first[l], k = first[l + 1] - f;
    lead[l] = m[f];
    for (int i = 0; i < k && k > 1; i++)
      hop_net_count(n, m[f + i], m[f + (i + 1) % k], c, ring_channels);
  }
  for (int l = 0; l < L && L > 1; l++)
    hop_net_count(n, lead[l], lead[(l + 1) % L],
                  transport_ring_plan(bytes, L).piece, ring_channels);
  for (int part = 0; part < 3; part++) {
    if (part) hop_net_then(n);
    for (int l = 0; l < L && part != 1; l++)
      legs_chain(n, m + first[l], first[l + 1] - first[l], bytes,
                 ring_channels, part == 0, last);
    if (part == 1 && L > 1) legs_ring(n, lead, L, bytes, ring_channels);
  }
  free(first), free(ix), free(lead), free(m);
}

/* Sharded-ps's parts: every piece to its shard's owner, then every
 * reduced shard back. */
static void count_sharded(hop_net *n, const int *grp, int R, double bytes) {
  for (int part = 0; part < 3; part++) {
    if (part == 2) hop_net_then(n);
    for (int i = 0; i < R; i++)
      for (int j = 0; j < R; j++) {
        if (j == i) continue;
        if (part == 0)
          hop_net_count(n, grp[i], grp[j], bytes / R, TRANSPORT_P2P_CHANNELS);
        else
          hop_net_leg(n, grp[i], grp[j], bytes / R, bytes / R,
                      TRANSPORT_P2P_CHANNELS);
      }
  }
}

/* hivemind's butterfly alone (no host work; the caller frees frac): its
 * parts from the members' declared bandwidths. */
static hivemind_round butterfly(const hop_net *n, const int *grp, int R,
                                double bytes) {
  double *frac = mem_alloc((size_t)R * sizeof *frac);
  hivemind_fractions(n->s, grp, R, frac);
  return (hivemind_round){.grp = grp, .n = R, .bytes = bytes, .frac = frac};
}

void dpsync_count(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                  double bytes, int ring_channels, const double *ready) {
  if (R < 2) return;
  double c = bytes / chunks_of(bytes), last = 0;
  for (int i = 0; i < R; i++) last = fmax(last, at(ready, i));
  hop_net_flow(n, last, INFINITY, INFINITY); /* when the last is ready */
  switch (algo) {
    case SPEC_CENTRAL_PS:
      /* the broadcast's hops, which the reduce shares, and the reduce's
       * closing hop R-1 -> 0 */
      for (int i = 0; i < R; i++)
        hop_net_count(n, grp[i], grp[(i + 1) % R], c, COLL);
      legs_chain(n, grp, R, bytes, COLL, true, last);
      hop_net_then(n);
      legs_chain(n, grp, R, bytes, COLL, false, last);
      return;
    case SPEC_RING:
      for (int i = 0; i < R; i++)
        hop_net_count(n, grp[i], grp[(i + 1) % R],
                      transport_ring_plan(bytes, R).piece, ring_channels);
      legs_ring(n, grp, R, bytes, ring_channels);
      return;
    case SPEC_SHARDED_PS:
      hop_net_pieces(n);
      count_sharded(n, grp, R, bytes);
      return;
    case SPEC_HIER_RING: count_hier(n, grp, R, bytes, ring_channels, ready); return;
    case SPEC_HIVEMIND: {
      hivemind_round r = butterfly(n, grp, R, bytes);
      hivemind_count(n, &r);
      free((double *)r.frac);
      return;
    }
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return; /* nothing per step */
  }
}

void dpsync_run(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                double bytes, int ring_channels, const double *ready,
                double *done) {
  dpsync_run_left(n, algo, grp, R, bytes, ring_channels, ready, done, NULL);
}

/* A ring's tail into left (its sent), or none. */
static void ring_left(hop_net *n, const int *grp, int R, double bytes,
                      int channels, const double *ready, double *done,
                      double *left) {
  if (!left) {
    ring(n, grp, R, bytes, channels, ready, done, NULL);
    return;
  }
  double *scratch = mem_alloc(2 * (size_t)R * sizeof *scratch);
  ring_tail t = {.sent = left, .rate = scratch, .lat = scratch + R};
  ring(n, grp, R, bytes, channels, ready, done, &t);
  free(scratch);
}

void dpsync_run_left(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                     double bytes, int ring_channels, const double *ready,
                     double *done, double *left) {
  if (R < 2) {
    done[0] = at(ready, 0);
    if (left) left[0] = done[0];
    return;
  }
  switch (algo) {
    case SPEC_RING:
      ring_left(n, grp, R, bytes, ring_channels, ready, done, left);
      return;
    case SPEC_CENTRAL_PS: central(n, grp, R, bytes, ready, done); break;
    case SPEC_SHARDED_PS: sharded(n, grp, R, bytes, ready, done); break;
    case SPEC_HIER_RING:
      hier(n, grp, R, bytes, ring_channels, ready, done);
      break;
    case SPEC_HIVEMIND: {
      hivemind_round r = butterfly(n, grp, R, bytes);
      hivemind_run(n, &r, 1, ready ? &ready : NULL, &done);
      free((double *)r.frac);
      break;
    }
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: /* nothing per step */
      for (int i = 0; i < R; i++) done[i] = at(ready, i);
      break;
  }
  if (left) /* their connections' last messages: at done (left out) */
    memcpy(left, done, (size_t)R * sizeof *left);
}

double dpsync_chain_s(hop_net *n, const int *grp, int R, double bytes) {
  if (R < 2) return 0;
  int C = chunks_of(bytes);
  chain c = chain_new(R);
  for (int j = 0; j + 1 < R; j++) c.from[j] = grp[j], c.to[j] = grp[j + 1];
  chain_servers(n, &c, R - 1, C, bytes / C, COLL);
  double t = tandem_span(0, R - 2, C, c.first, c.t, c.delay);
  chain_free(&c);
  return t;
}
