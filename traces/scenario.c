/* scenario: loads the JSON scenario format of traces/FORMATS.md.
 * Invariant: a scenario returned by scenario_load has passed every check
 * (known keys only, types, ranges — links within trace.h's bounds, at most
 * TRACE_MAX_SITES sites, devices up to INT_MAX in all —, stages * replicas
 * == devices, unique site names, overrides inside the device range and one
 * per device pair) and owns a trace that covers
 * exactly its sites, in site order; on any failure nothing leaks and err holds
 * "FILE:LINE: field: message" (the fields and their lines are jfield's).
 * The knobs (scenario_knobs.c) apply the reader's own checks
 * (scenario_batch_divides, the schedule and algorithm names) to values given
 * after loading. */
#include "traces/scenario.h"

#include <assert.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/jfield.h"
#include "base/mem.h"
#include "base/names.h"
#include "traces/model_hf.h"
#include "traces/scenario_parts.h"
#include "traces/scenario_row.h"
#include "traces/workload.h"

#define SCENARIO_GPU_DEFAULT "V100"
#define SCENARIO_NIC_DEFAULT 10.0
/* Devices are ints; the bound that matters is a run's memory, which the
 * engine checks with its estimate before building anything
 * (sim_run_bytes). The loader's own per-device array is checked against
 * mem_limit_bytes before it is allocated. */
#define SCENARIO_MAX_DEVICES INT_MAX
_Static_assert(MODEL_MAX_LAYERS == SCENARIO_MAX_LAYERS,
               "a model's depth and workload.layers share one bound");

#define SCENARIO_NIC_NAME_(id, name) name,
const char *const scenario_nic_names[SCENARIO_NNICS + 1] = {
    SCENARIO_NIC_MAP(SCENARIO_NIC_NAME_) NULL};
#undef SCENARIO_NIC_NAME_

int scenario_nic_parse(const char *name) {
  return names_find(scenario_nic_names, name);
}

#define SCENARIO_SHAPING_NAME_(id, name) name,
const char *const scenario_shaping_names[SCENARIO_NSHAPINGS + 1] = {
    SCENARIO_SHAPING_MAP(SCENARIO_SHAPING_NAME_) NULL};
#undef SCENARIO_SHAPING_NAME_

int scenario_shaping_parse(const char *name) {
  return names_find(scenario_shaping_names, name);
}

bool scenario_shaping_shares_paths(scenario_shaping sh) {
  switch (sh) {
    case SCENARIO_SHAPING_TC: return false;
    case SCENARIO_SHAPING_PATH: return true;
  }
  assert(!"unknown shaping");
  return true;
}

/* ncclNetSocketGetNsockNthread's auto values by vendor and its bounds
 * (MAX_THREADS 16, MAX_SOCKETS 64: src/transport/net_socket.cc). */
#define SCENARIO_NCCL_MAX_THREADS 16
int scenario_nic_sockets(scenario_nic nic, int nthreads, int nsocks_per_thread) {
  int auto_nt = 0, auto_ns = 1;
  switch (nic) {
    case SCENARIO_NIC_GENERIC: auto_nt = 0, auto_ns = 1; break;
    case SCENARIO_NIC_AWS_ENA: auto_nt = 2, auto_ns = 8; break;
    case SCENARIO_NIC_GCP_GVNIC: auto_nt = 4, auto_ns = 1; break;
  }
  int nt = nthreads > 0 ? nthreads : auto_nt;
  int ns = nsocks_per_thread > 0 ? nsocks_per_thread : auto_ns;
  if (nt > SCENARIO_NCCL_MAX_THREADS) nt = SCENARIO_NCCL_MAX_THREADS;
  if (nt * ns > SCENARIO_SOCKETS_MAX) ns = SCENARIO_SOCKETS_MAX / nt;
  return nt * ns > 0 ? nt * ns : 1;
}

/* A site's "nic" (default generic): one of scenario_nic_names. */
static int read_nic(const jfield_doc *c, const jfield_scope *s,
                    const json_t *o, scenario_site *site) {
  char *name = NULL;
  int rc = jfield_str(c, s, o, "nic", scenario_nic_names[0], &name);
  if (rc) return rc;
  int k = scenario_nic_parse(name);
  free(name);
  if (k < 0)
    return jfield_fail(c, s, "nic", ERR_PARSE,
                       "unknown NIC (generic, aws-ena, gcp-gvnic)");
  site->nic = (scenario_nic)k;
  return ERR_OK;
}

