/* alloc_file: see alloc_file.h. The pipelines, the shape keys and the
 * split are alloc.c's (alloc_parse_some); the "workload" object is read
 * here, each key as the scenario file's reader takes the row (its range or
 * names), with jfield's lines for messages. */
#include "models/alloc_file.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/jfield.h"
#include "base/mem.h"
#include "models/partition.h"
#include "models/spec.h"
#include "traces/scenario_export.h"
#include "traces/scenario_row.h"
#include "traces/scenario_subset.h"

/* Whether row r may be a key of the file's "workload": a row of the
 * scenario's workload object other than the shape (top-level keys here). */
static bool file_row(int r) {
  const workload_row *row = &workload_rows[r];
  return row->target == WORKLOAD_IN_WORKLOAD && row->key &&
         r != WORKLOAD_stages && r != WORKLOAD_replicas;
}

/* Row r's value v (key of o) into f: checked as the scenario's reader
 * checks it. */
static int read_value(const jfield_doc *c, const jfield_scope *sc,
                      const json_t *v, int r, alloc_file *f) {
  const workload_row *row = &workload_rows[r];
  char range[128];
  workload_range_text(row, range, sizeof range);
  if (row->kind == WORKLOAD_NAME) {
    if (!json_is_string(v))
      return jfield_fail(c, sc, row->key, ERR_PARSE, "not a string");
    const char *name = json_string_value(v);
    if (row->names && !workload_name_ok(row, name))
      return jfield_fail(c, sc, row->key, ERR_UNKNOWN,
                         "unknown value '%s' (%s)", name, range);
    f->name[r] = mem_strdup(name);
    scenario_knob_set_name(&f->k, r, f->name[r]);
    return ERR_OK;
  }
  double x;
  long long n;
  if (row->kind == WORKLOAD_BOOL) {
    if (!json_is_boolean(v))
      return jfield_fail(c, sc, row->key, ERR_PARSE, "not true or false");
    x = json_is_true(v);
  } else if (row->kind == WORKLOAD_REAL && json_is_number(v)) {
    x = json_number_value(v);
  } else if (jfield_as_int(v, &n)) {
    x = (double)n;
  } else {
    return jfield_fail(c, sc, row->key, ERR_PARSE, "not %s",
                       row->kind == WORKLOAD_REAL ? "a number" : "an integer");
  }
  if (!workload_number_ok(row, x))
    return jfield_fail(c, sc, row->key, ERR_RANGE, "must be %s %s, not %.17g",
                       row->kind == WORKLOAD_BITS ? "one of" : "in", range, x);
  scenario_knob_set_number(&f->k, r, x);
  return ERR_OK;
}

/* The "workload" object of root, if any, into f. */
static int read_workload(const char *text, size_t len, const json_t *root,
                         alloc_file *f, err *e) {
  jfield_doc c = {.file = f->path, .text = text, .len = len, .e = e};
  jfield_scope top = jfield_top(), sc = jfield_child(&top, "workload");
  json_t *o;
  int rc = jfield_obj(&c, &top, root, "workload", false, &o);
  if (rc || !o) return rc;
  const char *known[WORKLOAD_NFIELDS + 1];
  int n = 0;
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (file_row(r)) known[n++] = workload_rows[r].key;
  known[n] = NULL;
  if ((rc = jfield_known(&c, &sc, o, known))) return rc;
  for (int r = 0; r < WORKLOAD_NFIELDS && !rc; r++) {
    const json_t *v = file_row(r) ? json_object_get(o, workload_rows[r].key)
                                  : NULL;
    if (!v) continue;
    f->line[r] = jfield_line(&c, &sc, workload_rows[r].key);
    rc = read_value(&c, &sc, v, r, f);
  }
  return rc;
}

int alloc_file_read(const char *path, int ndevices, alloc_file *f, err *e) {
  *f = (alloc_file){.path = mem_strdup(path), .ndevices = ndevices};
  scenario_knobs_init(&f->k);
  size_t len;
  char *text = file_load(path, "the allocation", FILE_MAX_JSON_BYTES, &len, e);
  int rc = text ? ERR_OK : (e && e->code ? e->code : ERR_IO);
  if (!rc) f->a = alloc_parse_some(text, len, path, ndevices, &f->split, e);
  if (!rc && !f->a) rc = e && e->code ? e->code : ERR_PARSE;
  if (!rc) {
    json_t *root = json_loadb(text, len, 0, NULL);
    rc = read_workload(text, len, root, f, e);
    json_decref(root);
  }
  free(text);
  if (rc) alloc_file_free(f);
  return rc;
}

