/* graph: build once (tasks + edge list), freeze into CSR once per build,
 * execute as often as asked (each run resets the run state: reset).
 * Invariant during a run: hot[i].deps counts the predecessor triggers of task i
 * that have not fired; a task with deps == 0 has been started exactly once;
 * every started task fires LEFT then DONE exactly once (at the same time
 * unless it is a transfer).
 * Layout: what the run reads and writes per task (hot, 32 bytes, two to a
 * cache line: kind, ends, CSR and the dependency count, so an edge's target
 * costs one miss) is a dense array, times another (24 bytes); the public
 * task records are read once by freeze and written once after the run, in
 * order (publish). The edges hit tasks at random and the records (72 bytes)
 * do not fit in cache at scale: touching them during the run was a third of
 * its time. At scale (10^6 tasks and more) the run's reads of the hot
 * records, the CSR and the order successors still miss: those arrays sit
 * on huge pages (mem_alloc_random: a miss without a TLB miss) and a task's
 * event prefetches its successors' records before firing them; and a graph
 * run again as before (explain's re-runs) may lay those arrays out in the
 * order its last run started the tasks (sim_graph_relayout: run ids, perm),
 * so that the tasks in hand sit together instead of strided over the
 * builder's whole chains. */
#include "sim/graph.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/queue.h"

/* Hot records past this many bytes live beyond a core's L2 (1 MiB on the
 * EPYC measured; 512 KiB to 2 MiB elsewhere): the run prefetches the
 * successors' (below it the prefetches only cost instructions). */
#define GRAPH_FAR_BYTES ((size_t)4 << 20)

enum { EV_COMPUTE_DONE, EV_JOIN_DONE, EV_SPEED, EV_NET_BASE };

typedef struct hot {
  union {
    int64_t dur_ns; /* compute */
    double bytes;   /* transfer */
  } u;
  int32_t dev, dst;
  uint32_t succ, nleft; /* CSR: LEFT successors, then DONE ones up to the
                         * next task's succ (hot[n] is a sentinel) */
  uint32_t deps;        /* run state: predecessor triggers not yet fired */
  uint8_t kind : 4;     /* sim_task_kind */
  uint8_t channels : 4; /* transfer: its operation's NCCL channels (0 else) */
  uint8_t left;         /* its LEFT trigger has fired */
  uint8_t ordwait;      /* its completion-order predecessor is not done */
  uint8_t arrived;      /* it arrived while ordwait: DONE is pending */
} hot;
_Static_assert(sizeof(hot) == 32, "two hot records per cache line");
_Static_assert(sizeof(sim_task) == 4 + 3 * sizeof(int) + 5 * 8 + 4 * 4,
               "a task record has no padding (it compares bytewise)");
_Static_assert(SIM_TASK_JOIN < 16 && TRANSPORT_CHANNELS_MAX < 16,
               "a task's kind and channels fit their four bits");

/* A task's times during the run, copied into the records afterwards. */
typedef struct times {
  int64_t start, left, done;
} times;

enum { EDGE_ORDER = SIM_EDGE_ORDER }; /* a trigger, or completion order */

typedef sim_edge edge;

struct sim_graph {
  sim_task *t;
  size_t n, cap;
  edge *e;
  size_t ne, ecap;
  uint32_t *succ; /* CSR targets, scap of them */
  uint32_t *deps; /* predecessor counts (what reset restores) */
  uint32_t *cur;  /* freeze scratch: 2 (ncap + 1) cursors; then the roots */
  uint32_t *ord;  /* [ncap]: completion-order successor or SIM_GRAPH_NONE */
  size_t nroots;   /* after freeze: cur[0 .. nroots) lists the tasks
                    * without predecessors, in order */
  uint32_t *perm;  /* laid out by a run (by_run): run id -> task id, in
                    * cur's second half after freeze; NULL: run ids are
                    * task ids */
  bool by_run;    /* freeze lays the run's arrays out by the records'
                     start times (sim_graph_relayout) */
  bool frozen;    /* the CSR, hot and roots are the tasks' and edges' now */
  bool far;       /* the hot records outgrow the caches: prefetch_succ */
  hot *hot;       /* [n], 64-byte aligned inside hot_mem */
  void *hot_mem;
  times *tm;      /* [n] */
  size_t scap, ncap; /* succ; deps, cur and hot (tasks + 1) */
  sim_queue *q;
  sim_net *net;
  size_t done;
  int64_t end;
  uint64_t flows;
  /* Attached (sim_graph_attach): the queue and net outlive a run. */
  bool attached;
  int ndev;
  /* Device speeds (sim_graph_speed) while a run has them: per device the
   * GPU work running there, its event, the work left (ns at speed 1) as of
   * run_upd and the speed since then. */
  const sim_graph_speed *sp;
  uint32_t *run_task;
  sim_queue_event *run_ev, ev_speed;
  double *run_left, *run_speed;
  int64_t *run_upd;
};

