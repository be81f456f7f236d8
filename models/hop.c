/* hop: see hop.h. The bounds are taken in the engine's order (sim/net.c:
 * pair_get, sim_net_start, begin, tcp_cap), so a flow alone on its path
 * gets the engine's rate exactly. A phase's resources, numbered for the
 * solve: NIC egress (NIC index), NIC ingress (devices + NIC index), path
 * (2 devices + path id). */
#include "models/hop.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/fill.h"

/* The RTT floor of tcp's weights, seconds (the engine's
 * RTT_WEIGHT_FLOOR_NS, sim/net_tcp.c). */
#define RTT_WEIGHT_FLOOR_S 1e-6

/* One flow of the fill (fill.h): a job's (a pipeline's pass, a group's
 * synchronisation) part, or a stretch of one in a tandem. Its start and
 * progress caps (forward, reversed), its connections leg[first .. first +
 * n), its job (the index of the job's first flow), its part's number, the
 * flows it starts after (nafter of them from `after`, -1: none) and the one
 * upstream of it (-1). */
typedef struct hop_flow {
  double start, cap[2];
  int first, n;
  int job, part, after, nafter, up;
  bool whole; /* its stretches pass whole messages (hop_net_whole) */
  bool pieces; /* its legs send at once, side by side (hop_net_pieces) */
  bool pass;   /* a pipeline's pass (hop_net_pass) */
} hop_flow;

/* One connection of a flow, in both directions of the phase (d = 0: a ->
 * b, d = 1: b -> a, the reversed phase). */
typedef struct hop_leg {
  int a, b, channels, flow, part;
  double bytes, total;
  int w[2];            /* its socket weight */
  double we[2];        /* the engine's: sockets, over the RTT under tcp */
  int res[2][3];       /* NIC out, NIC in, path (-1: none) */
  bool shared[2];      /* its flow shares a resource with another flow */
  double rate[2];      /* then its rate over its flow's life */
} hop_leg;

/* A phase's state before its first flow: nothing solved, no part, no
 * counts of what the fill shares. */
static void phase_clear(hop_net *n) {
  n->solved = false, n->part = 0;
  n->nshared = n->nvaried = n->ncoupled = n->ncoupled_pass = 0;
}

void hop_net_init(hop_net *n, const scenario *s, const transport_options *o) {
  int nd = s->ndevices;
  n->s = s;
  n->o = o ? *o : transport_options_default();
  n->path = scenario_shaping_shares_paths(s->shaping) &&
            transport_is_shared(n->o.model);
  size_t np = n->path ? (size_t)s->nsites * (size_t)s->nsites : 0;
  n->pw = n->path ? mem_calloc(np, sizeof *n->pw) : NULL;
  n->rpw = n->path ? mem_calloc(np, sizeof *n->rpw) : NULL;
  n->touched = n->path ? mem_alloc(np * sizeof *n->touched) : NULL;
  n->ntouched = 0;
  n->flow = NULL, n->nflow = 0, n->flow_cap = 0;
  n->leg = NULL, n->nleg = 0, n->leg_cap = 0;
  n->slot = NULL, n->nslot = 0;
  phase_clear(n);
  n->nic = mem_alloc((size_t)nd * sizeof *n->nic);
  n->cap = mem_calloc((size_t)nd, sizeof *n->cap);
  n->out = mem_calloc((size_t)nd, sizeof *n->out);
  n->in = mem_calloc((size_t)nd, sizeof *n->in);
  n->rout = mem_calloc((size_t)nd, sizeof *n->rout);
  n->rin = mem_calloc((size_t)nd, sizeof *n->rin);
  n->swap = false;
  for (int d = 0; d < nd; d++) {
    const scenario_site *site = &s->sites[s->device_site[d]];
    n->nic[d] = site->nic_shared ? site->first_device : d;
    double g = site->nic_gbps;
    if (transport_is_shared(n->o.model) && g > 0 && isfinite(g))
      n->cap[n->nic[d]] = g * 1e9 / 8.0;
  }
}

void hop_net_free(hop_net *n) {
  free(n->nic), free(n->cap), free(n->out), free(n->in);
  free(n->rout), free(n->rin);
  free(n->pw), free(n->rpw), free(n->touched);
  free(n->flow), free(n->leg), free(n->slot);
}

