/* linkstats: see linkstats.h. Each resource's segments (a transfer's span
 * on the wire at its mean rate) become +rate / -rate events, sorted and
 * swept into change points; the CSV integrates those over its steps. */
#include "sim/linkstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_out.h"
#include "base/mem.h"
#include "traces/csv.h"

#define SIM_LS_KIND_NAME_(id, name) name,
const char *const sim_ls_kind_names[SIM_LS_NKINDS] = {
    SIM_LS_KIND_MAP(SIM_LS_KIND_NAME_)};
#undef SIM_LS_KIND_NAME_

static int64_t lat_ns_of(const scenario *s, const sim_task *x) {
  return llround(scenario_link(s, x->dev, x->dst, x->t_start).latency_ms * 1e6);
}

typedef struct conn_key {
  int dev, dst, channels;
  int64_t t;
  uint32_t id;
} conn_key;

static int conn_cmp(const void *x, const void *y) {
  const conn_key *a = x, *b = y;
  if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  if (a->channels != b->channels) return a->channels < b->channels ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

void sim_linkstats_wire(const scenario *s, const sim_task *t, uint32_t n,
                        int64_t *w0, int64_t *w1) {
  conn_key *k = mem_alloc(((size_t)n + 1) * sizeof *k);
  size_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    w0[i] = w1[i] = -1;
    const sim_task *x = &t[i];
    if (x->kind != SIM_TASK_XFER || x->t_start < 0 || x->t_done < 0) continue;
    int64_t end = x->t_done - lat_ns_of(s, x);
    w1[i] = end > x->t_left ? end : x->t_left;
    if (w1[i] < x->t_start) w1[i] = x->t_start;
    k[m++] = (conn_key){x->dev, x->dst, x->channels, x->t_start, i};
  }
  qsort(k, m, sizeof *k, conn_cmp);
  for (size_t j = 0; j < m; j++) {
    uint32_t i = k[j].id;
    w0[i] = t[i].t_start;
    bool same = j > 0 && k[j - 1].dev == k[j].dev && k[j - 1].dst == k[j].dst &&
                k[j - 1].channels == k[j].channels;
    if (same && w1[k[j - 1].id] > w0[i]) w0[i] = w1[k[j - 1].id];
    if (w0[i] > w1[i]) w0[i] = w1[i];
  }
  free(k);
}

/* NIC index per device as the engine lays them out (sim.c): one per
 * device, or one per site whose devices share it; *first the first device
 * of each. Returns the count. */
static int nic_layout(const scenario *s, int *nic, int *first) {
  int nn = 0;
  for (int i = 0; i < s->nsites; i++)
    for (int k = 0; k < s->sites[i].ndevices; k++) {
      int d = s->sites[i].first_device + k;
      if (!s->sites[i].nic_shared || k == 0) first[nn++] = d;
      nic[d] = nn - 1;
    }
  return nn;
}

typedef struct seg {
  double bytes;
  int dev, dst, channels;
} seg;

/* A change of a resource's rate: at t, rate (Gbit/s) more and d more
 * messages sending; seq keeps the log's order. */
typedef struct ev {
  int64_t t;
  double rate;
  int d, res;
  size_t seq;
} ev;

