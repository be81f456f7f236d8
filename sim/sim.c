/* sim: glue from a scenario and an allocation to a simulated iteration —
 * the network as callbacks over scenario_link, the task graph of
 * sim/train.c, its run, and the statistics of the finished task records.
 * Invariant: statistics are read from the task records after the run only;
 * nothing here changes what the engine does. */
#include "sim/sim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/partition.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "sim/graph.h"
#include "sim/outer.h"
#include "sim/timeline.h"
#include "sim/train.h"

sim_options sim_options_default(void) {
  return (sim_options){.transport = transport_options_default(),
                       .compute_scale = 1};
}

/* What a run knows per device (every array ndevices long): its GPU, its
 * NIC index (one NIC per device, or one per site whose GPUs share it) and
 * the NICs' capacities, NCCL sockets, per-flow cap and compute factor. */
typedef struct devices {
  const spec_gpu **gpu;
  int *nic, *sockets;
  double *nic_gbps, *flow_gbps, *factor;
  int nnics;
  int *layers;  /* the balanced layers per stage, when asked (else NULL) */
} devices;

static void devices_free(devices *d) {
  free(d->gpu), free(d->nic), free(d->sockets);
  free(d->nic_gbps), free(d->flow_gbps), free(d->factor), free(d->layers);
}

struct sim_engine {
  const scenario *s;          /* borrowed */
  sim_options opt;
  spec_workload w;
  devices d;
  sim_net_topo topo;
  sim_graph *g;
  sim_train_marks mk;          /* the iteration's, or the first inner step's */
  sim_outer_marks om;          /* DiLoCo's outer step (om.first is mk) */
  const fault_trace *faults;  /* borrowed; NULL: none */
  const int *dmap;            /* borrowed: device -> the trace's; NULL */
  sim_graph_speed speed;
};

static trace_value topo_link(const void *ctx, int a, int b, int64_t t) {
  const sim_engine *x = ctx;
  trace_value v = scenario_link(x->s, a, b, t);
  if (x->faults)
    v.bandwidth_gbps *= fault_link_factor(x->faults, x->s->device_site[a],
                                          x->s->device_site[b], t);
  return v;
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

void sim_result_free(sim_result *r) {
  if (!r) return;
  free(r->stage);
  free(r->classes);
  free(r->utilisation);
  r->stage = NULL;
  r->classes = NULL;
  r->utilisation = NULL;
}

typedef struct span {
  int64_t t0, t1;
} span;

/* Sorts v[0..n) by t0: insertion sort of runs of 16, then bottom-up merges
 * through tmp (n of them). The union below does not depend on how ties are
 * ordered, so any sort by t0 gives the same result; an inline comparison is
 * several times cheaper than qsort's callback on these 16-byte records. */
static void span_sort(span *v, span *tmp, size_t n) {
  enum { RUN = 16 };
  for (size_t lo = 0; lo < n; lo += RUN) {
    size_t hi = lo + RUN < n ? lo + RUN : n;
    for (size_t i = lo + 1; i < hi; i++) {
      span x = v[i];
      size_t j = i;
      for (; j > lo && v[j - 1].t0 > x.t0; j--) v[j] = v[j - 1];
      v[j] = x;
    }
  }
  span *src = v, *dst = tmp;
  for (size_t w = RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      if (mid < hi && src[mid - 1].t0 <= src[mid].t0) { /* already in order */
        memcpy(dst + lo, src + lo, (hi - lo) * sizeof *src);
        continue;
      }
      while (i < mid && j < hi)
        dst[k++] = src[j].t0 < src[i].t0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    span *x = src;
    src = dst;
    dst = x;
  }
  if (src != v) memcpy(v, src, n * sizeof *v);
}

/* comm[d] = length of the union of d's send and receive busy intervals.
 * The intervals are bucketed by device (counting sort), then each bucket is
 * sorted by start and swept. */
static void comm_busy(const sim_task *t, uint32_t n, int ndevices,
                      double *comm) {
  size_t *off = mem_calloc((size_t)ndevices + 1, sizeof *off);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0) {
      off[t[i].dev + 1]++;
      off[t[i].dst + 1]++;
    }
  size_t most = 0; /* the largest bucket: the merge buffer's size */
  for (int d = 0; d < ndevices; d++) {
    if (off[d + 1] > most) most = off[d + 1];
    off[d + 1] += off[d];
  }
  span *v = mem_alloc((off[ndevices] + 1) * sizeof *v);
  span *tmp = mem_alloc((most + 1) * sizeof *tmp);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0) {
      v[off[t[i].dev]++] = (span){t[i].t_start, t[i].t_left};
      v[off[t[i].dst]++] = (span){t[i].t_start, t[i].t_done};
    }
  for (int d = 0; d < ndevices; d++) { /* off[d] is now bucket d's end */
    size_t a = d ? off[d - 1] : 0, b = off[d];
    if (a == b) continue;
    span_sort(v + a, tmp, b - a);
    int64_t s0 = v[a].t0, s1 = v[a].t1, sum = 0;
    for (size_t i = a + 1; i < b; i++) {
      if (v[i].t0 > s1) {
        sum += s1 - s0;
        s0 = v[i].t0;
        s1 = v[i].t1;
      } else if (v[i].t1 > s1) {
        s1 = v[i].t1;
      }
    }
    comm[d] = (double)(sum + s1 - s0) * 1e-9;
  }
  free(v);
  free(tmp);
  free(off);
}

