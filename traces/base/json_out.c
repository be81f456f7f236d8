/* json_out: the one writer of the JSON geodes prints or saves (see
 * json_out.h). It lays a
 * document out as jansson's json_dumpf does under the same flags
 * (JSON_COMPACT, JSON_INDENT(n); keys in the object's order), but writes a
 * real number in the fewest significant digits that read back as the same
 * double (0.2, not jansson's 0.20000000000000001), with a ".0" when those
 * digits look like an integer, so that a reader still sees a real.
 * Invariant: strtod of every real written is the double held, bit for bit;
 * strings are escaped by jansson itself. */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"

#define DIGITS_MAX 17 /* enough for every double (DBL_DECIMAL_DIG) */

/* Exponents written in positional notation, as Python's repr does:
 * 1450000.0 and 0.0001, but 1e+16 and 1e-05. */
#define POSITIONAL_MIN_EXP (-4)
#define POSITIONAL_MAX_EXP 15

void json_out_real(double x, char *buf, size_t size) {
  assert(size >= 32);
  int p = 1;
  for (; p <= DIGITS_MAX; p++) {
    snprintf(buf, size, "%.*e", p - 1, x);
    if (strtod(buf, NULL) == x) break;
  }
  const char *e = strchr(buf, 'e');
  int exp = e ? atoi(e + 1) : 0;
  if (!e || !isfinite(x)) { /* nan, inf: jansson never holds them */
    snprintf(buf, size, "%.17g", x);
  } else if (exp >= POSITIONAL_MIN_EXP && exp <= POSITIONAL_MAX_EXP) {
    snprintf(buf, size, "%.*f", p - 1 - exp > 0 ? p - 1 - exp : 0, x);
  } else {
    snprintf(buf, size, "%.*g", p, x);
  }
  if (!strpbrk(buf, ".eEni")) strcat(buf, ".0"); /* "1" -> "1.0" */
  assert(!isfinite(x) || strtod(buf, NULL) == x);
}

typedef struct writer {
  FILE *f;
  size_t flags;
  bool bad;
} writer;

static void newline(writer *w, int depth) {
  int n = (int)(w->flags & JSON_MAX_INDENT);
  if (!n) return;
  fputc('\n', w->f);
  for (int i = 0; i < n * depth; i++) fputc(' ', w->f);
}

static void text(writer *w, const char *s) {
  json_t *k = json_string(s);
  w->bad |= !k || json_dumpf(k, w->f, JSON_ENCODE_ANY) != 0;
  json_decref(k);
}

static void value(writer *w, const json_t *v, int depth);

/* The separator after an element: "," (compact or indented) or ", ". */
static const char *comma(const writer *w) {
  return (w->flags & (JSON_COMPACT | JSON_MAX_INDENT)) ? "," : ", ";
}

static void object(writer *w, const json_t *o, int depth) {
  if (json_object_size(o) == 0) {
    fputs("{}", w->f);
    return;
  }
  fputc('{', w->f);
  const char *key, *colon = (w->flags & JSON_COMPACT) ? ":" : ": ";
  json_t *v;
  bool first = true;
  json_object_foreach((json_t *)o, key, v) {
    if (!first) fputs(comma(w), w->f);
    first = false;
    newline(w, depth + 1);
    text(w, key);
    fputs(colon, w->f);
    value(w, v, depth + 1);
  }
  newline(w, depth);
  fputc('}', w->f);
}

static void array(writer *w, const json_t *a, int depth) {
  if (json_array_size(a) == 0) {
    fputs("[]", w->f);
    return;
  }
  fputc('[', w->f);
  for (size_t i = 0; i < json_array_size(a); i++) {
    if (i) fputs(comma(w), w->f);
    newline(w, depth + 1);
    value(w, json_array_get(a, i), depth + 1);
  }
  newline(w, depth);
  fputc(']', w->f);
}

static void value(writer *w, const json_t *v, int depth) {
  char buf[40];
  switch (json_typeof(v)) {
    case JSON_OBJECT: object(w, v, depth); break;
    case JSON_ARRAY: array(w, v, depth); break;
    case JSON_STRING: text(w, json_string_value(v)); break;
    case JSON_INTEGER:
      fprintf(w->f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
      break;
    case JSON_REAL:
      json_out_real(json_real_value(v), buf, sizeof buf);
      fputs(buf, w->f);
      break;
    case JSON_TRUE: fputs("true", w->f); break;
    case JSON_FALSE: fputs("false", w->f); break;
    case JSON_NULL: fputs("null", w->f); break;
  }
}

int json_out_write(const json_t *o, FILE *f, size_t flags) {
  writer w = {.f = f, .flags = flags};
  value(&w, o, 0);
  return w.bad || ferror(f) ? -1 : 0;
}
