/* stats: rank correlations, MAPE, regret and discordant pairs.
 * Invariant: every function reads its inputs only; scratch memory is taken
 * and released inside the call, so the results depend on the values alone
 * (never on addresses), and equal inputs give bit-identical outputs. */
#include "analysis/stats.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

typedef struct keyed {
  double a, b;  /* sort by a, then b */
  size_t i;     /* then by index: the order is total */
} keyed;

static int keyed_cmp(const void *pa, const void *pb) {
  const keyed *p = pa, *q = pb;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

void stats_ranks(const double *x, size_t n, double *ranks) {
  keyed *k = mem_alloc((n ? n : 1) * sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = (keyed){x[i], 0, i};
  qsort(k, n, sizeof *k, keyed_cmp);
  for (size_t lo = 0; lo < n;) {
    size_t hi = lo + 1;
    while (hi < n && k[hi].a == k[lo].a) hi++;
    double r = (double)(lo + 1 + hi) / 2.0; /* mean of ranks lo+1 .. hi */
    for (size_t t = lo; t < hi; t++) ranks[k[t].i] = r;
    lo = hi;
  }
  free(k);
}

static bool constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return false;
  return true;
}

double stats_spearman(const double *x, const double *y, size_t n) {
  if (n < 2 || constant(x, n) || constant(y, n)) return NAN;
  assert(n <= 2000000); /* the sums below stay exact in int64 */
  double *r = mem_alloc(2 * n * sizeof *r);
  stats_ranks(x, n, r);
  stats_ranks(y, n, r + n);
  /* Pearson of the ranks in integers: twice a rank minus n + 1 (twice the
   * mean rank, ties included) is an exact integer, so a perfectly monotone
   * pair gives exactly +-1 (GSL's float sums gave 0.99999999999999978). */
  long long sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; i++) {
    long long a = llround(2 * r[i]) - (long long)(n + 1);
    long long b = llround(2 * r[n + i]) - (long long)(n + 1);
    sab += a * b, saa += a * a, sbb += b * b;
  }
  free(r);
  double rho = (double)sab / sqrt((double)saa * (double)sbb);
  return fmax(-1.0, fmin(1.0, rho));
}

/* Sorts v[0..n-1] ascending by merging through tmp; returns the number of
 * inversions (pairs i < j with v[i] > v[j]) it removed. */
static unsigned long long merge_count(double *v, double *tmp, size_t n) {
  if (n < 2) return 0;
  size_t mid = n / 2;
  unsigned long long swaps = merge_count(v, tmp, mid) +
                             merge_count(v + mid, tmp + mid, n - mid);
  size_t i = 0, j = mid, o = 0;
  while (i < mid && j < n) {
    if (v[j] < v[i]) {
      swaps += mid - i; /* v[j] jumps over every remaining left element */
      tmp[o++] = v[j++];
    } else {
      tmp[o++] = v[i++];
    }
  }
  while (i < mid) tmp[o++] = v[i++];
  while (j < n) tmp[o++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
  return swaps;
}

/* Sum over runs of equal values in sorted v of t(t-1)/2. */
static unsigned long long tied_pairs(const double *v, size_t n) {
  unsigned long long s = 0;
  for (size_t lo = 0; lo < n;) {
    size_t hi = lo + 1;
    while (hi < n && v[hi] == v[lo]) hi++;
    unsigned long long t = hi - lo;
    s += t * (t - 1) / 2;
    lo = hi;
  }
  return s;
}

double stats_kendall(const double *x, const double *y, size_t n) {
  if (n < 2 || constant(x, n) || constant(y, n)) return NAN;
  keyed *k = mem_alloc(n * sizeof *k);
  for (size_t i = 0; i < n; i++) k[i] = (keyed){x[i], y[i], i};
  qsort(k, n, sizeof *k, keyed_cmp);
  unsigned long long n0 = (unsigned long long)n * (n - 1) / 2, n1 = 0, n3 = 0;
  for (size_t lo = 0; lo < n;) { /* ties in x (n1) and in (x, y) (n3) */
    size_t hi = lo + 1;
    while (hi < n && k[hi].a == k[lo].a) hi++;
    unsigned long long t = hi - lo;
    n1 += t * (t - 1) / 2;
    for (size_t a = lo; a < hi;) {
      size_t b = a + 1;
      while (b < hi && k[b].b == k[a].b) b++;
      unsigned long long u = b - a;
      n3 += u * (u - 1) / 2;
      a = b;
    }
    lo = hi;
  }
  double *v = mem_alloc(2 * n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = k[i].b;
  /* Inversions of y in (x, y) order are exactly the discordant pairs. */
  unsigned long long discordant = merge_count(v, v + n, n);
  unsigned long long n2 = tied_pairs(v, n);
  free(v);
  free(k);
  double s = (double)n0 - (double)n1 - (double)n2 + (double)n3 -
             2.0 * (double)discordant;
  return s / sqrt(((double)n0 - (double)n1) * ((double)n0 - (double)n2));
}

double stats_mape(const double *predicted, const double *actual, size_t n) {
  double sum = 0;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    if (actual[i] == 0) continue;
    sum += fabs(predicted[i] - actual[i]) / fabs(actual[i]);
    used++;
  }
  return used ? 100.0 * sum / (double)used : NAN;
}

double stats_regret(const double *score, const double *actual, size_t n) {
  if (n == 0) return NAN;
  double low = score[0], best_actual = actual[0];
  for (size_t i = 1; i < n; i++) {
    low = fmin(low, score[i]);
    best_actual = fmin(best_actual, actual[i]);
  }
  double sum = 0;
  size_t ties = 0;
  for (size_t i = 0; i < n; i++)
    if (score[i] - low <= 1e-9 * fabs(low)) sum += actual[i], ties++;
  return sum / (double)ties / best_actual - 1.0;
}

static int pair_cmp(const void *pa, const void *pb) {
  const stats_pair *p = pa, *q = pb;
  if (p->gap != q->gap) return p->gap > q->gap ? -1 : 1;
  if (p->i != q->i) return p->i < q->i ? -1 : 1;
  return (p->j > q->j) - (p->j < q->j);
}

/* Keeps out[0..*kept-1] as the max largest pairs seen, sorted; O(max) per
 * insertion, fine for the handful of pairs a report shows. */
static void keep_largest(stats_pair *out, size_t max, size_t *kept,
                         stats_pair p) {
  if (max == 0) return;
  if (*kept == max && pair_cmp(&p, &out[max - 1]) >= 0) return;
  size_t at = *kept < max ? (*kept)++ : max - 1;
  while (at > 0 && pair_cmp(&p, &out[at - 1]) < 0) {
    out[at] = out[at - 1];
    at--;
  }
  out[at] = p;
}

size_t stats_discordant(const double *score, const double *actual, size_t n,
                        stats_pair *out, size_t max) {
  size_t count = 0, kept = 0;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n; b++) {
      size_t i = a, j = b; /* i: the one the model prefers */
      if (score[b] < score[a]) i = b, j = a;
      else if (score[b] == score[a]) continue;
      if (!(actual[i] > actual[j])) continue;
      count++;
      keep_largest(out, max, &kept,
                   (stats_pair){i, j, actual[i] / actual[j] - 1.0});
    }
  return count;
}
