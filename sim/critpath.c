/* critpath: see critpath.h. The predecessors come from the graph's edge
 * list as built (sim_graph_edges), turned into a reverse CSR once; the walk
 * is then O(path + its tasks' in-edges). Ties (two predecessors firing at
 * the same ns) go to the first edge added, so the path is reproducible. */
#include "sim/critpath.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/linkstats.h"

#define SIM_CP_NAME_(id, name) name,
const char *const sim_cp_phase_names[SIM_CP_NPHASES] = {
    SIM_CP_PHASE_MAP(SIM_CP_NAME_)};
const char *const sim_cp_cause_names[SIM_CP_NCAUSES] = {
    SIM_CP_CAUSE_MAP(SIM_CP_NAME_)};
const char *const sim_cp_class_names[SIM_CP_NCLASSES] = {
    "compute", "wan", "lan", "barrier", "wait"};

static double gbps_or_inf(double g) { return g > 0 && isfinite(g) ? g : INFINITY; }

/* The NIC a device sends and receives through: one per device, or one per
 * site whose GPUs share it (sim.c's devices_layout). */
static bool same_nic(const scenario *s, int a, int b) {
  int sa = s->device_site[a], sb = s->device_site[b];
  return sa == sb && s->sites[sa].nic_shared;
}

sim_flow_bounds sim_critpath_bounds(const scenario *s,
                                    const transport_options *o,
                                    const sim_task *t) {
  int a = t->dev, b = t->dst;
  int64_t at = t->t_start > 0 ? t->t_start : 0;
  trace_value v = scenario_link(s, a, b, at);
  trace_value back = scenario_link(s, b, a, at);
  const scenario_site *sa = &s->sites[s->device_site[a]];
  const scenario_site *sb = &s->sites[s->device_site[b]];
  double rtt_ns = 1e6 * (v.latency_ms + back.latency_ms);
  int nsock = transport_sockets_dealt(t->channels, sb->nccl_sockets, t->bytes);
  sim_flow_bounds r = {.link_gbps = v.bandwidth_gbps, .nic_gbps = INFINITY,
                       .flowcap_gbps = INFINITY, .window_gbps = INFINITY,
                       .loss_gbps = INFINITY, .latency_s = v.latency_ms * 1e-3,
                       .rtt_s = rtt_ns * 1e-9, .sockets = nsock};
  bool wire = !same_nic(s, a, b); /* not NVLink inside an instance */
  if (transport_is_shared(o->model) && wire) {
    r.nic_gbps = fmin(gbps_or_inf(sa->nic_gbps), gbps_or_inf(sb->nic_gbps));
    r.flowcap_gbps =
        nsock * fmin(gbps_or_inf(sa->flow_gbps), gbps_or_inf(sb->flow_gbps));
  }
  /* net_tcp.c: a window per socket per round trip, wire or not, once the
   * round trip is at least a ns (the connection's cwnd_max: its window, or
   * on a lossy path its loss bound when that is less) */
  if (transport_is_windowed(o->model)) {
    transport_path tp = transport_site_path(o, s, s->device_site[a],
                                            s->device_site[b], &v, r.rtt_s);
    r.window_bytes = tp.window;
    r.cwnd_bytes = tp.cwnd_max;
    if (rtt_ns >= 1) {
      r.window_gbps = 8 * nsock * tp.window / rtt_ns;
      if (tp.cwnd_max < tp.window) r.loss_gbps = 8 * nsock * tp.cwnd_max / rtt_ns;
    }
  }
  const double g[] = {r.link_gbps, r.nic_gbps, r.flowcap_gbps, r.window_gbps,
                      r.loss_gbps};
  const sim_cp_cause c[] = {SIM_CP_CAUSE_LINK, SIM_CP_CAUSE_NIC,
                            SIM_CP_CAUSE_FLOWCAP, SIM_CP_CAUSE_WINDOW,
                            SIM_CP_CAUSE_LOSS};
  r.bound_gbps = g[0];
  r.least = c[0];
  for (int i = 1; i < 5; i++)
    if (g[i] < r.bound_gbps) r.bound_gbps = g[i], r.least = c[i];
  return r;
}

sim_cp_cause sim_critpath_cause(const sim_flow_bounds *b, double mean_gbps) {
  return mean_gbps >= b->bound_gbps * (1 - SIM_CP_BOUND_TOL)
             ? b->least
             : SIM_CP_CAUSE_SHARED;
}