#define SCENARIO_SITE_KEYS_                                           \
  "name", "devices", "gpu", "nic_gbps", "nic_shared", "nccl_sockets",  \
      "compute_efficiency", "flow_gbps", "nic", "tcp_window_bytes",      \
      "gpu_memory_gb"
const char *const scenario_site_keys[] = {SCENARIO_SITE_KEYS_, NULL};
const char *const scenario_site_info_keys[] = {
    "instance", SCENARIO_SITE_PRICE_KEYS_, NULL};
static const char *const site_known[] = {SCENARIO_SITE_KEYS_, "instance",
                                         SCENARIO_SITE_PRICE_KEYS_, NULL};

const char *const scenario_top_keys[] = {
    "name",  "description", "seed",     "latency_convention",
    "sites", "network",     "workload", "cost",
    "prices", NULL};

static int read_site(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, scenario_site *site) {
  const char *const *known = site_known;
  long long n = 0, sockets = 1;
  int rc;
  if (!json_is_object(o))
    return jfield_fail(c, s, NULL, ERR_PARSE, "must be an object");
  if ((rc = jfield_known(c, s, o, known)) ||
      (rc = jfield_str(c, s, o, "name", NULL, &site->name)) ||
      (rc = jfield_int(c, s, o, "devices", 1, SCENARIO_MAX_DEVICES, 0, &n)) ||
      (rc = jfield_str(c, s, o, "gpu", SCENARIO_GPU_DEFAULT, &site->gpu)) ||
      (json_object_get(o, "instance") &&
       (rc = jfield_str(c, s, o, "instance", NULL, &site->instance))) ||
      (rc = jfield_num(c, s, o, "nic_gbps",
                       &(jfield_num_spec){.lo = TRACE_MIN_BANDWIDTH_GBPS,
                                          .hi = HUGE_VAL,
                                          .def = SCENARIO_NIC_DEFAULT},
                       &site->nic_gbps)) ||
      (rc = jfield_bool(c, s, o, "nic_shared", false, &site->nic_shared)) ||
      (rc = read_nic(c, s, o, site)) ||
      (rc = jfield_int(c, s, o, "nccl_sockets", 1, SCENARIO_SOCKETS_MAX,
                       scenario_nic_sockets(site->nic, 0, 0), &sockets)) ||
      (rc = jfield_num(c, s, o, "compute_efficiency",
                       &(jfield_num_spec){.lo = 0, .open = true, .hi = 1},
                       &site->compute_efficiency)) ||
      (rc = jfield_num(c, s, o, "flow_gbps",
                       &(jfield_num_spec){.lo = TRACE_MIN_BANDWIDTH_GBPS,
                                          .hi = HUGE_VAL},
                       &site->flow_gbps)) ||
      (rc = jfield_num(c, s, o, "gpu_memory_gb",
                       &(jfield_num_spec){.lo = 0, .open = true,
                                          .hi = SCENARIO_MAX_GPU_MEMORY_GB},
                       &site->gpu_memory_gb)) ||
      (rc = jfield_num(c, s, o, "tcp_window_bytes",
                       &(jfield_num_spec){.lo = TRACE_WINDOW_MIN_BYTES,
                                          .hi = (double)TRACE_WINDOW_MAX_BYTES,
                                          .def = SCENARIO_TCP_WINDOW_DEFAULT},
                       &site->tcp_window_bytes)))
    return rc;
  site->nccl_sockets = (int)sockets;
  site->gpu_line =
      jfield_line(c, s, json_object_get(o, "gpu") ? "gpu" : "name");
  if (!site->name[0])
    return jfield_fail(c, s, "name", ERR_PARSE, "must not be empty");
  site->ndevices = (int)n;
  return ERR_OK;
}

