/* whatif: see whatif.h (its grammar: whatif_parse.c). A what-if run copies what it changes — the network
 * trace (trace_copy), the sites array (shallow: the strings stay the
 * caller's) or a speed per device — into a scenario struct copied by
 * value, runs sim_run on it, and frees the copies. explain's re-runs of a
 * link or a site's hosts run on one task graph of the unchanged scenario,
 * built once and reset per re-run (sim_engine_rerun), where that graph is
 * theirs (sim_engine_same_graph: the barriers' latencies unchanged); the
 * others build their own. */
#include "sim/whatif.h"
#include "sim/whatif_parse.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/params.h"
#include "models/spec.h"

/* The copies a what-if run owns. */
typedef struct changed {
  scenario c;
  trace *net;
  scenario_site *sites;
  double *speed;
} changed;

static void changed_free(changed *x) {
  trace_free(x->net);
  free(x->sites);
  free(x->speed);
}

/* Link a -> b of x's network as w changes it. */
static void apply_pair(changed *x, int a, int b, const sim_whatif *w) {
  trace_scale_pair(x->net, a, b, w->lat, w->bw);
  if (w->flow_gbps > 0)
    trace_set_pair_path(x->net, a, b, TRACE_PATH_flow_gbps, w->flow_gbps);
  if (w->window > 0)
    trace_set_pair_path(x->net, a, b, TRACE_PATH_window_bytes, w->window);
}

/* x's own copy of the sites array (shallow: the strings stay s's). */
static scenario_site *own_sites(changed *x, const scenario *s) {
  if (!x->sites) {
    x->sites = mem_alloc((size_t)s->nsites * sizeof *x->sites);
    memcpy(x->sites, s->sites, (size_t)s->nsites * sizeof *x->sites);
    x->c.sites = x->sites;
  }
  return x->sites;
}

static void apply(changed *x, const scenario *s, const sim_options *o,
                  const sim_whatif *w) {
  switch (w->kind) {
    case SIM_WHATIF_LINK:
      if (!x->net) x->c.network = x->net = trace_copy(s->network);
      apply_pair(x, w->a, w->b, w);
      if (w->both && w->a != w->b) apply_pair(x, w->b, w->a, w);
      break;
    case SIM_WHATIF_GPU:
      own_sites(x, s)[w->a].gpu = (char *)w->gpu; /* borrowed, not freed */
      x->sites[w->a].gpu_line = 0;
      break;
    case SIM_WHATIF_HOSTS:
      own_sites(x, s);
      if (w->window > 0) x->sites[w->a].tcp_window_bytes = w->window;
      if (w->sockets > 0) x->sites[w->a].nccl_sockets = w->sockets;
      break;
    case SIM_WHATIF_SPEED:
      if (!x->speed) {
        x->speed = mem_alloc(((size_t)s->ndevices + 1) * sizeof *x->speed);
        for (int d = 0; d < s->ndevices; d++)
          x->speed[d] = o->speedup ? o->speedup[d] : 1;
      }
      for (int d = w->a; d < w->b; d++) x->speed[d] *= w->speed;
      break;
  }
}

/* *x: s with the n what-ifs w applied (changed_free), checked against the
 * trace's bounds. ERR_OK, or ERR_RANGE. */
static int changed_make(changed *x, const scenario *s, const sim_options *o,
                        const sim_whatif *w, int n, err *e) {
  *x = (changed){.c = *s};
  for (int i = 0; i < n; i++) apply(x, s, o, &w[i]);
  if (!x->net) return ERR_OK;
  trace_value lo, hi;
  trace_extremes(x->net, &lo, &hi);
  if (lo.bandwidth_gbps < TRACE_MIN_BANDWIDTH_GBPS ||
      hi.latency_ms > TRACE_MAX_LATENCY_MS || !isfinite(hi.bandwidth_gbps))
    return err_set(e, ERR_RANGE, "%s: the what-if takes a link past the "
                   "trace's bounds (%g Gbit/s at least, %g ms at most)",
                   s->name, TRACE_MIN_BANDWIDTH_GBPS, TRACE_MAX_LATENCY_MS);
  return ERR_OK;
}

/* A re-run's options: o's, with no timeline, inspection or rate log (only
 * its iteration is read). */
static sim_options rerun_options(const sim_options *o) {
  sim_options oo = *o;
  oo.timeline_path = NULL;
  oo.inspect = NULL;
  oo.rates = NULL;
  return oo;
}

