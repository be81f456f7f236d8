/* net_parts: the state the net's files share (sim/net.c: flows, their
 * events and their rate solves; net_res.c: the resources' trace-driven
 * capacities; net_pair.c: the pair map and each connection's stream;
 * net_tcp.c: the TCP state) and the functions they call across. The rates
 * themselves come from the pure solver sim/maxmin.h, whose variable i is
 * flow i and whose resource i is res[i]. Private to sim/net*.c: the engine
 * and the tests see sim/net.h only.
 * Invariant (the one all four keep): between events every SENDING flow is
 * listed on each of its resources in the solver, its bytes sent are exact
 * as of flow.t_upd, and its LEFT event sits at the time its remaining bytes
 * leave at its current rate (its variable's), the weighted max-min rate of
 * its component. Rates are in bytes per ns.
 * circle: internal header of the net's four files (and test_net): its state
 * holds net.h's types, so it includes net.h and net.c includes it. */
#ifndef SIM_NET_PARTS_H
#define SIM_NET_PARTS_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/mem.h"
#include "sim/maxmin.h"
#include "sim/net.h"

enum { EV_LEFT, EV_ARRIVE, EV_EPOCH, EV_TRACE, EV_OPEN, EV_HANDED, EV_SOCK };
_Static_assert(EV_SOCK + 1 == SIM_NET_NKINDS,
               "net.h's count of the net's event kinds");
enum { FLOW_FREE, FLOW_QUEUED, FLOW_OPENING, FLOW_SENDING, FLOW_INFLIGHT };
enum { RES_NIC, RES_SHAPER, RES_PAIR, RES_PATH };
#define NONE SIM_MAXMIN_NONE

/* Bytes left below which a flow's last byte counts as gone (and a waiting
 * message as fitting its socket buffers): sent += rate x dt rounds by about
 * an ulp of the bytes sent at each rate change (1.2e-7 at 1 GB), a residue
 * that must not keep a flow alive, while a real remainder is at least one
 * byte. */
#define BYTES_EPS 1e-6

/* A message. Its weight, cap, rate and resources are its solver variable's
 * (var_of): the weight is 1 (ideal), its sockets (netem) or its sockets
 * over its RTT (tcp), the cap flow_cap or tcp's window bound. */
typedef struct flow {
  int a, b;
  uint8_t state, nsock; /* nsock: sockets the message uses */
  bool slow_start, handed;
  double size, sent;
  double cwnd, rtt_ns; /* tcp: window per socket, round trip */
  double ep_sent;      /* tcp: bytes sent when the current epoch began */
  double flow_cap;     /* nsock x the path's per-flow cap (netem, tcp) */
  int64_t t_upd;
  double end_pos; /* its last byte's place in its connection's stream */
  uint32_t pair, tag, next_free, next_q;
  sim_queue_event ev, ev_epoch;
} flow;

/* What the net knows of a resource beyond the solver's capacity. */
typedef struct res {
  int kind, a, b;  /* trace-driven kinds: capacity = link(a, b).bandwidth */
  bool fixed;  /* its capacity was read after static_from: it is final */
} res;

/* The 4-byte fields go in pairs so that no padding is left: a pair is 128
 * bytes (a power of two: indexing is a shift). */
typedef struct pair {
  int a, b;
  int channels;      /* NCCL channels of its operations (the key's third
                        part), each a connection of `sockets` sockets */
  uint32_t res;      /* its first resource: the private link (ideal, or
                        path shaping's private pair), the sender's shaper
                        for b's class (tc) or the path (path shaping) */
  int sockets;       /* TCP sockets of each channel's connection */
  sim_queue_event ev_sock; /* when the head's rate brings waiter in */
  double flow_bpns;  /* the path's cap per TCP flow, bytes/ns (INFINITY) */
  uint32_t qhead, qtail; /* its messages in issue order: the head sends */
  uint32_t waiter;   /* the oldest message not yet in the socket buffers */
  int active;
  double issued;     /* bytes issued on the connection, in all */
  double done_bytes; /* bytes of its messages whose last byte has left */
  double cwnd;       /* tcp: window per socket kept by the connection */
  int64_t last_end;  /* tcp: when its last flow left (idle restarts) */
  bool opened;       /* tcp: the connection's handshake is done */
  bool lat_ok;       /* lat_ms, lat_ns, rtt_ns and the windows read after
                        static_from: final */
  bool path_keys;    /* the windows were read from a link giving path keys
                        (they then follow its RTT and keys) */
  double lat_ms, rtt_ns;
  int64_t lat_ns;
  double window;     /* bytes per socket: its socket buffers */
  double cwnd_max;   /* tcp: the window a socket grows to (the window, or
                        less on a lossy path): transport_path_of's */
} pair;
_Static_assert(sizeof(pair) == 128, "a pair is 128 bytes, without padding");

