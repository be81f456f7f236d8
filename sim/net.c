/* net: flows over shared resources with weighted max-min fair rates.
 * Invariant: every SENDING flow is listed in each of its resources' flow
 * lists (flow.pos[j] is its index in res[flow.res[j]]'s list), its bytes sent
 * are exact as of flow.t_upd, and its LEFT event sits at the time the
 * remaining bytes leave at its current rate. Resources: NIC egress/ingress
 * (netem, tcp), one egress shaper per sender per destination class (netem,
 * tcp: a class is a distinct (delay, rate) value at t = 0 among the sender's
 * destinations; its rate then follows the class's first destination), and
 * one private link per ordered pair (ideal). Rates are in bytes per ns.
 * Once next_change has answered TRACE_NEVER (static_from), link values read
 * from then on are final and cached: a pair's latency, a shaper's capacity.
 * Most solves are a flow alone on its resources: solve_alone and fill_one
 * do them with the general path's exact arithmetic, without its search. */
#include "sim/net.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

enum { EV_LEFT, EV_ARRIVE, EV_EPOCH, EV_TRACE, EV_OPEN, EV_HANDED, EV_SOCK };
enum { FLOW_FREE, FLOW_QUEUED, FLOW_OPENING, FLOW_SENDING, FLOW_INFLIGHT };
enum { RES_NIC, RES_SHAPER, RES_PAIR };
#define MAXRES 3
#define NONE UINT32_MAX

typedef struct flow {
  int a, b;
  uint8_t state, nres, nsock; /* nsock: sockets the message uses */
  bool slow_start, frozen, handed;
  double size, sent, rate, old, cap, w;
  double cwnd, rtt_ns; /* tcp: window per socket, round trip */
  double ep_sent;      /* tcp: bytes sent when the current epoch began */
  double flow_cap;     /* nsock x the path's per-flow cap (netem, tcp) */
  int64_t t_upd;
  double end_pos; /* its last byte's place in its connection's stream */
  uint32_t res[MAXRES], pos[MAXRES];
  uint32_t pair, tag, mark, next_free, next_q;
  sim_queue_event ev, ev_epoch;
} flow;

typedef struct res {
  double cap;
  int kind, a, b;  /* trace-driven kinds: capacity = link(a, b).bandwidth */
  uint32_t *fl, nfl, fcap;
  uint32_t mark, ver, unfrozen;
  double rem, wsum;
  bool fixed;  /* its capacity was read after static_from: it is final */
} res;

typedef struct pair {
  int a, b;
  uint32_t res;      /* its first resource: the private link (ideal) or the
                        sender's shaper for b's class (netem, tcp) */
  int sockets;       /* TCP sockets of the connection */
  double flow_bpns;  /* the path's cap per TCP flow, bytes/ns (INFINITY) */
  uint32_t qhead, qtail; /* its messages in issue order: the head sends */
  uint32_t waiter;   /* the oldest message not yet in the socket buffers */
  double issued;     /* bytes issued on the connection, in all */
  double done_bytes; /* bytes of its messages whose last byte has left */
  sim_queue_event ev_sock; /* when the head's rate brings waiter in */
  double cwnd;       /* tcp: window per socket kept by the connection */
  int64_t last_end;  /* tcp: when its last flow left (idle restarts) */
  int active;
  bool opened;       /* tcp: the connection's handshake is done */
  bool lat_ok;       /* lat_ms, lat_ns, rtt_ns read after static_from */
  double lat_ms, rtt_ns;
  int64_t lat_ns;
} pair;

typedef struct netcls {
  double lat, bw;  /* the class's key at t = 0 */
  uint32_t res;
} netcls;

typedef struct devcls {
  netcls *v;
  size_t n, cap;
} devcls;

typedef struct hent {
  double key;
  uint32_t id, ver;  /* ver == NONE: a flow-cap entry */
} hent;

struct sim_net {
  const sim_net_topo *topo;
  transport_model model;
  transport_options opt;
  double window;
  sim_queue *q;
  int base;
  sim_net_hooks hooks;

  flow *flows;
  size_t nflows, flows_cap;
  uint32_t free_flow;
  int sending;