void alloc_file_free(alloc_file *f) {
  if (!f) return;
  free(f->path);
  alloc_free(f->a);
  alloc_split_free(&f->split);
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) free(f->name[r]);
  *f = (alloc_file){0};
}

bool alloc_file_some(const alloc_file *f) {
  return (long long)f->a->replicas * f->a->stages < f->ndevices;
}

/* A knob's value as text: a name, or a number in the fewest digits. */
static void knob_text(const scenario_knobs *k, int r, char *buf, size_t size) {
  if (workload_rows[r].kind == WORKLOAD_NAME)
    snprintf(buf, size, "%s", scenario_knob_name(k, r));
  else
    snprintf(buf, size, "%.17g", scenario_knob_number(k, r));
}

static bool knob_same(const scenario_knobs *a, const scenario_knobs *b,
                      int r) {
  if (workload_rows[r].kind == WORKLOAD_NAME)
    return strcmp(scenario_knob_name(a, r), scenario_knob_name(b, r)) == 0;
  return scenario_knob_number(a, r) == scenario_knob_number(b, r);
}

/* f's workload keys into k, refusing one k gives otherwise. */
static int join_rows(const alloc_file *f, scenario_knobs *k, err *e) {
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) {
    if (!f->line[r]) continue;
    if (!scenario_knob_given(k, r)) {
      if (workload_rows[r].kind == WORKLOAD_NAME)
        scenario_knob_set_name(k, r, scenario_knob_name(&f->k, r));
      else
        scenario_knob_set_number(k, r, scenario_knob_number(&f->k, r));
      continue;
    }
    if (knob_same(&f->k, k, r)) continue;
    char mine[64], theirs[64];
    knob_text(&f->k, r, mine, sizeof mine);
    knob_text(k, r, theirs, sizeof theirs);
    return err_set_field(e, r, ERR_CONFIG, "%s:%d: workload.%s %s disagrees "
                         "with the run's --%s %s: drop one of them", f->path,
                         f->line[r], workload_rows[r].key, mine,
                         workload_rows[r].option, theirs);
  }
  return ERR_OK;
}

int alloc_file_knobs(const alloc_file *f, scenario *s, scenario_knobs *k,
                     err *e) {
  int S = f->a->stages, R = f->a->replicas;
  bool st = k->stages > 0 && k->stages != S,
       rep = k->replicas > 0 && k->replicas != R;
  if (st || rep) {
    char opts[64];
    partition_knob_options(k, opts, sizeof opts);
    return err_set_field(e, st ? WORKLOAD_stages : WORKLOAD_replicas,
                         ERR_CONFIG, "%s: its %d pipelines of %d stages "
                         "disagree with the run's %s: drop one of them",
                         f->path, R, S, opts);
  }
  int rc = join_rows(f, k, e);
  if (rc) return rc;
  if (alloc_file_some(f)) { /* the view of the file's devices has the shape */
    s->workload.stages = S, s->workload.replicas = R;
    k->stages = k->replicas = -1;
  } else if (S != s->workload.stages || R != s->workload.replicas) {
    k->stages = S, k->replicas = R;
  }
  return ERR_OK;
}

int alloc_file_check_split(const alloc_file *f, const scenario *s,
                           const scenario_knobs *k, err *e) {
  const int *split = f->split.layers_per_stage;
  if (!split) return ERR_OK;
  const spec_model *m = spec_model_find(k->model ? k->model : s->workload.model);
  long layers = k->layers > 0 ? k->layers
                : s->workload.layers > 0 && !k->model ? s->workload.layers
                : m ? m->layers : 0;
  long long sum = 0;
  for (int st = 0; st < f->a->stages; st++) sum += split[st];
  if (layers <= 0 || sum == layers) return ERR_OK;
  return err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage: they sum to %lld, "
                 "not the run's %ld layers", f->path, f->split.line, sum,
                 layers);
}

int alloc_file_join(const alloc_file *f, scenario *s, scenario_knobs *k,
                    bool split_given, bool *shaped, err *e) {
  *shaped = alloc_file_some(f) || f->a->stages != s->workload.stages ||
            f->a->replicas != s->workload.replicas;
  int rc = alloc_file_knobs(f, s, k, e);
  if (!rc) rc = alloc_file_check_split(f, s, k, e);
  if (!rc && !split_given && f->split.layers_per_stage)
    k->layers_per_stage = f->split.layers_per_stage,
    k->nlayers_per_stage = f->a->stages;
  return rc;
}

