/* sweep: parsing a sweep file and enumerating its points.
 * Invariant: every axis holds at least one value, its values are distinct
 * and valid, so the points are the mixed-radix numbers 0 .. count-1 and
 * distinct indices have distinct canonical keys. */
#include "analysis/sweep.h"

#include <assert.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/mem.h"
#include "models/params.h"
#include "base/names.h"
#include "models/spec.h"
#include "schedules/schedule.h"
#include "sim/net.h"
#include "sim/sim.h"
#include "sim/training.h"
#include "traces/fault.h"
#include "traces/workload.h"

typedef enum { AXIS_NAME, AXIS_INT, AXIS_REAL } axis_kind;

/* The keys of DESIGN.md section 9, in enumeration order (first = slowest);
 * gpus, sockets and runtime came later and vary fastest, then a training
 * run's: iterations, faults, recovery, checkpoint_every, then DiLoCo's and
 * the compression keys. */
enum {
  K_SCENARIOS, K_METHODS, K_NETWORKS, K_SEEDS, K_LAYERS, K_BATCH,
  K_MICRO_BATCH, K_MBPP, K_SCHEDULE, K_DP_ALGO, K_BW_SCALE, K_LAT_SCALE,
  K_WINDOW, K_ACT_GB, K_GRAD_GB, K_GPUS, K_SOCKETS, K_RUNTIME, K_ITERATIONS,
  K_FAULTS, K_RECOVERY, K_CKPT, K_INNER_STEPS, K_FRAGMENTS, K_OVERLAP,
  K_GRAD_BITS, K_ACT_BITS, K_COUNT
};

/* The recovery policies' own spelling (sim/recovery.h's one table). */
static const char *recovery_name(const char *s) {
  int r = sim_recovery_parse(s);
  return r < 0 ? NULL : sim_recovery_name((sim_recovery)r);
}

/* The table's spelling of a GPU name ("a100" -> "A100"), NULL if unknown,
 * so keys do not depend on how the file spells it. */
static const char *gpu_name(const char *s) {
  const spec_gpu *g = spec_gpu_find(s);
  return g ? g->name : NULL;
}

/* The scheduler's own spelling of a method (schedule_method_names is the
 * one list of them), NULL if unknown. */
static const char *method_name(const char *s) {
  int m = schedule_method_find(s);
  return m < 0 ? NULL : schedule_method_name((schedule_method_id)m);
}

/* The engine's spelling of a network model, NULL if unknown. */
static const char *network_name(const char *s) {
  int m = transport_model_parse(s);
  return m < 0 ? NULL : transport_model_name((transport_model)m);
}

