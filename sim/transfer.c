/* transfer: see transfer.h. */
#include "sim/transfer.h"

#include <math.h>

#include "base/simtime.h"
#include "models/params.h"
#include "sim/net.h"
#include "sim/queue.h"

/* The return path's one-way delay. */
static double back_of(const sim_transfer *x) {
  return x->back_ms < 0 ? x->latency_ms : x->back_ms;
}

static trace_value one_link(const void *ctx, int a, int b, int64_t t) {
  (void)b, (void)t;
  const sim_transfer *x = ctx;
  return (trace_value){.latency_ms = a == 0 ? x->latency_ms : back_of(x),
                       .bandwidth_gbps = x->bandwidth_gbps,
                       .flow_gbps = x->path_flow_gbps, .loss = x->loss,
                       .window_bytes = x->path_window_bytes};
}

static void arrived(void *ctx, uint32_t tag, int64_t t) {
  (void)tag;
  *(int64_t *)ctx = t;
}

double sim_transfer_s(const sim_transfer *t) {
  int n = t->sockets > 0 ? t->sockets : 1;
  int sk[2] = {n, n};
  double fg[2] = {t->flow_cap_gbps, t->flow_cap_gbps};
  double win[2] = {t->host_window_bytes, t->host_window_bytes};
  sim_net_topo topo = {.ndevices = 2, .ctx = t, .link = one_link,
                       .sockets = sk, .flow_gbps = fg, .window = win};
  sim_queue *q = sim_queue_new();
  int64_t done = -1;
  sim_net *net = sim_net_new(&topo, &t->transport, q, 0,
                             (sim_net_hooks){&done, NULL, arrived});
  sim_net_set_connections(net, t->sockets > 0 ? SIM_NET_FRESH : SIM_NET_NEW);
  sim_net_start(net, 0, 0, 1, t->bytes, 0);
  sim_queue_item it;
  while (sim_queue_pop(q, &it)) sim_net_handle(net, &it);
  bool overflow = sim_net_overflowed(net);
  sim_net_free(net);
  sim_queue_free(q);
  return overflow || done > SIMTIME_LIMIT_NS ? NAN : (double)done * 1e-9;
}

transport_path sim_transfer_path(const sim_transfer *t) {
  transport_path_in in = {.rtt_s = (t->latency_ms + back_of(t)) * 1e-3,
                          .run_window = t->transport.window_bytes,
                          .link_window = t->path_window_bytes,
                          .link_flow_gbps = t->path_flow_gbps,
                          .loss = t->loss,
                          .fit_window = params_get(PARAMS_WINDOW_BYTES),
                          .site_window_a = t->host_window_bytes,
                          .site_window_b = t->host_window_bytes};
  return transport_path_of(&in);
}