sim_graph *sim_graph_new(void) { return mem_calloc(1, sizeof(sim_graph)); }

void sim_graph_free(sim_graph *g) {
  if (!g) return;
  sim_graph_detach(g);
  free(g->t);
  free(g->e);
  free(g->succ);
  free(g->deps);
  free(g->cur);
  free(g->ord);
  free(g->hot_mem);
  free(g->tm);
  free(g);
}

void sim_graph_clear(sim_graph *g) {
  g->n = 0;
  g->ne = 0;
  g->done = 0;
  g->end = 0;
  g->flows = 0;
  g->frozen = false;
  g->by_run = false;
  g->perm = NULL;
}

void sim_graph_trim(sim_graph *g) {
  assert(!g->attached);
  free(g->succ), free(g->deps), free(g->cur), free(g->ord);
  free(g->hot_mem), free(g->tm);
  g->succ = g->deps = g->cur = g->ord = NULL;
  g->hot_mem = NULL, g->hot = NULL, g->tm = NULL;
  g->scap = g->ncap = 0;
  g->nroots = 0;
  g->perm = NULL;
  g->frozen = false;
}

static uint32_t add(sim_graph *g, sim_task x) {
  assert(g->n < UINT32_MAX); /* ids and CSR offsets are 32-bit */
  if (g->n == g->cap) mem_grow((void **)&g->t, &g->cap, g->n + 1, sizeof *g->t);
  x.t_start = x.t_left = x.t_done = -1;
  g->t[g->n] = x;
  g->frozen = false;
  return (uint32_t)g->n++;
}

uint32_t sim_graph_compute(sim_graph *g, int dev, int64_t dur_ns,
                           sim_task_role role, int mb) {
  assert(dur_ns >= 0);
  return add(g, (sim_task){.kind = SIM_TASK_COMPUTE, .role = (uint8_t)role,
                           .dev = dev, .dst = -1, .mb = mb, .dur_ns = dur_ns});
}

uint32_t sim_graph_xfer(sim_graph *g, int src, int dst, double bytes,
                        sim_task_role role, int mb) {
  return add(g, (sim_task){.kind = SIM_TASK_XFER, .role = (uint8_t)role,
                           .channels = TRANSPORT_P2P_CHANNELS, .dev = src,
                           .dst = dst, .mb = mb, .bytes = bytes});
}

void sim_graph_channels(sim_graph *g, uint32_t t, int channels) {
  assert(t < g->n && g->t[t].kind == SIM_TASK_XFER);
  assert(channels >= 1 && channels <= TRANSPORT_CHANNELS_MAX);
  g->t[t].channels = (uint8_t)channels;
  g->frozen = false;
}

uint32_t sim_graph_join(sim_graph *g, int dev, sim_task_role role) {
  return add(g, (sim_task){.kind = SIM_TASK_JOIN, .role = (uint8_t)role,
                           .dev = dev, .dst = -1, .mb = -1});
}

void sim_graph_edge(sim_graph *g, uint32_t a, uint32_t b, sim_trigger when) {
  assert(a < g->n && b < g->n && a != b);
  if (g->t[a].kind != SIM_TASK_XFER) when = SIM_ON_DONE;
  assert(g->ne < UINT32_MAX);
  if (g->ne == g->ecap)
    mem_grow((void **)&g->e, &g->ecap, g->ne + 1, sizeof *g->e);
  g->e[g->ne++] = (edge){a, b, (uint8_t)when};
  g->frozen = false;
}

void sim_graph_order(sim_graph *g, uint32_t a, uint32_t b) {
  assert(a < g->n && b < g->n && a != b);
  assert(g->t[b].kind == SIM_TASK_XFER);
  if (g->ne == g->ecap)
    mem_grow((void **)&g->e, &g->ecap, g->ne + 1, sizeof *g->e);
  g->e[g->ne++] = (edge){a, b, EDGE_ORDER};
  g->frozen = false;
}

