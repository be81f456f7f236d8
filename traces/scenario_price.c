/* scenario_price: the prices and power of a scenario file
 * (traces/FORMATS.md): each site's GPU-hour (its usd_per_gpu_hour, else its
 * instance's row of the price table, the spot column with "spot"), its
 * egress price, carbon intensity and GPU power keys, and the egress price
 * of every ordered site pair.
 * Invariant: nothing is priced that the file (or the table row of an
 * instance it names) does not price: a site without either has no GPU-hour
 * (NAN), a pair of sites without a link, site or network price has none;
 * only traffic inside a site, which no cloud bills, is 0 by default. */
#include "traces/scenario_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/mem.h"
#include "traces/prices.h"

/* The table "prices" names (beside a built-in scenario: a built-in file;
 * else relative to the scenario file's folder), or the built-in one. */
static int load_table(const jfield_doc *c, const json_t *root, bool builtin,
                      scenario *sc, prices **out) {
  jfield_scope top = jfield_top();
  const json_t *v = json_object_get(root, "prices");
  if (v && !json_is_string(v))
    return jfield_fail(c, &top, "prices", ERR_PARSE,
                       "must be a string (a file name)");
  if (!v || builtin) {
    const builtin_file *f = builtin_find(v ? json_string_value(v)
                                           : PRICES_BUILTIN);
    if (!f)
      return jfield_fail(c, &top, "prices", ERR_MISSING,
                         "no built-in price table '%s'", json_string_value(v));
    *out = prices_parse(f->data, f->size, f->name, c->e);
    sc->prices_file = mem_strdup(f->name);
    return *out ? ERR_OK : c->e->code;
  }
  char *path = scenario_file_beside(c->file, json_string_value(v));
  size_t len;
  file_error why;
  char *text = file_read(path, FILE_MAX_BYTES, &len, &why);
  int rc = text ? ERR_OK
                : jfield_fail(c, &top, "prices", ERR_IO, "cannot read '%s': "
                              "%s", path, why.reason);
  if (text && !(*out = prices_parse(text, len, path, c->e))) rc = c->e->code;
  free(text);
  sc->prices_file = path;
  return rc;
}

/* A site's GPU-hour from its key, else from its instance's row. */
static int site_price(const jfield_doc *c, const jfield_scope *s, int i,
                      const prices *t, scenario_site *st) {
  char from[512];
  if (st->instance && !prices_find(t, st->instance))
    return jfield_fail(c, s, "instance", ERR_UNKNOWN, "'%s' is not an "
                       "instance type of %s (a \"prices\" table may list "
                       "it)", st->instance, prices_file(t));
  if (!isnan(st->usd_per_gpu_hour)) {
    snprintf(from, sizeof from, "sites[%d].usd_per_gpu_hour", i);
    st->price_from = mem_strdup(from);
    return ERR_OK;
  }
  const prices_row *row = st->instance ? prices_find(t, st->instance) : NULL;
  if (!row) return ERR_OK; /* not priced */
  double usd = st->spot ? row->spot_usd_per_hour : row->usd_per_hour;
  if (isnan(usd))
    return jfield_fail(c, s, "spot", ERR_MISSING, "%s has no spot price in "
                       "%s (line %d): give usd_per_gpu_hour", st->instance,
                       prices_file(t), row->line);
  st->usd_per_gpu_hour = usd / row->gpus;
  snprintf(from, sizeof from, "%s:%d: %s %s, %s, %s", prices_file(t),
           row->line, row->type, st->spot ? "spot" : "on demand", row->region,
           row->date);
  st->price_from = mem_strdup(from);
  return ERR_OK;
}

/* Site i's keys of prices and power (absent: NAN), then its GPU-hour. */
static int read_site(const jfield_doc *c, const json_t *sites, int i,
                     const prices *t, scenario *sc) {
  jfield_scope top = jfield_top(), list = jfield_child(&top, "sites");
  jfield_scope s = jfield_elem(&list, sites, (size_t)i);
  const json_t *o = json_array_get(sites, (size_t)i);
  scenario_site *st = &sc->sites[i];
  static const char *const keys[] = {"usd_per_gpu_hour", "usd_per_gb",
                                     "gco2_per_kwh", "board_w", "idle_w"};
  double *at[] = {&st->usd_per_gpu_hour, &st->usd_per_gb, &st->gco2_per_kwh,
                  &st->board_w, &st->idle_w};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    int rc = jfield_num(c, &s, o, keys[k],
                        &(jfield_num_spec){.lo = 0, .hi = HUGE_VAL, .def = NAN},
                        at[k]);
    if (rc) return rc;
  }
  int rc = jfield_bool(c, &s, o, "spot", false, &st->spot);
  return rc ? rc : site_price(c, &s, i, t, st);
}

