/* alloc: allocation matrices and partitions, their JSON files and the fixed
 * placements. Invariant: whatever alloc_parse / alloc_partition_parse
 * return has exactly the asked shape and uses every device once; any other
 * input gives NULL and one "FILE:LINE: message". jansson keeps no source
 * positions, so a small scanner over the text (locate) finds the line of a
 * row or an entry for the message. */
#include "models/alloc.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/mem.h"
#include "base/names.h"

alloc *alloc_new(int replicas, int stages) {
  alloc *a = mem_alloc(sizeof *a);
  a->replicas = replicas;
  a->stages = stages;
  a->device = mem_alloc((size_t)replicas * stages * sizeof *a->device);
  for (int i = 0; i < replicas * stages; i++) a->device[i] = -1;
  return a;
}

alloc *alloc_copy(const alloc *a) {
  alloc *b = alloc_new(a->replicas, a->stages);
  memcpy(b->device, a->device,
         (size_t)a->replicas * a->stages * sizeof *b->device);
  return b;
}

bool alloc_equal(const alloc *a, const alloc *b) {
  return a->replicas == b->replicas && a->stages == b->stages &&
         memcmp(a->device, b->device, (size_t)a->replicas * a->stages *
                                          sizeof *a->device) == 0;
}

void alloc_free(alloc *a) {
  if (!a) return;
  free(a->device);
  free(a);
}

alloc_partition *alloc_partition_new(int ngroups, int group_size) {
  alloc_partition *p = mem_alloc(sizeof *p);
  p->ngroups = ngroups;
  p->group_size = group_size;
  p->device = mem_alloc((size_t)ngroups * group_size * sizeof *p->device);
  for (int i = 0; i < ngroups * group_size; i++) p->device[i] = -1;
  return p;
}

void alloc_partition_free(alloc_partition *p) {
  if (!p) return;
  free(p->device);
  free(p);
}

/* A device table: rows x cols entries (row-major) that should use each of
 * the ndevices devices once; what/sub name a row and an entry in messages
 * ("pipeline", "stage" or "group", "member"). */
typedef struct table_shape {
  int rows, cols, ndevices;
  const char *what, *sub;
  bool some; /* fewer devices than ndevices, each once (the others idle) */
} table_shape;

/* Checks table dev of shape t; name is what messages cite. */
static int check_table(const int *dev, const table_shape *t, const char *name,
                       err *e) {
  int rows = t->rows, cols = t->cols, ndevices = t->ndevices;
  const char *what = t->what, *sub = t->sub;
  if (t->some ? rows * cols > ndevices : rows * cols != ndevices)
    return err_set(e, ERR_CONFIG, "%s: %d %ss of %d is not the %d devices",
                   name, rows, what, cols, ndevices);
  int *seen = mem_alloc((size_t)ndevices * sizeof *seen);
  int rc = ERR_OK;
  for (int i = 0; i < ndevices; i++) seen[i] = -1;
  for (int i = 0; i < rows * cols && !rc; i++) {
    int d = dev[i];
    if (d < 0 || d >= ndevices)
      rc = err_set(e, ERR_RANGE, "%s: %s %d %s %d: device %d is out of range "
                   "0..%d", name, what, i / cols, sub, i % cols, d,
                   ndevices - 1);
    else if (seen[d] >= 0)
      rc = err_set(e, ERR_DUPLICATE, "%s: device %d is used twice (%s %d %s "
                   "%d and %s %d %s %d)", name, d, what, seen[d] / cols, sub,
                   seen[d] % cols, what, i / cols, sub, i % cols);
    else
      seen[d] = i;
  }
  for (int d = 0; d < ndevices && !rc && !t->some; d++)
    if (seen[d] < 0)
      rc = err_set(e, ERR_MISSING, "%s: device %d is not used", name, d);
  free(seen);
  return rc;
}

