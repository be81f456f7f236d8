/* trace: the replay of trace.h, built from the rows trace_csv reads.
 * Invariant: for pair p = a * nsites + b, change points off[p] .. off[p+1]-1
 * of times/vals have strictly increasing times, the first at 0; in step mode
 * consecutive points of a pair differ in value (a row repeating the value
 * held is not a change). change_times holds the distinct times of all points,
 * sorted, so every query is one binary search.
 *
 * Choices where DESIGN.md is silent:
 * - Wildcards: within one snapshot the most specific row wins for a pair:
 *   "a,b" > "a,*" > "*,b" > "*,*"; '*' matches every site, itself included.
 *   Across snapshots the later row wins, whatever its form.
 * - Looping (at loop_after_s the t = 0 snapshot returns): in linear mode the
 *   last segment runs from the last change point to the t = 0 value at
 *   loop_after_s, so the looped series is continuous.
 * - Linear mode keeps every point (a repeated value still bends the slope).
 * - Path keys (TRACE_PATH_MAP) live in paths, beside vals, only when the
 *   file's header names one: a trace without them keeps its size. */
#include "traces/trace.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/hash.h"
#include "base/mem.h"
#include "traces/trace_csv.h"

struct trace {
  int nsites;
  char **sites;
  size_t *off;            /* nsites^2 + 1 offsets into times/vals */
  int64_t *times;
  trace_base *vals;
  trace_path *paths;      /* beside vals; NULL: no path key anywhere */
  int64_t *change_times;  /* distinct point times, sorted; [0] == 0 */
  size_t nchange;
  bool linear;
  int64_t loop_ns;        /* 0: no loop */
  double loop_s;
  bool any_wrap;          /* some pair changes at each period start */
  size_t rows, snapshots;
  trace_csv_comment *comments;
  size_t ncomments;
};

/* ---- building the replay arrays ---- */

static bool trace_same(trace_base x, trace_base y) {
  return x.latency_ms == y.latency_ms && x.bandwidth_gbps == y.bandwidth_gbps;
}

static bool trace_same_path(const trace_path *x, const trace_path *y) {
  return x->flow_gbps == y->flow_gbps && x->loss == y->loss &&
         x->window_bytes == y->window_bytes;
}

/* Rows i and j of csv hold the same value (path keys included). */
static bool trace_same_row(const trace_csv *csv, size_t i, size_t j) {
  return trace_same(csv->rows[i].v, csv->rows[j].v) &&
         (!csv->paths || trace_same_path(&csv->paths[i], &csv->paths[j]));
}

/* Resolves each snapshot into change points (em, in time order; count[p]
 * points per pair): per pair the most specific row of the snapshot wins. */
static size_t trace_resolve(trace *t, const trace_csv *csv, size_t *count,
                            trace_csv_emit **em) {
  size_t n = (size_t)csv->nsites, np = n * n, ecap = 0, ne = 0, ccap = 0;
  uint32_t *stamp = mem_calloc(np, sizeof *stamp), snap = 0;
  unsigned char *level = mem_calloc(np, 1);
  size_t *win = mem_calloc(np, sizeof *win), *last = mem_calloc(np, sizeof *last);
  uint32_t *touched = mem_calloc(np, sizeof *touched);
  for (size_t i = 0, j; i < csv->nrows; i = j, t->snapshots++) {
    size_t nt = 0, before = ne;
    snap++;
    for (j = i; j < csv->nrows && csv->rows[j].t == csv->rows[i].t; j++) {
      const trace_csv_row *r = &csv->rows[j];
      unsigned char prec = (unsigned char)(1 + (r->src >= 0) * 2 + (r->dst >= 0));
      size_t a0 = r->src >= 0 ? (size_t)r->src : 0, a1 = r->src >= 0 ? a0 + 1 : n;
      size_t b0 = r->dst >= 0 ? (size_t)r->dst : 0, b1 = r->dst >= 0 ? b0 + 1 : n;
      for (size_t a = a0; a < a1; a++)
        for (size_t b = b0; b < b1; b++) {
          size_t p = a * n + b;
          if (stamp[p] != snap) stamp[p] = snap, level[p] = 0, touched[nt++] = (uint32_t)p;
          if (level[p] < prec) level[p] = prec, win[p] = j;
        }
    }
    for (size_t k = 0; k < nt; k++) {
      uint32_t p = touched[k];
      if (!t->linear && count[p] && trace_same_row(csv, last[p], win[p]))
        continue;  /* step replay: no change */
      mem_grow((void **)em, &ecap, ne + 1, sizeof **em);
      (*em)[ne++] = (trace_csv_emit){p, win[p]};
      last[p] = win[p], count[p]++;
    }
    if (ne > before) {
      mem_grow((void **)&t->change_times, &ccap, t->nchange + 1, sizeof(int64_t));
      t->change_times[t->nchange++] = csv->rows[i].t;
    }
  }
  free(stamp), free(level), free(win), free(last), free(touched);
  return ne;
}

