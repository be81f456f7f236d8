/* outer: one outer step of DiLoCo or streaming DiLoCo as one task graph.
 * Invariant: the graph's inner steps are sim/train.c's iterations without
 * data-parallel synchronisation, chained on each device (a step's first op
 * waits for the previous step's end and for any exchange work queued on
 * its compute stream); the exchanges of models/diloco.h run as ring
 * all-reduces (or, with exchange_levels 2, hier-ring's two levels: in
 * each site, then across the sites) on send streams of their own (a separate process group, as
 * torchft and PRIME run them), so an exchange's flows share the links with
 * the inner steps' activations but never queue behind them.
 *
 * The periodic shortcut. DT-FM's runtime ends every inner step with a
 * barrier (here each replica's own: DiLoCo's replicas do not wait for each
 * other between exchanges), and an exchange is due before the next one is
 * launched (diloco_check), so an inner step that neither overlaps an
 * exchange nor follows an update (whose unequal lengths per stage offset
 * the pipeline's start) starts from the state the first one did: its
 * replica idle, no flow of it in flight. On a network that does not
 * change in time and keeps no state between steps (ideal, netem), and
 * with replicas whose inner steps share no link, such a "pure" step takes
 * exactly as long as the first one. The shortcut graph holds the first
 * inner step and, per fragment, its window — the exchange launched, the
 * tau inner steps it overlaps, its update — and the step after each update
 * but the last: E = F (tau + 1) steps. The H - E pure steps it leaves out
 * each take the first step's time (its slowest replica's). test_outer
 * checks the shortcut against the full graph of all H steps, to the
 * nanosecond. Under tcp (windows carried between steps) or a trace that
 * moves, the pure steps are charged at the first step's time: an
 * approximation, stated in the output (explicit_steps). */
#include "sim/outer.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/diloco.h"
#include "models/runtime.h"

int sim_outer_steps(const spec_workload *w, bool full) {
  diloco_plan p = diloco_plan_of(w);
  return full ? p.inner_steps : p.fragments * (p.overlap + 1);
}

/* What a build carries from step to step. */
typedef struct outer {
  sim_graph *g;
  const sim_train_inputs *in;
  diloco_plan plan;
  int R, S, n;
  uint32_t *start;   /* device -> the last task before its next step */
  uint32_t *xs;      /* device -> its exchange send stream */
  uint32_t *pend;    /* [s R + r]: member r of stage s has the result */
} outer;

static int64_t ns(double s, double scale) { return llround(s * scale * 1e9); }

/* What an exchange launched now waits for on replica r's members: under
 * DT-FM's runtime each member's last task (its replica's barrier ended
 * the step on every stage at once); under a runtime without barriers, a
 * join of every stage's last task, so that a stage that ends its inner
 * step early does not start the exchange beside the step's last
 * transfers to the stages before it (the replica reaches the outer step
 * whole, as DiLoCo's quorum does). SIM_GRAPH_NONE: no gate. */
static uint32_t replica_gate(outer *o, int r) {
  if (runtime_of(o->in->w->runtime)->pass_barrier || o->S < 2)
    return SIM_GRAPH_NONE;
  uint32_t j = sim_graph_join(o->g, -1, SIM_ROLE_SYNC);
  for (int s = 0; s < o->S; s++)
    sim_graph_edge(o->g, o->start[alloc_at(o->in->a, r, s)], j, SIM_ON_DONE);
  return j;
}

/* Quantises fragment f on every member of every stage holding some of it
 * and starts its ring all-reduces. */
static void launch(outer *o, int f) {
  const spec_workload *w = o->in->w;
  double scale = o->in->compute_scale > 0 ? o->in->compute_scale : 1;
  int *grp = mem_alloc((size_t)o->R * sizeof *grp);
  uint32_t *ready = mem_alloc((size_t)o->R * sizeof *ready);
  uint32_t *gate = mem_alloc((size_t)o->R * sizeof *gate);
  for (int r = 0; r < o->R; r++) gate[r] = replica_gate(o, r);
  for (int s = 0; s < o->S; s++) {
    double b16 = diloco_fragment_params(w, &o->plan, s, f) * w->model->value_bytes;
    if (b16 <= 0) continue;
    for (int r = 0; r < o->R; r++) {
      int d = grp[r] = alloc_at(o->in->a, r, s);
      if (gate[r] != SIM_GRAPH_NONE) o->start[d] = gate[r]; /* after it */
      int64_t q = ns(compress_grad_s(w, o->in->gpu[d], b16, false), scale);
      if (q > 0) {
        uint32_t t = sim_graph_compute(o->g, d, q, SIM_ROLE_OPT, -1);
        sim_graph_stream(o->g, &o->start[d], t, SIM_ON_DONE);
      }
      ready[r] = o->pend[(size_t)s * o->R + r] = o->start[d];
    }
    if (o->R < 2) continue;
    uint32_t *sync = &o->pend[(size_t)s * o->R];
    for (int r = 0; r < o->R; r++) sync[r] = sim_graph_join(o->g, grp[r], SIM_ROLE_SYNC);
    double bytes = diloco_fragment_bytes(w, &o->plan, s, f);
    if (w->given.exchange_levels > 1)
      sim_train_hier_ring(o->g, o->xs, grp, o->R, o->in->device_site, ready,
                          bytes, TRANSPORT_DILOCO_CHANNELS, sync);
    else
      sim_train_ring(o->g, o->xs, grp, o->R, ready, bytes,
                     TRANSPORT_DILOCO_CHANNELS, sync);
  }
  free(grp);
  free(ready);
  free(gate);
}

