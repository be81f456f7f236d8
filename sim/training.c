/* training: see training.h. The run is a loop of attempts: at an iteration
 * boundary the plan may change (devices back, a better placement), then the
 * plan's engine runs one iteration until it completes or the first instant
 * a device of the plan is down. A completed iteration is kept (and maybe
 * checkpointed); a stopped one is thrown away and the policy decides what
 * comes next. Every interval between two instants of the clock is booked
 * once: to the kept iteration it belongs to, or to one cause of loss.
 *
 * Choices where DESIGN.md is silent:
 * - After any loss the job's processes are new: TCP connections start fresh
 *   (slow start), the first ones of the run warm (sim_net_conn).
 * - restart waits for every device of its plan (a device down for ever
 *   ends the run), reads the checkpoint back at the storage bandwidth, and
 *   runs the rolled-back iterations again. A loss during a checkpoint's
 *   write or a reload throws that write or read away.
 * - reroute and replan keep checkpoints too when K is given; reroute ends
 *   the run when a stage has no replica left; replan then rolls back to
 *   the last checkpoint (or the start) and every device reads its stage
 *   from storage.
 * - At an iteration boundary, reroute takes back devices that are up again
 *   and replan re-places when more replicas fit; the returning devices
 *   receive their state from replicas that hold it (reloading), replan's
 *   moves are migration. Moves are not interrupted by faults.
 * - The breakdown averages every iteration run to completion, kept or
 *   later rolled back. */
#include "sim/training.h"
#include "models/spec_workload.h"
#include "sim/training_parts.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost.h"
#include "models/predict.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "schedules/schedule.h"
#include "sim/place.h"
#include "sim/timeline.h"
#include "traces/scenario_subset.h"
#include "traces/trace_snapshot.h"

static const char *const lost_names[] = {
#define SIM_LOST_NAME(name, text) text,
    SIM_LOST_MAP(SIM_LOST_NAME)
#undef SIM_LOST_NAME
};

const char *sim_lost_name(sim_lost c) { return lost_names[c]; }

sim_training_opts sim_training_opts_default(void) {
  return (sim_training_opts){.sim = sim_options_default(), .iterations = 1,
                             .recovery = SIM_RECOVERY_RESTART,
                             .objective = -1};
}


#define sec sim_training_sec

void sim_training_lose(run *r, sim_lost c, int64_t ns) {
  assert(ns >= 0); /* the clock only moves forward */
  r->booked_ns += ns;
  r->lost[c] += sec(ns);
  r->pending += sec(ns);
  r->pending_by[c] += sec(ns);
}

static bool dev_up(const run *r, int d, int64_t t) {
  return !r->o->faults || fault_device_up(r->o->faults, d, t);
}

/* The first instant >= t at which device d is down, or INT64_MAX. */
static int64_t next_down(const run *r, int d, int64_t t) {
  const fault_trace *f = r->o->faults;
  if (!f) return INT64_MAX;
  for (; t != FAULT_FOREVER; t = fault_device_next(f, d, t))
    if (!fault_device_up(f, d, t)) return t;
  return INT64_MAX;
}

/* The first instant >= t at which a device of the plan is down. */
int64_t sim_training_plan_down(const run *r, int64_t t) {
  int64_t first = INT64_MAX;
  const sim_plan *p = &r->plan;
  for (int i = 0; i < p->a->replicas * p->a->stages; i++) {
    int64_t x = next_down(r, p->dmap[p->a->device[i]], t);
    if (x < first) first = x;
  }
  return first;
}

/* The longest state write or read of the plan's devices, ns; past the
 * span a simulation covers, just past it (the run is then refused there,
 * not wrapped). */
static int64_t storage_ns(const run *r) {
  double most = 0;
  for (int s = 0; s < r->plan.a->stages; s++)
    if (r->state[s] > most) most = r->state[s];
  double ns = ceil(most / r->storage_bpns);
  return ns > (double)SIMTIME_LIMIT_NS ? SIMTIME_LIMIT_NS + 1 : (int64_t)ns;
}

static void holds_from_plan(run *r) {
  for (int d = 0; d < r->s->ndevices; d++) r->holds[d] = r->plan.stage_of[d];
}

/* ---- keeping iterations ---- */

/* Utilisation (as busy seconds: weighted by the iteration's time) and
 * bytes, summed; per device of the scenario (the plan's view renumbers
 * them: dmap), a device out of the plan idle. */
