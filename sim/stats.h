/* stats: the figures of a finished run — the breakdown per device, stage
 * and mean, the link classes, the bytes by role and the utilisation of
 * sim_result — read from its task records (sim/graph.h).
 * Invariant: statistics read task records after the run: nothing here
 * runs, changes or reads the engine, so they cannot alter a simulated
 * time. */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stdint.h>

#include "models/spec.h"
#include "sim/graph.h"
#include "sim/outer.h"
#include "sim/result.h"
#include "sim/train.h"
#include "traces/scenario.h"

/* The scratch the statistics take per task record, in bytes: a busy
 * interval of two int64 times and its place in the sort's buffer. */
#define SIM_STATS_BYTES_PER_TASK (2 * 2 * sizeof(int64_t))

/* Fills out's figures from the n task records t of one run of s's
 * workload w that started at t0 and ended at end_ns (out->iteration_s
 * already set): mk marks the iteration (DiLoCo: its first inner step) and
 * om the outer step (NULL for a plain iteration). out owns the arrays it
 * gets (sim_result_free); t, mk and om are borrowed. */
void sim_stats_fill(const scenario *s, const spec_workload *w,
                    const sim_task *t, uint32_t n, const sim_train_marks *mk,
                    const sim_outer_marks *om, int64_t t0, int64_t end_ns,
                    sim_result *out);

#endif