static int read_sites(const jfield_doc *c, const json_t *root, scenario *sc) {
  jfield_scope top = jfield_top();
  jfield_scope s = jfield_child(&top, "sites");
  const json_t *a = json_object_get(root, "sites");
  if (!a) return jfield_fail(c, &top, "sites", ERR_MISSING, "missing (a list)");
  if (!json_is_array(a) || json_array_size(a) == 0)
    return jfield_fail(c, &top, "sites", ERR_PARSE, "must be a non-empty list");
  if (json_array_size(a) > TRACE_MAX_SITES)
    return jfield_fail(c, &top, "sites", ERR_RANGE, "%zu sites, more than %d",
                       json_array_size(a), TRACE_MAX_SITES);
  sc->nsites = (int)json_array_size(a);
  sc->sites = mem_calloc((size_t)sc->nsites, sizeof *sc->sites);
  long long total = 0;
  for (int i = 0; i < sc->nsites; i++) {
    jfield_scope e = jfield_elem(&s, a, (size_t)i);
    scenario_site *site = &sc->sites[i];
    int rc = read_site(c, &e, json_array_get(a, (size_t)i), site);
    if (rc) return rc;
    for (int j = 0; j < i; j++)
      if (strcmp(sc->sites[j].name, site->name) == 0)
        return jfield_fail(c, &e, "name", ERR_DUPLICATE,
                           "site '%s' is already sites[%d]", site->name, j);
    site->first_device = (int)total;
    total += site->ndevices;
    if (total > SCENARIO_MAX_DEVICES)
      return jfield_fail(c, &e, "devices", ERR_RANGE,
                         "more than %d devices in all", SCENARIO_MAX_DEVICES);
  }
  sc->ndevices = (int)total;
  return ERR_OK;
}

/* The device -> site map, once the workload agrees with the devices (so a
 * mistyped count allocates nothing), and within the memory the process may
 * hold (mem_limit_bytes). */
static int map_devices(const jfield_doc *c, scenario *sc) {
  jfield_scope top = jfield_top();
  double bytes = (double)sc->ndevices * sizeof *sc->device_site;
  double limit = mem_limit_bytes();
  if (bytes > limit)
    return jfield_fail(c, &top, "sites", ERR_MEMORY,
                       "%d devices: their site map alone needs %.2f GB, "
                       "more than the %.2f GB this process may hold "
                       "(physical memory, ulimit -v)", sc->ndevices,
                       bytes / 1e9, limit / 1e9);
  sc->device_site = mem_alloc((size_t)sc->ndevices * sizeof *sc->device_site);
  for (int i = 0; i < sc->nsites; i++)
    for (int d = 0; d < sc->sites[i].ndevices; d++)
      sc->device_site[sc->sites[i].first_device + d] = i;
  return ERR_OK;
}

bool scenario_batch_divides(long long batch, long long replicas,
                            long long mb, long long k, long long *per_pass) {
  long long rm = replicas * mb;
  if (rm > batch || rm * k > batch) {
    *per_pass = -1;
    return false;
  }
  *per_pass = rm * k;
  return batch % *per_pass == 0;
}

/* The workload's numbers against each other and the devices (s: its
 * scope, for the lines). */
static int check_workload(const jfield_doc *c, const jfield_scope *s,
                          const scenario *sc) {
  const scenario_workload *w = &sc->workload;
  if ((long long)w->stages * w->replicas != sc->ndevices)
    return err_blame(c->e, WORKLOAD_stages, jfield_fail(
        c, s, "stages", ERR_CONFIG,
        "stages * replicas = %d * %d = %lld, but the sites have %d "
        "devices",
        w->stages, w->replicas, (long long)w->stages * w->replicas,
        sc->ndevices));
  if (w->layers && w->layers < w->stages)
    return err_blame(c->e, WORKLOAD_layers,
                     jfield_fail(c, s, "layers", ERR_CONFIG,
                                 "%d layers for %d stages: every stage holds "
                                 "at least one", w->layers, w->stages));
  long long k = workload_batch_k(w->runtime, w->micro_batches_per_pass);
  long long per_pass;
  if (!scenario_batch_divides(w->batch, w->replicas, w->micro_batch, k, &per_pass))
    return err_blame(c->e, WORKLOAD_batch, jfield_fail(
        c, s, "batch", ERR_CONFIG,
        "global batch %d is not a multiple of replicas * micro_batch * "
        "micro_batches_per_pass = %d * %d * %lld%s",
        w->batch, w->replicas, w->micro_batch, k,
        per_pass < 0 ? " (which exceeds it)" : ""));
  return ERR_OK;
}

/* Row r's number from o[key] (present) into *x: an integer, a number, a
 * width or a boolean within the row's range. */
