/* sweep: parsing a sweep file and enumerating its points.
 * Invariant: every axis holds at least one value, its values are distinct
 * and valid, so the points are the mixed-radix numbers 0 .. count-1 and
 * distinct indices have distinct canonical keys. */
#include "analysis/sweep.h"
#include "analysis/sweep_parts.h"

#include <assert.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/mem.h"
#include "base/names.h"
#include "models/spec.h"
#include "schedules/schedule.h"
#include "sim/net.h"
#include "sim/sim.h"
#include "sim/training.h"
#include "traces/fault.h"
#include "traces/scenario_row.h"
#include "traces/workload.h"

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

/* The name a point takes when the file does not give the key. */
static const char *default_scenario(void) { return SCENARIO_DEFAULT_NAME; }
static const char *default_method(void) {
  return schedule_method_name(SCHEDULE_DTFM_IDENTITY);
}
static const char *default_network(void) {
  return transport_model_name(TRANSPORT_MODEL_DEFAULT);
}

/* Where a key's value goes in a point (a const char *, an int64_t or long,
 * or a double by kind). */
#define AT(field) offsetof(sweep_point, field)
_Static_assert(_Generic((int64_t)0, long: 1, default: 0),
               "a point's integers are knobs' longs and int64_ts alike");

/* The model's own spelling of its name ("GPT3-XL" -> "gpt3-xl"), a config
 * "hf:PATH" as it is (scenario_apply reads it), NULL if unknown. */
static const char *model_name(const char *s) {
  const spec_model *m = spec_model_find(s);
  return m ? m->name : model_is_hf(s) ? s : NULL;
}

/* The sweep's own keys (the knobs' come from their rows below). A key is
 * named as the results column it fills (and the option that sets it:
 * --method); an alias is a former name, still read. A key in a stored
 * point key is `given_only` when it arrived after rows existed: it then
 * appears only when present, so those rows keep their keys. */
static const struct axis_spec own[K_COUNT] = {
    [K_SCENARIOS] = {.key = "scenario", .alias = "scenarios",
                     .in_key = "scenario",
                     .kind = AXIS_NAME, .at = AT(scenario),
                     .absent_name = default_scenario},
    [K_METHODS] = {.key = "method", .alias = "methods", .in_key = "method",
                   .kind = AXIS_NAME,
                   .at = AT(method), .absent_name = default_method,
                   .canon = method_name},
    [K_NETWORKS] = {.key = "network_model", .alias = "networks",
                    .in_key = "network",
                    .kind = AXIS_NAME, .at = AT(network),
                    .absent_name = default_network, .canon = network_name},
    [K_ITERATIONS] = {.key = "iterations", .kind = AXIS_INT,
                      .at = AT(iterations), .given_only = true, .lo = 1,
                      .hi = SIM_TRAINING_MAX_ITERATIONS},
    [K_FAULTS] = {.key = "faults", .kind = AXIS_NAME, .at = AT(faults),
                  .given_only = true},
    [K_RECOVERY] = {.key = "recovery", .kind = AXIS_NAME, .at = AT(recovery),
                    .given_only = true, .canon = recovery_name},
    [K_CKPT] = {.key = "checkpoint_every", .kind = AXIS_INT,
                .at = AT(checkpoint_every), .given_only = true, .lo = 1,
                .hi = SIM_TRAINING_MAX_ITERATIONS},
};

/* Each knob key's row (+ 1; 0: the sweep's own key). */
#define ROW_OF_(a, f, ...) [K_##f] = WORKLOAD_##f + 1,
static const int row_of[K_COUNT] = {WORKLOAD_MAP(ROW_OF_, )};
#undef ROW_OF_

/* A knob's key from its row r: the row's sweep name, kind, range or names,
 * its field of the point's knobs, its absent value (scenario_knobs_init's)
 * and whether it is in a point's key only when given; GPU and model names
 * in their tables' spelling, so that keys do not depend on how a file
 * spells them. */
static struct axis_spec knob_spec(int r) {
  static const axis_kind kinds[] = {[WORKLOAD_INT] = AXIS_INT,
                                    [WORKLOAD_BITS] = AXIS_INT,
                                    [WORKLOAD_REAL] = AXIS_REAL,
                                    [WORKLOAD_NAME] = AXIS_NAME,
                                    [WORKLOAD_BOOL] = AXIS_BOOL};
  const workload_row *row = &workload_rows[r];
  scenario_knobs absent;
  scenario_knobs_init(&absent);
  return (struct axis_spec){
      .key = row->sweep, .alias = row->alias, .kind = kinds[row->kind],
      .at = AT(knobs) + row->knob_at, .given_only = row->given_only,
      .absent = row->kind == WORKLOAD_REAL ? scenario_knob_number(&absent, r)
                                           : 0,
      .names = row->kind == WORKLOAD_NAME ? row->names : NULL,
      .canon = r == WORKLOAD_gpu ? gpu_name
               : r == WORKLOAD_model ? model_name : NULL,
      .lo = row->lo, .hi = row->hi, .open_lo = row->open, .row = row};
}

