/* onef1b: see onef1b.h. The op and call order of a stage is built as a
 * list (stage_items), from sim/train.c's schedule_ops (DT-FM) and
 * megatron_stage (Megatron); a transfer is named by its sender's stage,
 * its micro-batch and its direction. The stages are advanced in sweeps,
 * each as far as its inputs allow: the graph is acyclic, so every sweep
 * but the last moves some stage on, and each op is evaluated once. */
#include "models/onef1b.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"

enum { OP_F, OP_B, OP_CALL };
#define NO_XFER (-1)

typedef struct item {
  int kind, k;
  int send, recv; /* transfers (xfer_id) or NO_XFER */
} item;

/* The transfer of stage s, micro-batch k: its activation (to s + 1) or its
 * activation gradient (to s - 1). */
static int xfer_id(const onef1b_pipe *p, int s, int k, int grad) {
  return 2 * (s * p->micro_batches + k) + grad;
}

typedef struct io {
  const onef1b_pipe *p;
  int s;
} io;

static int act_in(io x, int k) {
  return x.s > 0 ? xfer_id(x.p, x.s - 1, k, 0) : NO_XFER;
}
static int act_out(io x, int k) {
  return x.s + 1 < x.p->stages ? xfer_id(x.p, x.s, k, 0) : NO_XFER;
}
static int grad_in(io x, int k) {
  return x.s + 1 < x.p->stages ? xfer_id(x.p, x.s + 1, k, 1) : NO_XFER;
}
static int grad_out(io x, int k) {
  return x.s > 0 ? xfer_id(x.p, x.s, k, 1) : NO_XFER;
}

/* Appends op F(k) or B(k) of stage x.s: it waits for its input, sends its
 * output. */
static int add_op(io x, item *v, int n, int bwd, int k) {
  v[n] = bwd ? (item){.kind = OP_B, .k = k, .send = grad_out(x, k),
                      .recv = grad_in(x, k)}
             : (item){.kind = OP_F, .k = k, .send = act_out(x, k),
                      .recv = act_in(x, k)};
  return n + 1;
}

/* Appends a blocking call; one with nothing to move is no call. */
static int add_call(item *v, int n, int send, int recv) {
  if (send == NO_XFER && recv == NO_XFER) return n;
  v[n] = (item){OP_CALL, -1, send, recv};
  return n + 1;
}

/* The items of stage s in issue order; returns their number: 2 M ops and
 * at most 2 M + 2 w + 1 calls, so at most 6 M + 1. */
static int stage_items(const onef1b_pipe *p, int s, item *v) {
  int S = p->stages, M = p->micro_batches, n = 0;
  int w = S - s - 1 < M ? S - s - 1 : M;
  io x = {p, s};
  bool meg = p->megatron;
  for (int k = 0; k < w; k++) {
    if (meg) n = add_call(v, n, NO_XFER, act_in(x, k));
    n = add_op(x, v, n, 0, k);
    if (meg) n = add_call(v, n, act_out(x, k), NO_XFER);
  }
  if (meg && M > w) n = add_call(v, n, NO_XFER, act_in(x, w));
  for (int i = 0; i < M - w; i++) {
    int k = w + i;
    n = add_op(x, v, n, 0, k);
    if (meg) n = add_call(v, n, act_out(x, k), grad_in(x, i));
    n = add_op(x, v, n, 1, i);
    if (meg)
      n = add_call(v, n, grad_out(x, i), k + 1 < M ? act_in(x, k + 1) : NO_XFER);
  }
  for (int i = M - w; i < M; i++) {
    if (meg) n = add_call(v, n, NO_XFER, grad_in(x, i));
    n = add_op(x, v, n, 1, i);
    if (meg) n = add_call(v, n, grad_out(x, i), NO_XFER);
  }
  return n;
}

/* The evaluation's state: per transfer its arrival and the time its last
 * byte is in the socket buffers (NAN until sent); per connection (2 s:
 * activations, 2 s + 1: gradients) when its last byte left and its window;
 * per stage when its compute stream is free and its last send handed. */
typedef struct eval {
  const onef1b_pipe *p;
  double *arr, *hand, *left, *cwnd, *t, *sent;
} eval;

/* Stage s sends transfer id, issued at `issue`, on its connection. */
static void send_xfer(eval *e, int s, int id, double issue) {
  const onef1b_pipe *p = e->p;
  int grad = id & 1, c = 2 * s + grad;
  int q = p->shaper && p->shaper[s] ? 2 * s : c; /* whose bytes go first */
  const hop *h = grad ? &p->grad[s] : &p->act[s];
  double start = fmax(issue, e->left[q]), w = e->cwnd[c];
  if (hop_restarts(p->net) && start > e->left[c])
    w = transport_idle_window(w, start - e->left[c],
                              h->rtt + TRANSPORT_TCP_RTO_MIN_S);
  double x = hop_time_from(p->net, h, p->bytes, &w);
  e->cwnd[c] = w;
  e->left[c] = e->left[q] = start + x;
  e->arr[id] = e->left[c] + h->lat;
  e->hand[id] = hop_handed(h, issue, e->left[c], p->bytes, x);
  e->sent[s] = e->hand[id];
}

