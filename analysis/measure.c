/* measure: the measurements file (measure.h). A row's knobs go through the
 * sweep file's own parser: each row becomes a one-point sweep whose keys
 * all sit on the row's line number (the JSON text starts with LINE - 1
 * newlines), so the sweep's checks and messages ("PATH:LINE: batch: ...")
 * are the row's, and no second table of knob names exists. */
#include "analysis/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/eval.h"
#include "analysis/sweep.h"
#include "base/builtin.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/cost.h"
#include "sim/place.h"
#include "traces/scenario_subset.h"
#include "sim/sim.h"
#include "traces/csv.h"

#define MEASURE_MAX_COLUMNS 64
#define MEASURE_DEFAULT_METHOD "dtfm-identity"

/* A row resolved: what measure_sim runs. */
typedef struct run {
  scenario *s, *view; /* view: an allocation file's devices (or NULL) */
  alloc *a;
  sim_options o;
} run;

struct measure_set {
  char *path;
  int n, cap;
  measure_row *rows;
  run *runs;
};

/* The header: the special columns' indices (-1: absent) and each knob
 * column's sweep key (NULL for the special ones). */
typedef struct header {
  int n, scenario, measured, method, alloc, group;
  char *key[MEASURE_MAX_COLUMNS];
  char *name[MEASURE_MAX_COLUMNS];
} header;

