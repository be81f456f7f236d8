/* unused: the workload values a run does not use, each with why — what
 * every output states, so that no value the user gave is silently
 * ignored (issue 33: under Megatron --dp-algo central-ps gave ring's time
 * to the bit; with one replica every dp algorithm gives the same run).
 * An option the runtime cannot honour is refused instead
 * (models/spec_workload.c); what is stated here is what the scenario file
 * gives, or what the run's shape or placement makes moot.
 * Invariant: each value listed changes nothing in the run (tests/
 * test_harness.c: another value gives the same times), and a value that
 * changes nothing because of the runtime, the shape or the placement is
 * listed. */
#ifndef MODELS_UNUSED_H
#define MODELS_UNUSED_H

#include "models/alloc.h"
#include "models/spec.h"
#include "models/transport.h"
#include "traces/scenario.h"

#define UNUSED_WHY_MAX 160
#define UNUSED_MAX 8

/* One value the run does not use: its row of WORKLOAD_MAP (the window:
 * WORKLOAD_window_bytes) and why. */
typedef struct unused_value {
  int row;
  char why[UNUSED_WHY_MAX];
} unused_value;

/* The values of s (w resolved from it) that the run under allocation a
 * (NULL: none known yet) and transport t does not use, into out (room for
 * UNUSED_MAX); returns how many. (No transport value is unused: a TCP
 * window also sizes each connection's send buffers under netem and ideal,
 * which decides when a send completes.) */
int unused_values(const scenario *s, const spec_workload *w, const alloc *a,
                  const transport_options *t, unused_value *out);

#endif