/* Evaluates item it of stage s; false when an input has not been sent. */
static bool step(eval *e, int s, const item *it) {
  const onef1b_pipe *p = e->p;
  double start = e->t[s];
  if (it->recv != NO_XFER) {
    if (isnan(e->arr[it->recv])) return false;
    start = fmax(start, e->arr[it->recv]);
  }
  if (it->kind == OP_CALL) {
    if (it->send != NO_XFER) start = fmax(start, e->hand[it->send]);
    e->t[s] = start + p->call_s;
    return true;
  }
  double end = start + (it->kind == OP_F ? p->f[s] : p->b[s]);
  e->t[s] = end;
  if (it->send != NO_XFER)
    send_xfer(e, s, it->send, p->megatron ? end : fmax(end, e->sent[s]));
  return true;
}

static void eval_init(eval *e, const onef1b_pipe *p) {
  size_t S = (size_t)p->stages, X = 2 * S * (size_t)p->micro_batches;
  double *m = mem_alloc((2 * X + 6 * S) * sizeof *m);
  *e = (eval){.p = p, .arr = m, .hand = m + X, .left = m + 2 * X,
              .cwnd = m + 2 * X + 2 * S, .t = m + 2 * X + 4 * S,
              .sent = m + 2 * X + 5 * S};
  for (size_t i = 0; i < 2 * X; i++) m[i] = NAN;
  bool cold = hop_restarts(p->net);
  for (size_t c = 0; c < 2 * S; c++) { /* 2 s: s's activations, 2 s + 1 its gradients */
    size_t s = c / 2;
    const hop *h = c & 1 ? (s > 0 ? &p->grad[s] : NULL)
                         : (s + 1 < S ? &p->act[s] : NULL);
    e->left[c] = -INFINITY;
    e->cwnd[c] = cold ? TRANSPORT_TCP_INITIAL_WINDOW : h ? h->window : 0;
  }
  for (size_t s = 0; s < S; s++) e->t[s] = 0, e->sent[s] = -INFINITY;
}

double onef1b_pass(const onef1b_pipe *p, double *end, double *sent) {
  int S = p->stages, cap = 6 * p->micro_batches + 1;
  item *v = mem_alloc((size_t)S * cap * sizeof *v);
  int *n = mem_alloc(2 * (size_t)S * sizeof *n), *pos = n + S;
  for (int s = 0; s < S; s++) n[s] = stage_items(p, s, v + (size_t)s * cap), pos[s] = 0;
  eval e;
  eval_init(&e, p);
  for (bool moved = true; moved;) {
    moved = false;
    for (int s = 0; s < S; s++)
      for (; pos[s] < n[s] && step(&e, s, &v[(size_t)s * cap + pos[s]]); pos[s]++)
        moved = true;
  }
  double most = 0;
  for (int s = 0; s < S; s++) {
    assert(pos[s] == n[s]); /* the graph is acyclic */
    most = fmax(most, e.t[s]);
    if (end) end[s] = e.t[s];
    if (sent) sent[s] = e.sent[s];
  }
  free(e.arr);
  free(v);
  free(n);
  return most;
}

/* The terms of the period bound of one boundary direction: its transfer
 * time x, x plus its latency, and how long its send holds the stage (a
 * Megatron call, a DT-FM send stream): the transfer time beyond what the
 * socket buffers take. Zeros where the stage has no such boundary. */
typedef struct edge {
  double x, X, h;
} edge;

static edge edge_of(const onef1b_pipe *p, const hop *h) {
  double x = hop_time(p->net, h, p->bytes);
  return (edge){x, x + h->lat, fmax(0, x - h->room * x / p->bytes)};
}

static edge act_edge(const onef1b_pipe *p, int s) {
  return s + 1 < p->stages ? edge_of(p, &p->act[s]) : (edge){0, 0, 0};
}

static edge grad_edge(const onef1b_pipe *p, int s) {
  return s > 0 ? edge_of(p, &p->grad[s]) : (edge){0, 0, 0};
}

/* Stage e's calls per micro-batch in the steady state: after its forward
 * (not the last stage) and after its backward (not the first). */
static double calls_s(const onef1b_pipe *p, int e) {
  if (!p->megatron) return 0;
  return p->call_s * ((e + 1 < p->stages) + (e > 0));
}

double onef1b_period(const onef1b_pipe *p) {
  int S = p->stages;
  double best = 0;
  for (int s = 0; s < S; s++) {
    edge a = act_edge(p, s), g = grad_edge(p, s);
    best = fmax(best, fmax(a.x, g.x)); /* a connection, one per period */
    if (!p->megatron) best = fmax(best, a.h + g.h); /* its send stream */
    double sum = 0;
    for (int e = s; e < S; e++) { /* the trip s -> e -> s */
      sum += p->f[e] + p->b[e] + calls_s(p, e);
      if (e > s) sum += act_edge(p, e - 1).X + grad_edge(p, e).X;
      double held = p->megatron ? g.h + act_edge(p, e).h : 0;
      best = fmax(best, (sum + held) / (e - s + 1));
    }
  }
  return best;
}

onef1b_pipe onef1b_free(const onef1b_pipe *p, hop *none) {
  onef1b_pipe q = *p;
  for (int st = 0; st < p->stages; st++)
    none[st] = (hop){.rate = INFINITY, .channels = 1, .sockets = 1};
  q.act = q.grad = none;
  q.shaper = NULL;
  q.megatron = false;
  q.call_s = 0;
  return q;
}
