/* scenario_net: the "network" block of a scenario file (traces/FORMATS.md):
 * its shaping (tc or path), one uniform value, a trace file, or inline
 * links between named sites (both directions of every pair of distinct
 * sites listed, each pair once, pairs not listed taking the block's
 * uniform value when it gives one), each value with its path keys
 * (TRACE_PATH_MAP), and overrides between named devices ("Site:index", or
 * device ids; latency and bandwidth only).
 * Invariant: the trace built covers every ordered pair of sites with the
 * value the file gives it; nothing is applied that the file did not name
 * explicitly (a device override whose two numbers could be site numbers
 * is refused, not guessed). */
#include "traces/scenario_parts.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/mem.h"
#include "base/names.h"
#include "traces/trace_csv.h"

#define PATH_KEY_NAME_(f, lo, hi, open, what) #f,
/* usd_per_gb is a price, not a path key: billing data that never varies
 * in time and that the transport never reads (scenario_price.c reads it). */
const char *const scenario_network_keys[] = {
    "shaping", "latency_ms", "bandwidth_gbps", TRACE_PATH_MAP(PATH_KEY_NAME_)
    "trace", "links", "overrides", "usd_per_gb", NULL};
const char *const scenario_link_keys[] = {"from", "to", "between",
                                          "latency_ms", "bandwidth_gbps",
                                          TRACE_PATH_MAP(PATH_KEY_NAME_)
                                          "usd_per_gb", NULL};
#undef PATH_KEY_NAME_
const char *const scenario_override_keys[] = {
    "from", "to", "device_a", "device_b", "a", "b", "latency_ms",
    "bandwidth_gbps", NULL};

/* The path keys of o into v (absent: 0), each within its bounds. */
static int read_path(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, trace_value *v) {
  for (int k = 0; k < TRACE_NPATH_KEYS; k++) {
    const trace_path_key *key = &trace_path_keys[k];
    const json_t *x = json_object_get(o, key->name);
    double *at = (double *)((char *)v + key->offset);
    *at = 0;
    if (!x) continue;
    if (!json_is_number(x))
      return jfield_fail(c, s, key->name, ERR_PARSE, "must be a number");
    *at = json_number_value(x);
    if (!trace_path_ok(k, *at))
      return jfield_fail(c, s, key->name, ERR_RANGE, "%g is not %s", *at,
                         key->what);
  }
  return ERR_OK;
}

/* A link's value: latency_ms and bandwidth_gbps within trace.h's bounds,
 * both required; with paths, its path keys (an override has none). */
static int read_value(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, bool paths, trace_value *v) {
  *v = (trace_value){0};
  int rc = paths ? read_path(c, s, o, v) : ERR_OK;
  if (rc) return rc;
  rc = jfield_num(c, s, o, "latency_ms",
                      &(jfield_num_spec){.lo = 0, .hi = TRACE_MAX_LATENCY_MS,
                                         .required = true},
                      &v->latency_ms);
  if (rc) return rc;
  return jfield_num(c, s, o, "bandwidth_gbps",
                    &(jfield_num_spec){.lo = TRACE_MIN_BANDWIDTH_GBPS,
                                       .hi = HUGE_VAL, .required = true},
                    &v->bandwidth_gbps);
}

/* ---- device overrides ---- */

/* An override's unordered pair and its index, for the duplicate check. */
typedef struct pair_ref {
  int lo, hi, index;
} pair_ref;