static int read_number(const jfield_doc *c, const jfield_scope *s,
                       const json_t *o, const workload_row *r, double *x) {
  const json_t *v = json_object_get(o, r->key);
  char range[128];
  workload_range_text(r, range, sizeof range);
  switch (r->kind) {
    case WORKLOAD_BOOL: {
      bool b = false;
      int rc = jfield_bool(c, s, o, r->key, false, &b);
      *x = b;
      return rc;
    }
    case WORKLOAD_INT: {
      long long n = 0;
      int rc = jfield_int(c, s, o, r->key, (long long)r->lo,
                          (long long)r->hi, (long long)r->lo, &n);
      *x = (double)n;
      return rc;
    }
    case WORKLOAD_BITS: {
      long long n;
      if (!jfield_as_int(v, &n))
        return jfield_fail(c, s, r->key, ERR_PARSE, "must be an integer");
      *x = (double)n;
      break;
    }
    case WORKLOAD_REAL:
      if (!json_is_number(v))
        return jfield_fail(c, s, r->key, ERR_PARSE, "must be a number");
      *x = json_number_value(v);
      break;
    case WORKLOAD_NAME:
      return jfield_fail(c, s, r->key, ERR_PARSE, "not a number");
  }
  if (workload_number_ok(r, *x)) return ERR_OK;
  return jfield_fail(c, s, r->key, ERR_RANGE, "must be %s %s, not %.17g",
                     r->kind == WORKLOAD_BITS ? "one of" : "in", range, *x);
}

/* workload.model v given as an object (the model's dimensions) or as
 * "hf:PATH" (a Hugging Face config.json, relative to the scenario file's
 * folder as network.trace is): the dimensions into sc's workload, their
 * name into the row. A config that cannot be read is named at the key. */
static int read_model(const jfield_doc *c, const jfield_scope *s,
                      const json_t *v, scenario *sc) {
  model_dims *d = NULL;
  int rc;
  if (json_is_object(v)) {
    jfield_scope m = jfield_child(s, "model");
    rc = model_read_object(c, &m, v, &d);
  } else {
    const char *file = json_string_value(v) + strlen(MODEL_HF_PREFIX);
    char *path = file_beside(c->file, file);
    rc = model_hf_load(path, &d, c->e);
    free(path);
    if (rc == ERR_IO && c->e) {
      char why[ERR_MSG_MAX];
      snprintf(why, sizeof why, "%s", c->e->msg);
      err_clear(c->e);
      rc = jfield_fail(c, s, "model", ERR_IO, "%s", why);
    }
  }
  if (rc) return rc;
  sc->workload.model_dims = d;
  scenario_row_set_name(sc, WORKLOAD_model, d->name);
  return ERR_OK;
}

/* Row r of sc from o (its object, scope s; NULL: absent): the key's value,
 * or its default where the file leaves it out (an error when required),
 * and its line. */
static int read_row(const jfield_doc *c, const jfield_scope *s,
                    const json_t *o, int r, scenario *sc) {
  const workload_row *row = &workload_rows[r];
  const json_t *value = o ? json_object_get(o, row->key) : NULL;
  bool given = value != NULL;
  sc->line[r] = given || (o && row->line_object)
                    ? jfield_line(c, s, row->key) : 0;
  if (r == WORKLOAD_model &&
      (json_is_object(value) || model_is_hf(json_string_value(value))))
    return read_model(c, s, value, sc);
  if (!given && row->required)
    return jfield_fail(c, s, row->key, ERR_MISSING, "missing (%s)",
                       row->kind == WORKLOAD_NAME ? "a string"
                                                  : "an integer");
  if (row->kind == WORKLOAD_NAME) {
    char *v = NULL;
    int rc = given ? jfield_str(c, s, o, row->key, NULL, &v) : ERR_OK;
    if (rc) return rc;
    scenario_row_set_name(sc, r, v ? v : row->names[0]);
    bool ok = !row->names || workload_name_ok(row, v ? v : row->names[0]);
    char names[128];
    workload_range_text(row, names, sizeof names);
    rc = ok ? ERR_OK
            : jfield_fail(c, s, row->key, ERR_UNKNOWN,
                          "unknown value '%s' (%s)", v, names);
    free(v);
    return rc;
  }
  double x = row->def;
  int rc = given ? read_number(c, s, o, row, &x) : ERR_OK;
  if (rc == ERR_OK) scenario_row_set_number(sc, r, x);
  return rc;
}