  res *res;
  size_t nres, res_cap;
  uint32_t *nic_out, *nic_in; /* per NIC index, NONE when unlimited */
  devcls *cls;

  pair *pairs;
  size_t npairs, pairs_cap;
  uint32_t *htab; /* open addressing: pair index or NONE */
  size_t hcap;

  sim_net_conn conn; /* how a connection's first flow finds it */
  /* From this time on no link value changes (next_change said so), so a
   * value read at or after it holds for the rest of the run and is cached;
   * INT64_MAX while unknown. */
  int64_t static_from;
  sim_queue_event ev_trace;
  uint32_t epoch;
  uint32_t *cres, *cflow, *seeds;
  size_t ncres, cres_cap, ncflow, cflow_cap, nseeds, seeds_cap;
  hent *heap;
  size_t nheap, heap_cap;
  uint64_t solves, flows_solved;
  bool overflow; /* a LEFT event fired at the horizon (schedule_left) */
};

/* mem_grow's check inline: the scratch arrays below grow on hot paths, and
 * a call per element cost about 8% of a run. */
static inline void reserve(void *items, size_t *cap, size_t need, size_t size) {
  if (need > *cap) mem_grow(items, cap, need, size);
}

/* ---- resources ---- */

static uint32_t res_add(sim_net *n, int kind, double cap, int a, int b) {
  mem_grow((void **)&n->res, &n->res_cap, n->nres + 1, sizeof *n->res);
  res *r = &n->res[n->nres];
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->cap = cap;
  r->a = a;
  r->b = b;
  return (uint32_t)n->nres++;
}

static double gbps_to_bpns(double gbps) { return gbps / 8.0; }

static trace_value link_at(const sim_net *n, int a, int b, int64_t t) {
  return n->topo->link(n->topo->ctx, a, b, t);
}

/* The egress shaper of a for destination b (netem, tcp). */
static uint32_t shaper_of(sim_net *n, int a, int b) {
  trace_value v = link_at(n, a, b, 0);
  devcls *c = &n->cls[a];
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].lat == v.latency_ms && c->v[i].bw == v.bandwidth_gbps)
      return c->v[i].res;
  mem_grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v);
  uint32_t r = res_add(n, RES_SHAPER, 0, a, b);
  c->v[c->n++] = (netcls){v.latency_ms, v.bandwidth_gbps, r};
  return r;
}

/* ---- pairs: hash map (a, b) -> pair ---- */

static size_t hslot(size_t hcap, int a, int b) {
  uint64_t k = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
  k *= 0x9E3779B97F4A7C15ULL;
  return (size_t)(k >> 20) & (hcap - 1);
}

static void hash_insert(sim_net *n, uint32_t p) {
  size_t i = hslot(n->hcap, n->pairs[p].a, n->pairs[p].b);
  while (n->htab[i] != NONE) i = (i + 1) & (n->hcap - 1);
  n->htab[i] = p;
}

