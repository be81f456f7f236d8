/* stats: see stats.h. The busy time of a stream is the union of its task
 * intervals; a link class sums its transfers in task order. */
#include "sim/stats.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/mem.h"

typedef struct span {
  int64_t t0, t1;
} span;
_Static_assert(2 * sizeof(span) == SIM_STATS_BYTES_PER_TASK,
               "stats.h's scratch per task");

/* Sorts v[0..n) by t0: nothing when they are in order already, else
 * insertion sort of runs of 16, then bottom-up merges through tmp (n of
 * them). The union below does not depend on how ties are
 * ordered, so any sort by t0 gives the same result; an inline comparison is
 * several times cheaper than qsort's callback on these 16-byte records. */
static void span_sort(span *v, span *tmp, size_t n) {
  enum { RUN = 16 };
  size_t in_order = 1;
  while (in_order < n && v[in_order - 1].t0 <= v[in_order].t0) in_order++;
  if (in_order >= n) return; /* as a stream's spans often are */
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

/* The sweep's state: the union's length before the current run of
 * overlapping intervals, and that run [s0, s1). */
typedef struct sweep {
  int64_t sum, s0, s1;
} sweep;

/* Takes interval c (its start at or after every earlier one's) into w,
 * without branches: integer sums, exact in any order of equal starts. */
static inline void sweep_add(sweep *w, span c) {
  bool gap = c.t0 > w->s1;
  w->sum += gap ? w->s1 - w->s0 : 0;
  w->s0 = gap ? c.t0 : w->s0;
  w->s1 = gap ? c.t1 : (c.t1 > w->s1 ? c.t1 : w->s1);
}

/* The length of the union of intervals x[0, nx) and y[0, ny), each sorted
 * by start (nx + ny > 0): one sweep over their merge in start order, the
 * rest of the longer one alone once the other is spent. */
static int64_t union_len(const span *x, size_t nx, const span *y, size_t ny) {
  size_t i = 0, j = 0;
  span c = j >= ny || (i < nx && x[i].t0 <= y[j].t0) ? x[i++] : y[j++];
  sweep w = {.sum = 0, .s0 = c.t0, .s1 = c.t1};
  while (i < nx && j < ny) sweep_add(&w, x[i].t0 <= y[j].t0 ? x[i++] : y[j++]);
  while (i < nx) sweep_add(&w, x[i++]);
  while (j < ny) sweep_add(&w, y[j++]);
  return w.sum + w.s1 - w.s0;
}

/* comm[d] = length of the union of d's send and receive busy intervals.
 * The intervals are bucketed by device and direction (counting sort:
 * bucket 2 d holds d's sends, 2 d + 1 its receives, which arrive nearly in
 * order), each bucket is sorted by start, and d's two are swept together. */
static void comm_busy(const sim_task *t, uint32_t n, int ndevices,
                      double *comm) {
  size_t nb = 2 * (size_t)ndevices;
  size_t *off = mem_calloc(nb + 1, sizeof *off);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0) {
      off[2 * (size_t)t[i].dev + 1]++;
      off[2 * (size_t)t[i].dst + 2]++;
    }
  size_t most = 0; /* the largest bucket: the merge buffer's size */
  for (size_t k = 0; k < nb; k++) {
    if (off[k + 1] > most) most = off[k + 1];
    off[k + 1] += off[k];
  }
  span *v = mem_alloc((off[nb] + 1) * sizeof *v);
  span *tmp = mem_alloc((most + 1) * sizeof *tmp);
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && t[i].t_start >= 0) {
      v[off[2 * (size_t)t[i].dev]++] = (span){t[i].t_start, t[i].t_left};
      v[off[2 * (size_t)t[i].dst + 1]++] = (span){t[i].t_start, t[i].t_done};
    }
  for (int d = 0; d < ndevices; d++) { /* off[k] is now bucket k's end */
    size_t a = d ? off[2 * (size_t)d - 1] : 0, m = off[2 * (size_t)d],
           b = off[2 * (size_t)d + 1];
    if (a == b) continue;
    span_sort(v + a, tmp, m - a);
    span_sort(v + m, tmp, b - m);
    comm[d] = (double)union_len(v + a, m - a, v + m, b - m) * 1e-9;
  }
  free(v);
  free(tmp);
  free(off);
}

/* The sum a transfer of role r adds to (role_bytes' b): 0 the pipeline's
 * (activations and their gradients), 1 the data-parallel
 * synchronisation's. */
