/* graph: a task graph executed event by event on per-device streams over the
 * flow-level network. A task is a compute (a duration on a device's compute
 * stream), a transfer (a flow from a sender to a receiver) or a join (zero
 * time: barriers, collective completion). Edges say "start b after a's
 * trigger": for a transfer, LEFT (its last byte left the sender: the send
 * stream is free) or DONE (it arrived); computes and joins fire both at once.
 * Invariant: a task starts exactly when its last predecessor trigger fires;
 * a transfer with a completion-order predecessor completes at the later of
 * its arrival and that predecessor's completion;
 * streams are expressed as edges between consecutive tasks of a stream
 * (issue order), built once before the run, so running allocates nothing per
 * event beyond the net's pooled flows and the queue's pooled events. */
#ifndef SIM_GRAPH_H
#define SIM_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/names.h"
#include "sim/net.h"

typedef struct sim_graph sim_graph;

typedef enum sim_task_kind {
  SIM_TASK_COMPUTE,
  SIM_TASK_XFER,
  SIM_TASK_JOIN
} sim_task_kind;

/* What a task is for, X(ID, "name"): statistics and timeline names. */
#define SIM_ROLE_MAP(X)                                                    \
  X(FWD, "fwd")                                                            \
  X(BWD, "bwd")                                                            \
  X(OPT, "optimizer")                                                      \
  X(ACT, "act")       /* activation transfer */                            \
  X(GRAD, "grad")     /* activation-gradient transfer */                   \
  X(DP, "dp")         /* gradient synchronisation transfer */              \
  X(SYNC, "sync")     /* join: a device's gradient synchronisation is      \
                         complete */                                       \
  X(BARRIER, "barrier")                                                    \
  X(CALL, "p2p call") /* a blocking point-to-point call (Megatron): its    \
                         join and its fixed host cost, a compute-stream    \
                         task that is not GPU work */                      \
  X(MATCH, "matchmaking") /* hivemind: the wait for a group (matchmaking's \
                         window, the leader's message), not GPU work */    \
  X(HOST, "host")     /* hivemind: reducing and applying averages on    \
                         the host CPU, not GPU work */
#define SIM_ROLE_ID_(id, name) SIM_ROLE_##id,
typedef enum sim_task_role { SIM_ROLE_MAP(SIM_ROLE_ID_) } sim_task_role;
#undef SIM_ROLE_ID_
enum { SIM_NROLES = 0 SIM_ROLE_MAP(NAMES_COUNT_ROW) };

/* Whether a task of role r is GPU work (forward, backward, the optimizer
 * step: a device's speed changes it), not a transfer, a join or a fixed
 * host cost (a barrier's, a blocking call's). */
bool sim_role_gpu_work(sim_task_role r);

typedef enum sim_trigger { SIM_ON_LEFT, SIM_ON_DONE } sim_trigger;

/* A task's record after the run (plain data, read by statistics and the
 * timeline). Times are -1 until reached. */
typedef struct sim_task {
  uint8_t kind, role;
  uint8_t channels;   /* transfer: its operation's NCCL channels, each a
                         connection of the receiver's sockets
                         (transport_op_channels) */
  uint8_t spare;      /* zero: the record has no padding, so two records
                         compare bytewise whatever the memory held before */
  int dev, dst;       /* compute: dev; transfer: dev -> dst; join: dev or -1 */
  int mb;             /* micro-batch (or chunk/step) index, -1 if none */
  int64_t dur_ns;     /* compute duration */
  double bytes;       /* transfer size */
  int64_t t_start, t_left, t_done;
  uint32_t deps;      /* predecessors not yet fired (builder: total) */
  uint32_t succ, nleft, ndone; /* CSR: LEFT successors, then DONE ones */
} sim_task;

sim_graph *sim_graph_new(void);
void sim_graph_free(sim_graph *g);

/* Empties g (no tasks, no edges) but keeps its memory, so the next build and
 * run of a graph of similar size touches no fresh pages. */
void sim_graph_clear(sim_graph *g);

/* Frees what only a run reads (the CSR, the run-time records, the
 * roots) of a detached g, keeping the task records and the edges for a
 * reader of the finished run (sim/critpath.h); a next run rebuilds them. */
void sim_graph_trim(sim_graph *g);

/* Adds a task; returns its id (ids are dense, in creation order). */
uint32_t sim_graph_compute(sim_graph *g, int dev, int64_t dur_ns,
                           sim_task_role role, int mb);
uint32_t sim_graph_xfer(sim_graph *g, int src, int dst, double bytes,
                        sim_task_role role, int mb);
uint32_t sim_graph_join(sim_graph *g, int dev, sim_task_role role);

/* Transfer t runs over its sender's connection of an operation of
 * `channels` NCCL channels (1 .. TRANSPORT_CHANNELS_MAX): a collective's
 * are TRANSPORT_NCCL_RING_CHANNELS. Unless set, a transfer is a p2p send
 * (TRANSPORT_P2P_CHANNELS). */
void sim_graph_channels(sim_graph *g, uint32_t t, int channels);

