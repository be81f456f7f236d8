/* hivemind: see hivemind.h. The partition reproduces optimize_parts_lp's
 * optimum without an LP solver (water-filling over the peers sorted by
 * bandwidth). The closed form of a round follows sim/train_hivemind.c's
 * graph: each connection's slice and whole load from the rounds' fluid
 * flows (models/hivemind_flow.h; a NIC's processor sharing past
 * HIVEMIND_FLOW_MAX connections), then the reducers' chunks, the averages
 * behind them and the members' ordered applying, message by message. */
#include "models/hivemind.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/hivemind_flow.h"
#include "models/params.h"

int hivemind_dht_hops(int n) {
  int h = 1;
  for (long long k = HIVEMIND_DHT_BUCKET; k < n; k *= 2) h++;
  return h;
}

double hivemind_reduce_bytes(int n, double w) {
  return (n - 1) * ((w + 4) + 12 + 12 + (4 + w)) + 24 + 4 + 8;
}

double hivemind_apply_bytes(double w) { return (w + 4) + 8 + 12; }

/* A peer and its bandwidth, to sort by it. */
typedef struct ranked {
  double bw;
  int i;
} ranked;

/* Highest bandwidth first, ties by index (deterministic). */
static int by_bw(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->bw != b->bw) return a->bw > b->bw ? -1 : 1;
  return a->i - b->i;
}

/* The water level T of n peers (k of positive bandwidth, ord their
 * indices by bandwidth, highest first): sum_i max(0, (T b_i - 1) /
 * (n - 2)) = 1, found on the interval where the first m peers are active
 * (T b_m >= 1 >= T b_{m+1}). */
static double water_level(int n, int k, const int *ord, const double *bw) {
  double sum = 0, T = 0;
  for (int m = 1; m <= k; m++) {
    sum += bw[ord[m - 1]];
    T = (n - 2 + m) / sum;
    if (m == k || T * bw[ord[m]] <= 1) return T;
  }
  return T;
}

void hivemind_partition(int n, const double *bw, double *frac) {
  int k = 0, *ord = mem_alloc((size_t)n * sizeof *ord);
  ranked *r = mem_alloc((size_t)n * sizeof *r);
  for (int i = 0; i < n; i++) {
    r[i] = (ranked){bw[i], i};
    k += bw[i] > 0;
    frac[i] = 0;
  }
  qsort(r, (size_t)n, sizeof *r, by_bw);
  for (int i = 0; i < n; i++) ord[i] = r[i].i;
  free(r);
  if (k == 0) { /* no bandwidth declared: equal parts (load_balancing.py:30) */
    for (int i = 0; i < n; i++) frac[i] = 1.0 / n;
    free(ord);
    return;
  }
  if (n <= 2) { /* the LP's time does not depend on w: halves (one alone) */
    for (int i = 0; i < k; i++) frac[ord[i]] = 1.0 / k;
  } else {
    double T = water_level(n, k, ord, bw), sum = 0;
    for (int i = 0; i < k; i++) {
      double f = (T * bw[ord[i]] - 1) / (n - 2);
      frac[ord[i]] = f > 0 ? f : 0;
      sum += frac[ord[i]];
    }
    for (int i = 0; i < n; i++) frac[i] /= sum; /* rounding's drift */
  }
  for (int i = 0; i < n; i++) frac[i] = round(frac[i] * 1e9) / 1e9;
  free(ord);
}

double hivemind_lp_time(int n, const double *bw, const double *frac) {
  double t = 0;
  for (int i = 0; i < n; i++)
    if (bw[i] > 0) t = fmax(t, (1 + (n - 2) * frac[i]) / bw[i]);
  return t;
}

void hivemind_parts(long long size, int n, const double *frac,
                    long long *parts) {
  double total = 0;
  long long given = 0;
  for (int i = 0; i < n; i++) total += frac[i];
  for (int i = 0; i < n; i++) {
    parts[i] = (long long)((double)size * frac[i] / total);
    given += parts[i];
  }
  while (given < size) { /* at most n rounds */
    int best = 0;
    for (int i = 1; i < n; i++)
      if (frac[i] / (double)(parts[i] + 1) >
          frac[best] / (double)(parts[best] + 1))
        best = i;
    parts[best]++;
    given++;
  }
}