/* Points i and j of t hold the same value (path keys included). */
static bool trace_point_same(const trace *t, size_t i, size_t j) {
  return trace_same(t->vals[i], t->vals[j]) &&
         (!t->paths || trace_same_path(&t->paths[i], &t->paths[j]));
}

/* Sorts the change points by pair (counting sort, stable: each pair's points
 * stay in time order) into off/times/vals. */
static void trace_build(trace *t, const trace_csv *csv) {
  size_t np = (size_t)csv->nsites * (size_t)csv->nsites;
  assert(np < UINT32_MAX);
  size_t *count = mem_calloc(np + 1, sizeof *count);
  trace_csv_emit *em = NULL;
  size_t ne = trace_resolve(t, csv, count, &em);
  t->off = mem_alloc((np + 1) * sizeof *t->off);
  t->off[0] = 0;
  for (size_t p = 0; p < np; p++) t->off[p + 1] = t->off[p] + count[p], count[p] = t->off[p];
  t->times = mem_alloc(ne * sizeof *t->times);
  t->vals = mem_alloc(ne * sizeof *t->vals);
  if (csv->paths) t->paths = mem_alloc(ne * sizeof *t->paths);
  for (size_t k = 0; k < ne; k++) {
    size_t at = count[em[k].pair]++;
    t->times[at] = csv->rows[em[k].row].t;
    t->vals[at] = csv->rows[em[k].row].v;
    if (csv->paths) t->paths[at] = csv->paths[em[k].row];
  }
  for (size_t p = 0; p < np; p++) {
    size_t m = t->off[p + 1] - t->off[p];
    if (m > 1 && (t->linear || !trace_point_same(t, t->off[p], t->off[p + 1] - 1)))
      t->any_wrap = true;
  }
  free(count), free(em);
}

double trace_bytes(double rows, double points, int nsites) {
  return trace_bytes_with(rows, points, nsites, false);
}

/* Refuses csv before trace_build allocates for it when its change points
 * could pass TRACE_MAX_BYTES: per snapshot at most the pairs its rows cover
 * (n^2 for a "*,*" row), at most n^2 in all. An upper bound (step replay
 * drops rows that repeat a value), computed in O(rows). */
static int trace_check_bytes(const trace_csv *csv, const char *name, err *e) {
  double n = csv->nsites, points = 0;
  for (size_t i = 0, j; i < csv->nrows; i = j) {
    double cover = 0;
    for (j = i; j < csv->nrows && csv->rows[j].t == csv->rows[i].t; j++)
      cover += (csv->rows[j].src >= 0 ? 1 : n) * (csv->rows[j].dst >= 0 ? 1 : n);
    points += fmin(cover, n * n);
    double bytes = trace_bytes_with((double)csv->nrows, points, csv->nsites,
                                    csv->paths != NULL);
    if (bytes > (double)TRACE_MAX_BYTES)
      return err_set(e, ERR_MEMORY, "%s:%d: the snapshots up to this one "
                     "expand to up to %.0f change points over %d sites "
                     "('*' stands for every site): %.2f GB, more than the "
                     "%.2f GB a trace may hold", name, csv->rows[i].line,
                     points, csv->nsites, bytes / 1e9,
                     (double)TRACE_MAX_BYTES / 1e9);
  }
  return ERR_OK;
}

