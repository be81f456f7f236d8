/* net_res: the resource graph — NIC egress and ingress (netem, tcp), one
 * egress shaper per sender per destination class (netem, tcp: a class is a
 * distinct (delay, rate) value at t = 0 among the sender's destinations;
 * its rate then follows the class's first destination) and one private
 * link per ordered pair (ideal) — and the trace that moves their
 * capacities.
 * Invariant: the solver's resource i lists exactly the SENDING flows that
 * cross res[i]; once next_change has answered TRACE_NEVER (static_from), a
 * capacity read from then on is final (res.fixed) and never read again. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "sim/net_parts.h"

uint32_t sim_net_res_add(sim_net *n, int kind, double cap, int a, int b) {
  mem_grow((void **)&n->res, &n->res_cap, n->nres + 1, sizeof *n->res);
  n->res[n->nres] = (res){.kind = kind, .a = a, .b = b};
  uint32_t id = sim_maxmin_res_add(n->mm, cap);
  assert(id == n->nres); /* res[i] is the solver's resource i */
  (void)id;
  return (uint32_t)n->nres++;
}

/* The egress shaper of a for destination b (netem, tcp). */
uint32_t sim_net_res_shaper(sim_net *n, int a, int b) {
  trace_value v = link_at(n, a, b, 0);
  devcls *c = &n->cls[a];
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].lat == v.latency_ms && c->v[i].bw == v.bandwidth_gbps)
      return c->v[i].res;
  mem_grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v);
  uint32_t r = sim_net_res_add(n, RES_SHAPER, 0, a, b);
  c->v[c->n++] = (netcls){v.latency_ms, v.bandwidth_gbps, r};
  return r;
}

void sim_net_trace_arm(sim_net *n, int64_t now) {
  if (n->static_from != INT64_MAX || n->ev_trace != SIM_QUEUE_NONE) return;
  int64_t t = n->topo->next_change(n->topo->ctx, now);
  if (t != TRACE_NEVER)
    n->ev_trace = sim_queue_push(n->q, t, n->base + EV_TRACE, 0);
  else
    n->static_from = now;
}

void sim_net_res_refresh(sim_net *n, uint32_t id, int64_t now) {
  res *r = &n->res[id];
  if (r->kind == RES_NIC || r->fixed) return;
  double c = gbps_to_bpns(link_at(n, r->a, r->b, now).bandwidth_gbps);
  r->fixed = now >= n->static_from;
  sim_maxmin_set_cap(n->mm, id, c);
}

void sim_net_trace_changed(sim_net *n, int64_t now) {
  n->ev_trace = SIM_QUEUE_NONE;
  for (size_t i = 0; i < n->nres; i++)
    if (n->mm->res[i].nvar) sim_net_res_refresh(n, (uint32_t)i, now);
  if (transport_is_windowed(n->model))
    for (size_t i = 0; i < n->nflows; i++) {
      flow *f = &n->flows[i];
      if (f->state != FLOW_SENDING) continue;
      f->rtt_ns = rtt_ns_of(link_at(n, f->a, f->b, now).latency_ms,
                            link_at(n, f->b, f->a, now).latency_ms);
      double c = sim_net_tcp_cap(n, f);
      sim_maxmin_var *v = var_at(n, (uint32_t)i);
      if (c != v->cap) {
        v->cap = c;
        v->w = sim_net_tcp_weight(f);
        seed(n, v->res[0]);
      }
    }
  sim_net_solve(n, now);
  if (n->sending) sim_net_trace_arm(n, now);
}