static uint32_t pair_get(sim_net *n, int a, int b) {
  size_t i = hslot(n->hcap, a, b);
  for (; n->htab[i] != NONE; i = (i + 1) & (n->hcap - 1)) {
    pair *p = &n->pairs[n->htab[i]];
    if (p->a == a && p->b == b) return n->htab[i];
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
  const int *sk = n->topo->sockets;
  const double *fg = n->topo->flow_gbps;
  double fa = fg && fg[a] > 0 ? fg[a] : INFINITY;
  double fb = fg && fg[b] > 0 ? fg[b] : INFINITY;
  n->pairs[id] = (pair){.a = a, .b = b, .res = NONE, .qhead = NONE,
                        .flow_bpns = gbps_to_bpns(fmin(fa, fb)),
                        .qtail = NONE, .waiter = NONE,
                        .ev_sock = SIM_QUEUE_NONE,
                        .sockets = sk ? sk[b] : TRANSPORT_SOCKETS_DEFAULT,
                        .cwnd = n->conn == SIM_NET_WARM
                                    ? n->window
                                    : TRANSPORT_TCP_INITIAL_WINDOW,
                        .last_end = INT64_MIN / 2};
  if (n->model == TRANSPORT_IDEAL) n->pairs[id].res = res_add(n, RES_PAIR, 0, a, b);
  else n->pairs[id].res = shaper_of(n, a, b);
  hash_insert(n, id);
  return id;
}

/* The one-way latency of pair p at now, in ms; *ns gets it in whole ns and
 * *rtt_ns the round trip there and back (the two directions may differ). */
static double pair_latency(sim_net *n, pair *p, int64_t now, int64_t *ns,
                           double *rtt_ns) {
  if (p->lat_ok) {
    *ns = p->lat_ns;
    *rtt_ns = p->rtt_ns;
    return p->lat_ms;
  }
  double ms = link_at(n, p->a, p->b, now).latency_ms;
  *ns = llround(ms * 1e6);
  *rtt_ns = 1e6 * (ms + link_at(n, p->b, p->a, now).latency_ms);
  if (now >= n->static_from) {
    p->lat_ok = true;
    p->lat_ms = ms;
    p->lat_ns = *ns;
    p->rtt_ns = *rtt_ns;
  }
  return ms;
}

/* ---- lifecycle ---- */

sim_net *sim_net_new(const sim_net_topo *topo, const transport_options *o,
                     sim_queue *q, int kind_base, sim_net_hooks hooks) {
  sim_net *n = mem_calloc(1, sizeof *n);
  transport_model model = o ? o->model : TRANSPORT_NETEM;
  n->topo = topo;
  n->opt = o ? *o : transport_options_default();
  n->model = model;
  n->window = transport_window(&n->opt);
  n->conn = SIM_NET_WARM;
  n->q = q;
  n->base = kind_base;
  n->hooks = hooks;
  n->free_flow = NONE;
  n->ev_trace = SIM_QUEUE_NONE;
  n->static_from = topo->next_change ? INT64_MAX : 0;
  n->hcap = 64;
  n->htab = mem_alloc(n->hcap * sizeof *n->htab);
  memset(n->htab, 0xff, n->hcap * sizeof *n->htab);
  n->cls = mem_calloc((size_t)topo->ndevices, sizeof *n->cls);
  int nn = topo->nic ? topo->nnics : 0;
  n->nic_out = mem_alloc((size_t)(nn + 1) * sizeof *n->nic_out);
  n->nic_in = mem_alloc((size_t)(nn + 1) * sizeof *n->nic_in);
  for (int i = 0; i < nn; i++) {
    bool lim = model != TRANSPORT_IDEAL && topo->nic_gbps[i] > 0 &&
               isfinite(topo->nic_gbps[i]);
    double c = gbps_to_bpns(topo->nic_gbps[i]);
    n->nic_out[i] = lim ? res_add(n, RES_NIC, c, -1, -1) : NONE;
    n->nic_in[i] = lim ? res_add(n, RES_NIC, c, -1, -1) : NONE;
  }
  return n;
}

void sim_net_free(sim_net *n) {
  if (!n) return;
  for (size_t i = 0; i < n->nres; i++) free(n->res[i].fl);
  for (int d = 0; d < n->topo->ndevices; d++) free(n->cls[d].v);
  free(n->cls);
  free(n->res);
  free(n->nic_out);
  free(n->nic_in);
  free(n->flows);
  free(n->pairs);
  free(n->htab);
  free(n->cres);
  free(n->cflow);
  free(n->seeds);
  free(n->heap);
  free(n);
}

static void seed(sim_net *n, uint32_t r) {
  reserve((void **)&n->seeds, &n->seeds_cap, n->nseeds + 1, sizeof *n->seeds);
  n->seeds[n->nseeds++] = r;
}

/* ---- weighted progressive filling on one component ---- */

/* The heap was reserved by fill for the whole solve. */
static inline void heap_push(sim_net *n, hent e) {
  size_t i = n->nheap++;
  while (i > 0 && n->heap[(i - 1) / 2].key > e.key) {
    n->heap[i] = n->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  n->heap[i] = e;
}

static inline hent heap_pop(sim_net *n) {
  hent top = n->heap[0], x = n->heap[--n->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n->nheap) break;
    if (c + 1 < n->nheap && n->heap[c + 1].key < n->heap[c].key) c++;
    if (!(n->heap[c].key < x.key)) break;
    n->heap[i] = n->heap[c];
    i = c;
  }
  if (n->nheap) n->heap[i] = x;
  return top;
}

/* Collects the component reachable from the seeds into cres/cflow. */
static void collect(sim_net *n) {
  n->epoch++;
  n->ncres = n->ncflow = 0;
  /* Each resource and flow enters at most once: no growth in the loops. */
  reserve((void **)&n->cres, &n->cres_cap, n->nres, sizeof *n->cres);
  reserve((void **)&n->cflow, &n->cflow_cap, n->nflows, sizeof *n->cflow);
  for (size_t i = 0; i < n->nseeds; i++) {
    res *r = &n->res[n->seeds[i]];
    if (r->mark == n->epoch) continue;
    r->mark = n->epoch;
    n->cres[n->ncres++] = n->seeds[i];
  }
  n->nseeds = 0;
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    for (uint32_t j = 0; j < r->nfl; j++) {
      flow *f = &n->flows[r->fl[j]];
      if (f->mark == n->epoch) continue;
      f->mark = n->epoch;
      n->cflow[n->ncflow++] = r->fl[j];
      for (int m = 0; m < f->nres; m++) {
        res *r2 = &n->res[f->res[m]];
        if (r2->mark == n->epoch) continue;
        r2->mark = n->epoch;
        n->cres[n->ncres++] = f->res[m];
      }
    }
  }
}