static void accumulate_use(run *r, sim_result *g, const sim_result *x) {
  int nd = r->s->ndevices;
  if (!g->utilisation) {
    g->ndevices = nd;
    g->utilisation = mem_calloc((size_t)nd, sizeof *g->utilisation);
  }
  if (r->completed == 1) {
    r->one.compute_utilisation = x->compute_utilisation;
    r->one.ndevices = nd;
    r->one.utilisation = mem_calloc((size_t)nd, sizeof *r->one.utilisation);
    for (int d = 0; d < x->ndevices; d++)
      r->one.utilisation[r->plan.dmap[d]] = x->utilisation[d];
  }
  g->pp_bytes += x->pp_bytes, g->dp_bytes += x->dp_bytes;
  g->wan_bytes += x->wan_bytes;
  g->compute_utilisation += x->compute_utilisation * x->iteration_s;
  for (int d = 0; d < x->ndevices; d++)
    g->utilisation[r->plan.dmap[d]] += x->utilisation[d] * x->iteration_s;
}

/* Adds one completed iteration's statistics to the run's sums. */
static void accumulate(run *r, const sim_result *x) {
  sim_result *g = &r->agg;
  r->completed++;
  g->iteration_s += x->iteration_s;
  g->mean.compute_s += x->mean.compute_s;
  g->mean.bubble_s += x->mean.bubble_s;
  g->mean.comm_s += x->mean.comm_s;
  g->mean.dp_sync_s += x->mean.dp_sync_s;
  if (!g->stage) {
    g->stages = x->stages;
    g->stage = mem_calloc((size_t)x->stages, sizeof *g->stage);
  }
  for (int s = 0; s < x->stages && s < g->stages; s++) {
    g->stage[s].compute_s += x->stage[s].compute_s;
    g->stage[s].bubble_s += x->stage[s].bubble_s;
    g->stage[s].comm_s += x->stage[s].comm_s;
    g->stage[s].dp_sync_s += x->stage[s].dp_sync_s;
  }
  g->tasks = x->tasks;
  g->network = x->network;
  g->inner_steps = x->inner_steps; /* DiLoCo's: summed, then means */
  if (x->explicit_steps > g->explicit_steps) g->explicit_steps = x->explicit_steps;
  g->inner_step_s += x->inner_step_s;
  g->outer_step_s += x->outer_step_s;
  accumulate_use(r, g, x);
  sim_link_classes_add(&g->classes, &g->nclasses, &r->ccap, x->classes,
                       x->nclasses);
  sim_link_classes_add(&g->site_bytes, &g->nsite_bytes, &r->scap,
                       x->site_bytes, x->nsite_bytes);
}

static void finish_agg(run *r) {
  sim_result *g = &r->agg;
  double n = r->completed ? (double)r->completed : 1;
  double wall = g->iteration_s; /* the iterations' time, lost time apart */
  g->compute_utilisation = wall > 0 ? g->compute_utilisation / wall : 0;
  for (int d = 0; d < g->ndevices; d++)
    g->utilisation[d] = wall > 0 ? g->utilisation[d] / wall : 0;
  if (r->completed == 1) { /* exactly */
    g->compute_utilisation = r->one.compute_utilisation;
    for (int d = 0; d < g->ndevices; d++) g->utilisation[d] = r->one.utilisation[d];
  }
  g->pp_bytes /= n, g->dp_bytes /= n, g->wan_bytes /= n;
  g->iteration_s /= n;
  g->inner_step_s /= n, g->outer_step_s /= n;
  g->mean.compute_s /= n;
  g->mean.bubble_s /= n;
  g->mean.comm_s /= n;
  g->mean.dp_sync_s /= n;
  for (int s = 0; s < g->stages; s++) {
    g->stage[s].compute_s /= n;
    g->stage[s].bubble_s /= n;
    g->stage[s].comm_s /= n;
    g->stage[s].dp_sync_s /= n;
  }
  sim_link_classes_sort(g->classes, g->nclasses);
  for (int i = 0; i < g->nsite_bytes; i++) g->site_bytes[i].bytes /= n;
  sim_link_classes_sort(g->site_bytes, g->nsite_bytes);
}

#ifndef NDEBUG
/* The header's recurrence start(k + 1) = start(k) + time(k) + lost(k + 1),
 * in seconds: each term is rounded from whole ns (the losses summed), so
 * they agree to far below a nanosecond per second of clock. */
