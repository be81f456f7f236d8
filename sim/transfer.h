/* transfer: one message alone on one link, timed by the engine's network
 * (sim/net) — `geodes transfer`, the ns-3 reference points and DT-FM's
 * point-to-point measurements (DESIGN.md section 4).
 * Invariant: the message runs on a two-device network without NIC limits;
 * nothing else shares its link (so the shaping, tc or path, does not
 * matter). */
#ifndef SIM_TRANSFER_H
#define SIM_TRANSFER_H

#include "models/transport.h"

typedef struct sim_transfer {
  double latency_ms;     /* one-way delay of the data direction, >= 0 */
  double back_ms;        /* of the return path (ACKs); < 0: latency_ms */
  double bandwidth_gbps; /* > 0 */
  double bytes;          /* >= 0 */
  int sockets;           /* 0: one plain TCP flow on a connection it opens
                            (tcp pays the one-RTT handshake); N >= 1: an
                            NCCL message over N sockets opened before the
                            clock starts (a fresh window, no handshake) */
  double flow_cap_gbps;  /* the network's cap per TCP flow (a site's
                            flow_gbps); <= 0: none */
  double path_flow_gbps; /* the link's flow_gbps: a measured single
                            stream's rate, its window rate x RTT; 0: none */
  double loss;           /* the link's loss rate, [0, 1); 0: none */
  double path_window_bytes; /* the link's window_bytes; 0: none */
  double host_window_bytes; /* both hosts' tcp_window_bytes; <= 0:
                            TRANSPORT_HOST_WINDOW */
  transport_options transport;
} sim_transfer;

/* Seconds until the message's last byte arrives; NAN when it would arrive
 * past the span a simulation covers (base/simtime.h). */
double sim_transfer_s(const sim_transfer *t);

/* The connection's window and loss bound (transport_path_of of t's keys
 * and round trip, with params.json's window_bytes): what the engine runs
 * it with, for outputs to state. */
transport_path sim_transfer_path(const sim_transfer *t);

#endif
