/* cli_budget: what `schedule --objective usd-per-sample|samples-per-usd`
 * and `--max-usd-per-hour` need of a scenario, checked before a search: a
 * price for every site a search may choose (a site without one would look
 * free), and a budget above what the cheapest choice costs per hour; and
 * the fastest placement, reported beside such a search's choice.
 * Invariant: every refusal names the option; nothing is searched after
 * one. */
#ifndef SIM_CLI_CLI_BUDGET_H
#define SIM_CLI_CLI_BUDGET_H

#include <jansson.h>
#include <stdbool.h>

#include "models/bill.h"
#include "models/cost.h"
#include "schedules/search.h"
#include "sim/sim.h"
#include "traces/scenario.h"

/* Checks s for `schedule`'s objective (cost: a dollar objective named
 * goal) and budget (> 0: given). every: the search holds every
 * device (a placement), so the budget must cover them all; else (the
 * shape search) the cheapest GPU-hour of a priced site. *usd_per_s gets
 * what every device costs per second (NAN: a site not priced). CLI_OK, or
 * CLI_ERROR with the message printed. */
int cli_budget_check(const scenario *s, bool cost, const char *goal,
                     double budget, bool every, double *usd_per_s);

/* The fastest placement beside a dollar objective's or a budget's choice:
 * the same method under the predictor alone, simulated and billed. */
typedef struct cli_beside {
  bool on;
  alloc *a;
  sim_result sr;
  bill b;
} cli_beside;

/* Searches it (method on s with options o, no progress) into *f. ERR_OK,
 * or the search's or the simulation's error. */
int cli_beside_search(const scenario *s, const cost_ctx *c, const char *method,
                      const sim_options *so, const search_opts *o,
                      cli_beside *f, err *e);

/* The lines "chosen" (sr, b) and "fastest" (f), each marked when over the
 * budget (> 0); nothing when f is off. */
void cli_beside_print(const sim_result *sr, const bill *b, const cli_beside *f,
                      double budget);

json_t *cli_beside_json(const cli_beside *f); /* a new reference */
void cli_beside_free(cli_beside *f);

#endif
