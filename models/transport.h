/* transport: the vocabulary and the constants of the network transport that
 * the engine (sim/net.c) simulates and the predictor (models/predict.c)
 * models in closed form — one home, below both (sim/ may include models/,
 * not the reverse). A transfer is one NCCL message of an operation over
 * that operation's channels (a p2p send's TRANSPORT_P2P_CHANNELS, a ring
 * collective's TRANSPORT_NCCL_RING_CHANNELS), each channel a connection of
 * N TCP sockets (NCCL's socket transport); its bytes are split between the
 * channels and dealt over each one's sockets in chunks of at least
 * TRANSPORT_SOCKET_MIN_CHUNK, so a small message uses fewer of them
 * (transport_sockets_dealt).
 * Invariant: every function here is a pure function of its arguments. */
#ifndef MODELS_TRANSPORT_H
#define MODELS_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/names.h"
#include "traces/scenario.h"

/* The network models, chosen per run, X(ID, "name"). What sets them apart
 * is asked through transport_is_shared and transport_is_windowed (or a
 * switch that names every model), never by comparing with one of them. */
#define TRANSPORT_MODEL_MAP(X)                                          \
  X(IDEAL, "ideal") /* private link per ordered pair: alpha + S/beta */ \
  X(NETEM, "netem") /* per-sender egress shaper per class + NICs */      \
  X(TCP, "tcp")     /* netem + per-socket window, slow start, restart */
#define TRANSPORT_MODEL_ID_(id, name) TRANSPORT_##id,
typedef enum transport_model {
  TRANSPORT_MODEL_MAP(TRANSPORT_MODEL_ID_)
} transport_model;
#undef TRANSPORT_MODEL_ID_
enum { TRANSPORT_NMODELS = 0 TRANSPORT_MODEL_MAP(NAMES_COUNT_ROW) };

/* The model a run gets unless it names one: tcp, the faithful one (NCCL's
 * sockets with their windows); netem and ideal are what-ifs. */
#define TRANSPORT_MODEL_DEFAULT TRANSPORT_TCP

/* "ideal", "netem", "tcp" (NULL-terminated: the list the command line and
 * the sweep files accept); parse returns -1 for an unknown name. */
extern const char *const transport_model_names[TRANSPORT_NMODELS + 1];
const char *transport_model_name(transport_model m);
int transport_model_parse(const char *name);

/* Whether m's messages share the wire: the sender's egress shaper per
 * destination class, the NICs and the per-flow caps, each flow weighted by
 * its sockets (netem, tcp); false when each ordered device pair has a
 * private link (ideal). */
bool transport_is_shared(transport_model m);

/* Whether m bounds each socket by TCP's window, with slow start, idle
 * restart and the retransmission timeout (tcp). */
bool transport_is_windowed(transport_model m);

/* TCP, as Linux runs it: segments of 1448 payload bytes (1500-byte MTU with
 * timestamps), an initial window of 10 segments (RFC 6928). A host's window
 * bound per socket is its site's tcp_window_bytes (traces/scenario.h):
 * Linux's default, 3 MiB (TRANSPORT_HOST_WINDOW), unless the site says;
 * DT-FM's p3 hosts say 1.45 MB (TRANSPORT_DTFM_WINDOW), fitted on DT-FM's
 * Gloo point-to-point rows (one socket, 64 and 128 MiB at 5 and 10 ms:
 * 274/512/532/972 ms measured, the window-bound rows): less than the
 * default's 3 MiB, the share per-packet buffer overhead takes on those
 * hosts. The retransmission timeout is the RTT plus Linux's minimum of
 * 200 ms (tcp_rto_min). */
#define TRANSPORT_TCP_SEGMENT_BYTES 1448
#define TRANSPORT_TCP_SEGMENT ((double)TRANSPORT_TCP_SEGMENT_BYTES)
#define TRANSPORT_TCP_INITIAL_SEGMENTS 10.0
#define TRANSPORT_TCP_INITIAL_WINDOW \
  (TRANSPORT_TCP_SEGMENT * TRANSPORT_TCP_INITIAL_SEGMENTS)
