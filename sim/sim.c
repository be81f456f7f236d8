/* sim: glue from a scenario and an allocation to a simulated iteration —
 * the network as callbacks over scenario_link, the task graph of
 * sim/train.c and its run; the figures of the finished task records are
 * sim/stats.c's.
 * Invariant: an engine's graph and net live from sim_engine_new to
 * sim_engine_free; a graph kept for reuse (sim_run_reuse) is the caller's,
 * emptied, never the engine's. */
#include "sim/sim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/mem.h"
#include "base/simtime.h"
#include "models/diloco.h"
#include "models/partition.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/graph.h"
#include "sim/outer.h"
#include "sim/stats.h"
#include "sim/timeline.h"
#include "sim/train.h"

sim_options sim_options_default(void) {
  return (sim_options){.transport = transport_options_default(),
                       .compute_scale = 1};
}

/* What a run knows per device (every array ndevices long): its GPU, its
 * NIC index (one NIC per device, or one per site whose GPUs share it) and
 * the NICs' capacities, NCCL sockets, per-flow cap, hosts' TCP window and
 * compute factor. */
typedef struct devices {
  const spec_gpu **gpu;
  int *nic, *sockets;
  double *nic_gbps, *flow_gbps, *window, *factor;
  int nnics;
  int *layers;  /* the balanced layers per stage, when asked (else NULL) */
} devices;

static void devices_free(devices *d) {
  free(d->gpu), free(d->nic), free(d->sockets);
  free(d->nic_gbps), free(d->flow_gbps), free(d->window), free(d->factor);
  free(d->layers);
}

struct sim_engine {
  const scenario *s;          /* borrowed */
  const alloc *a;             /* borrowed */
  sim_options opt;
  spec_workload w;
  devices d;
  sim_net_topo topo;
  sim_graph *g;
  sim_graph **spare;           /* borrowed: where g goes at the end; NULL */
  sim_train_marks mk;          /* the iteration's, or the first inner step's */
  sim_outer_marks om;          /* DiLoCo's outer step (om.first is mk) */
  const fault_trace *faults;  /* borrowed; NULL: none */
  const int *dmap;            /* borrowed: device -> the trace's; NULL */
  sim_graph_speed speed;
  sim_stats_memo memo;        /* the figures of g alone, from its first run */
  int64_t barrier_ns;         /* the graph's barrier latencies: DT-FM's */
  int64_t *rb;                /* each replica's, or NULL (replica_barriers) */
  bool laid_out;              /* g laid out by its first re-run's order */
};

static trace_value topo_link(const void *ctx, int a, int b, int64_t t) {
  const sim_engine *x = ctx;
  if (!x->faults) return scenario_link(x->s, a, b, t); /* a tail call */
  trace_value v = scenario_link(x->s, a, b, t);
  v.bandwidth_gbps *= fault_link_factor(x->faults, x->s->device_site[a],
                                        x->s->device_site[b], t);
  return v;
}

static int topo_path(const void *ctx, int a, int b) {
  const sim_engine *x = ctx;
  return scenario_path(x->s, a, b);
}

static int64_t topo_next(const void *ctx, int64_t t) {
  const sim_engine *x = ctx;
  int64_t n = trace_next_change_any(x->s->network, t);
  if (!x->faults) return n;
  int64_t f = fault_next_change(x->faults, t);
  return f < n ? f : n;
}

static double engine_speed(const void *ctx, int dev, int64_t t) {
  const sim_engine *x = ctx;
  return fault_device_speed(x->faults, x->dmap ? x->dmap[dev] : dev, t);
}

static int64_t engine_speed_next(const void *ctx, int64_t t) {
  const sim_engine *x = ctx;
  return fault_next_change(x->faults, t);
}

double sim_run_bytes(const scenario *s, const spec_workload *w,
                     uint64_t *tasks) {
  int sites = s->nsites < w->replicas ? s->nsites : w->replicas;
  uint64_t bound = spec_is_diloco(w) ? sim_outer_task_bound(w, false, sites)
                                     : sim_train_task_bound(w, sites);
  if (tasks) *tasks = bound;
  return sim_graph_bytes((double)bound,
                         (double)bound * SIM_TRAIN_EDGES_PER_TASK) +
         (double)bound * (SIM_STATS_BYTES_PER_TASK + sim_net_bytes_per_tag()) +
         (double)s->ndevices * SIM_BYTES_PER_DEVICE;
}

