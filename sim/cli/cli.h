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
#include "base/file_out.h"
#include "base/json_out.h"
#include "models/alloc.h"
#include "models/transport.h"
#include "sim/cli/cli_opt.h"
#include "sim/cli/cli_parse.h"
#include "sim/sim.h"
#include "traces/scenario.h"
#include "traces/workload.h"

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
int cli_explain(int argc, char **argv);
int cli_net(int argc, char **argv);     /* cli_net.c: net import */
int cli_models(int argc, char **argv); /* cli_specs.c */
int cli_gpus(int argc, char **argv);   /* cli_specs.c */
/* The built-in scenarios as traces/SCENARIOS.md's Markdown table
 * (cli_specs.c). */
void cli_scenarios_markdown(scenario *const *all, int n);
/* `geodes trace synth ...` (cli_synth.c); argv[0] is "synth". */
int cli_trace_synth(int argc, char **argv);

/* A subcommand's actions (`geodes trace check|synth`): each one's name and
 * the function that runs it, argv[0] being the action's name. */
typedef struct cli_action {
  const char *name;
  int (*run)(int argc, char **argv);
} cli_action;

/* Runs the action of the n in actions that argv[1] names (argv[0] is the
 * subcommand cmd); --help or -h prints usage on stdout (CLI_OK); no action
 * or an unknown one is cmd's usage error naming the actions. The one
 * dispatch of the subcommands that have actions (trace, faults, net). */
int cli_actions(const char *cmd, const char *usage, const cli_action *actions,
                size_t n, int argc, char **argv);

/* Workload and cost-size options shared by simulate, predict, schedule,
 * validate and run (DESIGN.md section 9): the scenario knobs (one option
 * per row of traces/workload.h's WORKLOAD_MAP, the TCP window's included)
 * plus the layer split, the transport's idle restart and the parameters
 * file. Unset fields are absent as scenario_knobs_init leaves them. */