/* sim_whatif_run building its graph in *spare (sim_run_reuse; NULL:
 * none): explain's re-runs of 10^4 devices touch no fresh pages. */
static int whatif_run(const scenario *s, const alloc *a, const sim_options *o,
                      const sim_whatif *w, int n, sim_graph **spare,
                      sim_result *out, err *e) {
  memset(out, 0, sizeof *out);
  changed x;
  int rc = changed_make(&x, s, o, w, n, e);
  sim_options oo = rerun_options(o);
  if (x.speed) oo.speedup = x.speed;
  if (!rc) rc = sim_run_reuse(&x.c, a, &oo, spare, out, e);
  changed_free(&x);
  return rc;
}

int sim_whatif_run(const scenario *s, const alloc *a, const sim_options *o,
                   const sim_whatif *w, int n, sim_result *out, err *e) {
  return whatif_run(s, a, o, w, n, NULL, out, e);
}

typedef struct inspect_ctx {
  const scenario *s;
  const transport_options *o;
  sim_critpath *cp;
  sim_linkstats *ls;
  sim_ls_acc *acc; /* the link statistics, summed as the run goes */
} inspect_ctx;

static void inspect(void *ctx, const sim_graph *g) {
  inspect_ctx *c = ctx;
  sim_critpath_build(g, c->s, c->o, 0, c->cp);
  if (!c->acc) return;
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  sim_ls_acc_finish(c->acc, t, n, 0, sim_graph_end(g), c->ls);
  c->acc = NULL;
}

int sim_whatif_explain(const scenario *s, const alloc *a, const sim_options *o,
                       sim_result *out, sim_critpath *cp, sim_linkstats *ls,
                       bool series, err *e) {
  memset(cp, 0, sizeof *cp);
  if (ls) memset(ls, 0, sizeof *ls);
  sim_options oo = *o;
  oo.timeline_path = NULL; /* its log is the statistics' sink */
  sim_rate_log rates = {0};
  inspect_ctx c = {s, &oo.transport, cp, ls,
                   ls ? sim_ls_acc_new(s, &oo.transport, series) : NULL};
  oo.inspect = inspect;
  oo.inspect_ctx = &c;
  oo.rates = NULL;
  if (c.acc) sim_ls_acc_attach(c.acc, &rates), oo.rates = &rates;
  int rc = sim_run(s, a, &oo, out, e);
  sim_ls_acc_free(c.acc); /* a run that failed */
  return rc;
}

/* What explain offers per top link at most: bandwidth x2, x0.5, latency
 * x0.5, and the fixes of a window: the path's window, its flow, the
 * receiver's sockets, a site's window. */
#define PER_LINK 7

/* The what-ifs made for the top resources (room for k PER_LINK). */
typedef struct made {
  const scenario *s;
  sim_sensitivity *r;
  int n;
} made;

/* A what-if on link l (index li) of settings text, built by the parser
 * (so that its label reads back as the same change). */
static void add_link(made *m, const sim_cp_link *l, int li, const char *text) {
  sim_whatif *w = &m->r[m->n].w;
  *w = (sim_whatif){.kind = SIM_WHATIF_LINK, .a = l->src_site,
                    .b = l->dst_site, .speed = 1};
  snprintf(w->label, sizeof w->label, "link:%.60s>%.60s:%s",
           m->s->sites[l->src_site].name, m->s->sites[l->dst_site].name, text);
  err e = {0};
  int rc = sim_whatif_parse_link_settings(w->label, text, w, &e);
  assert(rc == ERR_OK && "explain's own link settings parse");
  (void)rc;
  m->r[m->n].link = li, m->r[m->n++].device = -1;
}

/* A what-if on the hosts of site `site` for link li, of settings text. */
static void add_hosts(made *m, int site, int li, const char *text) {
  sim_whatif *w = &m->r[m->n].w;
  *w = (sim_whatif){.bw = 1, .lat = 1, .speed = 1};
  snprintf(w->label, sizeof w->label, "site:%.60s:%s", m->s->sites[site].name,
           text);
  err e = {0};
  int rc = sim_whatif_parse_hosts(w->label, text, site, w, &e);
  assert(rc == ERR_OK && "explain's own site settings parse");
  (void)rc;
  m->r[m->n].link = li, m->r[m->n++].device = -1;
}

/* The step on link l bound longest by its window or its loss bound: what
 * their fixes start from; NULL when none was. */