void hop_net_reset(hop_net *n) {
  for (int d = 0; d < n->s->ndevices; d++)
    n->out[d] = n->in[d] = n->rout[d] = n->rin[d] = 0;
  for (int i = 0; i < n->ntouched; i++) /* O(paths used), not sites^2 */
    n->pw[n->touched[i]] = n->rpw[n->touched[i]] = 0;
  n->ntouched = 0;
  n->swap = false;
  n->nflow = n->nleg = 0;
  phase_clear(n);
  if (n->nslot) memset(n->slot, 0xff, (size_t)n->nslot * sizeof *n->slot);
}

void hop_net_flow(hop_net *n, double start, double cap, double cap_rev) {
  mem_grow((void **)&n->flow, &n->flow_cap, (size_t)n->nflow + 1,
           sizeof *n->flow);
  n->flow[n->nflow] = (hop_flow){.start = start, .cap = {cap, cap_rev},
                                 .first = n->nleg, .job = n->nflow,
                                 .after = -1, .up = -1};
  n->nflow++;
}

void hop_net_then(hop_net *n) {
  assert(n->nflow > 0);
  int cur = n->nflow - 1;
  hop_flow prev = n->flow[cur];
  hop_net_flow(n, prev.start, prev.cap[0], prev.cap[1]);
  int first = cur; /* the part's every flow: its chains side by side */
  while (first > prev.job && n->flow[first - 1].part == prev.part) first--;
  hop_flow *f = &n->flow[n->nflow - 1];
  f->job = prev.job, f->part = prev.part + 1, f->after = first;
  f->nafter = cur - first + 1, f->pieces = prev.pieces;
}

void hop_net_beside(hop_net *n, double start) {
  assert(n->nflow > 0);
  hop_flow *cur = &n->flow[n->nflow - 1];
  if (cur->n == 0) { /* nothing given yet: this one */
    cur->start = start;
    return;
  }
  hop_flow prev = *cur;
  hop_net_flow(n, start, prev.cap[0], prev.cap[1]);
  hop_flow *f = &n->flow[n->nflow - 1];
  f->job = prev.job, f->part = prev.part, f->after = prev.after;
  f->nafter = prev.nafter;
}

void hop_net_next(hop_net *n, double start, double cap, double cap_rev) {
  assert(n->nflow > 0);
  int cur = n->nflow - 1;
  hop_flow prev = n->flow[cur];
  hop_net_flow(n, start, cap, cap_rev);
  hop_flow *f = &n->flow[n->nflow - 1];
  f->job = prev.job, f->part = prev.part, f->after = prev.after, f->up = cur;
  f->nafter = prev.nafter, f->whole = prev.whole, f->pass = prev.pass;
}

void hop_net_whole(hop_net *n) {
  assert(n->nflow > 0);
  n->flow[n->nflow - 1].whole = true;
}

void hop_net_pieces(hop_net *n) {
  assert(n->nflow > 0);
  n->flow[n->nflow - 1].pieces = true;
}

void hop_net_pass(hop_net *n) {
  assert(n->nflow > 0);
  n->flow[n->nflow - 1].pass = true;
}

static int sockets_to(const hop_net *n, int b) {
  int N = n->s->sites[n->s->device_site[b]].nccl_sockets;
  return N > 0 ? N : TRANSPORT_SOCKETS_DEFAULT;
}

/* The bytes of a message between different NICs cross both (netem, tcp). */
static bool wired(const hop_net *n, int a, int b) {
  return transport_is_shared(n->o.model) && n->nic[a] != n->nic[b];
}

/* Adds weight w to path id p of weights pw (a path of the phase). */
static void path_add(hop_net *n, double *pw, int p, double w) {
  if (p < 0) return; /* private */
  if (n->pw[p] == 0 && n->rpw[p] == 0) n->touched[n->ntouched++] = p;
  pw[p] += w;
}

/* The resources of the connection from -> to, sender first: NIC out, NIC
 * in, path (-1 where it crosses none: an unlimited NIC, a private pair). */
static void leg_res(const hop_net *n, int from, int to, int *res) {
  int nd = n->s->ndevices, nf = n->nic[from], nt = n->nic[to];
  int p = n->path ? scenario_path(n->s, from, to) : -1;
  res[0] = n->cap[nf] > 0 ? nf : -1;
  res[1] = n->cap[nt] > 0 ? nd + nt : -1;
  res[2] = p >= 0 ? 2 * nd + p : -1;
}

