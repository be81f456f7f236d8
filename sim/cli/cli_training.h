/* cli_training: the options of a training run shared by the subcommands
 * that simulate (simulate, sweep's points), their checks and the printing
 * of a run's result (sim/cli/cli_training.c). */
#ifndef SIM_CLI_CLI_TRAINING_H
#define SIM_CLI_CLI_TRAINING_H

#include "schedules/schedule.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_opt.h"
#include "sim/cli/cli_progress.h"
#include "sim/recovery.h"
#include "sim/training.h"
#include "traces/fault.h"

typedef struct cli_training_opts {
  sim_training_opts o;     /* what the run gets (cli_training_check) */
  const char *faults_file; /* --faults, or NULL */
  fault_trace *faults;     /* loaded by cli_training_load (owned) */
  /* the options as parsed (CLI_TRAINING_OPTS); 0, NULL or -1: not given */
  long iterations, checkpoint_every;
  double duration_s, storage_gbps;
  int recovery;
  bool replan_on_change;
  const char *replan_method;
  bool quiet;              /* --quiet: no progress on stderr */
  bool active;             /* some training option was given */
} cli_training_opts;

void cli_training_init(cli_training_opts *t);

/* The entries of the training options, setting the fields of *t, for a
 * subcommand's option table (before the workload options). */
#define CLI_TRAINING_OPTS(t)                                                 \
  CLI_OPT_GROUP("Training run options (many iterations on one clock):", 23), \
      CLI_OPT_INT(0, "iterations", "N", &(t)->iterations, 1,                 \
                  SIM_TRAINING_MAX_ITERATIONS,                               \
                  "run N consecutive iterations (default 1)"),               \
      CLI_OPT_REAL(0, "duration-s", "T", &(t)->duration_s, 1e-9,             \
                   SIM_TRAINING_MAX_S,                                       \
                   "start iterations until simulated time T"),               \
      CLI_OPT_STRING(0, "faults", "FILE", &(t)->faults_file,                 \
                     "a fault trace (geodes faults --help)"),                \
      CLI_OPT_ENUM(0, "recovery", "POLICY", &(t)->recovery,                  \
                   sim_recovery_names, NULL,                                 \
                   "what a lost device does: restart (from the\n"            \
                   "last checkpoint, after it is back), reroute\n"           \
                   "(the surviving replicas go on), replan (the\n"           \
                   "placement method runs on the devices left)"),            \
      CLI_OPT_INT(0, "checkpoint-every", "K", &(t)->checkpoint_every, 1,     \
                  SIM_TRAINING_MAX_ITERATIONS,                               \
                  "a checkpoint after every K iterations (none\n"            \
                  "by default: a restart goes back to the start)"),          \
      CLI_OPT_REAL(0, "storage-gbps", "X", &(t)->storage_gbps, 1e-6, 1e9,    \
                   "checkpoint storage per device (the runtime's:\n"        \
                   "dtfm, megatron 1.5, a p3.2xlarge's EBS; modern\n"       \
                   "16, local NVMe)"),                                       \
      CLI_OPT_FLAG(0, "replan-on-change", &(t)->replan_on_change,            \
                   "migrate when the moving network makes another\n"         \
                   "placement faster by more than the move costs"),          \
      CLI_OPT_NAME(0, "replan-method", "NAME", &(t)->replan_method,          \
                   schedule_method_names(),                                  \
                   cli_replan_help()),                                       \
      CLI_OPT_QUIET(&(t)->quiet)

/* The help of --replan-method, its default method from schedules/ (a
 * buffer of this module, built on first use). */
const char *cli_replan_help(void);

/* After parsing: --iterations and --duration-s exclude each other (a usage
 * error); fills t->o from the
 * options given, replan's method defaulting to method (the run's, may be
 * NULL), and says whether any was given (t->active). */
int cli_training_check(const char *cmd, cli_training_opts *t,
                       const char *method);

/* After the workload options are applied to s: DiLoCo's --iterations and
 * --checkpoint-every count inner steps and must be multiples of its
 * --inner-steps (a usage error, exit 2, naming both). */
int cli_training_usage(const char *cmd, const cli_training_opts *t,
                       const scenario *s);

/* Starts bar (cli_progress_start; --quiet: off) for cmd's run and sets
 * t->o's progress hook to it: iterations kept, or simulated seconds of
 * --duration-s. The caller ends it (cli_progress_end) after the run. */
void cli_training_progress(cli_training_opts *t, const char *cmd,
                           cli_progress *bar);

/* Loads --faults against s (its errors FILE:LINE in e). */
int cli_training_load(cli_training_opts *t, const scenario *s, err *e);

void cli_training_free(cli_training_opts *t);

/* r's iterations as the stream of o's "iterations" (r borrowed). */
cli_json_stream cli_training_iterations(const sim_training_result *r);

/* The fields of DESIGN.md section 9 for a run: iterations, total_s,
 * samples_per_s, lost_s by cause and total, the iteration summary and the
 * recovery's counts, added to o; "iterations" is a placeholder that
 * cli_training_iterations(r) streams (cli_print_json_stream). */
void cli_training_json(json_t *o, const sim_training_result *r,
                       const cli_training_opts *t);

/* The same as a table on stdout. */
void cli_training_table(const sim_training_result *r,
                        const cli_training_opts *t);

#endif
