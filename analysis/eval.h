/* eval: one point of a study evaluated end to end — the scenario with the
 * point's knobs, the placement its method chooses, the DT-FM score, the
 * closed-form prediction and the simulated iteration. It is the evaluator
 * of `geodes sweep` (a sweep_eval_fn) and the shared steps of validate and
 * run. Pure: the result depends on the point alone (seeded searches). */
#ifndef ANALYSIS_EVAL_H
#define ANALYSIS_EVAL_H

#include <stddef.h>

#include "analysis/db.h"
#include "analysis/sweep.h"
#include "models/alloc.h"
#include "models/cost.h"
#include "sim/sim.h"
#include "traces/scenario.h"

/* The scenario of p: loaded, with p's workload knobs, seed and cost sizes
 * applied and its links scaled by p's scales (trace and overrides; NICs are
 * not scaled). NULL and e filled on a bad name or knob, or when the content
 * differs from p->scenario_hash (when set). Caller owns it. */
scenario *eval_scenario(const sweep_point *p, err *e);

/* eval_scenario with the allocation file at path joined (models/
 * alloc_file.h): its workload, shape and split applied where p gives
 * none (a knob of p that differs is an error naming both), *a its
 * allocation, on *view (free with scenario_subset_free before the
 * scenario) when the file names some of the devices, else on the
 * scenario (*view NULL). NULL and e filled on failure. */
scenario *eval_scenario_alloc(const sweep_point *p, const char *path,
                              alloc **a, scenario **view, err *e);

/* The GPU types of s as results.gpu stores them: the one name when every
 * site has it, else the distinct names in site order joined by commas;
 * "mixed" if they do not fit in size (> 5) bytes. Names as spec.h spells. */
void eval_gpu_label(const scenario *s, char *buf, size_t size);

/* Scores, predicts and simulates a on s under transport t into r: score_s and its parts, predicted and
 * simulated times, breakdown, events, effective workload, GPU label, alloc
 * JSON. */
int eval_alloc(const scenario *s, const cost_ctx *c, const alloc *a,
               const transport_options *t, db_result *r, err *e);

/* The sweep evaluator: eval_scenario, sim_place, eval_alloc. ctx unused. */
int eval_point(void *ctx, const sweep_point *p, db_result *r, err *e);

#endif
