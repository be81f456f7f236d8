/* hop: one message from one device to another as the predictor sees it —
 * the engine's transport (sim/net.c) for a flow alone on its path, and
 * where the flows of one phase share a NIC or a path, the shares of the
 * engine's weighted max-min with flows leaving as they finish.
 * A message of S bytes of an operation of C NCCL channels (a collective's
 * TRANSPORT_NCCL_RING_CHANNELS, a p2p send's TRANSPORT_P2P_CHANNELS), each
 * a connection of N sockets (the receiving device's site: nccl_sockets),
 * uses n = transport_sockets_dealt(C, N, S) of them (the engine's
 * connection (a, b, C)) and its bytes leave at the least of: the pair's
 * bandwidth — under tc shaping the sender's shaper for the receiver's
 * class, divided among `share` equal flows; under path shaping the share
 * of the path between their sites (n of the socket weight on it), or the
 * whole link for a private pair (one site, or an override) —, each NIC's
 * share (n of the socket weight through it), n times the path's per-flow
 * cap (flow_gbps, between different NICs only), and under tcp n windows
 * per round trip, RTT = latency a -> b + latency b -> a, the window and
 * its loss bound transport_path_of's (transport_message_s); they arrive
 * one one-way latency after they leave. The send completes when its last
 * byte is in the connection's socket buffers (C x N x window bytes not yet
 * sent). Connections are warm (their window grown in earlier iterations);
 * with transport_options.idle_restart on, a connection idle since the
 * start of the iteration restarts from the initial window.
 *
 * Sharing. A phase's flows (hop_net_flow: a pipeline's pass, one group's
 * synchronisation; each from its start time) are counted connection by
 * connection (hop_net_count, with the bytes each carries in the phase).
 * A flow that shares no NIC or path with another flow splits each among
 * its own connections by socket weight (the shares above, the phase's
 * counts), which the engine's max-min gives while they all send. Where
 * flows share one, hop_net_solve runs the engine's weighted max-min over
 * the phase's flows with departures (models/fill.h: the engine's weights,
 * sockets, over the RTT under tcp; each flow at the pace of its slowest
 * connection, within its connections' own bounds and, for a pipeline, its
 * compute): a connection's rate is then its rate available over its
 * flow's life, a flow left alone when the others have finished getting
 * what they leave. Exact, in the fluid limit, for flows that start
 * together and send throughout.
 * Left out: a flow's legs move at one pace where coupled (a ring; a
 * part of sharded-ps, whose pieces go as one round) and a tandem's
 * downstream held to its upstream once caught up (fill.h: a held flow's
 * cap is its upstream's rate in a second solve); a leg's rate is the
 * time-average of what it could send (its share where other legs send at
 * once), which a closed form then takes as constant; flows start when the
 * last of their members is ready; under tc a shaper shared by one flow's
 * connections is its `share`, not a resource of the fill; time-varying
 * links (the values at t = 0). Exact where no flow shares a resource
 * (the split by socket weight), and in the fluid limit for flows that
 * start together.
 * Invariant: a hop_net owns only per-call arrays (hop_net_free); hop_of
 * and the times are pure functions of the net's counts, its solve and the
 * scenario. */
#ifndef MODELS_HOP_H
#define MODELS_HOP_H

#include <stdbool.h>
#include <stddef.h>

#include "models/transport.h"
#include "traces/scenario.h"