#define TRANSPORT_HOST_WINDOW SCENARIO_TCP_WINDOW_DEFAULT
#define TRANSPORT_DTFM_WINDOW SCENARIO_TCP_WINDOW_DTFM
#define TRANSPORT_TCP_RTO_MIN_S 0.2

/* The per-socket windows a run, a link or a site may set (the command
 * line, a sweep's window_bytes, the keys): at least one segment, at most
 * 1 TiB — the loader's bounds (traces/trace.h), which the knob's row
 * (traces/workload.h) reads too. */
#define TRANSPORT_WINDOW_MIN_BYTES TRACE_WINDOW_MIN_BYTES
#define TRANSPORT_WINDOW_MAX_BYTES TRACE_WINDOW_MAX_BYTES
_Static_assert(TRANSPORT_TCP_SEGMENT_BYTES == TRACE_WINDOW_MIN_BYTES,
               "the smallest window is one TCP segment");

/* NCCL's socket transport: sockets per connection (the default is 1; NCCL
 * opens 2 threads x 8 = 16 on AWS's ENA NICs), at most 64 (its MAX_SOCKETS),
 * and the smallest piece of a message one socket carries (MIN_CHUNKSIZE in
 * net_socket.cc). */
#define TRANSPORT_SOCKETS_DEFAULT 1
#define TRANSPORT_SOCKETS_MAX SCENARIO_SOCKETS_MAX
#define TRANSPORT_SOCKET_MIN_CHUNK 65536.0

/* NCCL's pipelined ring collectives (reduce, broadcast) move a buffer in
 * chunks: the engine and the predictor cut them alike. */
#define TRANSPORT_NCCL_CHUNK_BYTES (4.0 * 1024 * 1024)
#define TRANSPORT_NCCL_MAX_CHUNKS 128

/* NCCL's ring all-reduce, Simple protocol (the one its tuner picks for
 * large buffers): each connection has NCCL_STEPS = 8 slots
 * (src/include/device.h) of the 4 MiB buffer (DEFAULT_BUFFSIZE,
 * src/init.cc), a step of 512 KiB; a chunk is ALLREDUCE_CHUNKSTEPS =
 * NCCL_STEPS / 2 steps and moves in slices of ALLREDUCE_SLICESTEPS =
 * NCCL_STEPS / 4 (src/include/collectives.h). runRing in
 * src/device/all_reduce.h runs the buffer in loops of nranks chunks per
 * channel, each loop 2 (nranks - 1) steps that each wait, slice by slice,
 * for the previous step from the ring's previous rank, and the next loop
 * starts after the final receive of this one: the ring's latency is paid
 * 2 (nranks - 1) times per loop, not once per all-reduce. The slots give
 * no end-to-end credit over sockets: the proxy sends while transmitted <
 * done + NCCL_STEPS (src/transport/net.cc:1358) and a socket send is done
 * once its bytes are written (net_socket.cc:682), so TCP's window, not the
 * 4 MiB buffer, bounds the bytes in flight. Lines cited at NCCL commit
 * 5067397c: all_reduce.h:33-82, collectives.h:19-20, device.h:26,
 * init.cc:813, connect.cc:460, reduce.h:34-55, enqueue.cc:909-924 and
 * 1143-1146, paths.cc:943-951 (2.11.4: e11238b3 paths.cc:491). */
#define TRANSPORT_NCCL_STEPS 8
#define TRANSPORT_NCCL_BUFFSIZE (4.0 * 1024 * 1024)
#define TRANSPORT_NCCL_STEP_BYTES (TRANSPORT_NCCL_BUFFSIZE / TRANSPORT_NCCL_STEPS)
#define TRANSPORT_NCCL_ALLREDUCE_CHUNKSTEPS (TRANSPORT_NCCL_STEPS / 2)
#define TRANSPORT_NCCL_ALLREDUCE_SLICESTEPS (TRANSPORT_NCCL_STEPS / 4)
/* Channels of a ring collective between single-NIC hosts: the ring search
 * finds one ring per NIC and ncclTopoPostset (src/graph/connect.cc,
 * "Duplicate ringPrev/ringNext", nChannels * 2) doubles it; each channel
 * is its own connection. */