static bool starts_chain(const run *r, int64_t start) {
  double prev = r->n ? r->it[r->n - 1].start_s + r->it[r->n - 1].iteration_s
                     : 0;
  return fabs(prev + r->pending - sec(start)) <= 1e-9 * fmax(1, sec(start));
}
#endif

void sim_training_keep(run *r, const sim_engine *eng, int64_t start,
                       int64_t end_ns, double iteration_s,
                       const sim_result *x) {
  assert(start == r->now && end_ns >= x->end_ns && x->end_ns >= start &&
         starts_chain(r, start));
  r->booked_ns += end_ns - start;
  mem_grow((void **)&r->it, &r->cap, r->n + 1, sizeof *r->it);
  const scenario *v = sim_plan_scenario(&r->plan);
  double samples = (double)r->H * v->workload.batch;
  r->it[r->n] = (sim_iteration){.index = (int)r->n, .start_s = sec(start),
                                .iteration_s = iteration_s,
                                .lost_s = r->pending,
                                .replicas = r->plan.replicas,
                                .samples = samples,
                                .samples_per_s = iteration_s > 0
                                                     ? samples / iteration_s
                                                     : 0};
  memcpy(r->it[r->n].lost_by, r->pending_by, sizeof r->pending_by);
  r->n++;
  r->pending = 0;
  memset(r->pending_by, 0, sizeof r->pending_by);
  r->now = end_ns;
  holds_from_plan(r);
  accumulate(r, x);
  int index = (int)r->n - 1;
  if (r->tl && index >= r->o->timeline_from &&
      (r->o->timeline_to <= 0 || index < r->o->timeline_to)) {
    uint32_t nt;
    const sim_task *t = sim_engine_tasks(eng, &nt);
    sim_timeline_stream_add(r->tl, t, nt, r->plan.dmap);
  }
}

/* Iterations kept since the last checkpoint are thrown away. */
static void rollback(run *r) {
  for (size_t k = r->ckpt; k < r->n; k++) {
    r->lost[SIM_LOST_REDONE] += r->it[k].iteration_s;
    r->pending += r->it[k].iteration_s + r->it[k].lost_s;
    r->pending_by[SIM_LOST_REDONE] += r->it[k].iteration_s;
    for (int c = 0; c < SIM_LOST_N; c++) r->pending_by[c] += r->it[k].lost_by[c];
  }
  r->n = r->ckpt;
}

/* ---- the policies' steps ---- */

static int cannot_continue(run *r, int d, int64_t t) {
  return err_set(r->e, ERR_CONFIG, "%s: the job cannot continue: device %d "
                 "is down for ever from t = %.6f s and %s waits for it "
                 "(reroute or replan would go on without it)", r->s->name, d,
                 sec(t), sim_recovery_name(r->o->recovery));
}

/* Waits until every device of the plan is up. */
static int wait_plan(run *r) {
  for (;;) {
    int64_t t = r->now;
    int worst = -1;
    const sim_plan *p = &r->plan;
    for (int i = 0; i < p->a->replicas * p->a->stages; i++) {
      int d = p->dmap[p->a->device[i]];
      int64_t u = fault_device_up_again(r->o->faults, d, r->now);
      if (u > t) t = u, worst = d;
    }
    if (t == FAULT_FOREVER) return cannot_continue(r, worst, r->now);
    if (t == r->now) return ERR_OK;
    sim_training_lose(r, SIM_LOST_WAITING, t - r->now);
    r->now = t;
  }
}

/* Every device of the plan reads its stage from storage (after waiting for
 * the plan's devices); a loss during the read starts it over. */
static int reload_storage(run *r) {
  for (;;) {
    int rc = r->o->faults ? wait_plan(r) : ERR_OK;
    if (rc) return rc;
    int64_t rl = storage_ns(r), down = sim_training_plan_down(r, r->now);
    if (down >= r->now + rl) {
      sim_training_lose(r, SIM_LOST_RELOADING, rl);
      r->now += rl;
      holds_from_plan(r);
      return ERR_OK;
    }
    sim_training_lose(r, SIM_LOST_RELOADING, down - r->now);
    r->now = down;
  }
}

static sim_recovery_ctx recovery_ctx(const run *r) {
  return (sim_recovery_ctx){.s = r->s, .original = r->first,
                            .faults = r->o->faults, .holds = r->holds,
                            .now = r->now, .method = r->method,
                            .objective = r->o->objective,
                            .sim = &r->o->sim};
}