static int class_cmp(const void *x, const void *y) {
  const sim_link_class *a = x, *b = y;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  if (a->src_site != b->src_site) return a->src_site - b->src_site;
  return a->dst_site - b->dst_site;
}

void sim_link_classes_sort(sim_link_class *c, int n) {
  if (n > 0) qsort(c, (size_t)n, sizeof *c, class_cmp);
}

/* The slot of classes m (table slot: class index + 1, 0 = free; cap a power
 * of two) holding (a, b), or the free slot where it belongs. */
static uint32_t *class_slot(uint32_t *slot, size_t cap,
                            const sim_link_class *m, int a, int b) {
  uint64_t key = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) *
                 0x9E3779B97F4A7C15ULL;
  size_t h = (size_t)(key >> 32) & (cap - 1);
  while (slot[h] &&
         (m[slot[h] - 1].src_site != a || m[slot[h] - 1].dst_site != b))
    h = (h + 1) & (cap - 1);
  return &slot[h];
}

/* Per (sender site, receiver site) the bytes and flows of the transfers.
 * The pairs that carry traffic are few next to nsites^2 (2048 one-device
 * sites would be 4M cells), so they are found through a small open-
 * addressing table; each class sums its transfers in task order and the
 * result is sorted by a total order, so the output does not depend on the
 * table's layout. */
static void link_classes(const scenario *s, const sim_task *t, uint32_t n,
                         sim_result *out) {
  size_t cap = 64, k = 0, mcap = 0;
  uint32_t *slot = mem_calloc(cap, sizeof *slot);
  sim_link_class *m = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].kind != SIM_TASK_XFER) continue;
    int a = s->device_site[t[i].dev], b = s->device_site[t[i].dst];
    uint32_t *sl = class_slot(slot, cap, m, a, b);
    if (!*sl) {
      mem_grow((void **)&m, &mcap, k + 1, sizeof *m);
      m[k++] = (sim_link_class){.src_site = a, .dst_site = b};
      *sl = (uint32_t)k;
      if (2 * k > cap) { /* rehash at half full */
        free(slot);
        cap *= 2;
        slot = mem_calloc(cap, sizeof *slot);
        for (size_t c = 0; c < k; c++)
          *class_slot(slot, cap, m, m[c].src_site, m[c].dst_site) =
              (uint32_t)c + 1;
        sl = class_slot(slot, cap, m, a, b);
      }
    }
    sim_link_class *c = &m[*sl - 1];
    c->bytes += t[i].bytes;
    c->flows++;
  }
  free(slot);
  sim_link_classes_sort(m, (int)k);
  out->nclasses = (int)k;
  out->classes = m;
}

