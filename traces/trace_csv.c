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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "base/mem.h"
#include "traces/csv.h"

static const char TRACE_HEADER[] = "t_s,src,dst,latency_ms,bandwidth_gbps";
#define TRACE_BASE_COLS 5
#define TRACE_MAX_COLS (TRACE_BASE_COLS + TRACE_NPATH_KEYS)

/* ---- the parser: rows, sites and the patterns seen per snapshot ---- */

typedef struct trace_pat {  /* open addressing; line == 0: empty slot */
  uint64_t key;
  size_t snap;
  int line;
} trace_pat;

typedef struct trace_parser {
  csv_reader *rd;
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
  int npath;                     /* path keys the header names */
  int path_col[TRACE_NPATH_KEYS]; /* their keys, in column order */
  trace_path *paths;             /* per row when npath > 0 */
  size_t paths_cap;
  csv_comment *comments;
  size_t ncomments, comments_cap;
  bool linear;
  int interp_line, loop_line;
  int64_t loop_ns;
  double loop_s;
} trace_parser;

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

/* ---- lines ---- */

static int trace_comment_line(trace_parser *ps, const char *line, size_t n) {
  const char *s, *v;
  size_t k, vn;
  if (!csv_comment_split(line, n, &s, &k, &v, &vn)) return ERR_OK;  /* free text */
  csv_comment_add(&ps->comments, &ps->ncomments, &ps->comments_cap, s, k, v,
                  vn);
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
                     "step or linear", ps->name, ps->line, CSV_SHOW(v, vn));
  } else if (k == 12 && memcmp(s, "loop_after_s", 12) == 0) {
    if (ps->loop_line)
      return err_set(ps->e, ERR_DUPLICATE, "%s:%d: loop_after_s: given twice "
                     "(first at line %d)", ps->name, ps->line, ps->loop_line);
    ps->loop_line = ps->line;
    int rc = csv_parse_ns(v, vn, &ps->loop_ns);
    if (rc == CSV_NUM_OK && ps->loop_ns == 0)
      return err_set(ps->e, ERR_RANGE, "%s:%d: loop_after_s: %.*s%s is not > 0",
                     ps->name, ps->line, CSV_SHOW(v, vn));
    if (rc != CSV_NUM_OK)
      return err_set(ps->e, csv_num_err(rc),
                     "%s:%d: loop_after_s: '%.*s%s' %s", ps->name, ps->line,
                     CSV_SHOW(v, vn), csv_num_what(rc));
    ps->loop_s = (double)ps->loop_ns / TRACE_NS_PER_S;
    if (ps->nrows && ps->rows[ps->nrows - 1].t >= ps->loop_ns)
      return err_set(ps->e, ERR_RANGE, "%s:%d: loop_after_s: %.*s%s does not "
                     "exceed the last t_s so far (%g)", ps->name, ps->line,
                     CSV_SHOW(v, vn), (double)ps->rows[ps->nrows - 1].t / 1e9);
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
                   ps->name, ps->line, what, CSV_SHOW(s, n));
  if (ps->zero_done && !ps->star_zero)
    return err_set(ps->e, ERR_MISSING, "%s:%d: %s: site '%.*s%s' is first named "
                   "after t = 0, so it has no value at t = 0 (no '*,*' row "
                   "there)", ps->name, ps->line, what, CSV_SHOW(s, n));
  if (ps->nsites >= TRACE_MAX_SITES)
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: site '%.*s%s' is one more "
                   "than the %d sites a trace may cover", ps->name, ps->line,
                   what, CSV_SHOW(s, n), TRACE_MAX_SITES);
  *out = site_add(ps, s, n);
  return ERR_OK;
}

/* A latency (bandwidth false: >= 0) or a bandwidth (> 0), within the bounds
 * of trace.h. */