/* The engine's weight of a message of w sockets between a and b: w, over
 * the round trip under tcp (RTT-unfair shares, sim/net_tcp.c). */
static double engine_weight(const hop_net *n, int a, int b, int w) {
  if (!transport_is_windowed(n->o.model)) return w;
  double rtt = (scenario_link(n->s, a, b, 0).latency_ms +
                scenario_link(n->s, b, a, 0).latency_ms) / 1e3;
  return w / fmax(rtt, RTT_WEIGHT_FLOOR_S);
}

void hop_net_leg(hop_net *n, int a, int b, double bytes, double total,
                 int channels) {
  assert(n->nflow > 0);
  if (!wired(n, a, b)) return;
  int w = transport_sockets_dealt(channels, sockets_to(n, b), bytes);
  int wr = transport_sockets_dealt(channels, sockets_to(n, a), bytes);
  mem_grow((void **)&n->leg, &n->leg_cap, (size_t)n->nleg + 1, sizeof *n->leg);
  hop_leg *g = &n->leg[n->nleg++];
  *g = (hop_leg){.a = a, .b = b, .channels = channels, .flow = n->nflow - 1,
                 .part = n->flow[n->nflow - 1].part,
                 .bytes = bytes, .total = total, .w = {w, wr},
                 .we = {engine_weight(n, a, b, w), engine_weight(n, a, b, wr)}};
  leg_res(n, a, b, g->res[0]);
  leg_res(n, b, a, g->res[1]);
  n->flow[n->nflow - 1].n++;
  n->solved = false;
}

void hop_net_count(hop_net *n, int a, int b, double bytes, int channels) {
  if (!wired(n, a, b)) return;
  int w = transport_sockets_dealt(channels, sockets_to(n, b), bytes);
  int wr = transport_sockets_dealt(channels, sockets_to(n, a), bytes);
  n->out[n->nic[a]] += w;
  n->in[n->nic[b]] += w;
  n->rout[n->nic[b]] += wr;
  n->rin[n->nic[a]] += wr;
  if (!n->path) return;
  path_add(n, n->pw, scenario_path(n->s, a, b), w);
  path_add(n, n->rpw, scenario_path(n->s, b, a), wr);
}

/* The share of NIC capacity cap for a flow of weight w among total. */
static double nic_share(double cap, double w, double total) {
  return cap * w / (total > w ? total : w);
}

static double flow_cap_gbps(const hop_net *n, int d) {
  double g = n->s->sites[n->s->device_site[d]].flow_gbps;
  return g > 0 ? g : INFINITY;
}

/* The weights the hop a -> b shares its sender's NIC (eo), its receiver's
 * (ei) and its path (pw) with, and its own in their unit (mine; <= 0: its
 * sockets). */
typedef struct hop_totals {
  double eo, ei, pw, mine;
} hop_totals;

/* The phase's totals for a -> b (the reversed phase's when swapped). */
static hop_totals phase_totals(const hop_net *n, int a, int b) {
  int na = n->nic[a], nb = n->nic[b];
  int p = n->path ? scenario_path(n->s, a, b) : -1;
  return (hop_totals){.eo = n->swap ? n->rout[na] : n->out[na],
                      .ei = n->swap ? n->rin[nb] : n->in[nb],
                      .pw = p < 0 ? 0 : n->swap ? n->rpw[p] : n->pw[p]};
}

/* The hop a -> b sharing by the totals t: the link's rate (tc: the
 * sender's shaper split among `share`; path: its share of the path, a
 * private one whole), then the NICs' shares and the per-flow caps. */
static hop hop_with(const hop_net *n, int a, int b, double bytes, int share,
                    int channels, hop_totals t) {
  trace_value v = scenario_link(n->s, a, b, 0);
  trace_value back = scenario_link(n->s, b, a, 0);
  int N = sockets_to(n, b), ns = transport_sockets_dealt(channels, N, bytes);
  double rtt = (v.latency_ms + back.latency_ms) / 1e3;
  double w = t.mine > 0 ? t.mine : ns;
  const scenario *s = n->s;
  transport_path tp = transport_site_path(&n->o, s, s->device_site[a],
                                          s->device_site[b], &v, rtt);
  double bw = v.bandwidth_gbps * 1e9 / 8.0;
  bool priv = !n->path || scenario_path(s, a, b) < 0;
  hop h = {.lat = v.latency_ms / 1e3, .rtt = rtt,
           .rate = !n->path ? bw / (share > 1 ? share : 1)
                   : priv   ? bw
                            : nic_share(bw, w, t.pw),
           .window = tp.cwnd_max, .room = channels * N * tp.window,
           .channels = channels, .sockets = N};
  if (!wired(n, a, b)) return h; /* ideal, or NVLink inside an instance */
  int na = n->nic[a], nb = n->nic[b];
  if (n->cap[na] > 0) h.rate = fmin(h.rate, nic_share(n->cap[na], w, t.eo));
  if (n->cap[nb] > 0) h.rate = fmin(h.rate, nic_share(n->cap[nb], w, t.ei));
  double fg = fmin(flow_cap_gbps(n, a), flow_cap_gbps(n, b));
  if (isfinite(fg)) h.rate = fmin(h.rate, ns * fg * 1e9 / 8.0);
  return h;
}

