/* cost_solve: the cost model's two solvers over plain matrices (see
 * cost.h): the bottleneck matching of two groups and the open-loop TSP
 * over the groups, with the scratch they work in. */
#include "models/cost.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost_parts.h"

double cost_scratch_bytes(int replicas, int stages, bool devices) {
  double k = replicas, n = stages;
  double b = n * n * 2 * sizeof(double) + k * 6 * sizeof(int) +
             n * 6 * sizeof(double);
  if (devices) b += k * k * (2 * sizeof(double) + sizeof(int));
  if (stages <= COST_HELD_KARP_MAX) b += ldexp(n, stages) * sizeof(double);
  return b;
}

cost_scratch *cost_scratch_new(int replicas, int stages) {
  cost_scratch *w = mem_calloc(1, sizeof *w);
  int k = replicas, n = stages;
  w->kmax = k;
  w->nmax = n;
  w->row_of = mem_alloc((size_t)k * sizeof(int));
  w->col_of = mem_alloc((size_t)k * sizeof(int));
  w->stamp = mem_calloc((size_t)k, sizeof(int));
  w->match = mem_alloc((size_t)k * sizeof(int));
  w->idx = mem_alloc((size_t)k * sizeof(int));
  w->gw = mem_alloc((size_t)n * n * sizeof *w->gw);
  w->wt = mem_alloc((size_t)n * n * sizeof *w->wt);
  w->order = mem_alloc((size_t)n * sizeof(int));
  w->tmp = mem_alloc((size_t)n * sizeof(int));
  w->sig = mem_alloc((size_t)n * 2 * sizeof *w->sig);
  w->key = mem_alloc((size_t)n * 2 * sizeof *w->key);
  w->sw = k <= 8 ? 1 : 2;
  cost_memo_init(&w->pairs, 2 * w->sw, COST_MEMO_PAIRS);
  cost_memo_init(&w->paths, w->sw * n, COST_MEMO_PATHS);
  if (n <= COST_HELD_KARP_MAX) {
    /* zeroed: held_karp_fill reads entries outside a row's subset */
    w->hk = mem_calloc(((size_t)1 << n) * n, sizeof *w->hk);
  }
  return w;
}

double *cost_scratch_square(cost_scratch *s) {
  if (!s->w) {
    size_t k = (size_t)s->kmax;
    s->w = mem_alloc(k * k * sizeof *s->w);
    s->vals = mem_alloc(k * k * sizeof *s->vals);
    s->pos = mem_alloc(k * k * sizeof *s->pos);
  }
  return s->w;
}

void cost_scratch_free(cost_scratch *w) {
  if (!w) return;
  free(w->w), free(w->vals), free(w->pos), free(w->row_of), free(w->col_of);
  free(w->stamp), free(w->match), free(w->idx), free(w->gw), free(w->wt);
  free(w->order), free(w->tmp), free(w->hk);
  free(w->sig), free(w->key);
  cost_memo_free(&w->pairs), cost_memo_free(&w->paths);
  cost_flow_free(&w->flow);
  free(w->cls_at), free(w->cls_cnt), free(w->cls_of), free(w->cls_v);
  free(w->cls_flow), free(w->cls_next);
  free(w);
}

/* ---- bottleneck matching: threshold + augmenting paths (Kuhn) ---- */

/* Tries to match row i using edges <= t (depth-first augmenting path).
 * For k <= 64 the edges <= t of row i are the bit mask adj[i]; above that
 * the weights are compared directly. */
static bool augment(cost_scratch *s, int k, const double *w, double t, int i,
                    const uint64_t *adj, uint64_t *seen) {
  if (adj) {
    for (uint64_t m = adj[i] & ~*seen; m; m &= m - 1) {
      int j = __builtin_ctzll(m);
      *seen |= (uint64_t)1 << j;
      if (s->row_of[j] < 0 || augment(s, k, w, t, s->row_of[j], adj, seen)) {
        s->row_of[j] = i;
        s->col_of[i] = j;
        return true;
      }
    }
    return false;
  }
  for (int j = 0; j < k; j++) {
    if (w[i * k + j] > t || s->stamp[j] == s->epoch) continue;
    s->stamp[j] = s->epoch;
    if (s->row_of[j] < 0 || augment(s, k, w, t, s->row_of[j], NULL, NULL)) {
      s->row_of[j] = i;
      s->col_of[i] = j;
      return true;
    }
  }
  return false;
}