/* Frees t's path keys when no point gives one (a header naming them over
 * empty cells): such a trace is one without them. */
static void trace_drop_paths(trace *t) {
  if (!trace_has_path(t)) free(t->paths), t->paths = NULL;
}

trace *trace_parse(const char *text, size_t len, const char *name,
                   const char *const *sites, int nsites, err *e) {
  trace_csv csv;
  if (trace_csv_parse(text, len, name, sites, nsites, &csv, e) ||
      trace_check_bytes(&csv, name, e)) {
    trace_csv_free(&csv);
    return NULL;
  }
  trace *t = mem_calloc(1, sizeof *t);
  t->nsites = csv.nsites;
  t->linear = csv.linear;
  t->loop_ns = csv.loop_ns;
  t->loop_s = csv.loop_s;
  t->rows = csv.nrows;
  trace_build(t, &csv);
  trace_drop_paths(t);
  t->sites = csv.sites, csv.sites = NULL;
  t->comments = csv.comments, t->ncomments = csv.ncomments;
  csv.comments = NULL;
  trace_csv_free(&csv);
  return t;
}

trace *trace_load(const char *path, const char *const *sites, int nsites,
                  err *e) {
  size_t len;
  char *text = file_load(path, "the network trace", FILE_MAX_BYTES, &len, e);
  if (!text) return NULL;
  trace *t = trace_parse(text, len, path, sites, nsites, e);
  free(text);
  return t;
}

void trace_free(trace *t) {
  if (!t) return;
  for (int i = 0; i < t->nsites; i++) free(t->sites[i]);
  free(t->sites), free(t->off), free(t->times), free(t->vals), free(t->paths);
  free(t->change_times);
  for (size_t i = 0; i < t->ncomments; i++)
    free(t->comments[i].key), free(t->comments[i].value);
  free(t->comments);
  free(t);
}

/* ---- replay ---- */

int trace_nsites(const trace *t) { return t->nsites; }

const char *trace_site(const trace *t, int i) {
  assert(i >= 0 && i < t->nsites);
  return t->sites[i];
}

int trace_site_index(const trace *t, const char *name) {
  for (int i = 0; i < t->nsites; i++)  /* a few dozen sites: linear is fine */
    if (strcmp(t->sites[i], name) == 0) return i;
  return -1;
}

