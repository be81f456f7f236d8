/* place: a placement method's name to an allocation — the one place where the
 * scheduler (schedules/) meets the engine: `sim` searches with the
 * simulation as its objective, every other method with the DT-FM score.
 * Every command that needs a placement (predict, simulate, schedule, sweep,
 * validate, run) goes through here, so a name means the same everywhere. */
#ifndef SIM_PLACE_H
#define SIM_PLACE_H

#include "models/alloc.h"
#include "models/cost.h"
#include "schedules/schedule.h"
#include "sim/sim.h"

/* Runs method (schedule_method_names()) for scenario s with cost context c,
 * search options o and, for `sim`, simulations under so. Returns the search
 * result (the caller owns it) or NULL with e filled (ERR_UNKNOWN for an
 * unknown name). s, c, o and so are borrowed. */
search_result *sim_place_search(const scenario *s, const cost_ctx *c,
                                const char *method, const search_opts *o,
                                const sim_options *so, err *e);

/* sim_place_search with obj (NULL: the DT-FM score) as the searches'
 * objective (schedule_method_with); obj is borrowed. */
search_result *sim_place_search_with(const scenario *s, const cost_ctx *c,
                                     const char *method, const search_opts *o,
                                     const sim_options *so,
                                     const search_objective *obj, err *e);

/* An allocation whose iteration under a search's sim_options the caller
 * has simulated already (geodes run's table): `sim` takes iteration_s
 * for a candidate equal to a (alloc_equal) instead of simulating it. */
typedef struct sim_place_known {
  const alloc *a; /* borrowed */
  double iteration_s;
} sim_place_known;

/* sim_place_search whose simulations take the nknown values of known
 * (borrowed; the caller vouches that each is sim_run's of its allocation
 * under so), so the result is sim_place_search's, simulating fewer. */
search_result *sim_place_search_known(const scenario *s, const cost_ctx *c,
                                      const char *method,
                                      const search_opts *o,
                                      const sim_options *so,
                                      const sim_place_known *known,
                                      int nknown, err *e);

/* sim_place_search keeping only the allocation (owned by the caller);
 * NULL with e filled on failure. */
alloc *sim_place_as(const scenario *s, const cost_ctx *c, const char *method,
                    const search_opts *o, const sim_options *so, err *e);

/* sim_place_search with DT-FM's search settings (population 100, 4900
 * trials) and the scenario's seed, keeping only the allocation (owned by
 * the caller); NULL with e filled on failure. */
alloc *sim_place(const scenario *s, const cost_ctx *c, const char *method,
                 const sim_options *so, err *e);

/* sim_place under s's own cost context (cost_ctx_from_scenario, made and
 * released here): what a command that holds no cost context asks. */
alloc *sim_place_scenario(const scenario *s, const char *method,
                          const sim_options *so, err *e);

#endif
