/* cli_trace: `geodes trace check FILE [--scenario S] [--json]` loads a trace
 * and summarises it, or reports its first error as "FILE:LINE: message" with
 * exit status 1; `geodes trace synth ...` is dispatched to cli_trace_synth
 * (sim/cli/cli_synth.c). The check never changes the file. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/cli/cli.h"
#include "traces/trace.h"

static const char cli_trace_usage[] =
    "usage: geodes trace check FILE [--scenario S] [--json]\n"
    "       geodes trace synth --duration-s T --step-s D --seed S -o FILE "
    "[--base FILE]\n\n"
    "check  load a latency/bandwidth trace (CSV, traces/FORMATS.md) and\n"
    "       summarise it: sites, rows, snapshots, duration, step or linear\n"
    "       replay, loop period, provenance comments, value ranges. The first\n"
    "       problem is reported as FILE:LINE: message, exit status 1.\n"
    "synth  write a synthetic-from-real trace ('geodes trace synth --help').\n";

static const cli_opt_command CHECK = {
    .name = "trace check",
    .usage = "usage: geodes trace check FILE [--scenario S] [--json]\n\n"
             "Loads the trace FILE and prints a summary; exit status 1 and\n"
             "FILE:LINE: message on the first problem.\n\n",
    .width = 14, .args_min = 1, .args_max = 1,
    .missing = "missing the trace FILE", .extra = "one trace FILE, not several"};

static json_t *check_json(const trace *t, const char *path,
                          const char *scenario_name) {
  trace_value lo, hi;
  trace_extremes(t, &lo, &hi);
  json_t *sites = json_array(), *comments = json_object();
  for (int i = 0; i < trace_nsites(t); i++)
    json_array_append_new(sites, json_string(trace_site(t, i)));
  for (size_t i = 0; i < trace_ncomments(t); i++)  /* first of a key wins */
    if (!json_object_get(comments, trace_comment_key(t, i)))
      json_object_set_new(comments, trace_comment_key(t, i),
                          json_string(trace_comment_value(t, i)));
  json_t *o = json_object();
  json_object_set_new(o, "file", json_string(path));
  json_object_set_new(o, "scenario", scenario_name ? json_string(scenario_name) : json_null());
  json_object_set_new(o, "sites", sites);
  json_object_set_new(o, "rows", json_integer((json_int_t)trace_rows(t)));
  json_object_set_new(o, "snapshots", json_integer((json_int_t)trace_snapshots(t)));
  json_object_set_new(o, "change_points", json_integer((json_int_t)trace_points(t)));
  json_object_set_new(o, "duration_s", json_real(trace_duration_s(t)));
  json_object_set_new(o, "interpolate", json_string(trace_is_linear(t) ? "linear" : "step"));
  json_object_set_new(o, "static", json_boolean(trace_is_static(t)));
  json_object_set_new(o, "loop_after_s", trace_loop_after_s(t) > 0
                                             ? json_real(trace_loop_after_s(t))
                                             : json_null());
  json_object_set_new(o, "latency_ms_min", json_real(lo.latency_ms));
  json_object_set_new(o, "latency_ms_max", json_real(hi.latency_ms));
  json_object_set_new(o, "bandwidth_gbps_min", json_real(lo.bandwidth_gbps));
  json_object_set_new(o, "bandwidth_gbps_max", json_real(hi.bandwidth_gbps));
  for (int k = 0; k < TRACE_NPATH_KEYS; k++) { /* the ones it gives */
    char key[64];
    if (trace_value_path(&hi, k) == 0) continue;
    snprintf(key, sizeof key, "%s_min", trace_path_keys[k].name);
    json_object_set_new(o, key, json_real(trace_value_path(&lo, k)));
    snprintf(key, sizeof key, "%s_max", trace_path_keys[k].name);
    json_object_set_new(o, key, json_real(trace_value_path(&hi, k)));
  }
  json_object_set_new(o, "comments", comments);
  return o;
}

static void check_print(const trace *t, const char *path, const char *scenario_name) {
  trace_value lo, hi;
  trace_extremes(t, &lo, &hi);
  printf("%-15s %s\n", "file", path);
  if (scenario_name) printf("%-15s %s (sites match)\n", "scenario", scenario_name);
  printf("%-15s %d:", "sites", trace_nsites(t));
  for (int i = 0; i < trace_nsites(t); i++) printf(" %s", trace_site(t, i));
  printf("\n%-15s %zu\n", "rows", trace_rows(t));
  printf("%-15s %zu (%zu change points)\n", "snapshots", trace_snapshots(t),
         trace_points(t));
  printf("%-15s %g s%s\n", "duration", trace_duration_s(t),
         trace_is_static(t) ? " (static)" : "");
  printf("%-15s %s\n", "replay", trace_is_linear(t) ? "linear" : "step");
  if (trace_loop_after_s(t) > 0)
    printf("%-15s every %g s\n", "loop", trace_loop_after_s(t));
  else
    printf("%-15s none\n", "loop");
  printf("%-15s %g .. %g ms\n", "latency", lo.latency_ms, hi.latency_ms);
  printf("%-15s %g .. %g Gbit/s\n", "bandwidth", lo.bandwidth_gbps,
         hi.bandwidth_gbps);
  for (int k = 0; k < TRACE_NPATH_KEYS; k++) /* where the pairs give it */
    if (trace_value_path(&hi, k) != 0)
      printf("%-15s %g .. %g\n", trace_path_keys[k].name,
             trace_value_path(&lo, k), trace_value_path(&hi, k));
  for (size_t i = 0; i < trace_ncomments(t); i++)
    printf("# %s: %s\n", trace_comment_key(t, i), trace_comment_value(t, i));
}

/* Loads path, checked against the sites of scenario when one is named. */
static trace *check_load(const char *path, const char *scenario_name, err *e) {
  if (!scenario_name) return trace_load(path, NULL, 0, e);
  scenario *s = scenario_load(scenario_name, e);
  if (!s) return NULL;
  const char **names = mem_calloc((size_t)s->nsites, sizeof *names);
  for (int i = 0; i < s->nsites; i++) names[i] = s->sites[i].name;
  trace *t = trace_load(path, names, s->nsites, e);
  free(names);
  scenario_free(s);
  return t;
}

static int cli_trace_check(int argc, char **argv) {
  const char *scenario_name = NULL;
  bool json = false;
  const cli_opt opts[] = {
      CLI_OPT_STRING('s', "scenario", "S", &scenario_name,
                     "check the trace against the sites of scenario S (a\n"
                     "built-in name or a path): every site the file names "
                     "must\n"
                     "be one of them, and every ordered pair of them needs a\n"
                     "value at t = 0 ('*' rows count)"),
      CLI_OPT_FLAG('j', "json", &json,
                   "print one JSON object instead of the table"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&CHECK, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  const char *path = args[0];
  err e;
  err_clear(&e);
  trace *t = check_load(path, scenario_name, &e);
  if (!t) return cli_error("%s", e.msg);
  if (json) {
    json_t *o = check_json(t, path, scenario_name);
    cli_print_json(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  } else {
    check_print(t, path, scenario_name);
  }
  trace_free(t);
  return CLI_OK;
}

int cli_trace(int argc, char **argv) {
  static const cli_action actions[] = {{"check", cli_trace_check},
                                       {"synth", cli_trace_synth}};
  return cli_actions("trace", cli_trace_usage, actions, 2, argc, argv);
}
