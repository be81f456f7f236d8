/* scenario_row: the value of a row of WORKLOAD_MAP (traces/workload.h) on
 * a scenario and on a knob record, read and written through the row's
 * offsets — what the reader, the knobs, the export, the hash and the
 * outputs walk instead of naming the fields.
 * Invariant: the C type behind an offset is the one workload.c asserts for
 * the row's target and kind; a number crosses as a double, exact for every
 * row's range (integers up to 2^40). */
#ifndef TRACES_SCENARIO_ROW_H
#define TRACES_SCENARIO_ROW_H

#include <stdbool.h>

#include "traces/scenario_types.h"

/* Row r's value on s, a number (INT, REAL, BITS; BOOL 0 or 1) or a name
 * (NAME: borrowed). SITES rows give the first site's (a knob sets every
 * site's alike); TRANSPORT rows have no value on a scenario (assert). */
double scenario_row_number(const scenario *s, int r);
const char *scenario_row_name(const scenario *s, int r);

/* Sets row r's value on s: a number, or a copy of name (the old one
 * freed); a SITES row sets every site's, a LINKS row the recorded scale
 * (the links are scaled by scenario_apply). Not for TRANSPORT rows. */
void scenario_row_set_number(scenario *s, int r, double x);
void scenario_row_set_name(scenario *s, int r, const char *name);

/* Whether row r's value on s is its default (workload_row.def; NAME rows:
 * their first name). */
bool scenario_row_is_default(const scenario *s, int r);

/* Knob r of k: given (not its absent value), and its value. */
bool scenario_knob_given(const scenario_knobs *k, int r);
double scenario_knob_number(const scenario_knobs *k, int r);
const char *scenario_knob_name(const scenario_knobs *k, int r);

/* Sets knob r of k (name borrowed), or makes it absent. */
void scenario_knob_set_number(scenario_knobs *k, int r, double x);
void scenario_knob_set_name(scenario_knobs *k, int r, const char *name);
void scenario_knob_clear(scenario_knobs *k, int r);

#endif
