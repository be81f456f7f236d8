/* csv: see csv.h. The text is cut into records in place (no copy, no
 * length limit): a line without a quote is a record as it is (memchr, the
 * common case), one with a quote is walked field by field, so a line break
 * inside quotes continues the record. Only a field with a doubled quote is
 * copied, unquoted, into the reader's buffer. A number is split into its
 * digits first (csv_dec), so times convert to nanoseconds exactly and only
 * the double path calls strtod, on a bounded copy. */
#include "traces/csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/mem.h"
#include "base/simtime.h"

int csv_show_len(const char *s, size_t n) {
  if (n <= CSV_SHOW_MAX) return (int)n;
  size_t w = CSV_SHOW_MAX;
  while (w > 0 && ((unsigned char)s[w] & 0xC0) == 0x80) w--;
  return (int)w;
}

void csv_reader_init(csv_reader *r, const char *text, size_t len,
                     const char *name) {
  *r = (csv_reader){.name = name, .p = text, .end = text + len};
}

void csv_reader_free(csv_reader *r) {
  free(r->buf);
  r->buf = NULL, r->cap = 0;
}

/* Offset of the first byte of s[0..n) that breaks UTF-8, or n. */
static size_t utf8_bad(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
    else return i;
    if (n - i < len) return i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return n;
}

static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) (*n)--;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

static const char *skip_blanks(const char *c, const char *end) {
  while (c < end && blank(*c)) c++;
  return c;
}

#define CSV_QUOTE_HINT "(a quote inside a quoted field is written twice: \"\")"

/* The end of the record that starts at p, given that its first line (up
 * to stop) holds a quote: past every line break inside quotes, each
 * counted in *breaks. ERR_PARSE for a quote never closed, or text between
 * a closing quote and the next comma. */
static int record_end(csv_reader *r, const char *p, const char **stop,
                      int *breaks, err *e) {
  const char *c = p, *end = r->end;
  for (;;) { /* one field per turn */
    c = skip_blanks(c, end);
    if (c < end && *c == '"') {
      for (c++; c < end && (*c != '"' || (c + 1 < end && c[1] == '"')); c++) {
        if (*c == '"') c++; /* "" */
        else if (*c == '\n') (*breaks)++;
      }
      if (c >= end)
        return err_set(e, ERR_PARSE, "%s:%d: a quoted field is not closed "
                       CSV_QUOTE_HINT, r->name, r->line);
      c = skip_blanks(c + 1, end);
      if (c < end && *c == '\r' && c + 1 < end && c[1] == '\n') c++;
      if (c < end && *c != ',' && *c != '\n')
        return err_set(e, ERR_PARSE, "%s:%d: text after the closing quote of "
                       "a field " CSV_QUOTE_HINT, r->name, r->line + *breaks);
    } else {
      while (c < end && *c != ',' && *c != '\n') c++;
    }
    if (c >= end || *c == '\n') break;
    c++; /* the comma */
  }
  *stop = c;
  return ERR_OK;
}

