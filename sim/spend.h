/* spend: a run's bill (models/bill.h) from its statistics — one iteration
 * (sim_result: each device's busy time, the bytes per site pair, the
 * batch) or a training run (its wall time with every loss, the
 * iterations run to completion, the time lost by cause).
 * Invariant: reads results only; the devices a run holds are every device
 * of the scenario it ran on, for its whole wall time. */
#ifndef SIM_SPEND_H
#define SIM_SPEND_H

#include "base/err.h"
#include "models/bill.h"
#include "models/cost.h"
#include "schedules/search.h"
#include "sim/sim.h"
#include "sim/training.h"
#include "traces/scenario.h"

/* The bill of one iteration r of s: its devices held for iteration_s
 * (DiLoCo: an inner step's share of the outer step), each busy
 * utilisation x iteration_s, the site bytes, the batch. ERR_OK and *out
 * (bill_free), or bill_make's error. */
int sim_spend_iteration(const scenario *s, const sim_result *r, bill *out,
                        err *e);

/* The bill of training run tr of s whose per-iteration figures are agg
 * (tr's own, or where a caller moved them): every device held for
 * total_s, busy over the iterations run to completion, their bytes, the
 * samples kept, and the time lost by cause (sim_lost_name). */
int sim_spend_training(const scenario *s, const sim_training_result *tr,
                       const sim_result *agg, bill *out, err *e);

/* The bill of an iteration of w under a predicted to take iteration_s:
 * every device of s held for it, the closed form's bytes per site pair
 * (bill_traffic_pairs), no busy time (the predictor gives none per
 * device), w's batch. ERR_OK and *out (bill_free), or bill_make's error. */
int sim_spend_predicted(const scenario *s, const spec_workload *w,
                        const alloc *a, double iteration_s, bill *out,
                        err *e);

/* The fastest placement, which a choice steered by dollars or a budget is
 * reported beside: method on s with cost context c and options o (without
 * their progress) under the predictor alone, its best simulated under so
 * and billed (sim_spend_iteration). ERR_OK and *a (owned); or the search's,
 * the simulation's or the bill's error and *a NULL. *r (sim_result_free)
 * and *b (bill_free) are the caller's to free either way. */
int sim_spend_fastest(const scenario *s, const cost_ctx *c, const char *method,
                      const sim_options *so, const search_opts *o, alloc **a,
                      sim_result *r, bill *b, err *e);

#endif