/* The slot of connection (a, b, channels) in n's table. */
static unsigned slot_hash(const hop_net *n, int a, int b, int channels,
                          int part) {
  unsigned long long k = (unsigned long long)a * 0x9E3779B97F4A7C15ULL ^
                         (unsigned long long)b * 0xC2B2AE3D27D4EB4FULL ^
                         (unsigned long long)part * 0x165667B19E3779F9ULL ^
                         (unsigned long long)channels;
  return (unsigned)((k ^ (k >> 29)) & (unsigned long long)(n->nslot - 1));
}

/* The connection a -> b of `channels` channels of a flow's part `part`,
 * or NULL. */
static const hop_leg *leg_of(const hop_net *n, int a, int b, int channels,
                             int part) {
  if (!n->nslot) return NULL;
  unsigned i = slot_hash(n, a, b, channels, part);
  for (;; i = (i + 1) & (unsigned)(n->nslot - 1)) {
    int k = n->slot[i];
    if (k < 0) return NULL;
    const hop_leg *g = &n->leg[k];
    if (g->a == a && g->b == b && g->channels == channels && g->part == part)
      return g;
  }
}

/* The hop of leg g in direction d alone on its resources, one of `share`
 * on its tc shaper, for a message of bytes. */
static hop leg_alone(const hop_net *n, const hop_leg *g, int d, double bytes,
                     int share) {
  double w = g->we[d];
  hop_totals alone = {w, w, w, w};
  return d ? hop_with(n, g->b, g->a, bytes, share, g->channels, alone)
           : hop_with(n, g->a, g->b, bytes, share, g->channels, alone);
}

hop hop_of(const hop_net *n, int a, int b, double bytes, int share,
           int channels) {
  int d = n->swap;
  assert(n->solved || n->nleg == 0); /* a phase's flows solved before use */
  const hop_leg *g = d ? leg_of(n, b, a, channels, n->part)
                       : leg_of(n, a, b, channels, n->part);
  if (!g || !g->shared[d])
    return hop_with(n, a, b, bytes, share, channels, phase_totals(n, a, b));
  hop h = leg_alone(n, g, d, bytes, share);
  h.rate = fmin(h.rate, g->rate[d]);
  return h;
}

/* The table (a, b, channels) -> leg of the phase's connections. */
static void slots_build(hop_net *n) {
  int want = 1;
  while (want < 2 * n->nleg) want *= 2;
  if (want > n->nslot) {
    free(n->slot);
    n->slot = mem_alloc((size_t)want * sizeof *n->slot);
    n->nslot = want;
  }
  memset(n->slot, 0xff, (size_t)n->nslot * sizeof *n->slot);
  for (int k = 0; k < n->nleg && n->nleg; k++) {
    const hop_leg *g = &n->leg[k];
    unsigned i = slot_hash(n, g->a, g->b, g->channels, g->part);
    while (n->slot[i] >= 0) i = (i + 1) & (unsigned)(n->nslot - 1);
    n->slot[i] = k;
  }
}

/* The solve's scratch over every resource id of one direction. */
typedef struct share_ctx {
  int d, nres;
  int *last, *flows; /* per resource: the last job seen, jobs on it */
  int *lastl;        /* per resource: the last leg seen */
  bool *mixed;       /* per resource: one job's legs mixed (legs_mixed) */
  double *own;       /* per resource: one part's legs' own bounds summed,
                        where two or more of one job's cross it (else 0) */
  double *pass_own;  /* per resource: every pass leg's own bound summed */
  int *idx;          /* per resource: its index in the fill (-1) */
  bool *shared;      /* per flow */
} share_ctx;