static int pair_ref_cmp(const void *x, const void *y) {
  const pair_ref *a = x, *b = y;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* No two overrides name the same device pair (in either order): which one
 * scenario_link returned would depend on the list order. Sorting keeps
 * this O(n log n); the later element of a pair is the one cited. */
static int check_override_pairs(const jfield_doc *c, const jfield_scope *list,
                                const json_t *a, const scenario *sc) {
  int n = sc->noverrides, rc = ERR_OK;
  pair_ref *p = mem_alloc((size_t)n * sizeof *p + 1);
  for (int i = 0; i < n; i++) {
    int x = sc->overrides[i].a, y = sc->overrides[i].b;
    p[i] = (pair_ref){x < y ? x : y, x < y ? y : x, i};
  }
  qsort(p, (size_t)n, sizeof *p, pair_ref_cmp);
  for (int i = 1; i < n && !rc; i++)
    if (p[i].lo == p[i - 1].lo && p[i].hi == p[i - 1].hi) {
      jfield_scope e = jfield_elem(list, a, (size_t)p[i].index);
      const json_t *v = json_array_get(a, (size_t)p[i].index);
      const char *key = json_object_get(v, "to")         ? "to"
                        : json_object_get(v, "device_b") ? "device_b"
                                                         : "b";
      rc = jfield_fail(c, &e, key, ERR_DUPLICATE,
                       "devices %d and %d already have "
                       "an override (overrides[%d])",
                       p[i].lo, p[i].hi, p[i - 1].index);
    }
  free(p);
  return rc;
}

/* "Site:index" (split at the last ':') into a device id. */
static int device_ref(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, const char *key, const scenario *sc,
                      int *out) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v))
    return jfield_fail(c, s, key, v ? ERR_PARSE : ERR_MISSING,
                       "a device as \"Site:index\" (e.g. \"%s:0\")",
                       sc->sites[0].name);
  const char *text = json_string_value(v), *colon = strrchr(text, ':');
  char *end = NULL;
  long k = colon ? strtol(colon + 1, &end, 10) : -1;
  if (!colon || end == colon + 1 || *end)
    return jfield_fail(c, s, key, ERR_PARSE, "'%s' is not \"Site:index\" "
                       "(site pairs go in network.links)", text);
  char *name = mem_strndup(text, (size_t)(colon - text));
  int site = scenario_site_index(sc, name);
  free(name);
  if (site < 0)
    return jfield_fail(c, s, key, ERR_UNKNOWN, "'%s': no site called "
                       "'%.*s'", text, (int)(colon - text), text);
  if (k < 0 || k >= sc->sites[site].ndevices)
    return jfield_fail(c, s, key, ERR_RANGE, "'%s': %s has devices 0..%d",
                       text, sc->sites[site].name,
                       sc->sites[site].ndevices - 1);
  *out = sc->sites[site].first_device + (int)k;
  return ERR_OK;
}

/* A device id key: 0 .. devices - 1. */
static int device_id(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, const char *key, const scenario *sc,
                     int *out) {
  int rc = jfield_int32(c, s, o, key, 0, -1, out);
  if (rc == ERR_OK && *out >= sc->ndevices)
    rc = jfield_fail(c, s, key, ERR_RANGE, "device %d out of range 0..%d",
                     *out, sc->ndevices - 1);
  return rc;
}

/* The two devices of an override: "from"/"to" ("Site:index"), or the ids
 * "device_a"/"device_b", or the old ids "a"/"b" — refused when both could
 * be site numbers (below the number of sites), which the file may have
 * meant. */
static int override_devices(const jfield_doc *c, const jfield_scope *e,
                            const json_t *v, const scenario *sc,
                            scenario_override *ov) {
  bool named = json_object_get(v, "from") || json_object_get(v, "to");
  bool ids = json_object_get(v, "device_a") || json_object_get(v, "device_b");
  bool old = json_object_get(v, "a") || json_object_get(v, "b");
  if (named + ids + old != 1)
    return jfield_fail(c, e, NULL, ERR_CONFIG, "name the two devices once: "
                       "\"from\" and \"to\" as \"Site:index\", or "
                       "\"device_a\" and \"device_b\" as device ids");
  int rc;
  if (named)
    return (rc = device_ref(c, e, v, "from", sc, &ov->a)) ? rc
           : device_ref(c, e, v, "to", sc, &ov->b);
  const char *ka = ids ? "device_a" : "a", *kb = ids ? "device_b" : "b";
  if ((rc = device_id(c, e, v, ka, sc, &ov->a)) ||
      (rc = device_id(c, e, v, kb, sc, &ov->b)))
    return rc;
  if (old && sc->nsites > 1 && ov->a < sc->nsites && ov->b < sc->nsites)
    return jfield_fail(c, e, "a", ERR_CONFIG, "%d and %d could be site "
                       "numbers: name the devices (\"from\": \"%s:%d\") or "
                       "use device_a and device_b; a link between sites "
                       "goes in network.links", ov->a, ov->b,
                       sc->sites[sc->device_site[ov->a]].name,
                       ov->a - sc->sites[sc->device_site[ov->a]].first_device);
  return ERR_OK;
}

