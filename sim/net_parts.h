/* net_parts: the state the net's files share (sim/net.c: flows and their
 * events; net_res.c: the resource graph and the trace; net_pair.c: the
 * pair map and each connection's stream; net_solve.c: the max-min solver;
 * net_tcp.c: the TCP state) and the functions they call across. Private to
 * sim/net*.c: the engine and the tests see sim/net.h only.
 * Invariant (the one all five keep): between events every SENDING flow is
 * listed in each of its resources' flow lists (flow.pos[j] is its index in
 * res[flow.res[j]]'s list), its bytes sent are exact as of flow.t_upd, and
 * its LEFT event sits at the time its remaining bytes leave at its current
 * rate, the weighted max-min rate of its component. Rates are in bytes per
 * ns. */
#ifndef SIM_NET_PARTS_H
#define SIM_NET_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/mem.h"
#include "sim/net.h"

enum { EV_LEFT, EV_ARRIVE, EV_EPOCH, EV_TRACE, EV_OPEN, EV_HANDED, EV_SOCK };
_Static_assert(EV_SOCK + 1 == SIM_NET_NKINDS,
               "net.h's count of the net's event kinds");
enum { FLOW_FREE, FLOW_QUEUED, FLOW_OPENING, FLOW_SENDING, FLOW_INFLIGHT };
enum { RES_NIC, RES_SHAPER, RES_PAIR };
#define MAXRES 3
#define NONE UINT32_MAX

typedef struct flow {
  int a, b;
  uint8_t state, nres, nsock; /* nsock: sockets the message uses */
  bool slow_start, frozen, handed;
  double size, sent, rate, old, cap, w;
  double cwnd, rtt_ns; /* tcp: window per socket, round trip */
  double ep_sent;      /* tcp: bytes sent when the current epoch began */
  double flow_cap;     /* nsock x the path's per-flow cap (netem, tcp) */
  int64_t t_upd;
  double end_pos; /* its last byte's place in its connection's stream */
  uint32_t res[MAXRES], pos[MAXRES];
  uint32_t pair, tag, mark, next_free, next_q;
  sim_queue_event ev, ev_epoch;
} flow;

typedef struct res {
  double cap;
  int kind, a, b;  /* trace-driven kinds: capacity = link(a, b).bandwidth */
  uint32_t *fl, nfl, fcap;
  uint32_t mark, ver, unfrozen;
  double rem, wsum;
  bool fixed;  /* its capacity was read after static_from: it is final */
} res;

typedef struct pair {
  int a, b;
  uint32_t res;      /* its first resource: the private link (ideal) or the
                        sender's shaper for b's class (netem, tcp) */
  int sockets;       /* TCP sockets of the connection */
  double flow_bpns;  /* the path's cap per TCP flow, bytes/ns (INFINITY) */
  uint32_t qhead, qtail; /* its messages in issue order: the head sends */
  uint32_t waiter;   /* the oldest message not yet in the socket buffers */
  double issued;     /* bytes issued on the connection, in all */
  double done_bytes; /* bytes of its messages whose last byte has left */
  sim_queue_event ev_sock; /* when the head's rate brings waiter in */
  double cwnd;       /* tcp: window per socket kept by the connection */
  int64_t last_end;  /* tcp: when its last flow left (idle restarts) */
  int active;
  bool opened;       /* tcp: the connection's handshake is done */
  bool lat_ok;       /* lat_ms, lat_ns, rtt_ns read after static_from */
  double lat_ms, rtt_ns;
  int64_t lat_ns;
} pair;

typedef struct netcls {
  double lat, bw;  /* the class's key at t = 0 */
  uint32_t res;
} netcls;

typedef struct devcls {
  netcls *v;
  size_t n, cap;
} devcls;

typedef struct hent {
  double key;
  uint32_t id, ver;  /* ver == NONE: a flow-cap entry */
} hent;

struct sim_net {
  const sim_net_topo *topo;
  transport_model model;
  transport_options opt;
  double window;
  sim_queue *q;
  int base;
  sim_net_hooks hooks;

  flow *flows;
  size_t nflows, flows_cap;
  uint32_t free_flow;
  int sending;

  res *res;
  size_t nres, res_cap;
  uint32_t *nic_out, *nic_in; /* per NIC index, NONE when unlimited */
  devcls *cls;

