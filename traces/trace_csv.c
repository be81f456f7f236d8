/* trace_csv: see trace_csv.h. The text is read line by line in memory (no
 * line-length limit); each line is checked as it comes, so the first error
 * in file order is the one reported.
 * Invariant of the parser: names[0 .. nsites) are distinct and slots hashes
 * each of them; pats holds, per (src, dst) pattern, the last snapshot (index
 * of a distinct t_s) that gave it, so a duplicate inside a snapshot and a
 * pair missing at t = 0 are found without rescanning rows.
 *
 * Choices where DESIGN.md is silent:
 * - "# loop_after_s: X": X must exceed the last t_s (at X the t = 0 snapshot
 *   returns); it may follow the rows, which it only extends.
 * - "# interpolate:" is a header: after a data row it is an error, since it
 *   would switch the rows already read from step to linear replay.
 * - Sites not given by the caller are those the file names; a file naming
 *   none (only '*') is an error. A site first named after t = 0 needs a
 *   "*,*" row at t = 0. */
#include "traces/trace_csv.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "base/mem.h"

static const char TRACE_HEADER[] = "t_s,src,dst,latency_ms,bandwidth_gbps";
#define TRACE_SHOW 40  /* bytes of a bad field echoed in a message */

/* ---- the parser: rows, sites and the patterns seen per snapshot ---- */

typedef struct trace_pat {  /* open addressing; line == 0: empty slot */
  uint64_t key;
  size_t snap;
  int line;
} trace_pat;

typedef struct trace_parser {
  const char *name;
  err *e;
  int line;
  bool header, fixed, star_zero, zero_done;
  char **names;
  size_t *lens;
  int nsites;
  size_t names_cap;
  int *slots;  /* site hash: index + 1, 0 empty */
  size_t nslots;
  trace_pat *pats;
  size_t npats, pats_cap;
  trace_csv_row *rows;
  size_t nrows, rows_cap, snap;
  trace_csv_comment *comments;
  size_t ncomments, comments_cap;
  bool linear;
  int interp_line, loop_line;
  int64_t loop_ns;
  double loop_s;
  char *scratch;
  size_t scratch_cap;
} trace_parser;

/* Length of s[0..n) to echo, cut at a character boundary. */
static int trace_show(const char *s, size_t n) {
  if (n <= TRACE_SHOW) return (int)n;
  size_t w = TRACE_SHOW;
  while (w > 0 && ((unsigned char)s[w] & 0xC0) == 0x80) w--;
  return (int)w;
}
#define SHOW(s, n) trace_show(s, n), (s), ((n) > TRACE_SHOW ? "..." : "")

static uint64_t trace_hash_bytes(const char *s, size_t n) {
  return hash_bytes(HASH_INIT, s, n);
}

static uint64_t trace_mix(uint64_t x) {  /* splitmix64 finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static void site_rehash(trace_parser *ps) {
  free(ps->slots);
  ps->nslots = ps->nslots ? ps->nslots * 2 : 16;
  ps->slots = mem_calloc(ps->nslots, sizeof *ps->slots);
  for (int i = 0; i < ps->nsites; i++) {
    size_t h = trace_hash_bytes(ps->names[i], ps->lens[i]) & (ps->nslots - 1);
    while (ps->slots[h]) h = (h + 1) & (ps->nslots - 1);
    ps->slots[h] = i + 1;
  }
}

/* Index of the site named s[0..n), or -1. */
static int site_find(const trace_parser *ps, const char *s, size_t n) {
  if (!ps->nslots) return -1;
  size_t h = trace_hash_bytes(s, n) & (ps->nslots - 1);
  for (; ps->slots[h]; h = (h + 1) & (ps->nslots - 1)) {
    int i = ps->slots[h] - 1;
    if (ps->lens[i] == n && memcmp(ps->names[i], s, n) == 0) return i;
  }
  return -1;
}

static int site_add(trace_parser *ps, const char *s, size_t n) {
  mem_grow((void **)&ps->names, &ps->names_cap, (size_t)ps->nsites + 1,
           sizeof *ps->names);
  size_t cap = ps->names_cap;
  ps->lens = mem_realloc(ps->lens, cap * sizeof *ps->lens);
  ps->names[ps->nsites] = mem_strndup(s, n);
  ps->lens[ps->nsites] = n;
  ps->nsites++;
  if ((size_t)ps->nsites * 2 > ps->nslots) site_rehash(ps);
  else {
    size_t h = trace_hash_bytes(s, n) & (ps->nslots - 1);
    while (ps->slots[h]) h = (h + 1) & (ps->nslots - 1);
    ps->slots[h] = ps->nsites;
  }
  return ps->nsites - 1;
}

static uint64_t pat_key(int src, int dst) {
  return ((uint64_t)(uint32_t)(src + 1) << 32) | (uint32_t)(dst + 1);
}

/* The slot of key: its entry, or the empty slot where it would go. */
static trace_pat *pat_slot(const trace_parser *ps, uint64_t key) {
  assert(ps->pats_cap);
  size_t m = ps->pats_cap - 1, h = trace_mix(key) & m;
  while (ps->pats[h].line && ps->pats[h].key != key) h = (h + 1) & m;
  return &ps->pats[h];
}

static void pat_grow(trace_parser *ps) {
  trace_pat *old = ps->pats;
  size_t oldcap = ps->pats_cap;
  ps->pats_cap = oldcap ? oldcap * 2 : 64;
  ps->pats = mem_calloc(ps->pats_cap, sizeof *ps->pats);
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].line) *pat_slot(ps, old[i].key) = old[i];
  free(old);
}