double hivemind_declared_bps(const scenario *s, const int *grp, int n,
                             int i) {
  const scenario_site *site = &s->sites[s->device_site[grp[i]]];
  double bps = INFINITY;
  if (site->nic_gbps > 0 && isfinite(site->nic_gbps)) {
    int behind = 1; /* the group's members behind its NIC */
    for (int j = 0; j < n && site->nic_shared; j++)
      behind += j != i && s->device_site[grp[j]] == s->device_site[grp[i]];
    bps = site->nic_gbps * 1e9 / 8 / behind;
  }
  for (int j = 0; j < n; j++)
    if (j != i)
      bps = fmin(bps, scenario_link(s, grp[i], grp[j], 0).bandwidth_gbps *
                          1e9 / 8);
  return bps;
}

void hivemind_fractions(const scenario *s, const int *grp, int n,
                        double *frac) {
  double *bw = mem_alloc((size_t)n * sizeof *bw), top = 0;
  for (int i = 0; i < n; i++) {
    bw[i] = hivemind_declared_bps(s, grp, n, i);
    if (isfinite(bw[i])) top = fmax(top, bw[i]);
  }
  for (int i = 0; i < n; i++) /* unlimited: as the fastest, or all equal */
    if (!isfinite(bw[i])) bw[i] = top > 0 ? top : 1;
  hivemind_partition(n, bw, frac);
  free(bw);
}

double hivemind_matchmaking_s(const scenario *s, const int *grp, int n,
                              double min_s) {
  double rtt = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      rtt = fmax(rtt, (scenario_link(s, grp[i], grp[j], 0).latency_ms +
                       scenario_link(s, grp[j], grp[i], 0).latency_ms) / 1e3);
  return fmax(min_s, (2 * hivemind_dht_hops(n) + 1) * rtt);
}

int hivemind_chunks(double bytes) {
  if (!(bytes > 0)) return 0;
  double c = ceil(bytes / HIVEMIND_PART_BYTES);
  return c > HIVEMIND_MAX_CHUNKS ? HIVEMIND_MAX_CHUNKS : (int)c;
}

/* A round's per-member figures: its part on the wire and its chunks, the
 * host's seconds to reduce and to apply one of them. */
typedef struct shape {
  double *part, *red, *app;
  int *C;
} shape;

static shape shape_of(const hivemind_round *r) {
  int n = r->n;
  shape x = {.part = mem_alloc(3 * (size_t)n * sizeof(double)),
             .C = mem_alloc((size_t)n * sizeof(int))};
  x.red = x.part + n, x.app = x.red + n;
  double w = r->values > 0 ? r->bytes / r->values : 0;
  for (int j = 0; j < n; j++) {
    x.part[j] = r->bytes * r->frac[j];
    x.C[j] = hivemind_chunks(x.part[j]);
    double v = x.C[j] ? r->values * r->frac[j] / x.C[j] : 0;
    x.red[j] = v * hivemind_reduce_bytes(n, w) * r->host_s_per_byte;
    x.app[j] = v * hivemind_apply_bytes(w) * r->host_s_per_byte;
  }
  return x;
}

static void shape_free(shape *x) { free(x->part), free(x->C); }

/* The bytes connection k -> j has sent when k's slice of j's part is
 * through: the slice's chunks alternate on it with k's averages to j, so
 * twice the slice, or all when the averages are fewer. */
static double slice_bytes(const shape *x, int k, int j) {
  return fmin(x->part[j] + (x->C[k] ? x->part[k] : 0), 2 * x->part[j]);
}

/* The bytes on connection i -> j: i's slice of j's part, and i's averages
 * to j; the larger of their chunks. */
static double conn_bytes(const shape *x, int i, int j) {
  return (x->C[j] ? x->part[j] : 0) + (x->C[i] ? x->part[i] : 0);
}
static double conn_chunk(const shape *x, int i, int j) {
  double a = x->C[j] ? x->part[j] / x->C[j] : 0;
  double b = x->C[i] ? x->part[i] / x->C[i] : 0;
  return a > b ? a : b;
}

