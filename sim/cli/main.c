/* main: dispatches `geodes SUBCOMMAND ...` to cli_<subcommand>. The table is
 * the list of subcommands; `geodes --help` prints it. Every path out of a
 * subcommand passes check_stdout, so output that never reached stdout (a
 * full disk, /dev/full) is an error, not a silent success. A signal that
 * ends the process first removes the temporaries of the outputs being
 * written (base/file_out.h), so that each is left complete or absent. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli.h"

typedef struct cli_command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
} cli_command;

static const cli_command commands[] = {
    {"run", cli_run, "the main job: study one scenario (default worldwide)"},
    {"scenarios", cli_scenarios, "list the built-in scenarios"},
    {"models", cli_models, "list the models a workload can name"},
    {"gpus", cli_gpus, "list the GPU types a site can name"},
    {"trace", cli_trace, "check or synthesise a network trace"},
    {"predict", cli_predict, "score a placement and predict its iteration time"},
    {"simulate", cli_simulate, "simulate an iteration, or a training run, event by event"},
    {"schedule", cli_schedule, "search an allocation (GCMA, greedy, sim, ...)"},
    {"transfer", cli_transfer, "time one flow on one link under each network model"},
    {"sweep", cli_sweep, "simulate every point of a sweep file into the database"},
    {"validate", cli_validate, "check the cost model's ranking against simulation"},
    {"reproduce", cli_reproduce, "simulate DT-FM's measurements beside their values"},
    {"calibrate", cli_calibrate, "fit physical parameters to measured times"},
    {"faults", cli_faults, "synthesise or check a fault trace"},
    {"explain", cli_explain, "why an iteration takes its time: critical path, what-ifs"},
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: geodes [--version] [--help] SUBCOMMAND [ARGS]\n\n"
          "A discrete-event simulator of geo-distributed LLM training.\n\n"
          "Subcommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'geodes SUBCOMMAND --help' describes each one.\n");
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

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("geodes %s (%s)\n", GEODES_VERSION, GEODES_GIT);
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (strcmp(cmd, commands[i].name) == 0)
      return commands[i].fn(argc - 1, argv + 1);
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
