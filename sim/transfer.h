/* transfer: one message alone on one link, timed by the engine's network
 * (sim/net) — `geodes transfer`, the ns-3 reference points and DT-FM's
 * point-to-point measurements (DESIGN.md section 4).
 * Invariant: the message runs on a two-device network without NIC limits;
 * nothing else shares its link. */
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
  double flow_gbps;      /* the network's cap per TCP flow; <= 0: none */
  transport_options transport;
} sim_transfer;

/* Seconds until the message's last byte arrives; NAN when it would arrive
 * past the span a simulation covers (base/simtime.h). */
double sim_transfer_s(const sim_transfer *t);

#endif