int csv_next(csv_reader *r, const char **s, size_t *n, err *e) {
  if (r->p >= r->end) return 0;
  const char *p = r->p, *nl = memchr(p, '\n', (size_t)(r->end - p));
  const char *stop = nl ? nl : r->end, *first = skip_blanks(p, stop);
  if (r->lines == 0 && stop - first >= 3 && memcmp(first, "\xEF\xBB\xBF", 3) == 0)
    first = skip_blanks(first + 3, stop);
  r->line = r->lines + 1;
  int breaks = 0;
  if (first < stop && *first != '#' &&
      memchr(first, '"', (size_t)(stop - first))) {
    int rc = record_end(r, p, &stop, &breaks, e);
    if (rc) return rc;
  }
  r->lines += 1 + breaks;
  size_t len = (size_t)(stop - p);
  r->p = stop < r->end ? stop + 1 : r->end;
  if (len && p[len - 1] == '\r') len--;
  for (size_t k = 0; k < len && !r->any_text; k++)
    r->any_text = p[k] != ' ' && p[k] != '\t';
  if (memchr(p, '\0', len))
    return err_set(e, ERR_PARSE, "%s:%d: NUL byte (a binary file, not "
                   "CSV text)", r->name, r->line);
  size_t bad = utf8_bad((const unsigned char *)p, len);
  if (bad < len)
    return err_set(e, ERR_PARSE, "%s:%d: invalid UTF-8 (byte 0x%02x at "
                   "column %zu)", r->name, r->line, (unsigned char)p[bad],
                   bad + 1);
  trim(&p, &len);
  if (r->line == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
    p += 3, len -= 3;
  trim(&p, &len);
  *s = p;
  *n = len;
  return 1;
}

static bool key_char(char c) {
  return c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') ||
         (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool csv_comment_split(const char *s, size_t n, const char **key, size_t *keyn,
                 const char **value, size_t *valuen) {
  if (!n || s[0] != '#') return false;
  s++, n--;
  trim(&s, &n);
  size_t k = 0;
  while (k < n && key_char(s[k])) k++;
  if (k == 0 || k == n || s[k] != ':') return false;
  const char *v = s + k + 1;
  size_t vn = n - k - 1;
  trim(&v, &vn);
  *key = s, *keyn = k, *value = v, *valuen = vn;
  return true;
}

void csv_comment_add(csv_comment **v, size_t *n, size_t *cap, const char *key,
                     size_t keyn, const char *value, size_t valuen) {
  mem_grow((void **)v, cap, *n + 1, sizeof **v);
  (*v)[(*n)++] = (csv_comment){mem_strndup(key, keyn),
                               mem_strndup(value, valuen)};
}

void csv_comments_free(csv_comment *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i].key), free(v[i].value);
  free(v);
}

/* The quoted field whose opening quote is at q, into *f and *fn: a span of
 * the text, or its copy in r->buf (from *used on) when it holds "". The
 * position after its closing quote (end when there is none). */
static const char *quoted(csv_reader *r, const char *q, const char *end,
                          size_t *used, const char **f, size_t *fn) {
  const char *c = q + 1;
  bool doubled = false;
  for (; c < end && (*c != '"' || (c + 1 < end && c[1] == '"')); c++)
    if (*c == '"') c++, doubled = true;
  *f = q + 1, *fn = (size_t)(c - q - 1);
  if (doubled) {
    char *out = r->buf + *used;
    size_t k = 0;
    for (const char *x = q + 1; x < c; x++) {
      out[k++] = *x;
      if (*x == '"') x++;
    }
    *f = out, *fn = k;
    *used += k;
  }
  return c < end ? c + 1 : end;
}

int csv_split(csv_reader *r, const char *s, size_t n, const char **f,
              size_t *fn, int max) {
  if (memchr(s, '"', n)) mem_grow((void **)&r->buf, &r->cap, n + 1, 1);
  int cols = 0;
  size_t used = 0;
  const char *p = s, *end = s + n;
  for (;;) {
    const char *q = skip_blanks(p, end), *fs = p;
    size_t len;
    if (q < end && *q == '"') p = quoted(r, q, end, &used, &fs, &len);
    const char *c = memchr(p, ',', (size_t)(end - p));
    if (q >= end || *q != '"') {
      len = (size_t)((c ? c : end) - p);
      trim(&fs, &len);
    }
    if (cols < max) f[cols] = fs, fn[cols] = len;
    cols++;
    if (!c) return cols;
    p = c + 1;
  }
}

/* ---- writing ---- */

int csv_write_field(FILE *f, const char *s) {
  size_t n = strlen(s);
  bool quote = strpbrk(s, ",\"\r\n") ||
               (n && (blank(s[0]) || blank(s[n - 1]) || s[0] == '#')) ||
               strncmp(s, "\xEF\xBB\xBF", 3) == 0;
  if (!quote) return fputs(s, f) < 0 ? EOF : 0;
  int bad = putc('"', f) == EOF;
  for (; *s; s++)
    bad |= putc(*s, f) == EOF || (*s == '"' && putc('"', f) == EOF);
  bad |= putc('"', f) == EOF;
  return bad ? EOF : 0;
}

int csv_write_comment(FILE *f, const char *key, const char *value) {
  int bad = fprintf(f, "# %s: ", key) < 0;
  for (; *value; value++)
    bad |= putc(*value == '\n' || *value == '\r' ? ' ' : *value, f) == EOF;
  bad |= putc('\n', f) == EOF;
  return bad ? EOF : 0;
}

/* ---- numbers ---- */

static const char *const num_what[] = {
    "", "is not a number", "is not a finite number", "is negative",
    "is out of range"};

const char *csv_num_what(int rc) {
  return rc >= 0 && rc <= CSV_NUM_OVERFLOW ? num_what[rc] : "is not valid";
}

int csv_num_err(int rc) { return rc == CSV_NUM_SYNTAX ? ERR_PARSE : ERR_RANGE; }

typedef struct csv_dec {  /* a decimal numeral split into its parts */
  bool neg, nonzero;
  const char *ip, *fp;    /* integer and fraction digits */
  size_t ni, nf;
  long exp;               /* saturated at +-1000000 */
} csv_dec;

bool csv_is_inf(const char *s, size_t n) {
  return (n == 3 && strncasecmp(s, "inf", 3) == 0) ||
         (n == 8 && strncasecmp(s, "infinity", 8) == 0);
}

/* Parses [+-]digits[.digits][e[+-]digits] (at least one digit). */
static int dec_parse(const char *s, size_t n, csv_dec *d) {
  size_t i = 0;
  *d = (csv_dec){0};
  if (i < n && (s[i] == '+' || s[i] == '-')) d->neg = s[i++] == '-';
  d->ip = s + i;
  while (i < n && s[i] >= '0' && s[i] <= '9') d->nonzero |= s[i++] != '0';
  d->ni = (size_t)(s + i - d->ip);
  if (i < n && s[i] == '.') {
    d->fp = s + ++i;
    while (i < n && s[i] >= '0' && s[i] <= '9') d->nonzero |= s[i++] != '0';
    d->nf = (size_t)(s + i - d->fp);
  }
  bool ok = d->ni + d->nf > 0;
  if (ok && i < n && (s[i] == 'e' || s[i] == 'E')) {
    bool eneg = false;
    size_t start;
    if (++i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    for (start = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
      if (d->exp < 1000000) d->exp = d->exp * 10 + (s[i] - '0');
    if (i == start) ok = false;
    if (eneg) d->exp = -d->exp;
  }
  if (ok && i == n) return CSV_NUM_OK;
  size_t k = (n && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if ((n - k == 3 && strncasecmp(s + k, "nan", 3) == 0) ||
      csv_is_inf(s + k, n - k))
    return CSV_NUM_NONFINITE;
  return CSV_NUM_SYNTAX;
}

int csv_parse_ns(const char *s, size_t n, int64_t *out) {
  csv_dec d;
  int rc = dec_parse(s, n, &d);
  if (rc != CSV_NUM_OK) return rc;
  if (d.neg && d.nonzero) return CSV_NUM_NEGATIVE;
  long pos = (long)d.ni + d.exp + 9;  /* digits left of the ns point */
  size_t nd = d.ni + d.nf;
  uint64_t acc = 0;
  for (long k = 0; k < pos; k++) {
    int dig = (size_t)k < d.ni ? d.ip[k] - '0'
              : (size_t)k < nd ? d.fp[k - (long)d.ni] - '0' : 0;
    if (acc > ((uint64_t)INT64_MAX - (uint64_t)dig) / 10) return CSV_NUM_OVERFLOW;
    acc = acc * 10 + (uint64_t)dig;
  }
  if (pos >= 0 && (size_t)pos < nd) {
    int dig = (size_t)pos < d.ni ? d.ip[pos] - '0' : d.fp[pos - (long)d.ni] - '0';
    if (dig >= 5 && ++acc > (uint64_t)INT64_MAX) return CSV_NUM_OVERFLOW;
  }
  *out = (int64_t)acc;
  return CSV_NUM_OK;
}

int csv_time_field(const char *file, int line, const char *s, size_t n,
                   const int64_t *prev, int64_t *t, err *e) {
  int rc = csv_parse_ns(s, n, t);
  if (rc == CSV_NUM_OVERFLOW || (rc == CSV_NUM_OK && *t > SIMTIME_LIMIT_NS))
    return err_set(e, ERR_RANGE, "%s:%d: t_s: %.*s%s is past "
                   SIMTIME_LIMIT_TEXT, file, line, CSV_SHOW(s, n));
  if (rc != CSV_NUM_OK)
    return err_set(e, csv_num_err(rc), "%s:%d: t_s: '%.*s%s' %s", file, line,
                   CSV_SHOW(s, n), csv_num_what(rc));
  if (prev && *t < *prev)
    return err_set(e, ERR_PARSE, "%s:%d: t_s: %.*s%s is before the previous "
                   "row's %g (rows must be sorted by time)", file, line,
                   CSV_SHOW(s, n), (double)*prev * 1e-9);
  return ERR_OK;
}

int csv_parse_double(const char *s, size_t n, double *out) {
  csv_dec d;
  int rc = dec_parse(s, n, &d);
  if (rc != CSV_NUM_OK) return rc;
  char small[128], *buf = n < sizeof small ? small : mem_alloc(n + 1);
  memcpy(buf, s, n);
  buf[n] = '\0';
  errno = 0;
  *out = strtod(buf, NULL) + 0.0; /* -0 is 0 (it would print as "-0") */
  bool over = errno == ERANGE && isinf(*out);
  if (buf != small) free(buf);
  return over ? CSV_NUM_OVERFLOW : CSV_NUM_OK;
}

int csv_table(const char *text, size_t len, const char *name,
              const char *header, csv_row_fn row, void *ctx, err *e) {
  csv_reader rd;
  csv_reader_init(&rd, text, len, name);
  const char *s;
  size_t n;
  bool seen = false;
  int rows = 0, rc = ERR_OK, more;
  while (rc == ERR_OK && (more = csv_next(&rd, &s, &n, e)) > 0) {
    if (n == 0 || s[0] == '#') continue;
    if (seen) rc = row(ctx, &rd, s, n, e), rows++;
    else if (n != strlen(header) || memcmp(s, header, n) != 0)
      rc = err_set(e, ERR_PARSE, "%s:%d: expected the header '%s'", name,
                   rd.line, header);
    seen = true;
  }
  if (rc == ERR_OK && more < 0) rc = more;
  if (rc == ERR_OK && !rows)
    rc = err_set(e, ERR_MISSING, "%s:%d: no rows", name, rd.line);
  csv_reader_free(&rd);
  return rc;
}