static void statistics(const scenario *s, const sim_task *t, uint32_t n,
                       const sim_train_marks *mk, int stages, int64_t t0,
                       sim_result *out) {
  int nd = mk->ndevices;
  double *comp = mem_calloc((size_t)nd, sizeof *comp);
  double *pipe = mem_calloc((size_t)nd, sizeof *pipe);
  double *comm = mem_calloc((size_t)nd, sizeof *comm);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_COMPUTE && t[i].role != SIM_ROLE_CALL &&
        t[i].role != SIM_ROLE_BARRIER) {
      comp[t[i].dev] += (double)t[i].dur_ns * 1e-9;
      if (t[i].role != SIM_ROLE_OPT) pipe[t[i].dev] += (double)t[i].dur_ns * 1e-9;
    }
  comm_busy(t, n, nd, comm);
  out->stages = stages;
  out->stage = mem_calloc((size_t)stages, sizeof *out->stage);
  int *cnt = mem_calloc((size_t)stages, sizeof *cnt);
  for (int d = 0; d < nd; d++) {
    double bwd_end = (double)(t[mk->last_bwd[d]].t_done - t0) * 1e-9;
    sim_breakdown b = {
        .compute_s = comp[d], .bubble_s = bwd_end - pipe[d],
        .comm_s = comm[d],
        .dp_sync_s = (double)(t[mk->sync[d]].t_done - t0) * 1e-9 - bwd_end};
    sim_breakdown *st = &out->stage[mk->stage[d]];
    st->compute_s += b.compute_s;
    st->bubble_s += b.bubble_s;
    st->comm_s += b.comm_s;
    st->dp_sync_s += b.dp_sync_s;
    cnt[mk->stage[d]]++;
    out->mean.compute_s += b.compute_s / nd;
    out->mean.bubble_s += b.bubble_s / nd;
    out->mean.comm_s += b.comm_s / nd;
    out->mean.dp_sync_s += b.dp_sync_s / nd;
  }
  for (int st = 0; st < stages; st++)
    if (cnt[st]) {
      out->stage[st].compute_s /= cnt[st];
      out->stage[st].bubble_s /= cnt[st];
      out->stage[st].comm_s /= cnt[st];
      out->stage[st].dp_sync_s /= cnt[st];
    }
  link_classes(s, t, n, out);
  free(cnt);
  free(comp);
  free(pipe);
  free(comm);
}

/* The task graph of w against the engine's limits: 32-bit task and edge
 * indices, and SIM_MAX_BYTES for the graph and the statistics' spans. */