void alloc_file_blame(const alloc_file *f, int rc, err *e) {
  char was[ERR_MSG_MAX];
  snprintf(was, sizeof was, "%s", e->msg);
  int field = err_field(e);
  err_clear(e);
  err_set_field(e, field, rc, "%s: its %d pipelines of %d stages: %s",
                f->path, f->a->replicas, f->a->stages, was);
}

/* split as "[a, b, c]" into buf. */
static void split_text(const int *split, int n, char *buf, size_t size) {
  size_t k = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < n && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%d", i ? ", " : "", split[i]);
  if (k < size) snprintf(buf + k, size - k, "]");
}

int alloc_file_split_agrees(const alloc_file *f, const scenario *s,
                            const alloc *a, const char *given, err *e) {
  const int *theirs = f->split.layers_per_stage;
  if (!theirs) return ERR_OK;
  int n = s->workload.stages, *mine = mem_alloc((size_t)n * sizeof *mine);
  int rc = partition_of(s, a, mine, e);
  if (rc == ERR_OK && memcmp(mine, theirs, (size_t)n * sizeof *mine) != 0) {
    char x[256], y[256];
    split_text(theirs, n, x, sizeof x);
    split_text(mine, n, y, sizeof y);
    rc = err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage %s disagrees with "
                 "%s (which gives %s here): drop one of them", f->path,
                 f->split.line, x, given, y);
  }
  free(mine);
  return rc;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

alloc *alloc_file_alloc(const alloc_file *f, const scenario *s,
                        scenario **view, err *e) {
  const alloc *fa = f->a;
  int n = fa->replicas * fa->stages;
  *view = NULL;
  alloc *a = alloc_new(fa->replicas, fa->stages);
  if (!alloc_file_some(f)) {
    memcpy(a->device, fa->device, (size_t)n * sizeof *a->device);
    if (alloc_validate(a, s->workload.replicas, s->workload.stages,
                       s->ndevices, f->path, e) == ERR_OK)
      return a;
    alloc_free(a);
    return NULL;
  }
  int *keep = mem_alloc((size_t)n * sizeof *keep);
  memcpy(keep, fa->device, (size_t)n * sizeof *keep);
  qsort(keep, (size_t)n, sizeof *keep, cmp_int);
  for (int i = 0; i < n; i++) { /* parent -> view: the rank among keep */
    const int *at = bsearch(&fa->device[i], keep, (size_t)n, sizeof *keep,
                            cmp_int);
    a->device[i] = (int)(at - keep);
  }
  if (alloc_validate(a, s->workload.replicas, s->workload.stages, n, f->path,
                     e) == ERR_OK)
    *view = scenario_subset(s, keep, n, fa->replicas);
  free(keep);
  if (*view) return a;
  alloc_free(a);
  return NULL;
}

/* Whether row r has the same value on a and b. */
static bool same_row(const scenario *a, const scenario *b, int r) {
  if (workload_rows[r].kind == WORKLOAD_NAME)
    return strcmp(scenario_row_name(a, r), scenario_row_name(b, r)) == 0;
  return scenario_row_number(a, r) == scenario_row_number(b, r);
}

/* The workload rows a file carries: what a knob set on s, and what s (a
 * search's view) has otherwise than parent (NULL: none). */
static json_t *workload_json(const scenario *s, const scenario *parent) {
  json_t *o = json_object();
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (file_row(r) && (s->line[r] == SCENARIO_LINE_KNOB ||
                        (parent && !same_row(s, parent, r))))
      json_object_set_new(o, workload_rows[r].key, scenario_export_row(s, r));
  return o;
}

void alloc_file_write(const alloc *a, const int *keep, const int *layers,
                      const scenario *s, const scenario *parent, FILE *f) {
  fprintf(f, "{\"stages\": %d, \"replicas\": %d,\n \"layers_per_stage\": [",
          a->stages, a->replicas);
  for (int st = 0; st < a->stages; st++)
    fprintf(f, "%s%d", st ? ", " : "", layers[st]);
  json_t *w = workload_json(s, parent);
  char *wt = json_dumps(w, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  fprintf(f, "],\n \"workload\": %s,\n \"pipelines\": [\n", wt);
  free(wt);
  json_decref(w);
  for (int r = 0; r < a->replicas; r++) {
    fputs("  [", f);
    for (int st = 0; st < a->stages; st++) {
      int d = alloc_at(a, r, st);
      fprintf(f, "%s%d", st ? ", " : "", keep ? keep[d] : d);
    }
    fprintf(f, "]%s\n", r + 1 < a->replicas ? "," : "");
  }
  fputs("]}\n", f);
}
