/* scenario_subset: a scenario restricted to some of its devices — what a
 * training run continues on when devices are lost (sim/recovery): the same
 * sites, network and workload, the kept devices renumbered in their order,
 * fewer data-parallel replicas and the batch that goes with them.
 * Invariant: a subset is a view: it borrows every string and the network
 * trace of its parent, which must outlive it, and owns only its arrays;
 * device i of the subset is device keep[i] of the parent, so every link,
 * GPU and NIC of the subset is the parent's. */
#ifndef TRACES_SCENARIO_SUBSET_H
#define TRACES_SCENARIO_SUBSET_H

#include "traces/scenario.h"

/* The view of s over devices keep[0 .. nkeep) (strictly increasing parent
 * indices) with `replicas` data-parallel replicas, nkeep == replicas x the
 * stages: the workload's batch becomes batch / s's replicas x replicas (each
 * replica keeps its micro-batches); per-device overrides between kept
 * devices are kept, renumbered. Free with scenario_subset_free, never
 * scenario_free. */
scenario *scenario_subset(const scenario *s, const int *keep, int nkeep,
                          int replicas);

/* Frees what a subset owns (not what it borrows); NULL is fine. */
void scenario_subset_free(scenario *sub);

#endif
