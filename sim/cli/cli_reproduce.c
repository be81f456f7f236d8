/* cli_reproduce: `geodes reproduce [--data FILE] [--json]` — every
 * calibration measurement (DT-FM's own iteration and transfer times)
 * simulated beside its measured value (analysis/reproduce), and the median
 * and worst error per table: how far to trust the simulator; with --data,
 * a user's measurements file (analysis/measure) instead, per group.
 * Invariant: it prints what reproduce_run computed, nothing else. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/measure.h"
#include "analysis/params_file.h"
#include "analysis/reproduce.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"


static const cli_opt_command REPRODUCE = {
    .name = "reproduce",
    .usage =
        "usage: geodes reproduce [--data FILE] [--params FILE] [--json]\n\n"
        "Simulates every measurement of DT-FM's that geodes is calibrated on\n"
        "(an 8-stage pipeline sweep, the 64-GPU homogeneous table, NCCL and\n"
        "Gloo point-to-point times, the five geo cases at 24 layers) under\n"
        "tcp, the default model, and netem, a what-if (point-to-point under\n"
        "tcp only), beside the measured\n"
        "value, with the error per row and the median and worst per "
        "table.\n"
        "With --data, the rows of a measurements CSV instead (traces/FORMATS.md,\n"
        "analysis/VALIDATION.md): '# ...' provenance lines, a header, one\n"
        "row per measured iteration: scenario (built-in or a file beside the\n"
        "CSV), method or alloc, knobs named as sweep keys (seed, network,\n"
        "batch, layers, runtime, window_bytes, sockets, ...), an optional\n"
        "group, and measured_s; the error per row and the median and worst\n"
        "per group, under the network model each row names.\n\n",
    .width = 15};

/* The hook: rows simulated, to the reporter. */
static void progress(void *ctx, int done, int total) {
  cli_progress_update(ctx, "rows", done, total, NULL);
}

static void print_cell(double sim, double measured) {
  if (isnan(sim)) printf(" %9s %7s", "-", "");
  else printf(" %9.3f %+6.1f%%", sim, 100 * (sim / measured - 1));
}

static void print_table(const reproduce_report *r) {
  cli_print_params();
  printf("%-11s %-11s %-15s %6s %6s %9s %9s %7s %9s %7s\n", "TABLE", "SETTING",
         "SYSTEM", "LAYERS", "BATCH", "MEASURED", "NETEM", "ERR", "TCP", "ERR");
  for (int i = 0; i < r->n; i++) {
    const reproduce_row *x = &r->rows[i];
    char size[16];
    if (x->bytes > 0) snprintf(size, sizeof size, "%.0fM", x->bytes / 1048576);
    else snprintf(size, sizeof size, "%d", x->batch);
    printf("%-11s %-11s %-15s %6d %6s %9.3f", x->table, x->setting, x->system,
           x->layers, size, x->measured_s);
    print_cell(x->sim_s[TRANSPORT_NETEM], x->measured_s);
    print_cell(x->sim_s[TRANSPORT_TCP], x->measured_s);
    putchar('\n');
  }
  printf("\n%-12s %5s %14s %14s\n", "TABLE", "ROWS", "NETEM med/max",
         "TCP med/max");
  for (int t = 0; t <= REPRODUCE_NTABLES; t++) {
    const char *name = t < REPRODUCE_NTABLES ? reproduce_tables[t] : NULL;
    printf("%-12s", name ? name : "all");
    int rows = 0;
    char cell[2][32];
    for (int m = 0; m < 2; m++) {
      double med, worst;
      transport_model tm = m ? TRANSPORT_TCP : TRANSPORT_NETEM;
      int n = reproduce_summary(r, name, tm, &med, &worst);
      if (n > rows) rows = n;
      if (n) snprintf(cell[m], sizeof cell[m], "%.1f%% / %.1f%%", 100 * med,
                      100 * worst);
      else snprintf(cell[m], sizeof cell[m], "-");
    }
    printf(" %5d %14s %14s\n", rows, cell[0], cell[1]);
  }
  printf("\n(error: simulated / measured - 1; med/max: median and worst |error|;"
         "\n tcp is the default model, netem a what-if without TCP;"
         "\n point-to-point times are checked under tcp only)\n");
}

/* A group's |error|: its rows, median and worst. */
static json_t *error_json(int n, double med, double worst) {
  json_t *s = json_object();
  json_object_set_new(s, "rows", json_integer(n));
  json_object_set_new(s, "median_abs_error", cli_json_number(med));
  json_object_set_new(s, "worst_abs_error", cli_json_number(worst));
  return s;
}

static json_t *summary_json(const reproduce_report *r) {
  json_t *o = json_object();
  for (int t = 0; t <= REPRODUCE_NTABLES; t++) {
    const char *name = t < REPRODUCE_NTABLES ? reproduce_tables[t] : NULL;
    json_t *by = json_object();
    for (int m = TRANSPORT_NETEM; m <= TRANSPORT_TCP; m++) {
      double med, worst;
      int n = reproduce_summary(r, name, (transport_model)m, &med, &worst);
      if (!n) continue;
      json_object_set_new(by, transport_model_name((transport_model)m),
                          error_json(n, med, worst));
    }
    json_object_set_new(o, name ? name : "all", by);
  }
  return o;
}

