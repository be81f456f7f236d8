/* tandem: see tandem.h. O((hi - lo)^2): the turning server j1 is tried
 * in turn. */
#include "models/tandem.h"

#include <math.h>

double tandem_span(int lo, int hi, int k, const double *first,
                   const double *t, const double *delay) {
  double d = 0, pre = 0, best = -INFINITY;
  for (int j = lo; j <= hi; j++) d += delay ? delay[j] : 0;
  if (k <= 1) {
    for (int j = lo; j <= hi; j++) pre += first[j];
    return pre + d;
  }
  for (int j1 = lo; j1 <= hi; j1++) {
    double sum = 0, most = 0;
    for (int j = j1; j <= hi; j++) sum += t[j], most = fmax(most, t[j]);
    best = fmax(best, pre + first[j1] + sum + (k - 2) * most);
    pre += first[j1];
  }
  return best + d;
}
