/* trace_snapshot: see trace_snapshot.h. A uniform trace over t's sites
 * (named as an array, so any name reads back) whose pairs are then each
 * set to t's value: the public API only. */
#include "traces/trace_snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

trace *trace_snapshot(const trace *t, int64_t t_ns, err *e) {
  static const char text[] =
      "# source: snapshot\nt_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,1,1\n";
  int n = trace_nsites(t);
  const char **names = mem_alloc((size_t)n * sizeof *names);
  for (int i = 0; i < n; i++) names[i] = trace_site(t, i);
  trace *s = trace_parse(text, sizeof text - 1, "snapshot", names, n, e);
  free(names);
  if (!s) return NULL;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) trace_set_static(s, a, b, trace_at(t, a, b, t_ns));
  return s;
}
