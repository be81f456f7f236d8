/* prices: the price table of cloud instances — per instance type the GPUs
 * one instance holds, its on-demand and spot prices per hour, where and
 * when they were read and the source — as traces/data/prices.csv ships it
 * or a scenario's "prices" file replaces it (traces/FORMATS.md). A site's
 * "instance" finds its GPU-hour here unless the site states its own
 * usd_per_gpu_hour.
 * Invariant: a table that parsed holds at least one row, each type once,
 * every price finite and >= 0, every row with a date and a source. */
#ifndef TRACES_PRICES_H
#define TRACES_PRICES_H

#include <stddef.h>

#include "base/err.h"

#define PRICES_HEADER                                                    \
  "instance_type,gpus_per_instance,usd_per_hour,spot_usd_per_hour,region," \
  "date,source"
#define PRICES_BUILTIN "prices.csv"

typedef struct prices prices;

/* One row (strings owned by the table). */
typedef struct prices_row {
  const char *type, *region, *date, *source;
  int gpus;           /* GPUs one instance holds, >= 1 */
  double usd_per_hour;      /* on demand, one instance */
  double spot_usd_per_hour; /* NAN: no spot price read */
  int line;           /* its line in the file */
} prices_row;

/* Parses a table in PRICES_HEADER's columns ('#' comments, RFC 4180
 * fields); name is the file messages cite. NULL and e filled
 * ("NAME:LINE: column: message") on a bad header, a missing, negative,
 * NaN or infinite price, a row without its date or source, a type listed
 * twice, or no rows. The caller owns the result. */
prices *prices_parse(const char *text, size_t len, const char *name, err *e);

/* The built-in table (traces/data/prices.csv). */
prices *prices_builtin(err *e);

void prices_free(prices *p); /* NULL is fine */

/* The row of instance type `type` (exact name), or NULL. */
const prices_row *prices_find(const prices *p, const char *type);

/* The file the table was read from, as messages cite it. */
const char *prices_file(const prices *p);

#endif