/* Whether legs g and h (of one job, h before g) on one resource make its
 * split by the phase's counts wrong: of one flow, other weights or bytes
 * (the split by socket weight is not what the engine gives a flow's
 * coupled legs); of two parts, other connections (the counts add them,
 * the parts send one after the other: hier-ring's leader, whose NIC
 * carries its site's chains and the ring between the sites); of two
 * stretches of a flow passing whole messages, which never send at once. */
static bool legs_mixed(const hop_net *n, const hop_leg *g, const hop_leg *h,
                       int d) {
  if (h->flow == g->flow)
    return h->we[d] != g->we[d] || h->total != g->total;
  if (n->flow[g->flow].whole) return true; /* one after the other */
  return h->part != g->part && (h->a != g->a || h->b != g->b ||
                                h->channels != g->channels);
}

static double res_cap(const hop_net *n, const hop_leg *g, int d, int r);
static fill_leg fill_leg_of(const hop_net *n, const hop_leg *g, int d);

/* Which flows the fill shares: those with a resource that another flow
 * uses, or whose own legs on one are mixed (legs_mixed). */
static void share_mark(hop_net *n, share_ctx *x) {
  int d = x->d;
  for (int k = 0; k < n->nleg; k++)
    for (int j = 0; j < 3; j++) {
      const hop_leg *g = &n->leg[k];
      int r = g->res[d][j];
      if (r < 0) continue;
      int job = n->flow[g->flow].job;
      const hop_leg *h = x->last[r] == job ? &n->leg[x->lastl[r]] : NULL;
      if (h && legs_mixed(n, g, h, d)) x->mixed[r] = true;
      if (h && h->part == g->part && g->total > 0 && h->total > 0 &&
          !n->flow[g->flow].whole && !n->flow[g->flow].pieces)
        x->own[r] += (x->own[r] ? 0 : fill_leg_of(n, h, d).cap) +
                     fill_leg_of(n, g, d).cap;
      if (n->flow[g->flow].pass && g->total > 0 && !n->flow[g->flow].whole)
        x->pass_own[r] += fill_leg_of(n, g, d).cap;
      if (x->last[r] != job) x->flows[r]++;
      x->last[r] = job, x->lastl[r] = k;
    }
  for (int k = 0; k < n->nleg; k++)
    for (int j = 0; j < 3; j++) {
      int r = n->leg[k].res[d][j];
      if (r >= 0 && (x->flows[r] > 1 || x->mixed[r]) && n->leg[k].total > 0)
        x->shared[n->flow[n->leg[k].flow].job] = true;
    }
  for (int f = 0; f < n->nflow; f++) /* a flow's parts go together */
    x->shared[f] = x->shared[n->flow[f].job];
  for (int k = 0; k < n->nleg; k++) /* pipelines' boundaries together */
    for (int j = 0; j < 3; j++) {
      int r = n->leg[k].res[d][j];
      if (r >= 0 && x->flows[r] > 1 &&
          x->pass_own[r] > res_cap(n, &n->leg[k], d, r) * (1 + 1e-9)) {
        x->pass_own[r] = 0;
        n->ncoupled_pass++;
      }
    }
  for (int k = 0; k < n->nleg; k++) /* one job's legs bound together */
    for (int j = 0; j < 3; j++) {
      int r = n->leg[k].res[d][j];
      if (r >= 0 && x->own[r] > res_cap(n, &n->leg[k], d, r) * (1 + 1e-9)) {
        x->own[r] = 0;
        n->flow[n->leg[k].flow].pass ? n->ncoupled_pass++ : n->ncoupled++;
      }
    }
}

/* The capacity of resource id r (NIC out, NIC in, path) that leg g
 * crosses in direction d. */
static double res_cap(const hop_net *n, const hop_leg *g, int d, int r) {
  int nd = n->s->ndevices, from = d ? g->b : g->a, to = d ? g->a : g->b;
  if (r < 2 * nd) return n->cap[r % nd];
  return scenario_link(n->s, from, to, 0).bandwidth_gbps * 1e9 / 8.0;
}

/* h's rate alone, under a windowed model no more than its sockets'
 * windows deliver over its round trip. */
static double windowed(const hop_net *n, const hop *h, int sockets) {
  if (!transport_is_windowed(n->o.model) || h->rtt < 1e-9) return h->rate;
  return fmin(h->rate, sockets * h->window / h->rtt);
}