void sim_graph_stream(sim_graph *g, uint32_t *last, uint32_t t,
                      sim_trigger trig) {
  if (*last != SIM_GRAPH_NONE) sim_graph_edge(g, *last, t, trig);
  *last = t;
}

void sim_graph_recv_stream(sim_graph *g, uint32_t *last, uint32_t t) {
  if (*last != SIM_GRAPH_NONE) sim_graph_order(g, *last, t);
  *last = t;
}

/* Counting sort of the edges by (source, trigger) into CSR, successors in
 * edge order within each part. The counts live in small arrays (4 bytes a
 * task) rather than in the task records, which are touched once, in order:
 * the edges hit tasks at random and the records do not fit in cache. */
#ifndef NDEBUG
/* After freeze: each run id's LEFT successors end where its DONE ones
 * begin, and those where the next run id's begin — every slot written once
 * (freeze's cursors in g->cur, each past its part's last successor). */
static bool csr_filled(const sim_graph *g) {
  const uint32_t *lcur = g->cur, *dcur = g->cur + g->n + 1;
  for (size_t i = 0; i < g->n; i++)
    if (lcur[i] != g->hot[i].succ + g->hot[i].nleft ||
        dcur[i] != g->hot[i + 1].succ)
      return false;
  return g->hot[g->n].succ <= g->ne;
}
#endif

/* Task i's run id under rank (NULL: i). */
static inline uint32_t run_id(const uint32_t *rank, uint32_t i) {
  return rank ? rank[i] : i;
}

/* The tasks without predecessors, in task id order, as run ids into cur
 * (freeze's cursors are spent by then). */
static void list_roots(sim_graph *g, const uint32_t *rank) {
  g->nroots = 0;
  for (size_t i = 0; i < g->n; i++) {
    uint32_t k = run_id(rank, (uint32_t)i);
    if (g->deps[k] == 0) g->cur[g->nroots++] = k;
  }
}

/* Room for freeze's arrays: the CSR for the edges, the rest for n tasks
 * (+ 1), grown only when the graph outgrew them. */
static void freeze_room(sim_graph *g, size_t n) {
  if (g->ne + 1 > g->scap) {
    free(g->succ);
    g->scap = g->ne + 1;
    g->succ = mem_alloc_random(g->scap * sizeof *g->succ);
  }
  if (n + 1 > g->ncap) {
    free(g->deps);
    free(g->cur);
    free(g->ord);
    free(g->hot_mem);
    free(g->tm);
    g->ncap = n + 1;
    g->ord = mem_alloc_random(g->ncap * sizeof *g->ord);
    g->tm = mem_alloc_random(g->ncap * sizeof *g->tm);
    g->deps = mem_alloc(g->ncap * sizeof *g->deps);
    g->cur = mem_alloc(2 * g->ncap * sizeof *g->cur);
    g->hot_mem = mem_alloc_random(g->ncap * sizeof *g->hot + 63);
    g->hot = (hot *)(((uintptr_t)g->hot_mem + 63) & ~(uintptr_t)63);
  }
}

/* A task's place in the last run's order, 0 .. n: its start time scaled
 * onto n slots from the earliest (lo) to the latest (hi); n for a task the
 * run did not reach. */
static size_t start_slot(int64_t t, int64_t lo, int64_t hi, size_t n) {
  if (t < 0) return n;
  return (size_t)((double)(t - lo) / ((double)(hi - lo) + 1) * (double)n);
}

/* The layout by the last run (by_run): run ids in the order of the
 * records' start times (a counting sort into n slots, task id order
 * within one), so that the tasks a run reaches at about one time sit
 * together in memory. Returns rank (task id -> run id), perm (run id ->
 * task id) right after it, both in the times' memory (6 words a task,
 * free until reset): 3 n + 2 words with the counts. */
