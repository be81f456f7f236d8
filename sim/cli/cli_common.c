/* cli_common: helpers every subcommand uses — the dispatch of actions, the
 * shared workload options' defaults and transport, the runs row of an
 * invocation (messages and number parsing: cli_parse.c). */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/params_file.h"
#include "base/file.h"
#include "base/jfield.h"
#include "base/mem.h"
#include "base/names.h"
#include "models/alloc_file.h"
#include "models/partition.h"
#include "models/spec_workload.h"
#include "schedules/schedule.h"
#include "schedules/search.h"
#include "sim/cli/cli.h"
#include "traces/scenario_subset.h"

int cli_actions(const char *cmd, const char *usage, const cli_action *actions,
                size_t n, int argc, char **argv) {
  const char *names[8] = {NULL};
  char known[128];
  assert(n < sizeof names / sizeof *names);
  for (size_t i = 0; i < n; i++) names[i] = actions[i].name;
  names_join(names, ", ", " or ", known, sizeof known);
  if (argc < 2)
    return cli_usage_error(cmd, "missing the action: %s", known);
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(usage, stdout);
    return CLI_OK;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(argv[1], actions[i].name) == 0)
      return actions[i].run(argc - 1, argv + 1);
  return cli_usage_error(cmd, "unknown action '%s' (%s)", argv[1], known);
}

void cli_workload_init(cli_workload_opts *o) {
  *o = (cli_workload_opts){.idle_restart = false};
  scenario_knobs_init(&o->k);
}

cli_opt cli_knob_opt(int r, scenario_knobs *k) {
  static const cli_opt_kind kinds[] = {
      [WORKLOAD_INT] = CLI_OPT_INT_, [WORKLOAD_BITS] = CLI_OPT_INT_,
      [WORKLOAD_REAL] = CLI_OPT_REAL_, [WORKLOAD_NAME] = CLI_OPT_NAME_,
      [WORKLOAD_BOOL] = CLI_OPT_BOOL_};
  const workload_row *row = &workload_rows[r];
  return (cli_opt){
      .kind = row->kind == WORKLOAD_NAME && !row->names ? CLI_OPT_STRING_
                                                        : kinds[row->kind],
      .long_name = row->option, .arg = row->arg, .help = row->help,
      .value = (char *)k + row->knob_at, .lo = row->lo, .hi = row->hi,
      .open = row->open, .names = row->names};
}

transport_options cli_transport(const cli_workload_opts *o,
                                transport_model net) {
  transport_options t = transport_options_default();
  t.model = net;
  if (o->k.window_bytes > 0) t.window_bytes = (double)o->k.window_bytes;
  t.idle_restart = o->idle_restart;
  return t;
}

/* --layers-per-stage into k (the list in *list, malloc'ed), refused as a
 * usage error naming it (models/partition.h's partition_knob_split). */
static int layers_knob(const cli_workload_opts *o, const scenario *s,
                       scenario_knobs *k, int **list, err *e) {
  const char *text = o->layers_per_stage;
  err pe = {0};
  if (!text || partition_knob_split(s, k, text, list, &pe) == ERR_OK)
    return ERR_OK;
  if (pe.code == ERR_PARSE)
    return err_set(e, CLI_ERR_USAGE, "--layers-per-stage %s", pe.msg);
  return err_set(e, CLI_ERR_USAGE, "--layers-per-stage %s: %s", text, pe.msg);
}

/* A failure of the knobs (ke) as the command line says it: one of the
 * shape (its field) or of the scales against the links is a usage error
 * naming the options as given; any other is the knobs' error. */
static int knob_failure(const cli_workload_opts *o, const char *opts,
                        const err *ke, err *e) {
  int f = err_field(ke);
  if ((f == WORKLOAD_stages || f == WORKLOAD_replicas) && opts[0])
    return err_set(e, CLI_ERR_USAGE, "%s: %s", opts, ke->msg);
  if (f == WORKLOAD_bandwidth_scale || f == WORKLOAD_latency_scale)
    return err_set(e, CLI_ERR_USAGE, "--bandwidth-scale %g --latency-scale "
                   "%g: %s", o->k.bandwidth_scale, o->k.latency_scale,
                   ke->msg);
  return err_set_field(e, f, ke->code, "%s", ke->msg);
}