#define TRANSPORT_NCCL_RING_CHANNELS 2
/* Channels of one large point-to-point send between hosts:
 * p2pnChannelsPerPeer (NCCL_NCHANNELS_PER_NET_PEER, 2; src/graph/paths.cc
 * ncclTopoGetNchannels) halved while nChannels x nRanks exceeds the
 * comm's p2p channels (src/enqueue.cc: "Try to use all channels, but one
 * channel per operation"), then doubled back for a message over one
 * p2p chunk (addP2pToPlan, maxPartSize). Older NCCL (2.8-2.11, DT-FM's
 * era) halved nChannelsMax while nChannelsMax x nRanks > 4 p2pnChannels
 * and kept it: one channel for 8 ranks. */
#define TRANSPORT_NCCL_P2P_CHANNELS_PER_PEER 2
/* The most loops the engine and the predictor cut a ring into: beyond it
 * the pieces grow and the latency is paid fewer times than NCCL pays it
 * (a buffer above 128 x 2 x nranks x 2 MiB). */
#define TRANSPORT_NCCL_MAX_LOOPS 128

/* One member's share of NCCL's ring all-reduce as the engine and the
 * predictor cut it: `loops` loops of 2 (nranks - 1) steps, each step
 * `slices` messages of `piece` bytes over the connection to the next
 * rank (all channels together). */
typedef struct transport_ring {
  int loops, slices;
  double piece;
} transport_ring;

/* NCCL's cut of an all-reduce of bytes over nranks >= 2 members:
 * loops = ceil(bytes / (channels x nranks x chunk)) in 1 ..
 * TRANSPORT_NCCL_MAX_LOOPS, chunk = CHUNKSTEPS x step bytes, slices =
 * CHUNKSTEPS / SLICESTEPS (fewer when a channel's chunk is under one
 * slice of 1 MiB), piece = bytes / (nranks x loops x slices) (NCCL shrinks
 * only the last loop's chunk; here the loops are equal). */
transport_ring transport_ring_plan(double bytes, int nranks);

/* Position p of a member's 2 (nranks - 1) x loops x slices ring messages
 * waits for the arrival of the previous rank's position
 * transport_ring_wait(plan, nranks, p), or none (-1: its first step of the
 * first loop, or a later slice of a loop's first step, which waits only
 * for its own previous message). */
int transport_ring_wait(const transport_ring *r, int nranks, int p);

/* The operations of a run and the connections NCCL gives each. */
typedef enum transport_op {
  TRANSPORT_OP_P2P,  /* a pipeline send (ncclSend/ncclRecv) */
  TRANSPORT_OP_RING  /* allreduce, reduce, broadcast: ring collectives */
} transport_op;

/* The most channels one operation uses to a peer: the ring's (a p2p send
 * uses at most its per-peer count, no more). */
#define TRANSPORT_CHANNELS_MAX TRANSPORT_NCCL_RING_CHANNELS
_Static_assert(TRANSPORT_NCCL_P2P_CHANNELS_PER_PEER <= TRANSPORT_CHANNELS_MAX,
               "a p2p send uses no more channels than the ring");

/* The channels of the engine's and the predictor's p2p sends (pipeline
 * activations and gradients, sharded-PS pieces): the runtimes geodes
 * simulates ran NCCL 2.8-2.11 (DT-FM's 2022 runs, which calibrate it;
 * Megatron's of the same year), whose rule gives one channel to a remote
 * peer (transport_op_channels with old_nccl). */
#define TRANSPORT_P2P_CHANNELS 1

/* DiLoCo's outer all-reduce as PRIME runs it (the one DiLoCo system built
 * in, INTELLECT-1; PrimeIntellect-ai/prime src/zeroband/C/csrc/
 * collectives.cpp, diloco.py): an int8 ring on the CPU over Gloo, one TCP
 * connection to each ring neighbour, not NCCL's channels. */
#define TRANSPORT_DILOCO_CHANNELS 1

