/* train: one training iteration as DT-FM's runtime ran it, written as a task
 * graph (sim/graph.h). Per device a compute, a send and a receive stream;
 * GPipe passes (all forwards, a global barrier, all backwards, in
 * micro-batch order 0..M-1) with gradient accumulation, or 1F1B; then per
 * stage the data-parallel gradient synchronisation (central-ps, ring,
 * sharded-ps, hier-ring or hivemind's round: sim/train_hivemind.c) and
 * the optimizer step (under hivemind's delayed averaging, the previous
 * step's round and optimizer step beside the passes).
 * Invariant: the graph is acyclic for every schedule built here, so a run
 * completes every task; compute durations come from models/spec (per
 * device GPU type, so heterogeneous devices are allowed). */
#ifndef SIM_TRAIN_H
#define SIM_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "models/transport.h"
#include "sim/graph.h"

/* Compute times of one micro-batch of one stage on one GPU type. */
typedef struct sim_compute {
  int64_t fwd_ns, bwd_ns, opt_ns;
} sim_compute;

/* Forward, backward (with recompute when w says so) and optimizer step of
 * stage st on GPU g, from the spec's FLOP counts and g's peak x efficiency
 * times factor (its host's: spec_site_compute_factor); the optimizer's from
 * the runtime's (models/runtime.h); plus the quantisation of compressed
 * activations and gradients (models/compress.h: compress_stage_s, and
 * compress_sync_s on the optimizer's unless w is DiLoCo's); each
 * multiplied by scale (1 = as specified). */
sim_compute sim_train_compute(const spec_workload *w, int st,
                              const spec_gpu *g, double factor, double scale);

/* Where each device's phases end, for statistics: task ids in the graph. */
typedef struct sim_train_marks {
  int ndevices;
  int *stage;          /* device -> its stage */
  uint32_t *last_bwd;  /* device -> its last backward compute */
  uint32_t *sync;      /* device -> join: its gradient sync is complete */
  uint32_t *opt;       /* device -> its optimizer step */
  uint32_t *end;       /* device -> what ends its iteration: DT-FM's last
                          barrier, or its optimizer step */
} sim_train_marks;

/* What one iteration is built from (all borrowed). */
typedef struct sim_train_inputs {
  const spec_workload *w;     /* resolved */
  const alloc *a;             /* validated, D_dp x D_pp */
  const spec_gpu *const *gpu; /* device -> its GPU */
  double compute_scale;       /* multiplies every compute time */
  const double *grad_bytes;   /* per stage, synchronised across its group;
                                 NULL: the spec's fp16 gradient */
  double act_bytes;           /* activation size; <= 0: the spec's */
  const double *factor;       /* device -> spec_site_compute_factor */
  int64_t barrier_ns;         /* what one of DT-FM's barriers costs beyond
                                 waiting for the last device (its latency
                                 over the network: runtime_barrier_ns) */
  const uint32_t *start;      /* device -> what its first op waits for
                                 (the previous step's end), or NULL */
  bool local;                 /* no data-parallel synchronisation: each
                                 device steps on its own gradient (one of
                                 DiLoCo's inner steps), and DT-FM's
                                 barriers are each replica's own */
  const int64_t *replica_barrier_ns; /* local: replica -> its barrier's
                                 latency (runtime_barrier_ns of its
                                 pipeline) */
  const int *device_site;     /* device -> its site (hier-ring's levels);
                                 NULL: all in one site */
  const scenario *s;          /* the links hivemind's rounds read (its
                                 declared bandwidths, matchmaking's round
                                 trips, the leader's latency); NULL unless
                                 the algorithm is hivemind */
} sim_train_inputs;

/* Checks that every device of in->a computes its stage of one iteration
 * (forwards and backwards of every micro-batch, the optimizer step) within
 * the span a simulation covers (base/simtime.h), so that no compute time
 * of the graph wraps. ERR_RANGE naming s, the device, its site and stage. */
int sim_train_check_compute(const sim_train_inputs *in, const scenario *s,
                            err *e);

/* Adds one iteration of in->w under in->a to g and fills marks (free with
 * sim_train_marks_free). */
void sim_train_build(sim_graph *g, const sim_train_inputs *in,
                     sim_train_marks *marks);

void sim_train_marks_free(sim_train_marks *m);

