/* outer: one outer step of DiLoCo or streaming DiLoCo (models/diloco.h) as
 * one task graph (sim/graph.h): the replicas' inner steps without data-
 * parallel traffic, chained on every device, and each stage group's
 * pseudo-gradient exchanges as ring all-reduces at --grad-bits, quantised
 * before and dequantised after on the GPUs, then DiLoCo's outer step
 * (models/diloco.h: diloco_outer_s) on the exchanged parameters. Streaming
 * DiLoCo launches fragment f's exchange after the inner step torchft
 * launches it and lets it overlap the tau inner steps that follow; the
 * fragment's update lands before the next step, where torchft waits for
 * it.
 * Invariant: the full graph holds all H inner steps; the shortcut holds
 * E = F (tau + 1) of them (sim_outer_steps): the first, and per fragment
 * the tau steps its exchange overlaps and the step after its update, so
 * an outer step of any H is as large as F (tau + 1) steps, and its time
 * is the graph's end plus H - E times the first step's (outer.c says when
 * that is exact). The exchanges follow in fragment order, each due before the
 * next is launched. */
#ifndef SIM_OUTER_H
#define SIM_OUTER_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/train.h"

/* Where the statistics of an outer step come from. */
typedef struct sim_outer_marks {
  sim_train_marks first; /* the first inner step's marks */
  uint32_t first_tasks;  /* tasks [0, first_tasks) are the first step */
  int explicit_steps;    /* inner steps in the graph */
  int ndevices;          /* the allocation's devices */
  uint32_t *step_end;    /* [t * ndevices + d]: what ends device d's
                            explicit inner step t + 1 (its replica's
                            barrier, or its optimizer step) */
} sim_outer_marks;

/* Inner steps the graph of w holds: H when full, else F (tau + 1). */
int sim_outer_steps(const spec_workload *w, bool full);

/* Adds one outer step of in->w (a DiLoCo algorithm, plan checked) to g:
 * all H inner steps when full (for tests), else the shortcut. in->local
 * and in->start are the builder's own. Free m with sim_outer_marks_free. */
void sim_outer_build(sim_graph *g, const sim_train_inputs *in, bool full,
                     sim_outer_marks *m);

void sim_outer_marks_free(sim_outer_marks *m);

/* An upper bound on the tasks sim_outer_build adds (its steps' and its
 * exchanges', replicas over at most `sites` sites), for the engine's size
 * checks. */
uint64_t sim_outer_task_bound(const spec_workload *w, bool full, int sites);

#endif