static void freeze(sim_net *n, flow *f, double rate) {
  f->frozen = true;
  f->rate = rate;
  for (int m = 0; m < f->nres; m++) {
    res *r = &n->res[f->res[m]];
    r->rem -= rate;
    r->wsum -= f->w;
    r->unfrozen--;
    r->ver++;
    if (r->unfrozen > 0)
      heap_push(n, (hent){fmax(r->rem, 0) / fmax(r->wsum, 1e-300),
                          (uint32_t)(r - n->res), r->ver});
  }
}

/* fill for a component of one flow, with the same arithmetic: each of its
 * resources offers cap / w, its own cap offers cap / w as well; fill pushes
 * the flow's cap first and the heap moves an entry up only past a strictly
 * greater key, so on a tie the flow's cap is taken. Most solves are this. */
static void fill_one(sim_net *n, flow *f) {
  double key = INFINITY;
  for (int m = 0; m < f->nres; m++) {
    double k = n->res[f->res[m]].cap / f->w;
    if (k < key) key = k;
  }
  f->frozen = true;
  f->rate = isfinite(f->cap) && f->cap / f->w <= key ? f->cap : f->w * key;
}

static void fill(sim_net *n) {
  if (n->ncflow == 1) {
    fill_one(n, &n->flows[n->cflow[0]]);
    return;
  }
  n->nheap = 0;
  /* At most one entry per flow and resource, plus one per resource a
   * freeze touches. */
  reserve((void **)&n->heap, &n->heap_cap,
          n->ncflow * (1 + MAXRES) + n->ncres, sizeof *n->heap);
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    r->rem = r->cap;
    r->wsum = 0;
    r->unfrozen = r->nfl;
    r->ver++;
  }
  for (size_t k = 0; k < n->ncflow; k++) {
    flow *f = &n->flows[n->cflow[k]];
    f->frozen = false;
    for (int m = 0; m < f->nres; m++) n->res[f->res[m]].wsum += f->w;
    if (isfinite(f->cap)) heap_push(n, (hent){f->cap / f->w, n->cflow[k], NONE});
  }
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    if (r->unfrozen) heap_push(n, (hent){r->rem / r->wsum, n->cres[k], r->ver});
  }
  while (n->nheap) {
    hent e = heap_pop(n);
    if (e.ver == NONE) {
      flow *f = &n->flows[e.id];
      if (!f->frozen) freeze(n, f, f->cap);
      continue;
    }
    res *r = &n->res[e.id];
    if (e.ver != r->ver || r->unfrozen == 0) continue;
    for (uint32_t j = 0; j < r->nfl; j++) {
      flow *f = &n->flows[r->fl[j]];
      if (!f->frozen) freeze(n, f, f->w * e.key);
    }
  }
}

/* A flow that would leave after the horizon is put at the horizon (or now,
 * past it), never later: a rate change may still bring it back (the event
 * moves), and if it fires there on_left records the overflow. */
