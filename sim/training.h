/* training: a training run — many iterations on one clock (DESIGN.md
 * section 10): the trace moves on and TCP connections keep their state
 * from one iteration to the next; faults take effect event by event (links
 * and device speeds inside the engine; a device lost stops the iteration
 * at that instant) and a recovery policy (sim/recovery.h) carries the run
 * on; checkpoints, waiting, reloading and migrating cost simulated time.
 * Invariant: the clock only moves forward, and every nanosecond of the run
 * is either an iteration that was kept or time lost to one cause: the
 * run's total is the sum of the kept iterations and of the time lost, and
 * start(k + 1) = start(k) + time(k) + lost(k + 1), where lost(k) is what
 * was lost between iteration k - 1's end and iteration k's start.
 *
 * DiLoCo and streaming DiLoCo (models/diloco.h) run outer step after outer
 * step, a kept row being one outer step (sim/training_outer.c): a replica
 * lost inside one drops out of its synchronisation, as torchft's DiLoCo
 * lets it, and its inner steps since the last sync are lost work
 * (counted, sim_training_counts); under restart the whole step is redone,
 * as a pipeline's iteration is. */
#ifndef SIM_TRAINING_H
#define SIM_TRAINING_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/simtime.h"
#include "models/alloc.h"
#include "sim/recovery.h"
#include "sim/sim.h"
#include "traces/fault.h"
#include "traces/scenario.h"

/* X(NAME, "name"): the causes of lost time, one table. redone: work
 * thrown away (an iteration cut by a fault, iterations rolled back to a
 * checkpoint); checkpoint: writing one; waiting: for lost devices to come
 * back; reloading: training state read from storage or from a replica;
 * migration: state moved to a new placement. */
#define SIM_LOST_MAP(X) X(REDONE, "redone") X(CHECKPOINT, "checkpoint") \
  X(WAITING, "waiting") X(RELOADING, "reloading") X(MIGRATION, "migration")

typedef enum sim_lost {
#define SIM_LOST_ENUM(name, text) SIM_LOST_##name,
  SIM_LOST_MAP(SIM_LOST_ENUM)
#undef SIM_LOST_ENUM
  SIM_LOST_N
} sim_lost;

const char *sim_lost_name(sim_lost c);

/* The longest run: iterations, and simulated seconds. */
#define SIM_TRAINING_MAX_ITERATIONS 10000000
#define SIM_TRAINING_MAX_S SIMTIME_LIMIT_S

typedef struct sim_training_opts {
  sim_options sim;            /* transport, compute scale, seed; its
                                 timeline_path is ignored (see timeline) */
  int iterations;             /* > 0: run until this many are kept
                                 (DiLoCo: inner steps, a multiple of H,
                                 kept as outer steps) */
  double duration_s;          /* > 0 (iterations 0): start iterations while
                                 the clock is before it */
  const fault_trace *faults;  /* NULL: none (borrowed) */
  sim_recovery recovery;
  int checkpoint_every;       /* K > 0 (DiLoCo: inner steps, a multiple
                                 of H): a checkpoint after every K kept
                                 iterations; 0: none (a rollback returns to
                                 the start) */
  double storage_gbps;        /* per device, checkpoint write and read;
                                 <= 0: the runtime's
                                 (runtime_checkpoint_gbps) */
  const char *method;         /* replan's placement method; NULL:
                                 dtfm-identity, or see replan_from_alloc */
  bool replan_from_alloc;     /* method NULL: replan starts from the run's
                                 allocation (the user's), keeping its
                                 placement (sim_recovery_replan), and
                                 --replan-on-change has nothing to compute */
  int objective;              /* what replan's search minimises: an
                                 objective_kind, dtfm or predicted; < 0:
                                 DT-FM's score */
  bool replan_on_change;      /* migrate when the moving network makes
                                 another placement pay (sim/training.c) */
  const char *timeline;       /* Chrome Trace Event JSON of the whole run,
                                 or NULL */
  int timeline_from, timeline_to; /* the kept iterations it shows: indices
                                 from .. to - 1 (to <= 0: to the end) */
  /* After each attempt at an iteration (NULL: none): done of total, the
   * iterations kept of iterations (DiLoCo: inner steps), or with
   * duration_s the simulated seconds of it. */
  void (*progress)(void *ctx, double done, double total);
  void *progress_ctx;         /* borrowed */
} sim_training_opts;