static const struct axis_spec {
  const char *key;
  axis_kind kind;
  const char *const *names; /* AXIS_NAME: the allowed values, NULL = any */
  const char *(*canon)(const char *); /* AXIS_NAME: the canonical spelling
                                         of a value, NULL if unknown */
  double lo, hi;            /* AXIS_INT / AXIS_REAL: inclusive range */
  bool open_lo;             /* AXIS_REAL: lo itself excluded */
} SPECS[K_COUNT] = {
    [K_SCENARIOS] = {.key = "scenarios", .kind = AXIS_NAME},
    [K_METHODS] = {.key = "methods", .kind = AXIS_NAME, .canon = method_name},
    [K_NETWORKS] = {.key = "networks", .kind = AXIS_NAME,
                    .canon = network_name},
    [K_SEEDS] = {.key = "seeds", .kind = AXIS_INT, .hi = SCENARIO_MAX_SEED},
    [K_LAYERS] = {.key = "layers", .kind = AXIS_INT, .lo = 1,
                  .hi = SCENARIO_MAX_LAYERS},
    [K_BATCH] = {.key = "batch", .kind = AXIS_INT, .lo = 1,
                 .hi = SCENARIO_KNOB_MAX_BATCH},
    [K_MICRO_BATCH] = {.key = "micro_batch", .kind = AXIS_INT, .lo = 1,
                       .hi = SCENARIO_KNOB_MAX_MICRO_BATCH},
    [K_MBPP] = {.key = "micro_batches_per_pass", .kind = AXIS_INT, .lo = 1,
                .hi = SCENARIO_KNOB_MAX_MBPP},
    [K_SCHEDULE] = {.key = "schedule", .kind = AXIS_NAME,
                    .names = workload_schedules},
    [K_DP_ALGO] = {.key = "dp_algo", .kind = AXIS_NAME,
                   .names = workload_dp_algos},
    [K_BW_SCALE] = {.key = "bandwidth_scale", .kind = AXIS_REAL,
                    .hi = SCENARIO_KNOB_MAX_SCALE, .open_lo = true},
    [K_LAT_SCALE] = {.key = "latency_scale", .kind = AXIS_REAL,
                     .hi = SCENARIO_KNOB_MAX_SCALE, .open_lo = true},
    [K_WINDOW] = {.key = "window_bytes", .kind = AXIS_INT,
                  .lo = TRANSPORT_WINDOW_MIN_BYTES,
                  .hi = TRANSPORT_WINDOW_MAX_BYTES},
    [K_ACT_GB] = {.key = "activation_gb", .kind = AXIS_REAL,
                  .hi = SCENARIO_KNOB_MAX_GB, .open_lo = true},
    [K_GRAD_GB] = {.key = "gradient_gb", .kind = AXIS_REAL,
                   .hi = SCENARIO_KNOB_MAX_GB, .open_lo = true},
    [K_GPUS] = {.key = "gpus", .kind = AXIS_NAME, .canon = gpu_name},
    [K_SOCKETS] = {.key = "sockets", .kind = AXIS_INT, .lo = 1,
                   .hi = TRANSPORT_SOCKETS_MAX},
    [K_RUNTIME] = {.key = "runtime", .kind = AXIS_NAME,
                   .names = workload_runtimes},
    [K_ITERATIONS] = {.key = "iterations", .kind = AXIS_INT, .lo = 1,
                      .hi = SIM_TRAINING_MAX_ITERATIONS},
    [K_FAULTS] = {.key = "faults", .kind = AXIS_NAME},
    [K_RECOVERY] = {.key = "recovery", .kind = AXIS_NAME,
                    .canon = recovery_name},
    [K_CKPT] = {.key = "checkpoint_every", .kind = AXIS_INT, .lo = 1,
                .hi = SIM_TRAINING_MAX_ITERATIONS},
    [K_INNER_STEPS] = {.key = "inner_steps", .kind = AXIS_INT, .lo = 1,
                       .hi = INT_MAX},
    [K_FRAGMENTS] = {.key = "fragments", .kind = AXIS_INT, .lo = 1,
                     .hi = INT_MAX},
    [K_OVERLAP] = {.key = "overlap_steps", .kind = AXIS_INT, .hi = INT_MAX},
    [K_GRAD_BITS] = {.key = "grad_bits", .kind = AXIS_INT, .lo = 4, .hi = 16},
    [K_ACT_BITS] = {.key = "activation_bits", .kind = AXIS_INT, .lo = 2,
                    .hi = 16},
};

typedef struct axis {
  size_t n;        /* 0: absent (one implicit "default" value) */
  char **names;    /* AXIS_NAME */
  double *values;  /* AXIS_INT (exact integers) and AXIS_REAL */
  int line;        /* line of the key in the file, 0 when absent */
} axis;

struct sweep {
  char *name;
  axis axes[K_COUNT];
  size_t count;
  uint64_t *scenario_hash; /* per scenario (sweep_scenarios order); NULL
                              until sweep_resolve */
  uint64_t *faults_hash;   /* [scenario * faults + fault]: fault_hash of
                              each fault file read against each scenario */
  uint64_t data_hash;      /* builtin_hash, by sweep_resolve */
  const char *cost_cmd;    /* borrowed (sweep_set_cost_cmd), or NULL */
  double cost_timeout_s;
};


/* The line of `"key"` followed by ':' in text (keys of a sweep are unique and
 * its values are scalars, so the first such match is the key); 0 if none. */
static int key_line(const char *text, size_t len, const char *key) {
  size_t k = strlen(key);
  for (size_t i = 0; i + k + 2 <= len; i++) {
    if (text[i] != '"' || memcmp(text + i + 1, key, k) || text[i + k + 1] != '"')
      continue;
    size_t j = i + k + 2;
    while (j < len && strchr(" \t\r\n", text[j])) j++;
    if (j < len && text[j] == ':') {
      int line = 1;
      for (size_t t = 0; t < i; t++) line += text[t] == '\n';
      return line;
    }
  }
  return 0;
}

static bool known_name(const char *s, const char *const *names) {
  return names ? names_find(names, s) >= 0 : *s != '\0';
}