/* True when the edges <= t hold a perfect matching (left in col_of). */
static bool perfect_at(cost_scratch *s, int k, const double *w, double t) {
  uint64_t adj[64];
  bool masks = k <= 64;
  if (masks)
    for (int i = 0; i < k; i++) {
      adj[i] = 0;
      for (int j = 0; j < k; j++)
        adj[i] |= (uint64_t)(w[i * k + j] <= t) << j;
    }
  for (int j = 0; j < k; j++) s->row_of[j] = -1;
  for (int i = 0; i < k; i++) {
    uint64_t seen = 0;
    if (!masks && ++s->epoch == 0) { /* wrapped: clear the marks once */
      memset(s->stamp, 0, (size_t)s->kmax * sizeof(int));
      s->epoch = 1;
    }
    if (!augment(s, k, w, t, i, masks ? adj : NULL, &seen)) return false;
  }
  return true;
}

bool cost_match_at(cost_scratch *s, int k, const double *w, double t,
                   int *match) {
  if (!perfect_at(s, k, w, t)) return false;
  memcpy(match, s->col_of, (size_t)k * sizeof *match);
  return true;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts a few doubles ascending (k^2 values, k small: insertion sort beats
 * qsort's call overhead). */
static void sort_small(double *v, int n) {
  for (int i = 1; i < n; i++) {
    double x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) v[j + 1] = v[j], j--;
    v[j + 1] = x;
  }
}

/* Tries the matrix values above *t in increasing order, at most
 * COST_RAISE_STEPS of them, keeping one matching as edges are added (Kuhn:
 * a maximum matching grows by augmenting its free rows). True with *t the
 * least value that holds a perfect matching; false, with *t the last value
 * tried (no value up to it holds one), when the steps ran out. The value
 * is the binary search's: the least feasible threshold. k <= 64. */
#define COST_RAISE_STEPS 8
static bool raise_threshold(cost_scratch *s, int k, const double *w,
                            double *t) {
  uint64_t adj[64], free_rows = k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
  int m = 0; /* the entries above *t: values in vals, places in pos */
  for (int i = 0; i < k; i++) {
    adj[i] = 0;
    for (int j = 0; j < k; j++) {
      double x = w[i * k + j];
      if (x <= *t) adj[i] |= (uint64_t)1 << j;
      else s->vals[m] = x, s->pos[m++] = i * k + j;
    }
  }
  for (int j = 0; j < k; j++) s->row_of[j] = -1;
  for (int step = 0; step < COST_RAISE_STEPS && m; step++) {
    double next = INFINITY;
    for (int q = 0; q < m; q++) next = s->vals[q] < next ? s->vals[q] : next;
    *t = next;
    int kept = 0; /* the entries equal to next join adj */
    for (int q = 0; q < m; q++) {
      int at = s->pos[q];
      if (s->vals[q] == next) adj[at / k] |= (uint64_t)1 << (at % k);
      else s->vals[kept] = s->vals[q], s->pos[kept++] = at;
    }
    m = kept;
    for (uint64_t f = free_rows; f; f &= f - 1) {
      int i = __builtin_ctzll(f);
      uint64_t seen = 0;
      if (augment(s, k, w, next, i, adj, &seen))
        free_rows &= ~((uint64_t)1 << i);
    }
    if (!free_rows) return true;
  }
  return false;
}

double cost_bottleneck_match(int k, const double *w, int *match,
                             cost_scratch *s) {
  assert(k >= 1 && k <= s->kmax);
  cost_scratch_square(s); /* vals and pos */
  /* Lower bound: every row and every column must use one of its edges. */
  double lb = -INFINITY;
  for (int i = 0; i < k; i++) {
    double rmin = INFINITY, cmin = INFINITY;
    for (int j = 0; j < k; j++) {
      rmin = w[i * k + j] < rmin ? w[i * k + j] : rmin;
      cmin = w[j * k + i] < cmin ? w[j * k + i] : cmin;
    }
    lb = rmin > lb ? rmin : lb;
    lb = cmin > lb ? cmin : lb;
  }
  /* Often the bound is the answer: one matching decides it. */
  if (perfect_at(s, k, w, lb)) {
    if (match) memcpy(match, s->col_of, (size_t)k * sizeof *match);
    return lb;
  }
  /* Usually a few values above it: raise the threshold value by value. */
  if (k <= 64 && raise_threshold(s, k, w, &lb)) {
    if (match) {
      bool ok = perfect_at(s, k, w, lb); /* the pairing a cold search finds */
      assert(ok);
      (void)ok;
      memcpy(match, s->col_of, (size_t)k * sizeof *match);
    }
    return lb;
  }
  int m = 0;
  for (int i = 0; i < k * k; i++)
    if (w[i] > lb) s->vals[m++] = w[i];
  if (m <= 256) sort_small(s->vals, m);
  else qsort(s->vals, (size_t)m, sizeof *s->vals, cmp_double);
  int u = 0;
  for (int i = 0; i < m; i++)
    if (u == 0 || s->vals[i] != s->vals[u - 1]) s->vals[u++] = s->vals[i];
  /* The answer is a matrix value >= lb; the largest always works. */
  int lo = 0, hi = u - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (perfect_at(s, k, w, s->vals[mid])) hi = mid;
    else lo = mid + 1;
  }
  if (match) {
    bool ok = perfect_at(s, k, w, s->vals[lo]);
    assert(ok);
    (void)ok;
    memcpy(match, s->col_of, (size_t)k * sizeof *match);
  }
  return s->vals[lo];
}