static sim_cp_phase phase_of(sim_task_role role) {
  switch (role) {
    case SIM_ROLE_FWD: case SIM_ROLE_ACT: return SIM_CP_FWD;
    case SIM_ROLE_BWD: case SIM_ROLE_GRAD: return SIM_CP_BWD;
    case SIM_ROLE_DP: case SIM_ROLE_SYNC: case SIM_ROLE_MATCH:
    case SIM_ROLE_HOST: return SIM_CP_DP;
    case SIM_ROLE_OPT: return SIM_CP_OPT;
    case SIM_ROLE_BARRIER: case SIM_ROLE_CALL: return SIM_CP_OTHER;
  }
  assert(!"unknown task role");
  return SIM_CP_OTHER;
}

/* The predecessors of every task: in-edges by target (CSR, in edge order),
 * and the completion-order predecessor. */
typedef struct preds {
  uint32_t *off, *src, *ord;
  uint8_t *when;
} preds;

static void preds_build(preds *p, const sim_edge *e, size_t ne, uint32_t n) {
  p->off = mem_calloc((size_t)n + 2, sizeof *p->off);
  p->ord = mem_alloc(((size_t)n + 1) * sizeof *p->ord);
  memset(p->ord, 0xff, ((size_t)n + 1) * sizeof *p->ord);
  for (size_t k = 0; k < ne; k++)
    if (e[k].when == SIM_EDGE_ORDER) p->ord[e[k].b] = e[k].a;
    else p->off[e[k].b + 2]++;
  for (uint32_t i = 0; i < n; i++) p->off[i + 2] += p->off[i + 1];
  size_t m = p->off[n + 1];
  p->src = mem_alloc((m + 1) * sizeof *p->src);
  p->when = mem_alloc(m + 1);
  for (size_t k = 0; k < ne; k++) {
    if (e[k].when == SIM_EDGE_ORDER) continue;
    uint32_t at = p->off[e[k].b + 1]++;
    p->src[at] = e[k].a;
    p->when[at] = e[k].when;
  }
}

static void preds_free(preds *p) {
  free(p->off), free(p->src), free(p->ord), free(p->when);
}

static int64_t trigger(const sim_task *t, uint8_t when) {
  return when == SIM_ON_LEFT ? t->t_left : t->t_done;
}

typedef struct walk {
  sim_cp_step *v;
  size_t n, cap;
} walk;

static void push(walk *w, sim_cp_step x) {
  mem_grow((void **)&w->v, &w->cap, w->n + 1, sizeof *w->v);
  w->v[w->n++] = x;
}

/* What the walk reads: the run, its predecessors and each transfer's
 * first moment on the wire (its connection free). */
typedef struct ctx {
  const scenario *s;
  const transport_options *o;
  const sim_task *t;
  const int64_t *w0, *w1;
} ctx;

/* The transfer part of step st of task k over [t0, t1]: its sites, class,
 * queueing, rate and what bounded it. */
static void xfer_step(const ctx *c, uint32_t k, int64_t t0, int64_t t1,
                      uint8_t when, sim_cp_step *st) {
  const scenario *s = c->s;
  const sim_task *x = &c->t[k];
  st->dst = x->dst;
  st->src_site = s->device_site[x->dev];
  st->dst_site = s->device_site[x->dst];
  st->cls = st->src_site == st->dst_site ? SIM_CP_LAN : SIM_CP_WAN;
  st->bytes = x->bytes;
  sim_flow_bounds b = sim_critpath_bounds(s, c->o, x);
  st->bound_gbps = b.bound_gbps;
  st->link_gbps = b.link_gbps;
  st->link_latency_s = b.latency_s;
  st->rtt_s = b.rtt_s;
  st->window_bytes = b.window_bytes;
  st->sockets = b.sockets;
  int64_t w0 = c->w0[k] > t0 ? (c->w0[k] < t1 ? c->w0[k] : t1) : t0;
  st->queue_s = (double)(w0 - t0) * 1e-9;
  double wire_ns = (double)(t1 - w0);
  st->send = when == SIM_ON_LEFT;
  if (when == SIM_ON_DONE) {
    st->latency_s = b.latency_s;
    wire_ns -= llround(b.latency_s * 1e9);
  }
  st->rate_gbps = wire_ns > 0 ? 8 * x->bytes / wire_ns : INFINITY;
  double span_ns = (double)(c->w1[k] - c->w0[k]);
  st->stream_gbps = span_ns > 0 ? 8 * x->bytes / span_ns : st->rate_gbps;
  st->cause = sim_critpath_cause(&b, st->rate_gbps);
  if (when == SIM_ON_LEFT &&
      st->rate_gbps > b.bound_gbps * (1 + SIM_CP_BOUND_TOL)) {
    /* the send ended as its bytes entered the buffers: what paced them
     * there is its stream, at a bound or shared */
    st->cause = span_ns > 0 ? sim_critpath_cause(&b, st->stream_gbps)
                            : SIM_CP_CAUSE_SEND;
  }
}