/* Adopts plan p: its devices receive the state they lack (booked to cause
 * c) or, when a stage has no holder left and the policy allows, the run
 * rolls back and every device reads from storage. */
static int adopt(run *r, sim_plan *p, sim_lost c) {
  sim_recovery_ctx ctx = recovery_ctx(r);
  sim_move *mv;
  int nm, lacking = sim_recovery_moves(&ctx, p, r->state, &mv, &nm);
  sim_plan_free(&r->plan);
  r->plan = *p;
  *p = (sim_plan){0};
  sim_engine_free(r->x);
  r->x = NULL;
  r->conn = SIM_NET_FRESH;
  r->c.adopted++;
  if (lacking >= 0) {
    rollback(r);
    return reload_storage(r);
  }
  int64_t end;
  int rc = sim_moves(r->s, &r->o->sim, r->o->faults, mv, nm, r->now, &end,
                     r->e);
  free(mv);
  if (rc) return rc;
  if (c == SIM_LOST_MIGRATION && nm > 0) { /* state moved: a migration */
    r->c.migrations++;
    r->c.migration_s += sec(end - r->now);
  }
  sim_training_lose(r, c, end - r->now);
  r->now = end;
  holds_from_plan(r);
  return ERR_OK;
}

/* A device of the plan was lost at r->now. */
int sim_training_on_loss(run *r) {
  r->c.faults_seen++;
  sim_engine_free(r->x);
  r->x = NULL;
  r->conn = SIM_NET_FRESH;
  for (int d = 0; d < r->s->ndevices; d++)
    if (!dev_up(r, d, r->now)) r->holds[d] = -1;
  sim_recovery_ctx ctx = recovery_ctx(r);
  sim_plan p = {0};
  int rc;
  switch (r->o->recovery) {
    case SIM_RECOVERY_RESTART:
      rollback(r);
      return reload_storage(r);
    case SIM_RECOVERY_REROUTE:
      r->c.plans++;
      if ((rc = sim_recovery_reroute(&ctx, &p, r->e))) return rc;
      return adopt(r, &p, SIM_LOST_RELOADING);
    case SIM_RECOVERY_REPLAN:
      r->c.plans++;
      if ((rc = sim_recovery_replan(&ctx, &p, r->e))) return rc;
      return adopt(r, &p, SIM_LOST_MIGRATION);
  }
  assert(!"unknown recovery policy");
  return ERR_OK;
}

/* ---- iteration boundaries ---- */

/* Devices that are back: reroute takes them when more pipelines form,
 * replan re-places when more replicas fit. */
static int regrow(run *r) {
  if (!r->o->faults || r->plan.replicas == r->first->replicas) return ERR_OK;
  sim_recovery_ctx ctx = recovery_ctx(r);
  sim_plan p = {0};
  int rc;
  switch (r->o->recovery) {
    case SIM_RECOVERY_RESTART: return ERR_OK; /* its plan is the first */
    case SIM_RECOVERY_REPLAN:
      if (sim_recovery_replan_replicas(&ctx) <= r->plan.replicas) return ERR_OK;
      r->c.plans++;
      rc = sim_recovery_replan(&ctx, &p, r->e);
      return rc ? rc : adopt(r, &p, SIM_LOST_MIGRATION);
    case SIM_RECOVERY_REROUTE:
      if (sim_recovery_reroute(&ctx, &p, NULL) ||
          p.replicas <= r->plan.replicas) {
        sim_plan_free(&p);
        return ERR_OK;
      }
      r->c.plans++; /* a reroute that forms more pipelines */
      return adopt(r, &p, SIM_LOST_RELOADING);
  }
  assert(!"unknown recovery policy");
  return ERR_OK;
}

/* The network moved since the last look: if the method's placement on the
 * network of now is predicted faster than the plan's by more, over the
 * iterations left, than moving the state to it costs, migrate. */
