/* cli_common: helpers every subcommand uses — messages with the right exit
 * status, strict number parsing, the shared workload options' defaults and
 * transport, the runs row of an invocation. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/params_file.h"
#include "base/mem.h"
#include "models/partition.h"
#include "models/spec.h"
#include "schedules/schedule.h"
#include "sim/cli/cli.h"

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

void cli_workload_init(cli_workload_opts *o) {
  scenario_knobs_init(&o->k);
  o->window_bytes = -1;
  o->idle_restart = false;
}

transport_options cli_transport(const cli_workload_opts *o,
                                transport_model net) {
  transport_options t = transport_options_default();
  t.model = net;
  if (o->window_bytes > 0) t.window_bytes = (double)o->window_bytes;
  t.idle_restart = o->idle_restart;
  return t;
}

/* The layers the workload will have: the knob's, the scenario's, or the
 * model's depth (0 when the model is unknown: models/spec then says so). */
static int layers_of(const cli_workload_opts *o, const scenario *s) {
  if (o->k.layers > 0) return (int)o->k.layers;
  if (s->workload.layers > 0) return s->workload.layers;
  const spec_model *m = spec_model_find(s->workload.model);
  return m ? m->layers : 0;
}

/* --layers-per-stage into k (the list in *list, malloc'ed). */
static int layers_knob(const cli_workload_opts *o, const scenario *s,
                       scenario_knobs *k, int **list, err *e) {
  const char *text = o->layers_per_stage;
  if (!text) return ERR_OK;
  if (strcmp(text, "balanced") == 0) {
    k->balanced_layers = true;
    return ERR_OK;
  }
  int stages = s->workload.stages;
  *list = mem_alloc(((size_t)stages + 1) * sizeof **list);
  int n = partition_parse(text, *list, stages + 1);
  if (n < 0)
    return err_set(e, CLI_ERR_USAGE, "--layers-per-stage wants 'balanced' or "
                   "%d comma-separated layer counts (no spaces), not '%s'",
                   stages, text);
  err pe = {0};
  int layers = layers_of(o, s);
  if (partition_check(*list, n, stages, layers > 0 ? layers : INT_MAX, &pe) &&
      (layers > 0 || !strstr(pe.msg, "sum to")))
    return err_set(e, CLI_ERR_USAGE, "--layers-per-stage %s: %s", text, pe.msg);
  k->layers_per_stage = *list;
  k->nlayers_per_stage = n;
  return ERR_OK;
}

int cli_workload_apply(const cli_workload_opts *o, scenario *s, err *e) {
  if (o->params && params_file_apply(o->params, e)) return e ? e->code : 1;
  scenario_knobs k = o->k;
  if (o->grad_bits) k.grad_bits = strtol(o->grad_bits, NULL, 10);
  if (o->activation_bits) k.activation_bits = strtol(o->activation_bits, NULL, 10);
  int *list = NULL;
  int rc = layers_knob(o, s, &k, &list, e);
  if (rc == ERR_OK) rc = scenario_apply(s, &k, e);
  free(list);
  return rc;
}

int cli_workload_usage(const char *cmd, const cli_workload_opts *o,
                       const scenario *s) {
  (void)o;
  spec_workload w;
  err e = {ERR_OK, ""};
  /* resolve's messages name an option only for DiLoCo's knobs */
  if (spec_workload_resolve(s, &w, &e) == ERR_OK || !strstr(e.msg, "--"))
    return CLI_OK;
  return cli_usage_error(cmd, "%s", e.msg);
}

int cli_fail(const char *cmd, const err *e) {
  if (e->code == CLI_ERR_USAGE) return cli_usage_error(cmd, "%s", e->msg);
  return cli_error("%s", e->msg);
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

int cli_out_open(cli_out *o, const char *path) {
  *o = (cli_out){.f = stdout, .path = path};
  if (strcmp(path, "-") == 0) return CLI_OK;
  size_t n = strlen(path) + 5;
  o->tmp = mem_alloc(n);
  snprintf(o->tmp, n, "%s.tmp", path);
  if ((o->f = fopen(o->tmp, "w"))) return CLI_OK;
  int rc = cli_error("%s:0: cannot write: %s", path, strerror(errno));
  free(o->tmp);
  o->tmp = NULL;
  return rc;
}

int cli_out_close(cli_out *o, int rc) {
  if (!o->tmp) return rc; /* stdout: main checks it */
  if (fclose(o->f) != 0 && rc == CLI_OK)
    rc = cli_error("%s:0: cannot write: %s", o->path, strerror(errno));
  if (rc == CLI_OK && rename(o->tmp, o->path) != 0)
    rc = cli_error("%s:0: cannot write: %s", o->path, strerror(errno));
  if (rc != CLI_OK) remove(o->tmp); /* nothing half-written, the old kept */
  free(o->tmp);
  o->tmp = NULL;
  return rc;
}

void cli_print_json(json_t *o, size_t flags) {
  /* streamed, so a full device fails at the final flush with its reason;
   * a failed write shows in stdout's error flag, which main checks */
  json_dumpf(o, stdout, flags);
  putchar('\n');
  json_decref(o);
}

json_t *cli_json_number(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}