/* First index i in T[0..m) with T[i] > r, or m. */
static size_t trace_after(const int64_t *T, size_t m, int64_t r) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (T[mid] <= r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int64_t trace_add_sat(int64_t x, int64_t y) {  /* x, y >= 0 */
  return x > INT64_MAX - y ? TRACE_NEVER : x + y;
}

/* A path key between x (given: > 0, or loss) and y at fraction f: linear
 * where both ends give it, else x's. */
static double trace_lerp_key(double x, double y, double f, bool zero_is_value) {
  return zero_is_value || (x > 0 && y > 0) ? x + f * (y - x) : x;
}

/* Points i and j of t at fraction dt / span from i to j. */
static trace_value trace_lerp(const trace *t, size_t i, size_t j, int64_t dt,
                              int64_t span) {
  double f = (double)dt / (double)span;
  trace_base x = t->vals[i], y = t->vals[j];
  trace_value v = {
      .latency_ms = x.latency_ms + f * (y.latency_ms - x.latency_ms),
      .bandwidth_gbps = x.bandwidth_gbps + f * (y.bandwidth_gbps - x.bandwidth_gbps)};
  if (t->paths) {
    const trace_path *px = &t->paths[i], *py = &t->paths[j];
    v.flow_gbps = trace_lerp_key(px->flow_gbps, py->flow_gbps, f, false);
    v.loss = trace_lerp_key(px->loss, py->loss, f, true);
    v.window_bytes = trace_lerp_key(px->window_bytes, py->window_bytes, f, false);
  }
  return v;
}

/* Point i of t as a value. */
static inline trace_value trace_point(const trace *t, size_t i) {
  return trace_value_of(t->vals[i], t->paths ? &t->paths[i] : NULL);
}

trace_value trace_at(const trace *t, int a, int b, int64_t t_ns) {
  assert(a >= 0 && a < t->nsites && b >= 0 && b < t->nsites && t_ns >= 0);
  size_t p = (size_t)a * (size_t)t->nsites + (size_t)b, o = t->off[p];
  size_t m = t->off[p + 1] - o;
  const int64_t *T = t->times + o;
  int64_t r = t->loop_ns ? t_ns % t->loop_ns : t_ns;
  size_t i = trace_after(T, m, r) - 1;
  if (!t->linear || r == T[i] || m == 1) return trace_point(t, o + i);
  if (i + 1 < m) return trace_lerp(t, o + i, o + i + 1, r - T[i], T[i + 1] - T[i]);
  if (t->loop_ns) return trace_lerp(t, o + i, o, r - T[i], t->loop_ns - T[i]);
  return trace_point(t, o + i);
}

static int trace_cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The least, median and greatest of v[0 .. n), n >= 1, sorting v. */
static trace_spread trace_spread_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, trace_cmp_double);
  double mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return (trace_spread){.min = v[0], .median = mid, .max = v[n - 1]};
}

void trace_site_spread(const trace *t, int a, int64_t t_ns,
                       trace_spread *latency_ms, trace_spread *bandwidth_gbps) {
  assert(t->nsites >= 2 && a >= 0 && a < t->nsites);
  size_t n = 0;
  double *lat = mem_alloc(2 * (size_t)t->nsites * sizeof *lat);
  double *bw = lat + t->nsites;
  for (int b = 0; b < t->nsites; b++) {
    if (b == a) continue;
    trace_value v = trace_at(t, a, b, t_ns);
    lat[n] = v.latency_ms, bw[n++] = v.bandwidth_gbps;
  }
  *latency_ms = trace_spread_of(lat, n);
  *bandwidth_gbps = trace_spread_of(bw, n);
  free(lat);
}

/* Next change after t_ns among sorted times T[0..m) (T[0] == 0), given
 * whether the period start itself is a change. */
static int64_t trace_next(const trace *t, const int64_t *T, size_t m,
                          bool wrap, int64_t t_ns) {
  if (!t->loop_ns) {
    size_t i = trace_after(T, m, t_ns);
    return i < m ? T[i] : TRACE_NEVER;
  }
  int64_t base = t_ns - t_ns % t->loop_ns;
  size_t i = trace_after(T, m, t_ns - base);
  if (i < m) return trace_add_sat(base, T[i]);
  int64_t next = trace_add_sat(base, t->loop_ns);
  if (wrap || next == TRACE_NEVER) return next;
  return m > 1 ? trace_add_sat(next, T[1]) : TRACE_NEVER;
}

int64_t trace_next_change(const trace *t, int a, int b, int64_t t_ns) {
  assert(a >= 0 && a < t->nsites && b >= 0 && b < t->nsites && t_ns >= 0);
  size_t p = (size_t)a * (size_t)t->nsites + (size_t)b, o = t->off[p];
  size_t m = t->off[p + 1] - o;
  bool wrap = m > 1 && (t->linear || !trace_point_same(t, o, o + m - 1));
  return trace_next(t, t->times + o, m, wrap, t_ns);
}

