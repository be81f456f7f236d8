/* linkstats: see linkstats.h. Each resource's segments (a transfer's span
 * on the wire at its mean rate) become +rate / -rate events, sorted and
 * swept into change points; the CSV integrates those over its steps. A
 * segment is its task's index (4 bytes) in the resource's list, not a copy
 * of its span (32): at volunteer-10k's 5.8 million segments, 23 MB against
 * 185; and a summary keeps no change points (232 MB there). */
#include "sim/linkstats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

const char *const sim_ls_kind_names[3] = {"link", "nic-out", "nic-in"};

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

typedef struct ev {
  int64_t t;
  double rate;
  int d;
} ev;

static int ev_cmp(const void *x, const void *y) {
  const ev *a = x, *b = y;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->d - b->d; /* ends before starts: a tie is no overlap */
}

static int int_cmp(const void *x, const void *y) {
  return *(const int *)x - *(const int *)y;
}

/* The wire spans and the tasks of one resource's segments (a transfer's
 * span at its mean rate): task idx[i] on the wire over [w0, w1]. */
typedef struct segs {
  const sim_task *t;
  const int64_t *w0, *w1;
  const uint32_t *idx;
  size_t m;
} segs;

/* r's bytes, busy time and peak from its segments, and, when series, its
 * change points (the CSV's and the timeline's; a summary needs none). */
static void sweep(sim_ls_res *r, segs v, bool series) {
  ev *e = mem_alloc((2 * v.m + 1) * sizeof *e);
  size_t ne = 0;
  for (size_t i = 0; i < v.m; i++) {
    uint32_t k = v.idx[i];
    r->bytes += v.t[k].bytes;
    if (v.w1[k] <= v.w0[k]) continue;
    double g = 8 * v.t[k].bytes / (double)(v.w1[k] - v.w0[k]);
    e[ne++] = (ev){v.w0[k], g, 1};
    e[ne++] = (ev){v.w1[k], -g, -1};
  }
  qsort(e, ne, sizeof *e, ev_cmp);
  if (series) {
    r->t = mem_alloc((ne + 1) * sizeof *r->t);
    r->rate_gbps = mem_alloc((ne + 1) * sizeof *r->rate_gbps);
    r->inflight = mem_alloc((ne + 1) * sizeof *r->inflight);
  }
  double rate = 0;
  int fl = 0, last_fl = 0;
  int64_t last_t = 0;
  for (size_t i = 0; i < ne;) {
    int64_t t = e[i].t;
    for (; i < ne && e[i].t == t; i++) rate += e[i].rate, fl += e[i].d;
    if (fl == 0) rate = 0; /* no residue of the sums */
    if (last_fl > 0) /* busy since the last change point */
      r->busy_s += (double)(t - last_t) * 1e-9;
    last_t = t, last_fl = fl;
    if (series) {
      r->t[r->npts] = t;
      r->rate_gbps[r->npts] = rate;
      r->inflight[r->npts++] = fl;
    }
    if (rate / r->capacity_gbps > r->peak_util)
      r->peak_util = rate / r->capacity_gbps;
  }
  free(e);
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
  if (o->model == TRANSPORT_IDEAL || nic[x->dev] == nic[x->dst]) return 1;
  double ga = s->sites[sa].nic_gbps, gb = s->sites[sb].nic_gbps;
  if (ga > 0 && isfinite(ga)) rid[1] = ns * ns + nic[x->dev];
  if (gb > 0 && isfinite(gb)) rid[2] = ns * ns + nnics + nic[x->dst];
  return 3;
}

