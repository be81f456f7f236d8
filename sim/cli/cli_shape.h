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

/* An allocation file that names fewer devices than its scenario has (what
 * --shape auto writes when it leaves devices idle): its shape and devices.
 * Invariant: dev holds replicas x stages distinct devices of the parent,
 * row-major; keep the same devices, increasing. */
typedef struct cli_subset {
  int replicas, stages, n;
  int *dev, *keep;
} cli_subset;

/* Reads path's pipelines: when they are a proper subset of s's devices,
 * fills sub and sets s's stages and replicas to the file's (before the
 * workload knobs, so that they are checked against them) and returns true.
 * False (sub empty) when the file names every device, or does not read:
 * alloc_read then says why. */
bool cli_subset_peek(const char *path, scenario *s, cli_subset *sub);

/* After the knobs: the view of s over sub's devices (free with
 * scenario_subset_free) and the allocation on its numbers (*a). NULL with
 * e filled when the file's pipelines are not a valid allocation. */
scenario *cli_subset_view(const scenario *s, const cli_subset *sub,
                          const char *path, alloc **a, err *e);

void cli_subset_free(cli_subset *sub);

#endif