static int check_graph(const scenario *s, const spec_workload *w, err *e) {
  char where[512];
  scenario_where(s, s->line.batch, "workload.batch", where, sizeof where);
  uint64_t bound = spec_is_diloco(w) ? sim_outer_task_bound(w, false)
                                     : sim_train_task_bound(w);
  double need = sim_graph_bytes((double)bound,
                                (double)bound * SIM_TRAIN_EDGES_PER_TASK) +
                (double)bound * 2 * sizeof(span);
  if (spec_is_diloco(w) &&
      (need > (double)SIM_MAX_BYTES ||
       bound > UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK))
    return err_set(e, ERR_CONFIG,
                   "%s: --overlap-steps %d x --fragments %d: the outer step's "
                   "graph holds F x (tau + 1) = %d inner steps, %llu tasks, "
                   "more than the %.2f GB one run may take: fewer fragments "
                   "or overlapped steps",
                   s->name, w->overlap_steps, w->fragments,
                   sim_outer_steps(w, false), (unsigned long long)bound,
                   (double)SIM_MAX_BYTES / 1e9);
  if (bound > UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK)
    return err_set(e, ERR_CONFIG,
                   "%s: %d sequences over %d x %d devices need up to %llu "
                   "tasks, more than the engine's task graph holds (%u)",
                   where, w->batch, w->replicas, w->stages,
                   (unsigned long long)bound,
                   (unsigned)(UINT32_MAX / SIM_TRAIN_EDGES_PER_TASK));
  if (need > (double)SIM_MAX_BYTES)
    return err_set(e, ERR_MEMORY,
                   "%s: %d sequences over %d x %d devices need up to %llu "
                   "tasks, %.2f GB of task graph, more than the %.2f GB one "
                   "run may take",
                   where, w->batch, w->replicas, w->stages,
                   (unsigned long long)bound, need / 1e9,
                   (double)SIM_MAX_BYTES / 1e9);
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

/* Allocates d's arrays for s's devices and lays out their NICs, sockets
 * and flow caps (the GPUs and compute factors are devices_fill's). */
static void devices_layout(devices *d, const scenario *s) {
  size_t n = (size_t)s->ndevices;
  *d = (devices){.gpu = mem_calloc(n, sizeof *d->gpu),
                 .nic = mem_alloc(n * sizeof *d->nic),
                 .sockets = mem_alloc(n * sizeof *d->sockets),
                 .nic_gbps = mem_alloc(n * sizeof *d->nic_gbps),
                 .flow_gbps = mem_alloc(n * sizeof *d->flow_gbps),
                 .factor = mem_alloc(n * sizeof *d->factor)};
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *site = &s->sites[i];
    for (int k = 0; k < site->ndevices; k++) {
      int dev = site->first_device + k;
      if (!site->nic_shared || k == 0) d->nic_gbps[d->nnics++] = site->nic_gbps;
      d->nic[dev] = d->nnics - 1;
      d->sockets[dev] = site->nccl_sockets;
      d->flow_gbps[dev] = site->flow_gbps;
    }
  }
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

static int save_timeline(const scenario *s, const transport_options *o,
                         const char *path, const sim_task *t, uint32_t n,
                         err *e) {
  transport_facts facts = transport_describe(o, s);
  char meta[256];
  transport_facts_line(&facts, meta, sizeof meta);
  const char **names = mem_alloc((size_t)s->ndevices * sizeof *names);
  for (int d = 0; d < s->ndevices; d++)
    names[d] = s->sites[s->device_site[d]].name;
  int rc = sim_timeline_save(path, t, n, s->ndevices, names, meta, e);
  free(names);
  return rc;
}

/* The last run's graph, emptied, kept per thread for the next run: searches
 * and sweeps call sim_run many times, and a large graph's fresh memory (tens
 * of MB at 1024 devices) costs page faults on every run. */
static _Thread_local sim_graph *spare_graph;

static sim_graph *graph_take(void) {
  sim_graph *g = spare_graph ? spare_graph : sim_graph_new();
  spare_graph = NULL;
  return g;
}

static void graph_give_back(sim_graph *g) {
  if (!g) return;
  sim_graph_clear(g);
  sim_graph_free(spare_graph);
  spare_graph = g;
}

/* Per device: compute busy seconds of tasks [lo, hi), GPU work only. */
static void busy(const sim_task *t, uint32_t lo, uint32_t hi, double *out) {
  for (uint32_t i = lo; i < hi; i++)
    if (t[i].kind == SIM_TASK_COMPUTE && t[i].role != SIM_ROLE_CALL &&
        t[i].role != SIM_ROLE_BARRIER)
      out[t[i].dev] += (double)t[i].dur_ns * 1e-9;
}

/* Bytes sent among tasks [0, n): b[0] by the pipeline (activations and
 * their gradients), b[1] by the data-parallel synchronisation, b[2 + k]
 * the same between sites. */
static void role_bytes(const scenario *s, const sim_task *t, uint32_t n,
                       double b[4]) {
  b[0] = b[1] = b[2] = b[3] = 0;
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER) {
      int k = t[i].role == SIM_ROLE_DP;
      b[k] += t[i].bytes;
      if (s->device_site[t[i].dev] != s->device_site[t[i].dst])
        b[2 + k] += t[i].bytes;
    }
}

/* Utilisation of every device from its busy seconds over wall seconds. */
static void utilisation(sim_result *out, double *busy_s, int n, double wall) {
  double sum = 0;
  out->ndevices = n;
  out->utilisation = busy_s;
  for (int d = 0; d < n; d++) {
    sum += busy_s[d];
    busy_s[d] = wall > 0 ? busy_s[d] / wall : 0;
  }
  out->compute_utilisation = wall > 0 ? sum / (n * wall) : 0;
}