static int replan_on_change(run *r) {
  if (!r->method) return ERR_OK; /* the user's plan, no method to run */
  if (trace_next_change_any(r->s->network, r->last_look) > r->now) return ERR_OK;
  r->last_look = r->now;
  trace *snap = trace_snapshot(r->s->network, r->now, r->e);
  if (!snap) return r->e ? r->e->code : ERR_CONFIG;
  scenario v = *sim_plan_scenario(&r->plan); /* the plan's, frozen at now */
  v.network = snap;
  const spec_gpu **gpu = mem_calloc((size_t)v.ndevices, sizeof *gpu);
  predict_result cur, alt;
  alloc *cand = NULL;
  sim_plan p = {0};
  /* the plan's workload: after a reroute or a replan it has fewer
   * replicas than the run's first (r->w) */
  spec_workload w;
  int rc = spec_workload_resolve(&v, &w, r->e);
  if (!rc) rc = spec_device_gpus(&v, gpu, r->e);
  if (!rc) rc = predict_iteration_with(&w, &v, gpu, r->plan.a,
                                       &r->o->sim.transport, &cur);
  if (!rc) {
    cand = sim_recovery_place(&v, r->method, r->o->objective, &r->o->sim, r->e);
    r->c.plans += cand != NULL;
  }
  if (!rc && !cand) rc = r->e ? r->e->code : ERR_CONFIG;
  if (!rc) rc = predict_iteration_with(&w, &v, gpu, cand,
                                       &r->o->sim.transport, &alt);
  /* batches left: DiLoCo's rows are H of them (its prediction is per
   * batch, outer step / H) */
  double left = r->target > 0
                    ? ((double)r->target - (double)r->n) * r->H
                    : sec(r->until - r->now) / cur.iteration_s;
  double gain = rc ? 0 : (cur.iteration_s - alt.iteration_s) * left;
  if (gain > 0) {
    int n = v.ndevices;
    sim_plan_over(&p, r->s, r->plan.dmap, n, r->plan.replicas, cand);
    cand = NULL;
    sim_recovery_ctx ctx = recovery_ctx(r);
    sim_move *mv;
    int nm;
    int64_t end = r->now;
    if (sim_recovery_moves(&ctx, &p, r->state, &mv, &nm) < 0)
      rc = sim_moves(r->s, &r->o->sim, r->o->faults, mv, nm, r->now, &end,
                     r->e);
    free(mv);
    if (!rc && gain > sec(end - r->now)) {
      r->c.on_change++;
      rc = adopt(r, &p, SIM_LOST_MIGRATION);
    }
  }
  sim_plan_free(&p);
  alloc_free(cand);
  free(gpu);
  trace_free(snap);
  return rc;
}

/* The run's clock passed the span a simulation covers (a slow checkpoint
 * store, a long wait): its times are not results. */
static int past_the_limit(run *r) {
  return err_set(r->e, ERR_RANGE, "%s: the run reaches t = %.6g s after %zu "
                 "kept iterations, past " SIMTIME_LIMIT_TEXT, r->s->name,
                 sec(r->now), r->n);
}

static bool finished(const run *r) {
  if (r->target > 0) return r->n >= r->target;
  return r->now >= r->until;
}

/* A checkpoint after every K kept iterations; a loss during its write
 * throws it away (and is a loss like any other). */
int sim_training_checkpoint(run *r) {
  int K = r->ckpt_every;
  if (K <= 0 || r->n % (size_t)K != 0) return ERR_OK;
  int64_t ck = storage_ns(r), down = sim_training_plan_down(r, r->now);
  if (down < r->now + ck) {
    sim_training_lose(r, SIM_LOST_CHECKPOINT, down - r->now);
    r->now = down;
    return sim_training_on_loss(r);
  }
  sim_training_lose(r, SIM_LOST_CHECKPOINT, ck);
  r->now += ck;
  r->ckpt = r->n;
  return ERR_OK;
}

/* One attempt at the next iteration. */
static int attempt(run *r) {
  if (spec_is_diloco(&r->w)) return sim_training_outer_attempt(r);
  int rc;
  if (!r->x &&
      (rc = sim_engine_new(sim_plan_scenario(&r->plan), r->plan.a, &r->o->sim,
                           r->o->faults, r->plan.dmap, r->conn, &r->x, r->e)))
    return rc;
  int64_t start = r->now, stop = sim_training_plan_down(r, start);
  sim_result x;
  bool stopped;
  if ((rc = sim_engine_run(r->x, start, stop, &x, &stopped, r->e))) return rc;
  r->agg.events += x.events;
  r->agg.flows += x.flows;
  if (!stopped) {
    sim_training_keep(r, r->x, start, x.end_ns, x.iteration_s, &x);
    sim_result_free(&x);
    return sim_training_checkpoint(r);
  }
  sim_training_lose(r, SIM_LOST_REDONE, stop - start);
  r->now = stop;
  return sim_training_on_loss(r);
}

