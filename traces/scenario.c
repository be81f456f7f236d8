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
#include "traces/scenario_parts.h"
#include "traces/workload.h"

#define SCENARIO_SEED_DEFAULT 1
#define SCENARIO_GPU_DEFAULT "V100"
#define SCENARIO_NIC_DEFAULT 10.0
/* Devices are ints; the bound that matters is a run's memory, which the
 * engine checks with its estimate before building anything
 * (sim_run_bytes). The loader's own per-device array is checked against
 * mem_limit_bytes before it is allocated. */
#define SCENARIO_MAX_DEVICES INT_MAX

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
      "compute_efficiency", "flow_gbps", "nic", "tcp_window_bytes"
const char *const scenario_site_keys[] = {SCENARIO_SITE_KEYS_, NULL};
const char *const scenario_site_info_keys[] = {"instance", NULL};
static const char *const site_known[] = {SCENARIO_SITE_KEYS_, "instance",
                                         NULL};

const char *const scenario_top_keys[] = {
    "name",  "description", "seed",     "latency_convention",
    "sites", "network",     "workload", "cost",
    NULL};
const char *const scenario_cost_keys[] = {"activation_gb", "gradient_gb",
                                          NULL};

const char *const scenario_workload_keys[] = {
    "model", "layers", "batch", "micro_batch", "stages", "replicas",
    "micro_batches_per_pass", "schedule", "dp_algo", "recompute", "runtime",
    "inner_steps", "fragments", "overlap_steps", "exchange_levels", "grad_bits",
    "activation_bits", NULL};

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
    return jfield_fail(
        c, s, "stages", ERR_CONFIG,
        "stages * replicas = %d * %d = %lld, but the sites have %d "
        "devices",
        w->stages, w->replicas, (long long)w->stages * w->replicas,
        sc->ndevices);
  if (w->layers && w->layers < w->stages)
    return jfield_fail(c, s, "layers", ERR_CONFIG,
                       "%d layers for %d stages: every stage holds at least "
                       "one", w->layers, w->stages);
  long long k = workload_batch_k(w->runtime, w->micro_batches_per_pass);
  long long per_pass;
  if (!scenario_batch_divides(w->batch, w->replicas, w->micro_batch, k, &per_pass))
    return jfield_fail(
        c, s, "batch", ERR_CONFIG,
        "global batch %d is not a multiple of replicas * micro_batch * "
        "micro_batches_per_pass = %d * %d * %lld%s",
        w->batch, w->replicas, w->micro_batch, k,
        per_pass < 0 ? " (which exceeds it)" : "");
  return ERR_OK;
}

/* A width key: one of list (workload.h), 16 when absent. */
static int read_bits(const jfield_doc *c, const jfield_scope *s,
                     const json_t *o, const char *key,
                     const char *const *list, const char *text, int *out) {
  int rc = jfield_int32(c, s, o, key, 1, 16, out);
  if (rc || workload_bits_ok(list, *out)) return rc;
  return jfield_fail(c, s, key, ERR_CONFIG, "%d bits: must be %s", *out,
                     text);
}

/* DiLoCo's keys (their checks against the layers are models/diloco's)
 * and the compression widths. */
static int read_diloco(const jfield_doc *c, const jfield_scope *s,
                       const json_t *o, scenario_workload *w) {
  int rc;
  long long levels = 1;
  if ((rc = jfield_int32(c, s, o, "inner_steps", 1,
                         WORKLOAD_DEFAULT_INNER_STEPS, &w->inner_steps)) ||
      (rc = jfield_int32(c, s, o, "fragments", 1, 1, &w->fragments)) ||
      (rc = jfield_int32(c, s, o, "overlap_steps", 0, 0, &w->overlap_steps)) ||
      (rc = jfield_int(c, s, o, "exchange_levels", 1, 2, 1, &levels)) ||
      (rc = read_bits(c, s, o, "grad_bits", workload_grad_bits,
                      WORKLOAD_GRAD_BITS_TEXT, &w->grad_bits)))
    return rc;
  w->exchange_levels = (int)levels;
  return read_bits(c, s, o, "activation_bits", workload_act_bits,
                   WORKLOAD_ACT_BITS_TEXT, &w->activation_bits);
}