/* The figures of one outer step from its graph (tasks t[0, n), end at
 * end_ns) and the first inner step (its breakdown already in out). */
static void finish_outer(const scenario *s, const spec_workload *w,
                         const sim_task *t, uint32_t n,
                         const sim_outer_marks *m, int64_t t0, int64_t end_ns,
                         sim_result *out) {
  int nd = m->first.ndevices, H = w->inner_steps, E = m->explicit_steps;
  int64_t t1 = 0; /* the first inner step's length */
  for (int d = 0; d < nd; d++)
    if (t[m->first.end[d]].t_done - t0 > t1) t1 = t[m->first.end[d]].t_done - t0;
  double outer = (double)(end_ns - t0) * 1e-9 + (double)(H - E) * (double)t1 * 1e-9;
  double *b1 = mem_calloc((size_t)nd, sizeof *b1);
  double *all = mem_calloc((size_t)nd, sizeof *all);
  busy(t, 0, m->first_tasks, b1);
  busy(t, 0, n, all);
  double mean = 0;
  for (int d = 0; d < nd; d++) all[d] += (H - E) * b1[d], mean += all[d] / nd;
  double k1[4], k[4];
  role_bytes(s, t, m->first_tasks, k1);
  role_bytes(s, t, n, k);
  out->inner_steps = H, out->explicit_steps = E;
  out->inner_step_s = (double)t1 * 1e-9, out->outer_step_s = outer;
  out->iteration_s = outer / H;
  out->pp_bytes = k1[0], out->dp_bytes = k[1] / H;
  out->wan_bytes = k1[2] + k[3] / H;
  double exposed = (outer - H * out->inner_step_s) / H;
  out->mean.dp_sync_s = exposed, out->mean.compute_s = mean / H;
  for (int st = 0; st < out->stages; st++) out->stage[st].dp_sync_s = exposed;
  utilisation(out, all, nd, outer);
  free(b1);
}

/* The figures of one plain iteration (tasks t[0, n)). */
static void finish_plain(const scenario *s, const sim_task *t, uint32_t n,
                         int nd, sim_result *out) {
  double *b = mem_calloc((size_t)nd, sizeof *b), k[4];
  busy(t, 0, n, b);
  role_bytes(s, t, n, k);
  out->pp_bytes = k[0], out->dp_bytes = k[1], out->wan_bytes = k[2] + k[3];
  utilisation(out, b, nd, out->iteration_s);
}

/* Per replica of a: the latency of DT-FM's barrier over its pipeline
 * (DiLoCo's inner steps wait for it); NULL where nothing reads it. */