static int read_overrides(const jfield_doc *c, const jfield_scope *net,
                          const json_t *o, scenario *sc) {
  const char *const *known = scenario_override_keys;
  const json_t *a = json_object_get(o, "overrides");
  if (!a) return ERR_OK;
  if (!json_is_array(a))
    return jfield_fail(c, net, "overrides", ERR_PARSE, "must be a list");
  jfield_scope s = jfield_child(net, "overrides");
  sc->noverrides = (int)json_array_size(a);
  sc->overrides = mem_calloc((size_t)sc->noverrides + 1, sizeof *sc->overrides);
  for (int i = 0; i < sc->noverrides; i++) {
    jfield_scope e = jfield_elem(&s, a, (size_t)i);
    const json_t *v = json_array_get(a, (size_t)i);
    scenario_override *ov = &sc->overrides[i];
    trace_value tv;
    int rc;
    if (!json_is_object(v))
      return jfield_fail(c, &e, NULL, ERR_PARSE, "must be an object");
    if ((rc = jfield_known(c, &e, v, known)) ||
        (rc = read_value(c, &e, v, false, &tv)) ||
        (rc = override_devices(c, &e, v, sc, ov)))
      return rc;
    ov->latency_ms = tv.latency_ms, ov->bandwidth_gbps = tv.bandwidth_gbps;
    if (ov->a == ov->b)
      return jfield_fail(c, &e, json_object_get(v, "to") ? "to"
                         : json_object_get(v, "b") ? "b" : "device_b", ERR_RANGE,
                         "a device has no link to itself");
  }
  return check_override_pairs(c, &s, a, sc);
}

/* ---- the site-pair network ---- */

/* "*,*" at t = 0: every site pair, within and across sites, source says
 * where it came from. The text is sized to the file name it quotes: a
 * fixed buffer cut a long path short and the parser then read past its
 * end. */
static int uniform_trace(const jfield_doc *c, scenario *sc,
                         const char *const *names, const char *source,
                         trace_value v) {
  static const char fmt[] =
      "# source: %s of %s\n"
      "t_s,src,dst,latency_ms,bandwidth_gbps%s\n0,*,*,%.17g,%.17g%s\n";
  char head[64] = "", cells[96] = "";
  if (trace_value_has_path(&v)) /* else the text of a trace without them */
    for (int k = 0; k < TRACE_NPATH_KEYS; k++) {
      size_t h = strlen(head), at = strlen(cells);
      double x = trace_value_path(&v, k);
      snprintf(head + h, sizeof head - h, ",%s", trace_path_keys[k].name);
      if (x != 0) snprintf(cells + at, sizeof cells - at, ",%.17g", x);
      else snprintf(cells + at, sizeof cells - at, ","); /* absent */
    }
  int n = snprintf(NULL, 0, fmt, source, c->file, head, v.latency_ms,
                   v.bandwidth_gbps, cells);
  char *csv = mem_alloc((size_t)n + 1);
  snprintf(csv, (size_t)n + 1, fmt, source, c->file, head, v.latency_ms,
           v.bandwidth_gbps, cells);
  sc->network = trace_parse(csv, (size_t)n, c->file, names, sc->nsites, c->e);
  free(csv);
  return sc->network ? ERR_OK : c->e->code;
}