/* Was the pattern (src, dst) given in snapshot 0? */
static bool pat_at_zero(const trace_parser *ps, int src, int dst) {
  const trace_pat *p = pat_slot(ps, pat_key(src, dst));
  return p->line && p->snap == 0;
}

/* ---- numbers ---- */

enum { NUM_OK, NUM_SYNTAX, NUM_NONFINITE, NUM_NEGATIVE, NUM_OVERFLOW };

typedef struct trace_dec {  /* a decimal numeral split into its parts */
  bool neg, nonzero;
  const char *ip, *fp;      /* integer and fraction digits */
  size_t ni, nf;
  long exp;                 /* saturated at +-1000000 */
} trace_dec;

/* Parses [+-]digits[.digits][e[+-]digits] (at least one digit). */
static int trace_dec_parse(const char *s, size_t n, trace_dec *d) {
  size_t i = 0;
  *d = (trace_dec){0};
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
  if (ok && i == n) return NUM_OK;
  size_t k = (n && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const char *w = s + k;
  size_t wn = n - k;
  if ((wn == 3 && (strncasecmp(w, "nan", 3) == 0 || strncasecmp(w, "inf", 3) == 0)) ||
      (wn == 8 && strncasecmp(w, "infinity", 8) == 0))
    return NUM_NONFINITE;
  return NUM_SYNTAX;
}

/* Seconds s[0..n) as integer nanoseconds, exactly, rounded to nearest. */
static int trace_parse_ns(const char *s, size_t n, int64_t *out) {
  trace_dec d;
  int rc = trace_dec_parse(s, n, &d);
  if (rc != NUM_OK) return rc;
  if (d.neg && d.nonzero) return NUM_NEGATIVE;
  long pos = (long)d.ni + d.exp + 9;  /* digits left of the ns point */
  size_t nd = d.ni + d.nf;
  uint64_t acc = 0;
  for (long k = 0; k < pos; k++) {
    int dig = (size_t)k < d.ni ? d.ip[k] - '0'
              : (size_t)k < nd ? d.fp[k - (long)d.ni] - '0' : 0;
    if (acc > ((uint64_t)INT64_MAX - (uint64_t)dig) / 10) return NUM_OVERFLOW;
    acc = acc * 10 + (uint64_t)dig;
  }
  if (pos >= 0 && (size_t)pos < nd) {
    int dig = (size_t)pos < d.ni ? d.ip[pos] - '0' : d.fp[pos - (long)d.ni] - '0';
    if (dig >= 5 && ++acc > (uint64_t)INT64_MAX) return NUM_OVERFLOW;
  }
  *out = (int64_t)acc;
  return NUM_OK;
}

/* A finite double from s[0..n); strtod on a NUL-terminated copy. */
static int trace_parse_double(trace_parser *ps, const char *s, size_t n,
                              double *out) {
  trace_dec d;
  int rc = trace_dec_parse(s, n, &d);
  if (rc != NUM_OK) return rc;
  mem_grow((void **)&ps->scratch, &ps->scratch_cap, n + 1, 1);
  memcpy(ps->scratch, s, n);
  ps->scratch[n] = '\0';
  errno = 0;
  *out = strtod(ps->scratch, NULL);
  if (errno == ERANGE && isinf(*out)) return NUM_OVERFLOW;
  return NUM_OK;
}

static const char *const trace_num_what[] = {
    "", "is not a number", "is not a finite number", "is negative",
    "is out of range"};

/* ---- lines ---- */

/* Offset of the first byte of s[0..n) that breaks UTF-8, or n. */
static size_t trace_utf8_bad(const unsigned char *s, size_t n) {
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

static void trace_trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) (*n)--;
}

