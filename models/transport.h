/* transport: the vocabulary and the constants of the network transport that
 * the engine (sim/net.c) simulates and the predictor (models/predict.c)
 * models in closed form — one home, below both (sim/ may include models/,
 * not the reverse). A transfer is one NCCL message over a connection of N
 * TCP sockets (NCCL's socket transport); its bytes are dealt over the
 * sockets in chunks of at least TRANSPORT_SOCKET_MIN_CHUNK, so a small
 * message uses fewer of them (DESIGN.md section 4).
 * Invariant: every function here is a pure function of its arguments. */
#ifndef MODELS_TRANSPORT_H
#define MODELS_TRANSPORT_H

#include <stdbool.h>

#include "traces/scenario.h"

/* The network models, chosen per run. */
typedef enum transport_model {
  TRANSPORT_IDEAL, /* private link per ordered device pair: alpha + S/beta */
  TRANSPORT_NETEM, /* per-sender egress shaper per destination class + NICs */
  TRANSPORT_TCP    /* netem + per-socket window, slow start, idle restart */
} transport_model;
#define TRANSPORT_NMODELS 3
_Static_assert(TRANSPORT_TCP + 1 == TRANSPORT_NMODELS,
               "one count of the network models");

/* "ideal", "netem", "tcp" (NULL-terminated: the list the command line and
 * the sweep files accept); parse returns -1 for an unknown name. */
extern const char *const transport_model_names[TRANSPORT_NMODELS + 1];
const char *transport_model_name(transport_model m);
int transport_model_parse(const char *name);

/* TCP, as Linux runs it: segments of 1448 payload bytes (1500-byte MTU with
 * timestamps), an initial window of 10 segments (RFC 6928), and a window
 * bound per socket of 1.45 MB: fitted on DT-FM's Gloo point-to-point rows
 * (one socket, 64 and 128 MiB at 5 and 10 ms: 274/512/532/972 ms measured,
 * the window-bound rows), which is what Linux's autotuning leaves of a
 * 6 MiB tcp_rmem once tcp_adv_win_scale halves it and per-packet buffer
 * overhead takes its share. The retransmission timeout is the RTT plus
 * Linux's minimum of 200 ms (tcp_rto_min). */
#define TRANSPORT_TCP_SEGMENT_BYTES 1448
#define TRANSPORT_TCP_SEGMENT ((double)TRANSPORT_TCP_SEGMENT_BYTES)
#define TRANSPORT_TCP_INITIAL_SEGMENTS 10.0
#define TRANSPORT_TCP_INITIAL_WINDOW \
  (TRANSPORT_TCP_SEGMENT * TRANSPORT_TCP_INITIAL_SEGMENTS)
#define TRANSPORT_DEFAULT_WINDOW 1.45e6
#define TRANSPORT_TCP_RTO_MIN_S 0.2

/* The per-socket windows a run may set (the command line, a sweep's
 * window_bytes): at least one segment, at most 1 TiB. */
#define TRANSPORT_WINDOW_MIN_BYTES TRANSPORT_TCP_SEGMENT_BYTES
#define TRANSPORT_WINDOW_MAX_BYTES (1LL << 40)

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

/* How the transport of one run behaves (plain data). */
typedef struct transport_options {
  transport_model model; /* TRANSPORT_NETEM by default */
  double window_bytes;   /* per-socket TCP window W; <= 0: the default */
  bool idle_restart;     /* tcp: Linux's tcp_slow_start_after_idle: a
                            socket idle for an RTO halves its window per
                            RTO elapsed, down to the initial window */
} transport_options;

/* netem, TRANSPORT_DEFAULT_WINDOW, no idle restart: DT-FM's 10 ms and
 * 50 ms rows differ by the latency alone (its hosts kept their windows
 * across a phase's idle seconds), which a restart would multiply. */
transport_options transport_options_default(void);

/* The per-socket window of o: window_bytes, or the default when <= 0. */
double transport_window(const transport_options *o);

/* Sockets a message of bytes uses on a connection of `sockets`: NCCL deals
 * it in pieces of at least TRANSPORT_SOCKET_MIN_CHUNK, so min(sockets,
 * ceil(bytes / MIN_CHUNK)), and at least 1. */
int transport_sockets_used(int sockets, double bytes);

/* The window per socket after a socket of window cwnd was idle for idle_s
 * with retransmission timeout rto_s: Linux's tcp_cwnd_restart halves it
 * once per RTO elapsed beyond the first, never below the initial window
 * (nor above cwnd). */
double transport_idle_window(double cwnd, double idle_s, double rto_s);

/* Seconds until the last byte of one message of `bytes` leaves its sender
 * over a path of round-trip time rtt_s at rate bytes_s, alone, on `sockets`
 * sockets that each start with window *cwnd (<= 0: the initial window):
 * ideal and netem: bytes / rate; tcp: the rate is bound by sockets x
 * window / RTT, and the window doubles every RTT until W or the rate
 * binds, as the engine's epochs do; a message ending inside an epoch grows
 * it by the bytes it sent there (slow start counts acknowledged bytes).
 * *cwnd gets the window the socket keeps afterwards. cwnd may be NULL (a
 * fresh connection). */
double transport_message_s(double bytes, double rtt_s, double bytes_s,
                           int sockets, const transport_options *o,
                           double *cwnd);

#endif