static const sim_cp_step *window_step(const sim_critpath *cp,
                                      const sim_cp_link *l) {
  const sim_cp_step *best = NULL;
  for (size_t i = 0; i < cp->nsteps; i++) {
    const sim_cp_step *x = &cp->steps[i];
    if (x->kind != SIM_TASK_XFER || x->src_site != l->src_site ||
        x->dst_site != l->dst_site ||
        (x->cause != SIM_CP_CAUSE_WINDOW && x->cause != SIM_CP_CAUSE_LOSS))
      continue;
    if (!best || x->t1 - x->t0 > best->t1 - best->t0) best = x;
  }
  return best;
}

/* Site a's window raised towards b's and the path's bandwidth-delay
 * product bdp, when a's alone is the connection's (the smaller of the
 * two; a site link's both ends are its own). */
static void add_site_window(made *m, int li, int a, int b, double bdp) {
  double wa = m->s->sites[a].tcp_window_bytes,
         wb = m->s->sites[b].tcp_window_bytes;
  double to = a == b ? bdp : fmin(wb, bdp);
  char text[64];
  snprintf(text, sizeof text, "window=%.0f", round(to));
  if ((a == b || wa < wb) && round(to) > wa) add_hosts(m, a, li, text);
}

/* The fixes of link li's window or loss bound (see whatif.h). */
static void window_fixes(made *m, const sim_options *o, const sim_critpath *cp,
                         int li) {
  const sim_cp_link *l = &cp->links[li];
  const sim_cp_step *x = window_step(cp, l);
  if (!x || !(x->rtt_s > 0)) return;
  const scenario *s = m->s;
  trace_value v = scenario_link(s, x->dev, x->dst, x->t0);
  bool window = l->cause_s[SIM_CP_CAUSE_WINDOW] > 0 &&
                !(o->transport.window_bytes > 0);
  double bdp = round(v.bandwidth_gbps * 1e9 / 8 * x->rtt_s);
  char text[64];
  if (window && bdp > x->window_bytes && bdp <= TRACE_WINDOW_MAX_BYTES) {
    snprintf(text, sizeof text, "window=%.0f", bdp);
    add_link(m, l, li, text);
  }
  if (window && !(v.window_bytes > 0)) {
    snprintf(text, sizeof text, "flow=%.6g",
             2 * 8 * x->window_bytes / x->rtt_s * 1e-9);
    add_link(m, l, li, text);
  }
  int sk = s->sites[l->dst_site].nccl_sockets;
  if (sk < SCENARIO_SOCKETS_MAX) {
    snprintf(text, sizeof text, "sockets=%d",
             sk * 2 < SCENARIO_SOCKETS_MAX ? sk * 2 : SCENARIO_SOCKETS_MAX);
    add_hosts(m, l->dst_site, li, text);
  }
  bool from_sites = window && !(v.window_bytes > 0) && !(v.flow_gbps > 0) &&
                    !(params_get(PARAMS_WINDOW_BYTES) > 0);
  if (from_sites && bdp <= TRACE_WINDOW_MAX_BYTES) {
    add_site_window(m, li, l->src_site, l->dst_site, bdp);
    if (l->src_site != l->dst_site)
      add_site_window(m, li, l->dst_site, l->src_site, bdp);
  }
}

/* The what-ifs of the top k resources of cp into m. */
static void top_whatifs(made *m, const sim_options *o, const sim_critpath *cp,
                        int k) {
  int li = 0, di = 0;
  for (int r = 0; r < k && (li < cp->nlinks || di < cp->ndevices); r++) {
    bool link = di >= cp->ndevices ||
                (li < cp->nlinks &&
                 cp->links[li].seconds >= cp->devices[di].seconds);
    if (link) {
      const char *const base[] = {"bw=2", "bw=0.5", "lat=0.5"};
      for (int j = 0; j < 3; j++) add_link(m, &cp->links[li], li, base[j]);
      window_fixes(m, o, cp, li++);
    } else {
      int d = cp->devices[di].dev;
      sim_whatif *w = &m->r[m->n].w;
      *w = (sim_whatif){.kind = SIM_WHATIF_SPEED, .a = d, .b = d + 1,
                        .bw = 1, .lat = 1, .speed = 2};
      snprintf(w->label, sizeof w->label, "device:%d:speed=2", d);
      m->r[m->n].link = -1, m->r[m->n++].device = di++;
    }
  }
}

static int gain_cmp(const void *x, const void *y) {
  const sim_sensitivity *a = x, *b = y;
  if (a->gain_s != b->gain_s) return a->gain_s > b->gain_s ? -1 : 1;
  return 0;
}

