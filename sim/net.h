/* net: the flow-level network. A transfer of S bytes from device a to b is
 * one NCCL message of an operation with C channels over the connection
 * (a, b, C): C channels of N TCP sockets each (N the receiving device's
 * setting, as NCCL's listener decides), of which a message uses
 * C min(N, ceil(S / C / 64 KiB)) (transport_sockets_dealt). A p2p send
 * (C = 1) and a collective (C = 2) between the same devices run on
 * separate connections, each with its own windows, as NCCL's channels do.
 * Its bytes leave a at a max-min fair rate over
 * the resources they cross (the link's: under tc shaping a's egress shaper
 * for b's class, under path shaping the path between a's and b's sites or
 * a private link inside a site; the NICs), as one flow of weight N (each
 * socket is a flow;
 * the sockets of a message are alike, so they move as one), and arrive one
 * one-way latency later (DESIGN.md section 4). Consecutive messages on a
 * connection stream back to back: nothing here waits for an arrival.
 * Invariant: between events every sending flow has the rate of the weighted
 * max-min (progressive filling) solution of its connected component of
 * flows and resources, and its LEFT event is at the time its last byte
 * leaves at that rate; rates are re-solved only in the component a change
 * touches (a flow starts or leaves, a trace value or a TCP window changes).
 *
 * Latency choice: the last byte arrives one latency after it leaves, at the
 * latency in force when it leaves. A rate change while bytes are in flight
 * changes only the rate of the bytes still to leave (bytes sent so far are
 * tracked per flow), so a change during the first latency is handled like
 * any other (SimGrid 3.32 "finishes" such a flow at once). */
#ifndef SIM_NET_H
#define SIM_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "models/transport.h"
#include "sim/queue.h"
#include "traces/trace.h"

typedef struct sim_net sim_net;


/* The network as callbacks, so the engine and the tests need no scenario.
 * ctx is borrowed; link must be defined for every a != b. */
typedef struct sim_net_topo {
  int ndevices;
  const void *ctx;
  trace_value (*link)(const void *ctx, int a, int b, int64_t t_ns);
  /* First time > t_ns at which any link value changes, or TRACE_NEVER.
   * NULL: the network is static. */
  int64_t (*next_change)(const void *ctx, int64_t t_ns);
  /* device -> NIC index (devices of one instance may share a NIC) and the
   * capacity of each NIC in Gbit/s, full duplex (<= 0: unlimited). Flows
   * between two devices on the same NIC do not cross it (NVLink). NULL: no
   * NIC limits. Borrowed. */
  const int *nic;
  const double *nic_gbps;
  int nnics;
  /* device -> TCP sockets per NCCL connection to it (1..64); NULL: 1 each.
   * Borrowed. */
  const int *sockets;
  /* device -> the network's cap on one TCP flow from or to it, Gbit/s
   * (AWS: 5 outside a cluster placement group); <= 0 or NULL: none. A
   * message over N sockets gets N times the lesser end's. Borrowed. */
  const double *flow_gbps;
  /* device -> its host's TCP window limit per socket, bytes (its site's
   * tcp_window_bytes); NULL: TRANSPORT_HOST_WINDOW each. A connection's
   * window is transport_path_of's. Borrowed. */
  const double *window;
  /* How the link resources of netem and tcp are shaped (ideal: a private
   * link per connection, either way). SCENARIO_SHAPING_TC (0, the
   * default): an egress shaper per sender per destination class (a
   * distinct (delay, rate) at t = 0). SCENARIO_SHAPING_PATH: path(ctx, a,
   * b) names the path of a's flows to b: an id in 0 .. npaths - 1, one
   * resource shared by every flow with that id (its capacity link(a,
   * b).bandwidth of its first flow's pair: every pair of one id must have
   * the same link), or -1: a private resource per ordered device pair,
   * shared by its connections of every channel count. */
  scenario_shaping shaping;
  int npaths;
  int (*path)(const void *ctx, int a, int b);
} sim_net_topo;

/* Every change of a message's sending rate, in time order: at t the
 * message tagged tag sends at rate bytes per ns (0 once its last byte has
 * left). What a reader of a finished run needs to sum the rates on a
 * resource exactly (sim/linkstats.h): a message's mean rate over its span
 * is not its rate, and means of messages that share a resource can sum
 * above its capacity. */
typedef struct sim_rate_change {
  int64_t t;
  uint32_t tag;
  double rate;
} sim_rate_change;

/* Where the changes go: appended to v, or when sink is set handed to it
 * as they happen (none stored), with the message's sender and receiver
 * devices: a reader that sums them at once (sim/linkstats.h's
 * sim_ls_acc) keeps no log of a run's millions of changes. */
