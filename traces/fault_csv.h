/* fault_csv: the fault trace's CSV format read into its events (the replay
 * is traces/fault.c's): comments ("# key: value"), the header FAULT_HEADER,
 * then one event a row.
 * Invariant: the events come back in file order with their times
 * non-decreasing, every target a device or a site of the scenario read
 * against, every duration > 0 (or FAULT_FOREVER) ending within the span a
 * simulation covers (base/simtime.h), every factor > 0 where the kind has
 * one and 1 where it has none. */
#ifndef TRACES_FAULT_CSV_H
#define TRACES_FAULT_CSV_H

#include <stddef.h>

#include "base/err.h"
#include "traces/csv.h"
#include "traces/fault_kind.h"
#include "traces/scenario.h"

/* Reads text (len bytes, named name in messages) against s: *ev (n_ev of
 * them) and the comments, owned by the caller. ERR_OK, or e filled with
 * "NAME:LINE: message" (fault_parse lists the causes) and nothing owned. */
int fault_csv_read(const char *text, size_t len, const char *name,
                   const scenario *s, fault_event **ev, size_t *n_ev,
                   csv_comment **comments, size_t *ncomments, err *e);

#endif
