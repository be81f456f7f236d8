/* net: the flow-level network of sim/net.h — flows, their events and what
 * a rate change does to them. A message is a flow queued on its connection
 * (net_pair.c), sending over its resources (net_res.c) at its max-min rate
 * (the pure solver sim/maxmin.c; here each solve's flows are advanced to
 * now and their LEFT events moved) within its TCP window (net_tcp.c), then
 * in flight for one latency; the files share the state of net_parts.h and
 * keep its invariant.
 * Invariant: a flow is FREE (on the free list), QUEUED behind its
 * connection's head, OPENING (tcp's handshake), SENDING (listed on its
 * resources, its LEFT event scheduled) or INFLIGHT (its ARRIVE event
 * scheduled); n->sending counts the SENDING ones, and a trace event is
 * pending only while one sends. */
#include "sim/net.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/params.h"
#include "sim/net_parts.h"

sim_net *sim_net_new(const sim_net_topo *topo, const transport_options *o,
                     sim_queue *q, int kind_base, sim_net_hooks hooks) {
  sim_net *n = mem_calloc(1, sizeof *n);
  transport_model model = o ? o->model : TRANSPORT_MODEL_DEFAULT;
  n->topo = topo;
  n->opt = o ? *o : transport_options_default();
  n->model = model;
  n->shared = transport_is_shared(model);
  n->windowed = transport_is_windowed(model);
  n->fit_window = params_get(PARAMS_WINDOW_BYTES);
  n->conn = SIM_NET_WARM;
  n->q = q;
  n->base = kind_base;
  n->hooks = hooks;
  n->mm = sim_maxmin_new();
  n->free_flow = NONE;
  n->ev_trace = SIM_QUEUE_NONE;
  n->static_from = topo->next_change ? INT64_MAX : 0;
  n->hcap = 64;
  n->htab = mem_alloc(n->hcap * sizeof *n->htab);
  memset(n->htab, 0xff, n->hcap * sizeof *n->htab);
  n->cls = mem_calloc((size_t)topo->ndevices, sizeof *n->cls);
  int nn = topo->nic ? topo->nnics : 0;
  n->nic_out = mem_alloc((size_t)(nn + 1) * sizeof *n->nic_out);
  n->nic_in = mem_alloc((size_t)(nn + 1) * sizeof *n->nic_in);
  for (int i = 0; i < nn; i++) {
    bool lim = transport_is_shared(model) && topo->nic_gbps[i] > 0 &&
               isfinite(topo->nic_gbps[i]);
    double c = gbps_to_bpns(topo->nic_gbps[i]);
    n->nic_out[i] = lim ? sim_net_res_add(n, RES_NIC, c, -1, -1) : NONE;
    n->nic_in[i] = lim ? sim_net_res_add(n, RES_NIC, c, -1, -1) : NONE;
  }
  return n;
}

void sim_net_free(sim_net *n) {
  if (!n) return;
  sim_maxmin_free(n->mm);
  for (int d = 0; d < n->topo->ndevices; d++) free(n->cls[d].v);
  free(n->cls);
  free(n->res);
  free(n->nic_out);
  free(n->nic_in);
  free(n->path_res);
  free(n->flows);
  free(n->pairs);
  free(n->htab);
  free(n->memo);
  free(n);
}

size_t sim_net_bytes_per_tag(void) { return sizeof(tagmemo); }

void sim_net_expect_tags(sim_net *n, uint32_t ntags) {
  if (ntags <= n->nmemo) return;
  tagmemo *m = mem_alloc_random((size_t)ntags * sizeof *m); /* by tag */
  if (n->nmemo) memcpy(m, n->memo, n->nmemo * sizeof *m);
  free(n->memo);
  n->memo = m;
  for (uint32_t i = n->nmemo; i < ntags; i++)
    n->memo[i] = (tagmemo){.pair = NONE};
  n->nmemo = ntags;
}

/* The connection of a message (tag) a -> b of `channels` channels and
 * bytes, and into *nsock the sockets it uses: as tag's last start
 * remembered them when that was the same message, else looked up (the
 * pair created on first use at now) and remembered. */
static uint32_t conn_of(sim_net *n, int a, int b, int channels, double bytes,
                        uint32_t tag, int64_t now, int *nsock) {
  tagmemo *m = tag < n->nmemo ? &n->memo[tag] : NULL;
  if (m && m->pair != NONE && m->bytes == bytes) {
    const pair *pr = &n->pairs[m->pair];
    if (pr->a == a && pr->b == b && pr->channels == channels) {
      *nsock = (int)m->nsock;
      return m->pair;
    }
  }
  uint32_t p = sim_net_pair_get(n, a, b, channels, now);
  *nsock = transport_sockets_dealt(channels, n->pairs[p].sockets, bytes);
  if (m) *m = (tagmemo){.bytes = bytes, .pair = p, .nsock = (uint32_t)*nsock};
  return p;
}

