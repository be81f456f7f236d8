/* netbound: see netbound.h. Each rate change of a transfer against its
 * link's bandwidth at that time marks the transfer sent or held back (one
 * byte per message tag, as the run goes or over a log afterwards); the
 * causes are read from the finished tasks. */
#include "sim/netbound.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* Why transfer x was held below its link: the least of its other bounds
 * when that is below the link, else a resource it shared. */
static sim_cp_cause held_by(const scenario *s, const transport_options *o,
                            const sim_task *x) {
  sim_flow_bounds b = sim_critpath_bounds(s, o, x);
  switch (b.least) {
    case SIM_CP_CAUSE_NIC:
    case SIM_CP_CAUSE_FLOWCAP:
    case SIM_CP_CAUSE_WINDOW:
    case SIM_CP_CAUSE_LOSS: return b.least;
    case SIM_CP_CAUSE_LINK:
    case SIM_CP_CAUSE_SHARED:
    case SIM_CP_CAUSE_SEND: return SIM_CP_CAUSE_SHARED;
  }
  return SIM_CP_CAUSE_SHARED;
}

struct sim_netbound_acc {
  const scenario *s;
  uint8_t *seen; /* per tag: 0 silent, 1 sent, 2 held back */
  size_t cap;
};

sim_netbound_acc *sim_netbound_acc_new(const scenario *s) {
  sim_netbound_acc *a = mem_calloc(1, sizeof *a);
  a->s = s;
  return a;
}

void sim_netbound_acc_free(sim_netbound_acc *a) {
  if (!a) return;
  free(a->seen);
  free(a);
}

/* One rate change of message tag from src to dst: sent, and held back
 * when below its link's bandwidth at that time. */
static void mark(sim_netbound_acc *a, const sim_rate_change *c, int src,
                 int dst) {
  if (c->rate <= 0) return;
  if (c->tag >= a->cap) {
    size_t old = a->cap;
    mem_grow((void **)&a->seen, &a->cap, (size_t)c->tag + 1, 1);
    memset(a->seen + old, 0, a->cap - old);
  }
  uint8_t *x = &a->seen[c->tag];
  if (*x == 2) return;
  double link = scenario_link(a->s, src, dst, c->t).bandwidth_gbps / 8;
  *x = c->rate >= link * (1 - SIM_NETBOUND_EPS) ? 1 : 2;
}

static void sink(void *ctx, const sim_rate_change *c, int src, int dst) {
  mark(ctx, c, src, dst);
}

void sim_netbound_acc_attach(sim_netbound_acc *a, sim_rate_log *log) {
  *log = (sim_rate_log){.sink = sink, .sink_ctx = a};
}

void sim_netbound_acc_finish(const sim_netbound_acc *a,
                             const transport_options *o, const sim_task *t,
                             uint32_t n, sim_netbound *out) {
  memset(out, 0, sizeof *out);
  size_t m = a->cap < n ? a->cap : n;
  for (size_t i = 0; i < m; i++) {
    if (!a->seen[i] || t[i].kind != SIM_TASK_XFER) continue;
    out->transfers++;
    if (a->seen[i] != 2) continue;
    out->held[held_by(a->s, o, &t[i])]++;
    out->held_total++;
  }
}

void sim_netbound_of(const scenario *s, const transport_options *o,
                     const sim_task *t, uint32_t n, const sim_rate_log *log,
                     sim_netbound *out) {
  sim_netbound_acc *a = sim_netbound_acc_new(s);
  for (size_t i = 0; log && i < log->n; i++) {
    const sim_rate_change *c = &log->v[i];
    if (c->tag < n && t[c->tag].kind == SIM_TASK_XFER)
      mark(a, c, t[c->tag].dev, t[c->tag].dst);
  }
  sim_netbound_acc_finish(a, o, t, n, out);
  sim_netbound_acc_free(a);
}

/* sim_options' inspection: the run's figures into the watch. */
static void watch_inspect(void *ctx, const sim_graph *g) {
  sim_netbound_watch *w = ctx;
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  if (w->acc) sim_netbound_acc_finish(w->acc, w->o, t, n, &w->nb);
  else sim_netbound_of(w->s, w->o, t, n, &w->rates, &w->nb);
  w->done = true;
}

void sim_netbound_watch_start(sim_netbound_watch *w, const scenario *s,
                              sim_options *o, bool online) {
  *w = (sim_netbound_watch){.s = s, .o = &o->transport};
  if (online) {
    w->acc = sim_netbound_acc_new(s);
    sim_netbound_acc_attach(w->acc, &w->rates);
  }
  o->rates = &w->rates;
  o->inspect = watch_inspect, o->inspect_ctx = w;
}

void sim_netbound_watch_free(sim_netbound_watch *w) {
  sim_rate_log_free(&w->rates);
  sim_netbound_acc_free(w->acc);
  w->acc = NULL;
}
