/* dpsync: the gradient synchronisation of one data-parallel group in
 * closed form, as sim/train.c builds it (DESIGN.md section 4), member i
 * starting when it is ready (its last backward, or the call after it):
 * - central-ps: an NCCL reduce along the ring 1 -> 2 -> ... -> R-1 -> 0
 *   (NCCL's order), then a broadcast 0 -> ... -> R-1, each in chunks (TRANSPORT_NCCL_CHUNK_BYTES,
 *   at most TRANSPORT_NCCL_MAX_CHUNKS). A hop is a server of chunk time
 *   followed by its latency as a pure delay (NCCL keeps several chunks in
 *   flight): a tandem (models/tandem.h) that member i joins when ready;
 * - ring: NCCL's ring all-reduce (transport_ring_plan): loops of 2 (R - 1)
 *   steps in slices, a message leaving a member when the one it waits for
 *   (transport_ring_wait) has arrived from its predecessor and its own
 *   previous message has left: the (message, member) grid evaluated in
 *   order, O(R K) for K messages per member;
 * - sharded-ps: every member sends S / R to every other at once (the
 *   flows to one class sharing the sender's shaper), reduces its shard
 *   when all have arrived and sends it back to all; a return piece leaves
 *   after the reduce piece on the same connection (messages on one
 *   connection leave in issue order);
 * - hier-ring: central-ps's reduce inside each site (scenario's
 *   device_site) to its first member in group order, the ring across those
 *   members, central-ps's broadcast inside each site;
 * - hivemind: its butterfly all-reduce alone (models/hivemind.h: parts
 *   by declared bandwidth, one connection per pair), without the
 *   matchmaking and the host's work, which models/predict adds;
 * - diloco, streaming-diloco: nothing per step (their outer exchange is a
 *   ring or a hier-ring, which the caller names).
 * A member is done when everything it waits for has arrived and its own
 * last message is in its socket buffers (hop_handed).
 * Invariant: pure functions of (net, group, bytes, ready); scratch is
 * freed before return. */
#ifndef MODELS_DPSYNC_H
#define MODELS_DPSYNC_H

#include "models/hop.h"
#include "models/spec.h"

/* Counts the messages of algo over group grp (R members) carrying bytes on
 * the NICs (and paths) of n's current phase, as one flow of the phase
 * (hop_net_flow; each connection with the bytes it carries in all), member
 * i ready at ready[i] (NULL: all at 0): from when the last is (a member
 * ready early may start a chain: left out). ring_channels: the channels of a ring's connections
 * (TRANSPORT_NCCL_RING_CHANNELS for NCCL's all-reduce,
 * TRANSPORT_DILOCO_CHANNELS for DiLoCo's exchange, as sim_train_ring);
 * central-ps's chains are NCCL's collectives always. Call hop_net_solve
 * after the phase's counts. */
void dpsync_count(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                  double bytes, int ring_channels, const double *ready);

/* Synchronises bytes over grp (R members, rank order) by algo, member i
 * ready at ready[i] (NULL: all at 0): done[i] gets when member i has the
 * result. R = 1: done[0] = ready[0]. ring_channels as dpsync_count's. */
void dpsync_run(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                double bytes, int ring_channels, const double *ready,
                double *done);

/* dpsync_run, and (left not NULL) left[i]: when member i's last message
 * has left it (its last byte sent), so that the next operation on the
 * same connections waits for it (messages on one connection leave in
 * issue order): a ring's; the other algorithms' done[i] (their
 * connections' backlog left out). */
void dpsync_run_left(hop_net *n, spec_dp_algo algo, const int *grp, int R,
                     double bytes, int ring_channels, const double *ready,
                     double *done, double *left);

/* One pipelined NCCL chain operation (a reduce or a broadcast) along
 * grp[0] -> grp[1] -> ... -> grp[R-1], all ready at 0: when the last
 * member has every chunk. */
double dpsync_chain_s(hop_net *n, const int *grp, int R, double bytes);

#endif
