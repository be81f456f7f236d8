/* tandem: see tandem.h. The turning server j1 is tried in turn: each
 * candidate is pre(j1) + first[j1] + sum(t[j1..hi]) + (k - 2) max(t[j1..hi]).
 * Up to TANDEM_EXACT_MAX servers each suffix is summed left to right, as
 * always, O(n^2); past it the suffixes are carried from the right in one
 * pass, O(n): the same terms summed in another order, equal up to
 * rounding. (A chain over a site's 145 devices called it 145 times at
 * O(n^2) each: 3 of 4 CPU-seconds of `schedule volunteer-10k --shape
 * auto`.) */
#include "models/tandem.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"

/* Spans of at most this many servers are summed as always: every span of
 * the built-ins (chains of at most 64 members, phases of at most 47). */
#define TANDEM_EXACT_MAX 64

/* The one-pass form: pre(j1) left to right into a buffer, then the
 * suffixes from the right. */
static double span_linear(int lo, int hi, int k, const double *first,
                          const double *t) {
  int n = hi - lo + 1;
  double *pre = mem_alloc((size_t)n * sizeof *pre), acc = 0;
  for (int j = lo; j <= hi; j++) pre[j - lo] = acc, acc += first[j];
  double sum = 0, most = 0, best = -INFINITY;
  for (int j1 = hi; j1 >= lo; j1--) {
    sum += t[j1], most = fmax(most, t[j1]);
    best = fmax(best, pre[j1 - lo] + first[j1] + sum + (k - 2) * most);
  }
  free(pre);
  return best;
}

double tandem_span(int lo, int hi, int k, const double *first,
                   const double *t, const double *delay) {
  double d = 0, pre = 0, best = -INFINITY;
  for (int j = lo; j <= hi; j++) d += delay ? delay[j] : 0;
  if (k <= 1) {
    for (int j = lo; j <= hi; j++) pre += first[j];
    return pre + d;
  }
  if (hi - lo + 1 > TANDEM_EXACT_MAX)
    return span_linear(lo, hi, k, first, t) + d;
  for (int j1 = lo; j1 <= hi; j1++) {
    double sum = 0, most = 0;
    for (int j = j1; j <= hi; j++) sum += t[j], most = fmax(most, t[j]);
    best = fmax(best, pre + first[j1] + sum + (k - 2) * most);
    pre += first[j1];
  }
  return best + d;
}