static uint32_t *layout(sim_graph *g) {
  size_t n = g->n;
  uint32_t *rank = (uint32_t *)g->tm, *perm = rank + n, *cnt = perm + n;
  _Static_assert(sizeof(times) == 6 * sizeof(uint32_t), "room for 3n+2");
  int64_t lo = INT64_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t t = g->t[i].t_start;
    if (t >= 0 && t < lo) lo = t;
    if (t > hi) hi = t;
  }
  memset(cnt, 0, (n + 2) * sizeof *cnt);
  for (size_t i = 0; i < n; i++)
    cnt[start_slot(g->t[i].t_start, lo, hi, n) + 1]++;
  for (size_t k = 0; k < n; k++) cnt[k + 1] += cnt[k];
  for (size_t i = 0; i < n; i++)
    perm[cnt[start_slot(g->t[i].t_start, lo, hi, n)]++] = (uint32_t)i;
  for (size_t k = 0; k < n; k++) rank[perm[k]] = (uint32_t)k;
  return rank;
}

/* The hot records' fixed part, in run id order, from the task records and
 * the counts of LEFT (lcur) and DONE (dcur) successors per run id, which
 * become each part's first CSR slot; the records' own CSR fields, over task
 * ids, as the layout without perm gives them. */
static void freeze_hot(sim_graph *g, const uint32_t *perm,
                       const uint32_t *rank, uint32_t *lcur, uint32_t *dcur) {
  uint32_t off = 0;
  for (size_t k = 0; k < g->n; k++) {
    const sim_task *t = &g->t[perm ? perm[k] : k];
    hot *h = &g->hot[k];
    *h = (hot){.dev = t->dev, .dst = t->dst, .succ = off, .nleft = lcur[k],
               .deps = g->deps[k], .kind = t->kind, .channels = t->channels};
    switch ((sim_task_kind)t->kind) {
      case SIM_TASK_XFER: h->u.bytes = t->bytes; break;
      case SIM_TASK_COMPUTE:
      case SIM_TASK_JOIN: h->u.dur_ns = t->dur_ns; break;
    }
    uint32_t nl = lcur[k];
    lcur[k] = off;
    off += nl + dcur[k];
    dcur[k] = off - dcur[k];
  }
  g->hot[g->n].succ = off;
  off = 0;
  for (size_t i = 0; i < g->n; i++) {
    const hot *h = &g->hot[run_id(rank, (uint32_t)i)];
    sim_task *t = &g->t[i];
    t->succ = off;
    t->nleft = h->nleft;
    t->ndone = h[1].succ - h->succ - h->nleft;
    off += t->nleft + t->ndone;
  }
}

/* Builds the CSR, the hot records' fixed part and the roots from the
 * tasks and edges, in run ids (the layout's, by_run); the run state is
 * reset's. Successors keep edge order and roots task id order, so a run
 * visits them as without the layout. */
static void freeze(sim_graph *g) {
  size_t n = g->n;
  freeze_room(g, n);
  const uint32_t *rank = g->by_run ? layout(g) : NULL;
  const uint32_t *perm = rank ? rank + n : NULL;
  uint32_t *lcur = g->cur, *dcur = g->cur + n + 1;
  memset(g->deps, 0, (n + 1) * sizeof *g->deps);
  memset(g->cur, 0, 2 * (n + 1) * sizeof *g->cur);
  memset(g->ord, 0xff, n * sizeof *g->ord);
  for (size_t k = 0; k < g->ne; k++) {
    const edge *x = &g->e[k];
    uint32_t a = run_id(rank, x->a), b = run_id(rank, x->b);
    if (x->when == EDGE_ORDER) {
      assert(g->ord[a] == SIM_GRAPH_NONE);
      g->ord[a] = b;
      continue;
    }
    if (x->when == SIM_ON_LEFT) lcur[a]++; else dcur[a]++;
    g->deps[b]++;
  }
  freeze_hot(g, perm, rank, lcur, dcur);
  for (size_t k = 0; k < g->ne; k++) {
    const edge *x = &g->e[k];
    uint32_t a = run_id(rank, x->a), b = run_id(rank, x->b);
    if (x->when == EDGE_ORDER) {
      assert(!g->hot[b].ordwait); /* one order predecessor */
      g->hot[b].ordwait = 1;
      continue;
    }
    g->succ[x->when == SIM_ON_LEFT ? lcur[a]++ : dcur[a]++] = b;
  }
  assert(csr_filled(g));
  list_roots(g, rank);
  g->perm = NULL;
  if (perm) { /* dcur is spent: perm moves there from the times */
    g->perm = g->cur + n + 1;
    memcpy(g->perm, perm, n * sizeof *g->perm);
  }
  g->far = n * sizeof(hot) >= GRAPH_FAR_BYTES;
  g->frozen = true;
}