/* The rows of target t from o (scope s; NULL: absent), in the map's order;
 * a failure names its row (e->field). */
static int read_rows(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, workload_target t, scenario *sc) {
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) {
    if (workload_rows[r].target != t) continue;
    int rc = read_row(c, s, o, r, sc);
    if (rc) return err_blame(c->e, r, rc);
  }
  return ERR_OK;
}

/* Every key of o is a row of target t. */
static int known_rows(const jfield_doc *c, const jfield_scope *s,
                      const json_t *o, workload_target t) {
  const char *known[WORKLOAD_NFIELDS + 1];
  int n = 0;
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (workload_rows[r].target == t) known[n++] = workload_rows[r].key;
  known[n] = NULL;
  return jfield_known(c, s, o, known);
}

/* The object of target t at key (workload: required; cost: optional) and
 * its rows. */
static int read_block(const jfield_doc *c, const json_t *root,
                      const char *key, workload_target t, scenario *sc) {
  jfield_scope top = jfield_top();
  jfield_scope s = jfield_child(&top, key);
  json_t *o;
  int rc;
  if ((rc = jfield_obj(c, &top, root, key, t == WORKLOAD_IN_WORKLOAD, &o)) ||
      (o && (rc = known_rows(c, &s, o, t))) ||
      (rc = read_rows(c, &s, o, t, sc)))
    return rc;
  return t == WORKLOAD_IN_WORKLOAD ? check_workload(c, &s, sc) : ERR_OK;
}

static int read_top(const jfield_doc *c, const json_t *root, scenario *sc,
                    bool builtin) {
  const char *const *known = scenario_top_keys;
  jfield_scope top = jfield_top();
  int rc;
  if (!json_is_object(root))
    return jfield_fail(c, &top, NULL, ERR_PARSE, "a scenario is a JSON object");
  if ((rc = jfield_known(c, &top, root, known)) ||
      (rc = jfield_str(c, &top, root, "name", NULL, &sc->name)) ||
      (rc = jfield_str(c, &top, root, "description", "", &sc->description)) ||
      (rc = jfield_str(c, &top, root, "latency_convention", "as given",
                       &sc->latency_convention)) ||
      (rc = read_rows(c, &top, root, WORKLOAD_IN_TOP, sc)) ||
      (rc = read_sites(c, root, sc)) ||
      (rc = read_block(c, root, "workload", WORKLOAD_IN_WORKLOAD, sc)) ||
      (rc = map_devices(c, sc)) ||
      (rc = read_block(c, root, "cost", WORKLOAD_IN_COST, sc)) ||
      (rc = scenario_read_network(c, root, sc, builtin)) ||
      (rc = scenario_read_prices(c, root, sc, builtin)))
    return rc;
  return ERR_OK;
}

static bool blank(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!strchr(" \t\r\n", text[i])) return false;
  return true;
}

/* Parses text (named file in messages); builtin selects where the trace is. */
static scenario *parse(const char *text, size_t len, const char *file,
                       const char *origin, bool builtin, bool brief, err *e) {
  jfield_doc c = {.file = file, .text = text, .len = len, .e = e};
  if (blank(text, len)) {
    err_set(e, ERR_PARSE, "%s:1: empty file: a scenario is a JSON object",
            file);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    err_set(e, ERR_PARSE, "%s:%d: invalid JSON: %s", file,
            je.line > 0 ? je.line : 1, je.text);
    return NULL;
  }
  scenario *sc = mem_calloc(1, sizeof *sc);
  sc->origin = mem_strdup(origin);
  sc->file = mem_strdup(file);
  sc->bandwidth_scale = sc->latency_scale = 1;
  sc->brief = brief && builtin;
  int rc = read_top(&c, root, sc, builtin);
  json_decref(root);
  if (rc == ERR_OK && sc->network)
    sc->network_static = trace_is_static(sc->network);
  if (rc != ERR_OK) {
    scenario_free(sc);
    return NULL;
  }
  return sc;
}

scenario *scenario_parse(const char *text, size_t len, const char *file,
                         err *e) {
  return parse(text, len, file, file, false, false, e);
}