/* b starts only after a's trigger (LEFT is DONE for non-transfers). */
void sim_graph_edge(sim_graph *g, uint32_t a, uint32_t b, sim_trigger when);

/* Completion order: transfer b completes (DONE) no earlier than a does,
 * whenever its bytes arrive — a receive stream, which consumes messages in
 * issue order while their bytes flow freely (DESIGN.md section 4). A task
 * has at most one such predecessor and one such successor. */
void sim_graph_order(sim_graph *g, uint32_t a, uint32_t b);

/* A stream: consecutive calls with the same stream chain their tasks in
 * issue order. *last is the stream's state (init SIM_GRAPH_NONE); trig is
 * what frees the stream (LEFT for a send stream, DONE otherwise). */
#define SIM_GRAPH_NONE UINT32_MAX
void sim_graph_stream(sim_graph *g, uint32_t *last, uint32_t t,
                      sim_trigger trig);

/* A receive stream: consecutive transfers complete in issue order
 * (sim_graph_order), their bytes flowing independently. */
void sim_graph_recv_stream(sim_graph *g, uint32_t *last, uint32_t t);

/* An edge as added: b waits for a's trigger (when: SIM_ON_LEFT or
 * SIM_ON_DONE), or, when is SIM_EDGE_ORDER, transfer b completes no earlier
 * than a (sim_graph_order). */
enum { SIM_EDGE_ORDER = 2 };
typedef struct sim_edge {
  uint32_t a, b;
  uint8_t when;
} sim_edge;

/* The edges in the order they were added (borrowed, *nedges of them), for
 * a reader that runs the same graph elsewhere (tests/simgrid). */
const sim_edge *sim_graph_edges(const sim_graph *g, size_t *nedges);

/* Runs the graph from time 0 over topo (borrowed) under transport o, on a
 * clock of its own (attach, run_at from 0, detach). Returns the number of
 * events taken from the queue, or -1 when tasks are left that can never
 * start (a cycle in the graph: a deadlock). */
int64_t sim_graph_run(sim_graph *g, const sim_net_topo *topo,
                      const transport_options *o);

/* How fast each device computes over time (faults' device_slow): speed(ctx,
 * dev, t) > 0 multiplies the rate of the GPU work (forward, backward,
 * optimizer) of dev at time t; next(ctx, t) is the first time > t at which
 * some device's speed changes, INT64_MAX for none. Borrowed by a run. */
typedef struct sim_graph_speed {
  const void *ctx;
  double (*speed)(const void *ctx, int dev, int64_t t_ns);
  int64_t (*next)(const void *ctx, int64_t t_ns);
} sim_graph_speed;

/* Gives g a clock that outlives a run: a queue and a net over topo
 * (borrowed, must outlive the attachment) under transport o, whose TCP
 * connections start in state conn. Consecutive runs of g then continue one
 * clock: the trace's position, each connection's window and idle time.
 * Attaching again first detaches. */
void sim_graph_attach(sim_graph *g, const sim_net_topo *topo,
                      const transport_options *o, sim_net_conn conn);

/* After sim_graph_attach: the net logs every message's rate changes into
 * log (borrowed; sim_net_log_rates). */
void sim_graph_log_rates(sim_graph *g, sim_rate_log *log);

/* Frees the attached queue and net; nothing happens when none is. */
void sim_graph_detach(sim_graph *g);

/* From the next run on, g's run-time arrays (the records the run reads and
 * writes, the CSR, the order successors, the net's memo) are laid out in
 * the order its last run started the tasks, so that the tasks a run has in
 * hand sit together in memory: for runs of the same graph that go about as
 * that one did (a what-if's re-runs). Ids, records, edges and the rate log
 * stay the tasks'; every run gives the same bits as without it. */
void sim_graph_relayout(sim_graph *g);

/* Runs the attached g once more, its tasks free to start at t0 (>= the
 * end of the previous run; what the net had pending before t0 happens
 * first), until every task is done or the next event is at or after t_stop
 * (INT64_MAX: never), computing at the speeds sp gives (NULL: speed 1).
 * Returns the events taken from the queue and sets *stopped when it
 * stopped at t_stop with tasks left (the queue and net then hold an
 * unfinished run: detach before running again); -1 on a deadlock. The
 * records show the times reached (-1: not reached). */
int64_t sim_graph_run_at(sim_graph *g, int64_t t0, int64_t t_stop,
                         const sim_graph_speed *sp, bool *stopped);

/* Bytes a graph of ntasks tasks and nedges edges holds at its peak (the
 * records and edge list as they grow by doubling, the frozen CSR and the
 * run-time arrays), so a caller can refuse a graph before building it. */
double sim_graph_bytes(double ntasks, double nedges);

/* The tasks (borrowed, ntasks of them): what they are (kind, role, ends,
 * duration, bytes) from the build on, their times after a run; and the end
 * time. */
const sim_task *sim_graph_tasks(const sim_graph *g, uint32_t *ntasks);
int64_t sim_graph_end(const sim_graph *g);
uint64_t sim_graph_flows(const sim_graph *g);

#endif
