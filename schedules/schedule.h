/* schedule: one entry point from a method name to an allocation, for every
 * command that needs a placement (schedule, predict, simulate, sweep, run).
 * Invariant: the method table is the one list of names (DESIGN.md section
 * 9): models/alloc's fixed placements, then the searches of
 * SCHEDULE_SEARCH_MAP; every list, lookup, check and dispatch reads it, and
 * a name outside it is an ERR_UNKNOWN error that lists them. */
#ifndef SCHEDULES_SCHEDULE_H
#define SCHEDULES_SCHEDULE_H

#include <stdbool.h>

#include "base/names.h"
#include "models/cost.h"
#include "schedules/search.h"

/* The searches, X(ID, "name"), listed after the fixed placements. */
#define SCHEDULE_SEARCH_MAP(X)         \
  X(RANDOM_SEARCH, "random-search")    \
  X(GREEDY, "greedy")                  \
  X(GCMA, "gcma")                      \
  X(HYBRID, "hybrid")                  \
  X(SIM, "sim")

/* Every method: SCHEDULE_DTFM_IDENTITY (= ALLOC_DTFM_IDENTITY), ...,
 * SCHEDULE_SIM. */
#define SCHEDULE_METHOD_ID(id, name) SCHEDULE_##id,
typedef enum schedule_method_id {
  ALLOC_FIXED_MAP(SCHEDULE_METHOD_ID)
  SCHEDULE_SEARCH_MAP(SCHEDULE_METHOD_ID)
} schedule_method_id;
#undef SCHEDULE_METHOD_ID
enum {
  SCHEDULE_NMETHODS =
      0 ALLOC_FIXED_MAP(NAMES_COUNT_ROW) SCHEDULE_SEARCH_MAP(NAMES_COUNT_ROW)
};

/* The method names, NULL-terminated: dtfm-identity, megatron-order, random,
 * random-search, greedy, gcma, hybrid, sim. */
const char *const *schedule_method_names(void);
const char *schedule_method_name(schedule_method_id m);
/* The method called name (or by a former name, ALLOC_FIXED_ALIAS_MAP), or
 * -1. */
int schedule_method_find(const char *name);
bool schedule_method_known(const char *name);
/* True for the fixed placements (one candidate, no search to record). */
bool schedule_method_is_fixed(const char *name);
/* True for the methods that need an allocation objective (`sim`). */
bool schedule_method_needs_objective(const char *name);
/* True for the methods an objective steers (random-search, gcma, hybrid,
 * sim); false for the fixed placements and greedy, which place without
 * one, and for an unknown name. */
bool schedule_method_searches(const char *name);

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
