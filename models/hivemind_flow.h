/* hivemind_flow: the connections of hivemind's rounds (models/hivemind.h)
 * as fluid flows under max-min fair sharing of the NICs they cross —
 * weighted progressive filling, every backlogged connection's rate per
 * weight raised together until a NIC or its own bound saturates — from
 * event to event (a start,
 * a connection reaching its mark or its end). The closed form reads when
 * each connection is through its first `mark` bytes and all of them: a
 * NIC left idle by one peer is then taken by the others, as the engine's
 * max-min shares it (and its links: a tc shaper, a shared path), which a
 * NIC-by-NIC processor-sharing bound misses when a group's NICs bind each
 * other (a balanced partition: every NIC busy at once).
 * Left out: the engine's chunks (a connection is backlogged from its
 * start to its end, where the averages wait for reductions).
 * Invariant: a pure function of its arguments; O(events x levels x
 * connections) time, so callers keep it to small systems
 * (HIVEMIND_FLOW_MAX). */
#ifndef MODELS_HIVEMIND_FLOW_H
#define MODELS_HIVEMIND_FLOW_H

/* The most connections the closed form runs as fluid flows; beyond, each
 * NIC's processor sharing on its own. */
#define HIVEMIND_FLOW_MAX 1024

/* The resources one flow crosses, at most. */
#define HIVEMIND_FLOW_RES 3

typedef struct hivemind_flow {
  double begin;   /* when it starts, s */
  double bytes;   /* > 0 */
  double mark;    /* in (0, bytes]: the count whose time is wanted */
  double cap;     /* its own bound, bytes/s (INFINITY: none) */
  double w;       /* its weight in the sharing (> 0): tcp's sockets over
                     its round trip, as sim/net_tcp.c weighs a flow */
  int res[HIVEMIND_FLOW_RES]; /* the resources it crosses (its NICs' out
                     and in, its link's shaper or path), -1: none */
  double t_mark, t_all; /* written: when it has sent mark, and bytes */
} hivemind_flow;

/* Runs the n flows f over resources of capacities cap[0..nres) (bytes/s,
 * each > 0) until every one has sent its bytes, writing t_mark and t_all.
 * A flow with no resource and no cap takes no time. */
void hivemind_flow_run(hivemind_flow *f, int n, const double *cap, int nres);

#endif
