/* cli_common: helpers every subcommand uses — messages with the right exit
 * status, strict number parsing, and the shared workload options. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedules/schedule.h"
#include "sim/cli/cli.h"
#include "base/mem.h"
#include "base/names.h"
#include "traces/workload.h"

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "geodes %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'geodes %s --help'.\n", cmd);
  va_end(ap);
  return CLI_USAGE;
}

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("geodes: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_ERROR;
}

bool cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                   long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) {
    cli_usage_error(cmd, "%s wants an integer in [%ld, %ld], not '%s'", opt,
                    lo, hi, s);
    return false;
  }
  *out = v;
  return true;
}

bool cli_parse_double(const char *cmd, const char *opt, const char *s,
                      double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi) {
    cli_usage_error(cmd, "%s wants a number in [%g, %g], not '%s'", opt, lo,
                    hi, s);
    return false;
  }
  *out = v;
  return true;
}

enum {
  OPT_LAYERS = CLI_OPT_BASE,
  OPT_BATCH,
  OPT_MICRO_BATCH,
  OPT_MBPP,
  OPT_SCHEDULE,
  OPT_DP_ALGO,
  OPT_GPU,
  OPT_SEED,
  OPT_WINDOW,
  OPT_ACT_GB,
  OPT_GRAD_GB,
  OPT_SOCKETS,
  OPT_RUNTIME,
  OPT_IDLE_RESTART,
};

static const struct option workload_options[] = {
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"micro-batch", required_argument, NULL, OPT_MICRO_BATCH},
    {"micro-batches-per-pass", required_argument, NULL, OPT_MBPP},
    {"schedule", required_argument, NULL, OPT_SCHEDULE},
    {"dp-algo", required_argument, NULL, OPT_DP_ALGO},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"seed", required_argument, NULL, OPT_SEED},
    {"window-bytes", required_argument, NULL, OPT_WINDOW},
    {"activation-gb", required_argument, NULL, OPT_ACT_GB},
    {"gradient-gb", required_argument, NULL, OPT_GRAD_GB},
    {"sockets", required_argument, NULL, OPT_SOCKETS},
    {"runtime", required_argument, NULL, OPT_RUNTIME},
    {"idle-restart", no_argument, NULL, OPT_IDLE_RESTART},
    {NULL, 0, NULL, 0},
};

const char cli_workload_help[] =
    "Workload options (override the scenario's defaults):\n"
    "  --layers N                 transformer layers\n"
    "  --batch B                  global batch, sequences\n"
    "  --micro-batch m            micro-batch size, sequences\n"
    "  --micro-batches-per-pass K micro-batches per GPipe pass\n"
    "  --schedule gpipe|1f1b      pipeline schedule\n"
    "  --dp-algo central-ps|ring|sharded-ps\n"
    "                             data-parallel gradient synchronisation\n"
    "  --gpu NAME                 GPU type of every device\n"
    "  --seed S                   seed of every random choice\n"
    "  --runtime dtfm|megatron    DT-FM's runtime or Megatron-LM's (1F1B\n"
    "                             with blocking point-to-point calls)\n"
    "  --window-bytes W           TCP window per socket for --network tcp\n"
    "                             (1.45 MB, calibrated)\n"
    "  --sockets N                TCP sockets per NCCL connection, 1..64\n"
    "                             (every site's nccl_sockets)\n"
    "  --idle-restart             tcp: a socket idle for an RTO halves its\n"
    "                             window per RTO (Linux's default; off:\n"
    "                             DT-FM's measurements show no restarts)\n"
    "  --activation-gb X          cost model: activation volume c_pp, GB\n"
    "  --gradient-gb Y            cost model: gradient volume c_dp, GB\n";

struct option *cli_workload_options(const struct option *own) {
  size_t n = 0, m = sizeof workload_options / sizeof *workload_options;
  while (own[n].name) n++;
  struct option *all = mem_calloc(n + m, sizeof *all);
  memcpy(all, own, n * sizeof *all);
  memcpy(all + n, workload_options, m * sizeof *all);
  return all;
}

void cli_workload_init(cli_workload_opts *o) {
  scenario_knobs_init(&o->k);
  o->window_bytes = -1;
  o->idle_restart = false;
}

/* A usage error unless arg is one of names: "--opt is a, b or c". */
static bool cli_name(const char *cmd, const char *opt, const char *arg,
                     const char *const *names) {
  if (names_find(names, arg) >= 0) return true;
  char known[128];
  names_join(names, " or ", known, sizeof known);
  cli_usage_error(cmd, "%s is %s, not '%s'", opt, known, arg);
  return false;
}