/* The run state as before any run: every dependency count full, no trigger
 * fired, each completion-order successor waiting, no time reached. One
 * pass over the hot records and the times, in order; the CSR stays. */
static void reset(sim_graph *g) {
  size_t n = g->n;
  for (size_t i = 0; i < n; i++) {
    hot *h = &g->hot[i];
    h->deps = g->deps[i];
    h->left = h->ordwait = h->arrived = 0;
    g->tm[i] = (times){-1, -1, -1};
  }
  for (size_t i = 0; i < n; i++)
    if (g->ord[i] != SIM_GRAPH_NONE) g->hot[g->ord[i]].ordwait = 1;
}

bool sim_role_gpu_work(sim_task_role r) {
  switch (r) {
    case SIM_ROLE_FWD:
    case SIM_ROLE_BWD:
    case SIM_ROLE_OPT: return true;
    case SIM_ROLE_ACT:
    case SIM_ROLE_GRAD:
    case SIM_ROLE_DP:
    case SIM_ROLE_SYNC:
    case SIM_ROLE_BARRIER:
    case SIM_ROLE_CALL:
    case SIM_ROLE_MATCH:
    case SIM_ROLE_HOST: return false;
  }
  assert(!"unknown task role");
  return false;
}

static bool gpu_work(const sim_graph *g, uint32_t id) {
  uint32_t task = g->perm ? g->perm[id] : id;
  return sim_role_gpu_work((sim_task_role)g->t[task].role);
}

/* When ns of GPU work started at now ends at speed v: ceil(ns / v) later,
 * held at the horizon, so that a device slowed past what the engine can
 * time (overlapping slowdowns multiply) ends there and the run says so
 * (sim_engine_run's horizon check) instead of wrapping to garbage. Past
 * the horizon it ends at once: never before now. */
static int64_t work_end(int64_t now, double ns, double v) {
  double t = ceil(ns / v);
  if (now >= SIM_NET_HORIZON_NS) return now;
  return t < (double)(SIM_NET_HORIZON_NS - now) ? now + (int64_t)t
                                                 : SIM_NET_HORIZON_NS;
}

/* GPU work at the device's speed: it takes ceil(dur / speed), and its
 * event moves when the speed changes (on_speed). */
static void compute_start(sim_graph *g, uint32_t id, int64_t now) {
  const hot *h = &g->hot[id];
  int d = h->dev;
  assert(d >= 0 && d < g->ndev && g->run_task[d] == SIM_GRAPH_NONE);
  double v = g->sp->speed(g->sp->ctx, d, now);
  int64_t end = v == 1 ? now + h->u.dur_ns
                       : work_end(now, (double)h->u.dur_ns, v);
  g->run_task[d] = id;
  g->run_ev[d] = sim_queue_push(g->q, end, EV_COMPUTE_DONE, id);
  g->run_left[d] = (double)h->u.dur_ns;
  g->run_speed[d] = v;
  g->run_upd[d] = now;
}

static void start(sim_graph *g, uint32_t id, int64_t now) {
  const hot *h = &g->hot[id];
  g->tm[id].start = now;
  switch ((sim_task_kind)h->kind) {
    case SIM_TASK_COMPUTE:
      if (g->sp && gpu_work(g, id)) compute_start(g, id, now);
      else sim_queue_push(g->q, now + h->u.dur_ns, EV_COMPUTE_DONE, id);
      break;
    case SIM_TASK_JOIN:
      sim_queue_push(g->q, now, EV_JOIN_DONE, id);
      break;
    case SIM_TASK_XFER:
      g->flows++;
      sim_net_start_on(g->net, now, h->dev, h->dst, h->u.bytes, h->channels,
                       id);
      break;
  }
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch((p), 1)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Asks for the hot records of successors from .. from + n - 1 before fire
 * reads them: at scale each is a cache miss, and the misses then overlap
 * instead of following each other (fire's starts run the net between
 * them). */
static void prefetch_succ(const sim_graph *g, uint32_t from, uint32_t n) {
  if (!g->far) return;
  for (uint32_t k = 0; k < n; k++) PREFETCH(&g->hot[g->succ[from + k]]);
}

static void fire(sim_graph *g, uint32_t from, uint32_t n, int64_t now) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t b = g->succ[from + k];
    assert(g->hot[b].deps > 0);
    if (--g->hot[b].deps == 0) start(g, b, now);
  }
}