/* ---- bottleneck matching over classes of equal rows and columns ---- */

/* Whether the edges <= t hold a perfect matching of the expanded graph:
 * Hall's condition over unions of whole row classes (a partial class only
 * adds rows with no new neighbours). sb[m]: the columns in classes m. */
static bool classes_feasible(int da, const int *ca, int db, const double *v,
                             const int *sb, double t) {
  uint32_t nb[1 << COST_CLASSES_MAX], one[COST_CLASSES_MAX];
  int sa[1 << COST_CLASSES_MAX];
  for (int x = 0; x < da; x++) {
    one[x] = 0;
    for (int y = 0; y < db; y++) one[x] |= (uint32_t)(v[x * db + y] <= t) << y;
  }
  nb[0] = 0, sa[0] = 0;
  for (uint32_t m = 1; m < (uint32_t)1 << da; m++) {
    int x = __builtin_ctz(m);
    nb[m] = nb[m & (m - 1)] | one[x];
    sa[m] = sa[m & (m - 1)] + ca[x];
    if (sa[m] > sb[nb[m]]) return false;
  }
  return true;
}

double cost_bottleneck_classes(int da, const int *ca, int db, const int *cb,
                               const double *v) {
  assert(da >= 1 && db >= 1 && da <= COST_CLASSES_MAX &&
         db <= COST_CLASSES_MAX);
  if (db < da) { /* Hall's condition over the side with fewer classes */
    double t[COST_CLASSES_MAX * COST_CLASSES_MAX];
    for (int x = 0; x < da; x++)
      for (int y = 0; y < db; y++) t[y * da + x] = v[x * db + y];
    return cost_bottleneck_classes(db, cb, da, ca, t);
  }
  int sb[1 << COST_CLASSES_MAX];
  sb[0] = 0;
  for (uint32_t m = 1; m < (uint32_t)1 << db; m++)
    sb[m] = sb[m & (m - 1)] + cb[__builtin_ctz(m)];
  double lb = -INFINITY; /* every row and every column uses an edge */
  for (int x = 0; x < da; x++) {
    double rmin = INFINITY;
    for (int y = 0; y < db; y++) rmin = v[x * db + y] < rmin ? v[x * db + y] : rmin;
    lb = rmin > lb ? rmin : lb;
  }
  for (int y = 0; y < db; y++) {
    double cmin = INFINITY;
    for (int x = 0; x < da; x++) cmin = v[x * db + y] < cmin ? v[x * db + y] : cmin;
    lb = cmin > lb ? cmin : lb;
  }
  if (classes_feasible(da, ca, db, v, sb, lb)) return lb;
  double vals[COST_CLASSES_MAX * COST_CLASSES_MAX];
  int m = 0; /* the values above lb, sorted, distinct */
  for (int i = 0; i < da * db; i++)
    if (v[i] > lb) vals[m++] = v[i];
  sort_small(vals, m);
  int u = 0;
  for (int i = 0; i < m; i++)
    if (u == 0 || vals[i] != vals[u - 1]) vals[u++] = vals[i];
  int lo = 0, hi = u - 1; /* the largest always works */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (classes_feasible(da, ca, db, v, sb, vals[mid])) hi = mid;
    else lo = mid + 1;
  }
  return vals[lo];
}

/* ---- open-loop TSP ---- */

static double path_cost(int n, const double *w, const int *order) {
  double t = 0;
  for (int i = 0; i + 1 < n; i++) t += w[order[i] * n + order[i + 1]];
  return t;
}

/* Held–Karp over subsets: hk[mask * n + j] is the cheapest path that visits
 * exactly mask and ends at j, from any start (entries with j outside mask
 * are never written). Pulled: a state takes the least of its predecessors
 * (a least is the same double in any order). The states of a subset are
 * filled two at a time (end nodes k1, k2), each over all the subset's
 * members j against a column of the transposed weights s->wt, whose
 * diagonal is +inf: j = k costs row[k] + inf, +inf (row[k] lies outside
 * the row's subset: a stale or zeroed entry, finite or +inf), never less;
 * the two chains of comparisons overlap. */