/* network.links[k].usd_per_gb into the pairs it names (its sites were
 * checked by the network's reader). */
static int read_link(const jfield_doc *c, const jfield_scope *list,
                     const json_t *links, size_t k, scenario *sc) {
  jfield_scope e = jfield_elem(list, links, k);
  const json_t *o = json_array_get(links, k), *b = json_object_get(o, "between");
  double usd;
  int rc = jfield_num(c, &e, o, "usd_per_gb",
                      &(jfield_num_spec){.lo = 0, .hi = HUGE_VAL, .def = NAN},
                      &usd);
  if (rc || isnan(usd)) return rc;
  int a = scenario_site_index(sc, json_string_value(
              b ? json_array_get(b, 0) : json_object_get(o, "from")));
  int z = scenario_site_index(sc, json_string_value(
              b ? json_array_get(b, 1) : json_object_get(o, "to")));
  int n = sc->nsites;
  sc->usd_per_gb[(size_t)a * n + z] = usd;
  if (b) sc->usd_per_gb[(size_t)z * n + a] = usd;
  return ERR_OK;
}

/* Every ordered pair's egress price: the links' first, then the sender's
 * site key, then the network's; inside a site 0. */
static int read_pairs(const jfield_doc *c, const json_t *root, scenario *sc) {
  jfield_scope top = jfield_top(), net = jfield_child(&top, "network");
  const json_t *o = json_object_get(root, "network");
  double all;
  int rc = jfield_num(c, &net, o, "usd_per_gb",
                      &(jfield_num_spec){.lo = 0, .hi = HUGE_VAL, .def = NAN},
                      &all);
  if (rc) return rc;
  sc->net_usd_per_gb = all;
  size_t n = (size_t)sc->nsites;
  sc->usd_per_gb = mem_alloc(n * n * sizeof *sc->usd_per_gb);
  for (size_t i = 0; i < n * n; i++) sc->usd_per_gb[i] = NAN;
  const json_t *links = json_object_get(o, "links");
  jfield_scope list = jfield_child(&net, "links");
  for (size_t k = 0; json_is_array(links) && k < json_array_size(links); k++)
    if ((rc = read_link(c, &list, links, k, sc))) return rc;
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b < n; b++) {
      double *p = &sc->usd_per_gb[a * n + b];
      if (!isnan(*p)) continue;
      *p = a == b ? 0 : !isnan(sc->sites[a].usd_per_gb) ? sc->sites[a].usd_per_gb
                                                        : all;
    }
  return ERR_OK;
}

int scenario_read_prices(const jfield_doc *c, const json_t *root,
                         scenario *sc, bool builtin) {
  prices *t = NULL;
  int rc = load_table(c, root, builtin, sc, &t);
  const json_t *sites = json_object_get(root, "sites");
  for (int i = 0; rc == ERR_OK && i < sc->nsites; i++)
    rc = read_site(c, sites, i, t, sc);
  if (rc == ERR_OK) rc = read_pairs(c, root, sc);
  prices_free(t);
  return rc;
}

uint64_t scenario_prices_hash(const scenario *s) {
  bool any = false;
  uint64_t h = hash_str(HASH_INIT, "prices 1");
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *st = &s->sites[i];
    double v[] = {st->usd_per_gpu_hour, st->gco2_per_kwh, st->board_w,
                  st->idle_w};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
      any = any || !isnan(v[k]), h = hash_double(h, v[k]);
  }
  size_t n = (size_t)s->nsites;
  for (size_t a = 0; s->usd_per_gb && a < n; a++)
    for (size_t b = 0; b < n; b++) {
      double x = s->usd_per_gb[a * n + b];
      any = any || (a != b && !isnan(x)) || (a == b && x != 0);
      h = hash_double(h, x);
    }
  return any ? h : 0;
}
