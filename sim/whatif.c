/* whatif: see whatif.h. A what-if run copies what it changes — the network
 * trace (trace_copy), the sites array (shallow: the strings stay the
 * caller's) or a speed per device — into a scenario struct copied by
 * value, runs sim_run on it, and frees the copies. */
#include "sim/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/spec.h"

/* A factor "F" (the whole of text, finite, > 0). */
static int parse_factor(const char *text, const char *spec, double *out,
                        err *e) {
  char *end;
  double v = strtod(text, &end);
  if (end == text || *end || !isfinite(v) || !(v > 0))
    return err_set(e, ERR_CONFIG, "'%s': the factor '%s' is not a finite "
                   "number > 0", spec, text);
  *out = v;
  return ERR_OK;
}

/* The site called name[0 .. len), or -1. */
static int site_n(const scenario *s, const char *name, size_t len) {
  for (int i = 0; i < s->nsites; i++)
    if (strlen(s->sites[i].name) == len && !memcmp(s->sites[i].name, name, len))
      return i;
  return -1;
}

static int unknown_site(const scenario *s, const char *spec, const char *what,
                        err *e) {
  char list[512] = "";
  for (int i = 0; i < s->nsites && strlen(list) < sizeof list - 80; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
             i ? ", " : "", s->sites[i].name);
  return err_set(e, ERR_CONFIG, "'%s': %s is not a site of %s (%s)", spec,
                 what, s->name, list);
}

/* "A-B" (both ways) or "A>B" of len bytes: two sites. */
static int parse_pair(const scenario *s, const char *spec, const char *p,
                      size_t len, sim_whatif *w, err *e) {
  const char *gt = memchr(p, '>', len);
  if (gt) {
    w->a = site_n(s, p, (size_t)(gt - p));
    w->b = site_n(s, gt + 1, len - (size_t)(gt - p) - 1);
    w->both = false;
  } else { /* the first '-' that splits it into two sites */
    w->a = w->b = -1;
    for (const char *d = p; d < p + len && w->b < 0; d++)
      if (*d == '-' && site_n(s, p, (size_t)(d - p)) >= 0) {
        w->a = site_n(s, p, (size_t)(d - p));
        w->b = site_n(s, d + 1, len - (size_t)(d - p) - 1);
      }
    w->both = true;
  }
  if (w->a < 0 || w->b < 0) {
    char what[200];
    snprintf(what, sizeof what, "'%.*s' (two sites joined by '-' or '>')",
             (int)len, p);
    return unknown_site(s, spec, what, e);
  }
  return ERR_OK;
}

/* "bw=F,lat=F" into w's scales. */
static int parse_link_settings(const char *spec, const char *p, sim_whatif *w,
                               err *e) {
  char buf[SIM_WHATIF_LABEL];
  snprintf(buf, sizeof buf, "%s", p);
  w->bw = w->lat = 1;
  for (char *save, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    int rc;
    if (!strncmp(t, "bw=", 3)) rc = parse_factor(t + 3, spec, &w->bw, e);
    else if (!strncmp(t, "lat=", 4)) rc = parse_factor(t + 4, spec, &w->lat, e);
    else
      return err_set(e, ERR_CONFIG, "'%s': '%s' is not bw=F or lat=F", spec, t);
    if (rc) return rc;
  }
  return ERR_OK;
}

static int parse_link(const scenario *s, const char *spec, const char *p,
                      sim_whatif *w, err *e) {
  const char *colon = strrchr(p, ':');
  if (!colon)
    return err_set(e, ERR_CONFIG, "'%s': a link what-if is link:A-B:bw=F "
                   "or link:A>B:lat=F", spec);
  w->kind = SIM_WHATIF_LINK;
  int rc = parse_pair(s, spec, p, (size_t)(colon - p), w, e);
  return rc ? rc : parse_link_settings(spec, colon + 1, w, e);
}

static int parse_site(const scenario *s, const char *spec, const char *p,
                      sim_whatif *w, err *e) {
  const char *colon = strchr(p, ':'), *eq = strchr(p, '=');
  if (colon && !strncmp(colon, ":speed=", 7)) {
    int site = site_n(s, p, (size_t)(colon - p));
    if (site < 0) return unknown_site(s, spec, "the site", e);
    w->kind = SIM_WHATIF_SPEED;
    w->a = s->sites[site].first_device;
    w->b = w->a + s->sites[site].ndevices;
    return parse_factor(colon + 7, spec, &w->speed, e);
  }
  if (!eq || colon)
    return err_set(e, ERR_CONFIG, "'%s': a site what-if is site:NAME=GPU or "
                   "site:NAME:speed=F", spec);
  w->kind = SIM_WHATIF_GPU;
  w->a = site_n(s, p, (size_t)(eq - p));
  if (w->a < 0) return unknown_site(s, spec, "the site", e);
  const spec_gpu *g = spec_gpu_find(eq + 1);
  if (!g) {
    int n;
    const spec_gpu *all = spec_gpus(&n);
    char list[512] = "";
    for (int i = 0; i < n && strlen(list) < sizeof list - 40; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
               i ? ", " : "", all[i].name);
    return err_set(e, ERR_CONFIG, "'%s': unknown GPU '%s' (%s)", spec, eq + 1,
                   list);
  }
  w->gpu = g->name;
  return ERR_OK;
}

