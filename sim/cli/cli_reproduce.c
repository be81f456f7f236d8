/* cli_reproduce: `geodes reproduce [--json]` — every calibration
 * measurement (DT-FM's own iteration and transfer times) simulated beside
 * its measured value (analysis/reproduce), and the median and worst error
 * per table: how far to trust the simulator.
 * Invariant: it prints what reproduce_run computed, nothing else. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/reproduce.h"
#include "sim/cli/cli.h"


static const cli_opt_command REPRODUCE = {
    .name = "reproduce",
    .usage =
        "usage: geodes reproduce [--json]\n\n"
        "Simulates every measurement of DT-FM's that geodes is calibrated on\n"
        "(an 8-stage pipeline sweep, the 64-GPU homogeneous table, NCCL and\n"
        "Gloo point-to-point times, the five geo cases at 24 layers) under\n"
        "tcp, the default model, and netem, a what-if (point-to-point under\n"
        "tcp only), beside the measured\n"
        "value, with the error per row and the median and worst per "
        "table.\n\n",
    .width = 9};

static void progress(void *ctx, int done, int total) {
  (void)ctx;
  fprintf(stderr, "\rsimulating %d/%d%s", done, total,
          done == total ? "\n" : "");
}

static void print_cell(double sim, double measured) {
  if (isnan(sim)) printf(" %9s %7s", "-", "");
  else printf(" %9.3f %+6.1f%%", sim, 100 * (sim / measured - 1));
}

static void print_table(const reproduce_report *r) {
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

static json_t *summary_json(const reproduce_report *r) {
  json_t *o = json_object();
  for (int t = 0; t <= REPRODUCE_NTABLES; t++) {
    const char *name = t < REPRODUCE_NTABLES ? reproduce_tables[t] : NULL;
    json_t *by = json_object();
    for (int m = TRANSPORT_NETEM; m <= TRANSPORT_TCP; m++) {
      double med, worst;
      int n = reproduce_summary(r, name, (transport_model)m, &med, &worst);
      if (!n) continue;
      json_t *s = json_object();
      json_object_set_new(s, "rows", json_integer(n));
      json_object_set_new(s, "median_abs_error", cli_json_number(med));
      json_object_set_new(s, "worst_abs_error", cli_json_number(worst));
      json_object_set_new(by, transport_model_name((transport_model)m), s);
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
  json_object_set_new(o, "rows", rows);
  json_object_set_new(o, "summary", summary_json(r));
  cli_print_json(o, CLI_JSON);
}

int cli_reproduce(int argc, char **argv) {
  bool json = false;
  const cli_opt opts[] = {
      CLI_OPT_FLAG(0, "json", &json, "one JSON object: rows and summary"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&REPRODUCE, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  reproduce_report *r =
      reproduce_run(cli_stderr_is_tty() ? progress : NULL, NULL, &e);
  if (!r) return cli_error("%s", e.msg);
  if (json) print_json(r);
  else print_table(r);
  reproduce_report_free(r);
  return CLI_OK;
}
