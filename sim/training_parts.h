/* training_parts: the state of a training run that sim/training.c (the
 * loop, the policies, the statistics) and sim/training_outer.c (DiLoCo's
 * outer steps on the run's clock) share, and the functions they call
 * across. Private to sim/training*.c: callers see sim/training.h only.
 * Invariant: the one of training.h — booked_ns == now between steps, every
 * nanosecond booked once, to a kept row or to one cause of loss.
 * circle: internal header of the training run's two files: its state holds
 * training.h's types, so it includes training.h and training.c includes it. */
#ifndef SIM_TRAINING_PARTS_H
#define SIM_TRAINING_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "models/spec.h"
#include "sim/recovery.h"
#include "sim/sim.h"
#include "sim/timeline.h"
#include "sim/training.h"

/* The run's state. */
typedef struct run {
  const scenario *s;
  const alloc *first;
  const sim_training_opts *o;
  const char *method; /* replan's: o's, or dtfm-identity */
  err *e;
  spec_workload w;
  double *state;      /* [stages] bytes of training state per stage */
  double storage_bpns;
  sim_plan plan;
  sim_engine *x;      /* the plan's engine; NULL: build it */
  sim_net_conn conn;
  int64_t now, until; /* until: duration mode's end, else INT64_MAX */
  int *holds;         /* [devices] stage held, -1 none */
  sim_iteration *it;
  size_t n, cap, ckpt; /* ckpt: kept rows at the last checkpoint */
  size_t target;      /* rows to keep (iterations mode), else 0 */
  int ckpt_every;     /* rows between checkpoints, 0: none */
  int H;              /* inner steps a row holds: DiLoCo's H, else 1 */
  sim_options full;   /* DiLoCo: o's with every inner step in the graph */
  double pending;     /* lost since the last kept iteration ended */
  double pending_by[SIM_LOST_N]; /* the same by cause */
  double lost[SIM_LOST_N];
  int64_t booked_ns;  /* kept iterations' and lost nanoseconds: == now
                         between steps (the header's invariant, asserted) */
  sim_result agg;
  size_t completed;   /* iterations run to completion */
  sim_result one;     /* the first completed iteration's utilisation, kept
                         exactly for a run of one */
  size_t ccap, scap;  /* link classes' and site bytes' capacities */
  int64_t last_look;  /* replan-on-change: the trace was looked at here */
  sim_training_counts c;
  sim_timeline_stream *tl;
} run;

static inline double sim_training_sec(int64_t ns) { return (double)ns * 1e-9; }

/* Books ns of the clock to cause c (the caller moves r->now). */
void sim_training_lose(run *r, sim_lost c, int64_t ns);

/* The first instant >= t at which a device of the plan is down, or
 * INT64_MAX. */
int64_t sim_training_plan_down(const run *r, int64_t t);

/* Keeps the row of x, run by engine eng, begun at start (== r->now) and
 * ending at end_ns (x->end_ns, or later for DiLoCo's shortcut): its time
 * iteration_s. */
void sim_training_keep(run *r, const sim_engine *eng, int64_t start,
                       int64_t end_ns, double iteration_s,
                       const sim_result *x);

/* A device of the plan was lost at r->now: the policy's step. */
int sim_training_on_loss(run *r);

/* A checkpoint when one is due after the rows kept. */
int sim_training_checkpoint(run *r);

/* DiLoCo: one attempt at the next outer step (training_outer.c). */
int sim_training_outer_attempt(run *r);

#endif