/* A transfer on a path between two sites (path shaping): the path, its
 * span on the wire, its bytes. */
typedef struct on_path {
  int path;
  int64_t w0, w1;
  double bytes;
} on_path;

static int on_path_cmp(const void *x, const void *y) {
  const on_path *a = x, *b = y;
  if (a->path != b->path) return a->path < b->path ? -1 : 1;
  return (a->w0 > b->w0) - (a->w0 < b->w0);
}

/* The n transfers of c on paths into v, by path then start; the count. */
static size_t on_paths(const ctx *c, uint32_t n, on_path *v) {
  size_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    const sim_task *x = &c->t[i];
    if (x->kind != SIM_TASK_XFER || c->w0[i] < 0 || c->w1[i] <= c->w0[i])
      continue;
    int id = scenario_path(c->s, x->dev, x->dst);
    if (id >= 0) v[m++] = (on_path){id, c->w0[i], c->w1[i], x->bytes};
  }
  qsort(v, m, sizeof *v, on_path_cmp);
  return m;
}

/* The mean rate on path id over [a, b) of the m transfers v, each at its
 * mean rate over its span (sim/linkstats.h's estimate), Gbit/s. */
static double path_gbps(const on_path *v, size_t m, int id, int64_t a,
                        int64_t b) {
  size_t lo = 0, hi = m;
  while (lo < hi) { /* the path's first transfer */
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].path < id) lo = mid + 1;
    else hi = mid;
  }
  double bytes = 0;
  for (size_t i = lo; i < m && v[i].path == id && v[i].w0 < b; i++) {
    int64_t o0 = v[i].w0 > a ? v[i].w0 : a, o1 = v[i].w1 < b ? v[i].w1 : b;
    if (o1 > o0)
      bytes += v[i].bytes * (double)(o1 - o0) / (double)(v[i].w1 - v[i].w0);
  }
  return 8 * bytes / (double)(b - a);
}

/* Under path shaping the flows between two sites share the path: a
 * transfer step below every bound of its own (SHARED) while its path ran
 * full over its span (the sum of the flows on it within SIM_CP_BOUND_TOL
 * of the link's bandwidth) is bound by the link, split between them. */
static void full_paths(const ctx *c, uint32_t n, sim_cp_step *st, size_t ns) {
  if (!transport_is_shared(c->o->model) ||
      !scenario_shaping_shares_paths(c->s->shaping))
    return;
  on_path *v = mem_alloc(((size_t)n + 1) * sizeof *v);
  size_t m = on_paths(c, n, v);
  for (size_t i = 0; i < ns; i++) {
    sim_cp_step *x = &st[i];
    if (x->kind != SIM_TASK_XFER || x->cause != SIM_CP_CAUSE_SHARED) continue;
    int id = scenario_path(c->s, x->dev, x->dst);
    int64_t a = c->w0[x->task], b = c->w1[x->task];
    if (id < 0 || b <= a) continue;
    x->path_gbps = path_gbps(v, m, id, a, b);
    if (x->path_gbps >= x->link_gbps * (1 - SIM_CP_BOUND_TOL))
      x->cause = SIM_CP_CAUSE_LINK;
  }
  free(v);
}

