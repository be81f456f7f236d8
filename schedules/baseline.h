/* baseline: the searches GCMA is measured against — random search (DT-FM's
 * random scheduler: best of N seeded permutations) and greedy, what a user
 * would try first.
 * Invariant: both return a valid allocation of every device exactly once,
 * scored by the cost model; random search is a pure function of its seed. */
#ifndef SCHEDULES_BASELINE_H
#define SCHEDULES_BASELINE_H

#include "models/cost.h"
#include "schedules/search.h"

/* random-search: o->trials (default SEARCH_POPULATION + SEARCH_TRIALS, the
 * candidates GCMA scores) uniform permutations from mt19937(o->seed), each
 * read as a partition (group-major) and scored by obj->partition (NULL:
 * the DT-FM score); the best is realised as pipelines by the cost model.
 * NULL and e filled when the objective fails. The caller owns the result. */
search_result *baseline_random_search(const cost_ctx *c,
                                      const search_objective *obj,
                                      const search_opts *o, err *e);

/* greedy: two constructions, the better DT-FM score kept.
 * (1) data-parallel groups by bandwidth: each group starts at the lowest
 *     free device and grows by the free device with the least summed
 *     data-parallel edge to the members; pipelines by the cost model.
 * (2) pipelines site by site: each pipeline starts at the lowest free
 *     device and grows by the free device with the cheapest pipeline edge
 *     from its last stage; scored as built (cost_alloc).
 * Never fails; the caller owns the result. */
search_result *baseline_greedy(const cost_ctx *c, const search_opts *o);

/* Construction (1) alone: the greedy data-parallel groups, group-major
 * into groups (D_pp * D_dp ints). GCMA seeds its population with it. */
void baseline_greedy_groups(const cost_ctx *c, int *groups);

/* Construction (2) alone: pipelines as nearest-neighbour chains, rows in
 * the order built. `sim` starts from it too (pipelines kept inside sites).
 * The caller owns the result. */
alloc *baseline_greedy_pipelines(const cost_ctx *c);

#endif
