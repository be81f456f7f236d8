/* critpath: why an iteration takes the time it does — its critical path,
 * read from a finished run's task records and edges (sim/graph.h): from the
 * task that ended last, walk back through what each task waited for (its
 * binding predecessor: the one whose trigger fired last, which is exactly
 * when the task started) to a task that started at the run's start. Each
 * step is a compute on a device, a transfer on a site pair (with its rate
 * and why that rate) or a wait; the steps tile [start, end] with no gap.
 * Invariant: a pure reader of finished records: nothing here runs or
 * changes the engine, so explaining a run cannot alter its times; the
 * steps' durations sum to the iteration exactly (integer ns). */
#ifndef SIM_CRITPATH_H
#define SIM_CRITPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/names.h"
#include "models/transport.h"
#include "sim/graph.h"
#include "traces/scenario.h"

/* The phases a step is folded into (by its task's role), with their names
 * for tables and JSON. */
#define SIM_CP_PHASE_MAP(X)                        \
  X(FWD, "forward")    /* forward, activations */  \
  X(BWD, "backward")   /* backward, gradients */   \
  X(DP, "dp-sync")     /* data-parallel sync */    \
  X(OPT, "optimizer")                              \
  X(OTHER, "other")    /* barriers, host calls */
#define SIM_CP_ENUM_(id, name) SIM_CP_##id,
typedef enum sim_cp_phase { SIM_CP_PHASE_MAP(SIM_CP_ENUM_) SIM_CP_NPHASES } sim_cp_phase;
extern const char *const sim_cp_phase_names[SIM_CP_NPHASES];

/* The resource classes a step's time is charged to. */
typedef enum sim_cp_class {
  SIM_CP_COMPUTE,  /* GPU work (and a blocking call's host cost) */
  SIM_CP_WAN,      /* a transfer between two sites */
  SIM_CP_LAN,      /* a transfer inside a site */
  SIM_CP_BARRIER,  /* a runtime barrier's or a blocking call's fixed cost
                      (no GPU work: a device's speed does not change it) */
  SIM_CP_WAIT,     /* a join, a gap */
  SIM_CP_NCLASSES
} sim_cp_class;
extern const char *const sim_cp_class_names[SIM_CP_NCLASSES];

/* Why a transfer ran at the rate it did: the bound its mean rate on the
 * wire reached (within SIM_CP_BOUND_TOL), or SHARED when it stayed below
 * every bound (it shared a resource with other flows, queued behind
 * earlier messages on its connection or was in slow start). A send's step
 * ends when its last byte is in the socket buffers, so it may look faster
 * than every bound; what paced it is the stream behind it, and it then
 * takes that stream's cause (the message's mean rate over its own span on
 * the wire: a bound, or SHARED), SEND only when that span is empty. Under
 * path shaping the flows between two sites share one path: a flow below
 * its own bounds while the path ran full over its span (every flow on it
 * at their mean rates, within SIM_CP_BOUND_TOL of the link's bandwidth) is
 * LINK, the link split between them. Names are read by scripts: rows are
 * added at the end, never renamed. */
#define SIM_CP_CAUSE_MAP(X)                                              \
  X(LINK, "link")        /* the site pair's bandwidth (tc: the sender's \
                            egress shaper; path: the path, shared) */   \
  X(NIC, "nic")          /* a NIC's capacity, sender's or receiver's */  \
  X(FLOWCAP, "flow-cap") /* the network's cap per TCP flow */            \
  X(WINDOW, "window")    /* tcp: sockets x window / RTT */              \
  X(SHARED, "shared")    /* below every bound */                         \
  X(SEND, "send-buffer") /* a send's step (it ends when its bytes are   \
                            in the socket buffers) faster than every    \
                            bound, with no span on the wire to judge    \
                            its stream by: the buffers had room */       \
  X(LOSS, "loss")        /* tcp on a lossy link: sockets x the loss     \
                            bound (Padhye) below the window */
#define SIM_CP_CAUSE_ENUM_(id, name) SIM_CP_CAUSE_##id,
typedef enum sim_cp_cause { SIM_CP_CAUSE_MAP(SIM_CP_CAUSE_ENUM_) } sim_cp_cause;
enum { SIM_CP_NCAUSES = 0 SIM_CP_CAUSE_MAP(NAMES_COUNT_ROW) };
extern const char *const sim_cp_cause_names[SIM_CP_NCAUSES];

/* A mean rate counts as at a bound when within this fraction of it. */
#define SIM_CP_BOUND_TOL 0.02

/* What bounds one transfer's rate under the scenario and transport: each
 * bound in Gbit/s (INFINITY: none) and the least of them. */
