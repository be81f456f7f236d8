/* cli_calibrate: `geodes calibrate --data FILE --fit P,... [-o FILE]` —
 * the named physical parameters fitted to a measurements file (or the
 * built-in DT-FM table) by analysis/calibrate, each value with its
 * uncertainty, the in-sample and k-fold cross-validated errors, and the
 * fit as a params.json that --params reads back.
 * Invariant: it writes the output only after a fit that converged, and as
 * every output file is written (cli_out). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calibrate.h"
#include "analysis/measure.h"
#include "analysis/params_file.h"
#include "analysis/reproduce.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"

#define CALIBRATE_BUILTIN "builtin"

static void more_help(void) {
  printf("\nParameters (--fit; each fitted as its logarithm):\n");
  for (int p = 0; p < PARAMS_N; p++) {
    const params_info *i = &params_table[p];
    printf("  %-28s %s, default %g, in %g..%g\n      %s\n", i->name,
           i->unit, i->def, i->lo, i->hi, i->doc);
  }
}

static const cli_opt_command CALIBRATE = {
    .name = "calibrate",
    .usage =
        "usage: geodes calibrate --data FILE --fit P,... [-o params.json]\n\n"
        "Fits the named physical parameters to measured iteration times by\n"
        "nonlinear least squares (GSL's gsl_multifit_nlinear; residuals:\n"
        "simulated / measured - 1), from their current values (--params, or\n"
        "the built-in). Prints each value with its 1-sigma uncertainty (the\n"
        "covariance scaled by the residual variance) and the median and RMS\n"
        "|error| in sample and k-fold cross-validated (each fold predicted\n"
        "by a fit on the others): how far the fitted simulator can be\n"
        "trusted on rows it did not see. FILE is a measurements CSV (see\n"
        "geodes reproduce --help, analysis/VALIDATION.md, traces/FORMATS.md),\n"
        "or 'builtin': DT-FM's table that geodes reproduce checks, under\n"
        "tcp ('builtin:pipeline,p2p': those of its tables only). A\n"
        "parameter no row depends on, rows that cannot tell parameters\n"
        "apart, a fit that does not converge: an error, nothing written.\n\n",
    .width = 17,
    .more = more_help};

typedef struct cal_args {
  const char *data, *fit, *out, *params;
  long folds, seed;
  bool json, quiet;
} cal_args;

/* The rows: a measurements file, or the built-in table. */
typedef struct rows {
  measure_set *m;
  reproduce_report *b;
  double *measured;
  int n;
  cli_progress bar; /* the fit's simulations (their total is unknown) */
  long sims;
} rows;

static int sim_measure(void *ctx, int i, double *out, err *e) {
  rows *r = ctx;
  cli_progress_update(&r->bar, "simulations", (double)++r->sims, 0, NULL);
  return measure_sim(r->m, i, out, e);
}

static int sim_builtin(void *ctx, int i, double *out, err *e) {
  rows *r = ctx;
  cli_progress_update(&r->bar, "simulations", (double)++r->sims, 0, NULL);
  return reproduce_row_tcp(r->b, i, out, e);
}

/* "builtin:TABLE,...": keeps the rows of those tables of b; CLI_USAGE for
 * an unknown table or none left. */
static int keep_tables(reproduce_report *b, const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  bool keep[REPRODUCE_NTABLES] = {false};
  for (char *save, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    int k = 0;
    while (reproduce_tables[k] && strcmp(reproduce_tables[k], t) != 0) k++;
    if (!reproduce_tables[k])
      return cli_usage_error("calibrate", "--data builtin:%s: no table '%s' "
                             "(pipeline, homogeneous, p2p, geo)", list, t);
    keep[k] = true;
  }
  int n = 0;
  for (int i = 0; i < b->n; i++)
    for (int k = 0; k < REPRODUCE_NTABLES; k++)
      if (keep[k] && strcmp(b->rows[i].table, reproduce_tables[k]) == 0)
        b->rows[n++] = b->rows[i];
  b->n = n;
  return n ? CLI_OK : cli_usage_error("calibrate", "--data: no rows");
}

static int load_rows(const char *data, rows *r, calibrate_problem *p,
                     err *e) {
  *r = (rows){0};
  size_t nb = strlen(CALIBRATE_BUILTIN);
  bool builtin = strncmp(data, CALIBRATE_BUILTIN, nb) == 0 &&
                 (data[nb] == '\0' || data[nb] == ':');
  if (builtin) r->b = reproduce_load(e);
  else r->m = measure_load(data, e);
  if (!r->b && !r->m) return cli_error("%s", e->msg);
  int rc = builtin && data[nb] == ':' ? keep_tables(r->b, data + nb + 1) : 0;
  if (rc) return rc;
  r->n = r->b ? r->b->n : measure_count(r->m);
  r->measured = malloc((size_t)r->n * sizeof *r->measured);
  for (int i = 0; i < r->n; i++)
    r->measured[i] = r->b ? r->b->rows[i].measured_s
                          : measure_row_at(r->m, i)->measured_s;
  *p = (calibrate_problem){.name = data, .n = r->n, .measured = r->measured,
                           .sim = r->b ? sim_builtin : sim_measure, .ctx = r};
  return ERR_OK;
}

static void free_rows(rows *r) {
  measure_free(r->m);
  reproduce_report_free(r->b);
  free(r->measured);
}

