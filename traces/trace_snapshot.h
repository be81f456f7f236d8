/* trace_snapshot: a trace frozen at one instant — a static trace over the
 * same sites whose every pair holds the value the trace has then. What a
 * placement or a prediction reads at t = 0 is then the network of that
 * instant (re-planning during a run: sim/recovery).
 * Invariant: trace_at(snapshot, a, b, any t) == trace_at(t, a, b, t_ns). */
#ifndef TRACES_TRACE_SNAPSHOT_H
#define TRACES_TRACE_SNAPSHOT_H

#include <stdint.h>

#include "base/err.h"
#include "traces/trace.h"

/* The snapshot of t at t_ns >= 0; the caller owns it (trace_free). NULL
 * and e filled only if the sites cannot be read back (never for a trace
 * trace_parse built). */
trace *trace_snapshot(const trace *t, int64_t t_ns, err *e);

#endif
