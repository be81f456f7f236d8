/* scenario_export: a loaded scenario back as the JSON of its file format
 * (traces/FORMATS.md), every key with its effective value, the network as
 * inline links — what `geodes scenarios --export` writes (in the export's
 * layout, scenario_export_write) and --show lists.
 * Invariant: scenario_parse of the export of s gives a scenario whose
 * scenario_hash equals s's (a test loads the export of every built-in):
 * reals are kept as doubles, a static network becomes one link per
 * ordered site pair at its t = 0 value, a model given by its dimensions
 * (an object, or a config.json's) as their object. */
#include "traces/scenario_export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/scenario_row.h"
#include "traces/workload.h"

static void set(json_t *o, const char *key, json_t *v) {
  json_object_set_new(o, key, v);
}

static json_t *site_json(const scenario_site *st) {
  json_t *o = json_object();
  set(o, "name", json_string(st->name));
  set(o, "devices", json_integer(st->ndevices));
  if (st->instance) set(o, "instance", json_string(st->instance));
  set(o, "gpu", json_string(st->gpu));
  if (st->gpu_memory_gb > 0)
    set(o, "gpu_memory_gb", json_real(st->gpu_memory_gb));
  set(o, "nic_gbps", json_real(st->nic_gbps));
  set(o, "nic_shared", json_boolean(st->nic_shared));
  set(o, "nic", json_string(scenario_nic_names[st->nic]));
  set(o, "nccl_sockets", json_integer(st->nccl_sockets));
  if (st->flow_gbps > 0) set(o, "flow_gbps", json_real(st->flow_gbps));
  set(o, "tcp_window_bytes", json_real(st->tcp_window_bytes));
  if (st->compute_efficiency > 0)
    set(o, "compute_efficiency", json_real(st->compute_efficiency));
  /* the price in effect, whether the site or its instance's row gave it */
  if (!isnan(st->usd_per_gpu_hour))
    set(o, "usd_per_gpu_hour", json_real(st->usd_per_gpu_hour));
  if (st->spot) set(o, "spot", json_true());
  const char *keys[] = {"usd_per_gb", "gco2_per_kwh", "board_w", "idle_w"};
  double v[] = {st->usd_per_gb, st->gco2_per_kwh, st->board_w, st->idle_w};
  for (size_t k = 0; k < sizeof v / sizeof *v; k++)
    if (!isnan(v[k])) set(o, keys[k], json_real(v[k]));
  return o;
}

/* The egress price of the ordered pair (a, b) (NAN: none). */
static double price(const scenario *s, int a, int b) {
  return s->usd_per_gb[(size_t)a * s->nsites + b];
}

static json_t *link_json(const scenario *s, int a, int b, bool both,
                         trace_value v) {
  json_t *o = json_object();
  if (both) {
    set(o, "between", json_pack("[ss]", s->sites[a].name, s->sites[b].name));
  } else {
    set(o, "from", json_string(s->sites[a].name));
    set(o, "to", json_string(s->sites[b].name));
  }
  set(o, "latency_ms", json_real(v.latency_ms));
  set(o, "bandwidth_gbps", json_real(v.bandwidth_gbps));
  for (int k = 0; k < TRACE_NPATH_KEYS; k++) /* the ones the link gives */
    if (trace_value_path(&v, k) != 0)
      set(o, trace_path_keys[k].name, json_real(trace_value_path(&v, k)));
  double p = price(s, a, b); /* the price in effect, wherever it was given */
  if (!isnan(p) && (a != b || p != 0)) set(o, "usd_per_gb", json_real(p));
  return o;
}

static bool same(trace_value x, trace_value y) {
  bool eq = x.latency_ms == y.latency_ms && x.bandwidth_gbps == y.bandwidth_gbps;
  for (int k = 0; k < TRACE_NPATH_KEYS; k++)
    eq = eq && trace_value_path(&x, k) == trace_value_path(&y, k);
  return eq;
}

/* Every ordered pair at t = 0: a site with itself, then each pair of
 * distinct sites once ("between") when both directions agree, else both
 * directions. */
static json_t *links_json(const scenario *s) {
  json_t *l = json_array();
  for (int a = 0; a < s->nsites; a++)
    for (int b = a; b < s->nsites; b++) {
      trace_value ab = trace_at(s->network, a, b, 0);
      trace_value ba = trace_at(s->network, b, a, 0);
      double pab = price(s, a, b), pba = price(s, b, a);
      bool priced_alike = pab == pba || (isnan(pab) && isnan(pba));
      if (a == b || (same(ab, ba) && priced_alike)) {
        json_array_append_new(l, link_json(s, a, b, a != b, ab));
      } else {
        json_array_append_new(l, link_json(s, a, b, false, ab));
        json_array_append_new(l, link_json(s, b, a, false, ba));
      }
    }
  return l;
}

static json_t *device_name(const scenario *s, int d) {
  const scenario_site *st = &s->sites[s->device_site[d]];
  char buf[512];
  snprintf(buf, sizeof buf, "%s:%d", st->name, d - st->first_device);
  return json_string(buf);
}

static json_t *network_json(const scenario *s, const char *trace_name) {
  json_t *o = json_object();
  set(o, "shaping", json_string(scenario_shaping_names[s->shaping]));
  if (!isnan(s->net_usd_per_gb))
    set(o, "usd_per_gb", json_real(s->net_usd_per_gb));
  if (trace_name) set(o, "trace", json_string(trace_name));
  else set(o, "links", links_json(s));
  if (s->noverrides) {
    json_t *ov = json_array();
    for (int i = 0; i < s->noverrides; i++) {
      const scenario_override *x = &s->overrides[i];
      json_t *e = json_object();
      set(e, "from", device_name(s, x->a));
      set(e, "to", device_name(s, x->b));
      set(e, "latency_ms", json_real(x->latency_ms));
      set(e, "bandwidth_gbps", json_real(x->bandwidth_gbps));
      json_array_append_new(ov, e);
    }
    set(o, "overrides", ov);
  }
  return o;
}