static char *span_dup(const char *s, size_t n) {
  char *d = mem_alloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* The sweep key of column c: c itself, or its plural where the sweep file
 * has that key ("seed": "seeds"). Probed through sweep_parse: a known key
 * with a null value fails as anything but an unknown key. */
static char *sweep_key_of(const char *c) {
  char text[160];
  snprintf(text, sizeof text, "{\"%ss\": null}", c);
  err e = {0};
  sweep *s = sweep_parse(text, strlen(text), "probe", &e);
  sweep_free(s);
  size_t n = strlen(c);
  char *k = mem_alloc(n + 2);
  snprintf(k, n + 2, "%s%s", c, e.code != ERR_UNKNOWN ? "s" : "");
  return k;
}

static void header_free(header *h) {
  for (int i = 0; i < h->n; i++) free(h->key[i]), free(h->name[i]);
}

static int read_header(const measure_set *m, csv_reader *rd, const char *s,
                       size_t n, header *h, err *e) {
  int line = rd->line;
  const char *f[MEASURE_MAX_COLUMNS];
  size_t fn[MEASURE_MAX_COLUMNS];
  *h = (header){.scenario = -1, .measured = -1, .method = -1, .alloc = -1,
                .group = -1};
  int k = csv_split(rd, s, n, f, fn, MEASURE_MAX_COLUMNS);
  if (k > MEASURE_MAX_COLUMNS)
    return err_set(e, ERR_PARSE, "%s:%d: more than %d columns", m->path,
                   line, MEASURE_MAX_COLUMNS);
  const char *special[] = {"scenario", "measured_s", "method", "alloc",
                           "group"};
  int *slot[] = {&h->scenario, &h->measured, &h->method, &h->alloc,
                 &h->group};
  for (h->n = 0; h->n < k; h->n++) {
    int i = h->n;
    h->name[i] = span_dup(f[i], fn[i]);
    h->key[i] = NULL;
    for (int j = 0; j < i; j++)
      if (strcmp(h->name[j], h->name[i]) == 0)
        return h->n++, err_set(e, ERR_DUPLICATE, "%s:%d: column '%s' "
                               "given twice", m->path, line, h->name[i]);
    int sp = 0;
    while (sp < 5 && strcmp(h->name[i], special[sp]) != 0) sp++;
    if (sp < 5) *slot[sp] = i;
    else h->key[i] = sweep_key_of(h->name[i]);
    for (int j = 0; h->key[i] && j < i; j++)
      if (h->key[j] && strcmp(h->key[j], h->key[i]) == 0)
        return h->n++, err_set(e, ERR_DUPLICATE, "%s:%d: columns '%s' and "
                               "'%s' both set %s (give one)", m->path, line,
                               h->name[j], h->name[i], h->key[i]);
  }
  const char *need = h->scenario < 0 ? "scenario"
                     : h->measured < 0 ? "measured_s" : NULL;
  if (need)
    return err_set(e, ERR_MISSING, "%s:%d: missing column '%s' (the header "
                   "needs scenario and measured_s)", m->path, line, need);
  return ERR_OK;
}

/* A file named in the CSV, relative to its folder. */
static char *beside(const measure_set *m, const char *name) {
  return file_beside(m->path, name);
}

/* A scenario cell: a built-in name as it is, else a file beside the CSV. */
static char *scenario_of(const measure_set *m, const char *v) {
  char json[128];
  snprintf(json, sizeof json, "%s.json", v);
  if (!strchr(v, '/') && builtin_find(json)) return mem_strdup(v);
  return beside(m, v);
}

/* A cell as a JSON value: a number when it reads as one, else a string. */
static json_t *cell_json(const char *v) {
  double x;
  if (csv_parse_double(v, strlen(v), &x) == CSV_NUM_OK)
    return x == floor(x) && fabs(x) < 9e15 ? json_integer((json_int_t)x)
                                           : json_real(x);
  return json_string(v);
}

/* Prefixes e's message, which names the row's scenario, allocation or
 * run but not the file (its callers say so), with "PATH:LINE: ". */
static int at_row(const measure_set *m, int line, int rc, err *e) {
  if (!e) return rc;
  char msg[ERR_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", e->msg);
  int at = snprintf(e->msg, sizeof e->msg, "%s:%d: ", m->path, line);
  if (at > 0 && (size_t)at < sizeof e->msg)
    snprintf(e->msg + at, sizeof e->msg - (size_t)at, "%.*s",
             (int)(sizeof e->msg - (size_t)at - 1), msg);
  return rc;
}

/* The one-point sweep of a row's cells (f[i] NUL-terminated). */
static sweep *row_sweep(const measure_set *m, const header *h, int line,
                        char **f, err *e) {
  json_t *o = json_object();
  char *sc = scenario_of(m, f[h->scenario]);
  json_object_set_new(o, "scenarios", json_string(sc));
  free(sc);
  const char *method = h->method >= 0 && f[h->method][0] ? f[h->method]
                                                         : MEASURE_DEFAULT_METHOD;
  json_object_set_new(o, "methods", json_string(method));
  for (int i = 0; i < h->n; i++)
    if (h->key[i] && f[i][0])
      json_object_set_new(o, h->key[i], cell_json(f[i]));
  char *body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(o);
  size_t len = (size_t)(line - 1) + strlen(body);
  char *text = mem_alloc(len + 1);
  memset(text, '\n', (size_t)(line - 1));
  strcpy(text + line - 1, body);
  free(body);
  sweep *s = sweep_parse(text, len, m->path, e);
  free(text);
  if (s && sweep_resolve(s, e)) {
    sweep_free(s);
    return NULL;
  }
  return s;
}

/* The run of point p: its scenario, placement and options. */
static int resolve(const measure_set *m, const header *h, int line, char **f,
                   const sweep_point *p, run *r, err *e) {
  if (p->iterations > 0 || p->faults || p->recovery || p->checkpoint_every > 0)
    return err_set(e, ERR_CONFIG, "%s:%d: a measurement is one iteration "
                   "(no iterations, faults, recovery or checkpoint_every)",
                   m->path, line);
  char *path = h->alloc >= 0 && f[h->alloc][0] ? beside(m, f[h->alloc]) : NULL;
  r->s = path ? eval_scenario_alloc(p, path, &r->a, &r->view, e)
              : eval_scenario(p, e);
  free(path);
  if (!r->s) return at_row(m, line, e ? e->code : ERR_CONFIG, e);
  r->o = sim_options_default();
  r->o.transport.model = (transport_model)transport_model_parse(p->network);
  r->o.transport.window_bytes = (double)p->knobs.window_bytes;
  r->o.seed = r->s->seed;
  if (!r->a) {
    cost_ctx *c = cost_ctx_from_scenario(r->s, e);
    r->a = c ? sim_place(r->s, c, p->method, &r->o, e) : NULL;
    cost_ctx_free(c);
  }
  return r->a ? ERR_OK : at_row(m, line, e && e->code ? e->code : ERR_CONFIG, e);
}

static int read_row(measure_set *m, const header *h, csv_reader *rd,
                    const char *s, size_t n, err *e) {
  int line = rd->line;
  const char *f[MEASURE_MAX_COLUMNS];
  size_t fn[MEASURE_MAX_COLUMNS];
  int k = csv_split(rd, s, n, f, fn, MEASURE_MAX_COLUMNS);
  if (k != h->n)
    return err_set(e, ERR_PARSE, "%s:%d: %d fields, the header has %d",
                   m->path, line, k, h->n);
  char *cell[MEASURE_MAX_COLUMNS];
  for (int i = 0; i < k; i++) cell[i] = span_dup(f[i], fn[i]);
  measure_row row = {.line = line};
  const char *ms = cell[h->measured];
  int rc = csv_parse_double(ms, strlen(ms), &row.measured_s);
  if (rc != CSV_NUM_OK || !(row.measured_s >= MEASURE_MIN_S))
    rc = err_set(e, rc != CSV_NUM_OK || !(row.measured_s > 0) ? ERR_PARSE
                                                                : ERR_RANGE,
                 "%s:%d: measured_s: '%.*s%s' is not a number >= %g s",
                 m->path, line, CSV_SHOW(ms, strlen(ms)), MEASURE_MIN_S);
  else if (h->alloc >= 0 && cell[h->alloc][0] && h->method >= 0 &&
           cell[h->method][0])
    rc = err_set(e, ERR_CONFIG, "%s:%d: give a method or an alloc, not both",
                 m->path, line);
  sweep *sw = rc ? NULL : row_sweep(m, h, line, cell, e);
  run r = {0};
  if (!rc && !sw) rc = e ? e->code : ERR_CONFIG;
  if (!rc) {
    sweep_point p;
    sweep_point_at(sw, 0, &p);
    rc = resolve(m, h, line, cell, &p, &r, e);
  }
  if (!rc) {
    if (m->n == m->cap) {
      m->cap = m->cap ? 2 * m->cap : 16;
      m->rows = mem_realloc(m->rows, (size_t)m->cap * sizeof *m->rows);
      m->runs = mem_realloc(m->runs, (size_t)m->cap * sizeof *m->runs);
    }
    bool has_alloc = h->alloc >= 0 && cell[h->alloc][0];
    const char *method = has_alloc ? cell[h->alloc]
                         : h->method >= 0 && cell[h->method][0]
                             ? cell[h->method] : MEASURE_DEFAULT_METHOD;
    const char *group = h->group >= 0 && cell[h->group][0] ? cell[h->group]
                                                          : cell[h->scenario];
    row.group = mem_strdup(group);
    row.scenario = mem_strdup(cell[h->scenario]);
    row.method = mem_strdup(method);
    m->rows[m->n] = row;
    m->runs[m->n++] = r;
  } else {
    alloc_free(r.a);
    scenario_subset_free(r.view);
    scenario_free(r.s);
  }
  sweep_free(sw);
  for (int i = 0; i < k; i++) free(cell[i]);
  return rc;
}

static int read_lines(measure_set *m, const char *text, size_t len, err *e) {
  csv_reader rd;
  csv_reader_init(&rd, text, len, m->path);
  header h = {0};
  bool have_header = false;
  const char *s;
  size_t n;
  int rc;
  while ((rc = csv_next(&rd, &s, &n, e)) == 1) {
    if (n == 0 || s[0] == '#') continue;
    if (!have_header) {
      have_header = true;
      rc = read_header(m, &rd, s, n, &h, e);
    } else {
      rc = read_row(m, &h, &rd, s, n, e);
    }
    if (rc) break;
  }
  header_free(&h);
  csv_reader_free(&rd);
  if (rc < 0) return rc;
  if (!have_header || m->n == 0)
    return err_set(e, ERR_MISSING, "%s:%d: no %s", m->path, rd.line,
                   have_header ? "rows" : "header");
  return ERR_OK;
}

measure_set *measure_load(const char *path, err *e) {
  measure_set *m = mem_calloc(1, sizeof *m);
  m->path = mem_strdup(path);
  size_t len;
  char *text = file_load(path, "the measurements", FILE_MAX_JSON_BYTES, &len,
                         e);
  int rc = text ? read_lines(m, text, len, e) : ERR_IO;
  free(text);
  if (rc) {
    measure_free(m);
    return NULL;
  }
  return m;
}

void measure_free(measure_set *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) {
    free((char *)m->rows[i].group);
    free((char *)m->rows[i].scenario);
    free((char *)m->rows[i].method);
    alloc_free(m->runs[i].a);
    scenario_subset_free(m->runs[i].view);
    scenario_free(m->runs[i].s);
  }
  free(m->rows);
  free(m->runs);
  free(m->path);
  free(m);
}

int measure_count(const measure_set *m) { return m->n; }

const measure_row *measure_row_at(const measure_set *m, int i) {
  return &m->rows[i];
}

const char *measure_path(const measure_set *m) { return m->path; }

int measure_sim(const measure_set *m, int i, double *sim_s, err *e) {
  const run *r = &m->runs[i];
  sim_result res;
  int rc = sim_run(r->view ? r->view : r->s, r->a, &r->o, &res, e);
  if (rc) return at_row(m, m->rows[i].line, rc, e);
  *sim_s = res.iteration_s;
  sim_result_free(&res);
  return ERR_OK;
}

int measure_groups(const measure_set *m, const char **groups) {
  int n = 0;
  for (int i = 0; i < m->n; i++) {
    int j = 0;
    while (j < n && strcmp(groups[j], m->rows[i].group) != 0) j++;
    if (j == n) groups[n++] = m->rows[i].group;
  }
  return n;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int measure_summary(const measure_set *m, const double *error,
                    const char *group, double *median, double *worst) {
  double *v = mem_alloc((size_t)(m->n + 1) * sizeof *v);
  int n = 0;
  for (int i = 0; i < m->n; i++)
    if ((!group || strcmp(m->rows[i].group, group) == 0) && isfinite(error[i]))
      v[n++] = fabs(error[i]);
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  *median = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
  *worst = n ? v[n - 1] : NAN;
  free(v);
  return n;
}

int measure_run(const measure_set *m, double *sim, double *error,
                void (*progress)(void *ctx, int done, int total), void *ctx,
                err *e) {
  int rc = ERR_OK;
  for (int i = 0; i < m->n && !rc; i++) {
    rc = measure_sim(m, i, &sim[i], e);
    error[i] = rc ? NAN : sim[i] / m->rows[i].measured_s - 1;
    if (progress) progress(ctx, i + 1, m->n);
  }
  return rc;
}

measure_group *measure_group_summaries(const measure_set *m,
                                       const double *error, int *n) {
  const char **names = mem_alloc((size_t)(m->n + 1) * sizeof *names);
  int ng = measure_groups(m, names);
  measure_group *g = mem_alloc((size_t)(ng + 1) * sizeof *g);
  names[ng] = NULL; /* every row */
  for (int k = 0; k <= ng; k++) {
    g[k].name = names[k];
    g[k].rows = measure_summary(m, error, names[k], &g[k].median, &g[k].worst);
  }
  free(names);
  *n = ng + 1;
  return g;
}