char *scenario_file_beside(const char *scenario_file, const char *name) {
  const char *slash = strrchr(scenario_file, '/');
  size_t dir = name[0] == '/' || !slash ? 0
                                        : (size_t)(slash - scenario_file) + 1;
  char *path = mem_alloc(dir + strlen(name) + 1);
  memcpy(path, scenario_file, dir);
  strcpy(path + dir, name);
  return path;
}

/* A trace file named in the scenario: built-in beside a built-in scenario,
 * else relative to the scenario file's folder. */
static int file_trace(const jfield_doc *c, const jfield_scope *net,
                      scenario *sc, const char *const *names, const char *file,
                      bool builtin) {
  if (builtin) {
    const builtin_file *f = builtin_find(file);
    if (!f)
      return jfield_fail(c, net, "trace", ERR_MISSING, "no built-in trace '%s'",
                         file);
    sc->trace_file = mem_strdup(f->name);
    if (sc->brief) {
      sc->network_static = trace_csv_all_at_zero(f->data, f->size);
      return ERR_OK;
    }
    sc->network =
        trace_parse(f->data, f->size, f->name, names, sc->nsites, c->e);
    return sc->network ? ERR_OK : c->e->code;
  }
  char *path = scenario_file_beside(c->file, file);
  size_t len;
  file_error why;
  char *text = file_read(path, FILE_MAX_BYTES, &len, &why);
  int rc = ERR_OK;
  if (!text) {
    rc = jfield_fail(c, net, "trace", ERR_IO, "cannot read '%s': %s", path,
                     why.reason);
  } else {
    sc->network = trace_parse(text, len, path, names, sc->nsites, c->e);
    if (!sc->network) rc = c->e->code;
  }
  free(text);
  if (rc == ERR_OK) sc->trace_file = path;
  else free(path);
  return rc;
}

/* One element of network.links, read: its ordered pairs (one, or two for
 * "between" of distinct sites) and its value. */
typedef struct link_in {
  int from, to;
  bool both;
  trace_value v;
} link_in;

/* A site named by key (or by element k of the "between" array). */
static int site_ref(const jfield_doc *c, const jfield_scope *e,
                    const char *key, const json_t *v, const scenario *sc,
                    int *out) {
  if (!json_is_string(v))
    return jfield_fail(c, e, key, v ? ERR_PARSE : ERR_MISSING,
                       "a site name (e.g. \"%s\")", sc->sites[0].name);
  const char *name = json_string_value(v);
  *out = scenario_site_index(sc, name);
  if (*out >= 0) return ERR_OK;
  return jfield_fail(c, e, key, ERR_UNKNOWN, "no site called '%s'%s", name,
                     strchr(name, ':') ? " (a pair of devices goes in "
                     "network.overrides)" : "");
}

static int read_link(const jfield_doc *c, const jfield_scope *e,
                     const json_t *v, const scenario *sc, link_in *l) {
  const char *const *known = scenario_link_keys;
  int rc;
  if (!json_is_object(v))
    return jfield_fail(c, e, NULL, ERR_PARSE, "must be an object");
  if ((rc = jfield_known(c, e, v, known)) ||
      (rc = read_value(c, e, v, true, &l->v)))
    return rc;
  const json_t *b = json_object_get(v, "between");
  if (b && (json_object_get(v, "from") || json_object_get(v, "to")))
    return jfield_fail(c, e, "between", ERR_CONFIG, "give either \"from\" "
                       "and \"to\" (one direction) or \"between\" (both), "
                       "not both");
  if (!b) {
    l->both = false;
    return (rc = site_ref(c, e, "from", json_object_get(v, "from"), sc,
                          &l->from))
               ? rc
               : site_ref(c, e, "to", json_object_get(v, "to"), sc, &l->to);
  }
  if (!json_is_array(b) || json_array_size(b) != 2)
    return jfield_fail(c, e, "between", ERR_PARSE, "must be a list of two "
                       "site names");
  l->both = true;
  return (rc = site_ref(c, e, "between", json_array_get(b, 0), sc, &l->from))
             ? rc
             : site_ref(c, e, "between", json_array_get(b, 1), sc, &l->to);
}