static int ev_cmp(const void *x, const void *y) {
  const ev *a = x, *b = y;
  if (a->res != b->res) return a->res < b->res ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

static int key_cmp(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The links a site pair's m segments v ran on (tmp: m entries), each of
 * the link's bandwidth: ideal, a private link per connection (its devices
 * and channels); under path (not ideal) the path itself between two
 * sites, one private link per ordered device pair inside a site; under tc
 * one shaper per sending device. */
static int links_of(const scenario *s, const transport_options *o,
                    const seg *v, size_t m, bool inside, int64_t *tmp) {
  bool ideal = !transport_is_shared(o->model);
  bool path = scenario_shaping_shares_paths(s->shaping) && !ideal;
  if (path && !inside) return 1;
  int64_t n = s->ndevices;
  for (size_t i = 0; i < m; i++)
    tmp[i] = ideal  ? ((int64_t)v[i].dev * n + v[i].dst) * 256 + v[i].channels
             : path ? (int64_t)v[i].dev * n + v[i].dst
                    : v[i].dev;
  qsort(tmp, m, sizeof *tmp, key_cmp);
  int k = 0;
  for (size_t i = 0; i < m; i++) k += !i || tmp[i] != tmp[i - 1];
  return k;
}

/* r's capacity at t: a NIC's, or a link's (its bandwidth at t times the
 * links it has, r->capacity_gbps's multiple at t = 0). */
static double capacity_at(const sim_ls_res *r, const scenario *s, int64_t t) {
  switch (r->kind) {
    case SIM_LS_LINK:
      return r->links * trace_at(s->network, r->a, r->b, t).bandwidth_gbps;
    case SIM_LS_NIC_OUT:
    case SIM_LS_NIC_IN: return r->capacity_gbps;
  }
  return r->capacity_gbps;
}

/* r's change points, busy time and peak from its ne events e (sorted);
 * the peak against the capacity at each change point (a trace moves a
 * link's: the engine's rates change with it). */
static void sweep(sim_ls_res *r, const scenario *s, const ev *e, size_t ne) {
  r->t = mem_alloc((ne + 1) * sizeof *r->t);
  r->rate_gbps = mem_alloc((ne + 1) * sizeof *r->rate_gbps);
  r->inflight = mem_alloc((ne + 1) * sizeof *r->inflight);
  double rate = 0;
  int fl = 0;
  for (size_t i = 0; i < ne;) {
    int64_t t = e[i].t;
    for (; i < ne && e[i].t == t; i++) rate += e[i].rate, fl += e[i].d;
    if (fl == 0) rate = 0; /* no residue of the sums */
    if (r->npts && r->inflight[r->npts - 1] > 0) /* busy since the last */
      r->busy_s += (double)(t - r->t[r->npts - 1]) * 1e-9;
    r->t[r->npts] = t;
    r->rate_gbps[r->npts] = rate;
    r->inflight[r->npts++] = fl;
    double cap = capacity_at(r, s, t);
    if (rate / cap > r->peak_util) r->peak_util = rate / cap;
  }
}

/* The resources of each transfer: its site pair, and the NICs it crosses
 * (limited ones, netem and tcp). rid[3 i .. 3 i + 2]: indices or -1. */
static int resources_of(const scenario *s, const transport_options *o,
                        const sim_task *x, const int *nic, int nnics,
                        int *rid) {
  int ns = s->nsites;
  int sa = s->device_site[x->dev], sb = s->device_site[x->dst];
  rid[0] = sa * ns + sb;
  rid[1] = rid[2] = -1;
  if (!transport_is_shared(o->model) || nic[x->dev] == nic[x->dst]) return 1;
  double ga = s->sites[sa].nic_gbps, gb = s->sites[sb].nic_gbps;
  if (ga > 0 && isfinite(ga)) rid[1] = ns * ns + nic[x->dev];
  if (gb > 0 && isfinite(gb)) rid[2] = ns * ns + nnics + nic[x->dst];
  return 3;
}

/* Each logged rate change as events of the resources its message crosses
 * (*ne of them, malloc'ed, sorted by resource, time and log order). */
static ev *events_of(const scenario *s, const transport_options *o,
                     const sim_task *t, uint32_t n, const sim_rate_log *log,
                     const int *nic, int nnics, size_t *ne) {
  ev *e = mem_alloc((3 * log->n + 1) * sizeof *e);
  double *now = mem_calloc((size_t)n + 1, sizeof *now); /* Gbit/s each */
  size_t m = 0;
  int rid[3];
  for (size_t i = 0; i < log->n; i++) {
    const sim_rate_change *c = &log->v[i];
    if (c->tag >= n || t[c->tag].kind != SIM_TASK_XFER) continue;
    double g = 8 * c->rate, dg = g - now[c->tag];
    int d = (now[c->tag] == 0 && g > 0) - (now[c->tag] > 0 && g == 0);
    now[c->tag] = g;
    for (int j = resources_of(s, o, &t[c->tag], nic, nnics, rid); j-- > 0;)
      if (rid[j] >= 0)
        e[m++] = (ev){.t = c->t, .rate = dg, .d = d, .res = rid[j], .seq = i};
  }
  free(now);
  qsort(e, m, sizeof *e, ev_cmp);
  *ne = m;
  return e;
}

/* Resource r (index ri of the layout) from its m segments v: its kind,
 * capacity, bytes and messages. */
static void resource(sim_ls_res *x, size_t ri, const scenario *s,
                     const transport_options *o, const seg *v, size_t m,
                     const int *first, int nnics, int64_t *keys) {
  int ns = s->nsites;
  if (ri < (size_t)ns * ns) {
    *x = (sim_ls_res){.kind = SIM_LS_LINK, .a = (int)ri / ns,
                      .b = (int)ri % ns, .site = -1};
    x->links = links_of(s, o, v, m, x->a == x->b, keys);
    x->capacity_gbps = capacity_at(x, s, 0);
  } else {
    bool in = ri >= (size_t)ns * ns + (size_t)nnics;
    int k = (int)(ri - (size_t)ns * ns) - (in ? nnics : 0);
    *x = (sim_ls_res){.kind = in ? SIM_LS_NIC_IN : SIM_LS_NIC_OUT,
                      .a = first[k], .b = -1,
                      .site = s->device_site[first[k]]};
    x->capacity_gbps = s->sites[x->site].nic_gbps;
  }
  x->flows = m;
  for (size_t i = 0; i < m; i++) x->bytes += v[i].bytes;
}

/* Without the engine's log: each transfer at its mean rate over its span
 * on the wire (an estimate: messages sharing a resource can sum above its
 * capacity). */
static void mean_log(const scenario *s, const sim_task *t, uint32_t n,
                     sim_rate_log *log) {
  int64_t *w0 = mem_alloc(((size_t)n + 1) * sizeof *w0);
  int64_t *w1 = mem_alloc(((size_t)n + 1) * sizeof *w1);
  sim_linkstats_wire(s, t, n, w0, w1);
  *log = (sim_rate_log){.v = mem_alloc((2 * (size_t)n + 1) * sizeof *log->v)};
  for (uint32_t i = 0; i < n; i++)
    if (w1[i] > w0[i] && w0[i] >= 0) {
      double r = t[i].bytes / (double)(w1[i] - w0[i]);
      log->v[log->n++] = (sim_rate_change){.t = w0[i], .tag = i, .rate = r};
      log->v[log->n++] = (sim_rate_change){.t = w1[i], .tag = i, .rate = 0};
    }
  free(w0), free(w1);
}

void sim_linkstats_build(const scenario *s, const transport_options *o,
                         const sim_task *t, uint32_t n, int64_t t0, int64_t t1,
                         const sim_rate_log *log, sim_linkstats *out) {
  sim_rate_log mean = {0};
  if (!log) mean_log(s, t, n, &mean), log = &mean;
  memset(out, 0, sizeof *out);
  out->t0 = t0;
  out->t1 = t1;
  int ns = s->nsites, nd = s->ndevices;
  int *nic = mem_alloc(((size_t)nd + 1) * sizeof *nic);
  int *first = mem_alloc(((size_t)nd + 1) * sizeof *first);
  int nnics = nic_layout(s, nic, first);
  size_t nr = (size_t)ns * ns + 2 * (size_t)nnics;
  size_t *off = mem_calloc(nr + 2, sizeof *off);
  int rid[3];
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0 && t[i].t_done >= 0)
      for (int j = resources_of(s, o, &t[i], nic, nnics, rid); j-- > 0;)
        if (rid[j] >= 0) off[rid[j] + 2]++;
  for (size_t r = 0; r < nr; r++) off[r + 2] += off[r + 1];
  seg *v = mem_alloc((off[nr + 1] + 1) * sizeof *v);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0 && t[i].t_done >= 0)
      for (int j = resources_of(s, o, &t[i], nic, nnics, rid); j-- > 0;)
        if (rid[j] >= 0)
          v[off[rid[j] + 1]++] =
              (seg){t[i].bytes, t[i].dev, t[i].dst, t[i].channels};
  size_t ne, k = 0;
  ev *e = events_of(s, o, t, n, log, nic, nnics, &ne);
  out->res = mem_calloc(nr + 1, sizeof *out->res);
  int64_t *keys = mem_alloc((off[nr] + 1) * sizeof *keys);
  for (size_t r = 0; r < nr; r++) {
    size_t a = off[r], m = off[r + 1] - a, from = k;
    while (k < ne && e[k].res == (int)r) k++;
    if (!m) continue;
    sim_ls_res *x = &out->res[out->nres++];
    resource(x, r, s, o, v + a, m, first, nnics, keys);
    sweep(x, s, e + from, k - from);
    double span = (double)(t1 - t0);
    x->mean_util = span > 0 ? 8 * x->bytes / (x->capacity_gbps * span) : 0;
  }
  free(e), free(keys), free(v), free(off), free(nic), free(first);
  sim_rate_log_free(&mean);
}