static void held_karp_fill(int n, const double *w, cost_scratch *s) {
  size_t full = ((size_t)1 << n) - 1;
  double *hk = s->hk, *wt = s->wt;
  for (int j = 0; j < n; j++)
    for (int k = 0; k < n; k++)
      wt[k * n + j] = j == k ? INFINITY : w[j * n + k];
  for (int j = 0; j < n; j++) hk[((size_t)1 << j) * n + j] = 0;
  int idx[COST_HELD_KARP_MAX];
  for (size_t mask = 3; mask <= full; mask++) {
    if (!(mask & (mask - 1))) continue; /* a single node: set above */
    int m = 0;
    for (size_t in = mask; in; in &= in - 1)
      idx[m++] = __builtin_ctzll((unsigned long long)in);
    for (int a = 0; a < m; a += 2) {
      int k1 = idx[a], k2 = idx[a + 1 < m ? a + 1 : a];
      const double *r1 = hk + (mask & ~((size_t)1 << k1)) * n;
      const double *r2 = hk + (mask & ~((size_t)1 << k2)) * n;
      const double *c1 = wt + (size_t)k1 * n, *c2 = wt + (size_t)k2 * n;
      double l1 = INFINITY, l2 = INFINITY;
      for (int b = 0; b < m; b++) {
        int j = idx[b];
        double x1 = r1[j] + c1[j], x2 = r2[j] + c2[j];
        l1 = x1 < l1 ? x1 : l1;
        l2 = x2 < l2 ? x2 : l2;
      }
      hk[mask * n + k1] = l1;
      hk[mask * n + k2] = l2;
    }
  }
}

/* The textbook order's path: it ends at the first least end node, and
 * each state's predecessor is the first j, in increasing order, whose
 * path plus edge gives the state's value (the first strictly least one,
 * as a scan keeping the first least picks), recomputed along the path
 * from the same doubles. */
static void held_karp_path(int n, const double *w, const cost_scratch *s,
                           int end, int *order) {
  const double *hk = s->hk;
  size_t mask = ((size_t)1 << n) - 1;
  for (int pos = n - 1, j = end; pos >= 0; pos--) {
    order[pos] = j;
    if (pos == 0) break;
    size_t prev = mask & ~((size_t)1 << j);
    double want = hk[mask * n + j];
    int p = __builtin_ctzll((unsigned long long)prev);
    for (size_t from = prev; from; from &= from - 1) {
      int i = __builtin_ctzll((unsigned long long)from);
      if (hk[prev * n + i] + w[i * n + j] == want) {
        p = i;
        break;
      }
    }
    mask = prev;
    j = p;
  }
}

static double held_karp(int n, const double *w, int *order, cost_scratch *s) {
  size_t full = ((size_t)1 << n) - 1;
  const double *hk = s->hk;
  held_karp_fill(n, w, s);
  int end = 0;
  for (int j = 1; j < n; j++)
    if (hk[full * n + j] < hk[full * n + end]) end = j;
  if (order) held_karp_path(n, w, s, end, order);
  return hk[full * n + end];
}

/* Above COST_HELD_KARP_MAX: nearest neighbour from every start, then 2-opt
 * (segment reversal) on the best; directed weights are re-evaluated in
 * full after each reversal. A heuristic: not guaranteed optimal. */
static double tsp_heuristic(int n, const double *w, int *order,
                            cost_scratch *s) {
  int *best = s->order, *cur = s->tmp;
  double best_cost = INFINITY;
  for (int start = 0; start < n; start++) {
    cur[0] = start;
    for (int i = 1; i < n; i++) {
      int pick = -1;
      for (int k = 0; k < n; k++) {
        bool used = false;
        for (int q = 0; q < i && !used; q++) used = cur[q] == k;
        if (!used && (pick < 0 || w[cur[i - 1] * n + k] < w[cur[i - 1] * n + pick]))
          pick = k;
      }
      cur[i] = pick;
    }
    double c = path_cost(n, w, cur);
    if (c < best_cost) {
      best_cost = c;
      memcpy(best, cur, (size_t)n * sizeof *cur);
    }
  }
  for (bool improved = true; improved;) {
    improved = false;
    for (int i = 0; i + 1 < n; i++)
      for (int j = i + 1; j < n; j++) {
        memcpy(cur, best, (size_t)n * sizeof *cur);
        for (int a = i, b = j; a < b; a++, b--) {
          int t = cur[a];
          cur[a] = cur[b];
          cur[b] = t;
        }
        double c = path_cost(n, w, cur);
        if (c < best_cost - 1e-12) {
          best_cost = c;
          memcpy(best, cur, (size_t)n * sizeof *cur);
          improved = true;
        }
      }
  }
  if (order) memcpy(order, best, (size_t)n * sizeof *order);
  return best_cost;
}

double cost_tsp_path(int n, const double *w, int *order, cost_scratch *s) {
  assert(n >= 1 && n <= s->nmax);
  if (n == 1) {
    if (order) order[0] = 0;
    return 0;
  }
  if (n <= COST_HELD_KARP_MAX) return held_karp(n, w, order, s);
  return tsp_heuristic(n, w, order, s);
}