typedef struct hop_net {
  const scenario *s;  /* borrowed */
  transport_options o;
  int *nic;           /* device -> NIC: itself, or its site's first device
                         when the site's GPUs share one */
  double *cap;        /* NIC -> capacity, bytes/s; 0: unlimited */
  double *out, *in;   /* NIC -> socket weight of the phase's flows leaving
                         and entering it */
  double *rout, *rin; /* the same for the reversed phase: each counted
                         flow b -> a at its own weight (the sockets of a,
                         which may differ from b's) */
  bool swap;          /* read rout and rin: the phase reversed */
  bool path;          /* path shaping (and not ideal): paths are shared */
  double *pw, *rpw;   /* path id (scenario_path) -> socket weight of the
                         phase's flows on it, and of the reversed phase's;
                         NULL unless path */
  int *touched;       /* path ids counted since the last reset */
  int ntouched;
  /* the phase's flows and their connections (hop_net_flow, _count), and
   * after hop_net_solve a table (a, b, channels) -> connection */
  struct hop_flow *flow;
  int nflow;
  size_t flow_cap;
  struct hop_leg *leg;
  int nleg;
  size_t leg_cap;
  int *slot;          /* open addressing: leg index or -1 */
  int nslot;
  bool solved;        /* hop_net_solve ran since the last count */
  int nshared;        /* flows its last solve shared (both directions) */
  int nvaried;        /* of those, flows whose rate changed while they
                         sent (their legs' averaged rates approximate) */
  int ncoupled;       /* resources its last solve found two or more of one
                         flow's legs (a chain's, a ring's, a pass's
                         boundaries; not pieces) binding together: shared
                         at one rate, the engine's work-conserving */
  int ncoupled_pass;  /* the same of a pipeline's pass (hop_net_pass), or
                         of several pipelines' boundaries on one resource */
  int part;           /* hop_of reads the connections of flows' part
                         `part` (0 unless set: hop_net_then) */
} hop_net;

typedef struct hop {
  double lat, rtt; /* one-way a -> b, and a -> b -> a, seconds */
  double rate;     /* bytes/s, every bound but tcp's window */
  double window;   /* tcp: bytes in flight per socket (cwnd_max) */
  double room;     /* the connection's socket buffers: C x N x window */
  int channels;    /* C */
  int sockets;     /* N, per channel */
} hop;

/* A net over s under o (copied; NULL: transport_options_default), no
 * flows counted. Free with hop_net_free. */
void hop_net_init(hop_net *n, const scenario *s, const transport_options *o);
void hop_net_free(hop_net *n);

/* A new phase: no flows counted, not swapped. */
void hop_net_reset(hop_net *n);

/* Counts a message of bytes a -> b of an operation of `channels` channels
 * of the current phase on the NICs it crosses, and under path shaping on
 * its path (weight: the sockets it uses): the split when no flow shares a
 * resource with another (hop_of). */
void hop_net_count(hop_net *n, int a, int b, double bytes, int channels);

/* Opens a flow of the current phase that may start sending at `start`
 * seconds: the connections given next (hop_net_leg) are its first part.
 * Its progress is at most cap (whole parts per second; INFINITY: none),
 * cap_rev in the reversed phase (swap). */
void hop_net_flow(hop_net *n, double start, double cap, double cap_rev);

/* Opens the next part of the open flow (a reduce's broadcast, the ring
 * after the sites' reduces): it starts when the part before it is done
 * (every flow of it); hop_of reads it when n->part says. */
void hop_net_then(hop_net *n);

/* Opens another flow of the open part beside the last one, from `start`
 * (a site's chain beside another's), or restarts the open one at `start`
 * while it has no connection yet. */
void hop_net_beside(hop_net *n, double start);

/* Opens the next stretch of the open part downstream of the last one (a
 * pipeline's next boundary, a chain's next hop), which may start sending
 * at `start`: its progress never passes that one's (fill.h's tandem);
 * caps as hop_net_flow's. In the reversed phase the stretches run the
 * other way. */
void hop_net_next(hop_net *n, double start, double cap, double cap_rev);

/* Marks the open flow's stretches (given next) as passing whole messages
 * (a pass of one micro-batch): each starts when the one upstream of it is
 * done, not beside it (in the reversed phase the other way). */
void hop_net_whole(hop_net *n);

/* Marks the open flow's legs (and its later parts') as pieces sent at
 * once side by side (sharded-ps's), not a chain's or a ring's coupled
 * legs: hop_net.ncoupled does not count them. */
void hop_net_pieces(hop_net *n);