static void schedule_left(sim_net *n, flow *f, int64_t now) {
  double left = f->size - f->sent;
  int64_t t = now;
  if (left > 1e-6) {
    double dt = ceil(left / f->rate);
    if ((double)now + dt < (double)SIM_NET_HORIZON_NS) t = now + (int64_t)dt;
    else t = now > SIM_NET_HORIZON_NS ? now : SIM_NET_HORIZON_NS;
  }
  if (f->ev == SIM_QUEUE_NONE)
    f->ev = sim_queue_push(n->q, t, n->base + EV_LEFT, (uint32_t)(f - n->flows));
  else if (sim_queue_time(n->q, f->ev) != t)
    sim_queue_move(n->q, f->ev, t);
}

/* Re-solves the component of the seeded resources at time now. */
/* Brings f's bytes sent up to now at its old rate, before a re-solve. */
static inline void advance(flow *f, int64_t now) {
  f->sent = fmin(f->size, f->sent + f->rate * (double)(now - f->t_upd));
  f->t_upd = now;
  f->old = f->rate;
}

static void sock_check(sim_net *n, uint32_t p, int64_t now, bool direct);

static inline void settle(sim_net *n, flow *f, int64_t now) {
  if (f->old != f->rate || f->ev == SIM_QUEUE_NONE) {
    schedule_left(n, f, now);
    if (n->pairs[f->pair].waiter != NONE) sock_check(n, f->pair, now, false);
  }
}

static void solve(sim_net *n, int64_t now) {
  size_t i = 0;
  while (i < n->nseeds && n->res[n->seeds[i]].nfl == 0) i++;
  if (i == n->nseeds) { /* the change touched no flow: nothing to solve */
    n->nseeds = 0;
    return;
  }
  collect(n);
  n->solves++;
  n->flows_solved += n->ncflow;
  for (size_t k = 0; k < n->ncflow; k++) advance(&n->flows[n->cflow[k]], now);
  fill(n);
  for (size_t k = 0; k < n->ncflow; k++) settle(n, &n->flows[n->cflow[k]], now);
}

/* solve after a change to f alone, when f is the only flow on each of its
 * resources and every pending seed is one of them: the component is f, so
 * this is solve without the search (most flows start on idle resources).
 * Returns false, doing nothing, otherwise. */
static bool solve_alone(sim_net *n, flow *f, int64_t now) {
  for (int m = 0; m < f->nres; m++)
    if (n->res[f->res[m]].nfl != 1) return false;
  for (size_t i = 0; i < n->nseeds; i++) {
    int m = 0;
    while (m < f->nres && f->res[m] != n->seeds[i]) m++;
    if (m == f->nres) return false;
  }
  n->nseeds = 0;
  n->solves++;
  n->flows_solved++;
  advance(f, now);
  fill_one(n, f);
  settle(n, f, now);
  return true;
}

/* ---- TCP state ---- */

/* The window bound of f's sockets (nsock windows per round trip), within
 * its path's per-flow cap. */
static double tcp_cap(const sim_net *n, const flow *f) {
  if (f->rtt_ns < 1) return f->flow_cap;
  return fmin(f->flow_cap,
              f->nsock * fmin(f->slow_start ? f->cwnd : n->window, n->window) /
                  f->rtt_ns);
}

/* tcp's weight of f: one per socket, RTT-unfair (a socket's share of a
 * congested queue goes as 1 / RTT). */
static double tcp_weight(const flow *f) {
  return f->nsock / fmax(f->rtt_ns, 1e3);
}

/* ---- trace changes ---- */

static void trace_arm(sim_net *n, int64_t now) {
  if (n->static_from != INT64_MAX || n->ev_trace != SIM_QUEUE_NONE) return;
  int64_t t = n->topo->next_change(n->topo->ctx, now);
  if (t != TRACE_NEVER)
    n->ev_trace = sim_queue_push(n->q, t, n->base + EV_TRACE, 0);
  else
    n->static_from = now;
}

static void refresh_res(sim_net *n, uint32_t id, int64_t now) {
  res *r = &n->res[id];
  if (r->kind == RES_NIC || r->fixed) return;
  double c = gbps_to_bpns(link_at(n, r->a, r->b, now).bandwidth_gbps);
  r->fixed = now >= n->static_from;
  if (c != r->cap) {
    r->cap = c;
    if (r->nfl) seed(n, id);
  }
}