static scenario *load(const char *name_or_path, bool brief, err *e) {
  size_t n = strlen(name_or_path);
  char *json = mem_alloc(n + 6);
  memcpy(json, name_or_path, n);
  memcpy(json + n, ".json", 6);
  const builtin_file *b = strchr(name_or_path, '/') ? NULL : builtin_find(json);
  free(json);
  if (b) return parse(b->data, b->size, b->name, "built-in", true, brief, e);
  size_t len = 0;
  bool absent = name_or_path[0] && access(name_or_path, F_OK) != 0;
  char *text = file_load(name_or_path, !absent
                             ? "the scenario"
                             : "the scenario (no built-in one has this name: "
                               "see 'geodes scenarios')",
                         FILE_MAX_JSON_BYTES, &len, e);
  if (!text) return NULL;
  scenario *sc = parse(text, len, name_or_path, name_or_path, false, false, e);
  free(text);
  return sc;
}

scenario *scenario_load(const char *name_or_path, err *e) {
  return load(name_or_path, false, e);
}

scenario *scenario_load_brief(const char *name_or_path, err *e) {
  return load(name_or_path, true, e);
}

void scenario_free(scenario *s) {
  if (!s) return;
  free(s->name);
  free(s->file);
  free(s->description);
  free(s->origin);
  free(s->latency_convention);
  for (int i = 0; s->sites && i < s->nsites; i++) {
    free(s->sites[i].name);
    free(s->sites[i].gpu);
    free(s->sites[i].instance);
    free(s->sites[i].price_from);
  }
  free(s->sites);
  free(s->device_site);
  trace_free(s->network);
  free(s->trace_file);
  free(s->overrides);
  free(s->usd_per_gb);
  free(s->prices_file);
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (workload_rows[r].target == WORKLOAD_IN_WORKLOAD &&
        workload_rows[r].kind == WORKLOAD_NAME)
      free(*(char **)((char *)s + workload_rows[r].at));
  free(s->workload.layers_per_stage);
  model_free(s->workload.model_dims);
  free(s);
}

/* h with the rows hashed by pass (workload.h's order of passes): an
 * integer as hash_u64 of its int (as the hash took the fields before the
 * map), a name by hash_str, a real by hash_double; IF_SET and KEYED only
 * when not the row's default, KEYED after its key. */
static uint64_t hash_rows(const scenario *s, uint64_t h, workload_hash pass) {
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) {
    const workload_row *row = &workload_rows[r];
    if (row->hash != pass) continue;
    bool when_set = pass == WORKLOAD_HASH_IF_SET || pass == WORKLOAD_HASH_KEYED;
    if (when_set && scenario_row_is_default(s, r)) continue;
    if (pass == WORKLOAD_HASH_KEYED) h = hash_str(h, row->sweep);
    if (r == WORKLOAD_model && s->workload.model_dims) /* not its name */
      h = model_hash(h, s->workload.model_dims);
    else if (row->kind == WORKLOAD_NAME)
      h = hash_str(h, scenario_row_name(s, r));
    else if (row->kind == WORKLOAD_REAL)
      h = hash_double(h, scenario_row_number(s, r));
    else h = hash_u64(h, (uint64_t)(int64_t)scenario_row_number(s, r));
  }
  return h;
}