/* ---- the run ---- */

static int check_opts(const scenario *s, const sim_training_opts *o, err *e) {
  if (o->iterations < 0 || o->iterations > SIM_TRAINING_MAX_ITERATIONS ||
      (o->iterations == 0 &&
       !(o->duration_s > 0 && o->duration_s <= SIM_TRAINING_MAX_S)))
    return err_set(e, ERR_RANGE, "%s: a run is 1 to %d iterations or a "
                   "duration in (0, %g] s", s->name,
                   SIM_TRAINING_MAX_ITERATIONS, SIM_TRAINING_MAX_S);
  if (o->checkpoint_every < 0)
    return err_set(e, ERR_RANGE, "%s: checkpoint_every %d is not >= 0",
                   s->name, o->checkpoint_every);
  if (!(o->storage_gbps <= 0 || isfinite(o->storage_gbps)))
    return err_set(e, ERR_RANGE, "%s: the storage bandwidth is not finite",
                   s->name);
  return ERR_OK;
}

/* DiLoCo's rows are outer steps: --iterations and --checkpoint-every
 * count inner steps and must be whole outer steps. */
static int check_rows(const scenario *s, spec_dp_algo dp, int H,
                      const sim_training_opts *o, err *e) {
  const char *what = o->iterations % H ? "--iterations"
                     : o->checkpoint_every % H ? "--checkpoint-every" : NULL;
  if (!what) return ERR_OK;
  return err_set(e, ERR_CONFIG, "%s: %s %d is not a multiple of "
                 "--inner-steps %d: a run of --dp-algo %s counts inner steps "
                 "and keeps, checkpoints and recovers whole outer steps",
                 s->name, what, strcmp(what, "--iterations") == 0
                 ? o->iterations : o->checkpoint_every, H,
                 spec_dp_algo_name(dp));
}

static int run_init(run *r, const scenario *s, const alloc *a,
                    const sim_training_opts *o, err *e) {
  int rc = check_opts(s, o, e);
  if (rc || (rc = spec_workload_resolve(s, &r->w, e))) return rc;
  r->H = spec_is_diloco(&r->w) ? r->w.given.inner_steps : 1;
  if ((rc = check_rows(s, r->w.dp_algo, r->H, o, e))) return rc;
  r->target = o->iterations > 0 ? (size_t)(o->iterations / r->H) : 0;
  r->ckpt_every = o->checkpoint_every / r->H;
  r->full = o->sim;
  r->full.diloco_full = true;
  r->s = s, r->first = a, r->o = o, r->e = e;
  r->method = o->method ? o->method
              : o->replan_from_alloc ? NULL
                                     : schedule_method_name(SCHEDULE_DTFM_IDENTITY);
  r->conn = SIM_NET_WARM;
  r->until = o->iterations > 0 ? INT64_MAX : llround(o->duration_s * 1e9);
  r->state = mem_alloc((size_t)a->stages * sizeof *r->state);
  for (int st = 0; st < a->stages; st++)
    r->state[st] = runtime_stage_state_bytes(&r->w, st);
  double gbps = o->storage_gbps > 0 ? o->storage_gbps
                                    : runtime_checkpoint_gbps(r->w.runtime);
  r->storage_bpns = gbps / 8.0;
  sim_plan_full(&r->plan, s, a);
  r->holds = mem_alloc((size_t)s->ndevices * sizeof *r->holds);
  holds_from_plan(r);
  if (o->timeline) {
    transport_facts facts = transport_describe(&o->sim.transport, s);
    char meta[256];
    transport_facts_line(&facts, meta, sizeof meta);
    r->tl = sim_timeline_stream_open(o->timeline, s, meta, e);
    if (!r->tl) return e ? e->code : ERR_IO;
    sim_timeline_stream_net(r->tl, &o->sim.transport);
    if (o->faults) sim_timeline_stream_faults(r->tl, o->faults, s);
  }
  return ERR_OK;
}

static int percentile_cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double percentile(const double *v, size_t n, double q) {
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
  return v[lo] + (v[hi] - v[lo]) * (pos - (double)lo);
}

#ifndef NDEBUG
/* The header's identity in the result: the run's total is the sum of the
 * kept iterations and of the time lost, up to the rounding of the sums
 * (an ulp of the total per term at most). */
