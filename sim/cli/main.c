/* main: dispatches `geodes SUBCOMMAND ...` to cli_<subcommand>. The table is
 * the list of subcommands; `geodes --help` prints it, and `geodes help
 * --markdown` the reference of every subcommand (sim/cli/COMMANDS.md) by
 * running each one's --help with cli_opt_help writing Markdown, so the page
 * is the option tables and cannot drift from them. Every path out of a
 * subcommand passes check_stdout, so output that never reached stdout (a
 * full disk, /dev/full) is an error, not a silent success. A signal that
 * ends the process first removes the temporaries of the outputs being
 * written (base/file_out.h), so that each is left complete or absent. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"

typedef struct cli_command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
  const char *const *actions; /* its actions (trace check, ...), NULL-ended;
                                 NULL: it has none */
} cli_command;

static int cli_help(int argc, char **argv);

static const char *const trace_actions[] = {"check", "synth", NULL};
static const char *const faults_actions[] = {"synth", "check", NULL};
static const char *const net_actions[] = {"import", NULL};

static const cli_command commands[] = {
    {"run", cli_run, "the main job: study one scenario (default worldwide)", NULL},
    {"scenarios", cli_scenarios, "list the built-in scenarios", NULL},
    {"models", cli_models, "list the models a workload can name", NULL},
    {"gpus", cli_gpus, "list the GPU types a site can name", NULL},
    {"trace", cli_trace, "check or synthesise a network trace", trace_actions},
    {"net", cli_net, "import iperf3 measurements as a scenario's links", net_actions},
    {"predict", cli_predict, "score a placement and predict its iteration time", NULL},
    {"simulate", cli_simulate, "simulate an iteration, or a training run, event by event", NULL},
    {"schedule", cli_schedule, "search an allocation (GCMA, greedy, sim, ...)", NULL},
    {"transfer", cli_transfer, "time one flow on one link under each network model", NULL},
    {"sweep", cli_sweep, "simulate every point of a sweep file into the database", NULL},
    {"validate", cli_validate, "check the cost model's ranking against simulation", NULL},
    {"reproduce", cli_reproduce, "simulate DT-FM's measurements beside their values", NULL},
    {"calibrate", cli_calibrate, "fit physical parameters to measured times", NULL},
    {"faults", cli_faults, "synthesise or check a fault trace", faults_actions},
    {"explain", cli_explain, "why an iteration takes its time: critical path, what-ifs", NULL},
    {"help", cli_help, "this list, a subcommand's help, or all of them as Markdown", NULL},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f) {
  fprintf(f,
          "usage: geodes [--version] [--help] SUBCOMMAND [ARGS]\n\n"
          "A discrete-event simulator of geo-distributed LLM training.\n\n"
          "Subcommands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'geodes SUBCOMMAND --help' describes each one.\n\n"
             "Environment:\n"
             "  " CLI_PROGRESS_ENV "  seconds between two lines of "
             "progress\n"
             "                              on stderr when it is not a "
             "terminal\n"
             "                              (default "
             CLI_STR(CLI_PROGRESS_INTERVAL_S) "); --quiet turns it off\n");
}

/* Flushes stdout once and checks it: stdio reports a failed write only
 * through ferror, and the data still buffered fails here with its errno
 * (ENOSPC on a full device). A command that failed already said why and
 * keeps its status. */
static int check_stdout(int rc) {
  errno = 0;
  bool failed = fflush(stdout) != 0;
  int reason = errno;
  if (rc != CLI_OK || (!failed && !ferror(stdout))) return rc;
  fprintf(stderr, "geodes: stdout: %s\n",
          failed && reason ? strerror(reason) : "write error");
  return CLI_ERROR;
}

static const cli_command *find(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) return &commands[i];
  return NULL;
}

/* c's --help (action's, when given) as `geodes c [action] --help` prints it. */
static int run_help(const cli_command *c, const char *action) {
  char name[32], act[32], opt[] = "--help";
  snprintf(name, sizeof name, "%s", c->name);
  snprintf(act, sizeof act, "%s", action ? action : "");
  char *argv[] = {name, action ? act : opt, opt, NULL};
  return c->fn(action ? 3 : 2, argv);
}