typedef struct sim_rate_log {
  sim_rate_change *v;
  size_t n, cap;
  void (*sink)(void *ctx, const sim_rate_change *c, int src, int dst);
  void *sink_ctx; /* borrowed */
} sim_rate_log;

void sim_rate_log_free(sim_rate_log *l); /* the array; NULL is fine */

/* From now on n appends every rate change to log, or hands it to the
 * log's sink (borrowed; NULL: stop). */
void sim_net_log_rates(sim_net *n, sim_rate_log *log);

/* The log (sim_net_log_rates) names a message tagged tag name[tag]
 * (borrowed until the next call; NULL: tag itself): an owner that numbers
 * its messages for its own memory layout logs them under its readers' ids. */
void sim_net_tag_names(sim_net *n, const uint32_t *name);

/* What the net tells its owner: a message's last byte is in the sockets'
 * send buffers (the send completes: its stream is free; DESIGN.md section
 * 4) or has arrived (the receive completes). A connection holds sockets x
 * window bytes not yet sent; its messages leave in issue order. */
typedef struct sim_net_hooks {
  void *ctx;
  void (*left)(void *ctx, uint32_t tag, int64_t t_ns);
  void (*arrived)(void *ctx, uint32_t tag, int64_t t_ns);
} sim_net_hooks;

/* The latest time the engine simulates: int64 nanoseconds hold 292 years;
 * a quarter of that (73 years) leaves room for the latencies and durations
 * added to an event's time and for differences with the net's INT64_MIN / 2
 * "never" (a connection's last use). A flow whose last byte would leave
 * later is stopped there and the net records an overflow
 * (sim_net_overflowed): its time is unknown, and the owner must report an
 * error, not a time. */
#define SIM_NET_HORIZON_NS (INT64_MAX / 4)

#define SIM_NET_NKINDS 7  /* event kinds used, from kind_base on */

/* A network over topo (borrowed, must outlive the net) under transport o
 * (copied; NULL: transport_options_default) that schedules its events in q
 * (borrowed) with kinds kind_base .. kind_base+SIM_NET_NKINDS-1. */
sim_net *sim_net_new(const sim_net_topo *topo, const transport_options *o,
                     sim_queue *q, int kind_base, sim_net_hooks hooks);
void sim_net_free(sim_net *n);

/* Starts a flow of bytes (>= 0) from a to b (a != b) at now_ns; the hooks
 * receive tag when it has left and when it has arrived. */
void sim_net_start(sim_net *n, int64_t now_ns, int a, int b, double bytes,
                   uint32_t tag);

/* The same over the connection of an operation of `channels` channels
 * (1 .. TRANSPORT_CHANNELS_MAX; sim_net_start: 1), its own connection
 * beside the other channel counts' between a and b. */
void sim_net_start_on(sim_net *n, int64_t now_ns, int a, int b, double bytes,
                      int channels, uint32_t tag);

/* The owner's tags will be below ntags (a task graph's task ids): the net
 * then remembers each tag's connection and sockets, which a tag started
 * again with the same ends, channels and bytes reuses (a training run
 * starts the same messages every iteration). Optional; tags at or above
 * ntags are served as any. */
void sim_net_expect_tags(sim_net *n, uint32_t ntags);

/* What sim_net_expect_tags holds per tag, for memory estimates. */
size_t sim_net_bytes_per_tag(void);

/* tcp only: the state a connection is in when its first flow starts.
 * WARM (the default): opened and grown to the window in earlier iterations
 * of the training run, idle since (idle restart, when on, applies from an
 * infinite idle time); FRESH: opened but never used (NCCL connects its
 * sockets at setup): the initial window; NEW: the first flow opens it, one
 * RTT (SYN, SYN-ACK) before its bytes leave, then the initial window (a
 * lone TCP transfer: `geodes transfer`, the ns-3 points). */
typedef enum sim_net_conn { SIM_NET_WARM, SIM_NET_FRESH, SIM_NET_NEW } sim_net_conn;
void sim_net_set_connections(sim_net *n, sim_net_conn state);

/* Handles an event of one of the net's kinds (popped by the owner). */
void sim_net_handle(sim_net *n, const sim_queue_item *it);

/* True when kind is one of the net's event kinds. */
bool sim_net_owns(const sim_net *n, int kind);

/* True once a flow reached SIM_NET_HORIZON_NS with bytes left to send: the
 * times from then on are not simulated times. */
bool sim_net_overflowed(const sim_net *n);

/* Flows whose bytes are still leaving their sender. */
int sim_net_sending(const sim_net *n);

/* Current rate of the sending flow with tag (bytes per second), or -1. For
 * tests; O(flows). */
double sim_net_rate_of(const sim_net *n, uint32_t tag);

/* Counters: rate solves and flows visited by them. */
uint64_t sim_net_solves(const sim_net *n);
uint64_t sim_net_flows_solved(const sim_net *n);

#endif
