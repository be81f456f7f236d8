/* cli: the `geodes` front end. Each subcommand lives in its own file
 * sim/cli/cli_<name>.c as `int cli_<name>(int argc, char **argv)`, where
 * argv[0] is the subcommand's name: it parses (its option table, read by
 * cli_opt_parse), calls the libraries, and prints. Exit status: 0 success,
 * 1 error (bad input, message on stderr), 2 usage error (unknown option,
 * missing argument). */
#ifndef SIM_CLI_CLI_H
#define SIM_CLI_CLI_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/costcmd.h"
#include "analysis/db.h"
#include "models/transport.h"
#include "sim/cli/cli_opt.h"
#include "traces/scenario.h"
#include "traces/workload.h"

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
int cli_calibrate(int argc, char **argv);
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
  const char *grad_bits, *activation_bits; /* one of workload.h's widths */
  long window_bytes;  /* < 0: the transport's calibrated window */
  bool idle_restart;  /* tcp: Linux's restart after idle */
  const char *layers_per_stage;  /* "a,b,..." or "balanced"; NULL: absent */
  const char *params; /* a params.json (analysis/params_file.h); NULL */
} cli_workload_opts;

/* The code of an err the front end fills with a usage error found after
 * loading (--layers-per-stage against the scenario's stages and layers):
 * cli_fail prints it as one and the command exits 2. */
#define CLI_ERR_USAGE 1

/* The digits of an integer macro, for help lines: CLI_STR(SEARCH_SIM_STARTS)
 * is "4". */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* The help lines of --alloc and --method (simulate, predict). */
#define CLI_ALLOC_HELP "{\"pipelines\": [[d, ...], ...]}: row r replica r"
#define CLI_METHOD_HELP                                  \
  "dtfm-identity, megatron, random (seeded), or a\n"     \
  "search: random-search, greedy, gcma, hybrid, sim\n"   \
  "(DT-FM's settings: population 100, 4900 trials)"

/* Every knob absent, the calibrated window, no idle restart. */
void cli_workload_init(cli_workload_opts *o);

/* The entries of the workload options, setting the fields of *wo, for the
 * end of a subcommand's option table (before CLI_OPT_END). */
#define CLI_WORKLOAD_OPTS(wo)                                                \
  CLI_OPT_GROUP("Workload options (override the scenario's defaults):", 27), \
      CLI_OPT_INT(0, "layers", "N", &(wo)->k.layers, 1, SCENARIO_MAX_LAYERS, \
                  "transformer layers"),                                     \
      CLI_OPT_INT(0, "batch", "B", &(wo)->k.batch, 1,                        \
                  SCENARIO_KNOB_MAX_BATCH, "global batch, sequences"),       \
      CLI_OPT_INT(0, "micro-batch", "m", &(wo)->k.micro_batch, 1,            \
                  SCENARIO_KNOB_MAX_MICRO_BATCH,                             \
                  "micro-batch size, sequences"),                            \
      CLI_OPT_INT(0, "micro-batches-per-pass", "K",                          \
                  &(wo)->k.micro_batches_per_pass, 1, SCENARIO_KNOB_MAX_MBPP, \
                  "micro-batches per GPipe pass"),                           \
      CLI_OPT_NAME(0, "schedule", NULL, &(wo)->k.schedule,                   \
                   workload_schedules, "pipeline schedule"),                 \
      CLI_OPT_NAME(0, "dp-algo", NULL, &(wo)->k.dp_algo, workload_dp_algos,  \
                   "\ndata-parallel gradient synchronisation"),              \
      CLI_OPT_STRING(0, "gpu", "NAME", &(wo)->k.gpu,                         \
                     "GPU type of every device"),                            \
      CLI_OPT_STRING(0, "layers-per-stage", "a,b,...", &(wo)->layers_per_stage, \
                     "layers of each stage (D_pp entries >= 1,\n"         \
                     "summing to the layers), or 'balanced': per\n"        \
                     "allocation, by each stage's slowest device\n"        \
                     "within memory (default: the even split)"),          \
      CLI_OPT_INT(0, "seed", "S", &(wo)->k.seed, 0, SCENARIO_MAX_SEED,       \
                  "seed of every random choice"),                            \
      CLI_OPT_NAME(0, "runtime", NULL, &(wo)->k.runtime, workload_runtimes,  \
                   "DT-FM's runtime or Megatron-LM's (1F1B\n"                \
                   "with blocking point-to-point calls)"),                   \
      CLI_OPT_INT(0, "window-bytes", "W", &(wo)->window_bytes,               \
                  TRANSPORT_WINDOW_MIN_BYTES, TRANSPORT_WINDOW_MAX_BYTES,    \
                  "TCP window per socket for --network tcp\n"                \
                  "(1.45 MB, calibrated)"),                                  \
      CLI_OPT_INT(0, "sockets", "N", &(wo)->k.sockets, 1,                    \
                  TRANSPORT_SOCKETS_MAX,                                     \
                  "TCP sockets per NCCL connection, 1..64\n"                 \
                  "(every site's nccl_sockets)"),                            \
      CLI_OPT_FLAG(0, "idle-restart", &(wo)->idle_restart,                   \
                   "tcp: a socket idle for an RTO halves its\n"              \
                   "window per RTO (Linux's default; off:\n"                 \
                   "DT-FM's measurements show no restarts)"),                \
      CLI_OPT_STRING(0, "params", "FILE", &(wo)->params,                     \
                     "physical parameters from FILE, a params.json\n"      \
                     "(geodes calibrate -o; default: the built-in)"),      \
      CLI_OPT_REAL(0, "activation-gb", "X", &(wo)->k.activation_gb, 1e-12,   \
                   SCENARIO_KNOB_MAX_GB,                                     \
                   "cost model: activation volume c_pp, GB"),                \
      CLI_OPT_REAL(0, "gradient-gb", "Y", &(wo)->k.gradient_gb, 1e-12,       \
                   SCENARIO_KNOB_MAX_GB, "cost model: gradient volume c_dp, GB"), \
      CLI_OPT_INT(0, "inner-steps", "H", &(wo)->k.inner_steps, 1, INT_MAX,    \
                  "diloco: inner steps per outer step (100)"),               \
      CLI_OPT_INT(0, "fragments", "F", &(wo)->k.fragments, 1, INT_MAX,        \
                  "streaming-diloco: fragments, dividing the\n"              \
                  "layers and H (1)"),                                       \
      CLI_OPT_INT(0, "overlap-steps", "T", &(wo)->k.overlap_steps, 0,         \
                  INT_MAX, "streaming-diloco: inner steps an exchange\n"     \
                  "overlaps, below H / F (0)"),                              \
      CLI_OPT_NAME(0, "grad-bits", NULL, &(wo)->grad_bits,                    \
                   workload_grad_bits,                                        \
                   "width of the synchronised values (16)"),                 \
      CLI_OPT_NAME(0, "activation-bits", NULL, &(wo)->activation_bits,        \
                   workload_act_bits,                                         \
                   "\nwidth of the pipeline's activations and\n"              \
                   "their gradients, as AC-SGD (16)")