static int trace_value_field(trace_parser *ps, const char *what, const char *s,
                             size_t n, bool bandwidth, double *out) {
  int rc = csv_parse_double(s, n, out);
  if (rc == CSV_NUM_OK && *out < 0) rc = CSV_NUM_NEGATIVE;
  if (rc == CSV_NUM_NEGATIVE || (rc == CSV_NUM_OK && bandwidth && !(*out > 0)))
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: %.*s%s is not %s", ps->name,
                   ps->line, what, CSV_SHOW(s, n), bandwidth ? "> 0" : ">= 0");
  if (rc != CSV_NUM_OK)
    return err_set(ps->e, csv_num_err(rc),
                   "%s:%d: %s: '%.*s%s' %s", ps->name, ps->line, what,
                   CSV_SHOW(s, n), csv_num_what(rc));
  if (bandwidth ? *out < TRACE_MIN_BANDWIDTH_GBPS : *out > TRACE_MAX_LATENCY_MS)
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: %.*s%s is %s %g", ps->name,
                   ps->line, what, CSV_SHOW(s, n), bandwidth ? "below" : "above",
                   bandwidth ? TRACE_MIN_BANDWIDTH_GBPS : TRACE_MAX_LATENCY_MS);
  return ERR_OK;
}

/* Path key k's cell s[0..n): empty is absent (0), else a number within
 * the key's bounds. */
static int trace_path_field(trace_parser *ps, int k, const char *s, size_t n,
                            double *out) {
  const trace_path_key *key = &trace_path_keys[k];
  *out = 0;
  if (n == 0) return ERR_OK;
  int rc = csv_is_inf(s, n) || (n == 3 && strncasecmp(s, "nan", 3) == 0)
               ? CSV_NUM_NONFINITE
               : csv_parse_double(s, n, out);
  if (rc != CSV_NUM_OK)
    return err_set(ps->e, csv_num_err(rc), "%s:%d: %s: '%.*s%s' %s", ps->name,
                   ps->line, key->name, CSV_SHOW(s, n), csv_num_what(rc));
  if (!trace_path_ok(k, *out))
    return err_set(ps->e, ERR_RANGE, "%s:%d: %s: %.*s%s is not %s", ps->name,
                   ps->line, key->name, CSV_SHOW(s, n), key->what);
  return ERR_OK;
}

static int trace_time_field(trace_parser *ps, const char *s, size_t n,
                            int64_t *t) {
  int64_t last = ps->nrows ? ps->rows[ps->nrows - 1].t : 0;
  int rc = csv_time_field(ps->name, ps->line, s, n, ps->nrows ? &last : NULL,
                          t, ps->e);
  if (rc) return rc;
  if (ps->nrows == 0 && *t != 0)
    return err_set(ps->e, ERR_MISSING, "%s:%d: t_s: the first row is at %.*s%s; "
                   "the trace must start with a snapshot at t = 0", ps->name,
                   ps->line, CSV_SHOW(s, n));
  if (ps->loop_ns && *t >= ps->loop_ns)
    return err_set(ps->e, ERR_RANGE, "%s:%d: t_s: %.*s%s is not before "
                   "loop_after_s (%g)", ps->name, ps->line, CSV_SHOW(s, n),
                   ps->loop_s);
  if (*t > last) {
    if (!ps->zero_done && trace_check_zero(ps, ps->line)) return ps->e->code;
    ps->snap++;
  }
  return ERR_OK;
}

/* The row's path keys, from the cells after bandwidth_gbps, into p. */
static int trace_path_fields(trace_parser *ps, const char *const *f,
                             const size_t *fn, trace_path *p) {
  if (!ps->npath) return ERR_OK; /* the five columns alone */
  trace_value v = {0};
  for (int i = 0; i < ps->npath; i++) {
    int k = ps->path_col[i];
    double x;
    if (trace_path_field(ps, k, f[TRACE_BASE_COLS + i], fn[TRACE_BASE_COLS + i],
                         &x))
      return ps->e->code;
    *(double *)((char *)&v + trace_path_keys[k].offset) = x;
  }
  *p = trace_path_of(v);
  return ERR_OK;
}

/* The header's columns, as read, for a message about a row's count. */
static void trace_header_text(const trace_parser *ps, char *buf, size_t size) {
  size_t at = (size_t)snprintf(buf, size, "%s", TRACE_HEADER);
  for (int i = 0; i < ps->npath && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, ",%s",
                           trace_path_keys[ps->path_col[i]].name);
}