/* Defaults: one iteration, no faults, restart, no checkpoints, the default
 * storage, dtfm-identity, nothing else. */
sim_training_opts sim_training_opts_default(void);

/* What a run's recovery did, counted where it happened. Every plan is
 * computed (a policy's after a loss, one at a boundary when devices are
 * back, a candidate of --replan-on-change), some adopted; an adopted plan
 * whose devices receive state booked to migration is a migration, and
 * migration_s, the time those moves took, is lost_s[migration] exactly. */
typedef struct sim_training_counts {
  int faults_seen;      /* device losses that stopped a step or dropped a
                           DiLoCo replica */
  int plans;            /* placements computed */
  int adopted;          /* of them, the run went on with (reroute, replan,
                           growth, migration) */
  int migrations;       /* adopted plans moved to at the cost of migration */
  int on_change;        /* of the migrations, by --replan-on-change */
  double migration_s;   /* their moves' time: lost_s[migration] */
  int dropped_replicas; /* DiLoCo: replicas dropped out of an outer step's
                           synchronisation by a loss */
  long long dropped_steps; /* their inner steps since the last sync, lost */
  double dropped_samples;  /* the sequences of those steps */
} sim_training_counts;

/* One kept iteration (DiLoCo: one outer step of H inner steps). */
typedef struct sim_iteration {
  int index;          /* training step, 0-based, in order */
  double start_s;     /* when its kept run began */
  double iteration_s; /* how long it took */
  double lost_s;      /* time lost since the previous one ended (or 0) */
  double lost_by[SIM_LOST_N]; /* lost_s by cause */
  int replicas;       /* the data-parallel degree it ran with */
  double samples;     /* sequences it trained (DiLoCo: H batches of the
                         replicas that synchronised) */
  double samples_per_s; /* samples / iteration_s */
} sim_iteration;

typedef struct sim_training_result {
  sim_iteration *it;  /* kept iterations, in order; n of them */
  size_t n;
  int inner_steps;    /* DiLoCo's H (a row is an outer step of H inner
                         steps); 0: a row is an iteration */
  double total_s;     /* the run: kept iterations and every loss */
  double samples, samples_per_s; /* useful sequences; per second of run */
  double lost_s[SIM_LOST_N], lost_total_s;
  double mean_s, p50_s, p95_s, min_s, max_s; /* over it[].iteration_s; p50
                                 and p95 interpolated between order
                                 statistics */
  sim_result agg;     /* per-device and per-stage means over every
                         iteration run to completion, iteration_s their mean;
                         events and flows: totals of the run; link classes:
                         bytes and flows summed; site bytes: their mean */
  size_t completed;   /* iterations run to completion (kept or later
                         rolled back): what agg's means are over */
  sim_training_counts c; /* what the recovery did */
  /* the counts' old names (c's): faults_seen, replans = c.adopted,
   * migrations = c.migrations */
  int faults_seen, replans, migrations;
} sim_training_result;

/* Runs s under allocation a (validated, D_dp x D_pp) as o says. ERR_OK and
 * *out (free with sim_training_result_free); else e filled: sim_run's
 * errors, ERR_RANGE for bad options, ERR_CONFIG "the job cannot continue"
 * (with the instant) when a loss leaves the policy no way on. */
int sim_training_run(const scenario *s, const alloc *a,
                     const sim_training_opts *o, sim_training_result *out,
                     err *e);

void sim_training_result_free(sim_training_result *r); /* NULL is fine */

#endif