/* The error for a GPU name models/spec.h does not know, listing those it
 * does. */
static int unknown_gpu(const sweep *s, int line, const char *name, err *e) {
  char known[256];
  spec_gpu_list(known, sizeof known);
  return err_set(e, ERR_UNKNOWN, "%s:%d: gpus: unknown GPU '%s' (known: %s)",
                 s->name, line, name, known);
}

/* Parses value number k of key spec (v is a scalar) into ax. */
static int parse_value(const sweep *s, const struct axis_spec *spec, axis *ax,
                       json_t *v, err *e) {
  const char *what = spec->kind == AXIS_NAME  ? "a name"
                     : spec->kind == AXIS_INT ? "an integer"
                                              : "a number";
  if (spec->kind == AXIS_NAME) {
    if (!json_is_string(v))
      return err_set(e, ERR_PARSE, "%s:%d: %s: each value must be %s",
                     s->name, ax->line, spec->key, what);
    const char *str = json_string_value(v);
    if (spec->canon) {
      const char *c = spec->canon(str);
      if (!c && spec->canon == gpu_name)
        return unknown_gpu(s, ax->line, str, e);
      if (!c)
        return err_set(e, ERR_UNKNOWN, "%s:%d: %s: unknown value '%s'",
                       s->name, ax->line, spec->key, str);
      str = c;
    }
    if (!known_name(str, spec->names))
      return err_set(e, ERR_UNKNOWN, "%s:%d: %s: unknown value '%s'", s->name,
                     ax->line, spec->key, str);
    ax->names[ax->n++] = mem_strdup(str);
    return ERR_OK;
  }
  double x = json_number_value(v); /* 0 for a non-number */
  if (!json_is_number(v) || (spec->kind == AXIS_INT && x != floor(x)))
    return err_set(e, ERR_PARSE, "%s:%d: %s: each value must be %s", s->name,
                   ax->line, spec->key, what);
  if (!(x >= spec->lo) || x > spec->hi || (spec->open_lo && x <= spec->lo)) {
    int digits = spec->kind == AXIS_INT ? 15 : 6; /* 2147483647, not 2.1e9 */
    return err_set(e, ERR_RANGE, "%s:%d: %s: %.*g is outside %s%.*g, %.*g]",
                   s->name, ax->line, spec->key, digits, x,
                   spec->open_lo ? "(" : "[", digits, spec->lo, digits,
                   spec->hi);
  }
  ax->values[ax->n++] = x;
  return ERR_OK;
}

static int cmp_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

static int cmp_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* No value of ax appears twice: sorted copies, so a million seeds cost
 * O(n log n) (comparing each with all before it took minutes). */
static int check_distinct(const sweep *s, const struct axis_spec *spec,
                          const axis *ax, err *e) {
  int rc = ERR_OK;
  if (spec->kind == AXIS_NAME) {
    char **v = mem_alloc(ax->n * sizeof *v + 1);
    memcpy(v, ax->names, ax->n * sizeof *v);
    qsort(v, ax->n, sizeof *v, cmp_name);
    for (size_t i = 1; i < ax->n && !rc; i++)
      if (strcmp(v[i - 1], v[i]) == 0)
        rc = err_set(e, ERR_DUPLICATE, "%s:%d: %s: '%s' is listed twice",
                     s->name, ax->line, spec->key, v[i]);
    free(v);
    return rc;
  }
  double *v = mem_alloc(ax->n * sizeof *v + 1);
  memcpy(v, ax->values, ax->n * sizeof *v);
  qsort(v, ax->n, sizeof *v, cmp_value);
  for (size_t i = 1; i < ax->n && !rc; i++)
    if (v[i - 1] == v[i])
      rc = err_set(e, ERR_DUPLICATE, "%s:%d: %s: %g is listed twice",
                   s->name, ax->line, spec->key, v[i]);
  free(v);
  return rc;
}

static int parse_axis(sweep *s, int k, json_t *v, err *e) {
  const struct axis_spec *spec = &SPECS[k];
  axis *ax = &s->axes[k];
  size_t n = json_is_array(v) ? json_array_size(v) : 1;
  if (json_is_array(v) && n == 0)
    return err_set(e, ERR_RANGE, "%s:%d: %s: an empty list gives no points",
                   s->name, ax->line, spec->key);
  if (spec->kind == AXIS_NAME) ax->names = mem_calloc(n, sizeof *ax->names);
  else ax->values = mem_calloc(n, sizeof *ax->values);
  if (!json_is_array(v)) return parse_value(s, spec, ax, v, e);
  size_t i;
  json_t *item;
  json_array_foreach(v, i, item) {
    int rc = parse_value(s, spec, ax, item, e);
    if (rc) return rc;
  }
  return check_distinct(s, spec, ax, e);
}

