/* study: the study of one scenario that `geodes run` makes — the fixed
 * placements and the schedulers' choices (study.c's list), each simulated
 * under every network model beside its DT-FM score and predicted time and
 * stored as the sweep point it is (same key, same identity: a later sweep
 * reuses it), the convergence of each search under its method's name, and
 * the validation of the cost model on a sample (as `geodes validate
 * --network all`), all under one `runs` row of one results database.
 * What it finds reaches the caller through hooks, in the order a report
 * prints it; the study itself prints nothing. */
#ifndef ANALYSIS_STUDY_H
#define ANALYSIS_STUDY_H

#include <stdint.h>

#include "analysis/db.h"
#include "analysis/validate.h"
#include "models/transport.h"
#include "traces/scenario.h"

/* What the caller hears, in this order; any hook may be NULL; ctx is the
 * caller's. rows[m] is the placement's row under network model m
 * (borrowed for the call). */
typedef struct study_hooks {
  void *ctx;
  void (*table)(void *ctx);  /* the placements start */
  void (*placement)(void *ctx, const char *method,
                    const db_result rows[TRANSPORT_NMODELS]);
  void (*table_done)(void *ctx);  /* every placement is stored */
  /* The validation, before it is stored (r borrowed for the call). */
  void (*validated)(void *ctx, const validate_report *r);
  /* Where the study stands: done of total steps of a phase, "placements"
   * (a placement under one network model, stored), "search candidates"
   * (of the search placing one, between two placements) or "validation
   * simulations" (of the sample); a static string. */
  void (*progress)(void *ctx, const char *phase, long done, long total);
} study_hooks;

typedef struct study_opts {
  const char *name;             /* the scenario as named (points' keys) */
  const scenario *s;            /* loaded, knobs applied (borrowed) */
  const scenario_knobs *knobs;  /* the knobs applied (the window as given,
                                   < 0: none): in the points' keys */
  transport_options transport;  /* window, idle restart; the model is each
                                   point's */
  int samples;                  /* validation sample (>= 2; less: the
                                   scenario's validate_default_samples) */
  const char *db_path;
  db_run run;                   /* the `runs` row (strings borrowed) */
  study_hooks hooks;
} study_opts;

/* The checks a study needs before it opens the database (an unknown GPU of
 * s fails here, before a run row is written). ERR_OK or e filled. */
int study_check(const scenario *s, err *e);

/* Runs the study of o into the database at o->db_path. Returns ERR_OK, or
 * an error with e filled; the run row is marked "ok" or "error". */
int study_run(const study_opts *o, err *e);

#endif
