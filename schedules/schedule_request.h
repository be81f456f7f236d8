/* schedule_request: what a request for a schedule asks, checked once for
 * every front door: the dollar objectives and the budget against the
 * method and the shape search, and which options only the shape search
 * (--shape auto) or only a placement search uses (SCHEDULE_OPTION_MAP).
 * Invariant: a refusal names the first option at fault, in the map's
 * order; nothing is refused that both searches use. */
#ifndef SCHEDULES_SCHEDULE_REQUEST_H
#define SCHEDULES_SCHEDULE_REQUEST_H

#include <stdbool.h>

#include "base/err.h"
#include "base/names.h"

/* The options one search alone uses, X(ID, "option", SEARCH): SHAPE, the
 * shape search; PLACEMENT, a placement search. In the order a refusal
 * names the first given. */
#define SCHEDULE_OPTION_MAP(X)                  \
  X(DP_AUTO, "--dp-algo auto", SHAPE)           \
  X(GOAL, "--shape-objective", SHAPE)           \
  X(SIMULATE, "--simulate-best", SHAPE)         \
  X(MICRO, "--micro-batches", SHAPE)            \
  X(METHOD, "--method", PLACEMENT)              \
  X(OBJECTIVE, "--objective", PLACEMENT)        \
  X(TRIALS, "--trials", PLACEMENT)              \
  X(POPULATION, "--population", PLACEMENT)      \
  X(STARTS, "--starts", PLACEMENT)              \
  X(COST_CMD, "--cost-cmd", PLACEMENT)          \
  X(CONVERGENCE, "--convergence", PLACEMENT)
#define SCHEDULE_OPTION_ID(id, name, search) SCHEDULE_OPT_##id,
typedef enum schedule_option {
  SCHEDULE_OPTION_MAP(SCHEDULE_OPTION_ID)
} schedule_option;
#undef SCHEDULE_OPTION_ID
enum { SCHEDULE_NOPTIONS = 0 SCHEDULE_OPTION_MAP(NAMES_COUNT_ROW) };

typedef struct schedule_request {
  bool shape;               /* the shape search, else a placement search */
  const char *method;       /* the placement search's (a method's name) */
  int objective;            /* an objective_kind */
  int goal;                 /* a shape_goal */
  double budget;            /* USD per hour; 0: none */
  bool given[SCHEDULE_NOPTIONS]; /* on the command line (METHOD: another
                               than gcma; GOAL: another than throughput;
                               OBJECTIVE: --objective at all) */
} schedule_request;

/* The dollar objectives and the budget under r: with the shape search a
 * dollar objective is its goal (set in r->goal) and another given goal is
 * refused; without it they need the predictor's objectives and a method
 * an objective steers (not sim). ERR_OK or ERR_CONFIG naming them. */
int schedule_request_dollars(schedule_request *r, err *e);

/* The first option r gives that its search does not use (the map's
 * order; --objective unused by the shape search unless a dollar one):
 * ERR_OK, or ERR_CONFIG naming it. */
int schedule_request_uses(const schedule_request *r, err *e);

/* --micro-batches' list (comma-separated sizes) into micro (room for
 * SHAPE_MAX_MICRO), *n of them: ERR_OK, ERR_PARSE when it is not up to
 * SHAPE_MAX_MICRO sizes >= 1, ERR_CONFIG when one is more than batch (a
 * micro-batch holds at most the batch). */
int schedule_request_micro(const char *list, long batch, int *micro, int *n,
                           err *e);

#endif