/* The axis index of key, or K_COUNT when it is not a sweep key. */
static int axis_of(const char *key) {
  int k = 0;
  while (k < K_COUNT && strcmp(key, SPECS[k].key) != 0) k++;
  return k;
}

/* Every key known, and the product of the list lengths within
 * SWEEP_MAX_POINTS, before any value is read: a list of a million values
 * crossed with another is refused without parsing either. */
static int check_keys(sweep *s, json_t *root, const char *text, size_t len,
                      err *e) {
  const char *key;
  json_t *v;
  double count = 1; /* exact far beyond SWEEP_MAX_POINTS */
  json_object_foreach(root, key, v) {
    int k = axis_of(key);
    int line = key_line(text, len, key);
    if (k == K_COUNT) {
      char keys[512] = "";
      for (int j = 0; j < K_COUNT; j++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
                 j ? ", " : "", SPECS[j].key);
      return err_set(e, ERR_UNKNOWN, "%s:%d: unknown key '%s' (keys: %s)",
                     s->name, line, key, keys);
    }
    s->axes[k].line = line;
    if (json_is_array(v) && json_array_size(v) > 0)
      count *= (double)json_array_size(v);
  }
  if (count > SWEEP_MAX_POINTS)
    return err_set(e, ERR_RANGE,
                   "%s:1: %.17g points (the product of the list lengths) is "
                   "more than one sweep takes (%d): split it into several "
                   "files on one --db",
                   s->name, count, SWEEP_MAX_POINTS);
  s->count = (size_t)count;
  return ERR_OK;
}

static int parse_object(sweep *s, json_t *root, const char *text, size_t len,
                        err *e) {
  if (!json_is_object(root))
    return err_set(e, ERR_PARSE, "%s:1: a sweep is a JSON object", s->name);
  int rc = check_keys(s, root, text, len, e);
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (rc) break;
    rc = parse_axis(s, axis_of(key), v, e);
  }
  return rc;
}

sweep *sweep_parse(const char *text, size_t len, const char *name, err *e) {
  sweep *s = mem_calloc(1, sizeof *s);
  s->name = mem_strdup(name);
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  int rc = root ? parse_object(s, root, text, len, e)
                : err_set(e, ERR_PARSE, "%s:%d: %s", name, je.line, je.text);
  json_decref(root);
  if (rc) {
    sweep_free(s);
    return NULL;
  }
  return s;
}

sweep *sweep_load(const char *path, err *e) {
  size_t len;
  file_error why;
  char *text = file_read(path, FILE_MAX_JSON_BYTES, &len, &why);
  if (!text) err_set(e, ERR_IO, "%s: cannot read: %s", path, why.reason);
  sweep *s = text ? sweep_parse(text, len, path, e) : NULL;
  free(text);
  return s;
}

void sweep_free(sweep *s) {
  if (!s) return;
  for (int k = 0; k < K_COUNT; k++) {
    for (size_t i = 0; s->axes[k].names && i < s->axes[k].n; i++)
      free(s->axes[k].names[i]);
    free(s->axes[k].names);
    free(s->axes[k].values);
  }
  free(s->scenario_hash);
  free(s->faults_hash);
  free(s->name);
  free(s);
}

/* The value j of axis k as a knob: < 0 (or NAN) when the axis is absent. */
static double axis_value(const sweep *s, int k, size_t j, double absent) {
  return s->axes[k].n ? s->axes[k].values[j] : absent;
}

/* The sweep key an error of a workload combination belongs to: layers for
 * its own check, else the first of the batch keys the file gives. */
static int blamed_axis(const sweep *s, const char *msg) {
  if (s->axes[K_LAYERS].n && strstr(msg, "workload.layers")) return K_LAYERS;
  const int batch_keys[] = {K_BATCH, K_MICRO_BATCH, K_MBPP, K_LAYERS};
  for (int i = 0; i < 4; i++)
    if (s->axes[batch_keys[i]].n) return batch_keys[i];
  return K_SCENARIOS;
}