int alloc_validate(const alloc *a, int replicas, int stages, int ndevices,
                   const char *name, err *e) {
  if (a->replicas != replicas || a->stages != stages)
    return err_set(e, ERR_CONFIG, "%s: %d x %d pipelines, expected %d x %d",
                   name, a->replicas, a->stages, replicas, stages);
  table_shape t = {.rows = replicas, .cols = stages, .ndevices = ndevices,
                   .what = "pipeline", .sub = "stage"};
  return check_table(a->device, &t, name, e);
}

int alloc_partition_validate(const alloc_partition *p, int ngroups,
                             int group_size, int ndevices, const char *name,
                             err *e) {
  if (p->ngroups != ngroups || p->group_size != group_size)
    return err_set(e, ERR_CONFIG, "%s: %d groups of %d, expected %d of %d",
                   name, p->ngroups, p->group_size, ngroups, group_size);
  table_shape t = {.rows = ngroups, .cols = group_size, .ndevices = ndevices,
                   .what = "group", .sub = "member"};
  return check_table(p->device, &t, name, e);
}

#define LOC_KEY (-2)

/* The line of a place in the JSON text: with row == LOC_KEY the line of
 * the key itself; with row == -1 the line of the outer array's closing
 * bracket; with col < 0 the line where row `row` starts; else the line
 * where entry col of that row starts. Rows and entries are counted as the
 * values of the key's array and of each row, whatever they are (a number,
 * a nested array or object, a string), by the first character of each
 * value, so a nested array counts once, at its own line. Falls back to the
 * line of the key, or 1. Strings are skipped, so brackets in them don't
 * count. */
static int locate(const char *text, size_t len, const char *key, int row,
                  int col) {
  int line = 1, depth = 0, r = -1, c = -1, key_line = 1;
  bool inside = false, expect = false; /* expect: a value starts next */
  bool row_array = false; /* the value open at depth 3 is an array (a row) */
  size_t klen = strlen(key);
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    if (ch == '\n') line++;
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') continue;
    if (expect && ch != ']' && ch != '}') { /* a value starts here */
      if (depth == 2) r++, c = -1;
      else c++;
      if (r == row && (depth == 2 ? col < 0 : c == col)) return line;
    }
    expect = false;
    if (ch == '"') {
      size_t j = i + 1;
      while (j < len && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      if (depth == 1 && !inside && j - i - 1 == klen &&
          memcmp(text + i + 1, key, klen) == 0) {
        if (row == LOC_KEY) return line;
        key_line = line, inside = true;
      }
      for (size_t k = i; k < j && k < len; k++) line += text[k] == '\n';
      i = j;
    } else if (ch == '[' || ch == '{') {
      depth++;
      if (depth == 3) row_array = ch == '[';
      expect = inside && ch == '[' && (depth == 2 || depth == 3);
    } else if (ch == ']' || ch == '}') {
      if (inside && depth == 2 && row < 0) return line;
      depth--;
    } else if (ch == ',' && inside &&
               (depth == 2 || (depth == 3 && row_array))) {
      expect = true;
    }
  }
  return key_line;
}

/* A table file being read: its text (messages cite lines of it), the name
 * messages give it, and the key of its table. */
typedef struct table_doc {
  const char *text;
  size_t len;
  const char *name, *key;
  const char *const *extra; /* other keys the file may hold; NULL: none */
} table_doc;

/* The line of a place in d (locate's row and col). */
static int line_of(const table_doc *d, int row, int col) {
  return locate(d->text, d->len, d->key, row, col);
}

/* The table's array in root: {"KEY": [...]}, the only key, of t->rows
 * rows. */
