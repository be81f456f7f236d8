/* schedule_method: the placement methods' names and what each needs, below
 * the dispatch (schedule.h) and the searches that name their results
 * (baseline, local).
 * Invariant: the method table is the one list of names (DESIGN.md section
 * 9): models/alloc's fixed placements, then the searches of
 * SCHEDULE_SEARCH_MAP; every list, lookup, check and dispatch reads it. */
#ifndef SCHEDULES_SCHEDULE_METHOD_H
#define SCHEDULES_SCHEDULE_METHOD_H

#include <stdbool.h>

#include "base/names.h"
#include "models/alloc.h"

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

/* The names of the fixed placements (fixed) or of the searches (!fixed),
 * in the table's order, joined by ", " into buf. */
void schedule_method_join(bool fixed, char *buf, size_t size);

#endif
