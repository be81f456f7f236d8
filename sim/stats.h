/* stats: the figures of a finished run — the breakdown per device, stage
 * and mean, the link classes, the bytes by role and the utilisation of
 * sim_result — read from its task records (sim/graph.h).
 * Invariant: statistics read task records after the run: nothing here
 * runs, changes or reads the engine, so they cannot alter a simulated
 * time. */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stdbool.h>
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

/* What a run's figures take from its task graph alone, no time entering
 * them: the link classes (bytes and flows per site pair) and the role
 * bytes. A caller that runs one graph again and again (an engine) keeps
 * one, zeroed at first, between runs: the first run fills it, the next
 * ones copy it instead of summing their transfers again (the same sums,
 * so the same bits). Free with sim_stats_memo_free. */
typedef struct sim_stats_memo {
  bool set;
  int nclasses;
  sim_link_class *classes;
  double role[4];
} sim_stats_memo;

void sim_stats_memo_free(sim_stats_memo *m); /* its array; NULL is fine */

/* Fills out's figures from the n task records t of one run of s's
 * workload w that started at t0 and ended at end_ns (out->iteration_s
 * already set): mk marks the iteration (DiLoCo: its first inner step) and
 * om the outer step (NULL for a plain iteration). out owns the arrays it
 * gets (sim_result_free); t, mk and om are borrowed. */
void sim_stats_fill(const scenario *s, const spec_workload *w,
                    const sim_task *t, uint32_t n, const sim_train_marks *mk,
                    const sim_outer_marks *om, int64_t t0, int64_t end_ns,
                    sim_result *out);

/* sim_stats_fill for a caller that keeps memo (see above) between runs of
 * one task graph; memo NULL: sim_stats_fill. */
void sim_stats_fill_memo(const scenario *s, const spec_workload *w,
                         const sim_task *t, uint32_t n,
                         const sim_train_marks *mk, const sim_outer_marks *om,
                         int64_t t0, int64_t end_ns, sim_stats_memo *memo,
                         sim_result *out);

#endif