static int find_table(const table_doc *d, const table_shape *t, json_t *root,
                      json_t **table, err *e) {
  const char *k;
  json_t *v;
  *table = NULL;
  if (!json_is_object(root))
    return err_set(e, ERR_PARSE, "%s:1: expected an object {\"%s\": [...]}",
                   d->name, d->key);
  json_object_foreach(root, k, v) {
    if (d->extra && names_find(d->extra, k) >= 0) continue;
    if (strcmp(k, d->key) != 0)
      return err_set(e, ERR_PARSE, "%s:%d: unknown key '%s' (expected \"%s\"%s)",
                     d->name, locate(d->text, d->len, k, LOC_KEY, 0), k,
                     d->key, d->extra ? ", \"stages\", \"replicas\", "
                     "\"layers_per_stage\" or \"workload\"" : "");
    *table = v;
  }
  if (!*table)
    return err_set(e, ERR_MISSING, "%s:1: no \"%s\" key", d->name, d->key);
  if (!json_is_array(*table))
    return err_set(e, ERR_PARSE, "%s:%d: \"%s\" must be an array of %ss",
                   d->name, line_of(d, -1, 0), d->key, t->what);
  if ((int)json_array_size(*table) != t->rows)
    return err_set(e, ERR_CONFIG, "%s:%d: %zu %ss, expected %d", d->name,
                   line_of(d, -1, 0), json_array_size(*table), t->what,
                   t->rows);
  return ERR_OK;
}

/* Entry (r, c): a device index in range, not used before; seen[x] is the
 * entry (r * cols + c) that used device x, or -1. Lines are located only
 * for a message: locate scans the whole text. */
static int read_entry(const table_doc *d, const table_shape *t,
                      const json_t *v, int r, int c, int *seen, int *out,
                      err *e) {
  if (!json_is_integer(v))
    return err_set(e, ERR_PARSE, "%s:%d: %s %d %s %d is not a device index",
                   d->name, line_of(d, r, c), t->what, r, t->sub, c);
  json_int_t x = json_integer_value(v);
  if (x < 0 || x >= t->ndevices)
    return err_set(e, ERR_RANGE, "%s:%d: %s %d %s %d: device %lld is out "
                   "of range 0..%d", d->name, line_of(d, r, c), t->what, r,
                   t->sub, c, (long long)x, t->ndevices - 1);
  int i = seen[x];
  if (i >= 0)
    return err_set(e, ERR_DUPLICATE, "%s:%d: device %lld is used twice "
                   "(%s %d %s %d and %s %d %s %d)", d->name, line_of(d, r, c),
                   (long long)x, t->what, i / t->cols, t->sub, i % t->cols,
                   t->what, r, t->sub, c);
  seen[x] = r * t->cols + c;
  out[r * t->cols + c] = (int)x;
  return ERR_OK;
}

/* The rows of table into out, each an array of t->cols entries. */
static int read_rows(const table_doc *d, const table_shape *t,
                     const json_t *table, int *out, err *e) {
  int n = t->ndevices > 0 ? t->ndevices : 1;
  int *seen = mem_alloc((size_t)n * sizeof *seen);
  for (int x = 0; x < t->ndevices; x++) seen[x] = -1;
  int rc = ERR_OK;
  for (int r = 0; r < t->rows && !rc; r++) {
    const json_t *row = json_array_get(table, (size_t)r);
    if (!json_is_array(row) || (int)json_array_size(row) != t->cols) {
      rc = err_set(e, ERR_CONFIG, "%s:%d: %s %d must be an array of %d "
                   "devices", d->name, line_of(d, r, -1), t->what, r, t->cols);
      break;
    }
    for (int c = 0; c < t->cols && !rc; c++)
      rc = read_entry(d, t, json_array_get(row, (size_t)c), r, c, seen, out,
                      e);
  }
  free(seen);
  return rc;
}

/* An allocation file's optional keys besides its pipelines, read into
 * split (NULL: refused, as before they existed). */
static int read_extras(const table_doc *d, const table_shape *t,
                       const json_t *root, int layers, alloc_split *split,
                       err *e);

/* Reads {"KEY": [[int, ...], ...]} of shape t into out, checks it; a
 * pipelines file's optional keys go to split (layers: the sum they must
 * have, 0: unknown). */
