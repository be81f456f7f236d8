/* cost_flow: the bottleneck matching of two groups over their classes of
 * equal devices, for any number of classes (cost_parts.h's
 * cost_bottleneck_flow): the least threshold t at which the transport
 * problem -- rows in classes of ca[x] units, columns in classes of cb[y]
 * units, an edge x-y usable when v[x][y] <= t -- sends every unit.
 * Why it is the device-level value: a perfect matching of the expanded
 * graph is an integral transport and an integral transport expands to a
 * perfect matching (each unit of x sent to y pairs one row of x with one
 * column of y), so both are feasible at the same thresholds, and both
 * answers are the least matrix value that is; the double is the same.
 * Invariant: f[] is always a feasible partial transport over the edges <=
 * the threshold in force (row sums <= ca, column sums <= cb); raising the
 * threshold only adds edges, so a flow stays feasible and grows by
 * augmenting paths (Ford-Fulkerson in the residual graph, breadth first
 * over bit sets: a row's usable columns, a column's rows that send to it).
 * The threshold is searched over the values above the lower bound by
 * their medians (quickselect: O(values) in all, no sort), each probe warm
 * started from the flow of the last infeasible one. Cost: O(da x db) a
 * probe and O((da + db) x words) an augmenting path, over about
 * log2(da x db) probes. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost_parts.h"

void cost_flow_free(cost_flow *w) {
  free(w->f), free(w->save), free(w->vals);
  free(w->rs), free(w->rd), free(w->par), free(w->queue);
  free(w->adj), free(w->snd), free(w->seen);
  *w = (cost_flow){0};
}

/* Room for da x db classes. */
static void flow_reserve(cost_flow *w, int da, int db) {
  size_t e = (size_t)da * db, nodes = (size_t)da + db;
  if (e > w->cap_e) {
    free(w->f), free(w->save), free(w->vals);
    w->f = mem_alloc(e * sizeof *w->f);
    w->save = mem_alloc(e * sizeof *w->save);
    w->vals = mem_alloc(e * sizeof *w->vals);
    w->cap_e = e;
  }
  if (nodes > w->cap_n) {
    free(w->rs), free(w->rd), free(w->par), free(w->queue);
    free(w->adj), free(w->snd), free(w->seen);
    w->rs = mem_alloc(nodes * sizeof *w->rs);
    w->rd = mem_alloc(nodes * sizeof *w->rd);
    w->par = mem_alloc(nodes * sizeof *w->par);
    w->queue = mem_alloc(nodes * sizeof *w->queue);
    size_t words = nodes / 64 + 1;
    w->adj = mem_alloc(nodes * words * sizeof *w->adj);
    w->snd = mem_alloc(nodes * words * sizeof *w->snd);
    w->seen = mem_alloc(2 * words * sizeof *w->seen);
    w->cap_n = nodes;
  }
  w->wa = da / 64 + 1, w->wb = db / 64 + 1;
}

