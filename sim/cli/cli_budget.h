/* cli_budget: what `schedule --objective usd-per-sample|samples-per-usd`
 * and `--max-usd-per-hour` need of a scenario, checked before a search: a
 * price for every site a search may choose (a site without one would look
 * free), and a budget above what the cheapest choice costs per hour.
 * Invariant: every refusal names the option; nothing is searched after
 * one. */
#ifndef SIM_CLI_CLI_BUDGET_H
#define SIM_CLI_CLI_BUDGET_H

#include <stdbool.h>

#include "traces/scenario.h"

/* Checks s for `schedule`'s objective (cost: a dollar objective named
 * objective) and budget (> 0: given). every: the search holds every
 * device (a placement), so the budget must cover them all; else (the
 * shape search) the cheapest GPU-hour of a priced site. *usd_per_s gets
 * what every device costs per second (NAN: a site not priced). CLI_OK, or
 * CLI_ERROR with the message printed. */
int cli_budget_check(const scenario *s, bool cost, const char *objective,
                     double budget, bool every, double *usd_per_s);

#endif
