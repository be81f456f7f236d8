/* schedule_method: see schedule_method.h. */
#include "schedules/schedule_method.h"

#include <assert.h>

_Static_assert(SCHEDULE_DTFM_IDENTITY == (int)ALLOC_DTFM_IDENTITY &&
                   SCHEDULE_RANDOM == (int)ALLOC_RANDOM &&
                   SCHEDULE_RANDOM_SEARCH == (int)ALLOC_NFIXED,
               "the method list starts with models/alloc's fixed placements");

#define METHOD_NAME(id, name) name,
static const char *const names[SCHEDULE_NMETHODS + 1] = {
    ALLOC_FIXED_MAP(METHOD_NAME) SCHEDULE_SEARCH_MAP(METHOD_NAME) NULL};
#undef METHOD_NAME

const char *const *schedule_method_names(void) { return names; }

const char *schedule_method_name(schedule_method_id m) { return names[m]; }

int schedule_method_find(const char *name) {
  return names_find(names, alloc_fixed_canonical(name));
}

bool schedule_method_known(const char *name) {
  return schedule_method_find(name) >= 0;
}

bool schedule_method_is_fixed(const char *name) {
  int m = schedule_method_find(name);
  return m >= 0 && m < (int)ALLOC_NFIXED;
}

/* What a method needs and does: whether an objective steers its search,
 * whether it needs an allocation objective (a simulation); neither for an
 * unknown name. */
typedef struct traits {
  bool searches, needs_objective;
} traits;

static traits traits_of(const char *name) {
  int m = schedule_method_find(name);
  if (m < 0) return (traits){0};
  switch ((schedule_method_id)m) {
    case SCHEDULE_DTFM_IDENTITY:
    case SCHEDULE_MEGATRON:
    case SCHEDULE_RANDOM:
    case SCHEDULE_GREEDY: return (traits){.searches = false};
    case SCHEDULE_RANDOM_SEARCH:
    case SCHEDULE_GCMA:
    case SCHEDULE_HYBRID: return (traits){.searches = true};
    case SCHEDULE_SIM: return (traits){.searches = true, .needs_objective = true};
  }
  assert(!"unknown method");
  return (traits){0};
}

bool schedule_method_needs_objective(const char *name) {
  return traits_of(name).needs_objective;
}

bool schedule_method_searches(const char *name) {
  return traits_of(name).searches;
}

void schedule_method_join(bool fixed, char *buf, size_t size) {
  const char *pick[SCHEDULE_NMETHODS + 1];
  int n = 0;
  for (int m = 0; m < SCHEDULE_NMETHODS; m++)
    if (schedule_method_is_fixed(names[m]) == fixed) pick[n++] = names[m];
  pick[n] = NULL;
  names_join(pick, ", ", ", ", buf, size);
}