static bool booked(const sim_training_result *out) {
  double sum = out->lost_total_s;
  for (size_t k = 0; k < out->n; k++) sum += out->it[k].iteration_s;
  return fabs(sum - out->total_s) <=
         1e-12 * (double)(out->n + SIM_LOST_N + 1) * fmax(1, out->total_s);
}
#endif

static void summarise(run *r, sim_training_result *out) {
  assert(r->booked_ns == r->now); /* every nanosecond booked once */
  finish_agg(r);
  *out = (sim_training_result){.it = r->it, .n = r->n, .agg = r->agg,
                               .completed = r->completed,
                               .inner_steps = spec_is_diloco(&r->w) ? r->H : 0,
                               .c = r->c, .faults_seen = r->c.faults_seen,
                               .replans = r->c.adopted,
                               .migrations = r->c.migrations};
  r->it = NULL;
  r->agg = (sim_result){0};
  memcpy(out->lost_s, r->lost, sizeof r->lost);
  for (int c = 0; c < SIM_LOST_N; c++) out->lost_total_s += r->lost[c];
  out->total_s = sec(r->now);
  double *v = mem_alloc((out->n + 1) * sizeof *v);
  for (size_t k = 0; k < out->n; k++) {
    v[k] = out->it[k].iteration_s;
    out->samples += out->it[k].samples;
    out->mean_s += v[k] / (double)out->n;
  }
  if (out->n) {
    qsort(v, out->n, sizeof *v, percentile_cmp);
    out->min_s = v[0];
    out->max_s = v[out->n - 1];
    out->p50_s = percentile(v, out->n, 0.5);
    out->p95_s = percentile(v, out->n, 0.95);
  }
  out->samples_per_s = out->total_s > 0 ? out->samples / out->total_s : 0;
  out->agg.samples_per_s = out->samples_per_s; /* goodput over the run */
  free(v);
  assert(booked(out));
}

static void run_free(run *r) {
  sim_engine_free(r->x);
  sim_plan_free(&r->plan);
  free(r->state);
  free(r->holds);
  free(r->it);
  sim_result_free(&r->agg);
  sim_result_free(&r->one);
}

/* Where the run stands, to the caller's hook, in its own units. */
static void report(const run *r) {
  const sim_training_opts *o = r->o;
  if (r->target > 0)
    o->progress(o->progress_ctx, (double)r->n * r->H, o->iterations);
  else
    o->progress(o->progress_ctx, fmin(sec(r->now), o->duration_s),
                o->duration_s);
}

int sim_training_run(const scenario *s, const alloc *a,
                     const sim_training_opts *o, sim_training_result *out,
                     err *e) {
  memset(out, 0, sizeof *out);
  run r = {0};
  int rc = run_init(&r, s, a, o, e);
  r.last_look = 0;
  while (!rc && !finished(&r)) {
    if (r.n > 0 && (rc = regrow(&r))) break;
    if (r.n > 0 && o->replan_on_change && (rc = replan_on_change(&r))) break;
    rc = attempt(&r);
    assert(rc || r.booked_ns == r.now);
    if (!rc && o->progress) report(&r);
    if (!rc && r.now > SIMTIME_LIMIT_NS) rc = past_the_limit(&r);
    if (!rc && !finished(&r) && r.n >= SIM_TRAINING_MAX_ITERATIONS)
      rc = err_set(e, ERR_RANGE, "%s: the run keeps %d iterations before "
                   "its %g s end, the most a run holds (it keeps each "
                   "one's record): give a shorter --duration-s", s->name,
                   SIM_TRAINING_MAX_ITERATIONS, o->duration_s);
  }
  if (!rc && r.tl && (size_t)o->timeline_from >= r.n)
    rc = err_set(e, ERR_RANGE, "%s: the timeline's iterations start at %d, "
                 "and the run kept %zu (0 to %lld): it would hold none",
                 o->timeline, o->timeline_from, r.n, (long long)r.n - 1);
  if (r.tl) {
    int t = sim_timeline_stream_close(r.tl, rc ? NULL : e);
    if (!rc) rc = t;
  }
  if (!rc) summarise(&r, out);
  run_free(&r);
  return rc;
}

void sim_training_result_free(sim_training_result *r) {
  if (!r) return;
  free(r->it);
  sim_result_free(&r->agg);
  r->it = NULL;
}