static int parse_device(const scenario *s, const char *spec, const char *p,
                        sim_whatif *w, err *e) {
  char *end;
  long d = strtol(p, &end, 10);
  if (end == p || strncmp(end, ":speed=", 7))
    return err_set(e, ERR_CONFIG, "'%s': a device what-if is "
                   "device:N:speed=F", spec);
  if (d < 0 || d >= s->ndevices)
    return err_set(e, ERR_CONFIG, "'%s': %s has devices 0 .. %d", spec,
                   s->name, s->ndevices - 1);
  w->kind = SIM_WHATIF_SPEED;
  w->a = (int)d;
  w->b = (int)d + 1;
  return parse_factor(end + 7, spec, &w->speed, e);
}

int sim_whatif_parse(const scenario *s, const char *spec, sim_whatif *out,
                     err *e) {
  *out = (sim_whatif){.bw = 1, .lat = 1, .speed = 1};
  if (strlen(spec) >= SIM_WHATIF_LABEL)
    return err_set(e, ERR_CONFIG, "'%.40s...': longer than %d characters",
                   spec, SIM_WHATIF_LABEL - 1);
  snprintf(out->label, sizeof out->label, "%s", spec);
  if (!strncmp(spec, "link:", 5)) return parse_link(s, spec, spec + 5, out, e);
  if (!strncmp(spec, "site:", 5)) return parse_site(s, spec, spec + 5, out, e);
  if (!strncmp(spec, "device:", 7))
    return parse_device(s, spec, spec + 7, out, e);
  return err_set(e, ERR_CONFIG, "'%s': a what-if starts with link:, site: "
                 "or device:", spec);
}

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

static void apply(changed *x, const scenario *s, const sim_options *o,
                  const sim_whatif *w) {
  if (w->kind == SIM_WHATIF_LINK) {
    if (!x->net) x->c.network = x->net = trace_copy(s->network);
    trace_scale_pair(x->net, w->a, w->b, w->lat, w->bw);
    if (w->both && w->a != w->b)
      trace_scale_pair(x->net, w->b, w->a, w->lat, w->bw);
  } else if (w->kind == SIM_WHATIF_GPU) {
    if (!x->sites) {
      x->sites = mem_alloc((size_t)s->nsites * sizeof *x->sites);
      memcpy(x->sites, s->sites, (size_t)s->nsites * sizeof *x->sites);
      x->c.sites = x->sites;
    }
    x->sites[w->a].gpu = (char *)w->gpu; /* borrowed, never freed here */
    x->sites[w->a].gpu_line = 0;
  } else {
    if (!x->speed) {
      x->speed = mem_alloc(((size_t)s->ndevices + 1) * sizeof *x->speed);
      for (int d = 0; d < s->ndevices; d++)
        x->speed[d] = o->speedup ? o->speedup[d] : 1;
    }
    for (int d = w->a; d < w->b; d++) x->speed[d] *= w->speed;
  }
}

int sim_whatif_run(const scenario *s, const alloc *a, const sim_options *o,
                   const sim_whatif *w, int n, sim_result *out, err *e) {
  memset(out, 0, sizeof *out);
  changed x = {.c = *s};
  for (int i = 0; i < n; i++) apply(&x, s, o, &w[i]);
  int rc = ERR_OK;
  if (x.net) {
    trace_value lo, hi;
    trace_extremes(x.net, &lo, &hi);
    if (lo.bandwidth_gbps < TRACE_MIN_BANDWIDTH_GBPS ||
        hi.latency_ms > TRACE_MAX_LATENCY_MS || !isfinite(hi.bandwidth_gbps))
      rc = err_set(e, ERR_RANGE, "%s: the what-if takes a link past the "
                   "trace's bounds (%g Gbit/s at least, %g ms at most)",
                   s->name, TRACE_MIN_BANDWIDTH_GBPS, TRACE_MAX_LATENCY_MS);
  }
  sim_options oo = *o;
  oo.timeline_path = NULL;
  oo.inspect = NULL;
  if (x.speed) oo.speedup = x.speed;
  if (!rc) rc = sim_run(&x.c, a, &oo, out, e);
  changed_free(&x);
  return rc;
}

