/* fault_synth: fault traces drawn from real statistics (`geodes faults
 * synth`): spot interruptions of each instance of a scenario at the rate of
 * its type's Spot Instance Advisor band (traces/data/fault_params.csv,
 * compiled in), each outage lasting until a replacement has booted, and,
 * when asked, outages of the links between sites at a research WAN's
 * measured rate. The file's header says what is measured and what is not.
 * Invariant: the output is a pure function of (scenario, table, options,
 * seed): one gsl_rng_mt19937 stream drawn in a fixed order (instances in
 * device order, then site pairs), integer-nanosecond times, rows sorted
 * stably by time, so the same inputs give the same bytes. */
#ifndef TRACES_FAULT_SYNTH_H
#define TRACES_FAULT_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "traces/scenario.h"

/* The fixed numbers of the model, each with its source. */
/* "the trailing month" of the Advisor's definition, seconds (30 days). */
#define FAULT_SYNTH_MONTH_S 2592000.0
/* How long an interrupted instance is missing: the boot of a replacement,
 * about 40 s for an EC2 instance (Depot, "Making EC2 boot time 8x faster",
 * 2024: 40 s before their optimisations), assuming spare capacity. */
#define FAULT_SYNTH_REPLACE_S 40.0
/* Downtime of a WAN link: 1.2 to 2.7 days a year (Turner, Levchenko,
 * Snoeren, Savage, "California Fault Lines", SIGCOMM 2010, Table 4, CENIC's
 * links; midpoint 1.95 days). */
#define FAULT_SYNTH_LINK_DOWN_FRAC (1.95 / 365.0)
/* Mean length of one WAN outage: 290 hours over 88 outages of a state-wide
 * network in two years (lastinfirstout.net, "Wide Area Network Outage
 * Analysis", 2008): 3.3 h. */
#define FAULT_SYNTH_LINK_MEAN_S (290.0 * 3600.0 / 88.0)

typedef struct fault_params fault_params;

/* Parses the table (fault_params.csv's format: '#' comments, the header
 * instance_type,gpus_per_instance,band,monthly_frac, one row per instance
 * type); "NAME:LINE: message" errors. NULL and e on error. */
fault_params *fault_params_parse(const char *text, size_t len,
                                 const char *name, err *e);

/* The built-in table. NULL and e on error. */
fault_params *fault_params_builtin(err *e);

void fault_params_free(fault_params *p);

/* The row of an instance type (a site's "instance" key): its monthly
 * fraction, GPUs per instance and band (NULL: not wanted; borrowed);
 * false when the table has no such type. */
bool fault_params_type(const fault_params *p, const char *instance_type,
                       double *monthly_frac, int *gpus_per_instance,
                       const char **band);

/* The table's instance types, "a, b, c", into buf (cut at size). */
void fault_params_types(const fault_params *p, char *buf, size_t size);

typedef struct fault_synth_opts {
  double duration_s;    /* > 0: interruptions start in [0, duration_s) */
  uint64_t seed;        /* seeds gsl_rng_mt19937 */
  double rate_scale;    /* > 0: multiplies every rate (1: as measured) */
  double replace_s;     /* > 0: how long an interrupted instance is gone */
  bool link_outages;    /* also outages of the links between sites */
  double monthly_frac;  /* in (0, 1): every site's, overriding the table;
                           0: the table's */
  const char *command;  /* written as "# generated_by:"; NULL: omitted */
} fault_synth_opts;

/* Defaults: rate_scale 1, replace_s FAULT_SYNTH_REPLACE_S, no link outages,
 * the table's fractions; duration 0 and seed 0 (the caller sets them). */
fault_synth_opts fault_synth_opts_default(void);

/* The per-instance interruption rate (per second) of a monthly fraction f:
 * -ln(1 - f) / FAULT_SYNTH_MONTH_S, so that an instance survives a month
 * with probability 1 - f. */
double fault_synth_rate(double monthly_frac);

/* Writes the fault trace for s to out (path names it in messages).
 * Returns ERR_OK; ERR_RANGE for bad options; ERR_MISSING for a site that names
 * no instance type, ERR_UNKNOWN for a type the table lacks, when no
 * monthly_frac is given; ERR_MEMORY when more rows
 * than FAULT_MAX_EVENTS would be drawn (checked before writing anything);
 * ERR_IO when writing fails. */
int fault_synth_write(FILE *out, const char *path, const scenario *s,
                      const fault_params *p, const fault_synth_opts *o,
                      err *e);

#endif