static uint32_t flow_take(sim_net *n) {
  if (n->free_flow != NONE) {
    uint32_t id = n->free_flow;
    n->free_flow = n->flows[id].next_free;
    return id;
  }
  mem_grow((void **)&n->flows, &n->flows_cap, n->nflows + 1, sizeof *n->flows);
  uint32_t v = sim_maxmin_var_add(n->mm);
  assert(v == n->nflows); /* flow i is variable i */
  (void)v;
  return (uint32_t)n->nflows++;
}

void sim_net_set_connections(sim_net *n, sim_net_conn state) {
  assert(n->npairs == 0); /* before the first flow */
  n->conn = state;
}

/* A flow that would leave after the horizon is put at the horizon (or now,
 * past it), never later: a rate change may still bring it back (the event
 * moves), and if it fires there on_left records the overflow. */
static void schedule_left(sim_net *n, flow *f, double rate, int64_t now) {
  double left = f->size - f->sent;
  int64_t t = now;
  if (left > BYTES_EPS) {
    double dt = net_ceil_ns(left / rate);
    if ((double)now + dt < (double)SIM_NET_HORIZON_NS) t = now + (int64_t)dt;
    else t = now > SIM_NET_HORIZON_NS ? now : SIM_NET_HORIZON_NS;
  }
  if (f->ev == SIM_QUEUE_NONE)
    f->ev = sim_queue_push(n->q, t, n->base + EV_LEFT, (uint32_t)(f - n->flows));
  else if (sim_queue_time(n->q, f->ev) != t)
    sim_queue_move(n->q, f->ev, t);
}

/* Brings f's bytes sent up to now at the rate it had before the solve. */
static inline void advance(flow *f, const sim_maxmin_var *v, int64_t now) {
  f->sent = net_fmin(f->size, f->sent + v->old * (double)(now - f->t_upd));
  f->t_upd = now;
}

void sim_rate_log_free(sim_rate_log *l) {
  if (!l) return;
  free(l->v);
  *l = (sim_rate_log){0};
}

void sim_net_log_rates(sim_net *n, sim_rate_log *log) { n->log = log; }

void sim_net_tag_names(sim_net *n, const uint32_t *name) { n->tag_name = name; }

static void log_rate(sim_net *n, const flow *f, int64_t now, double rate) {
  sim_rate_log *l = n->log;
  sim_rate_change c = {.t = now, .rate = rate,
                       .tag = n->tag_name ? n->tag_name[f->tag] : f->tag};
  if (l->sink) {
    l->sink(l->sink_ctx, &c, f->a, f->b);
    return;
  }
  mem_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v);
  l->v[l->n++] = c;
}

/* After a solve: f's LEFT event at its new rate, its waiting messages
 * rechecked. Every flow of the solve is advanced first: the recheck reads
 * the connection's head. */
static inline void settle(sim_net *n, flow *f, const sim_maxmin_var *v,
                          int64_t now) {
  if (v->old != v->rate || f->ev == SIM_QUEUE_NONE) {
    if (n->log) log_rate(n, f, now, v->rate);
    schedule_left(n, f, v->rate, now);
    if (n->pairs[f->pair].waiter != NONE)
      sim_net_sock_check(n, f->pair, now, false);
  }
}

void sim_net_solve(sim_net *n, int64_t now) {
  const uint32_t *ids;
  size_t nv = sim_maxmin_solve(n->mm, &ids);
  const sim_maxmin_var *var = n->mm->var;
  for (size_t k = 0; k < nv; k++) advance(&n->flows[ids[k]], &var[ids[k]], now);
  for (size_t k = 0; k < nv; k++)
    settle(n, &n->flows[ids[k]], &var[ids[k]], now);
}

/* sim_net_solve_alone, inline in begin (every flow's start). */
static inline bool solve_alone(sim_net *n, uint32_t id, int64_t now) {
  if (!sim_maxmin_solve_alone(n->mm, id)) return false;
  flow *f = &n->flows[id];
  advance(f, var_at(n, id), now);
  settle(n, f, var_at(n, id), now);
  return true;
}

bool sim_net_solve_alone(sim_net *n, uint32_t id, int64_t now) {
  return solve_alone(n, id, now);
}

/* Lists flow id on its resources: its connection's link, and under a
 * shared model the NICs it crosses. */