/* Marks the open flow (and its next stretches) as a pipeline's pass: its
 * coupled legs count in hop_net.ncoupled_pass. */
void hop_net_pass(hop_net *n);

/* The connection a -> b of the open part, of an operation of `channels`
 * channels whose messages are of `bytes`, carrying `total` bytes in the
 * part (in the reversed phase b -> a, with a's site's sockets). A
 * connection is given once per part. */
void hop_net_leg(hop_net *n, int a, int b, double bytes, double total,
                 int channels);

/* Shares what the phase's flows share (the header's "Sharing"), for both
 * the phase and its reverse: call after the counts, before hop_of. */
void hop_net_solve(hop_net *n);

/* The hop a -> b for a message of bytes of an operation of `channels`
 * channels, one of `share` equal flows on the sender's shaper for b's
 * class (tc; path shaping counts its path's flows instead); on a
 * connection of a flow that shares a resource with another, its rate over
 * its flow's life (hop_net_solve). */
hop hop_of(const hop_net *n, int a, int b, double bytes, int share,
           int channels);

/* Seconds until the last of bytes leaves over h, alone, on a warm
 * connection. */
double hop_time(const hop_net *n, const hop *h, double bytes);

/* The same from window *cwnd per socket (<= 0: the initial window), which
 * gets the window kept afterwards (tcp; other models ignore it). */
double hop_time_from(const hop_net *n, const hop *h, double bytes,
                     double *cwnd);

/* When a message of bytes issued at `issue`, whose last byte leaves at
 * `left` after x seconds of sending, has its last byte in the socket
 * buffers: when all but `room` bytes of the stream up to it have left
 * (at its own rate; at once when they fit). */
double hop_handed(const hop *h, double issue, double left, double bytes,
                  double x);

/* Whether connections restart slow start after idling (tcp with
 * idle_restart): then each phase's first messages pay it. */
bool hop_restarts(const hop_net *n);

/* A run of `flows` back-to-back messages of bytes on one connection that
 * starts from the initial window when hop_restarts, warm otherwise: the
 * time of one once the window has settled (*steady), and what the first
 * ones take beyond it, together (returned; 0 when warm). The window
 * settles below W when a message leaves within one round trip: it then
 * never doubles (the engine's slow start counts round trips per message,
 * transport_message_s). */
double hop_first_extra(const hop_net *n, const hop *h, double bytes,
                       int flows, double *steady);

/* tcp with idle restart (approximate): the time of each of a run of
 * messages on h, x alone and warm, that come every `pace` seconds (the
 * slowest server before it): when the connection idles past its RTO in
 * between, each restarts from what transport_idle_window leaves, but is
 * charged at most the pace (one slower than that queues the next behind
 * it, which then leaves back to back on the grown window). x otherwise. */
double hop_paced(const hop_net *n, const hop *h, double bytes, double x,
                 double pace);

/* The rate of the hop a -> b alone on its NICs and path (within its tcp
 * windows per round trip), bytes/s; 0 where it crosses no NIC (ideal, or
 * inside an instance). */
double hop_alone_rate(const hop_net *n, int a, int b, double bytes,
                      int channels);

/* The NIC (index of n->nic's values) that binds the hop a -> b alone (its
 * rate the NIC's capacity: the link and the per-flow cap are faster), the
 * slower end's where both could; -1 where none does or the hop crosses no
 * NIC. */
int hop_nic_bound(const hop_net *n, int a, int b, double bytes, int channels);

/* The rate of a -> b (messages of bytes, `channels` channels) while a -> c
 * (cbytes, cchannels) sends beside it from a's NIC, and that one's (*rc):
 * the engine's weighted max-min of the NIC between the two (weights: the
 * sockets, over the round trip under tcp), each within its rate alone
 * (hop_alone_rate). Where they do not both cross a's NIC or it has room
 * for both, each its rate alone. */
double hop_beside_rate(const hop_net *n, int a, int b, double bytes,
                       int channels, int c, double cbytes, int cchannels,
                       double *rc);

#endif
