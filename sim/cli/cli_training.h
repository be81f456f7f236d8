/* cli_training: the options of a training run shared by the subcommands
 * that simulate (simulate, sweep's points), their checks and the printing
 * of a run's result (sim/cli/cli_training.c). */
#ifndef SIM_CLI_CLI_TRAINING_H
#define SIM_CLI_CLI_TRAINING_H

#include "sim/cli/cli.h"
#include "sim/training.h"
#include "traces/fault.h"

typedef struct cli_training_opts {
  sim_training_opts o;     /* what the run gets */
  const char *faults_file; /* --faults, or NULL */
  fault_trace *faults;     /* loaded by cli_training_load (owned) */
  bool iterations_given;
  bool active;             /* some training option was given */
} cli_training_opts;

void cli_training_init(cli_training_opts *t);

/* own (zero-terminated) followed by the training options and the
 * terminator; free() it. Chain it before cli_workload_options. */
struct option *cli_training_options(const struct option *own);

/* The --help lines describing them. */
extern const char cli_training_help[];

/* Handles getopt code c if it is a training option: 1 handled, 0 not one,
 * -1 a bad argument (a usage message printed). */
int cli_training_parse(const char *cmd, int c, const char *arg,
                       cli_training_opts *t);

/* After parsing: --iterations and --duration-s exclude each other (a usage
 * error); replan's method defaults to method (the run's, may be NULL). */
int cli_training_check(const char *cmd, cli_training_opts *t,
                       const char *method);

/* Loads --faults against s (its errors FILE:LINE in e). */
int cli_training_load(cli_training_opts *t, const scenario *s, err *e);

void cli_training_free(cli_training_opts *t);

/* The fields of DESIGN.md section 9 for a run: iterations, total_s,
 * samples_per_s, lost_s by cause and total, the iteration summary and the
 * recovery's counts, added to o. */
void cli_training_json(json_t *o, const sim_training_result *r,
                       const cli_training_opts *t);

/* The same as a table on stdout. */
void cli_training_table(const sim_training_result *r,
                        const cli_training_opts *t);

#endif
