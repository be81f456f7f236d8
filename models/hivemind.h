/* hivemind: the data-parallel averaging of hivemind (learning-at-home/
 * hivemind at 4bd43b77895019b20d18d81d0d0c1a5ab9a10847; file:line below
 * is at that commit), on which DeDLOC, SWARM, Petals and the multi-cloud
 * studies ran: each data-parallel group (a stage's replicas, as SWARM
 * averages each stage's peers) forms by matchmaking over its DHT, then
 * averages by a butterfly all-reduce whose parts follow the bandwidths the
 * peers declare, on the host CPU.
 *
 * - The partition (load_balancing.py:13-86, load_balance_peers and
 *   optimize_parts_lp): peer i averages the fraction w_i of the vector and
 *   its network load is V (1 + (n - 2) w_i) each way (it sends V (1 - w_i)
 *   of its own and returns (n - 1) V w_i of averages); the LP minimises
 *   max_i (1 + (n - 2) w_i) / b_i under sum w_i = 1, 0 <= w_i <= 1. Its
 *   optimum is water-filling: w_i = max(0, (T b_i - 1) / (n - 2)) at the T
 *   where they sum to 1, so the parts are affine in the bandwidth, not
 *   proportional to it. Where that optimum is unique (every peer with a
 *   declared bandwidth above 1 / T) it is the LP's answer; where the
 *   slowest peer alone sets the time (1 / b_min >= T: it must send its
 *   whole vector whatever its part) every point of a face is optimal and
 *   hivemind returns the one its interior-point solver stops at, which
 *   depends on SciPy's version; geodes takes the water-filling point (the
 *   same LP objective). Two peers: halves (the LP does not depend on w).
 *   A peer of bandwidth 0 (client mode) averages nothing; none declared
 *   at all, equal parts (hivemind's bandwidth None, the default when a
 *   peer declares none; every 0 hivemind refuses).
 * - What a peer declares (averager.py:72-74, `bandwidth`; the ALBERT
 *   example declares it, examples/albert/run_trainer.py:282; without one
 *   every peer gets an equal part, load_balancing.py:28-30): here the
 *   rate it could measure to its slowest groupmate, the least of its NIC
 *   (nic_gbps, divided among the group's members behind one shared NIC)
 *   and the links from it to the other members at t = 0.
 * - Matchmaking (matchmaking.py:112-147, 262-300, 414-546): a peer
 *   declares itself under the group key in the DHT, reads the averagers
 *   declared there and asks the one of earliest expiration to lead; the
 *   leader assembles the group when its declared expiration,
 *   min_matchmaking_time after it began, has passed (or when the group is
 *   full; hivemind.Optimizer sets no target size, optimizer.py:300-315),
 *   and tells the followers BEGIN_ALLREDUCE. hivemind.Optimizer begins
 *   matchmaking matchmaking_time before the estimated end of the step
 *   (optimizer.py:559-567), so the group is ready at max(the step's start
 *   + window, the step's end) + the leader's one-way latency. The window
 *   is max(matchmaking_time, the protocol's round trips): a DHT store and
 *   a DHT get (each HIVEMIND_DHT_HOPS(n) round trips) and the join request
 *   (one), at the group's largest round trip.
 * - The all-reduce (allreduce.py:151-171, 201-258, 335-356; partition.py
 *   :64-93, 179-261): every peer streams its slice of each other peer's
 *   part to that peer, all at once, in parts of 512 KiB; the reducer adds
 *   part k of every sender, divides, and streams each sender the
 *   difference back as soon as part k is complete, so sending, reducing
 *   and returning overlap. Modelled in at most HIVEMIND_MAX_CHUNKS chunks
 *   per peer's part (hivemind's are 512 KiB: the pipeline's fill is
 *   coarser here), one connection per pair (libp2p multiplexes a pair's
 *   streams over one connection: HIVEMIND_CHANNELS).
 * - On the host (grad_averager.py:29, 105-106: the averaged tensors are
 *   fp32 in host memory): the reducer's work per value of its part is
 *   (n - 1) (32 + 2 w) + 36 bytes of memory traffic for w bytes a value on
 *   the wire (HIVEMIND_REDUCE_BYTES), and every peer's applying of the
 *   averages 24 + w bytes per value of the vector (HIVEMIND_APPLY_BYTES),
 *   at the params row hivemind_host_s_per_byte (one stream of
 *   element-wise passes at 10 GB/s by default). The senders'
 *   serialisation (4 + w per value) overlaps their sending: left out.
 *
 * Invariant: pure functions of their arguments; per-call scratch is freed
 * before return. */
#ifndef MODELS_HIVEMIND_H
#define MODELS_HIVEMIND_H

#include <stdbool.h>

#include "models/alloc.h"
#include "models/hop.h"
#include "models/spec.h"
#include "traces/scenario.h"

/* partition.py:17, DEFAULT_PART_SIZE_BYTES = 2**19: the parts a peer's
 * share of the vector is streamed in. */
#define HIVEMIND_PART_BYTES 524288.0

/* The chunks geodes cuts one peer's part into, at most (each at least
 * HIVEMIND_PART_BYTES): the engine's tasks grow with them. */
#define HIVEMIND_MAX_CHUNKS 8

/* One connection per pair of peers (libp2p, one TCP connection carrying
 * the pair's streams both ways). */
#define HIVEMIND_CHANNELS 1