static int trace_comment_line(trace_parser *ps, const char *s, size_t n) {
  s++, n--;  /* the '#' */
  trace_trim(&s, &n);
  size_t k = 0;
  while (k < n && (s[k] == '_' || s[k] == '-' || s[k] == '.' ||
                   (s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'z') ||
                   (s[k] >= 'A' && s[k] <= 'Z')))
    k++;
  if (k == 0 || k == n || s[k] != ':') return ERR_OK;  /* free text */
  const char *v = s + k + 1;
  size_t vn = n - k - 1;
  trace_trim(&v, &vn);
  mem_grow((void **)&ps->comments, &ps->comments_cap, ps->ncomments + 1,
           sizeof *ps->comments);
  ps->comments[ps->ncomments++] =
      (trace_csv_comment){mem_strndup(s, k), mem_strndup(v, vn)};
  if (k == 11 && memcmp(s, "interpolate", 11) == 0) {
    if (ps->interp_line)
      return err_set(ps->e, ERR_DUPLICATE, "%s:%d: interpolate: given twice "
                     "(first at line %d)", ps->name, ps->line, ps->interp_line);
    ps->interp_line = ps->line;
    if (ps->nrows)
      return err_set(ps->e, ERR_PARSE, "%s:%d: interpolate: a header comment, "
                     "but the data rows began at line %d: it would change how "
                     "the rows before it replay; give it before them",
                     ps->name, ps->line, ps->rows[0].line);
    if (vn == 6 && memcmp(v, "linear", 6) == 0) ps->linear = true;
    else if (!(vn == 4 && memcmp(v, "step", 4) == 0))
      return err_set(ps->e, ERR_PARSE, "%s:%d: interpolate: '%.*s%s' is not "
                     "step or linear", ps->name, ps->line, SHOW(v, vn));
  } else if (k == 12 && memcmp(s, "loop_after_s", 12) == 0) {
    if (ps->loop_line)
      return err_set(ps->e, ERR_DUPLICATE, "%s:%d: loop_after_s: given twice "
                     "(first at line %d)", ps->name, ps->line, ps->loop_line);
    ps->loop_line = ps->line;
    int rc = trace_parse_ns(v, vn, &ps->loop_ns);
    if (rc == NUM_OK && ps->loop_ns == 0)
      return err_set(ps->e, ERR_RANGE, "%s:%d: loop_after_s: %.*s%s is not > 0",
                     ps->name, ps->line, SHOW(v, vn));
    if (rc != NUM_OK)
      return err_set(ps->e, rc == NUM_SYNTAX ? ERR_PARSE : ERR_RANGE,
                     "%s:%d: loop_after_s: '%.*s%s' %s", ps->name, ps->line,
                     SHOW(v, vn), trace_num_what[rc]);
    ps->loop_s = (double)ps->loop_ns / TRACE_NS_PER_S;
    if (ps->nrows && ps->rows[ps->nrows - 1].t >= ps->loop_ns)
      return err_set(ps->e, ERR_RANGE, "%s:%d: loop_after_s: %.*s%s does not "
                     "exceed the last t_s so far (%g)", ps->name, ps->line,
                     SHOW(v, vn), (double)ps->rows[ps->nrows - 1].t / 1e9);
  }
  return ERR_OK;
}