const struct axis_spec *sweep_spec(int k) {
  /* Built once from the two tables, then kept. */
  static struct axis_spec specs[K_COUNT];
  static bool built;
  if (!built) {
    for (int i = 0; i < K_COUNT; i++)
      specs[i] = row_of[i] ? knob_spec(row_of[i] - 1) : own[i];
    built = true;
  }
  return &specs[k];
}

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

/* The key of ax's spec as the file spells it. */
#define KEY(ax, spec) ((ax)->key ? (ax)->key : (spec)->key)

/* The error for a GPU name models/spec.h does not know, listing those it
 * does. */
static int unknown_gpu(const sweep *s, const axis *ax, const char *name,
                       err *e) {
  char known[256];
  spec_gpu_list(known, sizeof known);
  return err_set(e, ERR_UNKNOWN, "%s:%d: %s: unknown GPU '%s' (known: %s)",
                 s->name, ax->line, ax->key, name, known);
}

/* The range of a key's values, as its message says it: a knob's row's
 * words (workload_range_text, every front door's), else "[lo, hi]". */
static void range_text(const struct axis_spec *spec, char *buf, size_t size) {
  if (spec->row) workload_range_text(spec->row, buf, size);
  else snprintf(buf, size, "[%.15g, %.15g]", spec->lo, spec->hi);
}

/* A name value of key spec (v a scalar) into ax, in its canonical
 * spelling. */
static int parse_name(const sweep *s, const struct axis_spec *spec, axis *ax,
                      json_t *v, err *e) {
  if (!json_is_string(v))
    return err_set(e, ERR_PARSE, "%s:%d: %s: each value must be a name",
                   s->name, ax->line, KEY(ax, spec));
  const char *str = json_string_value(v);
  if (spec->canon) {
    const char *c = spec->canon(str);
    if (!c && spec->canon == gpu_name) return unknown_gpu(s, ax, str, e);
    if (!c)
      return err_set(e, ERR_UNKNOWN, "%s:%d: %s: unknown value '%s'",
                     s->name, ax->line, KEY(ax, spec), str);
    str = c;
  }
  if (!known_name(str, spec->names)) {
    char names[128] = "";
    if (spec->names) range_text(spec, names, sizeof names);
    return err_set(e, ERR_UNKNOWN, "%s:%d: %s: unknown value '%s'%s%s%s",
                   s->name, ax->line, KEY(ax, spec), str,
                   names[0] ? " (" : "", names, names[0] ? ")" : "");
  }
  ax->names[ax->n++] = mem_strdup(str);
  return ERR_OK;
}

/* Parses value number k of key spec (v is a scalar) into ax. */
static int parse_value(const sweep *s, const struct axis_spec *spec, axis *ax,
                       json_t *v, err *e) {
  if (spec->kind == AXIS_NAME) return parse_name(s, spec, ax, v, e);
  const char *what = spec->kind == AXIS_INT    ? "an integer"
                     : spec->kind == AXIS_BOOL ? "true or false"
                                               : "a number";
  double x = json_is_boolean(v) ? json_is_true(v) : json_number_value(v);
  bool typed = spec->kind == AXIS_BOOL ? json_is_boolean(v)
                                       : json_is_number(v);
  if (!typed || (spec->kind == AXIS_INT && x != floor(x)))
    return err_set(e, ERR_PARSE, "%s:%d: %s: each value must be %s", s->name,
                   ax->line, KEY(ax, spec), what);
  bool ok = spec->row ? workload_number_ok(spec->row, x)
                      : x >= spec->lo && x <= spec->hi;
  if (!ok) {
    char range[128];
    range_text(spec, range, sizeof range);
    bool listed = spec->row && spec->row->kind == WORKLOAD_BITS;
    int digits = spec->kind == AXIS_INT ? 15 : 6; /* 2147483647, not 2.1e9 */
    return err_set(e, ERR_RANGE, "%s:%d: %s: %.*g is %s %s", s->name,
                   ax->line, KEY(ax, spec), digits, x,
                   listed ? "not" : "outside", range);
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
                     s->name, ax->line, KEY(ax, spec), v[i]);
    free(v);
    return rc;
  }
  double *v = mem_alloc(ax->n * sizeof *v + 1);
  memcpy(v, ax->values, ax->n * sizeof *v);
  qsort(v, ax->n, sizeof *v, cmp_value);
  for (size_t i = 1; i < ax->n && !rc; i++)
    if (v[i - 1] == v[i])
      rc = err_set(e, ERR_DUPLICATE, "%s:%d: %s: %g is listed twice",
                   s->name, ax->line, KEY(ax, spec), v[i]);
  free(v);
  return rc;
}