static void on_trace(sim_net *n, int64_t now) {
  n->ev_trace = SIM_QUEUE_NONE;
  for (size_t i = 0; i < n->nres; i++)
    if (n->res[i].nfl) refresh_res(n, (uint32_t)i, now);
  if (n->model == TRANSPORT_TCP)
    for (size_t i = 0; i < n->nflows; i++) {
      flow *f = &n->flows[i];
      if (f->state != FLOW_SENDING) continue;
      f->rtt_ns = 1e6 * (link_at(n, f->a, f->b, now).latency_ms +
                         link_at(n, f->b, f->a, now).latency_ms);
      double c = tcp_cap(n, f);
      if (c != f->cap) {
        f->cap = c;
        f->w = tcp_weight(f);
        seed(n, f->res[0]);
      }
    }
  solve(n, now);
  if (n->sending) trace_arm(n, now);
}

/* ---- flows ---- */

static uint32_t flow_take(sim_net *n) {
  if (n->free_flow != NONE) {
    uint32_t id = n->free_flow;
    n->free_flow = n->flows[id].next_free;
    return id;
  }
  mem_grow((void **)&n->flows, &n->flows_cap, n->nflows + 1, sizeof *n->flows);
  return (uint32_t)n->nflows++;
}

static void attach(sim_net *n, flow *f, uint32_t rid) {
  res *r = &n->res[rid];
  if (r->nfl == r->fcap) {
    r->fcap = r->fcap ? 2 * r->fcap : 4;
    r->fl = mem_realloc(r->fl, r->fcap * sizeof *r->fl);
  }
  f->pos[f->nres] = r->nfl;
  f->res[f->nres++] = rid;
  r->fl[r->nfl++] = (uint32_t)(f - n->flows);
}

static void detach(sim_net *n, flow *f) {
  for (int m = 0; m < f->nres; m++) {
    res *r = &n->res[f->res[m]];
    uint32_t i = f->pos[m], last = r->fl[--r->nfl];
    r->fl[i] = last;
    flow *g = &n->flows[last];
    for (int k = 0; k < g->nres; k++)
      if (g->res[k] == f->res[m]) g->pos[k] = i;
    seed(n, f->res[m]);
  }
}

