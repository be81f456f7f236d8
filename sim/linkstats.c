/* linkstats: see linkstats.h. Each change of a message's rate is a change
 * of every resource it crosses (+rate / -rate, one message more or fewer
 * sending); a resource sums the changes of one time into a change point
 * (sim_ls_acc: as they come from the engine, in time order, or from a
 * stored log put in time order first). Bytes, messages and a site pair's
 * links come from the records after the run; the CSV integrates the
 * change points over its steps. */
#include "sim/linkstats.h"

#include <assert.h>
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

/* The messages of one sender's connections (k, m of them) in order of
 * connection and start: each leaves when it starts or when the one before
 * it on its connection has left, whichever is later. */
static void wire_starts(const sim_task *t, conn_key *k, size_t m, int64_t *w0,
                        const int64_t *w1) {
  qsort(k, m, sizeof *k, conn_cmp);
  for (size_t j = 0; j < m; j++) {
    uint32_t i = k[j].id;
    w0[i] = t[i].t_start;
    bool same = j > 0 && k[j - 1].dst == k[j].dst &&
                k[j - 1].channels == k[j].channels;
    if (same && w1[k[j - 1].id] > w0[i]) w0[i] = w1[k[j - 1].id];
    if (w0[i] > w1[i]) w0[i] = w1[i];
  }
}