/* The algorithm whose graph the estimate is of, for the message. */
static const char *sync_name(const spec_workload *w) {
  if (spec_is_diloco(w) && w->given.exchange_levels > 1)
    return "diloco, hier-ring exchange";
  return spec_dp_algo_name(w->dp_algo);
}

/* The task graph of w against the engine's limits: 32-bit task and edge
 * indices, and the memory this process may hold (mem_limit_bytes) for the
 * estimate of sim_run_bytes — the graph of w's own synchronisation
 * algorithm, the statistics' spans, the per-device state — before
 * anything of the run is allocated. */
static int check_graph(const scenario *s, const spec_workload *w, err *e) {
  char where[512];
  scenario_where(s, s->line[WORKLOAD_batch], "workload.batch", where,
                 sizeof where);
  uint64_t bound;
  double need = sim_run_bytes(s, w, &bound), limit = mem_limit_bytes();
  diloco_plan p = diloco_plan_of(w);
  if (spec_is_diloco(w) &&
      (need > limit || bound > UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK))
    return err_set(e, ERR_CONFIG,
                   "%s: --overlap-steps %d x --fragments %d: the outer step's "
                   "graph (%s) holds F x (tau + 1) = %d inner steps, %llu "
                   "tasks, %.2f GB, more than the %.2f GB this process may "
                   "hold (physical memory, ulimit -v): fewer fragments or "
                   "overlapped steps, or --exchange-levels 2",
                   s->name, p.overlap, p.fragments, sync_name(w),
                   sim_outer_steps(w, false), (unsigned long long)bound,
                   need / 1e9, limit / 1e9);
  if (bound > UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK)
    return err_set(e, ERR_CONFIG,
                   "%s: %d sequences over %d x %d devices under %s need up "
                   "to %llu tasks, more than the engine's task graph holds "
                   "(%u)",
                   where, w->batch, w->replicas, w->stages, sync_name(w),
                   (unsigned long long)bound,
                   (unsigned)(UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK));
  if (need > limit)
    return err_set(e, ERR_MEMORY,
                   "%s: %d sequences over %d x %d devices under %s need up "
                   "to %llu tasks, %.2f GB of task graph and device state, "
                   "more than the %.2f GB this process may hold (physical "
                   "memory, ulimit -v)",
                   where, w->batch, w->replicas, w->stages, sync_name(w),
                   (unsigned long long)bound, need / 1e9, limit / 1e9);
  return ERR_OK;
}

int sim_check_size(const scenario *s, err *e) {
  spec_workload w;
  int rc = spec_workload_resolve(s, &w, e);
  return rc ? rc : check_graph(s, &w, e);
}

/* The allocation's shape and the graph's size against the workload. */
static int check_shape(const scenario *s, const spec_workload *w,
                       const alloc *a, err *e) {
  if (a->replicas != w->replicas || a->stages != w->stages)
    return err_set(e, ERR_CONFIG,
                   "%s: the allocation is %d x %d but the workload has %d "
                   "replicas x %d stages",
                   s->name, a->replicas, a->stages, w->replicas, w->stages);
  return check_graph(s, w, e);
}

/* Lays out the NICs, sockets, flow caps and windows of s's devices in d's
 * arrays. */
static void devices_net(devices *d, const scenario *s) {
  d->nnics = 0;
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *site = &s->sites[i];
    for (int k = 0; k < site->ndevices; k++) {
      int dev = site->first_device + k;
      if (!site->nic_shared || k == 0) d->nic_gbps[d->nnics++] = site->nic_gbps;
      d->nic[dev] = d->nnics - 1;
      d->sockets[dev] = site->nccl_sockets;
      d->flow_gbps[dev] = site->flow_gbps;
      d->window[dev] = site->tcp_window_bytes;
    }
  }
}

/* Allocates d's arrays for s's devices and lays out their NICs, sockets,
 * flow caps and windows (the GPUs and compute factors are devices_fill's). */
static void devices_layout(devices *d, const scenario *s) {
  size_t n = (size_t)s->ndevices;
  *d = (devices){.gpu = mem_calloc(n, sizeof *d->gpu),
                 .nic = mem_alloc(n * sizeof *d->nic),
                 .sockets = mem_alloc(n * sizeof *d->sockets),
                 .nic_gbps = mem_alloc(n * sizeof *d->nic_gbps),
                 .flow_gbps = mem_alloc(n * sizeof *d->flow_gbps),
                 .window = mem_alloc(n * sizeof *d->window),
                 .factor = mem_alloc(n * sizeof *d->factor)};
  devices_net(d, s);
}