static size_t axis_len(const sweep *s, int k) {
  return s->axes[k].n ? s->axes[k].n : 1;
}

/* Every combination of the workload axes (layers, batch, micro_batch,
 * micro_batches_per_pass) applied to sc and checked as sim_run will check
 * it (scenario_apply, sim_check_size): a batch that cannot work fails here,
 * at its key's line, not per point later. sc keeps its values (only these
 * integers change, and are restored). */
static int check_workload_axes(const sweep *s, scenario *sc, err *e) {
  const int keys[] = {K_LAYERS, K_BATCH, K_MICRO_BATCH, K_MBPP};
  size_t total = 1;
  for (int i = 0; i < 4; i++) total *= axis_len(s, keys[i]);
  for (size_t c = 0; c < total; c++) {
    long v[4];
    for (size_t i = 0, r = c; i < 4; r /= axis_len(s, keys[i]), i++)
      v[i] = (long)axis_value(s, keys[i], r % axis_len(s, keys[i]), -1);
    scenario_knobs k;
    scenario_knobs_init(&k);
    k.layers = v[0], k.batch = v[1], k.micro_batch = v[2];
    k.micro_batches_per_pass = v[3];
    scenario_workload saved = sc->workload;
    scenario_lines lines = sc->line;
    err ce = {0};
    int rc = scenario_apply(sc, &k, &ce);
    if (!rc) rc = sim_check_size(sc, &ce);
    sc->workload = saved, sc->line = lines;
    if (rc) {
      int key = blamed_axis(s, ce.msg);
      return err_set(e, rc, "%s:%d: %s: %s", s->name, s->axes[key].line,
                     SPECS[key].key, ce.msg);
    }
  }
  return ERR_OK;
}

/* Every pair of scales keeps sc's links within trace.h's bounds. */
static int check_scale_axes(const sweep *s, const scenario *sc, err *e) {
  int key = s->axes[K_BW_SCALE].n ? K_BW_SCALE : K_LAT_SCALE;
  for (size_t b = 0; b < axis_len(s, K_BW_SCALE); b++)
    for (size_t l = 0; l < axis_len(s, K_LAT_SCALE); l++) {
      scenario_knobs k;
      scenario_knobs_init(&k);
      k.bandwidth_scale = axis_value(s, K_BW_SCALE, b, 1);
      k.latency_scale = axis_value(s, K_LAT_SCALE, l, 1);
      err ce = {0};
      int rc = scenario_check_knobs(sc, &k, &ce);
      if (rc)
        return err_set(e, rc, "%s:%d: %s: %s", s->name, s->axes[key].line,
                       SPECS[key].key, ce.msg);
    }
  return ERR_OK;
}

/* Every fault file read against sc (a bad row fails at the faults key's
 * line, naming the file's line), each content hash into h[0 .. n). */
static int check_faults(const sweep *s, const scenario *sc, uint64_t *h,
                        err *e) {
  const axis *ax = &s->axes[K_FAULTS];
  for (size_t j = 0; j < ax->n; j++) {
    err fe = {0};
    fault_trace *f = fault_load(ax->names[j], sc, &fe);
    if (!f)
      return err_set(e, fe.code, "%s:%d: faults: %s (scenario %s)", s->name,
                     ax->line, fe.msg, sc->name);
    h[j] = fault_hash(f);
    fault_free(f);
  }
  return ERR_OK;
}

int sweep_resolve(sweep *s, err *e) {
  const char *const *names;
  size_t n = sweep_scenarios(s, &names), nf = s->axes[K_FAULTS].n;
  uint64_t *h = mem_calloc(n, sizeof *h);
  uint64_t *fh = mem_calloc(n * nf + 1, sizeof *fh);
  int rc = ERR_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    err se = {0};
    scenario *sc = scenario_load(names[i], &se);
    if (!sc) {
      rc = err_set(e, se.code, "%s:%d: scenarios: %s", s->name,
                   sweep_line(s, "scenarios"), se.msg);
      break;
    }
    h[i] = scenario_hash(sc);
    rc = check_workload_axes(s, sc, e);
    if (!rc) rc = check_scale_axes(s, sc, e);
    if (!rc) rc = check_faults(s, sc, fh + i * nf, e);
    scenario_free(sc);
  }
  if (rc) {
    free(h), free(fh);
    return rc;
  }
  free(s->scenario_hash);
  free(s->faults_hash);
  s->scenario_hash = h;
  s->faults_hash = fh;
  /* The built-in data and any parameter a --params file changed. */
  s->data_hash = builtin_hash() ^ params_hash();
  return ERR_OK;
}

