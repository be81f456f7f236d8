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

/* The network models, chosen per run. */
typedef enum transport_model {
  TRANSPORT_IDEAL, /* private link per ordered device pair: alpha + S/beta */
  TRANSPORT_NETEM, /* per-sender egress shaper per destination class + NICs */
  TRANSPORT_TCP    /* netem + per-socket window, slow start, idle restart */
} transport_model;
#define TRANSPORT_NMODELS 3

/* "ideal", "netem", "tcp"; parse returns -1 for an unknown name. */
const char *transport_model_name(transport_model m);
int transport_model_parse(const char *name);

/* TCP, as Linux runs it: segments of 1448 payload bytes (1500-byte MTU with
 * timestamps), an initial window of 10 segments (RFC 6928), and a window
 * bound of 4 MiB per socket (autotuning's limits: send buffers up to 4 MiB,
 * receive buffers up to 6 MiB, tcp_wmem / tcp_rmem). The retransmission
 * timeout is the RTT plus Linux's minimum of 200 ms (tcp_rto_min). */
#define TRANSPORT_TCP_SEGMENT 1448.0
#define TRANSPORT_TCP_INITIAL_SEGMENTS 10.0
#define TRANSPORT_TCP_INITIAL_WINDOW \
  (TRANSPORT_TCP_SEGMENT * TRANSPORT_TCP_INITIAL_SEGMENTS)
#define TRANSPORT_DEFAULT_WINDOW (4.0 * 1024 * 1024)
#define TRANSPORT_TCP_RTO_MIN_S 0.2

/* NCCL's socket transport: sockets per connection (the default is 1; NCCL
 * opens 2 threads x 8 = 16 on AWS's ENA NICs), at most 64 (its MAX_SOCKETS),
 * and the smallest piece of a message one socket carries (MIN_CHUNKSIZE in
 * net_socket.cc). */
#define TRANSPORT_SOCKETS_DEFAULT 1
#define TRANSPORT_SOCKETS_MAX 64
#define TRANSPORT_SOCKET_MIN_CHUNK 65536.0

/* NCCL's pipelined ring collectives (reduce, broadcast) move a buffer in
 * chunks: the engine and the predictor cut them alike. */
#define TRANSPORT_NCCL_CHUNK_BYTES (4.0 * 1024 * 1024)
#define TRANSPORT_NCCL_MAX_CHUNKS 128

#endif
