/* shape_rows: a shape search's configurations (schedules/shape.h) as rows
 * of the results store (analysis/db.h), under the study "shape" and the
 * method "shape": what `geodes schedule --shape auto --db` records.
 * Invariant: one row per configuration that fits, keyed by the run and its
 * index in the search's enumeration; the dollars are the ones the search
 * judged it by (its deciding time), absent without prices. */
#ifndef ANALYSIS_SHAPE_ROWS_H
#define ANALYSIS_SHAPE_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/db.h"
#include "schedules/shape.h"
#include "traces/scenario.h"

/* Configuration c of a search on s as a row into x (db_result_init'ed
 * here; db_result_clear frees its alloc): key as given (borrowed, as are
 * s's and net's names), the network model net, s's seed and layers, c's
 * batch, micro-batch, dp algorithm, fragments, allocation, predicted and
 * simulated times, samples/s and, when price, its dollars. */
void shape_rows_result(const scenario *s, const shape_config *c,
                       const char *net, bool price, const char *key,
                       db_result *x);

/* Every configuration of r as a row of run ("shape run=RUN config=I").
 * ERR_OK, or the store's error in e. */
int shape_rows_put(db *d, int64_t run, const scenario *s,
                   const shape_result *r, const char *net, bool price,
                   err *e);

#endif