static int64_t *replica_barriers(const scenario *s, const spec_workload *w,
                                 const alloc *a) {
  if (!spec_is_diloco(w)) return NULL;
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

/* The network of x->s as the net sees it: NICs, sockets, flow caps and the
 * topology callbacks (faults included); the device speeds of the faults. */
static void engine_topo(sim_engine *x) {
  const devices *d = &x->d;
  x->topo = (sim_net_topo){.ndevices = x->s->ndevices, .ctx = x,
                           .link = topo_link, .next_change = topo_next,
                           .nic = d->nic, .nic_gbps = d->nic_gbps,
                           .nnics = d->nnics, .sockets = d->sockets,
                           .flow_gbps = d->flow_gbps};
  x->speed = (sim_graph_speed){x, engine_speed, engine_speed_next};
}

void sim_engine_free(sim_engine *x) {
  if (!x) return;
  if (x->om.first.ndevices) sim_outer_marks_free(&x->om); /* mk is its first */
  else sim_train_marks_free(&x->mk);
  if (x->g) sim_graph_detach(x->g);
  graph_give_back(x->g);
  devices_free(&x->d);
  free(x);
}

int sim_engine_new(const scenario *s, const alloc *a, const sim_options *o,
                   const fault_trace *faults, const int *device_map,
                   sim_net_conn conn, sim_engine **out, err *e) {
  *out = NULL;
  sim_engine *x = mem_calloc(1, sizeof *x);
  x->s = s;
  x->opt = o ? *o : sim_options_default();
  x->faults = faults;
  x->dmap = device_map;
  int rc = spec_workload_resolve(s, &x->w, e);
  if (rc || (rc = check_shape(s, &x->w, a, e)) ||
      (rc = devices_fill(&x->d, s, &x->w, a, e))) {
    sim_engine_free(x);
    return rc;
  }
  engine_topo(x);
  sim_train_inputs in = {.w = &x->w, .a = a, .gpu = x->d.gpu,
                         .factor = x->d.factor,
                         .compute_scale = x->opt.compute_scale,
                         .barrier_ns = runtime_barrier_ns(s, a)};
  int64_t *rb = replica_barriers(s, &x->w, a);
  in.replica_barrier_ns = rb;
  x->g = graph_take();
  build(x->g, &in, x->opt.diloco_full, &x->mk, &x->om);
  free(rb);
  sim_graph_attach(x->g, &x->topo, &x->opt.transport, conn);
  *out = x;
  return ERR_OK;
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
  if (end >= SIM_NET_HORIZON_NS)
    return err_set(e, ERR_RANGE, "%s: the iteration runs past %.3g s (73 "
                   "years), the most simulated time the engine holds: a "
                   "transfer this slow for its bytes, a device this slow "
                   "for its work, or a wait on a link that is down for ever "
                   "has no time to report",
                   s->name, (double)SIM_NET_HORIZON_NS * 1e-9);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(x->g, &n);
  out->iteration_s = (double)(end - t0) * 1e-9;
  out->end_ns = end;
  out->events = (uint64_t)ev;
  out->tasks = n;
  out->flows = sim_graph_flows(x->g);
  out->network = x->opt.transport.model;
  bool outer = spec_is_diloco(&x->w);
  statistics(s, t, outer ? x->om.first_tasks : n, &x->mk, x->w.stages, t0, out);
  if (outer) finish_outer(s, &x->w, t, n, &x->om, t0, end, out);
  else finish_plain(s, t, n, x->mk.ndevices, out);
  out->samples_per_s = out->iteration_s > 0 ? x->w.batch / out->iteration_s : 0;
  return ERR_OK;
}

const sim_task *sim_engine_tasks(const sim_engine *x, uint32_t *n) {
  return sim_graph_tasks(x->g, n);
}

int sim_run(const scenario *s, const alloc *a, const sim_options *o,
            sim_result *out, err *e) {
  memset(out, 0, sizeof *out);
  sim_engine *x;
  bool stopped;
  int rc = sim_engine_new(s, a, o, NULL, NULL, SIM_NET_WARM, &x, e);
  if (rc) return rc;
  rc = sim_engine_run(x, 0, INT64_MAX, out, &stopped, e);
  if (!rc && x->opt.timeline_path) {
    uint32_t n;
    const sim_task *t = sim_engine_tasks(x, &n);
    rc = save_timeline(s, &x->opt.transport, x->opt.timeline_path, t, n, e);
  }
  if (rc) sim_result_free(out);
  sim_engine_free(x);
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
  x->g = graph_take();
  for (int i = 0; i < n; i++) {
    assert(v[i].src != v[i].dst);
    sim_graph_xfer(x->g, v[i].src, v[i].dst, v[i].bytes, SIM_ROLE_DP, i);
  }
  sim_graph_attach(x->g, &x->topo, &x->opt.transport, SIM_NET_FRESH);
  bool stopped;
  int rc = ERR_OK;
  sim_graph_run_at(x->g, t0, INT64_MAX, NULL, &stopped);
  *end_ns = sim_graph_end(x->g);
  if (*end_ns >= SIM_NET_HORIZON_NS)
    rc = err_set(e, ERR_RANGE, "%s: moving training state between devices "
                 "runs past %.3g s (73 years): a link it needs is down for "
                 "ever", s->name, (double)SIM_NET_HORIZON_NS * 1e-9);
  sim_engine_free(x);
  return rc;
}
