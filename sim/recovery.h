/* recovery: what a training run does when devices are lost or come back
 * (DESIGN.md section 10) — the plan it runs (which devices, the stage each
 * one holds, the allocation) and how a policy makes the next one: restart
 * keeps the plan and waits; reroute re-forms pipelines from each stage's
 * surviving replicas (SWARM-like: the data-parallel degree shrinks, every
 * device keeps its stage); replan places the work again, by the run's
 * placement method, on the devices left. A device taking a stage it does
 * not hold receives that stage's training state as flows (moves).
 * Invariant: a plan uses each device at most once; its view (a scenario
 * subset, or the scenario itself), its allocation (in the view's indices)
 * and dmap (view device -> scenario device) agree, and stage_of[d] is the
 * stage scenario device d runs in the plan, -1 when it runs none. */
#ifndef SIM_RECOVERY_H
#define SIM_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/names.h"
#include "models/alloc.h"
#include "sim/sim.h"
#include "traces/fault.h"
#include "traces/scenario.h"

/* X(NAME, "name"): the one table of policy names. */
#define SIM_RECOVERY_MAP(X) X(RESTART, "restart") X(REROUTE, "reroute") \
  X(REPLAN, "replan")

typedef enum sim_recovery {
#define SIM_RECOVERY_ENUM(name, text) SIM_RECOVERY_##name,
  SIM_RECOVERY_MAP(SIM_RECOVERY_ENUM)
#undef SIM_RECOVERY_ENUM
} sim_recovery;
enum { SIM_RECOVERY_N = 0 SIM_RECOVERY_MAP(NAMES_COUNT_ROW) };

/* The policies' names in enumeration order, NULL-terminated. */
extern const char *const sim_recovery_names[SIM_RECOVERY_N + 1];

const char *sim_recovery_name(sim_recovery r);
int sim_recovery_parse(const char *name);  /* -1 for an unknown name */

typedef struct sim_plan {
  const scenario *parent;  /* borrowed */
  scenario *view;          /* owned subset; NULL: the parent itself */
  alloc *a;                /* owned; in the view's device indices */
  int *dmap;               /* owned: view device -> parent device */
  int *stage_of;           /* owned: [parent devices] stage or -1 */
  int replicas;
} sim_plan;

/* The scenario the plan runs on (its view, or the parent). */
const scenario *sim_plan_scenario(const sim_plan *p);

/* The plan of all of s's devices under a (copied). */
void sim_plan_full(sim_plan *p, const scenario *s, const alloc *a);

/* The plan over the parent devices keep[0 .. n) (increasing) with the
 * allocation a given in the view's indices (taken over, not copied). */
void sim_plan_over(sim_plan *p, const scenario *s, const int *keep, int n,
                   int replicas, alloc *a);

/* The plan of p's replicas r with keep[r] (at least one), in p's order,
 * each device at its stage: DiLoCo's replicas that go on when others drop
 * out of an outer step. */
void sim_plan_replicas(sim_plan *out, const sim_plan *p, const bool *keep);

void sim_plan_free(sim_plan *p);  /* empties p; a zeroed p is fine */

/* What a decision reads (all borrowed). */
typedef struct sim_recovery_ctx {
  const scenario *s;       /* the run's scenario */
  const alloc *original;   /* the run's first allocation: each device's
                              stage column for reroute */
  const fault_trace *faults;
  const int *holds;        /* [devices]: the stage whose current state a
                              device holds, -1 for none */
  int64_t now;
  const char *method;      /* replan's placement method; NULL: the
                              original allocation's placement kept
                              (sim_recovery_replan) */
  int objective;           /* what the method's search minimises: an
                              objective_kind (schedules/objective.h);
                              < 0: DT-FM's score */
  const sim_options *sim;  /* its simulations (method sim) */
} sim_recovery_ctx;

/* Runs method on s (schedules/, through sim/place.h) with its search
 * minimising kind (an objective_kind: dtfm or predicted; < 0: DT-FM's
 * score). The allocation (owned by the caller), or NULL with e filled. */
alloc *sim_recovery_place(const scenario *s, const char *method, int kind,
                          const sim_options *so, err *e);

/* Reroute: per stage, the devices of its original column that are up at
 * now — those of replicas whose every device is up first, then the
 * others holding the stage's state, then the rest, each in replica order
 * (so whole replicas stay pipelines as they were); as
 * many pipelines as the poorest stage has devices, pipeline r made of each
 * stage's r-th. ERR_OK and *out; ERR_CONFIG with "the job cannot continue:
 * stage S has no replica left at t = T s" when some stage has no device up
 * that holds its state. */
int sim_recovery_reroute(const sim_recovery_ctx *c, sim_plan *out, err *e);

/* Replan: every device up at now, floor(up / stages) replicas; the devices
 * beyond them dropped from what a site has beyond whole pipelines of its
 * own, the smallest such fragment first, the highest index first (so
 * pipelines inside a site stay possible); the method places the work on
 * the rest. Without a method (c->method NULL: the user's allocation is the
 * plan) it starts from the original allocation instead: of its devices
 * up, floor(up / stages) replicas — its whole replicas as they were, then
 * pipelines of the others' devices each at its own stage, then the
 * devices left filling the stages still missing (their state moves).
 * ERR_OK and *out; ERR_CONFIG ("cannot continue") when fewer devices
 * than stages are up; the method's errors. */
int sim_recovery_replan(const sim_recovery_ctx *c, sim_plan *out, err *e);

/* The replicas sim_recovery_replan would form at c->now. */
int sim_recovery_replan_replicas(const sim_recovery_ctx *c);

/* The moves that give every device of p the state of its stage, from the
 * devices up at now that hold it (taken in turn, device order), of
 * state_bytes[stage] bytes each: *v (owned, may be NULL) and *n. Returns
 * -1, or the first stage no device up holds (no moves then). */
int sim_recovery_moves(const sim_recovery_ctx *c, const sim_plan *p,
                       const double *state_bytes, sim_move **v, int *n);

#endif