void hivemind_count(hop_net *net, const hivemind_round *r) {
  shape x = shape_of(r);
  for (int i = 0; i < r->n; i++)
    for (int j = 0; j < r->n; j++)
      if (j != i && conn_bytes(&x, i, j) > 0)
        hop_net_count(net, r->grp[i], r->grp[j], conn_chunk(&x, i, j),
                      HIVEMIND_CHANNELS);
  shape_free(&x);
}

/* A connection's link values, to count the ones sharing a shaper. */
typedef struct klass {
  double lat, bw;
  int j;
} klass;

static int by_class(const void *x, const void *y) {
  const klass *a = x, *b = y;
  if (a->lat != b->lat) return a->lat < b->lat ? -1 : 1;
  if (a->bw != b->bw) return a->bw < b->bw ? -1 : 1;
  return a->j - b->j;
}

/* share[j]: member i's connections on the shaper of its one to j (tc: one
 * netem class, the same latency and bandwidth at t = 0, as sim/net_res.c
 * groups them; 1 when links are private). */
static void shares(const hop_net *net, const hivemind_round *r,
                   const shape *x, int i, int *share, klass *scratch) {
  int m = 0;
  for (int j = 0; j < r->n; j++) {
    share[j] = 1;
    if (j == i || !conn_bytes(x, i, j) || !transport_is_shared(net->o.model))
      continue;
    trace_value v = scenario_link(net->s, r->grp[i], r->grp[j], 0);
    scratch[m++] = (klass){v.latency_ms, v.bandwidth_gbps, j};
  }
  qsort(scratch, (size_t)m, sizeof *scratch, by_class);
  for (int a = 0, b; a < m; a = b) {
    for (b = a; b < m && scratch[b].lat == scratch[a].lat &&
                scratch[b].bw == scratch[a].bw; b++) {}
    for (int k = a; k < b; k++) share[scratch[k].j] = b - a;
  }
}

/* The rounds' connections through each NIC (NICs are device indices),
 * each direction apart: their byte counts sorted, with prefix sums, so
 * that a NIC's processor sharing among them is read in O(log): the first
 * X bytes of a connection through it are through once every connection
 * has sent min(its bytes, X). */
typedef struct nicload {
  size_t *off[2];  /* [out, in][nic .. nic + 1]: a NIC's slice */
  double *b[2], *sum[2];
} nicload;