static int bytes_of(sim_task_role r) {
  switch (r) {
    case SIM_ROLE_ACT:
    case SIM_ROLE_GRAD: return 0;
    case SIM_ROLE_DP: return 1;
    case SIM_ROLE_FWD:
    case SIM_ROLE_BWD:
    case SIM_ROLE_OPT:
    case SIM_ROLE_SYNC:
    case SIM_ROLE_BARRIER:
    case SIM_ROLE_CALL:
    case SIM_ROLE_MATCH:
    case SIM_ROLE_HOST: break; /* not a transfer's */
  }
  assert(!"not a transfer's role");
  return 0;
}

/* The slot of classes m (table slot: class index + 1, 0 = free; cap a power
 * of two) holding (a, b), or the free slot where it belongs. */
static uint32_t *class_slot(uint32_t *slot, size_t cap,
                            const sim_link_class *m, int a, int b) {
  size_t h = hash_pair_slot(a, b, cap);
  while (slot[h] &&
         (m[slot[h] - 1].src_site != a || m[slot[h] - 1].dst_site != b))
    h = (h + 1) & (cap - 1);
  return &slot[h];
}

/* Sums per (sender site, receiver site): an open-addressing table over
 * the classes found so far (the pairs that carry traffic are few next to
 * nsites^2: 2048 one-device sites would be 4M cells). */
typedef struct class_sums {
  size_t cap, k, mcap;
  uint32_t *slot;
  sim_link_class *m;
} class_sums;

static void sums_init(class_sums *c) {
  *c = (class_sums){.cap = 64};
  c->slot = mem_calloc(c->cap, sizeof *c->slot);
}

/* The class (a, b), new (zero) if not seen yet. */
static sim_link_class *sums_at(class_sums *c, int a, int b) {
  uint32_t *sl = class_slot(c->slot, c->cap, c->m, a, b);
  if (*sl) return &c->m[*sl - 1];
  mem_grow((void **)&c->m, &c->mcap, c->k + 1, sizeof *c->m);
  c->m[c->k++] = (sim_link_class){.src_site = a, .dst_site = b};
  *sl = (uint32_t)c->k;
  if (2 * c->k > c->cap) { /* rehash at half full */
    free(c->slot);
    c->cap *= 2;
    c->slot = mem_calloc(c->cap, sizeof *c->slot);
    for (size_t i = 0; i < c->k; i++)
      *class_slot(c->slot, c->cap, c->m, c->m[i].src_site, c->m[i].dst_site) =
          (uint32_t)i + 1;
  }
  return &c->m[c->k - 1];
}

/* The classes, sorted (sim_link_classes_sort), into *out and *n. */
static void sums_take(class_sums *c, sim_link_class **out, int *n) {
  free(c->slot);
  sim_link_classes_sort(c->m, (int)c->k);
  *out = c->m;
  *n = (int)c->k;
}

/* Per (sender site, receiver site) the bytes and flows of the transfers;
 * each class sums its transfers in task order and the result is sorted by
 * a total order, so the output does not depend on the table's layout. */
static void link_classes(const scenario *s, const sim_task *t, uint32_t n,
                         sim_result *out, double role[4]) {
  class_sums c;
  sums_init(&c);
  sim_link_class *x = NULL; /* the class of (la, lb): runs of one pair */
  int la = -1, lb = -1;
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].kind != SIM_TASK_XFER) continue;
    int a = s->device_site[t[i].dev], b = s->device_site[t[i].dst];
    if (a != la || b != lb) x = sums_at(&c, la = a, lb = b);
    x->bytes += t[i].bytes;
    x->flows++;
    int r = bytes_of((sim_task_role)t[i].role); /* role_bytes' order */
    role[r] += t[i].bytes;
    if (a != b) role[2 + r] += t[i].bytes;
  }
  sums_take(&c, &out->classes, &out->nclasses);
}

void sim_stats_memo_free(sim_stats_memo *m) {
  if (!m) return;
  free(m->classes);
  *m = (sim_stats_memo){0};
}

/* link_classes through memo (NULL: none): copied from it once set, else
 * summed and, with a memo, kept in it. */
static void link_classes_memo(const scenario *s, const sim_task *t,
                              uint32_t n, sim_stats_memo *memo,
                              sim_result *out, double role[4]) {
  if (memo && memo->set) {
    size_t bytes = (size_t)memo->nclasses * sizeof *out->classes;
    out->classes = mem_alloc(bytes + 1);
    if (bytes) memcpy(out->classes, memo->classes, bytes);
    out->nclasses = memo->nclasses;
    memcpy(role, memo->role, sizeof memo->role);
    return;
  }
  link_classes(s, t, n, out, role);
  if (!memo) return;
  size_t bytes = (size_t)out->nclasses * sizeof *out->classes;
  memo->classes = mem_alloc(bytes + 1);
  if (bytes) memcpy(memo->classes, out->classes, bytes);
  memo->nclasses = out->nclasses;
  memcpy(memo->role, role, sizeof memo->role);
  memo->set = true;
}