void sweep_point_identity(const sweep_point *p, const char *key,
                          char buf[17]) {
  assert(p->scenario_hash && p->data_hash && "sweep_resolve first");
  uint64_t h = hash_u64(HASH_INIT, p->scenario_hash);
  h = hash_u64(hash_str(h, key), p->data_hash);
  h = hash_u64(h, SIM_RESULTS_VERSION);
  if (p->faults) h = hash_u64(h, p->faults_hash); /* none: as before */
  snprintf(buf, 17, "%016llx", (unsigned long long)h);
}

size_t sweep_count(const sweep *s) { return s->count; }
const char *sweep_name(const sweep *s) { return s->name; }

int sweep_line(const sweep *s, const char *key) {
  for (int k = 0; k < K_COUNT; k++)
    if (strcmp(SPECS[k].key, key) == 0) return s->axes[k].line;
  return 0;
}

size_t sweep_scenarios(const sweep *s, const char *const **names) {
  static const char *const fallback[] = {SCENARIO_DEFAULT_NAME};
  const axis *ax = &s->axes[K_SCENARIOS];
  *names = ax->n ? (const char *const *)ax->names : fallback;
  return ax->n ? ax->n : 1;
}

void sweep_set_cost_cmd(sweep *s, const char *cmd, double timeout_s) {
  s->cost_cmd = cmd;
  s->cost_timeout_s = timeout_s;
}

void sweep_point_at(const sweep *s, size_t i, sweep_point *p) {
  size_t pick[K_COUNT];
  for (int k = K_COUNT - 1; k >= 0; k--) { /* last key varies fastest */
    size_t n = s->axes[k].n ? s->axes[k].n : 1;
    pick[k] = i % n;
    i /= n;
  }
  const axis *a = s->axes;
#define NAME(k, dflt) (a[k].n ? a[k].names[pick[k]] : (dflt))
#define INT(k) (a[k].n ? (int64_t)a[k].values[pick[k]] : -1)
#define REAL(k, dflt) (a[k].n ? a[k].values[pick[k]] : (dflt))
  *p = (sweep_point){
      /* absent: worldwide, dtfm-identity, netem */
      .scenario = NAME(K_SCENARIOS, SCENARIO_DEFAULT_NAME),
      .method = NAME(K_METHODS, schedule_method_name(SCHEDULE_DTFM_IDENTITY)),
      .network = NAME(K_NETWORKS, transport_model_name(TRANSPORT_NETEM)),
      .seed = INT(K_SEEDS), .layers = INT(K_LAYERS), .batch = INT(K_BATCH),
      .micro_batch = INT(K_MICRO_BATCH),
      .micro_batches_per_pass = INT(K_MBPP), .window_bytes = INT(K_WINDOW),
      .schedule = NAME(K_SCHEDULE, NULL), .dp_algo = NAME(K_DP_ALGO, NULL),
      .gpu = NAME(K_GPUS, NULL),
      .bandwidth_scale = REAL(K_BW_SCALE, 1.0),
      .latency_scale = REAL(K_LAT_SCALE, 1.0),
      .activation_gb = REAL(K_ACT_GB, NAN),
      .gradient_gb = REAL(K_GRAD_GB, NAN), .sockets = INT(K_SOCKETS),
      .runtime = NAME(K_RUNTIME, NULL), .iterations = INT(K_ITERATIONS),
      .faults = NAME(K_FAULTS, NULL), .recovery = NAME(K_RECOVERY, NULL),
      .checkpoint_every = INT(K_CKPT),
      .inner_steps = INT(K_INNER_STEPS), .fragments = INT(K_FRAGMENTS),
      .overlap_steps = INT(K_OVERLAP), .grad_bits = INT(K_GRAD_BITS),
      .activation_bits = INT(K_ACT_BITS),
      .scenario_hash = s->scenario_hash ? s->scenario_hash[pick[K_SCENARIOS]]
                                        : 0,
      .faults_hash = s->faults_hash && a[K_FAULTS].n
                         ? s->faults_hash[pick[K_SCENARIOS] * a[K_FAULTS].n +
                                          pick[K_FAULTS]]
                         : 0,
      .data_hash = s->data_hash, .cost_cmd = s->cost_cmd,
      .cost_timeout_s = s->cost_timeout_s};
#undef NAME
#undef INT
#undef REAL
}