int64_t trace_next_change_any(const trace *t, int64_t t_ns) {
  assert(t_ns >= 0);
  return trace_next(t, t->change_times, t->nchange, t->any_wrap, t_ns);
}

bool trace_is_static(const trace *t) { return t->nchange == 1; }
bool trace_is_linear(const trace *t) { return t->linear; }
double trace_loop_after_s(const trace *t) { return t->loop_s; }

double trace_duration_s(const trace *t) {
  return (double)t->change_times[t->nchange - 1] / TRACE_NS_PER_S;
}

size_t trace_rows(const trace *t) { return t->rows; }
size_t trace_snapshots(const trace *t) { return t->snapshots; }
size_t trace_points(const trace *t) {
  return t->off[(size_t)t->nsites * (size_t)t->nsites];
}

void trace_extremes(const trace *t, trace_value *lo, trace_value *hi) {
  size_t n = trace_points(t);
  *lo = *hi = trace_value_of(t->vals[0], NULL);
  for (size_t i = 1; i < n; i++) {
    trace_base v = t->vals[i];
    lo->latency_ms = fmin(lo->latency_ms, v.latency_ms);
    lo->bandwidth_gbps = fmin(lo->bandwidth_gbps, v.bandwidth_gbps);
    hi->latency_ms = fmax(hi->latency_ms, v.latency_ms);
    hi->bandwidth_gbps = fmax(hi->bandwidth_gbps, v.bandwidth_gbps);
  }
  for (size_t i = 0; t->paths && i < n; i++) {
    trace_value v = trace_point(t, i);
    for (int k = 0; k < TRACE_NPATH_KEYS; k++) {
      double x = trace_value_path(&v, k);
      double *l = (double *)((char *)lo + trace_path_keys[k].offset);
      double *h = (double *)((char *)hi + trace_path_keys[k].offset);
      if (x == 0) continue; /* absent */
      *l = *l == 0 ? x : fmin(*l, x);
      *h = fmax(*h, x);
    }
  }
}

bool trace_has_path(const trace *t) {
  size_t n = trace_points(t);
  for (size_t i = 0; t->paths && i < n; i++)
    if (t->paths[i].flow_gbps != 0 || t->paths[i].loss != 0 ||
        t->paths[i].window_bytes != 0)
      return true;
  return false;
}

const char *trace_comment(const trace *t, const char *key) {
  for (size_t i = 0; i < t->ncomments; i++)
    if (strcmp(t->comments[i].key, key) == 0) return t->comments[i].value;
  return NULL;
}

size_t trace_ncomments(const trace *t) { return t->ncomments; }

const char *trace_comment_key(const trace *t, size_t i) {
  assert(i < t->ncomments);
  return t->comments[i].key;
}

const char *trace_comment_value(const trace *t, size_t i) {
  assert(i < t->ncomments);
  return t->comments[i].value;
}

uint64_t trace_hash(const trace *t) {
  uint64_t h = hash_u64(HASH_INIT, (uint64_t)t->nsites);
  for (int i = 0; i < t->nsites; i++) h = hash_str(h, t->sites[i]);
  size_t np = (size_t)t->nsites * (size_t)t->nsites, n = trace_points(t);
  h = hash_bytes(h, t->off, (np + 1) * sizeof *t->off);
  h = hash_bytes(h, t->times, n * sizeof *t->times);
  for (size_t i = 0; i < n; i++)
    h = hash_double(hash_double(h, t->vals[i].latency_ms),
                    t->vals[i].bandwidth_gbps);
  h = hash_u64(h, t->linear);
  h = hash_u64(h, (uint64_t)t->loop_ns);
  if (!trace_has_path(t)) return h; /* the hash before path keys existed */
  h = hash_str(h, "path keys");
  for (size_t i = 0; i < n; i++)
    h = hash_double(hash_double(hash_double(h, t->paths[i].flow_gbps),
                                t->paths[i].loss),
                    t->paths[i].window_bytes);
  return h;
}