/* DiLoCo's bytes per site pair per inner step (as its pp_bytes, dp_bytes
 * and wan_bytes): the pipeline's of the first inner step (tasks [0,
 * first)) and the exchange's over the outer step's graph (tasks [0, n))
 * divided by H. */
static void outer_site_bytes(const scenario *s, const sim_task *t,
                             uint32_t first, uint32_t n, int H,
                             sim_result *out) {
  class_sums c;
  sums_init(&c);
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].kind != SIM_TASK_XFER) continue;
    bool dp = bytes_of((sim_task_role)t[i].role) == 1;
    if (!dp && i >= first) continue;
    sim_link_class *x = sums_at(&c, s->device_site[t[i].dev],
                                s->device_site[t[i].dst]);
    x->bytes += dp ? t[i].bytes / H : t[i].bytes;
    x->flows++;
  }
  sums_take(&c, &out->site_bytes, &out->nsite_bytes);
}

/* Seconds a compute task ran: its nominal duration at full speed, longer
 * where a device_slow fault slowed its device meanwhile (sim/graph.c). */
static double ran_s(const sim_task *t) {
  assert(t->t_done >= t->t_start && t->t_start >= 0);
  return (double)(t->t_done - t->t_start) * 1e-9;
}

/* The breakdown and link classes of tasks [0, n); comp (zeroed, one per
 * device) gets each device's compute busy seconds and role its role bytes
 * (role_bytes' figures), for the finish below. */