/* The key a message about a link element cites (its line). */
static const char *link_key(const json_t *v) {
  return json_object_get(v, "between") ? "between" : "from";
}

/* Records link k's ordered pair (a, b) in given (n x n: the link giving
 * each pair, -1 none); a pair given twice is an error at link k. */
static int give_pair(const jfield_doc *c, const jfield_scope *e,
                     const json_t *v, const scenario *sc, int *given, int a,
                     int b, int k) {
  int *g = &given[(size_t)a * (size_t)sc->nsites + (size_t)b];
  if (*g >= 0)
    return jfield_fail(c, e, link_key(v), ERR_DUPLICATE, "%s -> %s is already given "
                       "by links[%d]", sc->sites[a].name, sc->sites[b].name,
                       *g);
  *g = k;
  return ERR_OK;
}

/* Every one-way link has its reverse, and, without a uniform value for
 * the rest, every ordered pair of sites (a site with itself included) is
 * given. */
static int check_links(const jfield_doc *c, const jfield_scope *s,
                       const json_t *arr, const scenario *sc,
                       const link_in *l, int n, const int *given,
                       bool fallback) {
  int ns = sc->nsites;
  for (int k = 0; k < n; k++)
    if (!l[k].both && l[k].from != l[k].to &&
        given[(size_t)l[k].to * (size_t)ns + (size_t)l[k].from] < 0) {
      jfield_scope e = jfield_elem(s, arr, (size_t)k);
      return jfield_fail(c, &e, "from", ERR_MISSING, "%s -> %s is missing: "
                         "give both directions (or \"between\" for a link "
                         "the same both ways)", sc->sites[l[k].to].name,
                         sc->sites[l[k].from].name);
    }
  for (int a = 0; a < ns && !fallback; a++)
    for (int b = 0; b < ns; b++)
      if (given[(size_t)a * (size_t)ns + (size_t)b] < 0)
        return jfield_fail(c, s, NULL, ERR_MISSING, "no link from %s to %s: "
                           "list it, or give network.latency_ms and "
                           "bandwidth_gbps for the pairs not listed",
                           sc->sites[a].name, sc->sites[b].name);
  return ERR_OK;
}

/* network.links: the pairs listed, on a uniform trace of the block's
 * value (of the first link's when every pair is listed). */
static int links_trace(const jfield_doc *c, const jfield_scope *net,
                       const json_t *o, scenario *sc, const char *const *names,
                       const trace_value *fallback) {
  const json_t *arr = json_object_get(o, "links");
  if (!json_is_array(arr) || json_array_size(arr) == 0)
    return jfield_fail(c, net, "links", ERR_PARSE, "must be a non-empty list");
  jfield_scope s = jfield_child(net, "links");
  int n = (int)json_array_size(arr), ns = sc->nsites, rc = ERR_OK;
  link_in *l = mem_calloc((size_t)n, sizeof *l);
  int *given = mem_alloc((size_t)ns * (size_t)ns * sizeof *given);
  for (size_t i = 0; i < (size_t)ns * (size_t)ns; i++) given[i] = -1;
  for (int k = 0; k < n && !rc; k++) {
    jfield_scope e = jfield_elem(&s, arr, (size_t)k);
    const json_t *v = json_array_get(arr, (size_t)k);
    if (!(rc = read_link(c, &e, v, sc, &l[k])) &&
        !(rc = give_pair(c, &e, v, sc, given, l[k].from, l[k].to, k)) &&
        l[k].both && l[k].from != l[k].to)
      rc = give_pair(c, &e, v, sc, given, l[k].to, l[k].from, k);
  }
  if (!rc) rc = check_links(c, &s, arr, sc, l, n, given, fallback != NULL);
  if (!rc) rc = uniform_trace(c, sc, names, "network.links",
                              fallback ? *fallback : l[0].v);
  for (int a = 0; a < ns && !rc; a++)
    for (int b = 0; b < ns; b++) {
      int k = given[(size_t)a * (size_t)ns + (size_t)b];
      if (k >= 0) trace_set_static(sc->network, a, b, l[k].v);
    }
  free(given);
  free(l);
  return rc;
}