static int parse_table_split(const table_doc *d, const table_shape *t,
                             int *out, int layers, alloc_split *split,
                             err *e) {
  json_error_t je;
  json_t *root = json_loadb(d->text, d->len, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return err_set(e, ERR_PARSE, "%s:%d: not JSON: %s", d->name,
                   je.line > 0 ? je.line : 1, je.text);
  json_t *table;
  int rc = find_table(d, t, root, &table, e);
  if (rc == ERR_OK && d->extra)
    rc = read_extras(d, t, root, layers, split, e);
  if (rc == ERR_OK) rc = read_rows(d, t, table, out, e);
  if (rc == ERR_OK) {
    char where[512];
    snprintf(where, sizeof where, "%s:%d", d->name, line_of(d, -1, 0));
    rc = check_table(out, t, where, e);
  }
  json_decref(root);
  return rc;
}

/* parse_table_split of a table without optional keys (d->extra NULL). */
static int parse_table(const table_doc *d, const table_shape *t, int *out,
                       err *e) {
  assert(!d->extra);
  return parse_table_split(d, t, out, 0, NULL, e);
}

static const char *const alloc_extra_keys[] = {
    "stages", "replicas", "layers_per_stage", "workload", NULL};

/* An optional shape key: when present, an integer equal to want. */
static int read_shape_key(const table_doc *d, const json_t *root,
                          const char *key, int want, err *e) {
  const json_t *v = json_object_get(root, key);
  if (!v) return ERR_OK;
  int line = locate(d->text, d->len, key, LOC_KEY, 0);
  if (!json_is_integer(v))
    return err_set(e, ERR_PARSE, "%s:%d: %s must be an integer", d->name,
                   line, key);
  if (json_integer_value(v) != want)
    return err_set(e, ERR_CONFIG, "%s:%d: %s: %lld, but its pipelines have "
                   "%d", d->name, line, key, (long long)json_integer_value(v),
                   want);
  return ERR_OK;
}

/* "layers_per_stage": t->cols integers >= 1 summing to layers (> 0). */
static int read_split(const table_doc *d, const table_shape *t,
                      const json_t *v, int layers, alloc_split *split,
                      err *e) {
  int line = locate(d->text, d->len, "layers_per_stage", LOC_KEY, 0);
  split->line = line;
  if (!json_is_array(v) || (int)json_array_size(v) != t->cols)
    return err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage must be a list of "
                   "%d layer counts, one per stage", d->name, line, t->cols);
  split->layers_per_stage = mem_alloc((size_t)t->cols * sizeof(int));
  long long sum = 0;
  for (int st = 0; st < t->cols; st++) {
    const json_t *x = json_array_get(v, (size_t)st);
    if (!json_is_integer(x) || json_integer_value(x) < 1 ||
        json_integer_value(x) > INT_MAX)
      return err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage: entry %d is "
                     "not a layer count >= 1", d->name, line, st);
    split->layers_per_stage[st] = (int)json_integer_value(x);
    sum += split->layers_per_stage[st];
  }
  if (layers > 0 && sum != layers)
    return err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage: they sum to %lld, "
                   "not the scenario's %d layers", d->name, line, sum, layers);
  return ERR_OK;
}

static int read_extras(const table_doc *d, const table_shape *t,
                       const json_t *root, int layers, alloc_split *split,
                       err *e) {
  int rc;
  if ((rc = read_shape_key(d, root, "stages", t->cols, e)) ||
      (rc = read_shape_key(d, root, "replicas", t->rows, e)))
    return rc;
  const json_t *v = json_object_get(root, "layers_per_stage");
  if (!v) return ERR_OK;
  if (!split)
    return err_set(e, ERR_CONFIG, "%s:%d: layers_per_stage is not read here "
                   "(simulate and predict take it)", d->name,
                   locate(d->text, d->len, "layers_per_stage", LOC_KEY, 0));
  return read_split(d, t, v, layers, split, e);
}

alloc *alloc_parse_split(const char *text, size_t len, const char *name,
                         int replicas, int stages, int ndevices, int layers,
                         alloc_split *split, err *e) {
  alloc *a = alloc_new(replicas, stages);
  table_doc d = {.text = text, .len = len, .name = name, .key = "pipelines",
                 .extra = alloc_extra_keys};
  table_shape t = {.rows = replicas, .cols = stages, .ndevices = ndevices,
                   .what = "pipeline", .sub = "stage"};
  if (split) *split = (alloc_split){0};
  if (parse_table_split(&d, &t, a->device, layers, split, e)) {
    alloc_free(a);
    alloc_split_free(split);
    return NULL;
  }
  assert(alloc_validate(a, replicas, stages, ndevices, name, NULL) == ERR_OK);
  return a;
}