/* The step of task k over [t0, t1] (its end at its trigger `when`). */
static sim_cp_step step_of(const ctx *c, uint32_t k, int64_t t0, int64_t t1,
                           uint8_t when) {
  const sim_task *x = &c->t[k];
  sim_cp_step st = {.task = k, .kind = x->kind, .role = x->role,
                    .phase = phase_of((sim_task_role)x->role),
                    .dev = x->dev, .dst = -1, .src_site = -1, .dst_site = -1,
                    .t0 = t0, .t1 = t1};
  switch ((sim_task_kind)x->kind) {
    case SIM_TASK_COMPUTE:
      st.cls = sim_role_gpu_work((sim_task_role)x->role) ? SIM_CP_COMPUTE
                                                         : SIM_CP_BARRIER;
      st.src_site = c->s->device_site[x->dev];
      break;
    case SIM_TASK_JOIN: st.cls = SIM_CP_WAIT; break;
    case SIM_TASK_XFER: xfer_step(c, k, t0, t1, when, &st); break;
  }
  return st;
}

/* The task that ended last (the first of equals). */
static uint32_t last_task(const sim_task *t, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; i++)
    if (t[i].t_done > t[best].t_done) best = i;
  return best;
}

static void walk_back(walk *w, const ctx *c, uint32_t n, const preds *p,
                      int64_t t0) {
  const sim_task *t = c->t;
  uint32_t k = last_task(t, n);
  int64_t mark = t[k].t_done;
  uint8_t when = SIM_ON_DONE;
  for (;;) {
    uint32_t op = p->ord[k];
    if (when == SIM_ON_DONE && op != SIM_GRAPH_NONE &&
        t[op].t_done == t[k].t_done) { /* held by the receive order */
      k = op;
      continue;
    }
    push(w, step_of(c, k, t[k].t_start, mark, when));
    uint32_t best = SIM_GRAPH_NONE;
    int64_t bt = INT64_MIN;
    for (uint32_t j = p->off[k]; j < p->off[k + 1]; j++) {
      int64_t x = trigger(&t[p->src[j]], p->when[j]);
      if (x > bt) bt = x, best = j;
    }
    int64_t from = best == SIM_GRAPH_NONE ? t0 : bt;
    if (t[k].t_start > from) /* not expected: a task starts at its trigger */
      push(w, (sim_cp_step){.task = UINT32_MAX, .kind = SIM_TASK_JOIN,
                            .phase = SIM_CP_OTHER, .cls = SIM_CP_WAIT,
                            .dev = -1, .dst = -1, .src_site = -1,
                            .dst_site = -1, .t0 = from, .t1 = t[k].t_start});
    if (best == SIM_GRAPH_NONE) return;
    k = p->src[best];
    mark = bt;
    when = p->when[best];
  }
}

static int link_cmp(const void *x, const void *y) {
  const sim_cp_link *a = x, *b = y;
  if (a->seconds != b->seconds) return a->seconds > b->seconds ? -1 : 1;
  if (a->src_site != b->src_site) return a->src_site - b->src_site;
  return a->dst_site - b->dst_site;
}

static int device_cmp(const void *x, const void *y) {
  const sim_cp_device *a = x, *b = y;
  if (a->seconds != b->seconds) return a->seconds > b->seconds ? -1 : 1;
  return a->dev - b->dev;
}

/* The sums per phase and class, per site pair and per device. */
static void fold(sim_critpath *cp, const scenario *s) {
  int ns = s->nsites;
  sim_cp_link *l = mem_calloc((size_t)ns * ns + 1, sizeof *l);
  sim_cp_device *d = mem_calloc((size_t)s->ndevices + 1, sizeof *d);
  for (size_t i = 0; i < cp->nsteps; i++) {
    const sim_cp_step *x = &cp->steps[i];
    double sec = (double)(x->t1 - x->t0) * 1e-9;
    cp->seconds[x->phase][x->cls] += sec;
    switch ((sim_task_kind)x->kind) {
      case SIM_TASK_XFER: {
        sim_cp_link *e = &l[x->src_site * ns + x->dst_site];
        e->seconds += sec, e->bytes += x->bytes, e->steps++;
        e->cause_s[x->cause] += sec;
        break;
      }
      case SIM_TASK_COMPUTE: /* GPU work, not a fixed host cost */
        if (x->cls == SIM_CP_COMPUTE) d[x->dev].seconds += sec, d[x->dev].steps++;
        break;
      case SIM_TASK_JOIN: break;
    }
  }
  for (int a = 0; a < ns; a++)
    for (int b = 0; b < ns; b++)
      if (l[a * ns + b].steps) {
        l[cp->nlinks] = l[a * ns + b];
        l[cp->nlinks].src_site = a, l[cp->nlinks].dst_site = b;
        cp->nlinks++;
      }
  for (int k = 0; k < s->ndevices; k++)
    if (d[k].steps) {
      d[cp->ndevices] = d[k];
      d[cp->ndevices++].dev = k;
    }
  qsort(l, (size_t)cp->nlinks, sizeof *l, link_cmp);
  qsort(d, (size_t)cp->ndevices, sizeof *d, device_cmp);
  cp->links = l;
  cp->devices = d;
}