int cli_workload_apply(const cli_workload_opts *o, scenario *s, err *e) {
  if (o->params && params_file_apply(o->params, e)) return e ? e->code : 1;
  char opts[64]; /* the shape's options as given */
  partition_knob_options(&o->k, opts, sizeof opts);
  scenario_knobs k = o->k;
  int *list = NULL;
  int rc = layers_knob(o, s, &k, &list, e);
  err ke = {0}; /* --stages against the layers, the model's depth included */
  if (rc == ERR_OK && partition_knob_fits(s, &o->k, &ke) != ERR_OK)
    rc = err_set(e, CLI_ERR_USAGE, "%s: %s", opts, ke.msg);
  if (rc == ERR_OK) {
    if (scenario_apply(s, &k, &ke) != ERR_OK)
      rc = knob_failure(o, opts, &ke, e);
  }
  free(list);
  return rc;
}

int cli_workload_alloc(const cli_workload_opts *o, const char *path,
                       scenario *s, alloc **a, scenario **view, err *e) {
  *a = NULL, *view = NULL;
  if (!path) return cli_workload_apply(o, s, e);
  alloc_file f;
  cli_workload_opts run = *o; /* the options with the file's joined */
  bool shaped;
  int rc = alloc_file_read(path, s->ndevices, &f, e);
  if (rc) return rc;
  rc = alloc_file_join(&f, s, &run.k, o->layers_per_stage, &shaped, e);
  if (rc && (err_field(e) == WORKLOAD_stages ||
             err_field(e) == WORKLOAD_replicas))
    e->code = CLI_ERR_USAGE; /* --stages or --replicas against the file */
  if (!rc && (rc = cli_workload_apply(&run, s, e)) && shaped &&
      e->code != CLI_ERR_USAGE) /* the file's shape is the cause */
    alloc_file_blame(&f, rc, e);
  if (!rc && !(*a = alloc_file_alloc(&f, s, view, e))) rc = e->code;
  char given[256];
  snprintf(given, sizeof given, "--layers-per-stage %s",
           o->layers_per_stage ? o->layers_per_stage : "");
  if (!rc && o->layers_per_stage)
    rc = alloc_file_split_agrees(&f, *view ? *view : s, *a, given, e);
  alloc_file_free(&f);
  if (rc) {
    alloc_free(*a), scenario_subset_free(*view);
    *a = NULL, *view = NULL;
  }
  return rc;
}

int cli_workload_usage(const char *cmd, const cli_workload_opts *o,
                       const scenario *s) {
  (void)o;
  spec_workload w;
  err e = {0};
  if (spec_workload_resolve(s, &w, &e) == ERR_OK) return CLI_OK;
  /* a value an option gave that the workload refuses; a name models/
   * checks (a model) is refused as a file's would be */
  int f = err_field(&e);
  const workload_row *row = f >= 0 ? &workload_rows[f] : NULL;
  if (!row || s->line[f] != SCENARIO_LINE_KNOB ||
      (row->kind == WORKLOAD_NAME && !row->names))
    return CLI_OK;
  return cli_usage_error(cmd, "%s", e.msg);
}

int cli_fail(const char *cmd, const err *e) {
  if (e->code == CLI_ERR_USAGE) return cli_usage_error(cmd, "%s", e->msg);
  return cli_error("%s", e->msg);
}

int cli_check_method(const char *cmd, const char **name) {
  const char *method = *name;
  int id = schedule_method_find(method);
  if (id >= 0) {
    *name = schedule_method_name((schedule_method_id)id); /* not a former name */
    return CLI_OK;
  }
  char names[256];
  names_join(schedule_method_names(), ", ", ", ", names, sizeof names);
  return cli_usage_error(cmd, "--method is one of %s; not '%s'", names, method);
}