static void statistics(const scenario *s, const sim_task *t, uint32_t n,
                       const sim_train_marks *mk, int stages, int64_t t0,
                       sim_stats_memo *memo, sim_result *out, double *comp,
                       double role[4]) {
  int nd = mk->ndevices;
  double *pipe = mem_calloc((size_t)nd, sizeof *pipe);
  double *comm = mem_calloc((size_t)nd, sizeof *comm);
  for (uint32_t i = 0; i < n; i++)
    if (sim_role_gpu_work((sim_task_role)t[i].role)) {
      comp[t[i].dev] += ran_s(&t[i]);
      if (t[i].role != SIM_ROLE_OPT) pipe[t[i].dev] += ran_s(&t[i]);
    }
  comm_busy(t, n, nd, comm);
  out->stages = stages;
  out->stage = mem_calloc((size_t)stages, sizeof *out->stage);
  int *cnt = mem_calloc((size_t)stages, sizeof *cnt);
  for (int d = 0; d < nd; d++) {
    double bwd_end = (double)(t[mk->last_bwd[d]].t_done - t0) * 1e-9;
    sim_breakdown b = {
        .compute_s = comp[d], .bubble_s = fmax(0, bwd_end - pipe[d]),
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
  role[0] = role[1] = role[2] = role[3] = 0;
  link_classes_memo(s, t, n, memo, out, role);
  free(cnt);
  free(pipe);
  free(comm);
}

/* Per device: compute busy seconds of tasks [lo, hi), GPU work only. */
static void busy(const sim_task *t, uint32_t lo, uint32_t hi, double *out) {
  for (uint32_t i = lo; i < hi; i++)
    if (sim_role_gpu_work((sim_task_role)t[i].role))
      out[t[i].dev] += ran_s(&t[i]);
}

/* Adds to b the bytes sent among tasks [lo, hi): b[0] by the pipeline
 * (activations and their gradients), b[1] by the data-parallel
 * synchronisation, b[2 + k] the same between sites. link_classes sums the
 * same in the same order. */
static void role_bytes(const scenario *s, const sim_task *t, uint32_t lo,
                       uint32_t hi, double b[4]) {
  for (uint32_t i = lo; i < hi; i++)
    if (t[i].kind == SIM_TASK_XFER) {
      int k = bytes_of((sim_task_role)t[i].role);
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
 * end_ns) and the first inner step (its breakdown already in out; b1 its
 * busy seconds per device, k1 its role bytes: the sums over [0, n) go on
 * from theirs, so each adds the same terms in the same order as a fresh
 * pass would). Frees b1. */
/* The inner step the figures count, from the first one's length t1: t1
 * itself over the shortcut (E < H explicit steps, steady: every pure step
 * is as long, and sim_training extrapolates by it); over the full graph
 * (E = H: faults or a moving network), the shortest of its steps, each
 * from the last device's end of the one before, so that H of them fit in
 * the outer step: a first step slowed by a fault, counted H times, made
 * the exposed sync negative (issue 35, 4). Steady, the shortest is t1. */
static int64_t counted_step(const sim_task *t, const sim_outer_marks *m,
                            int64_t t0, int64_t t1, int H) {
  if (m->explicit_steps < H || !m->step_end) return t1;
  int64_t best = t1, prev = t0;
  for (int k = 0; k < m->explicit_steps; k++) {
    int64_t end = prev;
    for (int d = 0; d < m->ndevices; d++) {
      int64_t e = t[m->step_end[(size_t)k * m->ndevices + d]].t_done;
      end = e > end ? e : end;
    }
    if (end - prev < best) best = end - prev;
    prev = end;
  }
  return best;
}

static void finish_outer(const scenario *s, const spec_workload *w,
                         const sim_task *t, uint32_t n,
                         const sim_outer_marks *m, int64_t t0, int64_t end_ns,
                         double *b1, const double k1[4], sim_result *out) {
  int nd = m->first.ndevices, H = w->given.inner_steps, E = m->explicit_steps;
  int64_t t1 = 0; /* the first inner step's length */
  for (int d = 0; d < nd; d++)
    if (t[m->first.end[d]].t_done - t0 > t1) t1 = t[m->first.end[d]].t_done - t0;
  double outer = (double)(end_ns - t0) * 1e-9 + (double)(H - E) * (double)t1 * 1e-9;
  double *all = mem_alloc((size_t)nd * sizeof *all);
  memcpy(all, b1, (size_t)nd * sizeof *all);
  busy(t, m->first_tasks, n, all);
  double mean = 0;
  for (int d = 0; d < nd; d++) all[d] += (H - E) * b1[d], mean += all[d] / nd;
  double k[4] = {k1[0], k1[1], k1[2], k1[3]};
  role_bytes(s, t, m->first_tasks, n, k);
  out->inner_steps = H, out->explicit_steps = E;
  out->inner_step_s = (double)counted_step(t, m, t0, t1, H) * 1e-9;
  out->outer_step_s = outer;
  out->iteration_s = outer / H;
  out->pp_bytes = k1[0], out->dp_bytes = k[1] / H;
  out->wan_bytes = k1[2] + k[3] / H;
  outer_site_bytes(s, t, m->first_tasks, n, H, out);
  double exposed = (outer - H * out->inner_step_s) / H;
  out->mean.dp_sync_s = exposed, out->mean.compute_s = mean / H;
  for (int st = 0; st < out->stages; st++) out->stage[st].dp_sync_s = exposed;
  utilisation(out, all, nd, outer);
  free(b1);
}

/* The figures of one plain iteration from its busy seconds per device b
 * (out takes it) and role bytes k. */
static void finish_plain(double *b, const double k[4], int nd,
                         sim_result *out) {
  out->pp_bytes = k[0], out->dp_bytes = k[1], out->wan_bytes = k[2] + k[3];
  out->nsite_bytes = out->nclasses;
  out->site_bytes = mem_alloc(((size_t)out->nclasses + 1) *
                              sizeof *out->site_bytes);
  if (out->nclasses) /* none: classes may be NULL */
    memcpy(out->site_bytes, out->classes,
           (size_t)out->nclasses * sizeof *out->classes);
  utilisation(out, b, nd, out->iteration_s);
}


void sim_stats_fill(const scenario *s, const spec_workload *w,
                    const sim_task *t, uint32_t n, const sim_train_marks *mk,
                    const sim_outer_marks *om, int64_t t0, int64_t end_ns,
                    sim_result *out) {
  sim_stats_fill_memo(s, w, t, n, mk, om, t0, end_ns, NULL, out);
}

void sim_stats_fill_memo(const scenario *s, const spec_workload *w,
                         const sim_task *t, uint32_t n,
                         const sim_train_marks *mk, const sim_outer_marks *om,
                         int64_t t0, int64_t end_ns, sim_stats_memo *memo,
                         sim_result *out) {
  double *comp = mem_calloc((size_t)mk->ndevices, sizeof *comp), k[4];
  statistics(s, t, om ? om->first_tasks : n, mk, w->stages, t0, memo, out,
             comp, k);
  if (om) finish_outer(s, w, t, n, om, t0, end_ns, comp, k, out);
  else finish_plain(comp, k, mk->ndevices, out);
}