/* Fills d for workload w on s under allocation a: the layout, every
 * device's GPU and compute factor, the layers per stage balanced for a when
 * w asks (w->stage_layers then points into d), each stage checked to fit
 * its devices' memory. ERR_OK, or e filled (d is freed by devices_free
 * either way). */
static int devices_fill(devices *d, const scenario *s, spec_workload *w,
                        const alloc *a, err *e) {
  devices_layout(d, s);
  if (w->balanced) d->layers = mem_alloc((size_t)w->stages * sizeof *d->layers);
  int rc = spec_device_gpus(s, d->gpu, e);
  if (rc || (rc = partition_apply(w, s, d->gpu, a, d->layers, e)) ||
      (rc = spec_check_memory(w, s, a->device, d->gpu, e)))
    return rc;
  for (int dev = 0; dev < s->ndevices; dev++)
    d->factor[dev] = spec_site_compute_factor(&s->sites[s->device_site[dev]],
                                              d->gpu[dev]);
  return ERR_OK;
}

/* The what-if's device speeds (sim_options.speedup) on d's factors. */
static void devices_speedup(devices *d, int ndevices, const double *speedup) {
  if (!speedup) return;
  for (int dev = 0; dev < ndevices; dev++) d->factor[dev] /= speedup[dev];
}

static int save_timeline(const scenario *s, const transport_options *o,
                         const sim_rate_log *rates, const char *path,
                         const sim_task *t, uint32_t n, err *e) {
  transport_facts facts = transport_describe(o, s);
  char meta[256];
  transport_facts_line(&facts, meta, sizeof meta);
  const char **names = mem_alloc((size_t)s->ndevices * sizeof *names);
  for (int d = 0; d < s->ndevices; d++)
    names[d] = s->sites[s->device_site[d]].name;
  sim_timeline_net net = {s, o, rates};
  int rc = sim_timeline_save(path, t, n, s->ndevices, names, meta, &net, e);
  free(names);
  return rc;
}

/* The graph an engine builds in: the caller's kept one (*spare, taken
 * out of it) or a new one. */
static sim_graph *graph_take(sim_graph **spare) {
  if (!spare || !*spare) return sim_graph_new();
  sim_graph *g = *spare;
  *spare = NULL;
  return g;
}

/* An engine's graph when the engine goes: emptied into *spare for the
 * caller's next run (whatever was there is freed), or freed. */
static void graph_give_back(sim_graph *g, sim_graph **spare) {
  if (!g) return;
  if (!spare) {
    sim_graph_free(g);
    return;
  }
  sim_graph_clear(g);
  sim_graph_free(*spare);
  *spare = g;
}

/* Per replica of a: the latency of DT-FM's barrier over its pipeline
 * (DiLoCo's inner steps and hivemind's peers wait for it); NULL where
 * nothing reads it. */
static int64_t *replica_barriers(const scenario *s, const spec_workload *w,
                                 const alloc *a) {
  if (!spec_dp_algo_apart(w->dp_algo)) return NULL;
  int64_t *ns = mem_alloc((size_t)a->replicas * sizeof *ns);
  for (int r = 0; r < a->replicas; r++)
    ns[r] = runtime_replica_barrier_ns(s, a, r);
  return ns;
}

/* Builds w's graph under a into g: one iteration, or one outer step. */
static void build(sim_graph *g, const sim_train_inputs *in, bool full,
                  sim_train_marks *mk, sim_outer_marks *om) {
  if (spec_is_diloco(in->w)) {
    sim_outer_build(g, in, full, om);
    *mk = om->first;
  } else {
    sim_train_build(g, in, mk);
  }
}

/* The network of x->s as the net sees it: NICs, sockets, flow caps,
 * windows, the shaping and the topology callbacks (faults included); the
 * device speeds of the faults. */
static void engine_topo(sim_engine *x) {
  const devices *d = &x->d;
  x->topo = (sim_net_topo){.ndevices = x->s->ndevices, .ctx = x,
                           .link = topo_link, .next_change = topo_next,
                           .nic = d->nic, .nic_gbps = d->nic_gbps,
                           .nnics = d->nnics, .sockets = d->sockets,
                           .flow_gbps = d->flow_gbps, .window = d->window,
                           .shaping = x->s->shaping,
                           .npaths = x->s->nsites * x->s->nsites,
                           .path = topo_path};
  x->speed = (sim_graph_speed){x, engine_speed, engine_speed_next};
}