typedef struct cli_workload_opts {
  scenario_knobs k;
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

/* The help lines of --alloc and --method (simulate, predict): the
 * methods from schedule_method_names, the search's settings from
 * schedules/search.h (a buffer of this module, built on first use). */
#define CLI_ALLOC_HELP "{\"pipelines\": [[d, ...], ...]}: row r replica r"
const char *cli_method_help(void);

/* The option of row r of WORKLOAD_MAP (traces/workload.h), setting knob r
 * of k: its name, argument, help and the row's range or names (an INT, a
 * REAL in its range, open or not, a NAME or STRING, a width, a boolean). */
cli_opt cli_knob_opt(int r, scenario_knobs *k);

/* Every knob absent, the calibrated window, no idle restart. */
void cli_workload_init(cli_workload_opts *o);

/* The entries of the workload options, setting the fields of *wo, for the
 * end of a subcommand's option table (before CLI_OPT_END): one per row of
 * WORKLOAD_MAP, in its order, then the layer split, the idle restart and
 * the parameters file. */
#define CLI_KNOB_OPT_(wo, f, ...) cli_knob_opt(WORKLOAD_##f, &(wo)->k),
#define CLI_WORKLOAD_OPTS(wo)                                                \
  CLI_OPT_GROUP("Workload options (override the scenario's defaults):", 27), \
      WORKLOAD_MAP(CLI_KNOB_OPT_, wo)                                        \
      CLI_OPT_STRING(0, "layers-per-stage", "a,b,...", &(wo)->layers_per_stage, \
                     "layers of each stage (D_pp entries >= 1,\n"         \
                     "summing to the layers), or 'balanced': per\n"        \
                     "allocation, by each stage's slowest device\n"        \
                     "within memory (default: the even split)"),          \
      CLI_OPT_FLAG(0, "idle-restart", &(wo)->idle_restart,                   \
                   "tcp: a socket idle for an RTO halves its\n"              \
                   "window per RTO (Linux's default; off:\n"                 \
                   "DT-FM's measurements show no restarts)"),                \
      CLI_OPT_STRING(0, "params", "FILE", &(wo)->params,                     \
                     "physical parameters from FILE, a params.json\n"      \
                     "(geodes calibrate -o; default: the built-in)")
/* A user's cost model (DESIGN.md section 10) on validate, schedule and
 * sweep: the command and its per-candidate timeout (<= 0: the default). */
typedef struct cli_cost_cmd_opts {
  const char *cmd;
  double timeout_s;
} cli_cost_cmd_opts;

/* Its entries, under their own heading: for the end of an option table
 * (after CLI_OPT_HELP, before the workload options or CLI_OPT_END). */
#define CLI_COST_CMD_OPTS(co)                                                 \
  CLI_OPT_GROUP("A user's cost model (protocol: traces/FORMATS.md):", 20), \
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

/* `geodes scenarios --export NAME` into out ("-": stdout) and --show NAME
 * (cli_export.c). CLI_OK or the error printed. */
int cli_scenarios_export(const char *name, const char *out);
int cli_scenarios_show(const char *name);

/* cli_workload_apply of o on s, after joining the allocation file path's
 * (--alloc; NULL: none) workload, shape and split to o's knobs
 * (models/alloc_file.h: a value o gives otherwise is an error naming
 * both; --layers-per-stage must agree with the file's split); then *a is
 * the file's allocation, on *view (free with scenario_subset_free) when
 * the file names some of s's devices (the others idle), else on s (*view
 * NULL). ERR_OK, or e filled (CLI_ERR_USAGE as cli_workload_apply) and
 * *a, *view NULL. */
int cli_workload_alloc(const cli_workload_opts *o, const char *path,
                       scenario *s, alloc **a, scenario **view, err *e);

/* After cli_workload_apply: the checks of DiLoCo's knobs against the
 * workload (spec_workload_resolve's), as usage errors of cmd naming the
 * option (CLI_USAGE, message printed), else CLI_OK. Other resolve errors
 * are left to the command. */
int cli_workload_usage(const char *cmd, const cli_workload_opts *o,
                       const scenario *s);
/* Prints e as cmd's usage error (CLI_ERR_USAGE; returns CLI_USAGE) or as
 * an error (returns CLI_ERROR). */
int cli_fail(const char *cmd, const err *e);

/* A usage error (CLI_USAGE) unless *method is a known placement method
 * (schedule_method_names, or a former name of one); CLI_OK otherwise, *method
 * then its current name (outputs name a placement one way). */
int cli_check_method(const char *cmd, const char **method);

/* cmd's placement source: a usage error (CLI_USAGE) unless exactly one of
 * alloc_path and *method is given; then cli_check_method of *method, if it
 * is the one. */
int cli_check_placement(const char *cmd, const char *alloc_path,
                        const char **method);

/* The verdict table of `geodes validate` (one row per network model: rank
 * statistics, MAPE, regret, discordant pairs), also printed by run. */
struct validate_report;
void cli_validate_verdicts(const struct validate_report *r);

/* An output of a command: "-" is stdout, anything else a file_out
 * (base/file_out.h: written whole or not at all, through links, devices
 * and pipes; folders and the command's own inputs refused). */
typedef struct cli_out {
  FILE *f;
  file_out fo; /* fo.f NULL: stdout */
} cli_out;

/* Opens o for path, named in messages as what ("the allocation"); CLI_OK,
 * or the error printed. */
int cli_out_open(cli_out *o, const char *path, const char *what);
/* Closes o: with rc CLI_OK puts the file in place (an error printed if that
 * fails), else removes the partial file. Returns rc or the close's error. */
int cli_out_close(cli_out *o, int rc);

/* Before a command writes out (NULL: none) and then records into the
 * results store (NULL: none): the store becomes an input of the run, so
 * no output replaces it, and out naming it as typed is cmd's usage error
 * (CLI_USAGE, printed; a store not made yet has no file to compare). */
int cli_out_not_db(const char *cmd, const char *out, const char *store);

/* Prints o as one line on stdout (jansson's dump flags: CLI_JSON, the
 * compact form, unless a command's output is indented; every real in the
 * fewest digits that read back as the same double: json_out_write) and
 * releases it. The one writer of `--json` output. */
#define CLI_JSON (JSON_COMPACT | JSON_REAL_PRECISION(17))
void cli_print_json(json_t *o, size_t flags);


/* An array that cli_print_json_stream writes element by element, each one
 * built by item(ctx, k) for k < n and released once written (NULL: it
 * could not be built), so a long run's --json never holds its whole
 * document in memory. */
typedef struct cli_json_stream {
  const char *key; /* the member of o whose value the array replaces */
  size_t n;
  json_t *(*item)(const void *ctx, size_t k);
  const void *ctx;
} cli_json_stream;

/* cli_print_json of o (compact flags only) with st's array streamed in
 * place of o's member st->key: the same bytes as the whole document would
 * print. CLI_OK, or CLI_FAIL with a message when a part could not be
 * built or written (the output then ends short; stdout's error is main's
 * to report). Releases o. */
int cli_print_json_stream(json_t *o, size_t flags, const cli_json_stream *st);

/* x printed by fmt (one double conversion, "%.3f") into buf, or
 * "undefined" when x is NaN or infinite (a rank correlation of tied
 * values, a median of no rows): what a table prints where JSON has null.
 * Returns buf. */
#define CLI_UNDEFINED "undefined"
const char *cli_real(char *buf, size_t size, const char *fmt, double x);

/* The width of a column of s's site names: its longest name, at least min
 * (the column's width where names are short, which then print as before).
 * Tables pad names to it and never cut one: cut at 14 characters,
 * aws-ap-northeast-1, -2 and -3 read as one site. */
int cli_site_width(const scenario *s, int min);

/* A JSON number, or null for NaN and infinities (DESIGN.md section 9: NaN
 * as null; jansson's json_real refuses them and the key would vanish). */
json_t *cli_json_number(double x);

/* Sets on o the columns of r named in cols (NULL-terminated column names
 * of analysis/db.h's DB_RESULT_MAP), each under its column's name: a
 * number (null when absent: NAN or < 0), or a string (null when NULL or
 * ""). The one writer of a results row's fields as JSON; an unknown name
 * is a programmer's error (assert). */
void cli_result_json(json_t *o, const db_result *r, const char *const *cols);

/* The transport that ran (transport_describe of o on s): one line, and a
 * JSON object with its facts, for every command's output to state it;
 * the line's runtime says what it implies (cli_runtime_text of a and
 * iteration_s). */
struct alloc;
void cli_print_transport(const transport_options *o, const scenario *s,
                         const struct alloc *a, double iteration_s);
json_t *cli_json_transport(const transport_options *o, const scenario *s,
                           const struct alloc *a, double iteration_s);

/* What s's runtime implies (models/runtime.c's row), into buf: "GPU
 * AdamW, 16 B/param", and with a and a finite iteration_s ", optimizer
 * 3.1 % of the iteration" (the longest optimizer step of a device of a
 * over iteration_s); "" when the workload does not resolve. The JSON
 * object "runtime": {name, optimizer, optimizer_on, bytes_per_param, zero,
 * activations, pass_boundary, p2p_call_s, checkpoint, checkpoint_gbps,
 * optimizer_s, optimizer_share, line} (null where unknown). */
void cli_runtime_text(const scenario *s, const struct alloc *a,
                      double iteration_s, char *buf, size_t size);
json_t *cli_json_runtime(const scenario *s, const struct alloc *a,
                         double iteration_s);

/* What the run ran with (cli_setup.c): the transport line (its runtime's
 * optimizer share of iteration_s, NAN: none), the workload
 * as resolved (layers and their split, schedule, passes x micro-batches,
 * data-parallel algorithm; a balanced split computed for a, or
 * "balanced per allocation" when a is NULL) and, when scaled, the what-if
 * scales, and the --params values. cli_json_setup sets the same on o:
 * network_model (unless o has it), transport, runtime (cli_json_runtime),
 * sockets (null when sites differ), bandwidth_scale, latency_scale, params
 * and workload {model, layers, layers_per_stage, layer_split,
 * schedule, runtime, dp_algo, batch, micro_batch, micro_batches_per_pass,
 * passes, then every other WORKLOAD row of WORKLOAD_MAP under its key, as
 * the scenario sets it}. */
void cli_print_whatif(const scenario *s); /* the what-if line alone */
/* The physical parameters (models/params.h) that differ from the
 * built-in ones (--params): one "params" line naming each with its
 * built-in value, nothing when none; as JSON {name: value} of those ({}
 * when none), every output's "params". */
void cli_print_params(void);
json_t *cli_json_params(void);
void cli_print_setup(const transport_options *t, const scenario *s,
                     const struct alloc *a, double iteration_s);
void cli_json_setup(json_t *o, const transport_options *t, const scenario *s,
                    const struct alloc *a, double iteration_s);

/* The `runs` row of this invocation: its command line ("geodes" and argv,
 * space-joined: *cmd, malloc'ed, the caller frees it), this build's
 * version and git revision, and s's name and seed (s NULL: none, -1). The
 * one builder of run rows (run, schedule, validate, sweep). */
db_run cli_run_row(int argc, char **argv, const scenario *s, char **cmd);

/* Records this invocation in the database at path: its `runs` row
 * (cli_run_row) and, in one transaction, what rows(d, run id, ctx, e)
 * stores; the run ends "ok" or "error" by rows' return. ERR_OK or the
 * error, in e. The one writer of a command's run (schedule, shape). */
typedef int (*cli_db_rows)(db *d, int64_t run, const void *ctx,
                           err *e);
int cli_db_record(const char *path, int argc, char **argv, const scenario *s,
                  cli_db_rows rows, const void *ctx, err *e);

/* True when stderr is a terminal (cli_progress then draws a bar, else
 * plain lines). */
bool cli_stderr_is_tty(void);

/* s as one word of a POSIX shell (a string to free): as it is when every
 * byte is a letter, a digit or one of "_@%+=:,./-" (and s is not empty),
 * else in single quotes, each ' written '\''. For the commands geodes
 * prints for a user to paste. */
char *cli_shell_word(const char *s);

/* What `explain` (and `simulate --explain`) reports, beside the run. */
typedef struct cli_explain_opts {
  int top, steps;          /* sensitivities of the top resources; path rows */
  const struct sim_whatif *whatifs;  /* more what-ifs to rank (borrowed) */
  int nwhatifs;
  bool json;
  const char *link_stats;  /* CSV of link utilisation, or NULL */
  double resolution_s;     /* its time step */
  const char *placement;   /* the allocation's file or method */
  bool quiet;              /* no progress of the re-runs on stderr */
} cli_explain_opts;

/* Simulates s under a and o, and prints its critical path, the top
 * resources, the sensitivities and the links' utilisation (a table, or one
 * JSON object), the re-runs' progress on stderr (cli_progress) unless
 * quiet; CLI_OK or the failure's exit status, message printed. */
int cli_explain_report(const char *cmd, const scenario *s, const alloc *a,
                       const sim_options *o, const cli_explain_opts *eo);

/* ---- cli-compute (issue 32): helpers of the front end's files ---- */

/* v[0 .. n) as a JSON array of integers. */
json_t *cli_json_ints(const int *v, int n);

#endif