int cli_workload_parse(const char *cmd, int c, const char *arg,
                       cli_workload_opts *o) {
  bool ok = true;
  switch (c) {
    case OPT_LAYERS:
      ok = cli_parse_int(cmd, "--layers", arg, 1, SCENARIO_MAX_LAYERS,
                         &o->k.layers);
      break;
    case OPT_BATCH:
      ok = cli_parse_int(cmd, "--batch", arg, 1, SCENARIO_KNOB_MAX_BATCH,
                         &o->k.batch);
      break;
    case OPT_MICRO_BATCH:
      ok = cli_parse_int(cmd, "--micro-batch", arg, 1,
                         SCENARIO_KNOB_MAX_MICRO_BATCH,
                         &o->k.micro_batch);
      break;
    case OPT_MBPP:
      ok = cli_parse_int(cmd, "--micro-batches-per-pass", arg, 1,
                         SCENARIO_KNOB_MAX_MBPP,
                         &o->k.micro_batches_per_pass);
      break;
    case OPT_SEED:
      ok = cli_parse_int(cmd, "--seed", arg, 0, SCENARIO_MAX_SEED, &o->k.seed);
      break;
    case OPT_WINDOW:
      ok = cli_parse_int(cmd, "--window-bytes", arg,
                         TRANSPORT_WINDOW_MIN_BYTES, TRANSPORT_WINDOW_MAX_BYTES,
                         &o->window_bytes);
      break;
    case OPT_ACT_GB:
      ok = cli_parse_double(cmd, "--activation-gb", arg, 1e-12,
                            SCENARIO_KNOB_MAX_GB,
                            &o->k.activation_gb);
      break;
    case OPT_GRAD_GB:
      ok = cli_parse_double(cmd, "--gradient-gb", arg, 1e-12,
                            SCENARIO_KNOB_MAX_GB,
                            &o->k.gradient_gb);
      break;
    case OPT_SCHEDULE:
      ok = cli_name(cmd, "--schedule", arg, workload_schedules);
      o->k.schedule = arg;
      break;
    case OPT_DP_ALGO:
      ok = cli_name(cmd, "--dp-algo", arg, workload_dp_algos);
      o->k.dp_algo = arg;
      break;
    case OPT_GPU:
      o->k.gpu = arg;
      break;
    case OPT_SOCKETS:
      ok = cli_parse_int(cmd, "--sockets", arg, 1, TRANSPORT_SOCKETS_MAX,
                         &o->k.sockets);
      break;
    case OPT_RUNTIME:
      ok = cli_name(cmd, "--runtime", arg, workload_runtimes);
      o->k.runtime = arg;
      break;
    case OPT_IDLE_RESTART:
      o->idle_restart = true;
      break;
    default:
      return 0;
  }
  return ok ? 1 : -1;
}

transport_options cli_transport(const cli_workload_opts *o,
                                transport_model net) {
  transport_options t = transport_options_default();
  t.model = net;
  if (o->window_bytes > 0) t.window_bytes = (double)o->window_bytes;
  t.idle_restart = o->idle_restart;
  return t;
}

int cli_workload_apply(const cli_workload_opts *o, scenario *s, err *e) {
  return scenario_apply(s, &o->k, e);
}

int cli_check_method(const char *cmd, const char *method) {
  if (schedule_method_known(method)) return CLI_OK;
  char names[256] = "";
  for (const char *const *m = schedule_method_names(); *m; m++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
             names[0] ? ", " : "", *m);
  return cli_usage_error(cmd, "--method is one of %s; not '%s'", names, method);
}

db_run cli_run_row(int argc, char **argv, const scenario *s, char **cmd) {
  size_t len = strlen("geodes") + 1;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  *cmd = mem_alloc(len);
  strcpy(*cmd, "geodes");
  for (int i = 0; i < argc; i++) strcat(strcat(*cmd, " "), argv[i]);
  return (db_run){.command = *cmd, .scenario = s ? s->name : NULL,
                  .seed = s ? (int64_t)s->seed : -1,
                  .version = GEODES_VERSION, .git = GEODES_GIT};
}

bool cli_stderr_is_tty(void) { return isatty(STDERR_FILENO) == 1; }

json_t *cli_json_number(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}