static void on_left(void *ctx, uint32_t id, int64_t now) {
  sim_graph *g = ctx;
  hot *h = &g->hot[id];
  prefetch_succ(g, h->succ, h->nleft);
  h->left = 1;
  g->tm[id].left = now;
  fire(g, h->succ, h->nleft, now);
}

/* Task id completes: its DONE successors fire, and its completion-order
 * successor, when it has arrived already, completes too (and so on down
 * the receive stream). */
static void complete(sim_graph *g, uint32_t id, int64_t now) {
  for (;;) {
    hot *h = &g->hot[id];
    g->tm[id].done = now;
    g->done++;
    if (now > g->end) g->end = now;
    fire(g, h->succ + h->nleft, h[1].succ - h->succ - h->nleft, now);
    uint32_t nx = g->ord[id];
    if (nx == SIM_GRAPH_NONE) return;
    g->hot[nx].ordwait = 0;
    if (!g->hot[nx].arrived) return;
    id = nx;
  }
}

static void on_done(void *ctx, uint32_t id, int64_t now) {
  sim_graph *g = ctx;
  if (g->far) PREFETCH(&g->ord[id]);
  hot *h = &g->hot[id];
  uint32_t first = h->left ? h->succ + h->nleft : h->succ;
  prefetch_succ(g, first, h[1].succ - first);
  if (!h->left) {
    h->left = 1;
    g->tm[id].left = now;
    fire(g, h->succ, h->nleft, now);
  }
  if (h->ordwait) { /* arrived before its predecessor on the stream */
    h->arrived = 1;
    return;
  }
  complete(g, id, now);
}

/* Writes the run's times and dependency counts left into the public
 * records (their CSR fields are freeze's), in one pass in run id order. */
static void publish(sim_graph *g) {
  for (size_t k = 0; k < g->n; k++) {
    sim_task *t = &g->t[g->perm ? g->perm[k] : k];
    t->t_start = g->tm[k].start;
    t->t_left = g->tm[k].left;
    t->t_done = g->tm[k].done;
    t->deps = g->hot[k].deps;
  }
}

void sim_graph_attach(sim_graph *g, const sim_net_topo *topo,
                      const transport_options *o, sim_net_conn conn) {
  sim_graph_detach(g);
  g->q = sim_queue_new();
  g->net = sim_net_new(topo, o, g->q, EV_NET_BASE,
                       (sim_net_hooks){g, on_left, on_done});
  if (conn != SIM_NET_WARM) sim_net_set_connections(g->net, conn);
  size_t nd = (size_t)topo->ndevices + 1;
  g->ndev = topo->ndevices;
  g->run_task = mem_alloc(nd * sizeof *g->run_task);
  g->run_ev = mem_alloc(nd * sizeof *g->run_ev);
  g->run_left = mem_alloc(nd * sizeof *g->run_left);
  g->run_speed = mem_alloc(nd * sizeof *g->run_speed);
  g->run_upd = mem_alloc(nd * sizeof *g->run_upd);
  g->ev_speed = SIM_QUEUE_NONE;
  g->attached = true;
}

void sim_graph_log_rates(sim_graph *g, sim_rate_log *log) {
  assert(g->attached);
  sim_net_log_rates(g->net, log);
}

void sim_graph_detach(sim_graph *g) {
  if (!g->attached) return;
  sim_net_free(g->net);
  sim_queue_free(g->q);
  g->net = NULL;
  g->q = NULL;
  free(g->run_task), free(g->run_ev), free(g->run_left);
  free(g->run_speed), free(g->run_upd);
  g->run_task = NULL;
  g->attached = false;
}

static void arm_speed(sim_graph *g, int64_t now) {
  int64_t t = g->sp->next(g->sp->ctx, now);
  if (t != INT64_MAX) g->ev_speed = sim_queue_push(g->q, t, EV_SPEED, 0);
}

/* Device speeds changed at now: the GPU work running on a device whose
 * speed changed keeps the work done at the old speed and finishes the
 * rest at the new one. */