/* A user's cost model (DESIGN.md section 10) on validate, schedule and
 * sweep: the command and its per-candidate timeout (<= 0: the default). */
typedef struct cli_cost_cmd_opts {
  const char *cmd;
  double timeout_s;
} cli_cost_cmd_opts;

/* Its entries, under their own heading: for the end of an option table
 * (after CLI_OPT_HELP, before the workload options or CLI_OPT_END). */
#define CLI_COST_CMD_OPTS(co)                                                 \
  CLI_OPT_GROUP("A user's cost model (DESIGN.md section 10):", 20),          \
      CLI_OPT_STRING(0, "cost-cmd", "CMD", &(co)->cmd,                       \
                 "a cost model: CMD (run by /bin/sh) reads JSON\n"           \
                 "lines (header, then candidates) and answers\n"             \
                 "{\"id\": k, \"predicted_s\": x} per candidate"),           \
      CLI_OPT_REAL(0, "cost-timeout-s", "T", &(co)->timeout_s, 0.001, 86400, \
                   "seconds CMD may take per candidate\n"                   \
                   "(default " CLI_STR(COSTCMD_TIMEOUT_S) ")")

/* The transport of a run under network model net with o's TCP options. */
transport_options cli_transport(const cli_workload_opts *o,
                                transport_model net);

/* --params (the file's parameters set first), then scenario_apply with
 * the knobs of o, --layers-per-stage checked against s's stages and
 * layers. Returns ERR_OK or fills e (CLI_ERR_USAGE for a
 * bad --layers-per-stage). */
int cli_workload_apply(const cli_workload_opts *o, scenario *s, err *e);

/* After cli_workload_apply: the checks of DiLoCo's knobs against the
 * workload (spec_workload_resolve's), as usage errors of cmd naming the
 * option (CLI_USAGE, message printed), else CLI_OK. Other resolve errors
 * are left to the command. */
int cli_workload_usage(const char *cmd, const cli_workload_opts *o,
                       const scenario *s);
/* Prints e as cmd's usage error (CLI_ERR_USAGE; returns CLI_USAGE) or as
 * an error (returns CLI_ERROR). */
int cli_fail(const char *cmd, const err *e);

/* A usage error (CLI_USAGE) unless method is a known placement method
 * (schedule_method_names); CLI_OK otherwise. */
int cli_check_method(const char *cmd, const char *method);

/* The verdict table of `geodes validate` (one row per network model: rank
 * statistics, MAPE, regret, discordant pairs), also printed by run. */
struct validate_report;
void cli_validate_verdicts(const struct validate_report *r);

/* An output file written whole or not at all: "-" is stdout; a path is
 * written as PATH.tmp and renamed over PATH once complete, so a command
 * that fails halfway leaves what the user had there. */
typedef struct cli_out {
  FILE *f;
  const char *path; /* as given */
  char *tmp;        /* NULL for stdout */
} cli_out;

/* Opens o for path; CLI_OK, or the error printed naming path. */
int cli_out_open(cli_out *o, const char *path);
/* Closes o: with rc CLI_OK renames it into place (an error printed if that
 * fails), else removes the partial file. Returns rc or the close's error. */
int cli_out_close(cli_out *o, int rc);

/* Prints o as one line on stdout (jansson's dump flags: CLI_JSON, the
 * compact form with every digit of a double, unless a command's output is
 * indented) and releases it. The one writer of `--json` output. */
#define CLI_JSON (JSON_COMPACT | JSON_REAL_PRECISION(17))
void cli_print_json(json_t *o, size_t flags);

/* A JSON number, or null for NaN and infinities (DESIGN.md section 9: NaN
 * as null; jansson's json_real refuses them and the key would vanish). */
json_t *cli_json_number(double x);

/* The `runs` row of this invocation: its command line ("geodes" and argv,
 * space-joined: *cmd, malloc'ed, the caller frees it), this build's
 * version and git revision, and s's name and seed (s NULL: none, -1). The
 * one builder of run rows (run, schedule, validate, sweep). */
db_run cli_run_row(int argc, char **argv, const scenario *s, char **cmd);

/* True when stderr is a terminal (progress bars are drawn only then). */
bool cli_stderr_is_tty(void);

#endif