/* The rows x columns of text's "pipelines" as its first row gives them (0
 * x 0 when it is not an array of arrays: the parse then says why). */
static void peek_shape(const char *text, size_t len, int *rows, int *cols) {
  json_t *root = json_loadb(text, len, 0, NULL);
  const json_t *t = json_object_get(root, "pipelines");
  size_t r = json_array_size(t), c = json_array_size(json_array_get(t, 0));
  *rows = r <= INT_MAX ? (int)r : 0, *cols = c <= INT_MAX ? (int)c : 0;
  json_decref(root);
}

alloc *alloc_parse_some(const char *text, size_t len, const char *name,
                        int ndevices, alloc_split *split, err *e) {
  int rows, cols;
  peek_shape(text, len, &rows, &cols);
  if (!rows || !cols) rows = cols = 1; /* the parse names what is wrong */
  alloc *a = alloc_new(rows, cols);
  table_doc d = {.text = text, .len = len, .name = name, .key = "pipelines",
                 .extra = alloc_extra_keys};
  table_shape t = {.rows = rows, .cols = cols, .ndevices = ndevices,
                   .what = "pipeline", .sub = "stage",
                   .some = (long long)rows * cols < ndevices};
  *split = (alloc_split){0};
  if (parse_table_split(&d, &t, a->device, 0, split, e)) {
    alloc_free(a);
    alloc_split_free(split);
    return NULL;
  }
  return a;
}

alloc *alloc_parse(const char *text, size_t len, const char *name,
                   int replicas, int stages, int ndevices, err *e) {
  return alloc_parse_split(text, len, name, replicas, stages, ndevices, 0,
                           NULL, e);
}

void alloc_split_free(alloc_split *split) {
  if (!split) return;
  free(split->layers_per_stage);
  *split = (alloc_split){0};
}

alloc_partition *alloc_partition_parse(const char *text, size_t len,
                                       const char *name, int ngroups,
                                       int group_size, int ndevices, err *e) {
  alloc_partition *p = alloc_partition_new(ngroups, group_size);
  table_doc d = {.text = text, .len = len, .name = name, .key = "groups"};
  table_shape t = {.rows = ngroups, .cols = group_size, .ndevices = ndevices,
                   .what = "group", .sub = "member"};
  if (parse_table(&d, &t, p->device, e)) {
    alloc_partition_free(p);
    return NULL;
  }
  assert(alloc_partition_validate(p, ngroups, group_size, ndevices, name,
                                  NULL) == ERR_OK);
  return p;
}

/* The whole file at path, NUL-terminated; NULL and ERR_IO on failure. */
static char *slurp(const char *path, size_t *len, err *e) {
  return file_load(path, "the allocation", FILE_MAX_JSON_BYTES, len, e);
}

alloc *alloc_read_split(const char *path, int replicas, int stages,
                        int ndevices, int layers, alloc_split *split, err *e) {
  size_t len;
  if (split) *split = (alloc_split){0};
  char *text = slurp(path, &len, e);
  if (!text) return NULL;
  alloc *a = alloc_parse_split(text, len, path, replicas, stages, ndevices,
                               layers, split, e);
  free(text);
  return a;
}

alloc *alloc_read(const char *path, int replicas, int stages, int ndevices,
                  err *e) {
  return alloc_read_split(path, replicas, stages, ndevices, 0, NULL, e);
}

alloc_partition *alloc_partition_read(const char *path, int ngroups,
                                      int group_size, int ndevices, err *e) {
  size_t len;
  char *text = slurp(path, &len, e);
  if (!text) return NULL;
  alloc_partition *p =
      alloc_partition_parse(text, len, path, ngroups, group_size, ndevices, e);
  free(text);
  return p;
}

