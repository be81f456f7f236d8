/* schedule: one entry point from a method name to an allocation, for every
 * command that needs a placement (schedule, predict, simulate, sweep, run).
 * Invariant: the method table is the one list of names (DESIGN.md section
 * 9); a name outside it is an ERR_UNKNOWN error that lists them. */
#ifndef SCHEDULES_SCHEDULE_H
#define SCHEDULES_SCHEDULE_H

#include <stdbool.h>

#include "models/cost.h"
#include "schedules/search.h"

/* The method names, NULL-terminated: dtfm-identity, megatron, random,
 * random-search, greedy, gcma, hybrid, sim. */
const char *const *schedule_method_names(void);
bool schedule_method_known(const char *name);
/* True for the methods that need an allocation objective (`sim`). */
bool schedule_method_needs_objective(const char *name);

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

#endif
