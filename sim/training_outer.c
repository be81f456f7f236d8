/* training_outer: DiLoCo's and streaming DiLoCo's outer steps on a training
 * run's clock (sim/training.h). A kept row is one outer step of H inner
 * steps and its exchanges (sim/outer.h).
 *
 * The periodic shortcut (sim/outer.h) runs first: the graph of its
 * E = F (tau + 1) steps, the H - E pure steps charged at the first step's
 * time. It is kept only where the run is steady over the whole step — no
 * fault event (any device, any link) and no change of the trace between
 * its start and its end — where outer.c's argument makes it exact (ideal,
 * netem). Anywhere else (a fault or a trace change inside the step, or the
 * shortcut stopped by a loss) the step runs again as the full graph of all
 * H inner steps, from the same instant, so faults take effect at their
 * instant in the step's real order.
 *
 * A device lost inside the full graph: under restart (or when no replica
 * is left whole) the step is thrown away as a pipeline's iteration is
 * (sim_training_on_loss). Under reroute and replan the replicas with a
 * device down drop out of the step's synchronisation, as torchft's DiLoCo
 * lets a replica group leave a quorum: their inner steps completed since
 * the step began (the last sync) are lost work, counted (dropped_steps,
 * dropped_samples), and the others run the step to its end. Choice: the
 * survivors' step is simulated again from its start without the dropped
 * replicas (their inner steps' flows leave the links from the start, not
 * from the loss: exact when replicas share no link, as on distinct sites).
 * The dropped devices hold stale state after the step; they rejoin at a
 * later outer step when the policy takes them back (sim/training.c:
 * regrow), receiving their stage's state from a replica as flows. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "sim/outer.h"
#include "sim/training_parts.h"
#include "traces/trace.h"

/* Nothing moves in [t0, t1): no fault event, no change of the trace. */
static bool steady(const run *r, int64_t t0, int64_t t1) {
  if (trace_next_change_any(r->s->network, t0) < t1) return false;
  return !r->o->faults || fault_next_change(r->o->faults, t0) >= t1;
}

static bool up(const run *r, int d, int64_t t) {
  return !r->o->faults || fault_device_up(r->o->faults, d, t);
}

/* Explicit inner steps replica rep (the plan's) completed by t in x's run:
 * those whose every device's end is done at or before t. */
static int steps_done(const run *r, const sim_engine *x, int rep, int64_t t) {
  const sim_outer_marks *m = sim_engine_outer_marks(x);
  uint32_t nt;
  const sim_task *tk = sim_engine_tasks(x, &nt);
  const alloc *a = r->plan.a;
  int k = 0;
  for (; k < m->explicit_steps; k++)
    for (int s = 0; s < a->stages; s++) {
      uint32_t id = m->step_end[(size_t)k * m->ndevices + alloc_at(a, rep, s)];
      assert(id < nt);
      if (tk[id].t_done < 0 || tk[id].t_done > t) return k;
    }
  return k;
}

/* The replicas of the plan with a device down at t drop out of the step
 * run by x (the full graph, stopped at t): their work is counted lost and
 * the plan goes on with the others. false when none is left whole. */
static bool drop_lost(run *r, const sim_engine *x, int64_t t) {
  const sim_plan *p = &r->plan;
  int R = p->a->replicas, S = p->a->stages, kept = 0;
  bool *keep = mem_alloc((size_t)R * sizeof *keep);
  double per = sim_plan_scenario(p)->workload.batch / (double)R;
  for (int rep = 0; rep < R; rep++) {
    keep[rep] = true;
    for (int s = 0; s < S; s++)
      keep[rep] = keep[rep] && up(r, p->dmap[alloc_at(p->a, rep, s)], t);
    kept += keep[rep];
  }
  if (kept == 0 || kept == R) { /* R: none of the plan's is down (a bug) */
    assert(kept == 0);
    free(keep);
    return false;
  }
  for (int rep = 0; rep < R; rep++)
    if (!keep[rep]) {
      int k = steps_done(r, x, rep, t);
      r->c.dropped_replicas++;
      r->c.dropped_steps += k;
      r->c.dropped_samples += k * per;
    }
  sim_plan q;
  sim_plan_replicas(&q, p, keep);
  free(keep);
  sim_plan_free(&r->plan);
  r->plan = q;
  r->c.faults_seen++;
  for (int d = 0; d < r->s->ndevices; d++)
    if (!up(r, d, t)) r->holds[d] = -1;
  return true;
}

/* Whether policy p goes on without the devices a fault took (their
 * replicas drop out of the outer step) rather than restarting. */
static bool goes_on_without(sim_recovery p) {
  switch (p) {
    case SIM_RECOVERY_RESTART: return false;
    case SIM_RECOVERY_REROUTE:
    case SIM_RECOVERY_REPLAN: return true;
  }
  assert(!"unknown recovery policy");
  return false;
}

/* The engine of the plan's outer step: the shortcut's, kept in r->x from
 * step to step; or a full graph's of its own (the caller frees it). */
static int engine(run *r, bool full, sim_engine **x) {
  const scenario *v = sim_plan_scenario(&r->plan);
  if (full)
    return sim_engine_new(v, r->plan.a, &r->full, r->o->faults, r->plan.dmap,
                          r->conn, x, r->e);
  int rc = r->x ? ERR_OK
                : sim_engine_new(v, r->plan.a, &r->o->sim, r->o->faults,
                                 r->plan.dmap, r->conn, &r->x, r->e);
  *x = r->x;
  return rc;
}

int sim_training_outer_attempt(run *r) {
  int64_t start = r->now;
  bool full = false;
  for (;;) {
    sim_engine *x;
    int rc = engine(r, full, &x);
    if (rc) return rc;
    int64_t stop = sim_training_plan_down(r, start);
    sim_result res;
    bool stopped;
    rc = sim_engine_run(x, start, stop, &res, &stopped, r->e);
    if (rc) {
      if (full) sim_engine_free(x);
      return rc;
    }
    r->agg.events += res.events;
    r->agg.flows += res.flows;
    if (!stopped) {
      /* the shortcut's pure steps come after its graph's end */
      int64_t t1 = llround(res.inner_step_s * 1e9);
      int64_t end = res.end_ns + (int64_t)(res.inner_steps - res.explicit_steps) * t1;
      if (!full && !steady(r, start, end)) {
        sim_result_free(&res);
        full = true;
        continue;
      }
      sim_training_keep(r, x, start, end, res.outer_step_s, &res);
      sim_result_free(&res);
      if (full) sim_engine_free(x);
      return sim_training_checkpoint(r);
    }
    /* stopped at stop: the engine goes (sim_engine_run's contract) */
    if (!full) {
      sim_engine_free(r->x);
      r->x = NULL;
      full = true;
      continue;
    }
    bool goes_on = goes_on_without(r->o->recovery) && drop_lost(r, x, stop);
    sim_engine_free(x);
    if (goes_on) {
      sim_engine_free(r->x); /* the plan changed */
      r->x = NULL;
      continue;
    }
    sim_engine_free(r->x);
    r->x = NULL;
    sim_training_lose(r, SIM_LOST_REDONE, stop - start);
    r->now = stop;
    return sim_training_on_loss(r);
  }
}