/* Every ordered pair of the sites known so far has a value at t = 0. */
static int trace_check_zero(trace_parser *ps, int line) {
  ps->zero_done = true;
  ps->star_zero = pat_at_zero(ps, -1, -1);
  if (ps->star_zero) return ERR_OK;
  for (int a = 0; a < ps->nsites; a++)
    for (int b = 0; b < ps->nsites; b++) {
      if (pat_at_zero(ps, a, b) || pat_at_zero(ps, a, -1) ||
          pat_at_zero(ps, -1, b))
        continue;
      if (a == b)
        return err_set(ps->e, ERR_MISSING, "%s:%d: no value at t = 0 for site "
                       "%s with itself (the t = 0 snapshot must define every "
                       "ordered pair)", ps->name, line, ps->names[a]);
      return err_set(ps->e, ERR_MISSING, "%s:%d: no value at t = 0 for %s -> %s "
                     "(the t = 0 snapshot must define every ordered pair; no "
                     "symmetric fill)", ps->name, line, ps->names[a],
                     ps->names[b]);
    }
  return ERR_OK;
}

/* The site field s[0..n) as an index, -1 for '*'; or an error. */
static int trace_site_field(trace_parser *ps, const char *what, const char *s,
                            size_t n, int *out) {
  if (n == 1 && s[0] == '*') return *out = -1, ERR_OK;
  if (n == 0)
    return err_set(ps->e, ERR_PARSE, "%s:%d: %s: empty site name", ps->name,
                   ps->line, what);
  *out = site_find(ps, s, n);
  if (*out >= 0) return ERR_OK;
  if (ps->fixed)
    return err_set(ps->e, ERR_UNKNOWN, "%s:%d: %s: unknown site '%.*s%s'",
                   ps->name, ps->line, what, SHOW(s, n));
  if (ps->zero_done && !ps->star_zero)
    return err_set(ps->e, ERR_MISSING, "%s:%d: %s: site '%.*s%s' is first named "
                   "after t = 0, so it has no value at t = 0 (no '*,*' row "
                   "there)", ps->name, ps->line, what, SHOW(s, n));
  if (ps->nsites >= TRACE_MAX_SITES)
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: site '%.*s%s' is one more "
                   "than the %d sites a trace may cover", ps->name, ps->line,
                   what, SHOW(s, n), TRACE_MAX_SITES);
  *out = site_add(ps, s, n);
  return ERR_OK;
}

/* A latency (bandwidth false: >= 0) or a bandwidth (> 0), within the bounds
 * of trace.h. */
static int trace_value_field(trace_parser *ps, const char *what, const char *s,
                             size_t n, bool bandwidth, double *out) {
  int rc = trace_parse_double(ps, s, n, out);
  if (rc == NUM_OK && *out < 0) rc = NUM_NEGATIVE;
  if (rc == NUM_NEGATIVE || (rc == NUM_OK && bandwidth && !(*out > 0)))
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: %.*s%s is not %s", ps->name,
                   ps->line, what, SHOW(s, n), bandwidth ? "> 0" : ">= 0");
  if (rc != NUM_OK)
    return err_set(ps->e, rc == NUM_SYNTAX ? ERR_PARSE : ERR_RANGE,
                   "%s:%d: %s: '%.*s%s' %s", ps->name, ps->line, what,
                   SHOW(s, n), trace_num_what[rc]);
  if (bandwidth ? *out < TRACE_MIN_BANDWIDTH_GBPS : *out > TRACE_MAX_LATENCY_MS)
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: %.*s%s is %s %g", ps->name,
                   ps->line, what, SHOW(s, n), bandwidth ? "below" : "above",
                   bandwidth ? TRACE_MIN_BANDWIDTH_GBPS : TRACE_MAX_LATENCY_MS);
  return ERR_OK;
}

