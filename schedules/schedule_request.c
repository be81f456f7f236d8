/* schedule_request: the checks of a schedule's options that every front
 * door shares (schedule_request.h). */
#include "schedules/schedule_request.h"

#include <string.h>

#include "models/partition.h"
#include "schedules/objective.h"
#include "schedules/schedule_method.h"
#include "schedules/shape.h"

static const char *const option_names[] = {
#define X(id, name, search) name,
    SCHEDULE_OPTION_MAP(X)
#undef X
};
static const bool for_shape[] = {
#define X(id, name, search) [SCHEDULE_OPT_##id] = SCHEDULE_##search,
#define SCHEDULE_SHAPE true
#define SCHEDULE_PLACEMENT false
    SCHEDULE_OPTION_MAP(X)
#undef SCHEDULE_SHAPE
#undef SCHEDULE_PLACEMENT
#undef X
};

/* A dollar objective or a budget without the shape search. */
static int placement_dollars(const schedule_request *r, bool cost, err *e) {
  const char *m = r->method;
  bool sim = schedule_method_find(m) == SCHEDULE_SIM;
  if (r->budget > 0 && !cost && r->objective != OBJECTIVE_PREDICTED)
    return err_set(e, ERR_CONFIG, "--max-usd-per-hour constrains the "
                   "predictor's objectives: give --objective predicted, "
                   "usd-per-sample or samples-per-usd");
  if (!schedule_method_searches(m) || sim)
    return err_set(e, ERR_CONFIG, "--objective %s%s: --method %s %s; give "
                   "gcma, hybrid or random-search",
                   objective_kind_names[r->objective],
                   r->budget > 0 ? " with --max-usd-per-hour" : "", m,
                   sim ? "judges its moves by simulated time"
                       : "searches nothing");
  return ERR_OK;
}

int schedule_request_dollars(schedule_request *r, err *e) {
  bool cost = objective_kind_dollars((objective_kind)r->objective);
  if (r->shape && (cost || r->given[SCHEDULE_OPT_OBJECTIVE]) && r->goal &&
      (!cost || strcmp(shape_goal_names[r->goal],
                       objective_kind_names[r->objective])))
    return err_set(e, ERR_CONFIG, "--objective %s and --shape-objective %s: "
                   "give one", objective_kind_names[r->objective],
                   shape_goal_names[r->goal]);
  if (r->shape) {
    if (cost)
      r->goal = names_find(shape_goal_names,
                           objective_kind_names[r->objective]);
    return ERR_OK;
  }
  if (!cost && !(r->budget > 0)) return ERR_OK;
  return placement_dollars(r, cost, e);
}

int schedule_request_uses(const schedule_request *r, err *e) {
  bool unused[SCHEDULE_NOPTIONS];
  for (int i = 0; i < SCHEDULE_NOPTIONS; i++)
    unused[i] = r->given[i] && for_shape[i] != r->shape;
  unused[SCHEDULE_OPT_OBJECTIVE] =
      r->shape && r->given[SCHEDULE_OPT_OBJECTIVE] &&
      !objective_kind_dollars((objective_kind)r->objective);
  for (int i = 0; i < SCHEDULE_NOPTIONS; i++) {
    if (!unused[i]) continue;
    if (!r->shape && i == SCHEDULE_OPT_GOAL)
      return err_set(e, ERR_CONFIG, "--shape-objective %s needs --shape auto",
                     shape_goal_names[r->goal]);
    if (!r->shape)
      return err_set(e, ERR_CONFIG, "%s needs --shape auto", option_names[i]);
    return err_set(e, ERR_CONFIG, "%s is a placement search's, which --shape "
                   "auto does not run (it judges shapes by the predictor and "
                   "simulation, for --shape-objective): leave it out",
                   option_names[i]);
  }
  return ERR_OK;
}

int schedule_request_micro(const char *list, long batch, int *micro, int *n,
                           err *e) {
  *n = partition_parse(list, micro, SHAPE_MAX_MICRO);
  for (int i = 0; i < *n; i++)
    if (micro[i] < 1) *n = -1;
  if (*n < 1)
    return err_set(e, ERR_PARSE, "wants up to %d comma-separated micro-batch "
                   "sizes >= 1, not '%s'", SHAPE_MAX_MICRO, list);
  for (int i = 0; i < *n; i++)
    if (micro[i] > batch)
      return err_set(e, ERR_CONFIG, "%s: %d is more than the batch of %ld "
                     "sequences", list, micro[i], batch);
  return ERR_OK;
}
