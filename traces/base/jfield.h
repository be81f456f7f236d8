/* jfield: typed fields of a parsed JSON document, read with messages that
 * cite "FILE:LINE: label.key: what". jansson gives lines for syntax errors
 * only, so a field's line is found by a plain text search for its key
 * through its parents' keys (and, in an array, the element's occurrence):
 * approximate, but always a real line of the file.
 * Used by the scenario reader and the iperf3 reader; plain structs,
 * borrowed strings. */
#ifndef BASE_JFIELD_H
#define BASE_JFIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* The text being read, for messages and line look-ups. All borrowed. */
typedef struct jfield_doc {
  const char *file; /* name used in messages */
  const char *text;
  size_t len;
  err *e; /* where failures go */
  int lines_before; /* lines of the file before text (a document that is
                       not the file's first, as in iperf3's appended
                       output): added to every line cited; 0 */
} jfield_doc;

/* Where a JSON object sits: the parent keys from the top (two at most), and,
 * inside an array, the element's index (to find the right occurrence of a
 * key). */
typedef struct jfield_scope {
  const char *parent[2];
  const json_t *array; /* the array holding this object, or NULL */
  size_t index;
  char label[96]; /* "sites[2]", "workload", "" at top level */
} jfield_scope;

/* The top-level object's scope. */
jfield_scope jfield_top(void);

/* The scope of the object at key inside s ("workload", "network.overrides"). */
jfield_scope jfield_child(const jfield_scope *s, const char *key);

/* The scope of element i of array, an array found at s ("sites[2]"). */
jfield_scope jfield_elem(const jfield_scope *s, const json_t *array, size_t i);

/* The line of key inside the object of s (of the object itself when key is
 * absent or NULL), as messages cite it; for callers that keep it to word a
 * check made later. */
int jfield_line(const jfield_doc *d, const jfield_scope *s, const char *key);

/* Records code and "FILE:LINE: label.key: message" in d->e (key may be NULL:
 * the object itself) and returns code. */
int jfield_fail(const jfield_doc *d, const jfield_scope *s, const char *key,
                int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The readers below return ERR_OK, or fail as jfield_fail does: ERR_MISSING
 * when a required key is absent, ERR_PARSE for a wrong type, ERR_RANGE for a
 * value out of range, ERR_UNKNOWN for a name not allowed. */

/* Whether v is an integer: a JSON integer, or a real that is one exactly
 * (16e6, 1.5e3), within JFIELD_EXACT_MAX (2^53: every double below is
 * exact); *out its value. What jfield_int and the other integer readers
 * take, as the command line's integers and the sweep file's do. */
#define JFIELD_EXACT_MAX 9007199254740992.0
bool jfield_as_int(const json_t *v, long long *out);

/* Every key of obj must be in known (NULL-terminated). */
int jfield_known(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                 const char *const *known);

/* *out = obj[key], an object; NULL (and ERR_OK) when absent and optional. */
int jfield_obj(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, bool required, json_t **out);

/* A copy of the string obj[key] (the caller frees it); a copy of def when
 * absent, which is an error when def is NULL. */
int jfield_str(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, const char *def, char **out);

/* What jfield_num accepts: a finite number >= lo (> lo when open) and
 * <= hi; def when absent, unless required. */
typedef struct jfield_num_spec {
  double lo, hi;
  bool open, required;
  double def;
} jfield_num_spec;

/* A number (integer or real) obj[key] as spec says. */
int jfield_num(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, const jfield_num_spec *spec, double *out);

/* An integer in [lo, hi]; def when absent, required when def < lo. */
int jfield_int(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
               const char *key, long long lo, long long hi, long long def,
               long long *out);

/* jfield_int into an int: [lo, INT_MAX]. */
int jfield_int32(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                 const char *key, int lo, int def, int *out);

/* true or false; def when absent. */
int jfield_bool(const jfield_doc *d, const jfield_scope *s, const json_t *obj,
                const char *key, bool def, bool *out);

/* value (read from key) must be one of names (NULL-terminated). */
int jfield_one_of(const jfield_doc *d, const jfield_scope *s, const char *key,
                  const char *value, const char *const *names);

#endif