void sim_linkstats_wire(const scenario *s, const sim_task *t, uint32_t n,
                        int64_t *w0, int64_t *w1) {
  /* the transfers by sender (in task order), then each sender's sorted */
  size_t nd = (size_t)s->ndevices, *off = mem_calloc(nd + 2, sizeof *off);
  for (uint32_t i = 0; i < n; i++) {
    w0[i] = w1[i] = -1;
    const sim_task *x = &t[i];
    if (x->kind != SIM_TASK_XFER || x->t_start < 0 || x->t_done < 0) continue;
    int64_t end = x->t_done - lat_ns_of(s, x);
    w1[i] = end > x->t_left ? end : x->t_left;
    if (w1[i] < x->t_start) w1[i] = x->t_start;
    off[x->dev + 2]++;
  }
  size_t most = 0;
  for (size_t d = 0; d < nd; d++) {
    if (off[d + 2] > most) most = off[d + 2];
    off[d + 2] += off[d + 1];
  }
  uint32_t *by = mem_alloc((off[nd + 1] + 1) * sizeof *by);
  for (uint32_t i = 0; i < n; i++)
    if (w1[i] >= 0) by[off[t[i].dev + 1]++] = i;
  conn_key *k = mem_alloc((most + 1) * sizeof *k);
  for (size_t d = 0; d < nd; d++) {
    size_t m = 0;
    for (size_t j = off[d]; j < off[d + 1]; j++) {
      const sim_task *x = &t[by[j]];
      k[m++] = (conn_key){x->dev, x->dst, x->channels, x->t_start, by[j]};
    }
    wire_starts(t, k, m, w0, w1);
  }
  free(k), free(by), free(off);
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

static int key_cmp(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* What tells a site pair's links apart (links_of): ideal, a private link
 * per connection (its devices and channels); under path (not ideal) one
 * private link per ordered device pair inside a site; under tc one shaper
 * per sending device. */
static int64_t link_key(const scenario *s, const transport_options *o,
                        const sim_task *x) {
  bool ideal = !transport_is_shared(o->model);
  bool path = scenario_shaping_shares_paths(s->shaping) && !ideal;
  int64_t n = s->ndevices;
  return ideal  ? ((int64_t)x->dev * n + x->dst) * 256 + x->channels
         : path ? (int64_t)x->dev * n + x->dst
                : x->dev;
}

/* The links a site pair's m messages ran on, keys[0 .. m) their link_key
 * (sorted here), each of the link's bandwidth: under path (not ideal) the
 * path itself between two sites, else the distinct keys. */
static int links_of(const scenario *s, const transport_options *o,
                    int64_t *keys, size_t m, bool inside) {
  bool ideal = !transport_is_shared(o->model);
  if (scenario_shaping_shares_paths(s->shaping) && !ideal && !inside) return 1;
  qsort(keys, m, sizeof *keys, key_cmp);
  int k = 0;
  for (size_t i = 0; i < m; i++) k += !i || keys[i] != keys[i - 1];
  return k;
}

/* The resources of a message from device a to device b: its site pair,
 * and the NICs it crosses (limited ones, netem and tcp). rid[3]: indices
 * or -1; returns how many of rid to read. */
static int resources_of(const scenario *s, const transport_options *o, int a,
                        int b, const int *nic, int nnics, int *rid) {
  int ns = s->nsites;
  int sa = s->device_site[a], sb = s->device_site[b];
  rid[0] = sa * ns + sb;
  rid[1] = rid[2] = -1;
  if (!transport_is_shared(o->model) || nic[a] == nic[b]) return 1;
  double ga = s->sites[sa].nic_gbps, gb = s->sites[sb].nic_gbps;
  if (ga > 0 && isfinite(ga)) rid[1] = ns * ns + nic[a];
  if (gb > 0 && isfinite(gb)) rid[2] = ns * ns + nnics + nic[b];
  return 3;
}

/* The highest rate a resource had at one capacity (a link's bandwidth at
 * the time; a NIC has one): its peak utilisation is the most of these over
 * their capacities once a link's multiple is known. */
typedef struct ls_peak {
  double bw, rate;
} ls_peak;

/* A resource's rate as its changes come, in time order: the changes at t
 * are being summed (open) into the running rate and messages sending; the
 * last change point made; its peaks. */
typedef struct ls_run {
  int64_t t, last_t;
  double rate; /* Gbit/s */
  int fl, last_fl;
  bool open, any; /* any: a change point was made */
  int npk;
  size_t pkcap, ptcap; /* ptcap: room for the points (series) */
  ls_peak *pk;
} ls_run;

/* A message's rate (Gbit/s) by its tag, while it is not +0 (absent: 0):
 * open addressing, linear probing; as many entries as messages send at
 * once. */
typedef struct tag_map {
  uint32_t *key; /* UINT32_MAX: empty */
  double *val;
  size_t cap, n;
} tag_map;

struct sim_ls_acc {
  const scenario *s;
  const transport_options *o;
  bool series;
  int *nic, *first, nnics;
  size_t nr;       /* site pairs, then NICs' egress, then their ingress */
  ls_run *run;     /* [nr] */
  sim_ls_res *res; /* [nr]: busy time, the change points when series */
  tag_map now;
};

static size_t tag_home(const tag_map *m, uint32_t tag) {
  return (size_t)((tag * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
}

static void tag_init(tag_map *m, size_t cap) {
  *m = (tag_map){.key = mem_alloc(cap * sizeof *m->key),
                 .val = mem_alloc(cap * sizeof *m->val), .cap = cap};
  memset(m->key, 0xff, cap * sizeof *m->key);
}

/* The slot of tag in m (added with value 0 when absent). */
static size_t tag_slot(tag_map *m, uint32_t tag) {
  if (2 * (m->n + 1) > m->cap) { /* at most half full */
    tag_map g;
    tag_init(&g, 2 * m->cap);
    for (size_t i = 0; i < m->cap; i++)
      if (m->key[i] != UINT32_MAX) {
        size_t h = tag_home(&g, m->key[i]);
        while (g.key[h] != UINT32_MAX) h = (h + 1) & (g.cap - 1);
        g.key[h] = m->key[i], g.val[h] = m->val[i], g.n++;
      }
    free(m->key), free(m->val);
    *m = g;
  }
  size_t h = tag_home(m, tag);
  while (m->key[h] != UINT32_MAX && m->key[h] != tag)
    h = (h + 1) & (m->cap - 1);
  if (m->key[h] == UINT32_MAX) m->key[h] = tag, m->val[h] = 0, m->n++;
  return h;
}

/* Empties slot h, moving back the entries its probe sequence holds up. */
static void tag_erase(tag_map *m, size_t h) {
  size_t mask = m->cap - 1;
  m->key[h] = UINT32_MAX;
  m->n--;
  for (size_t j = (h + 1) & mask; m->key[j] != UINT32_MAX; j = (j + 1) & mask) {
    size_t home = tag_home(m, m->key[j]);
    /* j's entry may move to h when h lies cyclically in [home, j) */
    if (((j - home) & mask) >= ((j - h) & mask)) {
      m->key[h] = m->key[j], m->val[h] = m->val[j];
      m->key[j] = UINT32_MAX;
      h = j;
    }
  }
}

sim_ls_acc *sim_ls_acc_new(const scenario *s, const transport_options *o,
                           bool series) {
  sim_ls_acc *a = mem_calloc(1, sizeof *a);
  *a = (sim_ls_acc){.s = s, .o = o, .series = series};
  int nd = s->ndevices;
  a->nic = mem_alloc(((size_t)nd + 1) * sizeof *a->nic);
  a->first = mem_alloc(((size_t)nd + 1) * sizeof *a->first);
  a->nnics = nic_layout(s, a->nic, a->first);
  a->nr = (size_t)s->nsites * s->nsites + 2 * (size_t)a->nnics;
  a->run = mem_calloc(a->nr + 1, sizeof *a->run);
  a->res = mem_calloc(a->nr + 1, sizeof *a->res);
  tag_init(&a->now, 64);
  return a;
}

void sim_ls_acc_free(sim_ls_acc *a) {
  if (!a) return;
  for (size_t r = 0; r < a->nr; r++) {
    free(a->run[r].pk);
    free(a->res[r].t), free(a->res[r].rate_gbps), free(a->res[r].inflight);
  }
  free(a->run), free(a->res), free(a->nic), free(a->first);
  free(a->now.key), free(a->now.val);
  free(a);
}

/* u's rate (at u->t) among its highest at capacity bw (a link's
 * bandwidth then; 1 for a NIC, whose capacity is fixed); NaN is no rate. */
static void peak_note(ls_run *u, double bw) {
  for (int i = 0; i < u->npk; i++)
    if (u->pk[i].bw == bw) {
      if (u->rate > u->pk[i].rate) u->pk[i].rate = u->rate;
      return;
    }
  mem_grow((void **)&u->pk, &u->pkcap, (size_t)u->npk + 1, sizeof *u->pk);
  u->pk[u->npk++] = (ls_peak){bw, u->rate > -INFINITY ? u->rate : -INFINITY};
}

/* Resource ri's changes at u->t summed: a change point (its busy time
 * since the last, the point itself when kept, its peak). */
static void ls_point(sim_ls_acc *a, size_t ri) {
  ls_run *u = &a->run[ri];
  sim_ls_res *r = &a->res[ri];
  u->open = false;
  if (u->fl == 0) u->rate = 0; /* no residue of the sums */
  if (u->any && u->last_fl > 0) /* busy since the last */
    r->busy_s += (double)(u->t - u->last_t) * 1e-9;
  u->any = true, u->last_t = u->t, u->last_fl = u->fl;
  if (a->series) {
    if (r->npts == u->ptcap) {
      u->ptcap = u->ptcap ? 2 * u->ptcap : 16;
      r->t = mem_realloc(r->t, u->ptcap * sizeof *r->t);
      r->rate_gbps = mem_realloc(r->rate_gbps, u->ptcap * sizeof *r->rate_gbps);
      r->inflight = mem_realloc(r->inflight, u->ptcap * sizeof *r->inflight);
    }
    r->t[r->npts] = u->t, r->rate_gbps[r->npts] = u->rate;
    r->inflight[r->npts++] = u->fl;
  }
  int ns = a->s->nsites;
  peak_note(u, ri < (size_t)ns * ns
                   ? trace_at(a->s->network, (int)ri / ns, (int)ri % ns, u->t)
                         .bandwidth_gbps
                   : 1);
}

/* At t, resource ri's rate dg Gbit/s more and d more messages sending. */
static void ls_feed(sim_ls_acc *a, size_t ri, int64_t t, double dg, int d) {
  ls_run *u = &a->run[ri];
  assert(!u->any || t >= u->t); /* the changes come in time order */
  if (u->open && u->t != t) ls_point(a, ri);
  u->t = t, u->open = true;
  u->rate += dg, u->fl += d;
}

/* Message c (from device src to dst) changed its rate: the change of each
 * resource it crosses. */
static void ls_change(sim_ls_acc *a, const sim_rate_change *c, int src,
                      int dst) {
  size_t h = tag_slot(&a->now, c->tag);
  double was = a->now.val[h], g = 8 * c->rate, dg = g - was;
  int d = (was == 0 && g > 0) - (was > 0 && g == 0);
  a->now.val[h] = g;
  if (g == 0 && !signbit(g)) tag_erase(&a->now, h);
  int rid[3];
  for (int j = resources_of(a->s, a->o, src, dst, a->nic, a->nnics, rid);
       j-- > 0;)
    if (rid[j] >= 0) ls_feed(a, (size_t)rid[j], c->t, dg, d);
}

static void ls_sink(void *ctx, const sim_rate_change *c, int src, int dst) {
  ls_change(ctx, c, src, dst);
}

void sim_ls_acc_attach(sim_ls_acc *a, sim_rate_log *log) {
  *log = (sim_rate_log){.sink = ls_sink, .sink_ctx = a};
}

/* Whether task x's transfer ran (its resources count it). */
static bool ran(const sim_task *x) {
  return x->kind == SIM_TASK_XFER && x->t_start >= 0 && x->t_done >= 0;
}

/* Each resource's bytes and messages (*m) from the n tasks t, in task
 * order, and the link_key of each message on a site pair by pair (off:
 * the CSR of keys over the pairs; malloc'ed, the caller frees both). */
static void sums_of(const sim_ls_acc *a, const sim_task *t, uint32_t n,
                    double *bytes, size_t *m, size_t **off, int64_t **keys) {
  size_t np = (size_t)a->s->nsites * a->s->nsites;
  *off = mem_calloc(np + 2, sizeof **off);
  int rid[3];
  for (uint32_t i = 0; i < n; i++)
    if (ran(&t[i])) {
      for (int j = resources_of(a->s, a->o, t[i].dev, t[i].dst, a->nic,
                                a->nnics, rid); j-- > 0;)
        if (rid[j] >= 0) bytes[rid[j]] += t[i].bytes, m[rid[j]]++;
      (*off)[rid[0] + 2]++;
    }
  for (size_t r = 0; r < np; r++) (*off)[r + 2] += (*off)[r + 1];
  *keys = mem_alloc(((*off)[np + 1] + 1) * sizeof **keys);
  for (uint32_t i = 0; i < n; i++)
    if (ran(&t[i])) {
      resources_of(a->s, a->o, t[i].dev, t[i].dst, a->nic, a->nnics, rid);
      (*keys)[(*off)[rid[0] + 1]++] = link_key(a->s, a->o, &t[i]);
    }
}

/* Resource ri of m messages and bytes: its kind, capacity and peak (from
 * its run), its points and busy time (taken from a). */
static void resource(sim_ls_acc *a, size_t ri, sim_ls_res *x, double bytes,
                     size_t m, int64_t *keys) {
  const scenario *s = a->s;
  int ns = s->nsites;
  *x = a->res[ri];
  a->res[ri] = (sim_ls_res){0}; /* its points are x's now */
  if (ri < (size_t)ns * ns) {
    x->kind = SIM_LS_LINK, x->a = (int)ri / ns, x->b = (int)ri % ns;
    x->site = -1;
    x->links = links_of(s, a->o, keys, m, x->a == x->b);
    x->capacity_gbps =
        x->links * trace_at(s->network, x->a, x->b, 0).bandwidth_gbps;
  } else {
    bool in = ri >= (size_t)ns * ns + (size_t)a->nnics;
    int k = (int)(ri - (size_t)ns * ns) - (in ? a->nnics : 0);
    x->kind = in ? SIM_LS_NIC_IN : SIM_LS_NIC_OUT;
    x->a = a->first[k], x->b = -1, x->site = s->device_site[a->first[k]];
    x->capacity_gbps = s->sites[x->site].nic_gbps;
  }
  x->flows = m;
  x->bytes = bytes;
  const ls_run *u = &a->run[ri];
  for (int i = 0; i < u->npk; i++) { /* rate over the capacity then */
    double cap = x->kind == SIM_LS_LINK ? x->links * u->pk[i].bw
                                        : x->capacity_gbps;
    if (u->pk[i].rate / cap > x->peak_util) x->peak_util = u->pk[i].rate / cap;
  }
}

void sim_ls_acc_finish(sim_ls_acc *a, const sim_task *t, uint32_t n,
                       int64_t t0, int64_t t1, sim_linkstats *out) {
  memset(out, 0, sizeof *out);
  out->t0 = t0;
  out->t1 = t1;
  for (size_t r = 0; r < a->nr; r++)
    if (a->run[r].open) ls_point(a, r);
  double *bytes = mem_calloc(a->nr + 1, sizeof *bytes);
  size_t *m = mem_calloc(a->nr + 1, sizeof *m), *off;
  int64_t *keys;
  sums_of(a, t, n, bytes, m, &off, &keys);
  size_t np = (size_t)a->s->nsites * a->s->nsites;
  out->res = mem_calloc(a->nr + 1, sizeof *out->res);
  double span = (double)(t1 - t0);
  for (size_t r = 0; r < a->nr; r++) {
    if (!m[r]) continue;
    sim_ls_res *x = &out->res[out->nres++];
    resource(a, r, x, bytes[r], m[r], r < np ? keys + off[r] : NULL);
    x->mean_util = span > 0 ? 8 * x->bytes / (x->capacity_gbps * span) : 0;
  }
  free(bytes), free(m), free(off), free(keys);
  sim_ls_acc_free(a);
}

/* Without the engine's log: each transfer at its mean rate over its span
 * on the wire (an estimate: messages sharing a resource can sum above its
 * capacity), in task order. */
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

/* A change and its place in its log. */
typedef struct placed {
  sim_rate_change c;
  size_t at;
} placed;

static int placed_cmp(const void *x, const void *y) {
  const placed *a = x, *b = y;
  if (a->c.t != b->c.t) return a->c.t < b->c.t ? -1 : 1;
  return (a->at > b->at) - (a->at < b->at);
}

/* log in time order (ties in log order): log itself when it is (the
 * engine's), else a sorted copy into *mine (the mean rates'). */
static const sim_rate_log *in_time_order(const sim_rate_log *log,
                                         sim_rate_log *mine) {
  size_t i = 1;
  while (i < log->n && log->v[i].t >= log->v[i - 1].t) i++;
  if (i >= log->n) return log;
  placed *p = mem_alloc(log->n * sizeof *p);
  for (i = 0; i < log->n; i++) p[i] = (placed){log->v[i], i};
  qsort(p, log->n, sizeof *p, placed_cmp);
  *mine = (sim_rate_log){.v = mem_alloc(log->n * sizeof *mine->v),
                         .n = log->n, .cap = log->n};
  for (i = 0; i < log->n; i++) mine->v[i] = p[i].c;
  free(p);
  return mine;
}

void sim_linkstats_build(const scenario *s, const transport_options *o,
                         const sim_task *t, uint32_t n, int64_t t0, int64_t t1,
                         const sim_rate_log *log, sim_linkstats *out) {
  sim_rate_log mean = {0}, sorted = {0};
  if (!log) mean_log(s, t, n, &mean), log = &mean;
  log = in_time_order(log, &sorted);
  sim_ls_acc *a = sim_ls_acc_new(s, o, true);
  for (size_t i = 0; i < log->n; i++) {
    const sim_rate_change *c = &log->v[i];
    if (c->tag < n && t[c->tag].kind == SIM_TASK_XFER)
      ls_change(a, c, t[c->tag].dev, t[c->tag].dst);
  }
  sim_ls_acc_finish(a, t, n, t0, t1, out);
  sim_rate_log_free(&mean);
  sim_rate_log_free(&sorted);
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

/* The busiest resource not yet among ord[0 .. k). */
static int busiest_next(const sim_linkstats *ls, const int *ord, int k) {
  int best = -1;
  for (int i = 0; i < ls->nres; i++) {
    bool taken = false;
    for (int j = 0; j < k && !taken; j++) taken = ord[j] == i;
    if (!taken && (best < 0 || ls->res[i].mean_util > ls->res[best].mean_util))
      best = i;
  }
  return best;
}

int sim_linkstats_busiest(const sim_linkstats *ls, int *ord, int k) {
  int n = 0;
  for (; n < k && n < ls->nres; n++) ord[n] = busiest_next(ls, ord, n);
  return n;
}
