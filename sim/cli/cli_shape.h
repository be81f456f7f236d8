/* cli_shape: the part of `geodes schedule` that searches the shape
 * (--shape auto), cli_shape.c; cli_schedule.c parses its options. */
#ifndef SIM_CLI_CLI_SHAPE_H
#define SIM_CLI_CLI_SHAPE_H

#include <stdbool.h>

#include "models/alloc.h"
#include "models/diloco.h"
#include "schedules/shape.h"
#include "sim/sim.h"
#include "traces/scenario.h"

typedef struct cli_shape_args {
  shape_opts o;             /* the search's, but its transport, simulation
                               and progress (cli_schedule_shape's) */
  const char *scenario;     /* as typed, for the reproducing command */
  const char *out, *db;
  bool json, quiet;          /* quiet: no progress (--quiet) */
} cli_shape_args;

/* Searches s (the workload knobs applied, the shape's left out) and
 * prints; simulations under so. CLI_OK or CLI_ERROR (message printed). */
int cli_schedule_shape(const cli_shape_args *p, scenario *s,
                       const sim_options *so, int argc, char **argv);

#endif