void sim_linkstats_build(const scenario *s, const transport_options *o,
                         const sim_task *t, uint32_t n, int64_t t0, int64_t t1,
                         bool series, sim_linkstats *out) {
  memset(out, 0, sizeof *out);
  out->t0 = t0;
  out->t1 = t1;
  int ns = s->nsites, nd = s->ndevices;
  int *nic = mem_alloc(((size_t)nd + 1) * sizeof *nic);
  int *first = mem_alloc(((size_t)nd + 1) * sizeof *first);
  int nnics = nic_layout(s, nic, first);
  size_t nr = (size_t)ns * ns + 2 * (size_t)nnics;
  int64_t *w0 = mem_alloc(((size_t)n + 1) * sizeof *w0);
  int64_t *w1 = mem_alloc(((size_t)n + 1) * sizeof *w1);
  sim_linkstats_wire(s, t, n, w0, w1);
  size_t *off = mem_calloc(nr + 2, sizeof *off);
  int rid[3];
  for (uint32_t i = 0; i < n; i++)
    if (w1[i] >= 0)
      for (int j = resources_of(s, o, &t[i], nic, nnics, rid); j-- > 0;)
        if (rid[j] >= 0) off[rid[j] + 2]++;
  for (size_t r = 0; r < nr; r++) off[r + 2] += off[r + 1];
  uint32_t *v = mem_alloc((off[nr + 1] + 1) * sizeof *v); /* by resource */
  for (uint32_t i = 0; i < n; i++)
    if (w1[i] >= 0)
      for (int j = resources_of(s, o, &t[i], nic, nnics, rid); j-- > 0;)
        if (rid[j] >= 0) v[off[rid[j] + 1]++] = i;
  out->res = mem_calloc(nr + 1, sizeof *out->res);
  int *devs = mem_alloc((off[nr] + 1) * sizeof *devs);
  for (size_t r = 0; r < nr; r++) {
    size_t a = off[r], m = off[r + 1] - a;
    if (!m) continue;
    sim_ls_res *x = &out->res[out->nres++];
    if (r < (size_t)ns * ns) {
      int senders = 0;
      for (size_t i = 0; i < m; i++) devs[i] = t[v[a + i]].dev;
      qsort(devs, m, sizeof *devs, int_cmp);
      for (size_t i = 0; i < m; i++) senders += !i || devs[i] != devs[i - 1];
      *x = (sim_ls_res){.kind = SIM_LS_LINK, .a = (int)r / ns,
                        .b = (int)r % ns, .site = -1};
      x->capacity_gbps = senders * trace_at(s->network, x->a, x->b, 0).bandwidth_gbps;
    } else {
      bool in = r >= (size_t)ns * ns + (size_t)nnics;
      int k = (int)(r - (size_t)ns * ns) - (in ? nnics : 0);
      *x = (sim_ls_res){.kind = in ? SIM_LS_NIC_IN : SIM_LS_NIC_OUT,
                        .a = first[k], .b = -1,
                        .site = s->device_site[first[k]]};
      x->capacity_gbps = s->sites[x->site].nic_gbps;
    }
    x->flows = m;
    sweep(x, (segs){t, w0, w1, v + a, m}, series);
    double span = (double)(t1 - t0);
    x->mean_util = span > 0 ? 8 * x->bytes / (x->capacity_gbps * span) : 0;
  }
  free(devs), free(v), free(off), free(w0), free(w1), free(nic), free(first);
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
  if (r->kind == SIM_LS_LINK)
    snprintf(buf, size, "%s>%s", s->sites[r->a].name, s->sites[r->b].name);
  else
    snprintf(buf, size, "%s/%d", s->sites[r->site].name, r->a);
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
  char name[256];
  sim_linkstats_name(ls, r, s, name, sizeof name);
  const char *src = s->sites[r->kind == SIM_LS_LINK ? r->a : r->site].name;
  const char *dst = r->kind == SIM_LS_LINK ? s->sites[r->b].name : "";
  size_t from = 0;
  for (int64_t a = ls->t0; a < ls->t1; a += step) {
    int64_t b = a + step < ls->t1 ? a + step : ls->t1;
    double bytes, flows;
    integrate(r, a, b, &from, &bytes, &flows);
    if (bytes <= 0 && flows <= 0) continue;
    double gbps = 8 * bytes / (double)(b - a);
    fprintf(f, "%.9g,%s,%s,%s,%s,%.17g,%.9g,%.9g,%.6g\n",
            (double)(a - ls->t0) * 1e-9, sim_ls_kind_names[r->kind], name,
            src, dst, bytes, gbps, gbps / r->capacity_gbps, flows);
  }
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
  FILE *f = fopen(path, "w");
  if (!f)
    return err_set(e, ERR_IO, "%s:0: cannot write the link statistics: %s",
                   path, strerror(errno));
  fputs("t_s,kind,resource,src,dst,bytes,rate_gbps,utilisation,flows\n", f);
  for (int i = 0; i < ls->nres; i++) csv_rows(f, ls, &ls->res[i], s, step);
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad)
    return err_set(e, ERR_IO, "%s:0: cannot write the link statistics: %s",
                   path, errno ? strerror(errno) : "write error");
  return ERR_OK;
}