static void on_speed(sim_graph *g, int64_t now) {
  g->ev_speed = SIM_QUEUE_NONE;
  if (!g->sp) return; /* armed by an earlier run with speeds */
  for (int d = 0; d < g->ndev; d++) {
    if (g->run_task[d] == SIM_GRAPH_NONE) continue;
    double v = g->sp->speed(g->sp->ctx, d, now);
    if (v == g->run_speed[d]) continue;
    double left = g->run_left[d] - (double)(now - g->run_upd[d]) * g->run_speed[d];
    g->run_left[d] = left > 0 ? left : 0;
    g->run_speed[d] = v;
    g->run_upd[d] = now;
    sim_queue_move(g->q, g->run_ev[d], work_end(now, g->run_left[d], v));
  }
  arm_speed(g, now);
}

/* The net's kinds first: nearly every event of a run is a flow's. */
static void dispatch(sim_graph *g, const sim_queue_item *it) {
  if (it->kind >= EV_NET_BASE) {
    sim_net_handle(g->net, it);
  } else if (it->kind == EV_COMPUTE_DONE) {
    int d = g->hot[it->arg].dev;
    if (g->sp && d >= 0 && d < g->ndev && g->run_task[d] == it->arg)
      g->run_task[d] = SIM_GRAPH_NONE;
    on_done(g, it->arg, it->t_ns);
  } else if (it->kind == EV_JOIN_DONE) {
    on_done(g, it->arg, it->t_ns);
  } else {
    assert(it->kind == EV_SPEED);
    on_speed(g, it->t_ns);
  }
}

int64_t sim_graph_run_at(sim_graph *g, int64_t t0, int64_t t_stop,
                         const sim_graph_speed *sp, bool *stopped) {
  assert(g->attached);
  *stopped = false;
  if (!g->frozen) freeze(g);
  reset(g);
  sim_net_expect_tags(g->net, (uint32_t)g->n);
  sim_net_tag_names(g->net, g->perm); /* the log in task ids */
  sim_queue_item it;
  /* the clock moves on to t0: what the attached net had left for the gap
   * (no flow is running) happens first, at its own time */
  g->sp = NULL;
  while (sim_queue_pop_before(g->q, t0, &it)) dispatch(g, &it);
  g->sp = sp;
  g->done = 0;
  g->end = t0;
  g->flows = 0;
  for (int d = 0; d < g->ndev; d++) g->run_task[d] = SIM_GRAPH_NONE;
  for (size_t k = 0; k < g->nroots; k++) start(g, g->cur[k], t0);
  if (sp && g->ev_speed == SIM_QUEUE_NONE) arm_speed(g, t0);
  int64_t events = 0;
  while (g->done < g->n) {
    if (!sim_queue_pop_before(g->q, t_stop, &it)) { /* empty, or t_stop */
      *stopped = sim_queue_size(g->q) > 0;
      break;
    }
    events++;
    dispatch(g, &it);
  }
  publish(g);
  g->sp = NULL;
  return g->done == g->n || *stopped ? events : -1;
}

void sim_graph_relayout(sim_graph *g) {
  g->by_run = true;
  g->frozen = false;
}

int64_t sim_graph_run(sim_graph *g, const sim_net_topo *topo,
                      const transport_options *o) {
  bool stopped;
  sim_graph_attach(g, topo, o, SIM_NET_WARM);
  int64_t events = sim_graph_run_at(g, 0, INT64_MAX, NULL, &stopped);
  sim_graph_detach(g);
  return events;
}

const sim_task *sim_graph_tasks(const sim_graph *g, uint32_t *ntasks) {
  *ntasks = (uint32_t)g->n;
  return g->t;
}

const sim_edge *sim_graph_edges(const sim_graph *g, size_t *nedges) {
  *nedges = g->ne;
  return g->e;
}

int64_t sim_graph_end(const sim_graph *g) { return g->end; }

double sim_graph_bytes(double ntasks, double nedges) {
  double per_task = 2.0 * sizeof(sim_task) + sizeof(hot) + sizeof(times) +
                    sizeof(uint32_t) /* deps */ +
                    2 * sizeof(uint32_t) /* cur */ +
                    sizeof(uint32_t) /* ord */;
  double per_edge = 2.0 * sizeof(edge) + sizeof(uint32_t) /* succ */;
  return ntasks * per_task + nedges * per_edge;
}
uint64_t sim_graph_flows(const sim_graph *g) { return g->flows; }
