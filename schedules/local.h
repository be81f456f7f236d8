/* local: search with the simulator in the loop — local moves from given
 * starting allocations, each judged by a caller-supplied objective
 * (`--method sim`: a simulated iteration, passed in by the front end so
 * that schedules/ never calls up into sim/). Moves: whole rows (the ring
 * order of every data-parallel group), whole columns (stage positions),
 * swaps guided by the cost model's worst pipeline edge and data-parallel
 * member, and plain device swaps; first improvement over a shuffled
 * neighbourhood, restarts from the other starts, then kicks of the best.
 * Invariant: the result is the best allocation evaluated; every candidate
 * the walk moves to strictly improves on the walk's current point (a
 * restart or a kick begins a new walk); all draws come from mt19937(seed),
 * so a seed reproduces a run. */
#ifndef SCHEDULES_LOCAL_H
#define SCHEDULES_LOCAL_H

#include "models/alloc.h"
#include "models/cost.h"
#include "schedules/search.h"

/* Evaluates the nstarts allocations in starts (borrowed; starts[0] is the
 * reference, e.g. the cost model's choice: its value becomes start_s),
 * then spends the rest of o->trials evaluations (default search_sim_trials)
 * walking from the best start. obj->alloc must not be NULL. Returns the
 * best allocation found (DT-FM parts from c), or NULL with e filled when
 * the objective fails. The caller owns the result. */
search_result *local_search(const cost_ctx *c, const search_objective *obj,
                            const alloc *const *starts, int nstarts,
                            const search_opts *o, err *e);

#endif