static int parse_axis(sweep *s, int k, json_t *v, err *e) {
  const struct axis_spec *spec = sweep_spec(k);
  axis *ax = &s->axes[k];
  size_t n = json_is_array(v) ? json_array_size(v) : 1;
  if (json_is_array(v) && n == 0)
    return err_set(e, ERR_RANGE, "%s:%d: %s: an empty list gives no points",
                   s->name, ax->line, KEY(ax, spec));
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
  while (k < K_COUNT && strcmp(key, sweep_spec(k)->key) != 0 &&
         !(sweep_spec(k)->alias && strcmp(key, sweep_spec(k)->alias) == 0))
    k++;
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
      for (size_t j = 0; sweep_key_name(j); j++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
                 j ? ", " : "", sweep_key_name(j));
      return err_set(e, ERR_UNKNOWN, "%s:%d: unknown key '%s' (keys: %s)",
                     s->name, line, key, keys);
    }
    if (s->axes[k].key)
      return err_set(e, ERR_DUPLICATE, "%s:%d: '%s' and '%s' name one key "
                     "('%s' is its former name): give one", s->name, line,
                     s->axes[k].key, key, sweep_spec(k)->alias);
    s->axes[k].line = line;
    s->axes[k].key = strcmp(key, sweep_spec(k)->key) == 0
                         ? sweep_spec(k)->key : sweep_spec(k)->alias;
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

