/* schedule: one entry point from a method name to an allocation, for every
 * command that needs a placement (schedule, predict, simulate, sweep, run).
 * Invariant: the dispatch reads the method table (schedule_method.h), and a
 * name outside it is an ERR_UNKNOWN error that lists them. */
#ifndef SCHEDULES_SCHEDULE_H
#define SCHEDULES_SCHEDULE_H

#include <stdbool.h>

#include "models/cost.h"
#include "schedules/schedule_method.h"
#include "schedules/search.h"

/* Runs method name on c's devices with options o (search_opts_default
 * gives DT-FM's settings; seed is the point's seed). Fixed placements cost
 * one candidate; searches are scored by the DT-FM score, except `sim`,
 * which runs GCMA, realises its o->starts best distinct partitions, adds
 * the greedy pipelines (baseline_greedy_pipelines: a structurally other
 * start) and improves them by local moves judged by sim_obj (non-NULL for
 * `sim`; ignored otherwise). Returns the result (the caller owns it), or
 * NULL with e filled: ERR_UNKNOWN for an unknown name, ERR_CONFIG for `sim`
 * without an objective, or the objective's own error. */
search_result *schedule_method(const char *name, const cost_ctx *c,
                               const search_opts *o,
                               const search_objective *sim_obj, err *e);

/* schedule_method with obj (NULL: the DT-FM score) as the objective of
 * random-search, gcma and hybrid; a fixed placement and greedy's are
 * valued by obj (their objective_s and convergence), and `sim` starts
 * from GCMA's best under obj (instead of the DT-FM score), improved by
 * sim_obj. */
search_result *schedule_method_with(const char *name, const cost_ctx *c,
                                    const search_opts *o,
                                    const search_objective *obj,
                                    const search_objective *sim_obj, err *e);

#endif