/* Fragment f's result lands: each member dequantises it and takes the outer
 * step on its parameters, after its exchange and before its next op. */
static void update(outer *o, int f) {
  const spec_workload *w = o->in->w;
  double scale = o->in->compute_scale > 0 ? o->in->compute_scale : 1;
  for (int s = 0; s < o->S; s++) {
    double params = diloco_fragment_params(w, &o->plan, s, f);
    if (params <= 0) continue;
    for (int r = 0; r < o->R; r++) {
      int d = alloc_at(o->in->a, r, s);
      const spec_gpu *gpu = o->in->gpu[d];
      double t = compress_grad_s(w, gpu, params * w->model->value_bytes, true) +
                 diloco_outer_s(gpu, params);
      uint32_t u = sim_graph_compute(o->g, d, ns(t, scale), SIM_ROLE_OPT, -1);
      sim_graph_edge(o->g, o->pend[(size_t)s * o->R + r], u, SIM_ON_DONE);
      sim_graph_stream(o->g, &o->start[d], u, SIM_ON_DONE);
    }
  }
}

/* The exchange work after explicit step t (1-based): in the full graph,
 * models/diloco's schedule; in the shortcut, fragment f is launched after
 * step 1 + f (tau + 1) and due tau steps later, and one plain step follows
 * each update but the last (tau = 0: launched and due after the same
 * step). */
static void boundary(outer *o, bool full, long long t) {
  int F = o->plan.fragments, tau = o->plan.overlap;
  if (full) {
    int due = diloco_due_after(&o->plan, t), go = diloco_starts_after(&o->plan, t);
    if (tau > 0 && due >= 0) update(o, due);
    if (go >= 0) launch(o, go);
    if (tau == 0 && go >= 0) update(o, go);
    return;
  }
  long long u = t - 1, f = u / (tau + 1), phase = u % (tau + 1);
  if (f >= F) return;
  if (tau > 0 && phase == tau) update(o, (int)f);
  if (phase == 0) launch(o, (int)f);
  if (phase == 0 && tau == 0) update(o, (int)f);
}

void sim_outer_build(sim_graph *g, const sim_train_inputs *in, bool full,
                     sim_outer_marks *m) {
  const spec_workload *w = in->w;
  outer o = {.g = g, .in = in, .plan = diloco_plan_of(w),
             .R = in->a->replicas, .S = in->a->stages};
  o.n = o.R * o.S;
  o.start = mem_alloc((size_t)o.n * sizeof *o.start);
  o.xs = mem_alloc((size_t)o.n * sizeof *o.xs);
  o.pend = mem_alloc((size_t)o.n * sizeof *o.pend);
  for (int d = 0; d < o.n; d++) o.start[d] = o.xs[d] = SIM_GRAPH_NONE;
  int E = sim_outer_steps(w, full);
  *m = (sim_outer_marks){.explicit_steps = E, .ndevices = o.n};
  m->step_end = mem_alloc((size_t)E * (size_t)o.n * sizeof *m->step_end);
  sim_train_inputs step = *in;
  step.local = true;
  step.start = o.start;
  for (int t = 1; t <= E; t++) {
    sim_train_marks mk;
    sim_train_build(g, &step, t == 1 ? &m->first : &mk);
    const sim_train_marks *cur = t == 1 ? &m->first : &mk;
    for (int d = 0; d < o.n; d++)
      o.start[d] = m->step_end[(size_t)(t - 1) * o.n + d] = cur->end[d];
    if (t == 1) sim_graph_tasks(g, &m->first_tasks);
    else sim_train_marks_free(&mk);
    boundary(&o, full, t);
  }
  free(o.start);
  free(o.xs);
  free(o.pend);
}

void sim_outer_marks_free(sim_outer_marks *m) {
  if (!m) return;
  sim_train_marks_free(&m->first);
  free(m->step_end);
  *m = (sim_outer_marks){0};
}

uint64_t sim_outer_task_bound(const spec_workload *w, bool full, int sites) {
  uint64_t R = (uint64_t)w->replicas, S = (uint64_t)w->stages;
  uint64_t F = (uint64_t)w->given.fragments;
  /* per fragment and stage: R quantise, R joins, R updates, the exchange's
   * all-reduce (one ring, or hier-ring's levels) */
  spec_dp_algo ex = w->given.exchange_levels > 1 ? SPEC_HIER_RING : SPEC_RING;
  uint64_t exchanges =
      F * S * (3 * R + sim_train_sync_tasks(w, ex, sites,
                                            TRANSPORT_DILOCO_CHANNELS));
  if (!runtime_of(w->runtime)->pass_barrier) exchanges += F * R; /* gates */
  return (uint64_t)sim_outer_steps(w, full) * sim_train_task_bound(w, sites) +
         exchanges;
}