static int trace_time_field(trace_parser *ps, const char *s, size_t n,
                            int64_t *t) {
  int rc = trace_parse_ns(s, n, t);
  if (rc == NUM_OVERFLOW)
    return err_set(ps->e, ERR_RANGE, "%s:%d: t_s: %.*s%s is too large (at most "
                   "%lld s in integer nanoseconds)", ps->name, ps->line,
                   SHOW(s, n), (long long)(INT64_MAX / TRACE_NS_PER_S));
  if (rc != NUM_OK)
    return err_set(ps->e, rc == NUM_SYNTAX ? ERR_PARSE : ERR_RANGE,
                   "%s:%d: t_s: '%.*s%s' %s", ps->name, ps->line, SHOW(s, n),
                   trace_num_what[rc]);
  if (ps->nrows == 0 && *t != 0)
    return err_set(ps->e, ERR_MISSING, "%s:%d: t_s: the first row is at %.*s%s; "
                   "the trace must start with a snapshot at t = 0", ps->name,
                   ps->line, SHOW(s, n));
  int64_t last = ps->nrows ? ps->rows[ps->nrows - 1].t : 0;
  if (*t < last)
    return err_set(ps->e, ERR_PARSE, "%s:%d: t_s: %.*s%s is before the previous "
                   "row's %g (rows must be sorted by time)", ps->name, ps->line,
                   SHOW(s, n), (double)last / 1e9);
  if (ps->loop_ns && *t >= ps->loop_ns)
    return err_set(ps->e, ERR_RANGE, "%s:%d: t_s: %.*s%s is not before "
                   "loop_after_s (%g)", ps->name, ps->line, SHOW(s, n),
                   ps->loop_s);
  if (*t > last) {
    if (!ps->zero_done && trace_check_zero(ps, ps->line)) return ps->e->code;
    ps->snap++;
  }
  return ERR_OK;
}

static int trace_data_line(trace_parser *ps, const char *s, size_t n) {
  const char *f[5];
  size_t fn[5];
  int cols = 0;
  const char *p = s, *end = s + n;
  for (;;) {
    const char *c = memchr(p, ',', (size_t)(end - p));
    const char *fe = c ? c : end;
    if (cols < 5) f[cols] = p, fn[cols] = (size_t)(fe - p), trace_trim(&f[cols], &fn[cols]);
    cols++;
    if (!c) break;
    p = c + 1;
  }
  if (cols != 5)
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected 5 columns (%s), found %d",
                   ps->name, ps->line, TRACE_HEADER, cols);
  trace_csv_row r = {.line = ps->line};
  if (trace_time_field(ps, f[0], fn[0], &r.t) ||
      trace_site_field(ps, "src", f[1], fn[1], &r.src) ||
      trace_site_field(ps, "dst", f[2], fn[2], &r.dst) ||
      trace_value_field(ps, "latency_ms", f[3], fn[3], false, &r.v.latency_ms) ||
      trace_value_field(ps, "bandwidth_gbps", f[4], fn[4], true,
                        &r.v.bandwidth_gbps))
    return ps->e->code;
  if ((ps->npats + 1) * 2 > ps->pats_cap) pat_grow(ps);
  trace_pat *pt = pat_slot(ps, pat_key(r.src, r.dst));
  if (pt->line && pt->snap == ps->snap)
    return err_set(ps->e, ERR_DUPLICATE, "%s:%d: duplicate row for %.*s%s,%.*s%s "
                   "at t_s = %.*s%s (first at line %d)", ps->name, ps->line,
                   SHOW(f[1], fn[1]), SHOW(f[2], fn[2]), SHOW(f[0], fn[0]),
                   pt->line);
  if (trace_bytes((double)ps->nrows + 1, 0, ps->nsites) > (double)TRACE_MAX_BYTES)
    return err_set(ps->e, ERR_MEMORY, "%s:%d: %zu data rows, more than a trace "
                   "may hold in %.2f GB", ps->name, ps->line, ps->nrows + 1,
                   (double)TRACE_MAX_BYTES / 1e9);
  if (!pt->line) ps->npats++;
  *pt = (trace_pat){pat_key(r.src, r.dst), ps->snap, ps->line};
  mem_grow((void **)&ps->rows, &ps->rows_cap, ps->nrows + 1, sizeof *ps->rows);
  ps->rows[ps->nrows++] = r;
  return ERR_OK;
}