void trace_scale(trace *t, double latency_scale, double bandwidth_scale) {
  assert(latency_scale > 0 && bandwidth_scale > 0);
  size_t n = trace_points(t);
  for (size_t i = 0; i < n; i++) {
    t->vals[i].latency_ms *= latency_scale;
    t->vals[i].bandwidth_gbps *= bandwidth_scale;
  }
}

void trace_set_static(trace *t, int a, int b, trace_value v) {
  size_t p = (size_t)a * (size_t)t->nsites + (size_t)b;
  assert(a >= 0 && b >= 0 && a < t->nsites && b < t->nsites);
  assert(t->off[p + 1] - t->off[p] == 1); /* the pair never changes */
  t->vals[t->off[p]] = trace_base_of(v);
  if (!t->paths && trace_value_has_path(&v))
    t->paths = mem_calloc(trace_points(t), sizeof *t->paths);
  if (t->paths) t->paths[t->off[p]] = trace_path_of(v);
}

/* A copy of n elements of size each (NULL for none). */
static void *dup_array(const void *p, size_t n, size_t size) {
  if (!p || n == 0) return NULL;
  void *q = mem_alloc(n * size);
  memcpy(q, p, n * size);
  return q;
}

trace *trace_copy(const trace *t) {
  trace *c = mem_alloc(sizeof *c);
  *c = *t;
  size_t np = (size_t)t->nsites * (size_t)t->nsites;
  c->sites = mem_alloc(((size_t)t->nsites + 1) * sizeof *c->sites);
  for (int i = 0; i < t->nsites; i++) c->sites[i] = mem_strdup(t->sites[i]);
  c->off = dup_array(t->off, np + 1, sizeof *t->off);
  c->times = dup_array(t->times, t->off[np], sizeof *t->times);
  c->vals = dup_array(t->vals, t->off[np], sizeof *t->vals);
  c->paths = t->paths ? dup_array(t->paths, t->off[np], sizeof *t->paths)
                      : NULL;
  c->change_times = dup_array(t->change_times, t->nchange,
                              sizeof *t->change_times);
  c->comments = t->ncomments ? mem_alloc(t->ncomments * sizeof *c->comments)
                             : NULL;
  for (size_t i = 0; i < t->ncomments; i++)
    c->comments[i] = (trace_csv_comment){mem_strdup(t->comments[i].key),
                                         mem_strdup(t->comments[i].value)};
  return c;
}

void trace_scale_pair(trace *t, int a, int b, double latency_scale,
                      double bandwidth_scale) {
  assert(a >= 0 && b >= 0 && a < t->nsites && b < t->nsites);
  assert(latency_scale > 0 && bandwidth_scale > 0);
  size_t p = (size_t)a * (size_t)t->nsites + (size_t)b;
  for (size_t i = t->off[p]; i < t->off[p + 1]; i++) {
    t->vals[i].latency_ms *= latency_scale;
    t->vals[i].bandwidth_gbps *= bandwidth_scale;
  }
}

void trace_set_pair_path(trace *t, int a, int b, int k, double x) {
  assert(a >= 0 && b >= 0 && a < t->nsites && b < t->nsites);
  assert(k >= 0 && k < TRACE_NPATH_KEYS && trace_path_ok(k, x));
  if (!t->paths) t->paths = mem_calloc(trace_points(t) + 1, sizeof *t->paths);
  size_t p = (size_t)a * (size_t)t->nsites + (size_t)b;
  for (size_t i = t->off[p]; i < t->off[p + 1]; i++) {
    trace_value v = trace_point(t, i);
    *(double *)((char *)&v + trace_path_keys[k].offset) = x;
    t->paths[i] = trace_path_of(v);
  }
}