void sim_linkstats_free(sim_linkstats *ls) {
  if (!ls) return;
  for (int i = 0; i < ls->nres; i++)
    free(ls->res[i].t), free(ls->res[i].rate_gbps), free(ls->res[i].inflight);
  free(ls->res);
  memset(ls, 0, sizeof *ls);
}

void sim_linkstats_name(const sim_linkstats *ls, const sim_ls_res *r,
                        const scenario *s, char *buf, size_t size) {
  (void)ls;
  switch (r->kind) {
    case SIM_LS_LINK:
      snprintf(buf, size, "%s>%s", s->sites[r->a].name, s->sites[r->b].name);
      return;
    case SIM_LS_NIC_OUT:
    case SIM_LS_NIC_IN:
      snprintf(buf, size, "%s/%d", s->sites[r->site].name, r->a);
      return;
  }
}

/* Bytes and mean flows of r over [a, b). */
static void integrate(const sim_ls_res *r, int64_t a, int64_t b, size_t *from,
                      double *bytes, double *flows) {
  *bytes = *flows = 0;
  size_t i = *from;
  while (i + 1 < r->npts && r->t[i + 1] <= a) i++;
  *from = i;
  for (; i < r->npts && r->t[i] < b; i++) {
    int64_t lo = r->t[i] > a ? r->t[i] : a;
    int64_t hi = i + 1 < r->npts && r->t[i + 1] < b ? r->t[i + 1] : b;
    if (hi <= lo) continue;
    *bytes += r->rate_gbps[i] / 8 * (double)(hi - lo);
    *flows += r->inflight[i] * (double)(hi - lo) / (double)(b - a);
  }
}

