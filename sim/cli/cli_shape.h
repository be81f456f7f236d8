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
  shape_goal goal;
  int stages, replicas;     /* > 0: fixed (--stages, --replicas) */
  bool diloco;              /* --dp-algo auto */
  diloco_plan plan;         /* its H, F, tau (0: none) */
  int micro[SHAPE_MAX_MICRO], nmicro; /* --micro-batches; 0: the default */
  long simulate;            /* --simulate-best; < 0: SHAPE_SIMULATE */
  const char *scenario;     /* as typed, for the reproducing command */
  const char *out, *db;
  bool json, quiet;          /* quiet: no progress (--quiet) */
  bool price;               /* the scenario prices something: each
                               configuration's dollars are shown */
  double max_usd_per_hour;  /* --max-usd-per-hour; 0: none */
} cli_shape_args;

/* Searches s (the workload knobs applied, the shape's left out) and
 * prints; simulations under so. CLI_OK or CLI_ERROR (message printed). */
int cli_schedule_shape(const cli_shape_args *p, scenario *s,
                       const sim_options *so, int argc, char **argv);

#endif
