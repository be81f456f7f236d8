/* bill: what a run costs and draws, from what it used — GPU-hours at each
 * site's price (idle time included: a rented GPU costs while it waits),
 * egress at each ordered site pair's price per GB (billed at the sender),
 * energy from each device's busy time at its board power and its idle time
 * at its idle power, carbon at each site's intensity, and what lost time
 * cost (its seconds x the devices held). Not DT-FM's communication cost
 * model (models/cost.h): money, not seconds.
 * Invariant: a total is a number only when every part of it is priced
 * (known), else NAN ("not priced"); each site's and pair's own line says
 * which part is missing. Prices are the scenario's (traces/
 * scenario_price.c); nothing here defaults a price. */
#ifndef MODELS_BILL_H
#define MODELS_BILL_H

#include <stdbool.h>

#include "base/err.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "traces/scenario.h"

#define BILL_BYTES_PER_GB 1e9  /* a price per GB is per 10^9 bytes */
#define BILL_J_PER_KWH 3.6e6
#define BILL_MAX_LOST 8        /* causes of lost time a bill splits */

/* Bytes one site sent another (src == dst: inside a site). */
typedef struct bill_bytes {
  int src, dst;
  double bytes;
} bill_bytes;

/* What a run used: its bill's inputs (all borrowed). */
typedef struct bill_use {
  double held_s;          /* how long the devices were held: the run's
                             wall time, lost time included */
  const int *devices;     /* the devices held (s's numbers); NULL: all */
  int ndevices;           /* their count when devices is given */
  const double *busy_s;   /* [s->ndevices] each device's GPU busy seconds
                             in held_s; NULL: not known (no energy) */
  const bill_bytes *bytes; /* sent per ordered site pair in held_s */
  int nbytes;
  double samples;         /* sequences trained in held_s */
  const double *lost_s;   /* [nlost] time lost by cause (training runs) */
  const char *const *lost_names; /* [nlost] */
  int nlost;              /* <= BILL_MAX_LOST; 0: none */
} bill_use;

/* One site's lines. NAN: not priced (not known). */
typedef struct bill_site {
  int devices;            /* held here */
  double gpu_hours;
  double usd;             /* GPU-hours x its price */
  double busy_kwh;        /* busy time at board power */
  double kwh;             /* and idle time at idle power */
  double gco2;            /* kwh x the site's intensity */
  double egress_bytes;    /* sent to other sites */
  double egress_usd;      /* their price, billed here */
} bill_site;

/* One ordered pair of sites that carried bytes. */
typedef struct bill_pair {
  int src, dst;
  double bytes, usd_per_gb, usd; /* usd NAN: not priced */
} bill_pair;

typedef struct bill {
  int nsites;
  bill_site *site;        /* [nsites] */
  int npairs;
  bill_pair *pair;        /* most dollars first, then most bytes */
  double held_s, samples;
  int devices;            /* held */
  double compute_usd_per_hour; /* the held devices' GPU-hours per hour */
  double compute_usd, egress_usd, usd; /* usd = compute + egress */
  double usd_per_hour, usd_per_1k_samples;
  double egress_share;    /* egress_usd / usd */
  double busy_kwh, kwh, gco2;
  double lost_usd;        /* every cause's; NAN: not priced or no loss */
  double lost_usd_by[BILL_MAX_LOST];
  const char *lost_names[BILL_MAX_LOST];
  int nlost;
  bool any_price;         /* some site or pair of s is priced */
  bool busy_known;        /* the use gave each device's busy time */
} bill;

/* The bill of use u of s's devices. ERR_OK and *out (bill_free), or
 * ERR_UNKNOWN (a site's GPU is not in the table; e filled). */
int bill_make(const scenario *s, const bill_use *u, bill *out, err *e);

void bill_free(bill *b); /* NULL is fine */

/* Whether s prices anything: a site's GPU-hour or a pair's egress. */
bool bill_any_price(const scenario *s);

/* Whether every ordered pair of distinct sites of s has an egress price
 * (else a search's dollars count that pair's bytes as free). */
bool bill_egress_complete(const scenario *s);

/* What devices[0 .. n) cost per second together (NULL: every device of
 * s), or NAN when one's site is not priced (*unpriced, when not NULL, gets
 * the first such site, else -1). */
double bill_compute_usd_per_s(const scenario *s, const int *devices, int n,
                              int *unpriced);

/* The least GPU-hour of s's sites that are priced (NAN: none), and the
 * site (*site). */
double bill_cheapest_gpu_hour(const scenario *s, int *site);

/* What one iteration of w under allocation a sends between sites costs
 * (models/traffic.h's bytes at each pair's price); a pair not priced adds
 * nothing and sets *unpriced (when not NULL). */
double bill_egress_usd(const scenario *s, const spec_workload *w,
                       const alloc *a, bool *unpriced);

/* The bytes one iteration of w under allocation a sends per ordered site
 * pair (models/traffic.h), pairs that carry none left out, in site order:
 * *n of them (the caller frees the array). */
bill_bytes *bill_traffic_pairs(const scenario *s, const spec_workload *w,
                               const alloc *a, int *n);

#endif