static void bit_set(uint64_t *s, int i) { s[i >> 6] |= (uint64_t)1 << (i & 63); }
static void bit_clear(uint64_t *s, int i) {
  s[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/* The residual supplies and demands of the flow in w->f, and the rows
 * sending to each column: the units it sends. */
static int flow_residuals(cost_flow *w, int da, const int *ca, int db,
                          const int *cb) {
  int sent = 0;
  memcpy(w->rs, ca, (size_t)da * sizeof *ca);
  memcpy(w->rd, cb, (size_t)db * sizeof *cb);
  memset(w->snd, 0, (size_t)db * w->wa * sizeof *w->snd);
  for (int x = 0; x < da; x++)
    for (int y = 0; y < db; y++) {
      int f = w->f[x * db + y];
      w->rs[x] -= f, w->rd[y] -= f, sent += f;
      if (f) bit_set(w->snd + (size_t)y * w->wa, x);
    }
  return sent;
}

/* adj := each row's columns usable at t; then sends what those edges can
 * carry directly, row by row: the units sent. */
static int flow_fill(cost_flow *w, int da, int db, const double *v, double t) {
  int sent = 0;
  memset(w->adj, 0, (size_t)da * w->wb * sizeof *w->adj);
  for (int x = 0; x < da; x++) {
    uint64_t *row = w->adj + (size_t)x * w->wb;
    for (int y = 0; y < db; y++) {
      if (v[x * db + y] > t) continue;
      bit_set(row, y);
      if (w->rs[x] == 0 || w->rd[y] == 0) continue;
      int m = w->rs[x] < w->rd[y] ? w->rs[x] : w->rd[y];
      if (!w->f[x * db + y]) bit_set(w->snd + (size_t)y * w->wa, x);
      w->f[x * db + y] += m;
      w->rs[x] -= m, w->rd[y] -= m, sent += m;
    }
  }
  return sent;
}

/* The units the path ending at column node end can move: the least of its
 * source's supply, end's demand and the flows it cancels. */
static int path_capacity(const cost_flow *w, int da, int db, int end) {
  int m = w->rd[end - da];
  for (int c = end;;) {
    int x = w->par[c];
    if (w->par[x] == -1) return w->rs[x] < m ? w->rs[x] : m;
    c = w->par[x];
    int f = w->f[x * db + (c - da)];
    m = f < m ? f : m;
  }
}

/* Moves m units along the path ending at column node end. */
static void path_push(cost_flow *w, int da, int db, int end, int m) {
  w->rd[end - da] -= m;
  for (int c = end;;) { /* c: a column its row x now sends m more to */
    int x = w->par[c], y = c - da;
    if (!w->f[x * db + y]) bit_set(w->snd + (size_t)y * w->wa, x);
    w->f[x * db + y] += m;
    if (w->par[x] == -1) {
      w->rs[x] -= m;
      return;
    }
    c = w->par[x], y = c - da;
    if ((w->f[x * db + y] -= m) == 0) bit_clear(w->snd + (size_t)y * w->wa, x);
  }
}

/* One augmenting path, breadth first from every row with supply left:
 * nodes 0 .. da-1 rows, da .. da+db-1 columns; par[] the node each was
 * reached from (-1: a source row). The units it moved, 0 when none. */
static int flow_augment(cost_flow *w, int da, int db) {
  uint64_t *seen_r = w->seen, *seen_c = w->seen + w->wa;
  memset(w->seen, 0, (size_t)(w->wa + w->wb) * sizeof *w->seen);
  int head = 0, tail = 0, end = -1;
  for (int x = 0; x < da; x++)
    if (w->rs[x] > 0) w->par[x] = -1, w->queue[tail++] = x, bit_set(seen_r, x);
  while (head < tail && end < 0) {
    int u = w->queue[head++];
    if (u < da) { /* a row: forward along any usable edge */
      const uint64_t *row = w->adj + (size_t)u * w->wb;
      for (int i = 0; i < w->wb && end < 0; i++)
        for (uint64_t b = row[i] & ~seen_c[i]; b; b &= b - 1) {
          int y = i * 64 + __builtin_ctzll(b);
          seen_c[i] |= b & -b;
          w->par[da + y] = u;
          if (w->rd[y] > 0) {
            end = da + y;
            break;
          }
          w->queue[tail++] = da + y;
        }
    } else { /* a column: back along an edge that carries flow */
      const uint64_t *snd = w->snd + (size_t)(u - da) * w->wa;
      for (int i = 0; i < w->wa; i++)
        for (uint64_t b = snd[i] & ~seen_r[i]; b; b &= b - 1) {
          int x = i * 64 + __builtin_ctzll(b);
          seen_r[i] |= b & -b;
          w->par[x] = u, w->queue[tail++] = x;
        }
    }
  }
  if (end < 0) return 0;
  int m = path_capacity(w, da, db, end);
  path_push(w, da, db, end, m);
  return m;
}

/* Grows the flow to a maximum one over the edges <= t: the units added. */
static int flow_grow(cost_flow *w, int da, int db, const double *v, double t) {
  int sent = flow_fill(w, da, db, v, t), m;
  while ((m = flow_augment(w, da, db)) > 0) sent += m;
  return sent;
}

/* The lower bound: every row and every column uses one of its edges. */
static double flow_lower_bound(int da, int db, const double *v) {
  double lb = -INFINITY;
  for (int x = 0; x < da; x++) {
    double m = INFINITY;
    for (int y = 0; y < db; y++) m = v[x * db + y] < m ? v[x * db + y] : m;
    lb = m > lb ? m : lb;
  }
  for (int y = 0; y < db; y++) {
    double m = INFINITY;
    for (int x = 0; x < da; x++) m = v[x * db + y] < m ? v[x * db + y] : m;
    lb = m > lb ? m : lb;
  }
  return lb;
}

/* Rearranges a[0 .. n) so that a[k] holds the value a sort would put
 * there, the smaller ones before it, the others after (Hoare's
 * quickselect, middle pivots: deterministic). */
static void select_kth(double *a, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double p = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) {
        double t = a[i];
        a[i++] = a[j], a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/* Whether the flow saved in w->save grows to send every unit at t; the
 * grown flow is left in w->f. */
static bool probe(cost_flow *w, int da, const int *ca, int db, const int *cb,
                  const double *v, double t, int total) {
  memcpy(w->f, w->save, (size_t)da * db * sizeof *w->f);
  int got = flow_residuals(w, da, ca, db, cb);
  return got + flow_grow(w, da, db, v, t) == total;
}

double cost_bottleneck_flow(int da, const int *ca, int db, const int *cb,
                            const double *v, int *flow, cost_flow *w) {
  assert(da >= 1 && db >= 1);
  flow_reserve(w, da, db);
  size_t e = (size_t)da * db;
  int total = 0;
  for (int x = 0; x < da; x++) total += ca[x];
  memset(w->save, 0, e * sizeof *w->save);
  double t = flow_lower_bound(da, db, v);
  if (!probe(w, da, ca, db, cb, v, t, total)) {
    /* Candidates: the values above the last infeasible threshold and
     * below the least feasible one found (the largest value always is). */
    int u = 0;
    for (size_t i = 0; i < e; i++)
      if (v[i] > t) w->vals[u++] = v[i];
    memcpy(w->save, w->f, e * sizeof *w->f); /* feasible below t too */
    double best = -INFINITY;
    for (int i = 0; i < u; i++) best = w->vals[i] > best ? w->vals[i] : best;
    while (u > 0) {
      int mid = u / 2;
      select_kth(w->vals, u, mid);
      double x = w->vals[mid];
      if (probe(w, da, ca, db, cb, v, x, total)) {
        best = x;
        u = mid; /* the values below x */
      } else {
        memcpy(w->save, w->f, e * sizeof *w->f);
        int keep = 0; /* the values above x */
        for (int i = mid + 1; i < u; i++)
          if (w->vals[i] > x) w->vals[keep++] = w->vals[i];
        u = keep;
      }
    }
    t = best;
    bool ok = probe(w, da, ca, db, cb, v, t, total);
    assert(ok);
    (void)ok;
  }
  if (flow) memcpy(flow, w->f, e * sizeof *flow);
  return t;
}
