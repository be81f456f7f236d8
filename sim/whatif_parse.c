/* whatif_parse: the what-if grammar of whatif.h (sim_whatif_parse) and the
 * two setting lists explain's own what-ifs are built from. Apart from the
 * runs so that a parser needs only the scenario (the fuzz target reads it
 * alone). */
#include "sim/whatif_parse.h"

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

/* "A-B" (both ways) or "A>B" of len bytes: two sites, split at the one
 * '-' or '>' whose two sides are both sites (names may hold either); a
 * text that reads two ways (sites a-b and c, a and b-c) is refused. */
static int parse_pair(const scenario *s, const char *spec, const char *p,
                      size_t len, sim_whatif *w, err *e) {
  int found = 0;
  size_t first = 0;
  for (size_t d = 0; d < len; d++) {
    if (p[d] != '-' && p[d] != '>') continue;
    int a = site_n(s, p, d), b = site_n(s, p + d + 1, len - d - 1);
    if (a < 0 || b < 0) continue;
    if (found++)
      return err_set(e, ERR_CONFIG, "'%s': '%.*s' reads two ways, sites "
                     "'%.*s' and '%.*s' or '%.*s' and '%.*s' (rename one)",
                     spec, (int)len, p, (int)first, p, (int)(len - first - 1),
                     p + first + 1, (int)d, p, (int)(len - d - 1), p + d + 1);
    first = d;
    w->a = a, w->b = b, w->both = p[d] == '-';
  }
  if (found) return ERR_OK;
  char what[200];
  snprintf(what, sizeof what, "'%.*s' (two sites joined by '-' or '>')",
           (int)len, p);
  return unknown_site(s, spec, what, e);
}

/* A what-if's settings "K=V,K=V" split against the keys it may set:
 * value[k] the text of key k (NULL when absent). Each setting once, none
 * empty, at least one; expect words them in a message. buf holds the
 * texts (SIM_WHATIF_LABEL bytes). */
static int split_settings(const char *spec, const char *p,
                          const char *const *keys, int nkeys,
                          const char *expect, char *buf, const char **value,
                          err *e) {
  snprintf(buf, SIM_WHATIF_LABEL, "%s", p);
  for (int k = 0; k < nkeys; k++) value[k] = NULL;
  if (!*buf)
    return err_set(e, ERR_CONFIG, "'%s': nothing after the ':' (%s)", spec,
                   expect);
  for (char *t = buf, *next; t; t = next) {
    next = strchr(t, ',');
    if (next) *next++ = '\0';
    char *eq = strchr(t, '=');
    int k = 0;
    while (eq && k < nkeys &&
           (strlen(keys[k]) != (size_t)(eq - t) ||
            memcmp(keys[k], t, (size_t)(eq - t))))
      k++;
    if (!*t)
      return err_set(e, ERR_CONFIG, "'%s': an empty setting (%s, joined by "
                     "',')", spec, expect);
    if (!eq || k == nkeys || !eq[1])
      return err_set(e, ERR_CONFIG, "'%s': '%s' is not %s", spec, t, expect);
    if (value[k])
      return err_set(e, ERR_CONFIG, "'%s': %s given twice", spec, keys[k]);
    value[k] = eq + 1;
  }
  return ERR_OK;
}

/* A value of path key `key` (the whole of text, within the loader's
 * bounds), named `what` in a message. */
static int parse_path_value(const char *text, const char *spec,
                            const char *what, int k, double *out, err *e) {
  char *end;
  double v = strtod(text, &end);
  if (end == text || *end || !trace_path_ok(k, v))
    return err_set(e, ERR_CONFIG, "'%s': the %s '%s' is not %s", spec, what,
                   text, trace_path_keys[k].what);
  *out = v;
  return ERR_OK;
}

/* A count of NCCL sockets (the whole of text, 1 .. SCENARIO_SOCKETS_MAX). */
static int parse_sockets(const char *text, const char *spec, int *out,
                         err *e) {
  char *end;
  long v = strtol(text, &end, 10);
  if (end == text || *end || v < 1 || v > SCENARIO_SOCKETS_MAX)
    return err_set(e, ERR_CONFIG, "'%s': the sockets '%s' are not a whole "
                   "number in 1 .. %d", spec, text, SCENARIO_SOCKETS_MAX);
  *out = (int)v;
  return ERR_OK;
}

/* "bw=F,lat=F,flow=G,window=B" (any of them, each once) into w. */
int sim_whatif_parse_link_settings(const char *spec, const char *p,
                                   sim_whatif *w, err *e) {
  static const char *const keys[] = {"bw", "lat", "flow", "window"};
  char buf[SIM_WHATIF_LABEL];
  const char *v[4];
  w->bw = w->lat = 1;
  int rc = split_settings(spec, p, keys, 4, "bw=F, lat=F, flow=G or window=B",
                          buf, v, e);
  if (!rc && v[0]) rc = parse_factor(v[0], spec, &w->bw, e);
  if (!rc && v[1]) rc = parse_factor(v[1], spec, &w->lat, e);
  if (!rc && v[2])
    rc = parse_path_value(v[2], spec, "flow", TRACE_PATH_flow_gbps, &w->flow_gbps, e);
  if (!rc && v[3])
    rc = parse_path_value(v[3], spec, "window", TRACE_PATH_window_bytes, &w->window, e);
  return rc;
}