/* snprintf into buf at *at without overflowing; *at keeps the needed size. */
static void put(char *buf, size_t size, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(*at < size ? buf + *at : NULL, *at < size ? size - *at : 0,
                    fmt, ap);
  va_end(ap);
  *at += (size_t)n;
}

static void put_int(char *b, size_t size, size_t *at, const char *k,
                    int64_t v) {
  if (v < 0) put(b, size, at, " %s=-", k);
  else put(b, size, at, " %s=%lld", k, (long long)v);
}

static void put_real(char *b, size_t size, size_t *at, const char *k,
                     double v) {
  if (isnan(v)) put(b, size, at, " %s=-", k);
  else put(b, size, at, " %s=%.17g", k, v);
}

size_t sweep_point_key(const sweep_point *p, char *buf, size_t size) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  put(buf, size, &at, "sweep scenario=%s method=%s network=%s", p->scenario,
      p->method, p->network);
  put_int(buf, size, &at, "seed", p->seed);
  put_int(buf, size, &at, "layers", p->layers);
  put_int(buf, size, &at, "batch", p->batch);
  put_int(buf, size, &at, "micro_batch", p->micro_batch);
  put_int(buf, size, &at, "micro_batches_per_pass", p->micro_batches_per_pass);
  put(buf, size, &at, " schedule=%s dp_algo=%s",
      p->schedule ? p->schedule : "-", p->dp_algo ? p->dp_algo : "-");
  put_real(buf, size, &at, "bandwidth_scale", p->bandwidth_scale);
  put_real(buf, size, &at, "latency_scale", p->latency_scale);
  put_int(buf, size, &at, "window_bytes", p->window_bytes);
  put_real(buf, size, &at, "activation_gb", p->activation_gb);
  put_real(buf, size, &at, "gradient_gb", p->gradient_gb);
  const char *gpu = p->gpu ? gpu_name(p->gpu) : NULL;
  put(buf, size, &at, " gpu=%s", gpu ? gpu : p->gpu ? p->gpu : "-");
  put_int(buf, size, &at, "sockets", p->sockets);
  put(buf, size, &at, " runtime=%s", p->runtime ? p->runtime : "-");
  /* a training run's keys only when given: the rows of sweeps without
   * them keep their keys */
  if (p->iterations >= 0) put_int(buf, size, &at, "iterations", p->iterations);
  if (p->faults) put(buf, size, &at, " faults=%s", p->faults);
  if (p->recovery) put(buf, size, &at, " recovery=%s", p->recovery);
  if (p->checkpoint_every >= 0)
    put_int(buf, size, &at, "checkpoint_every", p->checkpoint_every);
  /* issue 12's keys only when given: the keys of older rows hold */
  const char *later[] = {"inner_steps", "fragments", "overlap_steps",
                         "grad_bits", "activation_bits"};
  const int64_t v[] = {p->inner_steps, p->fragments, p->overlap_steps,
                       p->grad_bits, p->activation_bits};
  for (int i = 0; i < 5; i++)
    if (v[i] >= 0) put_int(buf, size, &at, later[i], v[i]);
  if (p->cost_cmd) put(buf, size, &at, " cost_cmd=%s", p->cost_cmd);
  return at;
}

void sweep_label_row(db_result *r, const sweep_label *l) {
  r->study = l->study, r->scenario = l->scenario, r->method = l->method;
  r->network_model = l->network_model;
  r->key = l->key, r->identity = l->identity;
  r->bandwidth_scale = l->bandwidth_scale;
  r->latency_scale = l->latency_scale;
  r->faults = l->faults, r->recovery = l->recovery;
}

sweep_label sweep_point_label(const sweep_point *p, sweep_key *k) {
  size_t need = sweep_point_key(p, k->key, k->cap) + 1;
  if (need > k->cap) {
    k->key = mem_realloc(k->key, k->cap = need);
    sweep_point_key(p, k->key, k->cap);
  }
  sweep_point_identity(p, k->key, k->identity);
  return (sweep_label){.study = "sweep", .scenario = p->scenario,
                       .method = p->method, .network_model = p->network,
                       .key = k->key, .identity = k->identity,
                       .bandwidth_scale = p->bandwidth_scale,
                       .latency_scale = p->latency_scale,
                       .faults = p->faults, .recovery = p->recovery};
}