static void attach(sim_net *n, uint32_t id) {
  const flow *f = &n->flows[id];
  int a = f->a, b = f->b;
  sim_maxmin_attach(n->mm, id, n->pairs[f->pair].res);
  if (!n->shared) return;
  const int *nic = n->topo->nic;
  if (nic && nic[a] != nic[b]) {
    if (n->nic_out[nic[a]] != NONE)
      sim_maxmin_attach(n->mm, id, n->nic_out[nic[a]]);
    if (n->nic_in[nic[b]] != NONE)
      sim_maxmin_attach(n->mm, id, n->nic_in[nic[b]]);
  }
}

/* Puts flow id on its resources (unless hand_over did) and solves: its
 * bytes start leaving. */
static void begin(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  uint32_t p = f->pair;
  f->state = FLOW_SENDING;
  f->t_upd = now;
  n->sending++;
  if (var_at(n, id)->nres == 0) attach(n, id);
  sim_net_res_refresh(n, n->pairs[p].res, now);
  if (n->windowed) sim_net_tcp_begin(n, id, now);
  n->pairs[p].active++;
  if (!solve_alone(n, id, now)) {
    seed(n, n->pairs[p].res);
    sim_net_solve(n, now);
  }
  sim_net_trace_arm(n, now);
}

/* Whether a pair's first message opens its connection (a handshake's
 * round trip before its bytes leave): new connections only. */
static bool opens(sim_net_conn c) {
  switch (c) {
    case SIM_NET_WARM:
    case SIM_NET_FRESH: return false;
    case SIM_NET_NEW: return true;
  }
  assert(!"unknown connection state");
  return false;
}

/* The head message of p starts: it opens the connection first when tcp
 * models new connections, else its bytes start leaving. */
static void head_start(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  pair *pr = &n->pairs[f->pair];
  f->state = FLOW_OPENING;
  if (n->windowed && opens(n->conn) && !pr->opened) {
    pr->opened = true;
    int64_t lat_ns;
    double rtt_ns;
    sim_net_pair_latency(n, pr, now, &lat_ns, &rtt_ns);
    sim_queue_push(n->q, now + llround(rtt_ns), n->base + EV_OPEN, id);
    return;
  }
  pr->opened = true;
  begin(n, id, now);
}

void sim_net_start(sim_net *n, int64_t now, int a, int b, double bytes,
                   uint32_t tag) {
  sim_net_start_on(n, now, a, b, bytes, 1, tag);
}

/* A flow's sockets are a uint8_t: every channel of the widest operation at
 * NCCL's most sockets per connection fits. */
_Static_assert(TRANSPORT_CHANNELS_MAX * TRANSPORT_SOCKETS_MAX <= UINT8_MAX,
               "a flow's sockets fit its nsock");

void sim_net_start_on(sim_net *n, int64_t now, int a, int b, double bytes,
                      int channels, uint32_t tag) {
  assert(a != b && a >= 0 && b >= 0 && bytes >= 0);
  assert(channels >= 1 && channels <= TRANSPORT_CHANNELS_MAX);
  uint32_t id = flow_take(n);
  int nsock;
  uint32_t p = conn_of(n, a, b, channels, bytes, tag, now, &nsock);
  flow *f = &n->flows[id];
  pair *pr = &n->pairs[p];
  pr->issued += bytes;
  const int *nic = n->topo->nic;
  bool wire = !nic || nic[a] != nic[b]; /* not NVLink inside an instance */
  double flow_cap = !n->shared || !wire
                        ? INFINITY
                        : nsock * pr->flow_bpns;
  *f = (flow){.a = a, .b = b, .state = FLOW_QUEUED, .size = bytes,
              .nsock = (uint8_t)nsock, .flow_cap = flow_cap, .t_upd = now,
              .end_pos = pr->issued, .pair = p, .tag = tag,
              .next_q = NONE, .ev = SIM_QUEUE_NONE,
              .ev_epoch = SIM_QUEUE_NONE};
  sim_maxmin_var_reset(n->mm, id, n->shared ? nsock : 1,
                       flow_cap);
  if (pr->qtail != NONE) n->flows[pr->qtail].next_q = id;
  else pr->qhead = id;
  pr->qtail = id;
  if (pr->waiter == NONE) pr->waiter = id;
  if (pr->qhead == id) head_start(n, id, now);
  sim_net_sock_recheck(n, p, now);
}

/* Flow id's last byte left and next, its connection's next message,
 * starts at once on the same resources. When id was alone on each of them
 * and no other change waits for a solve, taking id off (each list then
 * empty, the solve finding nothing to solve) and putting next on (each
 * list then next alone) ends where moving next into id's places does:
 * next takes them (begin then skips its attach) and true; else false,
 * changing nothing. */