/* What a message's tag last started as (sim_net_expect_tags): its
 * connection and its sockets, both pure functions of (a, b, channels,
 * bytes) once the pair exists, so a tag started again with the same ones
 * skips the pair map's probe and the sockets' deal. */
typedef struct tagmemo {
  double bytes;
  uint32_t pair;  /* NONE: nothing remembered */
  uint32_t nsock;
} tagmemo;

typedef struct netcls {
  double lat, bw;  /* the class's key at t = 0 */
  uint32_t res;
} netcls;

typedef struct devcls {
  netcls *v;
  size_t n, cap;
} devcls;

struct sim_net {
  const sim_net_topo *topo;
  transport_model model;
  bool shared, windowed; /* transport_is_shared / _windowed of model: asked
                            on every flow's start and end, so asked once */
  transport_options opt;
  double fit_window; /* params' window_bytes when the net was made */
  sim_queue *q;
  int base;
  sim_net_hooks hooks;

  flow *flows;
  size_t nflows, flows_cap;
  uint32_t free_flow;
  int sending;

  sim_maxmin *mm; /* the rates: variable i is flow i, resource i res[i] */
  res *res;
  size_t nres, res_cap;
  uint32_t *nic_out, *nic_in; /* per NIC index, NONE when unlimited */
  devcls *cls;
  uint32_t *path_res; /* path shaping: path id -> its resource (NONE until
                         a flow uses it); allocated at the first */

  pair *pairs;
  size_t npairs, pairs_cap;
  uint32_t *htab; /* open addressing: pair index or NONE */
  size_t hcap;
  tagmemo *memo;  /* [nmemo]: per tag below nmemo (sim_net_expect_tags) */
  uint32_t nmemo;

  sim_net_conn conn; /* how a connection's first flow finds it */
  /* From this time on no link value changes (next_change said so), so a
   * value read at or after it holds for the rest of the run and is cached;
   * INT64_MAX while unknown. */
  int64_t static_from;
  sim_queue_event ev_trace;
  bool overflow; /* a LEFT event fired at the horizon (schedule_left) */
  sim_rate_log *log; /* every rate change (sim_net_log_rates), or NULL */
  const uint32_t *tag_name; /* the log's name of each tag
                               (sim_net_tag_names), or NULL: the tag */
};

static inline double gbps_to_bpns(double gbps) { return gbps / 8.0; }

/* fmin(a, b), bit for bit with glibc's on x86-64 (NaN in one gives the
 * other; at a tie, b, as minsd gives: fmin(0, -0) is -0), inline: libm's
 * fmin is a call on the per-event paths. */
static inline double net_fmin(double a, double b) {
  return a < b || b != b ? a : b;
}
/* fmax(a, b) the same way (maxsd: at a tie, b), for tcp's per-flow caps
 * and weights. */
static inline double net_fmax(double a, double b) {
  return a > b || b != b ? a : b;
}

/* The whole nanoseconds that q = bytes / rate takes, forgiving a residue
 * of rounding: the solver's rate w x (cap / w) may miss cap by an ulp, so
 * a quotient exact under one network model (a whole 4,194,304 ns) comes out
 * a few ulps above that integer under another, and a bare ceil would add a
 * nanosecond there (issue 33's harness, seed 3380: tcp 4 ns behind ideal
 * with every transfer at its link's rate). A quotient within NS_CEIL_ULPS
 * ulps above an integer counts as that integer (under a ns below 2^49 ns,
 * six days; past 2^52 every double is whole). */
#define NS_CEIL_ULPS 8
static inline double net_ceil_ns(double q) {
  double f = floor(q);
  return q - f <= q * (NS_CEIL_ULPS * DBL_EPSILON) ? f : f + 1;
}

static inline trace_value link_at(const sim_net *n, int a, int b, int64_t t) {
  return n->topo->link(n->topo->ctx, a, b, t);
}

/* Flow id's solver variable: its weight, cap, rate and resources. */
static inline sim_maxmin_var *var_at(const sim_net *n, uint32_t id) {
  return &n->mm->var[id];
}

/* Marks resource r as changed: the next solve re-solves its component. */
static inline void seed(sim_net *n, uint32_t r) { sim_maxmin_seed(n->mm, r); }

/* The round trip between a and b in ns when the one-way latencies are
 * there_ms and back_ms (the two directions may differ): the one formula of
 * the net's RTT. */
static inline double rtt_ns_of(double there_ms, double back_ms) {
  return 1e6 * (there_ms + back_ms);
}