uint64_t scenario_hash(const scenario *s) {
  /* every resolved value a result reads, whatever its default (a test
   * edits every key of scenario_site_keys and every row of WORKLOAD_MAP
   * and checks the hash moves): a sweep's row is identified by it */
  uint64_t h = hash_str(hash_u64(HASH_INIT, s->seed), "scenario hash 2");
  h = hash_u64(h, (uint64_t)s->nsites);
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *site = &s->sites[i];
    h = hash_str(hash_str(h, site->name), site->gpu);
    h = hash_u64(hash_u64(h, (uint64_t)site->ndevices), site->nic_shared);
    h = hash_double(h, site->nic_gbps);
    h = hash_u64(hash_u64(h, (uint64_t)site->nic), (uint64_t)site->nccl_sockets);
    h = hash_double(hash_double(h, site->flow_gbps), site->compute_efficiency);
    if (site->tcp_window_bytes != SCENARIO_TCP_WINDOW_DTFM) /* see the header */
      h = hash_double(hash_str(h, "tcp_window_bytes"), site->tcp_window_bytes);
    if (site->gpu_memory_gb > 0) /* absent: the hash before the key */
      h = hash_double(hash_str(h, "gpu_memory_gb"), site->gpu_memory_gb);
  }
  if (scenario_shaping_shares_paths(s->shaping)) /* tc: the hash before */
    h = hash_str(h, scenario_shaping_names[s->shaping]);
  h = hash_u64(h, (uint64_t)s->noverrides);
  for (int i = 0; i < s->noverrides; i++) {
    const scenario_override *o = &s->overrides[i];
    h = hash_u64(hash_u64(h, (uint64_t)o->a), (uint64_t)o->b);
    h = hash_double(hash_double(h, o->latency_ms), o->bandwidth_gbps);
  }
  const scenario_workload *w = &s->workload;
  h = hash_rows(s, h, WORKLOAD_HASH_INT);
  h = hash_u64(h, (uint64_t)w->balanced_layers);
  h = hash_rows(s, h, WORKLOAD_HASH_IF_SET);
  h = hash_rows(s, h, WORKLOAD_HASH_NAME);
  h = hash_rows(s, h, WORKLOAD_HASH_REAL);
  for (int st = 0; w->layers_per_stage && st < w->stages; st++)
    h = hash_u64(h, (uint64_t)w->layers_per_stage[st]);
  h = hash_rows(s, h, WORKLOAD_HASH_KEYED);
  assert(s->network && "a brief load has no network (scenario_load_brief)");
  return hash_u64(h, trace_hash(s->network));
}

/* The override of the pair a, b (either order), or NULL. */
static const scenario_override *override_of(const scenario *s, int a, int b) {
  for (int i = 0; i < s->noverrides; i++) {
    const scenario_override *o = &s->overrides[i];
    if ((o->a == a && o->b == b) || (o->a == b && o->b == a)) return o;
  }
  return NULL;
}

trace_value scenario_link(const scenario *s, int a, int b, int64_t t_ns) {
  const scenario_override *o = override_of(s, a, b);
  if (o)
    return (trace_value){.latency_ms = o->latency_ms,
                         .bandwidth_gbps = o->bandwidth_gbps};
  assert(s->network && "a brief load has no network (scenario_load_brief)");
  return trace_at(s->network, s->device_site[a], s->device_site[b], t_ns);
}

bool scenario_overridden(const scenario *s, int a, int b) {
  return override_of(s, a, b) != NULL;
}

int scenario_path(const scenario *s, int a, int b) {
  int sa = s->device_site[a], sb = s->device_site[b];
  if (sa == sb || scenario_overridden(s, a, b)) return -1;
  return sa * s->nsites + sb;
}

void scenario_where(const scenario *s, int line, const char *key, char *buf,
                    size_t size) {
  if (line > 0) snprintf(buf, size, "%s:%d: %s", s->file, line, key);
  else snprintf(buf, size, "%s: %s", s->name, key);
}

int scenario_site_index(const scenario *s, const char *name) {
  for (int i = 0; i < s->nsites; i++)
    if (strcmp(s->sites[i].name, name) == 0) return i;
  return -1;
}

/* Rank in the listing: the paper's five in the paper's order, then the rest
 * alphabetically. */
static int builtin_rank(const char *name) {
  static const char *const paper[] = {"datacenter", "spot", "multi-dc",
                                      "regional", "worldwide"};
  for (int i = 0; i < 5; i++)
    if (strcmp(name, paper[i]) == 0) return i;
  return 5;
}

static int builtin_cmp(const void *x, const void *y) {
  const char *a = *(const char *const *)x, *b = *(const char *const *)y;
  int ra = builtin_rank(a), rb = builtin_rank(b);
  return ra != rb ? ra - rb : strcmp(a, b);
}

const char *const *scenario_builtin_names(void) {
  /* Built once from the embedded table (every "*.json"), then kept. */
  static const char **names;
  static char **owned;
  if (names) return names;
  size_t n = 0, k = 0;
  for (const builtin_file *f = builtin_files; f->name; f++) n++;
  owned = mem_calloc(n + 1, sizeof *owned);
  for (const builtin_file *f = builtin_files; f->name; f++) {
    size_t len = strlen(f->name);
    if (len > 5 && strcmp(f->name + len - 5, ".json") == 0)
      owned[k++] = mem_strndup(f->name, len - 5);
  }
  qsort(owned, k, sizeof *owned, builtin_cmp);
  names = (const char **)owned;
  return names;
}