void sim_net_set_connections(sim_net *n, sim_net_conn state) {
  assert(n->npairs == 0); /* before the first flow */
  n->conn = state;
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

/* Puts flow id on its resources and solves: its bytes start leaving. */
static void begin(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  int a = f->a, b = f->b;
  uint32_t p = f->pair;
  f->state = FLOW_SENDING;
  f->t_upd = now;
  n->sending++;
  attach(n, f, n->pairs[p].res);
  if (n->model != TRANSPORT_IDEAL) {
    const int *nic = n->topo->nic;
    if (nic && nic[a] != nic[b]) {
      if (n->nic_out[nic[a]] != NONE) attach(n, f, n->nic_out[nic[a]]);
      if (n->nic_in[nic[b]] != NONE) attach(n, f, n->nic_in[nic[b]]);
    }
  }
  refresh_res(n, f->res[0], now);
  if (n->model == TRANSPORT_TCP) {
    pair *pr = &n->pairs[p];
    int64_t lat_ns;
    pair_latency(n, pr, now, &lat_ns, &f->rtt_ns);
    f->w = tcp_weight(f);
    pr->cwnd = connection_window(n, pr, f->rtt_ns, now);
    f->cwnd = pr->cwnd;
    f->slow_start = f->cwnd < n->window && f->rtt_ns >= 1;
    f->cap = tcp_cap(n, f);
    if (f->slow_start)
      f->ev_epoch = sim_queue_push(n->q, now + (int64_t)f->rtt_ns,
                                   n->base + EV_EPOCH, id);
  }
  n->pairs[p].active++;
  if (!solve_alone(n, f, now)) {
    seed(n, f->res[0]);
    solve(n, now);
  }
  trace_arm(n, now);
}

/* ---- socket buffers ----
 * A send completes when its last byte is in the sockets' send buffers
 * (sockets x window bytes per connection): at once when the connection's
 * bytes still to leave fit, else when enough have left. Bytes leave a
 * connection in issue order, the head message sending while the others
 * wait in its buffers. */

/* Bytes of p's stream that have left its sender by now. */
static double stream_left(const sim_net *n, const pair *p, int64_t now) {
  if (p->qhead == NONE) return p->done_bytes;
  const flow *h = &n->flows[p->qhead];
  if (h->state != FLOW_SENDING) return p->done_bytes;
  return p->done_bytes +
         fmin(h->size, h->sent + h->rate * (double)(now - h->t_upd));
}

/* Arms EV_SOCK for when the head's rate brings p's waiter into the buffers
 * (need bytes must leave first), or disarms it when that is not known yet
 * (the waiter lies beyond the head message: the head's end rechecks). */
static void sock_arm(sim_net *n, uint32_t p, double need, int64_t now) {
  pair *pr = &n->pairs[p];
  const flow *h = &n->flows[pr->qhead], *w = &n->flows[pr->waiter];
  double room = pr->sockets * n->window;
  int64_t t = -1;
  if (need > 0 && h->state == FLOW_SENDING && h->rate > 0 &&
      w->end_pos - room <= pr->done_bytes + h->size)
    t = now + (int64_t)ceil(need / h->rate);
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
static void sock_check(sim_net *n, uint32_t p, int64_t now, bool direct) {
  while (n->pairs[p].waiter != NONE) {
    pair *pr = &n->pairs[p];
    uint32_t id = pr->waiter;
    flow *w = &n->flows[id];
    double need = w->end_pos - pr->sockets * n->window - stream_left(n, pr, now);
    if (need > 1e-6) {
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

/* The head message of p starts: it opens the connection first when tcp
 * models new connections, else its bytes start leaving. */
static void head_start(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  pair *pr = &n->pairs[f->pair];
  f->state = FLOW_OPENING;
  if (n->model == TRANSPORT_TCP && n->conn == SIM_NET_NEW && !pr->opened) {
    pr->opened = true;
    int64_t lat_ns;
    double rtt_ns;
    pair_latency(n, pr, now, &lat_ns, &rtt_ns);
    sim_queue_push(n->q, now + llround(rtt_ns), n->base + EV_OPEN, id);
    return;
  }
  pr->opened = true;
  begin(n, id, now);
}

void sim_net_start(sim_net *n, int64_t now, int a, int b, double bytes,
                   uint32_t tag) {
  assert(a != b && a >= 0 && b >= 0 && bytes >= 0);
  uint32_t id = flow_take(n);
  uint32_t p = pair_get(n, a, b);
  flow *f = &n->flows[id];
  pair *pr = &n->pairs[p];
  int nsock = transport_sockets_used(pr->sockets, bytes);
  pr->issued += bytes;
  const int *nic = n->topo->nic;
  bool wire = !nic || nic[a] != nic[b]; /* not NVLink inside an instance */
  double flow_cap = n->model == TRANSPORT_IDEAL || !wire
                        ? INFINITY
                        : nsock * pr->flow_bpns;
  *f = (flow){.a = a, .b = b, .state = FLOW_QUEUED, .size = bytes,
              .nsock = (uint8_t)nsock, .cap = flow_cap, .flow_cap = flow_cap,
              .w = n->model == TRANSPORT_IDEAL ? 1 : nsock, .t_upd = now,
              .end_pos = pr->issued, .pair = p, .tag = tag,
              .next_q = NONE, .ev = SIM_QUEUE_NONE,
              .ev_epoch = SIM_QUEUE_NONE};
  if (pr->qtail != NONE) n->flows[pr->qtail].next_q = id;
  else pr->qhead = id;
  pr->qtail = id;
  if (pr->waiter == NONE) pr->waiter = id;
  if (pr->qhead == id) head_start(n, id, now);
  sock_check(n, p, now, false);
}

static void on_left(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  f->ev = SIM_QUEUE_NONE;
  if (now >= SIM_NET_HORIZON_NS) n->overflow = true;
  f->sent = f->size;
  f->state = FLOW_INFLIGHT;
  n->sending--;
  pair *p = &n->pairs[f->pair];
  p->active--;
  p->last_end = now;
  p->done_bytes = f->end_pos;
  assert(p->qhead == id);
  p->qhead = f->next_q;
  if (p->qhead == NONE) p->qtail = NONE;
  if (f->ev_epoch != SIM_QUEUE_NONE) {
    sim_queue_cancel(n->q, f->ev_epoch);
    f->ev_epoch = SIM_QUEUE_NONE;
  }
  /* slow start grows the window by the bytes acknowledged (RFC 5681): a
   * message that ends inside an epoch still grows it, by what it sent in
   * that epoch, so a stream of short messages ramps up as a long one does */
  if (n->model == TRANSPORT_TCP)
    p->cwnd = f->slow_start
                  ? fmin(n->window, f->cwnd + (f->size - f->ep_sent) / f->nsock)
                  : n->window;
  detach(n, f);
  f->nres = 0;
  solve(n, now);
  uint32_t pid = n->flows[id].pair, next = n->pairs[pid].qhead;
  if (next != NONE) head_start(n, next, now); /* back to back */
  sock_check(n, pid, now, false); /* hands id over if still waiting */
  int64_t lat_ns;
  double rtt_ns;
  pair_latency(n, &n->pairs[pid], now, &lat_ns, &rtt_ns);
  sim_queue_push(n->q, now + lat_ns, n->base + EV_ARRIVE, id);
  if (n->sending == 0 && n->ev_trace != SIM_QUEUE_NONE) {
    sim_queue_cancel(n->q, n->ev_trace);
    n->ev_trace = SIM_QUEUE_NONE;
  }
}

static void on_epoch(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  f->ev_epoch = SIM_QUEUE_NONE;
  /* Bound by the fair share rather than the window: slow start is over. */
  bool share_bound = f->rate < f->cap * (1 - 1e-9);
  f->cwnd *= 2;
  f->ep_sent = fmin(f->size, f->sent + f->rate * (double)(now - f->t_upd));
  if (share_bound || f->cwnd >= n->window) f->slow_start = false;
  f->cap = tcp_cap(n, f);
  if (f->slow_start)
    f->ev_epoch = sim_queue_push(n->q, now + (int64_t)f->rtt_ns,
                                 n->base + EV_EPOCH, id);
  if (!solve_alone(n, f, now)) {
    seed(n, f->res[0]);
    solve(n, now);
  }
}

void sim_net_handle(sim_net *n, const sim_queue_item *it) {
  switch (it->kind - n->base) {
    case EV_LEFT:
      on_left(n, it->arg, it->t_ns);
      break;
    case EV_ARRIVE: {
      flow *f = &n->flows[it->arg];
      uint32_t tag = f->tag;
      f->state = FLOW_FREE;
      f->next_free = n->free_flow;
      n->free_flow = it->arg;
      if (n->hooks.arrived) n->hooks.arrived(n->hooks.ctx, tag, it->t_ns);
      break;
    }
    case EV_EPOCH:
      on_epoch(n, it->arg, it->t_ns);
      break;
    case EV_TRACE:
      on_trace(n, it->t_ns);
      break;
    case EV_OPEN:
      begin(n, it->arg, it->t_ns);
      break;
    case EV_HANDED:
      if (n->hooks.left)
        n->hooks.left(n->hooks.ctx, n->flows[it->arg].tag, it->t_ns);
      break;
    case EV_SOCK:
      n->pairs[it->arg].ev_sock = SIM_QUEUE_NONE;
      sock_check(n, it->arg, it->t_ns, true);
      break;
    default:
      assert(!"not a net event");
  }
}

bool sim_net_owns(const sim_net *n, int kind) {
  return kind >= n->base && kind < n->base + SIM_NET_NKINDS;
}

int sim_net_sending(const sim_net *n) { return n->sending; }

bool sim_net_overflowed(const sim_net *n) { return n->overflow; }

double sim_net_rate_of(const sim_net *n, uint32_t tag) {
  for (size_t i = 0; i < n->nflows; i++)
    if (n->flows[i].state == FLOW_SENDING && n->flows[i].tag == tag)
      return n->flows[i].rate * 1e9;
  return -1;
}

uint64_t sim_net_solves(const sim_net *n) { return n->solves; }
uint64_t sim_net_flows_solved(const sim_net *n) { return n->flows_solved; }