static int by_size(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* Whether connection a -> b crosses NICs the rounds share (the engine's
 * NICs: shared models, different NICs, a capacity). */
static bool wired(const hop_net *net, int a, int b) {
  return transport_is_shared(net->o.model) && net->nic[a] != net->nic[b];
}

/* Calls add(ctx, nic, dir, bytes) for every connection of the rounds. */
static void each_conn(const hop_net *net, const hivemind_round *r,
                      const shape *x, int k,
                      void (*add)(nicload *, int, int, double), nicload *l) {
  for (int q = 0; q < k; q++)
    for (int i = 0; i < r[q].n; i++)
      for (int j = 0; j < r[q].n; j++) {
        int a = r[q].grp[i], b = r[q].grp[j];
        double B = i == j ? 0 : conn_bytes(&x[q], i, j);
        if (!(B > 0) || !wired(net, a, b)) continue;
        add(l, net->nic[a], 0, B);
        add(l, net->nic[b], 1, B);
      }
}

static void tally(nicload *l, int nic, int dir, double B) {
  (void)B;
  l->off[dir][nic + 1]++;
}
static void place(nicload *l, int nic, int dir, double B) {
  l->b[dir][l->off[dir][nic]++] = B;
}

static nicload nicload_of(const hop_net *net, const hivemind_round *r,
                          const shape *x, int k) {
  size_t nd = (size_t)net->s->ndevices;
  nicload l;
  for (int d = 0; d < 2; d++) l.off[d] = mem_calloc(nd + 2, sizeof(size_t));
  each_conn(net, r, x, k, tally, &l);
  for (int d = 0; d < 2; d++) {
    for (size_t i = 0; i < nd; i++) l.off[d][i + 1] += l.off[d][i];
    l.b[d] = mem_alloc((l.off[d][nd] + 1) * sizeof(double));
    l.sum[d] = mem_alloc((l.off[d][nd] + 1) * sizeof(double));
  }
  each_conn(net, r, x, k, place, &l); /* off[d][i] now ends slice i */
  for (int d = 0; d < 2; d++) {
    for (size_t i = nd; i > 0; i--) l.off[d][i] = l.off[d][i - 1];
    l.off[d][0] = 0;
    for (size_t i = 0; i < nd; i++) {
      size_t a = l.off[d][i], m = l.off[d][i + 1] - a;
      qsort(l.b[d] + a, m, sizeof(double), by_size);
      for (size_t t = 0; t < m; t++)
        l.sum[d][a + t] = (t ? l.sum[d][a + t - 1] : 0) + l.b[d][a + t];
    }
  }
  return l;
}

static void nicload_free(nicload *l) {
  for (int d = 0; d < 2; d++) free(l->off[d]), free(l->b[d]), free(l->sum[d]);
}

/* Seconds until NIC nic (direction dir, capacity cap bytes/s) has sent X
 * bytes of one of its connections: sum over them of min(bytes, X) / cap. */
static double nic_ps(const nicload *l, int nic, int dir, double cap,
                     double X) {
  size_t a = l->off[dir][nic], m = l->off[dir][nic + 1] - a, lo = 0, hi = m;
  const double *v = l->b[dir] + a;
  while (lo < hi) { /* the first of them >= X */
    size_t mid = (lo + hi) / 2;
    if (v[mid] < X) lo = mid + 1;
    else hi = mid;
  }
  return ((lo ? l->sum[dir][a + lo - 1] : 0) + (double)(m - lo) * X) / cap;
}

/* A connection of the rounds: its hop on the links alone (the NICs are
 * nicload's) and its sender's and receiver's NICs. */
typedef struct conn {
  hop h;
  int na, nb;
  bool wired;
} conn;

/* The NICs' capacities removed from net: the links alone. */
static hop_net links_only(const hop_net *net, double *zero) {
  hop_net lk = *net;
  lk.cap = zero;
  return lk;
}

static conn conn_of(const hop_net *lk, const hivemind_round *r,
                    const shape *x, int i, int j, int share) {
  int a = r->grp[i], b = r->grp[j];
  return (conn){.h = hop_of(lk, a, b, conn_chunk(x, i, j), share,
                            HIVEMIND_CHANNELS),
                .na = lk->nic[a], .nb = lk->nic[b], .wired = wired(lk, a, b)};
}

/* Seconds the connection takes to send its first X bytes. */
static double conn_s(const hop_net *net, const hop_net *lk, const nicload *l,
                     const conn *c, double X) {
  double t = hop_time(lk, &c->h, X);
  if (!c->wired) return t;
  if (net->cap[c->na] > 0) t = fmax(t, nic_ps(l, c->na, 0, net->cap[c->na], X));
  if (net->cap[c->nb] > 0) t = fmax(t, nic_ps(l, c->nb, 1, net->cap[c->nb], X));
  return t;
}

/* The same for X bytes sent alone on the connection's NICs (a round's
 * last chunk, after the others have finished). */
static double conn_alone_s(const hop_net *net, const hop_net *lk,
                           const conn *c, double X) {
  double t = hop_time(lk, &c->h, X);
  if (!c->wired) return t;
  if (net->cap[c->na] > 0) t = fmax(t, X / net->cap[c->na]);
  if (net->cap[c->nb] > 0) t = fmax(t, X / net->cap[c->nb]);
  return t;
}

/* What the closed form evaluates the rounds on: the net, its links
 * alone, the NICs' loads, scratch; and for the round at hand, when the
 * rounds ran as fluid flows (hivemind_flow), when each connection i -> j
 * is through its slice (tm[i n + j]) and all its bytes (ta), else NULL. */
typedef struct eval {
  const hop_net *net;
  hop_net lk;
  const nicload *l;
  int *share;
  klass *scratch;
  const double *tm, *ta;
} eval;

/* When reducer j has the first (f0) and the last (a) of its senders'
 * chunks, and when member k's connections have handed their last byte to
 * the sockets (hand[k]: its slices here, its averages' lag added by
 * run_round). */
typedef struct inputs {
  double *f0, *a, *hand;
} inputs;

/* Pass over senders k: each connection k -> j carries k's slice of j's
 * part interleaved, chunk for chunk, with k's averages to j, so the
 * slice is through after min(all, twice the slice) of its bytes. */
static void arrivals(eval *e, const hivemind_round *r, const shape *x,
                     const double *ready, inputs *in) {
  int n = r->n;
  for (int j = 0; j < n; j++)
    in->f0[j] = in->a[j] = in->hand[j] = ready ? ready[j] : 0;
  for (int k = 0; k < n; k++) {
    double b = ready ? ready[k] : 0;
    shares(e->net, r, x, k, e->share, e->scratch);
    for (int j = 0; j < n; j++) {
      double B = j == k ? 0 : conn_bytes(x, k, j);
      if (!(B > 0)) continue;
      conn c = conn_of(&e->lk, r, x, k, j, e->share[j]);
      size_t kj = (size_t)k * n + j;
      double all = e->ta ? e->ta[kj] - b : conn_s(e->net, &e->lk, e->l, &c, B);
      in->hand[k] = fmax(in->hand[k], b + all - c.h.room * all / B);
      if (!x->C[j]) continue;
      double slice = e->tm ? e->tm[kj] - b
                           : conn_s(e->net, &e->lk, e->l, &c,
                                    slice_bytes(x, k, j));
      double first = conn_s(e->net, &e->lk, e->l, &c, x->part[j] / x->C[j]);
      in->a[j] = fmax(in->a[j], b + slice + c.h.lat);
      in->f0[j] = fmax(in->f0[j], b + first + c.h.lat);
    }
  }
}

/* One round from ready (NULL: 0) into done. */
static void run_round(eval *e, const hivemind_round *r, const shape *x,
                      const double *ready, double *done) {
  int n = r->n;
  double *v = mem_alloc(5 * (size_t)n * sizeof *v);
  inputs in = {.f0 = v, .a = v + n, .hand = v + 2 * n};
  double *red = v + 3 * n, *red1 = v + 4 * n; /* last, first chunk reduced */
  arrivals(e, r, x, ready, &in);
  for (int j = 0; j < n; j++) {
    red[j] = fmax(in.a[j] + x->red[j], in.f0[j] + x->C[j] * x->red[j]);
    red1[j] = in.f0[j] + x->red[j];
    done[j] = ready ? ready[j] : 0; /* its apply stream so far */
  }
  for (int j = 0; j < n; j++) { /* reducers in peers' order */
    if (!x->C[j]) continue;
    shares(e->net, r, x, j, e->share, e->scratch);
    for (int i = 0; i < n; i++) {
      double last = red[j], first = red1[j];
      if (i != j) {
        conn c = conn_of(&e->lk, r, x, j, i, e->share[i]);
        double B = conn_bytes(x, j, i);
        double cb = x->part[j] / x->C[j];
        double one = conn_alone_s(e->net, &e->lk, &c, cb);
        double b = ready ? ready[j] : 0;
        double all = e->ta ? e->ta[(size_t)j * n + i] - b
                           : conn_s(e->net, &e->lk, e->l, &c, B);
        double left = fmax(red[j] + one, b + all);
        in.hand[j] = fmax(in.hand[j], left - c.h.room * all / B);
        last = left + c.h.lat;
        first = red1[j] + conn_s(e->net, &e->lk, e->l, &c, cb) + c.h.lat;
      }
      done[i] = fmax(fmax(done[i], first) + x->C[j] * x->app[j],
                     last + x->app[j]);
    }
  }
  for (int i = 0; i < n; i++) done[i] = fmax(done[i], in.hand[i]);
  free(v);
}

/* The fluid's resources beyond the NICs (2 nd of them, out then in):
 * under path shaping a path's (scenario_path), under tc sender a's shaper
 * of one netem class (the same latency and bandwidth at t = 0, as
 * sim/net_res.c's); a private link is the flow's own bound. */
typedef struct links {
  const hop_net *net;
  int nd, n;
  double *cap;     /* every resource's capacity, bytes/s */
  klass *cls;      /* tc: the classes met, by sender (cls[k].j: sender) */
} links;

static int link_res(links *L, int a, int b) {
  const hop_net *net = L->net;
  trace_value v = scenario_link(net->s, a, b, 0);
  if (!transport_is_shared(net->o.model)) return -1;
  int id = -1;
  if (net->path) {
    int p = scenario_path(net->s, a, b);
    if (p < 0) return -1;
    id = 2 * L->nd + p;
  } else {
    int k = 0;
    while (k < L->n && !(L->cls[k].j == a && L->cls[k].lat == v.latency_ms &&
                         L->cls[k].bw == v.bandwidth_gbps))
      k++;
    if (k == L->n) L->cls[L->n++] = (klass){v.latency_ms, v.bandwidth_gbps, a};
    id = 2 * L->nd + net->s->nsites * net->s->nsites + k;
  }
  L->cap[id] = v.bandwidth_gbps * 1e9 / 8;
  return id;
}

/* The flow of connection i -> j of round r (B bytes). */
static hivemind_flow flow_of(eval *e, links *L, const hivemind_round *r,
                             const shape *x, int i, int j, double begin) {
  const hop_net *net = e->net;
  double B = conn_bytes(x, i, j);
  hop_net own = e->lk; /* the link whole: its sharing is the fluid's */
  own.path = false;
  conn c = conn_of(&own, r, x, i, j, 1);
  bool out = c.wired && net->cap[c.na] > 0, in = c.wired && net->cap[c.nb] > 0;
  double w = 1; /* tcp: its sockets over its round trip (sim/net_tcp.c) */
  if (transport_is_windowed(net->o.model))
    w = transport_sockets_dealt(c.h.channels, c.h.sockets, conn_chunk(x, i, j)) /
        fmax(c.h.rtt, 1e-6);
  return (hivemind_flow){
      .begin = begin, .bytes = B,
      .mark = x->C[j] ? slice_bytes(x, i, j) : B,
      .cap = B / hop_time(&own, &c.h, B), .w = w,
      .res = {out ? c.na : -1, in ? L->nd + c.nb : -1,
              link_res(L, r->grp[i], r->grp[j])}};
}

/* The rounds' connections as fluid flows (hivemind_flow): into tm[q] and
 * ta[q] (n x n each, by sender), when each is through its slice and its
 * bytes; false (nothing written) past HIVEMIND_FLOW_MAX connections. */
static bool fluid(eval *e, const hivemind_round *r, const shape *x, int k,
                  const double *const *ready, double **tm, double **ta) {
  int nf = 0, nd = e->net->s->ndevices, ns = e->net->s->nsites;
  for (int q = 0; q < k; q++) nf += r[q].n * (r[q].n - 1);
  if (nf > HIVEMIND_FLOW_MAX) return false;
  int nres = 2 * nd + ns * ns + nf;
  links L = {.net = e->net, .nd = nd,
             .cap = mem_alloc((size_t)nres * sizeof(double)),
             .cls = mem_alloc(((size_t)nf + 1) * sizeof(klass))};
  for (int d = 0; d < nres; d++) L.cap[d] = d < 2 * nd ? e->net->cap[d % nd] : 1;
  hivemind_flow *f = mem_alloc(((size_t)nf + 1) * sizeof *f);
  int m = 0;
  for (int q = 0; q < k; q++)
    for (int i = 0; i < r[q].n; i++)
      for (int j = 0; j < r[q].n; j++)
        if (j != i && conn_bytes(&x[q], i, j) > 0)
          f[m++] = flow_of(e, &L, &r[q], &x[q], i, j,
                           ready && ready[q] ? ready[q][i] : 0);
  hivemind_flow_run(f, m, L.cap, nres);
  m = 0;
  for (int q = 0; q < k; q++)
    for (int i = 0; i < r[q].n; i++)
      for (int j = 0; j < r[q].n; j++) {
        size_t ij = (size_t)i * r[q].n + j;
        if (j == i || !(conn_bytes(&x[q], i, j) > 0)) continue;
        tm[q][ij] = f[m].t_mark, ta[q][ij] = f[m].t_all, m++;
      }
  free(f), free(L.cap), free(L.cls);
  return true;
}

void hivemind_run(hop_net *net, const hivemind_round *r, int k,
                  const double *const *ready, double *const *done) {
  int most = 0;
  shape *x = mem_alloc((size_t)k * sizeof *x);
  for (int q = 0; q < k; q++) {
    x[q] = shape_of(&r[q]);
    most = r[q].n > most ? r[q].n : most;
  }
  nicload l = nicload_of(net, r, x, k);
  double *zero = mem_calloc((size_t)net->s->ndevices, sizeof *zero);
  eval e = {.net = net, .lk = links_only(net, zero), .l = &l,
            .share = mem_alloc((size_t)most * sizeof(int)),
            .scratch = mem_alloc((size_t)most * sizeof(klass))};
  double **tm = mem_alloc(2 * (size_t)k * sizeof *tm), **ta = tm + k;
  for (int q = 0; q < k; q++) {
    size_t nn = (size_t)r[q].n * (size_t)r[q].n;
    tm[q] = mem_alloc(2 * nn * sizeof **tm), ta[q] = tm[q] + nn;
  }
  bool fl = fluid(&e, r, x, k, ready, tm, ta);
  for (int q = 0; q < k; q++) {
    e.tm = fl ? tm[q] : NULL, e.ta = fl ? ta[q] : NULL;
    run_round(&e, &r[q], &x[q], ready ? ready[q] : NULL, done[q]);
    shape_free(&x[q]);
    free(tm[q]);
  }
  free(tm), free(x), free(zero), free(e.share), free(e.scratch);
  nicload_free(&l);
}

/* Stage st's round: its members (the leader first), the round's inputs,
 * and when each member begins (into begin) from ready. */
static double round_of(const spec_workload *w, const alloc *a, int st,
                       const scenario *s, const double *ready, int *grp,
                       double *frac, double *begin, hivemind_round *r) {
  int R = a->replicas;
  for (int i = 0; i < R; i++) grp[i] = alloc_at(a, i, st);
  hivemind_fractions(s, grp, R, frac);
  *r = (hivemind_round){.grp = grp, .n = R,
                        .bytes = compress_gradient_bytes(w, st),
                        .values = spec_stage_params(w, st), .frac = frac,
                        .host_s_per_byte =
                            params_get(PARAMS_HIVEMIND_HOST_S_PER_BYTE)};
  double win = hivemind_matchmaking_s(s, grp, R, w->given.matchmaking_s);
  double go = spec_dp_delayed(w) ? 0 : win;
  for (int i = 0; i < R && ready; i++)
    go = fmax(go, ready[(size_t)i * a->stages + st]);
  for (int i = 0; i < R && begin; i++)
    begin[i] = go + (i ? scenario_link(s, grp[0], grp[i], 0).latency_ms / 1e3
                       : 0);
  return win;
}

double hivemind_rounds(hop_net *net, const spec_workload *w, const alloc *a,
                       double *ready) {
  int R = a->replicas, D = a->stages;
  size_t RD = (size_t)R * D;
  if (R < 2) { /* no round; delayed, the previous step's optimizer step
                  runs from the start beside the passes */
    for (size_t i = 0; i < RD && spec_dp_delayed(w); i++) ready[i] = 0;
    return 0;
  }
  int *grp = mem_alloc(RD * sizeof *grp);
  double *v = mem_alloc(3 * RD * sizeof *v), *frac = v, *begin = v + RD,
         *done = v + 2 * RD, last = 0;
  const double *in = spec_dp_delayed(w) ? NULL : ready;
  hivemind_round *r = mem_alloc((size_t)D * sizeof *r);
  double **b = mem_alloc(2 * (size_t)D * sizeof *b), **dn = b + D;
  hop_net_reset(net);
  for (int st = 0; st < D; st++) {
    size_t o = (size_t)st * R;
    last = fmax(last, round_of(w, a, st, net->s, in, grp + o, frac + o,
                               begin + o, &r[st]));
    hivemind_count(net, &r[st]);
    b[st] = begin + o, dn[st] = done + o;
  }
  hivemind_run(net, r, D, (const double *const *)b, dn);
  for (int st = 0; st < D; st++)
    for (int i = 0; i < R; i++) ready[(size_t)i * D + st] = dn[st][i];
  free(grp), free(v), free(r), free(b);
  return last;
}