/* Leg g as the fill sees it in direction d: its bytes in the phase, the
 * engine's weight (sockets; over the RTT under tcp) and its own bound
 * (alone on its resources, tcp's windows): its flow's coupled legs share
 * what they cross by the bytes each moves (the fill's uses). */
static fill_leg fill_leg_of(const hop_net *n, const hop_leg *g, int d) {
  hop h = leg_alone(n, g, d, g->bytes, 1);
  return (fill_leg){.bytes = g->total, .cap = windowed(n, &h, g->w[d]),
                    .weight = g->we[d]};
}

/* The fill over the shared flows of direction x->d: each of their legs'
 * rate over its flow's life. */
static void share_fill(hop_net *n, share_ctx *x) {
  int d = x->d, nf = 0, nl = 0, nr = 0;
  fill_flow *ff = mem_alloc(((size_t)n->nflow + 1) * sizeof *ff);
  fill_leg *fl = mem_alloc(((size_t)n->nleg + 1) * sizeof *fl);
  double *cap = mem_alloc((3 * (size_t)n->nleg + 1) * sizeof *cap);
  int *of = mem_alloc(((size_t)n->nleg + 1) * sizeof *of);
  int *fidx = mem_alloc(2 * ((size_t)n->nflow + 1) * sizeof *fidx);
  int *down = fidx + n->nflow + 1; /* the reversed phase's upstream */
  for (int f = 0; f < n->nflow; f++) down[f] = -1;
  for (int f = 0; f < n->nflow; f++)
    if (n->flow[f].up >= 0) down[n->flow[f].up] = f;
  for (int f = 0; f < n->nflow; f++) {
    const hop_flow *h = &n->flow[f];
    if (!x->shared[f]) continue;
    fill_flow *cur = &ff[nf];
    fidx[f] = nf++;
    int up = d ? down[f] : h->up; /* whole: after it, not beside it */
    *cur = (fill_flow){.start = h->start, .cap = h->cap[d], .first = nl,
                       .after = h->whole && up >= 0 ? up : h->after,
                       .nafter = h->whole && up >= 0 ? 1 : h->nafter,
                       .up = up};
    for (int k = h->first; k < h->first + h->n; k++) {
      const hop_leg *g = &n->leg[k];
      if (!(g->total > 0)) continue; /* carries nothing: alone */
      cur->nlegs++;
      of[nl] = k;
      fl[nl] = fill_leg_of(n, g, d);
      for (int j = 0; j < 3; j++) {
        int r = g->res[d][j];
        if (r < 0) continue;
        if (x->idx[r] < 0) x->idx[r] = nr, cap[nr++] = res_cap(n, g, d, r);
        fl[nl].res[fl[nl].nres++] = x->idx[r];
      }
      nl++;
    }
  }
  double *finish = mem_alloc(((size_t)nf + 1) * sizeof *finish);
  double *rate = mem_alloc(((size_t)nl + 1) * sizeof *rate);
  for (int i = 0; i < nf; i++) { /* to the fill's numbers */
    if (ff[i].after >= 0) ff[i].after = fidx[ff[i].after];
    if (ff[i].up >= 0) ff[i].up = fidx[ff[i].up];
  }
  if (nf) n->nvaried += fill_solve(cap, nr, ff, nf, fl, finish, rate);
  n->nshared += nf;
  for (int k = 0; k < nl; k++) {
    n->leg[of[k]].shared[d] = true;
    n->leg[of[k]].rate[d] = rate[k];
  }
  free(ff), free(fl), free(cap), free(of), free(finish), free(rate);
  free(fidx);
}

void hop_net_solve(hop_net *n) {
  slots_build(n);
  int nd = n->s->ndevices;
  int nres = 2 * nd + (n->path ? n->s->nsites * n->s->nsites : 0);
  for (int d = 0; d < 2 && n->nleg > 1; d++) {
    share_ctx x = {.d = d, .nres = nres,
                   .last = mem_alloc((size_t)nres * sizeof(int)),
                   .lastl = mem_alloc((size_t)nres * sizeof(int)),
                   .flows = mem_calloc((size_t)nres, sizeof(int)),
                   .mixed = mem_calloc((size_t)nres, sizeof(bool)),
                   .own = mem_calloc((size_t)nres, sizeof(double)),
                   .pass_own = mem_calloc((size_t)nres, sizeof(double)),
                   .idx = mem_alloc((size_t)nres * sizeof(int)),
                   .shared = mem_calloc((size_t)n->nflow, sizeof(bool))};
    memset(x.last, 0xff, (size_t)nres * sizeof(int));
    memset(x.idx, 0xff, (size_t)nres * sizeof(int));
    for (int k = 0; k < n->nleg; k++) n->leg[k].shared[d] = false;
    share_mark(n, &x);
    share_fill(n, &x);
    free(x.last), free(x.flows), free(x.idx), free(x.shared);
    free(x.mixed), free(x.lastl), free(x.own), free(x.pass_own);
  }
  n->solved = true;
}