/* Channels of one operation's traffic to a peer, each its own connection
 * of the site's sockets. RING: TRANSPORT_NCCL_RING_CHANNELS; P2P of bytes
 * in a comm of nranks: the channels of src/enqueue.cc for that size (1 at
 * most one step of 128 KiB, NCCL_P2P_NET_CHUNKSIZE), or with old_nccl
 * DT-FM's era's rule (TRANSPORT_P2P_CHANNELS). */
int transport_op_channels(transport_op op, int nranks, double bytes,
                          bool old_nccl);

/* Sockets of one operation's traffic to a peer: transport_op_channels x
 * sockets per connection. */
int transport_op_sockets(transport_op op, int sockets, int nranks,
                         double bytes, bool old_nccl);

/* How the transport of one run behaves (plain data). */
typedef struct transport_options {
  transport_model model; /* TRANSPORT_TCP by default */
  double window_bytes;   /* a run-level what-if: the TCP window W of every
                            socket (--window-bytes, a sweep's window_bytes);
                            <= 0: each connection's own (transport_path_of) */
  bool idle_restart;     /* tcp: Linux's tcp_slow_start_after_idle: a
                            socket idle for an RTO halves its window per
                            RTO elapsed, down to the initial window */
} transport_options;

/* tcp (the faithful model; netem and ideal are what-ifs), each
 * connection's own window, no idle restart: DT-FM's 10 ms and
 * 50 ms rows differ by the latency alone (its hosts kept their windows
 * across a phase's idle seconds), which a restart would multiply. */
transport_options transport_options_default(void);

/* What one connection a -> b's TCP window and rate per socket come from
 * (plain data; 0 means absent for each but the RTT). */
typedef struct transport_path_in {
  double rtt_s;          /* a -> b -> a, seconds */
  double run_window;     /* transport_options.window_bytes */
  double link_window;    /* the link's window_bytes */
  double link_flow_gbps; /* the link's flow_gbps: a single stream's rate */
  double loss;           /* the link's loss rate, [0, 1) */
  double fit_window;     /* params.json's window_bytes (models/params.h) */
  double site_window_a, site_window_b; /* tcp_window_bytes of a's and b's
                            sites; <= 0: TRANSPORT_HOST_WINDOW */
} transport_path_in;

/* A connection's window and what it lets one socket carry. */
typedef struct transport_path {
  double window;   /* bytes per socket: its buffers (a connection holds
                      sockets x window bytes not yet sent) */
  double cwnd_max; /* bytes per socket in flight: the window, or less on a
                      lossy path, loss_bps x RTT (slow start ends there) */
  double loss_bps; /* the loss bound per socket, bytes/s; INFINITY: none */
} transport_path;

/* The loss bound of one TCP socket, bytes/s: Padhye, Firoiu, Towsley and
 * Kurose, "Modeling TCP Throughput: A Simple Model and its Empirical
 * Validation", SIGCOMM 1998, eq. (30) without its window term (the window
 * is transport_path's own bound):
 *   B = MSS / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2))
 * with b = 1 (Linux grows cwnd by one MSS per RTT however many segments
 * an ACK covers: RFC 3465's byte counting), T0 = RTT + tcp_rto_min (the
 * RTO the engine uses), MSS = TRANSPORT_TCP_SEGMENT. Mathis et al. (CCR
 * 1997), MSS / RTT sqrt(3 / 2p), is its first term alone, which
 * overstates the rate where timeouts matter (p above ~1 %). INFINITY for
 * p <= 0; rtt_s >= 0. */
double transport_loss_bps(double rtt_s, double p);

/* A connection a -> b's window, in this order: the run's (> 0), the
 * link's window_bytes, the link's flow_gbps x RTT (within the window
 * bounds), the fitted parameter (> 0), and else the smaller of its two
 * hosts' (site) windows; its loss bound (transport_loss_bps) and cwnd_max
 * = min(window, loss_bps x RTT) (the window alone when the RTT is 0). One
 * home for the engine (sim/net_tcp.c) and the predictor (models/hop.c). */
transport_path transport_path_of(const transport_path_in *in);

/* Sockets a message of bytes uses on a connection of `sockets`: NCCL deals
 * it in pieces of at least TRANSPORT_SOCKET_MIN_CHUNK, so min(sockets,
 * ceil(bytes / MIN_CHUNK)), and at least 1. */
