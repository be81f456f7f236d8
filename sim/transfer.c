/* transfer: see transfer.h. */
#include "sim/transfer.h"

#include <math.h>

#include "base/simtime.h"
#include "sim/net.h"
#include "sim/queue.h"

static trace_value one_link(const void *ctx, int a, int b, int64_t t) {
  (void)b, (void)t;
  const sim_transfer *x = ctx;
  double back = x->back_ms < 0 ? x->latency_ms : x->back_ms;
  return (trace_value){a == 0 ? x->latency_ms : back, x->bandwidth_gbps};
}

static void arrived(void *ctx, uint32_t tag, int64_t t) {
  (void)tag;
  *(int64_t *)ctx = t;
}

double sim_transfer_s(const sim_transfer *t) {
  int n = t->sockets > 0 ? t->sockets : 1;
  int sk[2] = {n, n};
  double fg[2] = {t->flow_gbps, t->flow_gbps};
  sim_net_topo topo = {.ndevices = 2, .ctx = t, .link = one_link,
                       .sockets = sk, .flow_gbps = fg};
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