typedef struct inspect_ctx {
  const scenario *s;
  const transport_options *o;
  sim_critpath *cp;
  sim_linkstats *ls;
  bool series;
} inspect_ctx;

static void inspect(void *ctx, const sim_graph *g) {
  inspect_ctx *c = ctx;
  sim_critpath_build(g, c->s, c->o, 0, c->cp);
  if (!c->ls) return;
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  sim_linkstats_build(c->s, c->o, t, n, 0, sim_graph_end(g), c->series,
                      c->ls);
}

int sim_whatif_explain(const scenario *s, const alloc *a, const sim_options *o,
                       sim_result *out, sim_critpath *cp, sim_linkstats *ls,
                       bool series, err *e) {
  memset(cp, 0, sizeof *cp);
  if (ls) memset(ls, 0, sizeof *ls);
  sim_options oo = *o;
  inspect_ctx c = {s, &oo.transport, cp, ls, series};
  oo.inspect = inspect;
  oo.inspect_ctx = &c;
  return sim_run(s, a, &oo, out, e);
}

/* The what-ifs of the top k resources of cp into v (room for 3 k). */
static int top_whatifs(const scenario *s, const sim_critpath *cp, int k,
                       sim_whatif *v) {
  int n = 0, li = 0, di = 0;
  for (int r = 0; r < k && (li < cp->nlinks || di < cp->ndevices); r++) {
    bool link = di >= cp->ndevices ||
                (li < cp->nlinks &&
                 cp->links[li].seconds >= cp->devices[di].seconds);
    if (link) {
      const sim_cp_link *l = &cp->links[li++];
      const char *an = s->sites[l->src_site].name,
                 *bn = s->sites[l->dst_site].name;
      const double bw[] = {2, 0.5, 1}, lat[] = {1, 1, 0.5};
      for (int j = 0; j < 3; j++) {
        sim_whatif *w = &v[n++];
        *w = (sim_whatif){.kind = SIM_WHATIF_LINK, .a = l->src_site,
                          .b = l->dst_site, .bw = bw[j], .lat = lat[j],
                          .speed = 1};
        snprintf(w->label, sizeof w->label, "link:%.60s>%.60s:%s", an, bn,
                 j == 0 ? "bw=2" : j == 1 ? "bw=0.5" : "lat=0.5");
      }
    } else {
      int d = cp->devices[di++].dev;
      sim_whatif *w = &v[n++];
      *w = (sim_whatif){.kind = SIM_WHATIF_SPEED, .a = d, .b = d + 1,
                        .bw = 1, .lat = 1, .speed = 2};
      snprintf(w->label, sizeof w->label, "device:%d:speed=2", d);
    }
  }
  return n;
}

static int gain_cmp(const void *x, const void *y) {
  const sim_sensitivity *a = x, *b = y;
  if (a->gain_s != b->gain_s) return a->gain_s > b->gain_s ? -1 : 1;
  return 0;
}

int sim_whatif_sensitivities(const scenario *s, const alloc *a,
                             const sim_options *o, const sim_sens_opts *q,
                             sim_sensitivity **out, int *nout, err *e) {
  int k = q->top, n = q->nextra;
  const sim_whatif *extra = q->extra;
  double base_s = q->base_s;
  sim_whatif *v = mem_alloc(((size_t)(k > 0 ? k : 0) * 3 + (size_t)n + 1) *
                            sizeof *v);
  int m = k > 0 ? top_whatifs(s, q->cp, k, v) : 0;
  for (int i = 0; i < n; i++) v[m++] = extra[i];
  sim_sensitivity *r = mem_calloc((size_t)m + 1, sizeof *r);
  int rc = ERR_OK;
  for (int i = 0; i < m && !rc; i++) {
    sim_result x;
    rc = sim_whatif_run(s, a, o, &v[i], 1, &x, e);
    if (rc) break;
    r[i] = (sim_sensitivity){.w = v[i], .iteration_s = x.iteration_s,
                             .gain_s = base_s - x.iteration_s};
    sim_result_free(&x);
    if (q->progress) q->progress(q->progress_ctx, i + 1, m);
  }
  free(v);
  if (rc) {
    free(r);
    *out = NULL;
    *nout = 0;
    return rc;
  }
  /* stable: equal gains keep the order they were made in */
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && gain_cmp(&r[j - 1], &r[j]) > 0; j--) {
      sim_sensitivity t = r[j];
      r[j] = r[j - 1];
      r[j - 1] = t;
    }
  *out = r;
  *nout = m;
  return ERR_OK;
}
