/* cli_budget: see cli_budget.h. */
#include "sim/cli/cli_budget.h"

#include <math.h>
#include <stdio.h>

#include "models/bill.h"
#include "sim/cli/cli.h"
#include "sim/spend.h"

int cli_budget_check(const scenario *s, bool cost, const char *goal,
                     double budget, bool every, double *usd_per_s) {
  int site = -1;
  *usd_per_s = bill_compute_usd_per_s(s, NULL, 0, &site);
  char opt[64];
  snprintf(opt, sizeof opt, cost ? "--objective %s" : "--max-usd-per-hour",
           goal);
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

void cli_beside_free(cli_beside *f) {
  alloc_free(f->a);
  sim_result_free(&f->sr);
  bill_free(&f->b);
}

int cli_beside_search(const scenario *s, const cost_ctx *c, const char *method,
                      const sim_options *so, const search_opts *o,
                      cli_beside *f, err *e) {
  int rc = sim_spend_fastest(s, c, method, so, o, &f->a, &f->sr, &f->b, e);
  f->on = rc == ERR_OK;
  return rc;
}

void cli_beside_print(const sim_result *sr, const bill *b, const cli_beside *f,
                      double budget) {
  const sim_result *x[] = {sr, &f->sr};
  const bill *y[] = {b, &f->b};
  const char *what[] = {"chosen", "fastest"};
  for (int i = 0; i < 2 && f->on; i++)
    printf("%-11s %.3f s per iteration, %.2f samples/s, $%.4g per 1,000 "
           "samples, $%.4g per hour%s\n", what[i], x[i]->iteration_s,
           x[i]->samples_per_s, y[i]->usd_per_1k_samples, y[i]->usd_per_hour,
           budget > 0 && y[i]->usd_per_hour > budget ? " (over the budget)"
                                                      : "");
}

json_t *cli_beside_json(const cli_beside *f) {
  json_t *o = json_object();
  json_object_set_new(o, "iteration_s", cli_json_number(f->sr.iteration_s));
  json_object_set_new(o, "samples_per_s", cli_json_number(f->sr.samples_per_s));
  json_object_set_new(o, "usd_per_1k_samples",
                      cli_json_number(f->b.usd_per_1k_samples));
  json_object_set_new(o, "usd_per_hour", cli_json_number(f->b.usd_per_hour));
  json_object_set_new(o, "alloc", alloc_json(f->a));
  return o;
}