/* NCCL's ring all-reduce of bytes over the n devices grp (reduce-scatter
 * then all-gather in loops of 2 (n - 1) steps, each in slices:
 * transport_ring_plan, transport_ring_wait), member i starting when
 * ready[i] is done; sync[i] (joins the caller made) wait for member i's
 * result. Its sends are ordered on sstream[device], over connections of
 * `channels` channels (an NCCL collective's TRANSPORT_NCCL_RING_CHANNELS,
 * DiLoCo's exchange's TRANSPORT_DILOCO_CHANNELS). */
void sim_train_ring(sim_graph *g, uint32_t *sstream, const int *grp, int n,
                    const uint32_t *ready, double bytes, int channels,
                    uint32_t *sync);

/* central-ps's NCCL reduce to grp[0] (ring order grp[1] -> ... -> grp[n-1]
 * -> grp[0]) then broadcast grp[0] -> ... -> grp[n-1], each a pipelined
 * chain of chunks (TRANSPORT_NCCL_CHUNK_BYTES, at most
 * TRANSPORT_NCCL_MAX_CHUNKS) over `channels` channels; the rest as
 * sim_train_ring's. */
void sim_train_central(sim_graph *g, uint32_t *sstream, const int *grp,
                       int n, const uint32_t *ready, double bytes,
                       int channels, uint32_t *sync);

/* The two-level all-reduce of --dp-algo hier-ring (HSDP's two groups,
 * NCCL's chain inside a node) over the n devices grp: inside each site
 * (site[device]; NULL: one site) an NCCL ring reduce to the site's first
 * member in grp order (chain_reduce, as central-ps's), then NCCL's ring
 * all-reduce (sim_train_ring) across the sites' first members, then a
 * broadcast inside each site; every level over `channels` channels. The
 * rest as sim_train_ring's. Tasks: O(n chunks + sites^2), not O(n^2). */
void sim_train_hier_ring(sim_graph *g, uint32_t *sstream, const int *grp,
                         int n, const int *site, const uint32_t *ready,
                         double bytes, int channels, uint32_t *sync);

/* The transfers and joins sim_train_hier_ring adds at most for n members
 * spread over up to `sites` sites, carrying bytes. */
uint64_t sim_train_hier_ring_tasks(int n, int sites, double bytes);

/* One data-parallel group's round of hivemind's averaging (borrowed). */
typedef struct sim_hivemind_in {
  const scenario *s;       /* its links */
  const int *grp;          /* its devices, n >= 2, the leader first */
  int n;
  const uint32_t *ready;   /* member -> when its gradient is in (its last
                              backward; delayed: its step's start), or
                              SIM_GRAPH_NONE */
  const uint32_t *start;   /* device -> its step's start, when the
                              matchmaking window opens; NULL: t0 */
  double bytes, values;    /* the vector on the wire, and its values */
  double matchmaking_s;    /* hivemind's matchmaking_time */
  bool delayed;            /* the round is the previous step's (delay_
                              averaging): the window is the next round's
                              and this round does not wait for it */
} sim_hivemind_in;

/* hivemind's round of the group (models/hivemind.h; sim/train_hivemind.c
 * for the graph): matchmaking, then the butterfly all-reduce with parts
 * by declared bandwidth, reduced and applied on the hosts. sync[i] (joins
 * the caller made) wait for member i's averages. Returns the matchmaking
 * window's task. */
uint32_t sim_train_hivemind(sim_graph *g, const sim_hivemind_in *in,
                            uint32_t *sync);

/* The tasks sim_train_hivemind adds at most for n members. */
uint64_t sim_train_hivemind_tasks(int n);

/* An upper bound on the tasks one stage's synchronisation of w by algo
 * adds (its joins, optimizer steps and transfers) when its D_dp members
 * span at most `sites` sites, for the size check before a build. */
uint64_t sim_train_sync_tasks(const spec_workload *w, spec_dp_algo algo,
                              int sites, int channels);

/* An upper bound on the tasks sim_train_build adds for w (D_dp x D_pp, P
 * passes of M micro-batches) with its data-parallel groups over at most
 * `sites` sites: about 4 per (replica, stage, micro-batch) plus the
 * synchronisation of w's own algorithm, so the caller can refuse a
 * workload whose graph would overflow 32-bit task and edge indices or the
 * memory before building it. Each task has at most
 * SIM_TRAIN_EDGES_PER_TASK outgoing edges on average. */
uint64_t sim_train_task_bound(const spec_workload *w, int sites);
#define SIM_TRAIN_EDGES_PER_TASK 5

#endif