static void csv_rows(FILE *f, const sim_linkstats *ls, const sim_ls_res *r,
                     const scenario *s, int64_t step) {
  const char *src = "", *dst = "";
  switch (r->kind) {
    case SIM_LS_LINK: src = s->sites[r->a].name, dst = s->sites[r->b].name; break;
    case SIM_LS_NIC_OUT:
    case SIM_LS_NIC_IN: src = s->sites[r->site].name; break;
  }
  size_t size = strlen(src) + strlen(dst) + 16; /* whole, never cut */
  char *name = mem_alloc(size);
  sim_linkstats_name(ls, r, s, name, size);
  size_t from = 0;
  for (int64_t a = ls->t0; a < ls->t1; a += step) {
    int64_t b = a + step < ls->t1 ? a + step : ls->t1;
    double bytes, flows;
    integrate(r, a, b, &from, &bytes, &flows);
    if (bytes <= 0 && flows <= 0) continue;
    double gbps = 8 * bytes / (double)(b - a);
    fprintf(f, "%.9g,%s,", (double)(a - ls->t0) * 1e-9,
            sim_ls_kind_names[r->kind]);
    csv_write_field(f, name), putc(',', f); /* site names: any text */
    csv_write_field(f, src), putc(',', f);
    csv_write_field(f, dst);
    fprintf(f, ",%.17g,%.9g,%.9g,%.6g\n", bytes, gbps,
            gbps / r->capacity_gbps, flows);
  }
  free(name);
}

int sim_linkstats_csv(const sim_linkstats *ls, const scenario *s,
                      double resolution_s, const char *path, err *e) {
  int64_t step = llround(resolution_s * 1e9);
  if (step < 1) step = 1;
  double steps = (double)(ls->t1 - ls->t0) / (double)step;
  if (steps > SIM_LINKSTATS_MAX_STEPS)
    return err_set(e, ERR_RANGE, "%s: steps of %g s over the run's %g s are "
                   "%.0f steps, more than %d: a coarser resolution", path,
                   resolution_s, (double)(ls->t1 - ls->t0) * 1e-9, steps,
                   SIM_LINKSTATS_MAX_STEPS);
  file_out out;
  int rc = file_out_open(&out, path, "the link statistics", e);
  if (rc) return rc;
  fputs("t_s,kind,resource,src,dst,bytes,rate_gbps,utilisation,flows\n",
        out.f);
  for (int i = 0; i < ls->nres; i++) csv_rows(out.f, ls, &ls->res[i], s, step);
  return file_out_close(&out, true, e);
}