static bool hand_over(sim_net *n, uint32_t id, uint32_t next) {
  sim_maxmin *m = n->mm;
  sim_maxmin_var *x = &m->var[id];
  if (next == NONE || m->nseeds) return false;
  for (int j = 0; j < x->nres; j++)
    if (m->res[x->res[j]].nvar != 1) return false;
  sim_maxmin_var *y = &m->var[next];
  assert(y->nres == 0); /* queued, on no resource */
  assert(n->pairs[n->flows[next].pair].opened); /* head_start begins it */
  for (int j = 0; j < x->nres; j++) {
    m->res[x->res[j]].var[0] = next;
    y->res[j] = x->res[j];
    y->pos[j] = 0;
  }
  y->nres = x->nres;
  x->nres = 0;
  return true;
}

static void on_left(sim_net *n, uint32_t id, int64_t now) {
  flow *f = &n->flows[id];
  assert(f->state == FLOW_SENDING);
  f->ev = SIM_QUEUE_NONE;
  if (now >= SIM_NET_HORIZON_NS) n->overflow = true;
  f->sent = f->size;
  f->state = FLOW_INFLIGHT;
  n->sending--;
  pair *p = &n->pairs[f->pair];
  p->active--;
  p->last_end = now;
  p->done_bytes = f->end_pos;
  assert(p->qhead == id);
  p->qhead = f->next_q;
  if (p->qhead == NONE) p->qtail = NONE;
  if (f->ev_epoch != SIM_QUEUE_NONE) {
    sim_queue_cancel(n->q, f->ev_epoch);
    f->ev_epoch = SIM_QUEUE_NONE;
  }
  if (n->windowed) sim_net_tcp_left(f, p);
  if (n->log) log_rate(n, f, now, 0);
  if (!hand_over(n, id, p->qhead) && !sim_maxmin_detach_alone(n->mm, id)) {
    sim_maxmin_detach(n->mm, id);
    sim_net_solve(n, now);
  }
  uint32_t pid = n->flows[id].pair, next = n->pairs[pid].qhead;
  if (next != NONE) head_start(n, next, now); /* back to back */
  sim_net_sock_recheck(n, pid, now); /* hands id over if still waiting */
  int64_t lat_ns;
  double rtt_ns;
  sim_net_pair_latency(n, &n->pairs[pid], now, &lat_ns, &rtt_ns);
  sim_queue_push(n->q, now + lat_ns, n->base + EV_ARRIVE, id);
  if (n->sending == 0 && n->ev_trace != SIM_QUEUE_NONE) {
    sim_queue_cancel(n->q, n->ev_trace);
    n->ev_trace = SIM_QUEUE_NONE;
  }
}

void sim_net_handle(sim_net *n, const sim_queue_item *it) {
  switch (it->kind - n->base) {
    case EV_LEFT:
      on_left(n, it->arg, it->t_ns);
      break;
    case EV_ARRIVE: {
      flow *f = &n->flows[it->arg];
      uint32_t tag = f->tag;
      f->state = FLOW_FREE;
      f->next_free = n->free_flow;
      n->free_flow = it->arg;
      if (n->hooks.arrived) n->hooks.arrived(n->hooks.ctx, tag, it->t_ns);
      break;
    }
    case EV_EPOCH:
      sim_net_tcp_epoch(n, it->arg, it->t_ns);
      break;
    case EV_TRACE:
      sim_net_trace_changed(n, it->t_ns);
      break;
    case EV_OPEN:
      begin(n, it->arg, it->t_ns);
      break;
    case EV_HANDED:
      if (n->hooks.left)
        n->hooks.left(n->hooks.ctx, n->flows[it->arg].tag, it->t_ns);
      break;
    case EV_SOCK:
      n->pairs[it->arg].ev_sock = SIM_QUEUE_NONE;
      sim_net_sock_check(n, it->arg, it->t_ns, true);
      break;
    default:
      assert(!"not a net event");
  }
}

bool sim_net_owns(const sim_net *n, int kind) {
  return kind >= n->base && kind < n->base + SIM_NET_NKINDS;
}

int sim_net_sending(const sim_net *n) { return n->sending; }

bool sim_net_overflowed(const sim_net *n) { return n->overflow; }

double sim_net_rate_of(const sim_net *n, uint32_t tag) {
  for (size_t i = 0; i < n->nflows; i++)
    if (n->flows[i].state == FLOW_SENDING && n->flows[i].tag == tag)
      return n->mm->var[i].rate * 1e9;
  return -1;
}

uint64_t sim_net_solves(const sim_net *n) { return n->mm->solves; }
uint64_t sim_net_flows_solved(const sim_net *n) { return n->mm->vars_solved; }