static int trace_line(trace_parser *ps, const char *s, size_t n) {
  if (memchr(s, '\0', n))
    return err_set(ps->e, ERR_PARSE, "%s:%d: NUL byte (a binary file, not "
                   "CSV text)", ps->name, ps->line);
  size_t bad = trace_utf8_bad((const unsigned char *)s, n);
  if (bad < n)
    return err_set(ps->e, ERR_PARSE, "%s:%d: invalid UTF-8 (byte 0x%02x at "
                   "column %zu)", ps->name, ps->line, (unsigned char)s[bad],
                   bad + 1);
  if (ps->line == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3, n -= 3;
  trace_trim(&s, &n);
  if (n == 0) return ERR_OK;
  if (s[0] == '#') return trace_comment_line(ps, s, n);
  if (ps->header) return trace_data_line(ps, s, n);
  if (n != sizeof TRACE_HEADER - 1 || memcmp(s, TRACE_HEADER, n) != 0)
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected the header '%s', found "
                   "'%.*s%s'", ps->name, ps->line, TRACE_HEADER, SHOW(s, n));
  ps->header = true;
  return ERR_OK;
}

static void trace_parser_free(trace_parser *ps) {
  for (int i = 0; i < ps->nsites; i++) free(ps->names[i]);
  free(ps->names), free(ps->lens), free(ps->slots), free(ps->pats);
  free(ps->rows), free(ps->scratch);
  for (size_t i = 0; i < ps->ncomments; i++)
    free(ps->comments[i].key), free(ps->comments[i].value);
  free(ps->comments);
}

/* Whole-file checks at the end of the text; line is the last line. */
static int trace_finish(trace_parser *ps, bool any_text, int line) {
  if (!any_text)
    return err_set(ps->e, ERR_PARSE, "%s:%d: empty file (expected the header "
                   "'%s')", ps->name, line, TRACE_HEADER);
  if (!ps->header)
    return err_set(ps->e, ERR_PARSE, "%s:%d: no header line '%s' (only "
                   "comments)", ps->name, line, TRACE_HEADER);
  if (!ps->nrows)
    return err_set(ps->e, ERR_MISSING, "%s:%d: no data rows after the header",
                   ps->name, line);
  if (!ps->nsites)
    return err_set(ps->e, ERR_MISSING, "%s:%d: no site named: a file of only "
                   "'*' rows needs the caller's sites (e.g. --scenario)",
                   ps->name, line);
  if (!ps->zero_done) return trace_check_zero(ps, line);
  return ERR_OK;
}

int trace_csv_parse(const char *text, size_t len, const char *name,
                    const char *const *sites, int nsites, trace_csv *out,
                    err *e) {
  assert(text || len == 0);
  *out = (trace_csv){0};
  if (sites && nsites > TRACE_MAX_SITES)
    return err_set(e, ERR_RANGE, "%s:1: %d sites; a trace covers at most %d",
                   name, nsites, TRACE_MAX_SITES);
  err local; /* fresh, so ps.e->code is this parse's; copied to e at the end */
  err_clear(&local);
  trace_parser ps = {.name = name, .e = &local, .fixed = sites != NULL};
  for (int i = 0; sites && i < nsites; i++) {
    assert(site_find(&ps, sites[i], strlen(sites[i])) < 0);
    site_add(&ps, sites[i], strlen(sites[i]));
  }
  bool any_text = false;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n && p[n - 1] == '\r') n--;
    ps.line++;
    for (size_t k = 0; k < n && !any_text; k++) any_text = p[k] != ' ' && p[k] != '\t';
    if (trace_line(&ps, p, n)) goto done;
    p = nl ? nl + 1 : end;
  }
  if (trace_finish(&ps, any_text, ps.line ? ps.line : 1)) goto done;
  *out = (trace_csv){.nsites = ps.nsites, .sites = ps.names,
                     .rows = ps.rows, .nrows = ps.nrows,
                     .comments = ps.comments, .ncomments = ps.ncomments,
                     .linear = ps.linear, .loop_ns = ps.loop_ns,
                     .loop_s = ps.loop_s};
  ps.names = NULL, ps.nsites = 0, ps.rows = NULL, ps.nrows = 0;
  ps.comments = NULL, ps.ncomments = 0;
done:
  if (local.code) err_set(e, local.code, "%s", local.msg);
  trace_parser_free(&ps);
  return local.code;
}

void trace_csv_free(trace_csv *c) {
  for (int i = 0; c->sites && i < c->nsites; i++) free(c->sites[i]);
  free(c->sites), free(c->rows);
  for (size_t i = 0; c->comments && i < c->ncomments; i++)
    free(c->comments[i].key), free(c->comments[i].value);
  free(c->comments);
  *c = (trace_csv){0};
}