static int parse_link(const scenario *s, const char *spec, const char *p,
                      sim_whatif *w, err *e) {
  const char *colon = strrchr(p, ':');
  if (!colon)
    return err_set(e, ERR_CONFIG, "'%s': a link what-if is link:A-B:bw=F "
                   "or link:A>B:lat=F (or flow=G, window=B)", spec);
  w->kind = SIM_WHATIF_LINK;
  int rc = parse_pair(s, spec, p, (size_t)(colon - p), w, e);
  return rc ? rc : sim_whatif_parse_link_settings(spec, colon + 1, w, e);
}

/* "window=B,sockets=N" (either or both, each once) of site `site` into w. */
int sim_whatif_parse_hosts(const char *spec, const char *p, int site,
                           sim_whatif *w, err *e) {
  static const char *const keys[] = {"window", "sockets"};
  char buf[SIM_WHATIF_LABEL];
  const char *v[2];
  w->kind = SIM_WHATIF_HOSTS;
  w->a = w->b = site;
  int rc = split_settings(spec, p, keys, 2, "speed=F, window=B or sockets=N",
                          buf, v, e);
  if (!rc && v[0])
    rc = parse_path_value(v[0], spec, "window", TRACE_PATH_window_bytes, &w->window, e);
  if (!rc && v[1]) rc = parse_sockets(v[1], spec, &w->sockets, e);
  return rc;
}

/* The site what-if that reads p as site p[0 .. at) and p[at] ('=': a GPU,
 * ':': its speed or hosts) followed by the rest. */
static int parse_site_at(const scenario *s, const char *spec, const char *p,
                         size_t at, sim_whatif *w, err *e) {
  int site = site_n(s, p, at);
  const char *rest = p + at + 1;
  if (p[at] == ':' && strncmp(rest, "speed=", 6))
    return sim_whatif_parse_hosts(spec, rest, site, w, e);
  if (p[at] == ':') {
    w->kind = SIM_WHATIF_SPEED;
    w->a = s->sites[site].first_device;
    w->b = w->a + s->sites[site].ndevices;
    return parse_factor(rest + 6, spec, &w->speed, e);
  }
  w->kind = SIM_WHATIF_GPU;
  w->a = site;
  const spec_gpu *g = spec_gpu_find(rest);
  if (!g) {
    int n;
    const spec_gpu *all = spec_gpus(&n);
    char list[512] = "";
    for (int i = 0; i < n && strlen(list) < sizeof list - 40; i++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
               i ? ", " : "", all[i].name);
    return err_set(e, ERR_CONFIG, "'%s': unknown GPU '%s' (%s)", spec, rest,
                   list);
  }
  w->gpu = g->name;
  return ERR_OK;
}

/* site:NAME=GPU, site:NAME:speed=F, site:NAME:SETTINGS, where NAME may hold
 * ':' or '=': every split after a site's name that reads whole is a
 * reading; one is taken, two are refused, none gives the longest name's
 * error (or the site's). */
static int parse_site(const scenario *s, const char *spec, const char *p,
                      sim_whatif *w, err *e) {
  size_t len = strlen(p), last = len, first = len;
  int ok = 0;
  sim_whatif base = *w;
  for (size_t at = 0; at < len; at++) {
    if ((p[at] != ':' && p[at] != '=') || site_n(s, p, at) < 0) continue;
    sim_whatif t = base;
    last = at;
    if (parse_site_at(s, spec, p, at, &t, NULL)) continue;
    if (ok++)
      return err_set(e, ERR_CONFIG, "'%s': reads as site '%.*s' and as site "
                     "'%.*s' (rename one)", spec, (int)first, p, (int)at, p);
    first = at, *w = t;
  }
  if (ok) return ERR_OK;
  if (last < len) return parse_site_at(s, spec, p, last, w, e);
  if (!strpbrk(p, ":="))
    return err_set(e, ERR_CONFIG, "'%s': a site what-if is site:NAME=GPU, "
                   "site:NAME:speed=F or site:NAME:window=B,sockets=N", spec);
  return unknown_site(s, spec, "the site", e);
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

/* The what-ifs of one text (joined by ';', none empty) into v[*n ..]. */
static int parse_joined(const scenario *s, const char *text, sim_whatif *v,
                        int *n, err *e) {
  char *buf = mem_strdup(text);
  int rc = ERR_OK;
  for (char *t = buf, *next; t && !rc; t = next) {
    next = strchr(t, ';');
    if (next) *next++ = '\0';
    if (!*t)
      rc = err_set(e, ERR_CONFIG, "'%s': an empty what-if (what-ifs are "
                   "joined by one ';')", text);
    else if (!(rc = sim_whatif_parse(s, t, &v[*n], e)))
      (*n)++;
  }
  free(buf);
  return rc;
}

int sim_whatif_parse_list(const scenario *s, const char *const *specs, int n,
                          sim_whatif **out, int *count, err *e) {
  *out = NULL;
  *count = 0;
  int cap = 1;
  for (int i = 0; i < n; i++)
    for (const char *c = specs[i]; *c; c++) cap += 1 + (*c == ';');
  sim_whatif *v = mem_calloc((size_t)cap, sizeof *v);
  int rc = ERR_OK;
  for (int i = 0; i < n && !rc; i++) rc = parse_joined(s, specs[i], v, count, e);
  if (rc) {
    free(v);
    *count = 0;
    return rc;
  }
  *out = v;
  return ERR_OK;
}
