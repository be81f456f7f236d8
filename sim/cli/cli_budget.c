/* cli_budget: see cli_budget.h. */
#include "sim/cli/cli_budget.h"

#include <math.h>
#include <stdio.h>

#include "models/bill.h"
#include "sim/cli/cli.h"

int cli_budget_check(const scenario *s, bool cost, const char *objective,
                     double budget, bool every, double *usd_per_s) {
  int site = -1;
  *usd_per_s = bill_compute_usd_per_s(s, NULL, 0, &site);
  char opt[64];
  snprintf(opt, sizeof opt, cost ? "--objective %s" : "--max-usd-per-hour",
           objective);
  if (!(cost || budget > 0)) return CLI_OK;
  if (!bill_any_price(s))
    return cli_error("schedule: %s: nothing in %s is priced (give its sites "
                     "usd_per_gpu_hour, or an instance of %s; "
                     "traces/FORMATS.md)", opt, s->name, s->prices_file);
  if (site >= 0)
    return cli_error("schedule: %s: sites[%d] (%s) of %s is not priced: a "
                     "search would take its GPUs for free (give its "
                     "usd_per_gpu_hour, or an instance of %s)", opt, site,
                     s->sites[site].name, s->name, s->prices_file);
  if (!(budget > 0)) return CLI_OK;
  int cheap;
  double least = every ? *usd_per_s * 3600 : bill_cheapest_gpu_hour(s, &cheap);
  if (budget < least)
    return every
               ? cli_error("schedule: --max-usd-per-hour %g: below what the "
                           "%d devices of %s cost per hour, $%.4g (a "
                           "placement holds them all)", budget, s->ndevices,
                           s->name, least)
               : cli_error("schedule: --max-usd-per-hour %g: below the "
                           "cheapest device-hour of %s, $%.4g (%s)", budget,
                           s->name, least, s->sites[cheap].name);
  return CLI_OK;
}
