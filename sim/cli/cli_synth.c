/* cli_synth: `geodes trace synth --duration-s T --step-s D --seed S -o FILE
 * [--base FILE] [--dwell-s X]` — writes a synthetic-from-real trace
 * (traces/synth.c). The command line recorded in the file's header is
 * canonical (fixed option order, arguments as typed), so running it again
 * reproduces the file byte for byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/mem.h"
#include "sim/cli/cli.h"
#include "traces/synth.h"

#define SYNTH_CMD "trace synth"
#define SYNTH_DEFAULT_BASE "worldwide.csv"

static const cli_opt_command SYNTH = {
    .name = SYNTH_CMD,
    .usage =
        "usage: geodes trace synth --duration-s T --step-s D --seed S -o "
        "FILE\n"
        "                          [--base FILE] [--dwell-s X]\n\n"
        "Writes a time-varying trace that is synthetic from real: the base\n"
        "trace (default: the built-in worldwide matrix) modulated per site "
        "pair\n"
        "by a two-level latency regime, jitter and a bounded AR(1) "
        "bandwidth,\n"
        "with parameters derived from real measurements (synth_params.csv).\n"
        "Deterministic for a seed; the header records the command.\n\n",
    .width = 17};

/* The arguments as typed (the header records them) and their values. */
typedef struct synth_args {
  const char *duration, *step, *seed, *out, *base, *dwell;
  double duration_s, step_s, dwell_s;
  long seed_v;
} synth_args;

/* The options that must be there, and agree. */
static int check_args(const synth_args *a) {
  if (!a->duration) return cli_usage_error(SYNTH_CMD, "--duration-s is missing");
  if (!a->step) return cli_usage_error(SYNTH_CMD, "--step-s is missing");
  if (!a->seed) return cli_usage_error(SYNTH_CMD, "--seed is missing");
  if (!a->out) return cli_usage_error(SYNTH_CMD, "-o FILE is missing");
  if (a->duration_s < a->step_s)
    return cli_usage_error(SYNTH_CMD, "--duration-s %s is shorter than "
                           "--step-s %s", a->duration, a->step);
  if (a->duration_s / a->step_s > 1e8)
    return cli_usage_error(SYNTH_CMD, "more than 1e8 steps");
  return CLI_OK;
}

/* Parses argv into a; CLI_OK, CLI_USAGE, or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, synth_args *a) {
  *a = (synth_args){0};
  const cli_opt opts[] = {
      CLI_OPT_REAL_KEEP(0, "duration-s", "T", &a->duration_s, 1e-9, 1e9,
                        &a->duration, "length of the trace, seconds (>= D)"),
      CLI_OPT_REAL_KEEP(0, "step-s", "D", &a->step_s, 1e-9, 1e9, &a->step,
                        "time step, seconds (> 0)"),
      CLI_OPT_INT_KEEP(0, "seed", "S", &a->seed_v, 0, 0x7fffffffL, &a->seed,
                       "seed of the generator"),
      CLI_OPT_STRING('o', "output", "-o, --output F", &a->out,
                     "the file to write ('-': standard output)"),
      CLI_OPT_STRING(0, "base", "FILE", &a->base,
                     "the trace to modulate (CSV, any sites)"),
      CLI_OPT_REAL_KEEP(0, "dwell-s", "X", &a->dwell_s, 1e-9, 1e12, &a->dwell,
                        "mean latency regime dwell, seconds (default: the\n"
                        "table's, 600 s: months in the data, compressed)"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SYNTH, opts, argc, argv, &args, &nargs);
  return rc ? rc : check_args(a);
}

/* The canonical command line, for "# generated_by:". Caller frees. */
static char *command_line(const synth_args *a) {
  size_t n = 256 + strlen(a->duration) + strlen(a->step) + strlen(a->seed) +
             strlen(a->out) + (a->base ? strlen(a->base) : 0) +
             (a->dwell ? strlen(a->dwell) : 0);
  char *s = mem_alloc(n);
  int k = snprintf(s, n, "geodes trace synth --duration-s %s --step-s %s "
                   "--seed %s", a->duration, a->step, a->seed);
  if (a->dwell) k += snprintf(s + k, n - (size_t)k, " --dwell-s %s", a->dwell);
  if (a->base) k += snprintf(s + k, n - (size_t)k, " --base %s", a->base);
  snprintf(s + k, n - (size_t)k, " -o %s", a->out);
  return s;
}

static trace *load_base(const synth_args *a, err *e) {
  if (a->base) return trace_load(a->base, NULL, 0, e);
  const builtin_file *f = builtin_find(SYNTH_DEFAULT_BASE);
  if (!f) {
    err_set(e, ERR_MISSING, "%s:0: not built in", SYNTH_DEFAULT_BASE);
    return NULL;
  }
  return trace_parse(f->data, f->size, f->name, NULL, 0, e);
}

int cli_trace_synth(int argc, char **argv) {
  synth_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;

  err e = {0};
  trace *base = load_base(&a, &e);
  synth_params *p = base ? synth_params_builtin(&e) : NULL;
  if (!p) {
    trace_free(base);
    return cli_error("%s", e.msg);
  }
  char *cmd = command_line(&a);
  char *base_name = mem_strdup(a.base ? a.base : "built-in " SYNTH_DEFAULT_BASE);
  synth_opts o = {.duration_s = a.duration_s, .step_s = a.step_s,
                  .seed = (uint64_t)a.seed_v, .dwell_s = a.dwell_s,
                  .command = cmd, .base_name = base_name};
  cli_out out;
  if ((rc = cli_out_open(&out, a.out, "the network trace")) == CLI_OK) {
    if (synth_write(out.f, base, p, &o, &e) != ERR_OK)
      rc = cli_error("%s: %s", a.out, e.msg);
    rc = cli_out_close(&out, rc);
  }
  free(base_name);
  free(cmd);
  synth_params_free(p);
  trace_free(base);
  return rc;
}