json_t *scenario_export_row(const scenario *s, int r) {
  switch (workload_rows[r].kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
      return json_integer((json_int_t)scenario_row_number(s, r));
    case WORKLOAD_BOOL:
      return json_boolean(scenario_row_number(s, r) != 0);
    case WORKLOAD_REAL:
      return json_real(scenario_row_number(s, r));
    case WORKLOAD_NAME:
      break;
  }
  return json_string(scenario_row_name(s, r));
}

/* Whether row r of s is a key the export writes: one whose default means
 * none (outside the row's range, or NAN) only when s has a value. */
static bool exported(const scenario *s, int r) {
  const workload_row *row = &workload_rows[r];
  if (row->kind == WORKLOAD_NAME || row->kind == WORKLOAD_BOOL ||
      row->kind == WORKLOAD_BITS || row->required)
    return true;
  bool none = isnan(row->def) || row->def < row->lo || row->def > row->hi;
  return !none || !scenario_row_is_default(s, r);
}

/* The rows of target t as an object, in the map's order; a model given
 * by its dimensions as their object. */
static json_t *rows_json(const scenario *s, workload_target t) {
  json_t *o = json_object();
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (workload_rows[r].target == t && exported(s, r))
      set(o, workload_rows[r].key,
          r == WORKLOAD_model && s->workload.model_dims
              ? model_export(s->workload.model_dims)
              : scenario_export_row(s, r));
  return o;
}

json_t *scenario_export(const scenario *s, const char *trace_name) {
  json_t *o = json_object();
  set(o, "name", json_string(s->name));
  set(o, "description", json_string(s->description));
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) /* the seed */
    if (workload_rows[r].target == WORKLOAD_IN_TOP)
      set(o, workload_rows[r].key, scenario_export_row(s, r));
  set(o, "latency_convention", json_string(s->latency_convention));
  json_t *sites = json_array();
  for (int i = 0; i < s->nsites; i++)
    json_array_append_new(sites, site_json(&s->sites[i]));
  set(o, "sites", sites);
  set(o, "network", network_json(s, trace_name));
  set(o, "workload", rows_json(s, WORKLOAD_IN_WORKLOAD));
  json_t *cost = rows_json(s, WORKLOAD_IN_COST);
  if (json_object_size(cost)) set(o, "cost", cost);
  else json_decref(cost);
  return o;
}

/* A real with the fewest digits that read back as the same double. */
static void put_real(FILE *f, double x) {
  char buf[64];
  int p = 1;
  for (; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, x);
    if (strtod(buf, NULL) == x) break;
  }
  double mag = fabs(x);
  if (strpbrk(buf, "eE") && mag >= 1e-5 && mag < 1e16) { /* 10, not 1e+01 */
    int decimals = p - 1 - (int)floor(log10(mag));
    snprintf(buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, x);
  }
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  fputs(buf, f);
}

void scenario_export_value(const json_t *v, FILE *f) {
  if (json_is_real(v)) {
    put_real(f, json_real_value(v));
  } else if (json_is_object(v)) {
    const char *k;
    json_t *x;
    int i = 0;
    fputc('{', f);
    json_object_foreach((json_t *)v, k, x) {
      json_t *key = json_string(k);
      char *ks = json_dumps(key, JSON_ENCODE_ANY);
      fprintf(f, "%s%s: ", i++ ? ", " : "", ks);
      free(ks);
      json_decref(key);
      scenario_export_value(x, f);
    }
    fputc('}', f);
  } else if (json_is_array(v)) {
    fputc('[', f);
    for (size_t i = 0; i < json_array_size(v); i++) {
      if (i) fputs(", ", f);
      scenario_export_value(json_array_get(v, i), f);
    }
    fputc(']', f);
  } else {
    char *s = json_dumps(v, JSON_ENCODE_ANY);
    fputs(s, f);
    free(s);
  }
}

/* The export's layout: a key per line, lists one element per line. */
static void put_block(FILE *f, const json_t *o, int indent) {
  const char *k;
  json_t *v;
  size_t i = 0, n = json_object_size(o);
  fputs("{\n", f);
  json_object_foreach((json_t *)o, k, v) {
    fprintf(f, "%*s\"%s\": ", indent + 2, "", k);
    if (json_is_object(v) && indent == 0) {
      put_block(f, v, indent + 2);
    } else if (json_is_array(v) && json_array_size(v) &&
               json_is_object(json_array_get(v, 0))) {
      fputs("[\n", f);
      for (size_t j = 0; j < json_array_size(v); j++) {
        fprintf(f, "%*s", indent + 4, "");
        scenario_export_value(json_array_get(v, j), f);
        fputs(j + 1 < json_array_size(v) ? ",\n" : "\n", f);
      }
      fprintf(f, "%*s]", indent + 2, "");
    } else {
      scenario_export_value(v, f);
    }
    fputs(++i < n ? ",\n" : "\n", f);
  }
  fprintf(f, "%*s}", indent, "");
}

void scenario_export_write(const json_t *o, FILE *f) {
  put_block(f, o, 0);
  fputc('\n', f);
}