void sim_engine_free(sim_engine *x) {
  if (!x) return;
  if (x->om.first.ndevices) sim_outer_marks_free(&x->om); /* mk is its first */
  else sim_train_marks_free(&x->mk);
  if (x->g) sim_graph_detach(x->g);
  graph_give_back(x->g, x->spare);
  devices_free(&x->d);
  sim_stats_memo_free(&x->memo);
  free(x->rb);
  free(x);
}

/* sim_engine_new with the graph taken from and given back to *spare. */
static int engine_new(const scenario *s, const alloc *a, const sim_options *o,
                      const fault_trace *faults, const int *device_map,
                      sim_net_conn conn, sim_graph **spare, sim_engine **out,
                      err *e) {
  *out = NULL;
  sim_engine *x = mem_calloc(1, sizeof *x);
  x->s = s;
  x->a = a;
  x->spare = spare;
  x->opt = o ? *o : sim_options_default();
  x->faults = faults;
  x->dmap = device_map;
  int rc = spec_workload_resolve(s, &x->w, e);
  if (rc || (rc = check_shape(s, &x->w, a, e)) ||
      (rc = devices_fill(&x->d, s, &x->w, a, e))) {
    sim_engine_free(x);
    return rc;
  }
  devices_speedup(&x->d, s->ndevices, x->opt.speedup);
  engine_topo(x);
  sim_train_inputs in = {.w = &x->w, .a = a, .gpu = x->d.gpu,
                         .factor = x->d.factor,
                         .compute_scale = x->opt.compute_scale,
                         .barrier_ns = runtime_barrier_ns(s, a),
                         .device_site = s->device_site, .s = s};
  if ((rc = sim_train_check_compute(&in, s, e))) {
    sim_engine_free(x);
    return rc;
  }
  x->barrier_ns = in.barrier_ns;
  in.replica_barrier_ns = x->rb = replica_barriers(s, &x->w, a);
  x->g = graph_take(spare);
  build(x->g, &in, x->opt.diloco_full, &x->mk, &x->om);
  sim_graph_attach(x->g, &x->topo, &x->opt.transport, conn);
  if (x->opt.rates) sim_graph_log_rates(x->g, x->opt.rates);
  *out = x;
  return ERR_OK;
}

int sim_engine_new(const scenario *s, const alloc *a, const sim_options *o,
                   const fault_trace *faults, const int *device_map,
                   sim_net_conn conn, sim_engine **out, err *e) {
  return engine_new(s, a, o, faults, device_map, conn, NULL, out, e);
}

int sim_engine_run(sim_engine *x, int64_t t0, int64_t t_stop, sim_result *out,
                   bool *stopped, err *e) {
  memset(out, 0, sizeof *out);
  const scenario *s = x->s;
  int64_t ev = sim_graph_run_at(x->g, t0, t_stop,
                                x->faults ? &x->speed : NULL, stopped);
  if (*stopped) return ERR_OK;
  if (ev < 0)
    return err_set(e, ERR_CONFIG, "%s: the schedule deadlocked (a task could "
                   "never start)", s->name);
  /* The net stops a flow it cannot time at the horizon and records it; such
   * a flow arrives at or after it, so the run's end shows every overflow. */
  int64_t end = sim_graph_end(x->g);
  _Static_assert(SIM_NET_HORIZON_NS > SIMTIME_LIMIT_NS, "the engine's clamp "
                 "lies past the span: a time past it is seen, not clamped");
  if (end > SIMTIME_LIMIT_NS)
    return err_set(e, ERR_RANGE, "%s: the iteration runs past "
                   SIMTIME_LIMIT_TEXT ": a transfer this slow for its bytes, "
                   "a device this slow for its work, or a wait on a link "
                   "that is down for ever has no time to report", s->name);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(x->g, &n);
  out->iteration_s = (double)(end - t0) * 1e-9;
  out->end_ns = end;
  out->events = (uint64_t)ev;
  out->tasks = n;
  out->flows = sim_graph_flows(x->g);
  out->network = x->opt.transport.model;
  bool outer = spec_is_diloco(&x->w);
  sim_stats_fill_memo(s, &x->w, t, n, &x->mk, outer ? &x->om : NULL, t0, end,
                      &x->memo, out);
  if (outer && !(out->outer_step_s <= SIMTIME_LIMIT_S)) {
    double o = out->outer_step_s;
    sim_result_free(out);
    return err_set(e, ERR_RANGE, "%s: one outer step of %d inner steps "
                   "takes %.6g s, past " SIMTIME_LIMIT_TEXT, s->name,
                   x->w.given.inner_steps, o);
  }
  out->samples_per_s = out->iteration_s > 0 ? x->w.batch / out->iteration_s : 0;
  return ERR_OK;
}