static void print_json(const reproduce_report *r) {
  json_t *o = json_object(), *rows = json_array();
  for (int i = 0; i < r->n; i++) {
    const reproduce_row *x = &r->rows[i];
    json_t *j = json_object();
    json_object_set_new(j, "table", json_string(x->table));
    json_object_set_new(j, "setting", json_string(x->setting));
    json_object_set_new(j, "system", json_string(x->system));
    json_object_set_new(j, "delay_ms", cli_json_number(x->delay_ms));
    json_object_set_new(j, "bandwidth_gbps", cli_json_number(x->bandwidth_gbps));
    json_object_set_new(j, "layers", json_integer(x->layers));
    json_object_set_new(j, "batch", json_integer(x->batch));
    json_object_set_new(j, "bytes", json_real(x->bytes));
    json_object_set_new(j, "measured_s", json_real(x->measured_s));
    for (int m = TRANSPORT_NETEM; m <= TRANSPORT_TCP; m++) {
      char key[32];
      snprintf(key, sizeof key, "%s_s", transport_model_name((transport_model)m));
      json_object_set_new(j, key, cli_json_number(x->sim_s[m]));
      snprintf(key, sizeof key, "%s_error", transport_model_name((transport_model)m));
      json_object_set_new(j, key,
                          cli_json_number(reproduce_error(x, (transport_model)m)));
    }
    json_array_append_new(rows, j);
  }
  json_object_set_new(o, "params", cli_json_params());
  json_object_set_new(o, "rows", rows);
  json_object_set_new(o, "summary", summary_json(r));
  cli_print_json(o, CLI_JSON);
}

/* --data: the file's rows, simulated, printed. */
static void data_table(const measure_set *m, const double *sim,
                       const double *error) {
  cli_print_params();
  printf("%5s %-12s %-24s %-16s %9s %9s %7s\n", "LINE", "GROUP", "SCENARIO",
         "METHOD", "MEASURED", "SIM", "ERR");
  for (int i = 0; i < measure_count(m); i++) {
    const measure_row *x = measure_row_at(m, i);
    printf("%5d %-12s %-24s %-16s %9.3f %9.3f %+6.1f%%\n", x->line, x->group,
           x->scenario, x->method, x->measured_s, sim[i], 100 * error[i]);
  }
  int ng;
  measure_group *g = measure_group_summaries(m, error, &ng);
  printf("\n%-16s %5s %8s %8s\n", "GROUP", "ROWS", "MEDIAN", "WORST");
  for (int k = 0; k < ng; k++) {
    char b[2][32];
    printf("%-16s %5d %8s %8s\n", g[k].name ? g[k].name : "all", g[k].rows,
           cli_real(b[0], sizeof b[0], "%.1f%%", 100 * g[k].median),
           cli_real(b[1], sizeof b[1], "%.1f%%", 100 * g[k].worst));
  }
  free(g);
  printf("\n(error: simulated / measured - 1; median and worst |error|)\n");
}

static void data_json(const measure_set *m, const double *sim,
                      const double *error) {
  json_t *o = json_object(), *rows = json_array(), *sum = json_object();
  json_object_set_new(o, "data", json_string(measure_path(m)));
  json_object_set_new(o, "params", cli_json_params());
  for (int i = 0; i < measure_count(m); i++) {
    const measure_row *x = measure_row_at(m, i);
    json_t *j = json_object();
    json_object_set_new(j, "line", json_integer(x->line));
    json_object_set_new(j, "group", json_string(x->group));
    json_object_set_new(j, "scenario", json_string(x->scenario));
    json_object_set_new(j, "method", json_string(x->method));
    json_object_set_new(j, "measured_s", json_real(x->measured_s));
    json_object_set_new(j, "sim_s", cli_json_number(sim[i]));
    json_object_set_new(j, "error", cli_json_number(error[i]));
    json_array_append_new(rows, j);
  }
  int ng;
  measure_group *g = measure_group_summaries(m, error, &ng);
  for (int k = 0; k < ng; k++)
    json_object_set_new(sum, g[k].name ? g[k].name : "all",
                        error_json(g[k].rows, g[k].median, g[k].worst));
  free(g);
  json_object_set_new(o, "rows", rows);
  json_object_set_new(o, "summary", sum);
  cli_print_json(o, CLI_JSON);
}

static int reproduce_data(const char *path, bool json, cli_progress *bar) {
  err e = {0};
  measure_set *m = measure_load(path, &e);
  if (!m) return cli_error("%s", e.msg);
  double *sim = malloc((size_t)measure_count(m) * sizeof *sim);
  double *error = malloc((size_t)measure_count(m) * sizeof *error);
  int rc = measure_run(m, sim, error, progress, bar, &e);
  cli_progress_end(bar);
  if (rc) cli_error("%s", e.msg);
  else if (json) data_json(m, sim, error);
  else data_table(m, sim, error);
  free(sim);
  free(error);
  measure_free(m);
  return rc ? CLI_ERROR : CLI_OK;
}

int cli_reproduce(int argc, char **argv) {
  bool json = false, quiet = false;
  const char *data = NULL, *params = NULL;
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "data", "FILE", &data,
                     "a measurements CSV instead of the built-in table"),
      CLI_OPT_STRING(0, "params", "FILE", &params,
                     "physical parameters from a params.json\n"
                     "(geodes calibrate -o)"),
      CLI_OPT_FLAG(0, "json", &json, "one JSON object: rows and summary"),
      CLI_OPT_QUIET(&quiet), CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&REPRODUCE, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  if (params && params_file_apply(params, &e)) return cli_error("%s", e.msg);
  cli_progress bar;
  cli_progress_start(&bar, "reproduce", quiet);
  if (data) return reproduce_data(data, json, &bar);
  reproduce_report *r = reproduce_run(progress, &bar, &e);
  cli_progress_end(&bar);
  if (!r) return cli_error("%s", e.msg);
  if (json) print_json(r);
  else print_table(r);
  reproduce_report_free(r);
  return CLI_OK;
}