/* Whether o gives a uniform value: latency_ms, bandwidth_gbps or a path
 * key. */
static bool gives_uniform(const json_t *o) {
  bool any = json_object_get(o, "latency_ms") ||
             json_object_get(o, "bandwidth_gbps");
  for (int k = 0; k < TRACE_NPATH_KEYS; k++)
    any = any || json_object_get(o, trace_path_keys[k].name);
  return any;
}

/* network.latency_ms and bandwidth_gbps (and its path keys): required
 * unless links list every pair (then *present is false). */
static int read_uniform(const jfield_doc *c, const jfield_scope *s,
                        const json_t *o, bool links, trace_value *v,
                        bool *present) {
  *present = !links || gives_uniform(o);
  return *present ? read_value(c, s, o, true, v) : ERR_OK;
}

/* network.shaping: one of scenario_shaping_names, path when absent. */
static int read_shaping(const jfield_doc *c, const jfield_scope *s,
                        const json_t *o, scenario *sc) {
  char *name = NULL;
  int rc = jfield_str(c, s, o, "shaping",
                      scenario_shaping_names[SCENARIO_SHAPING_DEFAULT], &name);
  if (rc) return rc;
  int k = scenario_shaping_parse(name);
  if (k < 0) {
    char list[64];
    names_join(scenario_shaping_names, ", ", " or ", list, sizeof list);
    rc = jfield_fail(c, s, "shaping", ERR_UNKNOWN, "unknown shaping '%s' "
                     "(%s)", name, list);
  }
  free(name);
  sc->shaping = k < 0 ? SCENARIO_SHAPING_DEFAULT : (scenario_shaping)k;
  return rc;
}

int scenario_read_network(const jfield_doc *c, const json_t *root,
                          scenario *sc, bool builtin) {
  const char *const *known = scenario_network_keys;
  jfield_scope top = jfield_top();
  jfield_scope s = jfield_child(&top, "network");
  json_t *o;
  int rc;
  if ((rc = jfield_obj(c, &top, root, "network", true, &o)) ||
      (rc = jfield_known(c, &s, o, known)) ||
      (rc = read_shaping(c, &s, o, sc)) ||
      (rc = read_overrides(c, &s, o, sc)))
    return rc;
  const json_t *t = json_object_get(o, "trace");
  bool links = json_object_get(o, "links") != NULL;
  if (t && (gives_uniform(o) || links))
    return jfield_fail(
        c, &s, "trace", ERR_CONFIG, "give either trace or latency_ms and "
        "bandwidth_gbps (with links, or alone; the path keys beside them), "
        "not both");
  const char **names = mem_alloc((size_t)sc->nsites * sizeof *names);
  for (int i = 0; i < sc->nsites; i++) names[i] = sc->sites[i].name;
  trace_value v;
  bool present;
  if (t && !json_is_string(t))
    rc = jfield_fail(c, &s, "trace", ERR_PARSE,
                     "must be a string (a file name)");
  else if (t)
    rc = file_trace(c, &s, sc, names, json_string_value(t), builtin);
  else if (!(rc = read_uniform(c, &s, o, links, &v, &present)))
    rc = links ? links_trace(c, &s, o, sc, names, present ? &v : NULL)
               : uniform_trace(c, sc, names, "uniform network", v);
  free(names);
  return rc;
}
