/* local: search with the simulator in the loop — local moves (swaps of two
 * devices inside a data-parallel group, which re-pairs pipelines, or across
 * groups) from given starting allocations, each judged by a caller-supplied
 * objective (`--method sim`: a simulated iteration, passed in by the front
 * end so that schedules/ never calls up into sim/).
 * Invariant: the current allocation is always the best one evaluated so
 * far, and a move is kept only when the objective strictly improves; moves
 * are drawn from mt19937(seed), so a seed reproduces a run. */
#ifndef SCHEDULES_LOCAL_H
#define SCHEDULES_LOCAL_H

#include "models/alloc.h"
#include "models/cost.h"
#include "schedules/search.h"

/* Evaluates the nstarts allocations in starts (borrowed; starts[0] is the
 * reference, e.g. the cost model's choice: its value becomes start_s),
 * then spends the rest of o->trials evaluations (default SEARCH_SIM_TRIALS)
 * on random swaps from the best. obj->alloc must not be NULL. Returns the
 * best allocation found (DT-FM parts from c), or NULL with e filled when the
 * objective fails. The caller owns the result. */
search_result *local_search(const cost_ctx *c, const search_objective *obj,
                            const alloc *const *starts, int nstarts,
                            const search_opts *o, err *e);

#endif