/* The one writer of device tables: rows x cols as [[d, ...], ...]. */
static json_t *table_json(const int *dev, int rows, int cols) {
  json_t *t = json_array();
  for (int r = 0; r < rows; r++) {
    json_t *row = json_array();
    for (int c = 0; c < cols; c++)
      json_array_append_new(row, json_integer(dev[r * cols + c]));
    json_array_append_new(t, row);
  }
  return t;
}

json_t *alloc_json(const alloc *a) {
  return table_json(a->device, a->replicas, a->stages);
}

char *alloc_text(const alloc *a) {
  json_t *o = json_pack("{s:o}", "pipelines", alloc_json(a));
  char *text = json_dumps(o, 0); /* {"pipelines": [[0, 1], [2, 3]]} */
  json_decref(o);
  return text;
}

/* The file form: {"KEY": [ then one row per line, ]}. */
static void write_table(FILE *f, const char *key, const int *dev, int rows,
                        int cols) {
  json_t *t = table_json(dev, rows, cols);
  fprintf(f, "{\"%s\": [\n", key);
  for (int r = 0; r < rows; r++) {
    char *row = json_dumps(json_array_get(t, (size_t)r), 0);
    fprintf(f, "  %s%s\n", row, r + 1 < rows ? "," : "");
    free(row);
  }
  fputs("]}\n", f);
  json_decref(t);
}

void alloc_write(const alloc *a, FILE *f) {
  write_table(f, "pipelines", a->device, a->replicas, a->stages);
}

void alloc_partition_write(const alloc_partition *p, FILE *f) {
  write_table(f, "groups", p->device, p->ngroups, p->group_size);
}

alloc_partition *alloc_to_partition(const alloc *a) {
  alloc_partition *p = alloc_partition_new(a->stages, a->replicas);
  for (int s = 0; s < a->stages; s++)
    for (int r = 0; r < a->replicas; r++)
      p->device[s * a->replicas + r] = alloc_at(a, r, s);
  return p;
}

alloc *alloc_identity(int replicas, int stages) {
  alloc *a = alloc_new(replicas, stages);
  for (int i = 0; i < replicas * stages; i++) a->device[i] = i;
  return a;
}

alloc *alloc_megatron(int replicas, int stages) {
  alloc *a = alloc_new(replicas, stages);
  for (int r = 0; r < replicas; r++)
    for (int s = 0; s < stages; s++) a->device[r * stages + s] = replicas * s + r;
  return a;
}

alloc *alloc_random(int replicas, int stages, uint64_t seed) {
  alloc *a = alloc_identity(replicas, stages);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, (unsigned long)seed);
  gsl_ran_shuffle(rng, a->device, (size_t)replicas * stages, sizeof(int));
  gsl_rng_free(rng);
  return a;
}

#define ALLOC_FIXED_NAME(id, name) name,
const char *const alloc_fixed_names[ALLOC_NFIXED + 1] = {
    ALLOC_FIXED_MAP(ALLOC_FIXED_NAME) NULL};
#undef ALLOC_FIXED_NAME

const char *alloc_fixed_canonical(const char *name) {
#define ALIAS_OF(old, now) if (name && strcmp(name, old) == 0) return now;
  ALLOC_FIXED_ALIAS_MAP(ALIAS_OF)
#undef ALIAS_OF
  return name;
}

alloc *alloc_fixed(const char *name, int replicas, int stages, uint64_t seed) {
  int id = names_find(alloc_fixed_names, alloc_fixed_canonical(name));
  if (id < 0) return NULL;
  alloc *a = NULL;
  switch ((alloc_fixed_id)id) {
    case ALLOC_DTFM_IDENTITY: a = alloc_identity(replicas, stages); break;
    case ALLOC_MEGATRON: a = alloc_megatron(replicas, stages); break;
    case ALLOC_RANDOM: a = alloc_random(replicas, stages, seed); break;
  }
  /* every fixed placement uses each of the replicas x stages devices once */
  assert(alloc_validate(a, replicas, stages, replicas * stages, name, NULL) ==
         ERR_OK);
  return a;
}