/* dht/node.py:104, bucket_size = 20: a DHT of at most this many peers
 * finds a key in one round of requests; a larger one takes about one
 * more per doubling (Kademlia). */
#define HIVEMIND_DHT_BUCKET 20

/* The DHT round trips of one store or get among n peers. */
int hivemind_dht_hops(int n);

/* Bytes of host memory traffic per value the reducer of a part handles
 * from n senders (itself included) at w wire bytes a value:
 * deserialising each remote value (w + 4, allreduce.py:340), adding it
 * into the accumulator (12, partition.py:242), the difference sent back
 * (12, allreduce.py:354) and its serialising (4 + w), for n - 1 senders;
 * its own part added and differenced (24, allreduce.py:206-210); the
 * accumulator's zeroing and the division (4 + 8, partition.py:215, 260). */
double hivemind_reduce_bytes(int n, double w);

/* Bytes of host memory traffic per value a peer applies: the averaged
 * difference deserialised (w + 4, allreduce.py:226), joined into its
 * tensor (8, partition.py:158) and added to the local tensor (12,
 * averager.py:557). */
double hivemind_apply_bytes(double w);

/* load_balance_peers' fractions for n >= 1 peers of declared bandwidth
 * bw[i] >= 0 (any unit; at least one positive), into frac (n, summing to
 * 1), rounded to 9 decimals as load_balancing.py:81 rounds them. See the
 * header: the LP's unique optimum where it has one, else the
 * water-filling point of its optimal face; n = 2: halves. */
void hivemind_partition(int n, const double *bw, double *frac);

/* The LP's objective at frac: max over peers of positive bandwidth of
 * (1 + (n - 2) frac_i) / bw_i (load_balancing.py:43-46), the round's time
 * in units of the vector over a bandwidth. */
double hivemind_lp_time(int n, const double *bw, const double *frac);

/* hagenbach_bishoff (load_balancing.py:89-105): `size` elements split by
 * the scores frac (n, positive sum) into whole parts[i], summing to size:
 * each floor(size frac_i / sum), then one more at a time to the largest
 * frac_i / (parts_i + 1), the first such on ties. */
void hivemind_parts(long long size, int n, const double *frac,
                    long long *parts);

/* The bandwidth member i of grp (n devices) declares, bytes/s: see the
 * header. INFINITY when nothing limits it (ideal links, no NIC). */
double hivemind_declared_bps(const scenario *s, const int *grp, int n, int i);

/* The fractions of the vector grp's members average: hivemind_partition
 * of their declared bandwidths (every one unlimited: equal parts). */
void hivemind_fractions(const scenario *s, const int *grp, int n,
                        double *frac);

/* Seconds from the start of matchmaking to the group's assembly for grp
 * (n >= 2) when peers look for min_s (matchmaking_time): max(min_s,
 * (2 hivemind_dht_hops(n) + 1) x the largest round trip between members
 * at t = 0). */
double hivemind_matchmaking_s(const scenario *s, const int *grp, int n,
                              double min_s);

/* The chunks of a part of `bytes` on the wire: 0 for none, else
 * ceil(bytes / HIVEMIND_PART_BYTES) up to HIVEMIND_MAX_CHUNKS. */
int hivemind_chunks(double bytes);

/* One averaging round of a group (borrowed arrays). */
typedef struct hivemind_round {
  const int *grp;     /* its devices, n >= 2 */
  int n;
  double bytes;       /* the vector on the wire */
  double values;      /* its values, for the host's work; 0: none */
  const double *frac; /* the parts (hivemind_fractions) */
  double host_s_per_byte; /* hivemind_host_s_per_byte */
} hivemind_round;

/* Counts the round's messages on net's NICs and paths: member i's slice
 * of every other member's part to it, and its averages back. */
void hivemind_count(hop_net *net, const hivemind_round *r);

/* The rounds r[0..k) at once in closed form (their flows counted on net
 * by hivemind_count), member i of round q starting at ready[q][i]
 * (ready NULL: 0): done[q][i] gets when it has applied every average and
 * its own last message is in its socket buffers. Each connection i -> j
 * carries i's slice of j's part interleaved with i's averages to j; when
 * its slice and its bytes are through comes from the rounds' connections
 * as fluid flows under max-min sharing of NICs, shapers and paths
 * (models/hivemind_flow.h), or past HIVEMIND_FLOW_MAX connections from
 * its link's rate (hop_of, the flows counted) and its NICs' processor
 * sharing (its first X bytes are through once each connection of the NIC
 * has sent min(its bytes, X)); a reducer's chunk is reduced when its
 * slowest sender's has arrived, one chunk at a time on its host; the
 * averages come back behind it; a member applies them in peers' order
 * (partition.py:138-160), one chunk at a time. */
void hivemind_run(hop_net *net, const hivemind_round *r, int k,
                  const double *const *ready, double *const *done);

/* Every stage's round of w under a (R x D) in closed form, the rounds at
 * once on net (its flows counted here). ready[r D + st] holds when stage
 * st of replica r has its gradient in (its last backward) and gets when
 * its round is done. Each round begins at max(its window, the last
 * member's ready) plus the leader's latency to the member; delayed
 * (spec_dp_delayed: the previous step's round, beside the passes), at 0
 * plus that latency, and its window does not hold it. Returns the latest
 * window's end (from 0). */
double hivemind_rounds(hop_net *net, const spec_workload *w, const alloc *a,
                       double *ready);

#endif