static json_t *fit_json(const cal_args *a, const calibrate_result *r) {
  json_t *o = json_object(), *fit = json_object();
  json_object_set_new(o, "format", json_string(PARAMS_FILE_FORMAT));
  /* the fitted parameters, and what --params set kept */
  json_object_set_new(o, "params", params_file_json(r->ids, r->sigma, r->np));
  json_object_set_new(fit, "data", json_string(a->data));
  json_object_set_new(fit, "rows", json_integer(r->n));
  json_object_set_new(fit, "iterations", json_integer(r->iterations));
  json_t *in = json_object(), *cv = json_object();
  json_object_set_new(in, "median_abs_error", cli_json_number(r->in_median));
  json_object_set_new(in, "rms_error", cli_json_number(r->in_rms));
  json_object_set_new(cv, "folds", json_integer(r->folds));
  json_object_set_new(cv, "seed", json_integer(a->seed));
  json_object_set_new(cv, "median_abs_error", cli_json_number(r->cv_median));
  json_object_set_new(cv, "rms_error", cli_json_number(r->cv_rms));
  json_object_set_new(fit, "in_sample", in);
  json_object_set_new(fit, "cross_validated", cv);
  json_object_set_new(o, "fit", fit);
  return o;
}

static void print_fit(const cal_args *a, const calibrate_result *r) {
  printf("data        %s, %d rows; %d iterations\n\n", a->data, r->n,
         r->iterations);
  printf("%-28s %14s %12s %12s  %s\n", "PARAMETER", "VALUE", "+/- 1 SIGMA",
         "DEFAULT", "UNIT");
  for (int k = 0; k < r->np; k++) {
    const params_info *i = &params_table[r->ids[k]];
    printf("%-28s %14.6g %12.3g %12.6g  %s\n", i->name, r->value[k],
           r->sigma[k], i->def, i->unit);
  }
  printf("\n%-22s %8s %8s\n", "|ERROR|", "MEDIAN", "RMS");
  printf("%-22s %7.2f%% %7.2f%%\n", "in sample", 100 * r->in_median,
         100 * r->in_rms);
  char cv[32];
  snprintf(cv, sizeof cv, "%d-fold cross-valid.", r->folds);
  if (r->folds) printf("%-22s %7.2f%% %7.2f%%\n", cv, 100 * r->cv_median,
                       100 * r->cv_rms);
  else printf("%-22s %8s %8s\n", "cross-validated", "-", "-");
  printf("\n(error: simulated / measured - 1; folds dealt from --seed %ld)\n",
         a->seed);
}

/* Writes o to path whole, or nothing (cli_out: a regular file replaced
 * once complete, a device or pipe written through, a folder refused). */
static int write_params(const char *path, json_t *o) {
  cli_out out;
  int rc = cli_out_open(&out, path, "the parameters");
  if (rc) return rc;
  if (json_out_write(o, out.f, JSON_INDENT(2)) != 0 ||
      fputc('\n', out.f) == EOF)
    rc = cli_error("%s: cannot write the parameters", path);
  return cli_out_close(&out, rc);
}

static int parse_args(int argc, char **argv, cal_args *a, int *ids, int *np) {
  *a = (cal_args){.folds = CALIBRATE_DEFAULT_FOLDS, .seed = 1};
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "data", "FILE", &a->data,
                     "measurements CSV, 'builtin' or\n"
                     "'builtin:TABLE,...' (required)"),
      CLI_OPT_STRING(0, "fit", "P,...", &a->fit,
                     "the parameters to fit (below; required)"),
      CLI_OPT_STRING('o', "output", "-o FILE", &a->out,
                     "write the fit as a params.json (--params)"),
      CLI_OPT_STRING(0, "params", "FILE", &a->params,
                     "start from (and keep) a params.json's values"),
      CLI_OPT_INT(0, "folds", "K", &a->folds, 0, 1000,
                  "cross-validation folds (default " CLI_STR(
                      CALIBRATE_DEFAULT_FOLDS) "; 0: none)"),
      CLI_OPT_INT(0, "seed", "S", &a->seed, 0, 1L << 31,
                  "seed of the fold assignment (default 1)"),
      CLI_OPT_FLAG(0, "json", &a->json, "print the params.json on stdout"),
      CLI_OPT_QUIET(&a->quiet), CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&CALIBRATE, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  if (!a->data) return cli_usage_error("calibrate", "--data FILE is required");
  if (!a->fit) return cli_usage_error("calibrate", "--fit P,... is required");
  err e = {0};
  if (params_parse_list(a->fit, ids, np, &e) == ERR_OK) return CLI_OK;
  return cli_usage_error("calibrate", "--fit: %s%s", e.msg,
                         e.code == ERR_MISSING ? " (see geodes calibrate "
                                                 "--help)" : "");
}

int cli_calibrate(int argc, char **argv) {
  cal_args a;
  int ids[PARAMS_N], np = 0;
  int rc = parse_args(argc, argv, &a, ids, &np);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  if (a.params && params_file_apply(a.params, &e)) return cli_error("%s", e.msg);
  rows r;
  calibrate_problem p;
  if ((rc = load_rows(a.data, &r, &p, &e))) {
    free_rows(&r);
    return rc;
  }
  calibrate_opts o = {.folds = (int)a.folds, .seed = (uint64_t)a.seed};
  calibrate_result res;
  cli_progress_start(&r.bar, "calibrate", a.quiet);
  bool fitted = calibrate_fit(&p, ids, np, &o, &res, &e) == ERR_OK;
  cli_progress_end(&r.bar);
  rc = fitted ? CLI_OK : cli_error("%s", e.msg);
  if (rc == CLI_OK) {
    json_t *j = fit_json(&a, &res);
    if (a.json) cli_print_json(json_incref(j), JSON_INDENT(2) |
                                                   JSON_REAL_PRECISION(17));
    else print_fit(&a, &res);
    if (a.out) rc = write_params(a.out, j);
    if (rc == CLI_OK && a.out && strcmp(a.out, "-") != 0 && !a.json)
      printf("wrote %s\n", a.out);
    json_decref(j);
    calibrate_result_free(&res);
  }
  free_rows(&r);
  return rc;
}