/* Whether name is a built-in scenario (as scenario_load finds one). */
static bool builtin_scenario(const char *name) {
  char json[256];
  snprintf(json, sizeof json, "%s.json", name);
  return !strchr(name, '/') && builtin_find(json);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The files of axis k (scenario files, fault files) relative to the sweep
 * file at path, as every path inside a geodes file: beside it. A name
 * found only from the working directory (the former rule) is kept as it
 * is, so that scripts written for it still run. */
static void resolve_files(sweep *s, int k, const char *path) {
  axis *ax = &s->axes[k];
  for (size_t i = 0; i < ax->n; i++) {
    if (k == K_SCENARIOS && builtin_scenario(ax->names[i])) continue;
    const char *n = ax->names[i];
    char *p = file_beside(path, n);
    /* neither: a scenario without folder or extension is a built-in's
     * name, misspelt (its message names it as written) */
    bool builtin_like = k == K_SCENARIOS && !strchr(n, '/') && !strchr(n, '.');
    if (strcmp(p, n) == 0 ||
        (!exists(p) && (exists(n) || builtin_like))) {
      free(p);
      continue;
    }
    free(ax->names[i]);
    ax->names[i] = p;
  }
}

/* The model key's configs ("hf:PATH") beside the sweep file at path, as
 * resolve_files resolves a file (one found only from the working directory
 * is kept as it is). */
static void resolve_configs(sweep *s, const char *path) {
  axis *ax = &s->axes[K_model];
  size_t pre = strlen(MODEL_HF_PREFIX);
  for (size_t i = 0; i < ax->n; i++) {
    const char *n = ax->names[i];
    if (!model_is_hf(n)) continue;
    char *p = file_beside(path, n + pre);
    if (strcmp(p, n + pre) != 0 && (exists(p) || !exists(n + pre))) {
      char *hf = mem_alloc(pre + strlen(p) + 1);
      memcpy(hf, n, pre);
      strcpy(hf + pre, p);
      free(ax->names[i]);
      ax->names[i] = hf;
    }
    free(p);
  }
}

sweep *sweep_load(const char *path, err *e) {
  size_t len;
  char *text = file_load(path, "the sweep file", FILE_MAX_JSON_BYTES, &len, e);
  sweep *s = text ? sweep_parse(text, len, path, e) : NULL;
  free(text);
  if (s) sweep_files_beside(s, path);
  return s;
}

void sweep_files_beside(sweep *s, const char *path) {
  resolve_files(s, K_SCENARIOS, path);
  resolve_files(s, K_FAULTS, path);
  resolve_configs(s, path);
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
  free(s->prices_hash);
  free(s->faults_hash);
  free(s->name);
  free(s);
}

/* Puts value j of ax, the axis of key k, into p at the key's field
 * (its spec's at); the key's absent value when ax is NULL or empty. */
static void put_value(int k, const axis *ax, size_t j, sweep_point *p) {
  const struct axis_spec *spec = sweep_spec(k);
  bool given = ax && ax->n;
  char *field = (char *)p + spec->at;
  if (spec->kind == AXIS_NAME) {
    const char *v = given              ? ax->names[j]
                    : spec->absent_name ? spec->absent_name()
                                        : NULL;
    memcpy(field, &v, sizeof v);
  } else if (spec->kind == AXIS_INT || spec->kind == AXIS_BOOL) {
    int64_t v = given ? (int64_t)ax->values[j] : -1;
    memcpy(field, &v, sizeof v);
  } else {
    double v = given ? ax->values[j] : spec->absent;
    memcpy(field, &v, sizeof v);
  }
}

void sweep_axis_put(const sweep *s, int k, size_t j, sweep_point *p) {
  put_value(k, &s->axes[k], j, p);
}

size_t sweep_axis_len(const sweep *s, int k) {
  return s->axes[k].n ? s->axes[k].n : 1;
}

void sweep_point_absent(const sweep *s, sweep_point *p) {
  *p = (sweep_point){.data_hash = s->data_hash, .cost_cmd = s->cost_cmd,
                     .cost_timeout_s = s->cost_timeout_s};
  scenario_knobs_init(&p->knobs);
  for (int k = 0; k < K_COUNT; k++) put_value(k, NULL, 0, p);
}

void sweep_point_identity(const sweep_point *p, const char *key,
                          char buf[17]) {
  assert(p->scenario_hash && p->data_hash && "sweep_resolve first");
  uint64_t h = hash_u64(HASH_INIT, p->scenario_hash);
  h = hash_u64(hash_str(h, key), p->data_hash);
  h = hash_u64(h, SIM_RESULTS_VERSION);
  if (p->faults) h = hash_u64(h, p->faults_hash); /* none: as before */
  if (p->prices_hash) h = hash_u64(h, p->prices_hash); /* none: as before */
  snprintf(buf, 17, "%016llx", (unsigned long long)h);
}

size_t sweep_count(const sweep *s) { return s->count; }

const char *sweep_key_name(size_t i) {
  return i < K_COUNT ? sweep_spec((int)i)->key : NULL;
}
const char *sweep_name(const sweep *s) { return s->name; }

int sweep_line(const sweep *s, const char *key) {
  int k = axis_of(key);
  return k < K_COUNT ? s->axes[k].line : 0;
}

const char *sweep_key_alias(size_t i) {
  return i < K_COUNT ? sweep_spec((int)i)->alias : NULL;
}

const char *sweep_axis_key(const sweep *s, int k) {
  return s->axes[k].key ? s->axes[k].key : sweep_spec(k)->key;
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
  sweep_point_absent(s, p);
  for (int k = 0; k < K_COUNT; k++) sweep_axis_put(s, k, pick[k], p);
  size_t nf = s->axes[K_FAULTS].n;
  if (s->scenario_hash) p->scenario_hash = s->scenario_hash[pick[K_SCENARIOS]];
  if (s->prices_hash) p->prices_hash = s->prices_hash[pick[K_SCENARIOS]];
  if (s->faults_hash && nf)
    p->faults_hash = s->faults_hash[pick[K_SCENARIOS] * nf + pick[K_FAULTS]];
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

/* Key k of p in its point key, " NAME=VALUE" ("-" when absent), or
 * nothing for an absent key that is in keys only when given. */
static void put_key(const sweep_point *p, int k, char *buf, size_t size,
                    size_t *at) {
  const struct axis_spec *spec = sweep_spec(k);
  const char *name = spec->in_key ? spec->in_key : spec->key;
  const char *field = (const char *)p + spec->at;
  if (spec->kind == AXIS_NAME) {
    const char *v;
    memcpy(&v, field, sizeof v);
    const char *c = v && spec->canon ? spec->canon(v) : NULL;
    if (!v && spec->given_only) return;
    put(buf, size, at, " %s=%s", name, c ? c : v ? v : "-");
  } else if (spec->kind == AXIS_INT) {
    int64_t v;
    memcpy(&v, field, sizeof v);
    if (v >= 0 || !spec->given_only) put_int(buf, size, at, name, v);
  } else if (spec->kind == AXIS_BOOL) {
    int64_t v;
    memcpy(&v, field, sizeof v);
    if (v >= 0 || !spec->given_only)
      put(buf, size, at, " %s=%s", name, v < 0 ? "-" : v ? "true" : "false");
  } else {
    double v;
    memcpy(&v, field, sizeof v);
    if (!isnan(v) || !spec->given_only) put_real(buf, size, at, name, v);
  }
}

size_t sweep_point_key(const sweep_point *p, char *buf, size_t size) {
  size_t at = 0;
  if (size) buf[0] = '\0';
  put(buf, size, &at, "sweep");
  for (int k = 0; k < K_COUNT; k++) put_key(p, k, buf, size, &at);
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
                       .bandwidth_scale = p->knobs.bandwidth_scale,
                       .latency_scale = p->knobs.latency_scale,
                       .faults = p->faults, .recovery = p->recovery};
}