static int read_workload(const jfield_doc *c, const json_t *root,
                         scenario *sc) {
  const char *const *known = scenario_workload_keys;
  jfield_scope top = jfield_top();
  jfield_scope s = jfield_child(&top, "workload");
  scenario_workload *w = &sc->workload;
  json_t *o;
  long long layers = 0;
  int rc;
  if ((rc = jfield_obj(c, &top, root, "workload", true, &o)) ||
      (rc = jfield_known(c, &s, o, known)) ||
      (rc = jfield_str(c, &s, o, "model", NULL, &w->model)) ||
      /* absent: 0, the model's depth (models/spec resolves it) */
      (json_object_get(o, "layers") &&
       (rc = jfield_int(c, &s, o, "layers", 1, SCENARIO_MAX_LAYERS, 0,
                        &layers))) ||
      (rc = jfield_int32(c, &s, o, "batch", 1, 0, &w->batch)) ||
      (rc = jfield_int32(c, &s, o, "micro_batch", 1, 0, &w->micro_batch)) ||
      (rc = jfield_int32(c, &s, o, "stages", 1, 0, &w->stages)) ||
      (rc = jfield_int32(c, &s, o, "replicas", 1, 0, &w->replicas)) ||
      (rc = jfield_int32(c, &s, o, "micro_batches_per_pass", 0, 0,
                         &w->micro_batches_per_pass)) ||
      (rc = jfield_str(c, &s, o, "schedule", workload_schedules[0],
                       &w->schedule)) ||
      (rc = jfield_one_of(c, &s, "schedule", w->schedule,
                          workload_schedules)) ||
      (rc = jfield_str(c, &s, o, "dp_algo", workload_dp_algos[0],
                       &w->dp_algo)) ||
      (rc = jfield_one_of(c, &s, "dp_algo", w->dp_algo, workload_dp_algos)) ||
      (rc = jfield_bool(c, &s, o, "recompute", true, &w->recompute)) ||
      (rc = jfield_str(c, &s, o, "runtime", workload_runtimes[0],
                       &w->runtime)) ||
      (rc = jfield_one_of(c, &s, "runtime", w->runtime, workload_runtimes)))
    return rc;
  w->layers = (int)layers;
  sc->line = (scenario_lines){
      .model = jfield_line(c, &s, "model"),
      .layers = jfield_line(c, &s, "layers"),
      .batch = jfield_line(c, &s, "batch"),
      .dp_algo = json_object_get(o, "dp_algo") ? jfield_line(c, &s, "dp_algo") : 0,
      .runtime = json_object_get(o, "runtime") ? jfield_line(c, &s, "runtime") : 0,
      .inner_steps = json_object_get(o, "inner_steps")
                         ? jfield_line(c, &s, "inner_steps") : 0,
      .fragments = json_object_get(o, "fragments")
                       ? jfield_line(c, &s, "fragments") : 0,
      .overlap_steps = json_object_get(o, "overlap_steps")
                           ? jfield_line(c, &s, "overlap_steps") : 0,
      .exchange_levels = json_object_get(o, "exchange_levels")
                             ? jfield_line(c, &s, "exchange_levels") : 0};
  return (rc = read_diloco(c, &s, o, w)) ? rc : check_workload(c, &s, sc);
}

static int read_cost(const jfield_doc *c, const json_t *root, scenario *sc) {
  const char *const *known = scenario_cost_keys;
  jfield_scope top = jfield_top();
  jfield_scope s = jfield_child(&top, "cost");
  json_t *o;
  int rc;
  sc->activation_gb = sc->gradient_gb = NAN;
  if ((rc = jfield_obj(c, &top, root, "cost", false, &o)) || !o) return rc;
  if ((rc = jfield_known(c, &s, o, known))) return rc;
  if ((rc = jfield_num(c, &s, o, "activation_gb",
                       &(jfield_num_spec){.lo = 0, .open = true, .hi = HUGE_VAL,
                                          .def = NAN},
                       &sc->activation_gb)))
    return rc;
  return jfield_num(c, &s, o, "gradient_gb",
                    &(jfield_num_spec){.lo = 0, .open = true, .hi = HUGE_VAL,
                                       .def = NAN},
                    &sc->gradient_gb);
}

static int read_top(const jfield_doc *c, const json_t *root, scenario *sc,
                    bool builtin) {
  const char *const *known = scenario_top_keys;
  jfield_scope top = jfield_top();
  long long seed;
  int rc;
  if (!json_is_object(root))
    return jfield_fail(c, &top, NULL, ERR_PARSE, "a scenario is a JSON object");
  if ((rc = jfield_known(c, &top, root, known)) ||
      (rc = jfield_str(c, &top, root, "name", NULL, &sc->name)) ||
      (rc = jfield_str(c, &top, root, "description", "", &sc->description)) ||
      (rc = jfield_str(c, &top, root, "latency_convention", "as given",
                       &sc->latency_convention)) ||
      (rc = jfield_int(c, &top, root, "seed", 0, SCENARIO_MAX_SEED,
                       SCENARIO_SEED_DEFAULT, &seed)) ||
      (rc = read_sites(c, root, sc)) || (rc = read_workload(c, root, sc)) ||
      (rc = map_devices(c, sc)) ||
      (rc = read_cost(c, root, sc)) ||
      (rc = scenario_read_network(c, root, sc, builtin)))
    return rc;
  sc->seed = (uint64_t)seed;
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
  }
  free(s->sites);
  free(s->device_site);
  trace_free(s->network);
  free(s->trace_file);
  free(s->overrides);
  free(s->workload.model);
  free(s->workload.schedule);
  free(s->workload.runtime);
  free(s->workload.dp_algo);
  free(s->workload.layers_per_stage);
  free(s);
}

uint64_t scenario_hash(const scenario *s) {
  /* every resolved value a result reads, whatever its default (a test
   * edits every key of scenario_site_keys and scenario_workload_keys and
   * checks the hash moves): a sweep's row is identified by it */
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
  const int ints[] = {w->layers,        w->batch,         w->micro_batch,
                      w->stages,        w->replicas,      w->micro_batches_per_pass,
                      w->recompute,     w->inner_steps,   w->fragments,
                      w->overlap_steps, w->grad_bits,     w->activation_bits,
                      w->balanced_layers};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    h = hash_u64(h, (uint64_t)ints[i]);
  if (w->exchange_levels > 1) /* hashed when set: earlier hashes hold */
    h = hash_u64(h, (uint64_t)w->exchange_levels);
  h = hash_str(hash_str(hash_str(h, w->model), w->schedule), w->dp_algo);
  h = hash_str(h, w->runtime);
  h = hash_double(hash_double(h, s->activation_gb), s->gradient_gb);
  for (int st = 0; w->layers_per_stage && st < w->stages; st++)
    h = hash_u64(h, (uint64_t)w->layers_per_stage[st]);
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