int transport_sockets_used(int sockets, double bytes);

/* Sockets a message of bytes uses over `channels` connections of `sockets`
 * each: NCCL splits an operation's data by channel (ncclCollCbdPart gives
 * each channelId its own part of the buffer: all_reduce.h:21, reduce.h:23,
 * broadcast.h:22; addP2pToPlan cuts a p2p send into one part per channel,
 * enqueue.cc:922) and each channel deals its part over its own
 * connection's sockets (ncclNetSocketTest, net_socket.cc:663: tasks of
 * max(SOCKET_MIN_TASKSIZE = 64 KiB, size / nSocks)), so channels x
 * transport_sockets_used(sockets, bytes / channels). Lines at NCCL commit
 * 5067397c. channels and sockets below 1 count as 1. */
int transport_sockets_dealt(int channels, int sockets, double bytes);

/* The window per socket after a socket of window cwnd was idle for idle_s
 * with retransmission timeout rto_s: Linux's tcp_cwnd_restart halves it
 * once per RTO elapsed beyond the first, never below the initial window
 * (nor above cwnd). */
double transport_idle_window(double cwnd, double idle_s, double rto_s);

/* transport_path_of for a connection from a device of site sa to one of
 * site sb of s over link v (at some time) with round trip rtt_s, under o,
 * with params.json's window_bytes (models/params.h) as it is now: what the
 * engine's connection gets from its topology (sim/net_pair.c). */
transport_path transport_site_path(const transport_options *o,
                                   const scenario *s, int sa, int sb,
                                   const trace_value *v, double rtt_s);

/* Seconds until the last byte of one message of `bytes` leaves its sender
 * over a path of round-trip time rtt_s at rate bytes_s, alone, on
 * `channels` connections of `sockets` sockets
 * (transport_sockets_dealt) that each start with window *cwnd (<= 0: the
 * initial window):
 * ideal and netem: bytes / rate; tcp: the rate is bound by sockets x
 * window / RTT, and the window doubles every RTT until W (the
 * connection's cwnd_max, transport_path_of) or the rate binds, as the
 * engine's epochs do; a message ending inside an epoch grows it by the
 * bytes it sent there (slow start counts acknowledged bytes). *cwnd gets
 * the window the socket keeps afterwards. cwnd may be NULL (a fresh
 * connection). */
double transport_message_s(double bytes, double rtt_s, double bytes_s,
                           int channels, int sockets, transport_model model,
                           double W, double *cwnd);

/* What a run's transport is, for every output to state (the table
 * header, --json, the timeline's metadata, the results row): the model,
 * the network's shaping, the TCP windows (the least and the most of the
 * connections' windows, transport_path_of, over every ordered pair of the
 * scenario's sites at t = 0; the run's when it sets one) and idle restart,
 * the sockets per connection over
 * the scenario's sites for the pipeline's point-to-point messages and for
 * the data-parallel collectives (the receiving site's nccl_sockets for
 * both), the channels each uses (TRANSPORT_P2P_CHANNELS and NCCL's ring
 * channels, each channel its own connection: what the engine and the
 * predictor run), and the workload's runtime. Plain data; runtime is
 * borrowed from the scenario. */
typedef struct transport_facts {
  transport_model model;
  scenario_shaping shaping;
  double window_min, window_max;
  bool idle_restart;
  int p2p_sockets_min, p2p_sockets_max;
  int coll_sockets_min, coll_sockets_max;
  int p2p_channels, ring_channels;
  int ring_loops_max;  /* TRANSPORT_NCCL_MAX_LOOPS */
  const char *runtime;
} transport_facts;

/* The facts of o (NULL: the default) on s. */
transport_facts transport_describe(const transport_options *o,
                                   const scenario *s);

/* One line of f, e.g. "tcp, tc shaping, window 1.45 MB, sockets per
 * connection: p2p 16 (1 channel), collectives 16 (2 channels, a connection
 * each), runtime dtfm" (windows "1.45-3.15 MB" when they differ), into
 * buf of n bytes (truncated to fit); returns snprintf's count. */
int transport_facts_line(const transport_facts *f, char *buf, size_t n);

#endif
