/* cli: the `geodes` front end. Each subcommand lives in its own file
 * sim/cli/cli_<name>.c as `int cli_<name>(int argc, char **argv)`, where
 * argv[0] is the subcommand's name. Exit status: 0 success, 1 error (bad input,
 * message on stderr), 2 usage error (unknown option, missing argument). */
#ifndef SIM_CLI_CLI_H
#define SIM_CLI_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/transport.h"
#include "traces/scenario.h"

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_USAGE = 2 };

int cli_run(int argc, char **argv);
int cli_scenarios(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_predict(int argc, char **argv);
int cli_simulate(int argc, char **argv);
int cli_schedule(int argc, char **argv);
int cli_transfer(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_reproduce(int argc, char **argv);
int cli_faults(int argc, char **argv);
/* `geodes trace synth ...` (cli_synth.c); argv[0] is "synth". */
int cli_trace_synth(int argc, char **argv);

/* Prints "geodes CMD: message" and the hint to use --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "geodes: message" to stderr; returns CLI_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing of an option's argument: the whole string must be a
 * finite number in [lo, hi]. False (and a usage message) otherwise. */
bool cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                   long hi, long *out);
bool cli_parse_double(const char *cmd, const char *opt, const char *s,
                      double lo, double hi, double *out);

/* Workload and cost-size options shared by simulate, predict, schedule,
 * validate and run (DESIGN.md section 9): the scenario knobs plus the TCP
 * window. Unset fields are absent as scenario_knobs_init leaves them. */
typedef struct cli_workload_opts {
  scenario_knobs k;
  long window_bytes;  /* < 0: the transport's calibrated window */
  bool idle_restart;  /* tcp: Linux's restart after idle */
} cli_workload_opts;

/* getopt_long option codes for the shared options start here. */
#define CLI_OPT_BASE 1000
/* A new option table: own (terminated by a zero entry) followed by the
 * shared workload options and the terminator. Free it with free(). */
struct option *cli_workload_options(const struct option *own);
/* The --help lines describing them. */
extern const char cli_workload_help[];

void cli_workload_init(cli_workload_opts *o);
/* Handles option code c (from getopt_long) if it is a shared one: returns 1
 * when handled, 0 when c is not a shared option, -1 on a bad argument (a
 * usage message has been printed). */
int cli_workload_parse(const char *cmd, int c, const char *arg,
                       cli_workload_opts *o);
/* The transport of a run under network model net with o's TCP options. */
transport_options cli_transport(const cli_workload_opts *o,
                                transport_model net);

/* scenario_apply with the knobs of o. Returns ERR_OK or fills e. */
int cli_workload_apply(const cli_workload_opts *o, scenario *s, err *e);

/* A usage error (CLI_USAGE) unless method is a known placement method
 * (schedule_method_names); CLI_OK otherwise. */
int cli_check_method(const char *cmd, const char *method);

/* The verdict table of `geodes validate` (one row per network model: rank
 * statistics, MAPE, regret, discordant pairs), also printed by run. */
struct validate_report;
void cli_validate_verdicts(const struct validate_report *r);

/* A JSON number, or null for NaN and infinities (DESIGN.md section 9: NaN
 * as null; jansson's json_real refuses them and the key would vanish). */
json_t *cli_json_number(double x);

/* True when stderr is a terminal (progress bars are drawn only then). */
bool cli_stderr_is_tty(void);

#endif
