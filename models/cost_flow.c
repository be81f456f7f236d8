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
 * augmenting paths (Ford-Fulkerson in the residual graph, breadth first).
 * Cost: O(d^2) a search for d = da + db, one search per augmentation; the
 * threshold is raised value by value from the lower bound for a few steps,
 * then found by a binary search over the sorted values, each probe warm
 * started from the flow of the last infeasible one. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost_parts.h"

/* Values tried one by one above the lower bound before the binary search. */
#define FLOW_RAISE_STEPS 4

void cost_flow_free(cost_flow *w) {
  free(w->f), free(w->save), free(w->vals);
  free(w->rs), free(w->rd), free(w->par), free(w->queue);
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
    w->rs = mem_alloc(nodes * sizeof *w->rs);
    w->rd = mem_alloc(nodes * sizeof *w->rd);
    w->par = mem_alloc(nodes * sizeof *w->par);
    w->queue = mem_alloc(nodes * sizeof *w->queue);
    w->cap_n = nodes;
  }
}

/* The residual supplies and demands of the flow in w->f: the units it
 * sends. */
static int flow_residuals(cost_flow *w, int da, const int *ca, int db,
                          const int *cb) {
  int sent = 0;
  memcpy(w->rs, ca, (size_t)da * sizeof *ca);
  memcpy(w->rd, cb, (size_t)db * sizeof *cb);
  for (int x = 0; x < da; x++)
    for (int y = 0; y < db; y++) {
      int f = w->f[x * db + y];
      w->rs[x] -= f, w->rd[y] -= f, sent += f;
    }
  return sent;
}

/* Sends what the usable edges can carry directly, row by row: the units
 * sent. */
static int flow_fill(cost_flow *w, int da, int db, const double *v, double t) {
  int sent = 0;
  for (int x = 0; x < da; x++)
    for (int y = 0; y < db && w->rs[x] > 0; y++) {
      if (v[x * db + y] > t || w->rd[y] == 0) continue;
      int m = w->rs[x] < w->rd[y] ? w->rs[x] : w->rd[y];
      w->f[x * db + y] += m;
      w->rs[x] -= m, w->rd[y] -= m, sent += m;
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

/* One augmenting path, breadth first from every row with supply left:
 * nodes 0 .. da-1 rows, da .. da+db-1 columns; par[] the node each was
 * reached from (-1: a source row, -2: unvisited). The units it moved, 0
 * when there is none. */
static int flow_augment(cost_flow *w, int da, int db, const double *v,
                        double t) {
  int nodes = da + db, head = 0, tail = 0, end = -1;
  for (int i = 0; i < nodes; i++) w->par[i] = -2;
  for (int x = 0; x < da; x++)
    if (w->rs[x] > 0) w->par[x] = -1, w->queue[tail++] = x;
  while (head < tail && end < 0) {
    int u = w->queue[head++];
    if (u < da) { /* a row: forward along any usable edge */
      for (int y = 0; y < db; y++) {
        if (w->par[da + y] != -2 || v[u * db + y] > t) continue;
        w->par[da + y] = u;
        if (w->rd[y] > 0) {
          end = da + y;
          break;
        }
        w->queue[tail++] = da + y;
      }
    } else { /* a column: back along an edge that carries flow */
      for (int x = 0; x < da; x++)
        if (w->par[x] == -2 && w->f[x * db + (u - da)] > 0)
          w->par[x] = u, w->queue[tail++] = x;
    }
  }
  if (end < 0) return 0;
  int m = path_capacity(w, da, db, end);
  w->rd[end - da] -= m;
  for (int c = end;;) { /* c: a column its row x now sends m more to */
    int x = w->par[c];
    w->f[x * db + (c - da)] += m;
    if (w->par[x] == -1) {
      w->rs[x] -= m;
      return m;
    }
    c = w->par[x];
    w->f[x * db + (c - da)] -= m;
  }
}

/* Grows the flow to a maximum one over the edges <= t: the units added. */
static int flow_grow(cost_flow *w, int da, int db, const double *v, double t) {
  int sent = flow_fill(w, da, db, v, t), m;
  while ((m = flow_augment(w, da, db, v, t)) > 0) sent += m;
  return sent;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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

/* w->vals := the values of v above lb, sorted, distinct: how many. */
static int values_above(cost_flow *w, size_t e, const double *v, double lb) {
  int u = 0, m = 0;
  for (size_t i = 0; i < e; i++)
    if (v[i] > lb) w->vals[u++] = v[i];
  qsort(w->vals, (size_t)u, sizeof *w->vals, cmp_double);
  for (int i = 0; i < u; i++)
    if (m == 0 || w->vals[i] != w->vals[m - 1]) w->vals[m++] = w->vals[i];
  return m;
}

double cost_bottleneck_flow(int da, const int *ca, int db, const int *cb,
                            const double *v, int *flow, cost_flow *w) {
  assert(da >= 1 && db >= 1);
  flow_reserve(w, da, db);
  size_t e = (size_t)da * db;
  int total = 0;
  for (int x = 0; x < da; x++) total += ca[x];
  memset(w->f, 0, e * sizeof *w->f);
  int sent = flow_residuals(w, da, ca, db, cb);
  assert(sent == 0);
  double t = flow_lower_bound(da, db, v);
  sent += flow_grow(w, da, db, v, t);
  int u = sent < total ? values_above(w, e, v, t) : 0, lo = 0;
  for (; sent < total && lo < FLOW_RAISE_STEPS && lo < u; lo++)
    sent += flow_grow(w, da, db, v, t = w->vals[lo]);
  if (sent < total) { /* vals[lo - 1] fails, vals[u - 1] works */
    int hi = u - 1;
    memcpy(w->save, w->f, e * sizeof *w->f);
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      memcpy(w->f, w->save, e * sizeof *w->f);
      int got = flow_residuals(w, da, ca, db, cb);
      got += flow_grow(w, da, db, v, w->vals[mid]);
      if (got == total) hi = mid;
      else lo = mid + 1, memcpy(w->save, w->f, e * sizeof *w->f);
    }
    t = w->vals[lo];
    memcpy(w->f, w->save, e * sizeof *w->f);
    flow_residuals(w, da, ca, db, cb);
    flow_grow(w, da, db, v, t);
  }
  if (flow) memcpy(flow, w->f, e * sizeof *flow);
  return t;
}
