/* cli_bill: a bill's lines in a table and its "cost" object in --json
 * (traces/FORMATS.md, JSON outputs), for every command that reports time.
 * Invariant: prints what the bill holds; nothing is computed here. */
#ifndef SIM_CLI_CLI_BILL_H
#define SIM_CLI_CLI_BILL_H

#include <jansson.h>

#include "models/bill.h"
#include "traces/scenario.h"

/* The "cost" line (its total `per` what: "per iteration", "for the run"),
 * a line per site that holds devices or sends bytes, where each price came
 * from, what lost time cost, and the energy line. */
void cli_bill_print(const scenario *s, const bill *b, const char *per);

/* The bill as a JSON object (a new reference). */
json_t *cli_bill_json(const scenario *s, const bill *b);

#endif
