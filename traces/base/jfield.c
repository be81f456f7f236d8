/* jfield: see jfield.h. Invariant: every line a message cites is found in
 * the text (a key's own line, else its parent's, else line 1), so it is a
 * real line of the file even where the search is fooled (a key name inside
 * a string value). The search is O(text) per message, paid only on failure.
 */
#include "base/jfield.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/mem.h"

jfield_scope jfield_top(void) {
  return (jfield_scope){{NULL, NULL}, NULL, 0, ""};
}

/* Offset of the nth occurrence (0-based) of "key" at or after from, or -1. */
static long find_key(const jfield_doc *d, const char *key, long from, int nth) {
  size_t k = strlen(key);
  for (size_t i = (size_t)from; i + k + 2 <= d->len; i++) {
    if (d->text[i] != '"' || d->text[i + k + 1] != '"') continue;
    if (memcmp(d->text + i + 1, key, k) != 0) continue;
    if (nth-- == 0) return (long)i;
  }
  return -1;
}

static int line_at(const jfield_doc *d, long off) {
  int line = 1 + d->lines_before;
  for (long i = 0; i < off; i++)
    if (d->text[i] == '\n') line++;
  return line;
}

/* The line of key inside the object described by s (approximate: a text
 * search through the parent keys, then the key's occurrence among the array's
 * elements); the parent's line when the key is absent, at worst line 1. */
static int key_line(const jfield_doc *d, const jfield_scope *s,
                    const char *key) {
  long off = 0;
  for (int i = 0; i < 2 && s->parent[i]; i++) {
    long p = find_key(d, s->parent[i], off, 0);
    if (p < 0) return line_at(d, off);
    off = p;
  }
  int nth = 0;
  if (s->array)
    for (size_t j = 0; j < s->index; j++)
      if (json_object_get(json_array_get(s->array, j), key)) nth++;
  long p = key ? find_key(d, key, off, nth) : -1;
  return line_at(d, p >= 0 ? p : off);
}

int jfield_line(const jfield_doc *d, const jfield_scope *s, const char *key) {
  return key_line(d, s, key);
}

int jfield_fail(const jfield_doc *d, const jfield_scope *s, const char *key,
                int code, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  bool named = s->label[0] || key; /* the document's root has no name */
  return err_set(d->e, code, "%s:%d: %s%s%s%s%s", d->file, key_line(d, s, key),
                 s->label, s->label[0] && key ? "." : "", key ? key : "",
                 named ? ": " : "", what);
}

jfield_scope jfield_child(const jfield_scope *s, const char *key) {
  jfield_scope t = {
      {s->parent[0] ? s->parent[0] : key, s->parent[0] ? key : NULL},
      NULL,
      0,
      ""};
  snprintf(t.label, sizeof t.label, "%.40s%s%.40s", s->label,
           s->label[0] ? "." : "", key);
  return t;
}

jfield_scope jfield_elem(const jfield_scope *s, const json_t *array, size_t i) {
  jfield_scope t = *s;
  t.array = array;
  t.index = i;
  snprintf(t.label, sizeof t.label, "%.64s[%zu]", s->label, i);
  return t;
}

int jfield_known(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                 const char *const *known) {
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)obj, key, v) {
    const char *const *k = known;
    while (*k && strcmp(*k, key) != 0) k++;
    if (*k) continue;
    char list[256] = "";
    for (k = known; *k; k++) {
      strncat(list, *k, sizeof list - strlen(list) - 1);
      if (k[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return jfield_fail(d, s, key, ERR_UNKNOWN, "unknown key (known: %s)", list);
  }
  return ERR_OK;
}

int jfield_obj(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, bool required, json_t **out) {
  *out = json_object_get(obj, key);
  if (!*out)
    return required ? jfield_fail(d, s, key, ERR_MISSING, "missing (an object)")
                    : ERR_OK;
  if (!json_is_object(*out))
    return jfield_fail(d, s, key, ERR_PARSE, "must be an object");
  return ERR_OK;
}

int jfield_str(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, const char *def, char **out) {
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    if (!def) return jfield_fail(d, s, key, ERR_MISSING, "missing (a string)");
    *out = mem_strdup(def);
    return ERR_OK;
  }
  if (!json_is_string(v))
    return jfield_fail(d, s, key, ERR_PARSE, "must be a string");
  *out = mem_strdup(json_string_value(v));
  return ERR_OK;
}

int jfield_num(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, const jfield_num_spec *spec, double *out) {
  double lo = spec->lo, hi = spec->hi;
  bool open = spec->open;
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    if (spec->required)
      return jfield_fail(d, s, key, ERR_MISSING, "missing (a number)");
    *out = spec->def;
    return ERR_OK;
  }
  if (!json_is_number(v))
    return jfield_fail(d, s, key, ERR_PARSE, "must be a number");
  double x = json_number_value(v);
  if (!isfinite(x)) return jfield_fail(d, s, key, ERR_RANGE, "must be finite");
  char a[ERR_NUM_MAX], b[ERR_NUM_MAX];
  if (open ? !(x > lo) : !(x >= lo))
    return jfield_fail(d, s, key, ERR_RANGE, "must be %s %s, not %s",
                       open ? ">" : ">=", err_num(lo, a), err_num(x, b));
  if (x > hi)
    return jfield_fail(d, s, key, ERR_RANGE, "must be <= %s, not %s",
                       err_num(hi, a), err_num(x, b));
  *out = x;
  return ERR_OK;
}

bool jfield_as_int(const json_t *v, long long *out) {
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return true;
  }
  double x = json_is_real(v) ? json_real_value(v) : NAN;
  if (!(fabs(x) <= JFIELD_EXACT_MAX) || x != floor(x)) return false;
  *out = (long long)x;
  return true;
}

int jfield_int(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, long long lo, long long hi, long long def,
               long long *out) {
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    if (def < lo)
      return jfield_fail(d, s, key, ERR_MISSING, "missing (an integer)");
    *out = def;
    return ERR_OK;
  }
  long long x;
  if (!jfield_as_int(v, &x))
    return jfield_fail(d, s, key, ERR_PARSE, "must be an integer");
  if (x < lo || x > hi)
    return jfield_fail(d, s, key, ERR_RANGE,
                       "must be in [%lld, %lld], not %lld", lo, hi, x);
  *out = x;
  return ERR_OK;
}

int jfield_bool(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                const char *key, bool def, bool *out) {
  const json_t *v = json_object_get(obj, key);
  if (!v) {
    *out = def;
    return ERR_OK;
  }
  if (!json_is_boolean(v))
    return jfield_fail(d, s, key, ERR_PARSE, "must be true or false");
  *out = json_is_true(v);
  return ERR_OK;
}

int jfield_int32(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                 const char *key, int lo, int def, int *out) {
  long long x = def;
  int rc = jfield_int(d, s, obj, key, lo, 0x7fffffff, def, &x);
  if (rc == ERR_OK) *out = (int)x;
  return rc;
}

int jfield_one_of(const jfield_doc *d, const jfield_scope *s, const char *key,
                  const char *value, const char *const *names) {
  for (const char *const *n = names; *n; n++)
    if (strcmp(*n, value) == 0) return ERR_OK;
  return jfield_fail(d, s, key, ERR_UNKNOWN, "unknown value '%s'", value);
}