bool sim_engine_same_graph(const sim_engine *x, const scenario *s) {
  if (spec_dp_algo_matchmakes(x->w.dp_algo) || x->opt.diloco_full ||
      x->faults || s->ndevices != x->topo.ndevices ||
      runtime_barrier_ns(s, x->a) != x->barrier_ns)
    return false;
  for (int r = 0; x->rb && r < x->a->replicas; r++)
    if (runtime_replica_barrier_ns(s, x->a, r) != x->rb[r]) return false;
  return true;
}

int sim_engine_rerun(sim_engine *x, const scenario *s, sim_result *out,
                     err *e) {
  assert(sim_engine_same_graph(x, s));
  x->s = s;
  devices_net(&x->d, s);
  engine_topo(x);
  sim_graph_attach(x->g, &x->topo, &x->opt.transport, SIM_NET_WARM);
  bool stopped;
  int rc = sim_engine_run(x, 0, INT64_MAX, out, &stopped, e);
  assert(!stopped);
  if (!rc && !x->laid_out) { /* the next re-runs go about as this one */
    sim_graph_relayout(x->g);
    x->laid_out = true;
  }
  return rc;
}

const sim_task *sim_engine_tasks(const sim_engine *x, uint32_t *n) {
  return sim_graph_tasks(x->g, n);
}

const sim_outer_marks *sim_engine_outer_marks(const sim_engine *x) {
  return spec_is_diloco(&x->w) ? &x->om : NULL;
}

int sim_run(const scenario *s, const alloc *a, const sim_options *o,
            sim_result *out, err *e) {
  return sim_run_reuse(s, a, o, NULL, out, e);
}

int sim_run_reuse(const scenario *s, const alloc *a, const sim_options *o,
                  sim_graph **spare, sim_result *out, err *e) {
  memset(out, 0, sizeof *out);
  sim_engine *x;
  bool stopped;
  sim_options oo = o ? *o : sim_options_default(); /* a timeline's link
                                       counters at the exact rates */
  sim_rate_log mine = {0};
  if (oo.timeline_path && !oo.rates) oo.rates = &mine;
  int rc = engine_new(s, a, &oo, NULL, NULL, SIM_NET_WARM, spare, &x, e);
  if (rc) return rc;
  rc = sim_engine_run(x, 0, INT64_MAX, out, &stopped, e);
  if (!rc && x->opt.timeline_path) {
    uint32_t n;
    const sim_task *t = sim_engine_tasks(x, &n);
    rc = save_timeline(s, &x->opt.transport, x->opt.rates,
                       x->opt.timeline_path, t, n, e);
  }
  if (!rc && x->opt.inspect) {
    if (!spare) { /* the reader needs the records and edges alone */
      sim_graph_detach(x->g);
      sim_graph_trim(x->g);
    }
    x->opt.inspect(x->opt.inspect_ctx, x->g);
  }
  if (rc) sim_result_free(out);
  sim_engine_free(x);
  sim_rate_log_free(&mine);
  return rc;
}

int sim_moves(const scenario *s, const sim_options *o,
              const fault_trace *faults, const sim_move *v, int n, int64_t t0,
              int64_t *end_ns, err *e) {
  *end_ns = t0;
  if (n == 0) return ERR_OK;
  sim_engine *x = mem_calloc(1, sizeof *x);
  x->s = s;
  x->opt = o ? *o : sim_options_default();
  x->faults = faults;
  devices_layout(&x->d, s);
  engine_topo(x);
  x->g = graph_take(NULL);
  for (int i = 0; i < n; i++) {
    assert(v[i].src != v[i].dst);
    sim_graph_xfer(x->g, v[i].src, v[i].dst, v[i].bytes, SIM_ROLE_DP, i);
  }
  sim_graph_attach(x->g, &x->topo, &x->opt.transport, SIM_NET_FRESH);
  bool stopped;
  int rc = ERR_OK;
  sim_graph_run_at(x->g, t0, INT64_MAX, NULL, &stopped);
  *end_ns = sim_graph_end(x->g);
  if (*end_ns > SIMTIME_LIMIT_NS)
    rc = err_set(e, ERR_RANGE, "%s: moving training state between devices "
                 "runs past " SIMTIME_LIMIT_TEXT ": a link it needs is down "
                 "for ever", s->name);
  sim_engine_free(x);
  return rc;
}
