/* trace_value: see trace_value.h. */
#include "traces/trace_value.h"

#include <assert.h>

#define TRACE_PATH_ROW_(f, l, h, open, w)                                 \
  {.name = #f, .offset = offsetof(trace_value, f), .lo = l, .hi = h,       \
   .hi_open = open, .what = w},
const trace_path_key trace_path_keys[TRACE_NPATH_KEYS] = {
    TRACE_PATH_MAP(TRACE_PATH_ROW_)};
#undef TRACE_PATH_ROW_

double trace_value_path(const trace_value *v, int k) {
  assert(k >= 0 && k < TRACE_NPATH_KEYS);
  return *(const double *)((const char *)v + trace_path_keys[k].offset);
}

bool trace_path_ok(int k, double x) {
  const trace_path_key *p = &trace_path_keys[k];
  return isfinite(x) && x >= p->lo && (p->hi_open ? x < p->hi : x <= p->hi);
}