static const char md_note[] =
    "<!-- Generated from the option tables by `geodes help --markdown`: do\n"
    "     not edit. Regenerate: build/geodes help --markdown > "
    "sim/cli/COMMANDS.md\n"
    "     (tests/test_readme.c fails while the two differ). -->\n"
    "# geodes commands\n\n"
    "Every subcommand's `--help`, in the order of `geodes --help`: its usage,\n"
    "then each group of options as a table (the values an option accepts:\n"
    "its range or its names).\n\n";

/* c (and its actions) as Markdown sections: ## geodes c, ### geodes c a. */
static int markdown_command(const cli_command *c) {
  printf("\n## geodes %s\n\n%c%s.\n\n", c->name, toupper(c->summary[0]),
         c->summary + 1);
  if (!c->actions) return run_help(c, NULL);
  fputs("```text\n", stdout);
  int rc = run_help(c, NULL);
  fputs("```\n", stdout);
  for (int i = 0; rc == CLI_OK && c->actions[i]; i++) {
    printf("\n### geodes %s %s\n\n", c->name, c->actions[i]);
    rc = run_help(c, c->actions[i]);
  }
  return rc;
}

/* The reference of every subcommand (or of one) as Markdown. */
static int markdown(const cli_command *only) {
  if (!only) {
    fputs(md_note, stdout);
    fputs("```text\n", stdout);
    usage(stdout);
    fputs("```\n\n", stdout);
    for (size_t i = 0; i < NCOMMANDS; i++)
      printf("- [`geodes %s`](#geodes-%s): %s\n", commands[i].name,
             commands[i].name, commands[i].summary);
  }
  cli_opt_help_markdown(true);
  int rc = CLI_OK;
  for (size_t i = 0; i < NCOMMANDS && rc == CLI_OK; i++)
    if (!only || only == &commands[i]) rc = markdown_command(&commands[i]);
  cli_opt_help_markdown(false);
  return rc;
}

static const cli_opt_command HELP = {
    .name = "help",
    .usage = "usage: geodes help [--markdown] [SUBCOMMAND [ACTION]]\n\n"
             "Without a SUBCOMMAND, the list of subcommands; with one, its\n"
             "--help (geodes help trace check: geodes trace check --help).\n"
             "--markdown writes it as Markdown, and without a SUBCOMMAND\n"
             "every subcommand's: the page sim/cli/COMMANDS.md.\n\n",
    .width = 14, .args_min = 0, .args_max = 2, .missing = "",
    .extra = "at most a SUBCOMMAND and its ACTION"};

static int cli_help(int argc, char **argv) {
  bool md = false;
  cli_opt opts[] = {
      CLI_OPT_FLAG(0, "markdown", &md, "Markdown (the reference's page)"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs;
  int rc = cli_opt_parse(&HELP, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  const cli_command *c = nargs ? find(args[0]) : NULL;
  if (nargs && !c)
    return cli_usage_error("help", "unknown subcommand '%s'", args[0]);
  if (nargs == 2 && !(c->actions && names_find(c->actions, args[1]) >= 0))
    return cli_usage_error("help", "geodes %s has no action '%s'", c->name,
                           args[1]);
  if (md) return markdown(c);
  if (!c) {
    usage(stdout);
    return CLI_OK;
  }
  return run_help(c, nargs == 2 ? args[1] : NULL);
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("geodes %s (%s)\n", GEODES_VERSION, GEODES_GIT);
    return CLI_OK;
  }
  if (cli_progress_interval_s() < 0) {
    fprintf(stderr, "geodes: %s='%s': a number of seconds from 0 to %g "
            "expected\n", CLI_PROGRESS_ENV, getenv(CLI_PROGRESS_ENV),
            CLI_PROGRESS_MAX_INTERVAL_S);
    return CLI_USAGE;
  }
  const cli_command *c = find(cmd);
  if (c) return c->fn(argc - 1, argv + 1);
  fprintf(stderr, "geodes: unknown subcommand '%s'\n", cmd);
  usage(stderr);
  return CLI_USAGE;
}

/* A signal that would end the process: the open outputs' temporaries are
 * removed, then the signal ends it as it would have (the shell sees
 * 128 + sig). A command may catch one itself meanwhile (sweep's ^C). */
static void on_end(int sig) {
  file_out_abandon();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* on_end for the signals that end a process by default, unless ignored
 * (a background job's SIGINT stays ignored). */
static void catch_ends(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
    struct sigaction sa = {.sa_handler = on_end}, old;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[i], &sa, NULL);
  }
}

int main(int argc, char **argv) {
  catch_ends();
  return check_stdout(dispatch(argc, argv));
}