double hop_time_from(const hop_net *n, const hop *h, double bytes,
                     double *cwnd) {
  return transport_message_s(bytes, h->rtt, h->rate, h->channels, h->sockets,
                             n->o.model, h->window, cwnd);
}

double hop_time(const hop_net *n, const hop *h, double bytes) {
  double w = h->window;
  return hop_time_from(n, h, bytes, &w);
}

double hop_handed(const hop *h, double issue, double left, double bytes,
                  double x) {
  if (!(bytes > 0)) return fmax(issue, left);
  return fmax(issue, left - h->room * x / bytes);
}

bool hop_restarts(const hop_net *n) {
  return transport_is_windowed(n->o.model) && n->o.idle_restart;
}

double hop_first_extra(const hop_net *n, const hop *h, double bytes,
                       int flows, double *steady) {
  *steady = hop_time(n, h, bytes);
  if (!hop_restarts(n) || !(h->rtt > 0)) return 0;
  double cwnd = 0, sum = 0;
  for (int k = 0; k < flows; k++) {
    double before = cwnd, x = hop_time_from(n, h, bytes, &cwnd);
    *steady = x;
    if (k > 0 && cwnd == before) return sum - k * x;
    sum += x;
  }
  return sum - flows * *steady;
}

double hop_paced(const hop_net *n, const hop *h, double bytes, double x,
                 double pace) {
  double rto = h->rtt + TRANSPORT_TCP_RTO_MIN_S, idle = pace - x;
  if (!hop_restarts(n) || !(h->rtt > 0) || !(idle > rto)) return x;
  double w = transport_idle_window(h->window, idle, rto);
  return fmax(x, fmin(hop_time_from(n, h, bytes, &w), pace));
}

double hop_alone_rate(const hop_net *n, int a, int b, double bytes,
                      int channels) {
  if (!wired(n, a, b)) return 0;
  hop h = hop_with(n, a, b, bytes, 1, channels, (hop_totals){0, 0, 0, 0});
  return windowed(n, &h, transport_sockets_dealt(channels, sockets_to(n, b),
                                                 bytes));
}

int hop_nic_bound(const hop_net *n, int a, int b, double bytes, int channels) {
  if (!wired(n, a, b)) return -1;
  int na = n->nic[a], nb = n->nic[b];
  double ca = n->cap[na] > 0 ? n->cap[na] : INFINITY;
  double cb = n->cap[nb] > 0 ? n->cap[nb] : INFINITY;
  if (!isfinite(fmin(ca, cb))) return -1;
  hop h = hop_with(n, a, b, bytes, 1, channels, (hop_totals){0, 0, 0, 0});
  if (h.rate < fmin(ca, cb)) return -1; /* a link or a flow cap binds */
  return ca <= cb ? na : nb;
}

double hop_beside_rate(const hop_net *n, int a, int b, double bytes,
                       int channels, int c, double cbytes, int cchannels,
                       double *rc) {
  double rb = hop_alone_rate(n, a, b, bytes, channels);
  *rc = hop_alone_rate(n, a, c, cbytes, cchannels);
  double cap = n->cap[n->nic[a]];
  if (!(rb > 0) || !(*rc > 0) || !(cap > 0) || !(rb + *rc > cap)) return rb;
  double wb = engine_weight(n, a, b, transport_sockets_dealt(
                                         channels, sockets_to(n, b), bytes));
  double wc = engine_weight(n, a, c, transport_sockets_dealt(
                                         cchannels, sockets_to(n, c), cbytes));
  double sb = cap * wb / (wb + wc), sc = cap - sb; /* weighted max-min */
  if (rb < sb) return *rc = fmin(*rc, cap - rb), rb;
  if (*rc < sc) return cap - *rc;
  *rc = sc;
  return sb;
}