void sim_critpath_build(const sim_graph *g, const scenario *s,
                        const transport_options *o, int64_t t0,
                        sim_critpath *out) {
  memset(out, 0, sizeof *out);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  out->t0 = t0;
  out->end = t0;
  if (n == 0) return;
  int64_t *w0 = mem_alloc(((size_t)n + 1) * sizeof *w0);
  int64_t *w1 = mem_alloc(((size_t)n + 1) * sizeof *w1);
  sim_linkstats_wire(s, t, n, w0, w1); /* full_paths reads both ends */
  size_t ne;
  const sim_edge *e = sim_graph_edges(g, &ne);
  preds p;
  preds_build(&p, e, ne, n);
  walk w = {0};
  ctx c = {s, o, t, w0, w1};
  walk_back(&w, &c, n, &p, t0);
  full_paths(&c, n, w.v, w.n);
  preds_free(&p);
  free(w0), free(w1);
  for (size_t i = 0; i < w.n / 2; i++) { /* into time order */
    sim_cp_step x = w.v[i];
    w.v[i] = w.v[w.n - 1 - i];
    w.v[w.n - 1 - i] = x;
  }
  out->steps = w.v;
  out->nsteps = w.n;
  out->end = w.v[w.n - 1].t1;
  assert(w.v[0].t0 == t0);
  for (size_t i = 1; i < w.n; i++) assert(w.v[i].t0 == w.v[i - 1].t1);
  fold(out, s);
}

sim_cp_cause sim_critpath_link_cause(const sim_cp_link *l) {
  int best = 0;
  for (int c = 1; c < SIM_CP_NCAUSES; c++)
    if (l->cause_s[c] > l->cause_s[best]) best = c;
  return (sim_cp_cause)best;
}

int sim_critpath_link_causes(const sim_cp_link *l, int *order) {
  int n = 0;
  for (int c = 0; c < SIM_CP_NCAUSES; c++) {
    if (!(l->cause_s[c] > 0)) continue;
    int k = n++; /* insertion after every cause at least as long */
    for (; k > 0 && l->cause_s[order[k - 1]] < l->cause_s[c]; k--)
      order[k] = order[k - 1];
    order[k] = c;
  }
  return n;
}

double sim_critpath_margins(const sim_critpath *cp, double *by_phase,
                            double *by_class) {
  double all = 0;
  for (int c = 0; c < SIM_CP_NCLASSES; c++) by_class[c] = 0;
  for (int p = 0; p < SIM_CP_NPHASES; p++) {
    by_phase[p] = 0;
    for (int c = 0; c < SIM_CP_NCLASSES; c++) {
      by_phase[p] += cp->seconds[p][c];
      by_class[c] += cp->seconds[p][c];
    }
    all += by_phase[p];
  }
  return all;
}

void sim_critpath_free(sim_critpath *cp) {
  if (!cp) return;
  free(cp->steps);
  free(cp->links);
  free(cp->devices);
  memset(cp, 0, sizeof *cp);
}

double sim_critpath_step_s(const sim_cp_step *x) {
  return (double)(x->t1 - x->t0) * 1e-9;
}

double sim_critpath_cut_s(const sim_critpath *cp, size_t show) {
  size_t n = cp->nsteps;
  if (n <= show) return 0;
  double *d = mem_alloc(n * sizeof *d);
  for (size_t i = 0; i < n; i++) d[i] = sim_critpath_step_s(&cp->steps[i]);
  for (size_t i = 0; i < show; i++) /* partial selection: small show */
    for (size_t j = i + 1; j < n; j++)
      if (d[j] > d[i]) { double t = d[i]; d[i] = d[j]; d[j] = t; }
  double cut = d[show - 1];
  free(d);
  return cut;
}