/* What-ifs the kept graph may serve: a link's values or a site's hosts'
 * settings, which the graph reads only through its barriers' latencies
 * (sim_engine_same_graph compares them); a GPU or a speed changes its
 * compute times. */
static bool keeps_graph(const sim_whatif *w) {
  switch (w->kind) {
    case SIM_WHATIF_LINK:
    case SIM_WHATIF_HOSTS: return true;
    case SIM_WHATIF_SPEED:
    case SIM_WHATIF_GPU: return false;
  }
  return false;
}

/* The re-runs' engine of the unchanged scenario: its task graph built and
 * frozen once, its run state reset per re-run (as a long run's). */
typedef struct kept {
  sim_engine *x;
  bool failed; /* it could not be made: every re-run builds its own */
} kept;

/* w re-run on k's graph (made from s on first use) into *out: false when
 * that graph is not w's, or on any failure (the re-run in order, after,
 * reports it). */
static bool rerun_kept(const scenario *s, const alloc *a, const sim_options *o,
                       const sim_whatif *w, kept *k, sim_result *out) {
  if (!keeps_graph(w) || k->failed) return false;
  err e = {0};
  sim_options oo = rerun_options(o);
  if (!k->x &&
      sim_engine_new(s, a, &oo, NULL, NULL, SIM_NET_WARM, &k->x, &e)) {
    k->failed = true;
    return false;
  }
  changed x;
  bool ok = !changed_make(&x, s, o, w, 1, &e) &&
            sim_engine_same_graph(k->x, &x.c) &&
            !sim_engine_rerun(k->x, &x.c, out, &e);
  changed_free(&x);
  return ok;
}

/* Row r from its re-run x (freed), and the progress of *done of n. */
static void record(const sim_sens_opts *q, sim_sensitivity *r, sim_result *x,
                   int *done, int n) {
  r->iteration_s = x->iteration_s;
  r->gain_s = q->base_s - x->iteration_s;
  sim_result_free(x);
  ++*done;
  if (q->progress) q->progress(q->progress_ctx, *done, n);
}

/* Re-runs the n rows r: first those the kept graph serves, then the rest
 * in order, each graph built in one kept graph's memory. ERR_OK, or the
 * first failing row's error. */
static int rerun_all(const scenario *s, const alloc *a, const sim_options *o,
                     const sim_sens_opts *q, sim_sensitivity *r, int n,
                     err *e) {
  bool *served = mem_calloc((size_t)n + 1, sizeof *served);
  int done = 0, rc = ERR_OK;
  kept k = {0};
  for (int i = 0; i < n; i++) {
    sim_result x;
    if ((served[i] = rerun_kept(s, a, o, &r[i].w, &k, &x)))
      record(q, &r[i], &x, &done, n);
  }
  sim_engine_free(k.x);
  sim_graph *spare = NULL; /* one graph's memory for every re-run */
  for (int i = 0; i < n && !rc; i++) {
    sim_result x;
    if (served[i] || (rc = whatif_run(s, a, o, &r[i].w, 1, &spare, &x, e)))
      continue;
    record(q, &r[i], &x, &done, n);
  }
  sim_graph_free(spare);
  free(served);
  return rc;
}

int sim_whatif_sensitivities(const scenario *s, const alloc *a,
                             const sim_options *o, const sim_sens_opts *q,
                             sim_sensitivity **out, int *nout, err *e) {
  int k = q->top, n = q->nextra;
  size_t cap = (size_t)(k > 0 ? k : 0) * PER_LINK + (size_t)n + 1;
  made m = {.s = s, .r = mem_calloc(cap, sizeof *m.r)};
  if (k > 0) top_whatifs(&m, o, q->cp, k);
  for (int i = 0; i < n; i++)
    m.r[m.n++] = (sim_sensitivity){.w = q->extra[i], .link = -1, .device = -1};
  sim_sensitivity *r = m.r;
  int rc = rerun_all(s, a, o, q, r, m.n, e);
  if (rc) {
    free(r);
    *out = NULL;
    *nout = 0;
    return rc;
  }
  /* stable: equal gains keep the order they were made in */
  for (int i = 1; i < m.n; i++)
    for (int j = i; j > 0 && gain_cmp(&r[j - 1], &r[j]) > 0; j--) {
      sim_sensitivity t = r[j];
      r[j] = r[j - 1];
      r[j - 1] = t;
    }
  *out = r;
  *nout = m.n;
  return ERR_OK;
}
