/* synth: time-varying traces that are *synthetic from real* (DESIGN.md
 * section 5). A static (or varying) base trace is modulated per site pair by
 * a two-level Markov latency regime, bounded latency jitter and a bounded
 * AR(1) bandwidth process, whose parameters are derived from real
 * measurements (traces/data/synth_params.csv, compiled in).
 * Invariant: the output is a pure function of (base, params, options, seed):
 * one GSL mt19937 stream drawn in a fixed order, integer-nanosecond step
 * times and text-compared values, so the same inputs give the same bytes. */
#ifndef TRACES_SYNTH_H
#define TRACES_SYNTH_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "traces/trace.h"

typedef struct synth_params synth_params;

/* The derived parameters of one unordered site pair (plain data). */
typedef struct synth_pair {
  double lat_ratio_low;   /* latency regime levels, ratios to the base value */
  double lat_ratio_high;  /* == lat_ratio_low: a single regime, no switching */
  double jitter_ratio;    /* sd of latency around its level, fraction of it */
  double bw_sd;           /* stationary sd of the bandwidth multiplier */
  double bw_lo, bw_hi;    /* bounds of the bandwidth multiplier (0 < lo <= 1 <= hi) */
  double dwell_real_days; /* mean regime dwell seen in the data (provenance) */
  double dwell_s;         /* mean regime dwell in trace time, seconds */
  double bw_tau_s;        /* mean-reversion time of the bandwidth AR(1) */
} synth_pair;

/* Parses a parameter table (the CSV format of synth_params.csv: `#`
 * comments, then the header, one row per pair and a "*,*" default row).
 * name is used in "NAME:LINE: message" errors. Returns NULL and fills e on
 * malformed input; the caller owns the result. */
synth_params *synth_params_parse(const char *text, size_t len,
                                 const char *name, err *e);

/* The built-in table, builtin_find("synth_params.csv"). NULL and e on error. */
synth_params *synth_params_builtin(err *e);

/* Frees p; NULL is fine. */
void synth_params_free(synth_params *p);

/* The parameters of the pair {a, b} (either order), or the "*,*" row when the
 * pair is not listed. Borrowed from p. */
const synth_pair *synth_params_pair(const synth_params *p, const char *a,
                                    const char *b);

/* Number of pair rows, the "*,*" row excluded. */
int synth_params_npairs(const synth_params *p);

typedef struct synth_opts {
  double duration_s;    /* last step time is the largest k*step_s <= this */
  double step_s;        /* > 0; rounded to whole nanoseconds */
  uint64_t seed;        /* seeds gsl_rng_mt19937 */
  double dwell_s;       /* > 0 overrides every pair's dwell_s; 0: the table's */
  const char *command;  /* written as "# generated_by:"; NULL: omitted */
  const char *base_name;/* written as "# base:"; NULL: omitted */
} synth_opts;

/* Writes the synthetic trace (CSV of DESIGN.md section 5: full snapshot at
 * t = 0 including each site with itself, then only changed pairs) to out.
 * Returns ERR_OK, ERR_RANGE for bad options or for an output trace_load
 * could not read back (FILE_MAX_BYTES, TRACE_MAX_BYTES: checked before
 * writing anything), ERR_CONFIG for a base giving path keys (trace.h:
 * they are not modulated, and dropping them would change the network),
 * ERR_IO when writing fails. */
int synth_write(FILE *out, const trace *base, const synth_params *p,
                const synth_opts *o, err *e);

#endif