static int trace_data_line(trace_parser *ps, const char *s, size_t n) {
  const char *f[TRACE_MAX_COLS];
  size_t fn[TRACE_MAX_COLS];
  int want = TRACE_BASE_COLS + ps->npath;
  int cols = csv_split(ps->rd, s, n, f, fn, TRACE_MAX_COLS);
  if (cols != want) {
    char head[160];
    trace_header_text(ps, head, sizeof head);
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected %d columns (%s), found %d",
                   ps->name, ps->line, want, head, cols);
  }
  trace_csv_row r = {.line = ps->line};
  trace_path path = {0};
  if (trace_time_field(ps, f[0], fn[0], &r.t) ||
      trace_site_field(ps, "src", f[1], fn[1], &r.src) ||
      trace_site_field(ps, "dst", f[2], fn[2], &r.dst) ||
      trace_value_field(ps, "latency_ms", f[3], fn[3], false, &r.v.latency_ms) ||
      trace_value_field(ps, "bandwidth_gbps", f[4], fn[4], true,
                        &r.v.bandwidth_gbps) ||
      trace_path_fields(ps, f, fn, &path))
    return ps->e->code;
  if ((ps->npats + 1) * 2 > ps->pats_cap) pat_grow(ps);
  trace_pat *pt = pat_slot(ps, pat_key(r.src, r.dst));
  if (pt->line && pt->snap == ps->snap)
    return err_set(ps->e, ERR_DUPLICATE, "%s:%d: duplicate row for %.*s%s,%.*s%s "
                   "at t_s = %.*s%s (first at line %d)", ps->name, ps->line,
                   CSV_SHOW(f[1], fn[1]), CSV_SHOW(f[2], fn[2]), CSV_SHOW(f[0], fn[0]),
                   pt->line);
  if (trace_bytes_with((double)ps->nrows + 1, 0, ps->nsites, ps->npath > 0) >
      (double)TRACE_MAX_BYTES)
    return err_set(ps->e, ERR_MEMORY, "%s:%d: %zu data rows, more than a trace "
                   "may hold in %.2f GB", ps->name, ps->line, ps->nrows + 1,
                   (double)TRACE_MAX_BYTES / 1e9);
  if (!pt->line) ps->npats++;
  *pt = (trace_pat){pat_key(r.src, r.dst), ps->snap, ps->line};
  mem_grow((void **)&ps->rows, &ps->rows_cap, ps->nrows + 1, sizeof *ps->rows);
  if (ps->npath) {
    mem_grow((void **)&ps->paths, &ps->paths_cap, ps->nrows + 1,
             sizeof *ps->paths);
    ps->paths[ps->nrows] = path;
  }
  ps->rows[ps->nrows++] = r;
  return ERR_OK;
}

/* The header: TRACE_HEADER, then any path keys (each once). */
static int trace_header_line(trace_parser *ps, const char *s, size_t n) {
  size_t base = sizeof TRACE_HEADER - 1;
  if (n < base || memcmp(s, TRACE_HEADER, base) != 0 ||
      (n > base && s[base] != ','))
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected the header '%s' (then "
                   "any of flow_gbps, loss, window_bytes), found '%.*s%s'",
                   ps->name, ps->line, TRACE_HEADER, CSV_SHOW(s, n));
  const char *f[TRACE_MAX_COLS + 1];
  size_t fn[TRACE_MAX_COLS + 1];
  int cols = csv_split(ps->rd, s, n, f, fn, TRACE_MAX_COLS + 1);
  for (int i = TRACE_BASE_COLS; i < cols; i++) {
    int k = 0;
    while (k < TRACE_NPATH_KEYS &&
           !(strlen(trace_path_keys[k].name) == fn[i] &&
             memcmp(trace_path_keys[k].name, f[i], fn[i]) == 0))
      k++;
    if (k == TRACE_NPATH_KEYS)
      return err_set(ps->e, ERR_PARSE, "%s:%d: header: '%.*s%s' is not a "
                     "column (after bandwidth_gbps: flow_gbps, loss, "
                     "window_bytes)", ps->name, ps->line, CSV_SHOW(f[i], fn[i]));
    for (int j = 0; j < ps->npath; j++)
      if (ps->path_col[j] == k)
        return err_set(ps->e, ERR_DUPLICATE, "%s:%d: header: %s given twice",
                       ps->name, ps->line, trace_path_keys[k].name);
    ps->path_col[ps->npath++] = k;
  }
  ps->header = true;
  return ERR_OK;
}

static int trace_line(trace_parser *ps, const char *s, size_t n) {
  if (n == 0) return ERR_OK;
  if (s[0] == '#') return trace_comment_line(ps, s, n);
  if (ps->header) return trace_data_line(ps, s, n);
  return trace_header_line(ps, s, n);
}