int cli_check_placement(const char *cmd, const char *alloc_path,
                        const char **method) {
  if (!!alloc_path + !!*method != 1)
    return cli_usage_error(cmd, "give exactly one of --alloc, --method");
  return *method ? cli_check_method(cmd, method) : CLI_OK;
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

int cli_db_record(const char *path, int argc, char **argv, const scenario *s,
                  cli_db_rows rows, const void *ctx, err *e) {
  db *d = db_open(path, e);
  if (!d) return e->code;
  char *cmd;
  db_run run = cli_run_row(argc, argv, s, &cmd);
  int64_t id = db_run_begin(d, &run, e);
  int rc = id < 0 ? (int)id : db_begin(d, e);
  if (rc == ERR_OK) rc = rows(d, id, ctx, e);
  if (rc == ERR_OK) rc = db_commit(d, e);
  if (id > 0) db_run_end(d, id, rc == ERR_OK ? "ok" : "error", NULL);
  free(cmd);
  db_close(d);
  return rc;
}

bool cli_stderr_is_tty(void) { return isatty(STDERR_FILENO) == 1; }

int cli_out_open(cli_out *o, const char *path, const char *what) {
  *o = (cli_out){.f = stdout};
  if (strcmp(path, "-") == 0) return CLI_OK;
  err e = {0};
  if (file_out_open(&o->fo, path, what, &e) != ERR_OK)
    return cli_error("%s", e.msg);
  o->f = o->fo.f;
  return CLI_OK;
}

int cli_out_not_db(const char *cmd, const char *out, const char *store) {
  if (!store || !out) return CLI_OK;
  file_use_note(store, FILE_USE_READ);
  if (strcmp(out, store) != 0) return CLI_OK;
  return cli_usage_error(cmd, "%s is also the results store (--db): name "
                         "another file", out);
}

int cli_out_close(cli_out *o, int rc) {
  if (o->f == stdout) return rc; /* main checks it */
  err e = {0};
  if (file_out_close(&o->fo, rc == CLI_OK, &e) != ERR_OK)
    rc = cli_error("%s", e.msg);
  o->f = NULL;
  return rc;
}

void cli_print_json(json_t *o, size_t flags) {
  /* streamed, so a full device fails at the final flush with its reason;
   * a failed write shows in stdout's error flag, which main checks */
  json_out_write(o, stdout, flags);
  putchar('\n');
  json_decref(o);
}

int cli_print_json_stream(json_t *o, size_t flags, const cli_json_stream *st) {
  assert(!(flags & JSON_MAX_INDENT) && (flags & JSON_COMPACT)); /* "," ":" */
  size_t any = flags | JSON_ENCODE_ANY;
  bool bad = false, first = true;
  const char *key;
  json_t *v;
  putchar('{');
  json_object_foreach(o, key, v) {
    if (!first) putchar(',');
    first = false;
    json_t *k = json_string(key);
    bad |= !k || json_dumpf(k, stdout, any) != 0;
    json_decref(k);
    putchar(':');
    if (strcmp(key, st->key) != 0) {
      bad |= json_out_write(v, stdout, any) != 0;
      continue;
    }
    putchar('[');
    for (size_t i = 0; i < st->n && !bad; i++) {
      if (i) putchar(',');
      json_t *x = st->item(st->ctx, i);
      bad |= !x || json_out_write(x, stdout, any) != 0;
      json_decref(x);
    }
    putchar(']');
  }
  puts("}");
  json_decref(o);
  return bad ? cli_error("stdout: the JSON document could not be built in "
                         "memory; it ends short")
             : CLI_OK;
}

const char *cli_real(char *buf, size_t size, const char *fmt, double x) {
  if (!isfinite(x)) snprintf(buf, size, "%s", CLI_UNDEFINED);
  else snprintf(buf, size, fmt, x);
  return buf;
}

int cli_site_width(const scenario *s, int min) {
  int w = min;
  for (int i = 0; i < s->nsites; i++) {
    int n = (int)strlen(s->sites[i].name);
    if (n > w) w = n;
  }
  return w;
}

json_t *cli_json_number(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

json_t *cli_json_ints(const int *v, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
  return a;
}

const char *cli_method_help(void) {
  static char help[400];
  if (help[0]) return help;
  char fixed[96], searches[96];
  schedule_method_join(true, fixed, sizeof fixed);
  schedule_method_join(false, searches, sizeof searches);
  snprintf(help, sizeof help, "%s, or a\nsearch: %s\n(DT-FM's settings: "
           "population %d, %d trials;\nmegatron: megatron-order's former "
           "name)", fixed, searches, SEARCH_POPULATION, SEARCH_TRIALS);
  return help;
}

static json_t *json_text(const char *s) {
  return s && *s ? json_string(s) : json_null();
}

/* A column's value as JSON, by kind (DB_RESULT_MAP's). */
#define JSON_REF(v) json_text(v)
#define JSON_OWNED(v) json_text(v)
#define JSON_CHARS16(v) json_text(v)
#define JSON_CHARS24(v) json_text(v)
#define JSON_CHARS48(v) json_text(v)
#define JSON_INT(v) ((v) >= 0 ? json_integer(v) : json_null())
#define JSON_REAL(v) cli_json_number(v)

void cli_result_json(json_t *o, const db_result *r, const char *const *cols) {
  for (; *cols; cols++) {
    json_t *v = NULL;
#define X(f, col, type, sql, absent, since, origin) \
    if (!v && strcmp(*cols, col) == 0) v = JSON_##type(r->f);
    DB_RESULT_MAP(X)
#undef X
    assert(v && "a column of DB_RESULT_MAP");
    json_object_set_new(o, *cols, v);
  }
}

/* The transport's line with what its runtime implies after it. */
static void transport_line(const transport_options *o, const scenario *s,
                           const struct alloc *a, double iteration_s,
                           char *line, size_t size) {
  transport_facts f = transport_describe(o, s);
  size_t n = (size_t)transport_facts_line(&f, line, size);
  char rt[160];
  cli_runtime_text(s, a, iteration_s, rt, sizeof rt);
  if (rt[0] && n < size) snprintf(line + n, size - n, " (%s)", rt);
}

void cli_print_transport(const transport_options *o, const scenario *s,
                         const struct alloc *a, double iteration_s) {
  char line[448];
  transport_line(o, s, a, iteration_s, line, sizeof line);
  printf("transport   %s\n", line);
}

json_t *cli_json_transport(const transport_options *o, const scenario *s,
                           const struct alloc *a, double iteration_s) {
  transport_facts f = transport_describe(o, s);
  char line[448];
  transport_line(o, s, a, iteration_s, line, sizeof line);
  json_t *t = json_object();
  json_object_set_new(t, "model", json_string(transport_model_name(f.model)));
  json_object_set_new(t, "shaping",
                      json_string(scenario_shaping_names[f.shaping]));
  json_object_set_new(t, "window_bytes", cli_json_number(f.window_min));
  json_object_set_new(t, "window_bytes_min", cli_json_number(f.window_min));
  json_object_set_new(t, "window_bytes_max", cli_json_number(f.window_max));
  json_object_set_new(t, "idle_restart", json_boolean(f.idle_restart));
  json_object_set_new(t, "p2p_sockets_min", json_integer(f.p2p_sockets_min));
  json_object_set_new(t, "p2p_sockets_max", json_integer(f.p2p_sockets_max));
  json_object_set_new(t, "collective_sockets_min", json_integer(f.coll_sockets_min));
  json_object_set_new(t, "collective_sockets_max", json_integer(f.coll_sockets_max));
  json_object_set_new(t, "p2p_channels", json_integer(f.p2p_channels));
  json_object_set_new(t, "nccl_ring_channels", json_integer(f.ring_channels));
  json_object_set_new(t, "runtime", json_string(f.runtime ? f.runtime
                                                : workload_runtimes[0]));
  json_object_set_new(t, "line", json_string(line));
  return t;
}

char *cli_shell_word(const char *s) {
  size_t n = strlen(s), quotes = 0;
  bool plain = n > 0;
  for (const char *c = s; *c; c++) {
    quotes += *c == '\'';
    plain = plain && (isalnum((unsigned char)*c) || strchr("_@%+=:,./-", *c));
  }
  if (plain) return mem_strdup(s);
  char *w = mem_alloc(n + 3 * quotes + 3), *o = w;
  *o++ = '\'';
  for (const char *c = s; *c; c++) {
    if (*c == '\'') {
      memcpy(o, "'\\''", 4);
      o += 4;
    } else {
      *o++ = *c;
    }
  }
  *o++ = '\'';
  *o = '\0';
  return w;
}
