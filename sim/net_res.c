/* net_res: the resource graph — NIC egress and ingress (netem, tcp); under
 * tc shaping one egress shaper per sender per destination class (netem,
 * tcp: a class is a distinct (delay, rate) value at t = 0 among the
 * sender's destinations; its rate then follows the class's first
 * destination); under path shaping one resource per path between two
 * sites (its rate the link of its first pair, which every pair on it
 * shares) and a private one per ordered device pair inside a site or
 * overridden; one private link per ordered pair (ideal) — and the trace
 * that moves their capacities.
 * Invariant: the solver's resource i lists exactly the SENDING flows that
 * cross res[i]; once next_change has answered TRACE_NEVER (static_from), a
 * capacity read from then on is final (res.fixed) and never read again. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

uint32_t sim_net_res_path(sim_net *n, int id, int a, int b) {
  assert(id >= 0 && id < n->topo->npaths);
  if (!n->path_res) {
    n->path_res = mem_alloc((size_t)n->topo->npaths * sizeof *n->path_res);
    memset(n->path_res, 0xff, (size_t)n->topo->npaths * sizeof *n->path_res);
  }
  if (n->path_res[id] == NONE)
    n->path_res[id] = sim_net_res_add(n, RES_PATH, 0, a, b);
  return n->path_res[id];
}

void sim_net_trace_next(sim_net *n, int64_t now) {
  int64_t t = n->topo->next_change(n->topo->ctx, now);
  if (t != TRACE_NEVER)
    n->ev_trace = sim_queue_push(n->q, t, n->base + EV_TRACE, 0);
  else
    n->static_from = now;
}

void sim_net_res_read(sim_net *n, uint32_t id, int64_t now) {
  res *r = &n->res[id];
  double c = gbps_to_bpns(link_at(n, r->a, r->b, now).bandwidth_gbps);
  r->fixed = now >= n->static_from;
  sim_maxmin_set_cap(n->mm, id, c);
}

void sim_net_trace_changed(sim_net *n, int64_t now) {
  n->ev_trace = SIM_QUEUE_NONE;
  for (size_t i = 0; i < n->nres; i++)
    if (n->mm->res[i].nvar) sim_net_res_refresh(n, (uint32_t)i, now);
  if (n->windowed)
    for (size_t i = 0; i < n->nflows; i++) {
      flow *f = &n->flows[i];
      if (f->state != FLOW_SENDING) continue;
      int64_t lat_ns; /* the round trip and the windows at now */
      sim_net_pair_latency(n, &n->pairs[f->pair], now, &lat_ns, &f->rtt_ns);
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
