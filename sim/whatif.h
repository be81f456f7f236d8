/* whatif: what a change of one resource would buy — an iteration re-run,
 * in this process, on a changed copy of the scenario under the same
 * allocation: a link's bandwidth or latency scaled, its path keys set, a
 * device's or a site's compute speed scaled, a site's GPU type swapped,
 * its hosts' TCP window or NCCL sockets set. `geodes explain` ranks the
 * top resources of the critical path (sim/critpath.h) by the gain.
 *
 * A what-if as text (--what-if SPEC), settings joined by ',':
 *   link:A-B:SETTINGS       both directions between sites A and B
 *   link:A>B:SETTINGS       the direction A -> B only
 *     bw=F, lat=F           the bandwidth, the latency x F (factors)
 *     flow=G                the link's flow_gbps (a single stream's rate on
 *                           the path) set to G Gbit/s: a value
 *     window=B              the link's window_bytes set to B bytes: a value
 *   site:NAME=GPU           every device of site NAME becomes a GPU
 *   site:NAME:speed=F       every device of site NAME computes F x faster
 *   site:NAME:window=B[,sockets=N]  the site's tcp_window_bytes set to B
 *                           bytes, its nccl_sockets to N (values)
 *   device:N:speed=F        device N computes F x faster
 * Factors are finite and > 0 (bw=2: twice the bandwidth; lat=0.5: half the
 * latency; speed=2: compute takes half the time); flow, window and sockets
 * are the values the file's keys take, within the loader's bounds. A
 * connection's window is the first of: the run's (--window-bytes), the
 * link's window_bytes, its flow_gbps x RTT, params' window_bytes, the
 * smaller of its two sites' tcp_window_bytes (models/transport.h); so a
 * site's window changes nothing on a link that states one, and raising one
 * end of a connection gains nothing when the other end is the smaller.
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
  SIM_WHATIF_GPU,    /* the devices of site a */
  SIM_WHATIF_HOSTS   /* the hosts of site a: TCP window, NCCL sockets */
} sim_whatif_kind;

#define SIM_WHATIF_LABEL 160

typedef struct sim_whatif {
  sim_whatif_kind kind;
  int a, b;
  bool both;
  double bw, lat;    /* LINK: scales of bandwidth and latency (1: as is) */
  double flow_gbps;  /* LINK: the link's flow_gbps at every point (0: as
                        is) */
  double window;     /* LINK: the link's window_bytes at every point;
                        HOSTS: the site's tcp_window_bytes (0: as is) */
  int sockets;       /* HOSTS: the site's nccl_sockets (0: as is) */
  double speed;      /* SPEED: the compute speed's factor */
  const char *gpu;   /* GPU: the new type's name (static, models/spec) */
  char label[SIM_WHATIF_LABEL]; /* as a user writes it */
} sim_whatif;

/* Parses spec (the grammar above) against s. ERR_OK and *out, or
 * ERR_CONFIG with e saying what is wrong (an unknown site, device or GPU,
 * a factor that is not a finite number > 0, a value outside its key's
 * bounds, a malformed spec). */
int sim_whatif_parse(const scenario *s, const char *spec, sim_whatif *out,
                     err *e);

/* The what-ifs of the n texts specs (each of one or more joined by ';',
 * none empty), each parsed by sim_whatif_parse, into *out (malloc'ed, the
 * caller frees it) and *count, in order. ERR_OK, or ERR_CONFIG: "'TEXT':
 * an empty what-if (what-ifs are joined by one ';')" or the first parse's
 * message (*out NULL, *count 0). */
int sim_whatif_parse_list(const scenario *s, const char *const *specs, int n,
                          sim_whatif **out, int *count, err *e);

/* Runs one iteration of s under allocation a and options o with the n
 * what-ifs w applied together. ERR_OK and *out (sim_result_free), or
 * sim_run's errors, or ERR_RANGE when a scaled link leaves the trace's
 * bounds (traces/trace.h). */
int sim_whatif_run(const scenario *s, const alloc *a, const sim_options *o,
                   const sim_whatif *w, int n, sim_result *out, err *e);

/* sim_run of s under a and o (no timeline), its critical path into *cp
 * (sim_critpath_free) and, ls not NULL, its links' statistics summed as it
 * goes (sim_ls_acc; change points when series) into *ls. */
int sim_whatif_explain(const scenario *s, const alloc *a, const sim_options *o,
                       sim_result *out, sim_critpath *cp, sim_linkstats *ls,
                       bool series, err *e);

/* One re-run: what changed, the iteration then and what it saves against
 * the base (positive: faster); the top resource it was made for (an index
 * of the critical path's links or devices; -1 for a caller's what-if). */
typedef struct sim_sensitivity {
  sim_whatif w;
  double iteration_s, gain_s;
  int link, device;
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

/* The sensitivities of the q->top resources of q->cp (links and devices, by
 * time on the path): per directed site pair A>B its bandwidth x2 and x0.5
 * and its latency x0.5, and when steps on it were bound by their window
 * or their loss bound (sim_critpath_link_cause's causes, under tcp) the
 * fixes of that bound: the path's window set to its bandwidth-delay
 * product (window), a single stream twice as fast (flow, the window
 * doubled), twice the sockets of B's hosts (a connection A -> B has the
 * receiver's nccl_sockets; at most SCENARIO_SOCKETS_MAX) and, when the
 * connection's window is A's or B's alone (the smaller of the two sites'),
 * that site's window raised towards the other's; per device its speed x2.
 * Window and flow are left out when the run sets the window, flow when the
 * link states window_bytes, and both for a loss bound (sockets help it).
 * Then q's extra what-ifs, each alone. *out (free) gets *nout rows, the largest gain first (ties in
 * the order above). ERR_OK, or the first failing run's error. */
int sim_whatif_sensitivities(const scenario *s, const alloc *a,
                             const sim_options *o, const sim_sens_opts *q,
                             sim_sensitivity **out, int *nout, err *e);

#endif