  pair *pairs;
  size_t npairs, pairs_cap;
  uint32_t *htab; /* open addressing: pair index or NONE */
  size_t hcap;

  sim_net_conn conn; /* how a connection's first flow finds it */
  /* From this time on no link value changes (next_change said so), so a
   * value read at or after it holds for the rest of the run and is cached;
   * INT64_MAX while unknown. */
  int64_t static_from;
  sim_queue_event ev_trace;
  uint32_t epoch;
  uint32_t *cres, *cflow, *seeds;
  size_t ncres, cres_cap, ncflow, cflow_cap, nseeds, seeds_cap;
  hent *heap;
  size_t nheap, heap_cap;
  uint64_t solves, flows_solved;
  bool overflow; /* a LEFT event fired at the horizon (schedule_left) */
};

/* mem_grow's check inline: the scratch arrays below grow on hot paths, and
 * a call per element cost about 8% of a run. */
static inline void reserve(void *items, size_t *cap, size_t need, size_t size) {
  if (need > *cap) mem_grow(items, cap, need, size);
}

static inline double gbps_to_bpns(double gbps) { return gbps / 8.0; }

static inline trace_value link_at(const sim_net *n, int a, int b, int64_t t) {
  return n->topo->link(n->topo->ctx, a, b, t);
}

/* Marks resource r as changed: the next solve re-solves its component. */
static inline void seed(sim_net *n, uint32_t r) {
  reserve((void **)&n->seeds, &n->seeds_cap, n->nseeds + 1, sizeof *n->seeds);
  n->seeds[n->nseeds++] = r;
}

/* ---- net_res.c: resources, and the trace that moves their capacities ---- */

/* A new resource of kind with capacity cap (bytes/ns); trace-driven kinds
 * follow link(a, b).bandwidth. Returns its index. */
uint32_t sim_net_res_add(sim_net *n, int kind, double cap, int a, int b);
/* The egress shaper of a for destination b's class (netem, tcp). */
uint32_t sim_net_res_shaper(sim_net *n, int a, int b);
/* Lists f on resource rid (f's next resource) / off all its resources
 * (seeding each for the next solve). */
void sim_net_res_attach(sim_net *n, flow *f, uint32_t rid);
void sim_net_res_detach(sim_net *n, flow *f);
/* Reads resource id's capacity at now; seeds it when it changed. */
void sim_net_res_refresh(sim_net *n, uint32_t id, int64_t now);
/* Schedules the next trace change while flows send (or learns the network
 * is static from now on); handles one. */
void sim_net_trace_arm(sim_net *n, int64_t now);
void sim_net_trace_changed(sim_net *n, int64_t now);

/* ---- net_pair.c: the pair map and the connections' streams ---- */

/* The pair (connection) a -> b, created on first use. Its index. */
uint32_t sim_net_pair_get(sim_net *n, int a, int b);
/* The one-way latency of p at now in ms; *ns in whole ns, *rtt_ns the
 * round trip (the two directions may differ). */
double sim_net_pair_latency(sim_net *n, pair *p, int64_t now, int64_t *ns,
                            double *rtt_ns);
/* Hands p's waiting messages that fit to its sockets (see net_pair.c). */
void sim_net_sock_check(sim_net *n, uint32_t p, int64_t now, bool direct);

/* ---- net_solve.c: weighted max-min rates ---- */

/* Re-solves the component of the seeded resources at now. */
void sim_net_solve(sim_net *n, int64_t now);
/* sim_net_solve when f is alone on its resources and every seed is one of
 * them (most starts); false, doing nothing, otherwise. */
bool sim_net_solve_alone(sim_net *n, flow *f, int64_t now);

/* ---- net_tcp.c: windows, slow start, RTT-unfair weights ---- */

/* The window bound of f's sockets within its path's per-flow cap. */
double sim_net_tcp_cap(const sim_net *n, const flow *f);
/* f's weight: one per socket over its RTT. */
double sim_net_tcp_weight(const flow *f);
/* Flow id starts sending at now: RTT, weight, window, first epoch. */
void sim_net_tcp_begin(sim_net *n, uint32_t id, int64_t now);
/* The window f's connection keeps once f's last byte left. */
void sim_net_tcp_left(sim_net *n, const flow *f, pair *p);
/* Flow id's slow-start epoch (one RTT) ends at now. */
void sim_net_tcp_epoch(sim_net *n, uint32_t id, int64_t now);

#endif