/* ---- net_res.c: resources, and the trace that moves their capacities ---- */

/* A new resource of kind with capacity cap (bytes/ns) in the solver;
 * trace-driven kinds follow link(a, b).bandwidth. Returns its index. */
uint32_t sim_net_res_add(sim_net *n, int kind, double cap, int a, int b);
/* The egress shaper of a for destination b's class (netem, tcp). */
uint32_t sim_net_res_shaper(sim_net *n, int a, int b);
/* The shared resource of path id (path shaping), created for a -> b. */
uint32_t sim_net_res_path(sim_net *n, int id, int a, int b);
/* sim_net_res_refresh of a trace-driven resource not yet final. */
void sim_net_res_read(sim_net *n, uint32_t id, int64_t now);
/* Reads resource id's capacity at now; seeds it when it changed. Inline:
 * on every flow's start, and after static_from a no-op. */
static inline void sim_net_res_refresh(sim_net *n, uint32_t id, int64_t now) {
  const res *r = &n->res[id];
  if (r->kind != RES_NIC && !r->fixed) sim_net_res_read(n, id, now);
}
/* sim_net_trace_arm while unarmed and static_from is unknown. */
void sim_net_trace_next(sim_net *n, int64_t now);
/* Schedules the next trace change while flows send (or learns the network
 * is static from now on); handles one. */
static inline void sim_net_trace_arm(sim_net *n, int64_t now) {
  if (n->static_from == INT64_MAX && n->ev_trace == SIM_QUEUE_NONE)
    sim_net_trace_next(n, now);
}
void sim_net_trace_changed(sim_net *n, int64_t now);

/* ---- net_pair.c: the pair map and the connections' streams ---- */

/* The pair (connection) a -> b of operations with `channels` channels,
 * created on first use at now. Its index. */
uint32_t sim_net_pair_get(sim_net *n, int a, int b, int channels, int64_t now);
/* The socket buffers of p: every socket of its channels, a window each. */
static inline double pair_room(const pair *p) {
  return p->channels * p->sockets * p->window;
}
/* sim_net_pair_latency while p's are not final (lat_ok). */
double sim_net_pair_latency_read(sim_net *n, pair *p, int64_t now,
                                 int64_t *ns, double *rtt_ns);
/* The one-way latency of p at now in ms; *ns in whole ns, *rtt_ns the
 * round trip (the two directions may differ); p's windows read at now
 * too (its link's keys, transport_path_of). Inline: on every flow's end. */
static inline double sim_net_pair_latency(sim_net *n, pair *p, int64_t now,
                                          int64_t *ns, double *rtt_ns) {
  if (!p->lat_ok) return sim_net_pair_latency_read(n, p, now, ns, rtt_ns);
  *ns = p->lat_ns;
  *rtt_ns = p->rtt_ns;
  return p->lat_ms;
}
/* Hands p's waiting messages that fit to its sockets (see net_pair.c). */
void sim_net_sock_check(sim_net *n, uint32_t p, int64_t now, bool direct);
/* sim_net_sock_check(n, p, now, false) unless it would do nothing: p has no
 * waiting message and no wake-up armed (most starts' second check). */
static inline void sim_net_sock_recheck(sim_net *n, uint32_t p, int64_t now) {
  const pair *pr = &n->pairs[p];
  if (pr->waiter != NONE || pr->ev_sock != SIM_QUEUE_NONE)
    sim_net_sock_check(n, p, now, false);
}

/* ---- net.c: rate solves and what follows them ---- */

/* Re-solves the component of the seeded resources at now: each of its
 * flows' bytes sent brought up to now at its old rate, its LEFT event
 * moved to its new rate. */
void sim_net_solve(sim_net *n, int64_t now);
/* sim_net_solve when flow id is alone on its resources and every seed is
 * one of them (most starts); false, doing nothing, otherwise. */
bool sim_net_solve_alone(sim_net *n, uint32_t id, int64_t now);

/* ---- net_tcp.c: windows, slow start, RTT-unfair weights ---- */

/* The window bound of f's sockets within its path's per-flow cap. */
double sim_net_tcp_cap(const sim_net *n, const flow *f);
/* f's weight: one per socket over its RTT. */
double sim_net_tcp_weight(const flow *f);
/* Flow id starts sending at now: RTT, weight, window, first epoch. */
void sim_net_tcp_begin(sim_net *n, uint32_t id, int64_t now);
/* The window f's connection keeps once f's last byte left. */
void sim_net_tcp_left(const flow *f, pair *p);
/* Flow id's slow-start epoch (one RTT) ends at now. */
void sim_net_tcp_epoch(sim_net *n, uint32_t id, int64_t now);

#endif