typedef struct sim_flow_bounds {
  double link_gbps, nic_gbps, flowcap_gbps;
  double window_gbps; /* tcp: sockets x window / RTT */
  double loss_gbps;   /* tcp: sockets x cwnd_max / RTT when the loss bound
                         holds cwnd_max below the window; else INFINITY */
  double latency_s;   /* one-way, at the transfer's start */
  double rtt_s;       /* there and back */
  double window_bytes, cwnd_bytes; /* per socket: the connection's window
                         and what its sockets grow to (transport_path_of);
                         0 when the model has no window */
  int sockets;        /* the sockets the message is dealt over */
  double bound_gbps;  /* the least bound */
  sim_cp_cause least; /* which one it is */
} sim_flow_bounds;

/* The bounds of transfer t (a SIM_TASK_XFER record) of a run of s under o,
 * as the network model sets them at its start (sim/net.h). */
sim_flow_bounds sim_critpath_bounds(const scenario *s,
                                    const transport_options *o,
                                    const sim_task *t);

/* The cause of a rate: mean_gbps against the bounds b. */
sim_cp_cause sim_critpath_cause(const sim_flow_bounds *b, double mean_gbps);

/* One step of the path, in time order. */
typedef struct sim_cp_step {
  uint32_t task;
  uint8_t kind;        /* sim_task_kind; a gap is a JOIN with task
                          UINT32_MAX */
  uint8_t role;        /* sim_task_role */
  uint8_t phase, cls, cause; /* cause: transfers only */
  int dev, dst;        /* compute: dev; transfer: dev -> dst; else -1 */
  int src_site, dst_site;
  int64_t t0, t1;      /* the part of the task on the path */
  double bytes;        /* transfer */
  double rate_gbps;    /* transfer: mean rate on the wire over the step */
  double stream_gbps;  /* transfer: its mean rate over its whole span on
                          the wire (sim/linkstats.h), what its stream ran at */
  double bound_gbps;   /* transfer: the least bound (sim_flow_bounds) */
  double link_gbps;    /* transfer: its link's bandwidth at its start */
  double path_gbps;    /* transfer, path shaping, between sites: the mean
                          rate of every flow on its path over its span when
                          its own bounds did not hold it (0: not asked) */
  double latency_s;    /* transfer: one-way latency inside the step (0 for
                          a send's step: it ends before the bytes arrive) */
  double link_latency_s, rtt_s; /* transfer: its link's one-way latency
                          and round trip at its start */
  double window_bytes; /* transfer: its connection's window per socket
                          (tcp; 0 otherwise) */
  int sockets;         /* transfer: the sockets it is dealt over */
  bool send;           /* transfer: the step ends as its last byte enters
                          the socket buffers (a send), not at its arrival */
  double queue_s;      /* transfer: waiting behind the messages before it
                          on its connection (sim/linkstats.h's wire span) */
} sim_cp_step;

/* Time on the path per resource: a directed site pair or a device. */
typedef struct sim_cp_link {
  int src_site, dst_site;
  double seconds, bytes;
  int steps;
  double cause_s[SIM_CP_NCAUSES]; /* its seconds by the steps' cause */
} sim_cp_link;

/* The cause that holds link l longest on the path (the first of equals). */
sim_cp_cause sim_critpath_link_cause(const sim_cp_link *l);

/* The causes that held link l (seconds > 0) into order, the longest first
 * (the first of equals first); returns how many (room: SIM_CP_NCAUSES). */
int sim_critpath_link_causes(const sim_cp_link *l, int *order);
typedef struct sim_cp_device {
  int dev;
  double seconds;
  int steps;
} sim_cp_device;

typedef struct sim_critpath {
  int64_t t0, end;          /* the run's start and its last task's end */
  size_t nsteps;
  sim_cp_step *steps;
  double seconds[SIM_CP_NPHASES][SIM_CP_NCLASSES];
  int nlinks, ndevices;
  sim_cp_link *links;       /* by time on the path, most first */
  sim_cp_device *devices;   /* the same */
} sim_critpath;

/* The critical path of graph g (a finished run from t0) of scenario s under
 * transport o into *out (free with sim_critpath_free). g, s, o borrowed. */
void sim_critpath_build(const sim_graph *g, const scenario *s,
                        const transport_options *o, int64_t t0,
                        sim_critpath *out);

/* Frees out's arrays; NULL is fine. */
void sim_critpath_free(sim_critpath *cp);

/* The margins of cp's seconds by phase and class: by_phase[p] over the
 * classes, by_class[c] over the phases, in index order; returns their
 * total (the path's seconds but for rounding). */
double sim_critpath_margins(const sim_critpath *cp, double *by_phase,
                            double *by_class);

/* Step x's seconds on the path. */
double sim_critpath_step_s(const sim_cp_step *x);

/* The seconds of the show-th longest step of cp (show >= 1), so that the
 * steps at least that long are its show longest (with the ties at the
 * cut); 0 when cp has at most show steps (every one is). */
double sim_critpath_cut_s(const sim_critpath *cp, size_t show);

#endif
