/* whatif: what a change of one resource would buy — an iteration re-run,
 * in this process, on a changed copy of the scenario under the same
 * allocation: a link's bandwidth or latency scaled, a device's or a site's
 * compute speed scaled, a site's GPU type swapped. `geodes explain` ranks
 * the top resources of the critical path (sim/critpath.h) by the gain.
 *
 * A what-if as text (--what-if SPEC), settings joined by ',':
 *   link:A-B:bw=F[,lat=F]   both directions between sites A and B
 *   link:A>B:bw=F[,lat=F]   the direction A -> B only
 *   site:NAME=GPU           every device of site NAME becomes a GPU
 *   site:NAME:speed=F       every device of site NAME computes F x faster
 *   device:N:speed=F        device N computes F x faster
 * Factors are finite and > 0 (bw=2: twice the bandwidth; lat=0.5: half the
 * latency; speed=2: compute takes half the time).
 * Invariant: the caller's scenario is never changed (a what-if runs on a
 * copy that shares its strings); a what-if run is exactly the run of a
 * scenario file that states the change (tests/test_whatif.c checks it bit
 * for bit); device pairs with an explicit override keep it. */
#ifndef SIM_WHATIF_H
#define SIM_WHATIF_H

#include <stdbool.h>

#include "base/err.h"
#include "models/alloc.h"
#include "sim/critpath.h"
#include "sim/linkstats.h"
#include "sim/sim.h"
#include "traces/scenario.h"

typedef enum sim_whatif_kind {
  SIM_WHATIF_LINK,   /* sites a -> b (and b -> a when both) */
  SIM_WHATIF_SPEED,  /* devices a .. b - 1 */
  SIM_WHATIF_GPU     /* the devices of site a */
} sim_whatif_kind;

#define SIM_WHATIF_LABEL 160

typedef struct sim_whatif {
  sim_whatif_kind kind;
  int a, b;
  bool both;
  double bw, lat;    /* LINK: scales of bandwidth and latency (1: as is) */
  double speed;      /* SPEED: the compute speed's factor */
  const char *gpu;   /* GPU: the new type's name (static, models/spec) */
  char label[SIM_WHATIF_LABEL]; /* as a user writes it */
} sim_whatif;

/* Parses spec (the grammar above) against s. ERR_OK and *out, or
 * ERR_CONFIG with e saying what is wrong (an unknown site, device or GPU,
 * a factor that is not a finite number > 0, a malformed spec). */
int sim_whatif_parse(const scenario *s, const char *spec, sim_whatif *out,
                     err *e);

/* Runs one iteration of s under allocation a and options o with the n
 * what-ifs w applied together. ERR_OK and *out (sim_result_free), or
 * sim_run's errors, or ERR_RANGE when a scaled link leaves the trace's
 * bounds (traces/trace.h). */
int sim_whatif_run(const scenario *s, const alloc *a, const sim_options *o,
                   const sim_whatif *w, int n, sim_result *out, err *e);

/* sim_run of s under a and o, its critical path into *cp
 * (sim_critpath_free) and, when ls is not NULL, its links' statistics
 * into *ls (sim_linkstats_free), their change points when series (what
 * sim_linkstats_csv reads). */
int sim_whatif_explain(const scenario *s, const alloc *a, const sim_options *o,
                       sim_result *out, sim_critpath *cp, sim_linkstats *ls,
                       bool series, err *e);

/* One re-run: what changed, the iteration then and what it saves against
 * the base (positive: faster). */
typedef struct sim_sensitivity {
  sim_whatif w;
  double iteration_s, gain_s;
} sim_sensitivity;

/* What sim_whatif_sensitivities re-runs. */
typedef struct sim_sens_opts {
  const sim_critpath *cp; /* the base run's path (borrowed) */
  int top;                /* its top resources */
  const sim_whatif *extra; /* nextra more what-ifs (borrowed; may be NULL) */
  int nextra;
  double base_s;          /* the unchanged iteration */
  /* after each re-run: runs done of total (a re-run of volunteer-10k
   * takes seconds); may be NULL */
  void (*progress)(void *ctx, int done, int total);
  void *progress_ctx;     /* borrowed */
} sim_sens_opts;

/* The sensitivities of the q->top resources of q->cp (links and devices,
 * by time on the path): per directed site pair its bandwidth x2 and x0.5
 * and its latency x0.5, per device its speed x2; then q's extra what-ifs,
 * each alone. *out (free) gets *nout rows, the largest gain first (ties
 * in the order above). ERR_OK, or the first failing run's error. */
int sim_whatif_sensitivities(const scenario *s, const alloc *a,
                             const sim_options *o, const sim_sens_opts *q,
                             sim_sensitivity **out, int *nout, err *e);

#endif