static void trace_parser_free(trace_parser *ps) {
  for (int i = 0; i < ps->nsites; i++) free(ps->names[i]);
  free(ps->names), free(ps->lens), free(ps->slots), free(ps->pats);
  free(ps->rows), free(ps->paths);
  csv_comments_free(ps->comments, ps->ncomments);
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
  csv_reader rd;
  csv_reader_init(&rd, text, len, name);
  trace_parser ps = {.rd = &rd, .name = name, .e = &local,
                     .fixed = sites != NULL};
  for (int i = 0; sites && i < nsites; i++) {
    assert(site_find(&ps, sites[i], strlen(sites[i])) < 0);
    site_add(&ps, sites[i], strlen(sites[i]));
  }
  const char *s;
  size_t n;
  int more;
  while ((more = csv_next(&rd, &s, &n, &local)) > 0) {
    ps.line = rd.line;
    if (trace_line(&ps, s, n)) goto done;
  }
  if (more < 0 || trace_finish(&ps, rd.any_text, rd.line ? rd.line : 1))
    goto done;
  *out = (trace_csv){.nsites = ps.nsites, .sites = ps.names,
                     .rows = ps.rows, .nrows = ps.nrows, .paths = ps.paths,
                     .comments = ps.comments, .ncomments = ps.ncomments,
                     .linear = ps.linear, .loop_ns = ps.loop_ns,
                     .loop_s = ps.loop_s};
  ps.names = NULL, ps.nsites = 0, ps.rows = NULL, ps.nrows = 0;
  ps.paths = NULL;
  ps.comments = NULL, ps.ncomments = 0;
done:
  if (local.code) err_set(e, local.code, "%s", local.msg);
  csv_reader_free(&rd);
  trace_parser_free(&ps);
  return local.code;
}

void trace_csv_free(trace_csv *c) {
  for (int i = 0; c->sites && i < c->nsites; i++) free(c->sites[i]);
  free(c->sites), free(c->rows), free(c->paths);
  csv_comments_free(c->comments, c->ncomments);
  *c = (trace_csv){0};
}

/* s[0 .. n) without the blanks csv_next trims. */
static void trim_blanks(const char **s, size_t *n) {
  while (*n && strchr(" \t\r", (*s)[0])) (*s)++, (*n)--;
  while (*n && strchr(" \t\r", (*s)[*n - 1])) (*n)--;
}

bool trace_csv_all_at_zero(const char *text, size_t len) {
  /* line by line with memchr: csv_next's checks (UTF-8, NUL) cost more
   * than the answer, and a text they refuse does not load anyway */
  const char *p = text, *end = text + len;
  bool header = false;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *s = p;
    size_t n = (size_t)(eol - p);
    p = eol + 1;
    trim_blanks(&s, &n);
    if (n == 0) continue;
    if (s[0] == '#') {
      const char *k, *v;
      size_t kn, vn;
      if (csv_comment_split(s, n, &k, &kn, &v, &vn) && kn == 12 &&
          memcmp(k, "loop_after_s", 12) == 0)
        return false;
      continue;
    }
    if (!header) {
      header = true;
      continue;
    }
    if (n >= 2 && s[0] == '0' && s[1] == ',') continue; /* the usual row */
    const char *comma = memchr(s, ',', n);
    size_t fn = comma ? (size_t)(comma - s) : n;
    trim_blanks(&s, &fn);
    int64_t t;
    if (csv_parse_ns(s, fn, &t) != CSV_NUM_OK || t != 0) return false;
  }
  return true;
}

double trace_bytes_with(double rows, double points, int nsites, bool paths) {
  /* trace.c: trace_resolve's five per-pair arrays, trace_build's count
   * and off */
  double pairs = (double)nsites * nsites, per_pair = 4 + 1 + 8 + 8 + 4 + 8 + 8;
  /* doubling arrays may hold twice what they use: the parser's rows (and
   * their path keys) and the emitted points; times, vals (and paths) are
   * allocated to size */
  double path = paths ? sizeof(trace_path) : 0;
  double per_point = 2.0 * sizeof(trace_csv_emit) + sizeof(int64_t) +
                     sizeof(trace_base) + path;
  return pairs * per_pair + rows * 2.0 * (sizeof(trace_csv_row) + path) +
         points * per_point;
}
