/* test_calibrate: analysis/calibrate and `geodes calibrate` — known
 * parameters recovered from iteration times geodes itself simulated under
 * them (written as a measurements CSV, fitted from the defaults), the
 * cross-validated error beside the in-sample one, params.json read back by
 * --params, and every refusal (a parameter no row depends on, an unknown
 * --fit, an output that is not a regular file) with its message pinned. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/calibrate.h"
#include "analysis/measure.h"
#include "models/params.h"
#include "tests/support.h"

TestSuite(calibrate, .init = support_dir_make, .fini = support_dir_remove);

/* Small rows (8 layers, 64 sequences in passes of 8) on multi-dc, whose
 * 11 ms cross-site links bind a 1-socket TCP window: compute and window
 * both matter, each to different rows. */
#define HEADER "# source: geodes itself\nscenario,network,sockets,layers,batch," \
               "micro_batches_per_pass,measured_s\n"
static const char *const ROWS[] = {
    "multi-dc,tcp,1,8,64,8", "multi-dc,tcp,16,8,64,8",
    "multi-dc,tcp,1,16,64,8", "multi-dc,tcp,16,16,128,8",
    "multi-dc,tcp,2,8,128,8", "multi-dc,netem,,24,64,8"};
#define NROWS (int)(sizeof ROWS / sizeof *ROWS)

static const double TRUE_SITE_EFF = 0.35, TRUE_WINDOW = 8e5;

/* The rows' times under the true parameters, times (1 + noise[i]) (noise
 * NULL: exact), as a measurements CSV; returns its path. */
static const char *generate(const char *name, const double *noise) {
  char text[4096];
  int at = snprintf(text, sizeof text, HEADER);
  for (int i = 0; i < NROWS; i++)
    at += snprintf(text + at, sizeof text - (size_t)at, "%s,1\n", ROWS[i]);
  const char *path = support_write_file(support_path("%s", name), text);
  params_set(PARAMS_SITE_COMPUTE_EFFICIENCY, TRUE_SITE_EFF);
  params_set(PARAMS_WINDOW_BYTES, TRUE_WINDOW);
  err e = {0};
  measure_set *m = measure_load(path, &e);
  cr_assert(m, "%s", e.msg);
  at = snprintf(text, sizeof text, HEADER);
  for (int i = 0; i < NROWS; i++) {
    double s;
    cr_assert_eq(measure_sim(m, i, &s, &e), ERR_OK, "%s", e.msg);
    at += snprintf(text + at, sizeof text - (size_t)at, "%s,%.17g\n", ROWS[i],
                   s * (1 + (noise ? noise[i] : 0)));
  }
  measure_free(m);
  params_reset();
  return support_write_file(path, text);
}

static int sim_row(void *ctx, int i, double *out, err *e) {
  return measure_sim(ctx, i, out, e);
}

/* Fits the site efficiency and the window to the file at path in at most
 * max_iter iterations (0: the default); returns calibrate_fit's code, its
 * message in *e. */
static int fit_at_most(const char *path, int max_iter, calibrate_result *r,
                       err *e) {
  measure_set *m = measure_load(path, e);
  cr_assert(m, "%s", e->msg);
  double measured[NROWS];
  for (int i = 0; i < NROWS; i++) measured[i] = measure_row_at(m, i)->measured_s;
  calibrate_problem p = {.name = path, .n = NROWS, .measured = measured,
                         .sim = sim_row, .ctx = m};
  int ids[] = {PARAMS_SITE_COMPUTE_EFFICIENCY, PARAMS_WINDOW_BYTES};
  calibrate_opts o = {.folds = 3, .seed = 7, .max_iter = max_iter};
  int rc = calibrate_fit(&p, ids, 2, &o, r, e);
  measure_free(m);
  return rc;
}

static void fit(const char *path, calibrate_result *r) {
  err e = {0};
  cr_assert_eq(fit_at_most(path, 0, r, &e), ERR_OK, "%s", e.msg);
}

Test(calibrate, recovers_known_parameters_within_one_percent) {
  calibrate_result r;
  fit(generate("exact.csv", NULL), &r);
  cr_log_info("exact: site %.9g (true %g) window %.9g (true %g); in rms %.3g, "
              "cv rms %.3g, %d iterations", r.value[0], TRUE_SITE_EFF,
              r.value[1], TRUE_WINDOW, r.in_rms, r.cv_rms, r.iterations);
  /* from the defaults: 0.5 (the table's start) and 1.45 MB */
  cr_assert_lt(fabs(r.value[0] / TRUE_SITE_EFF - 1), 0.01, "%.6g", r.value[0]);
  cr_assert_lt(fabs(r.value[1] / TRUE_WINDOW - 1), 0.01, "%.6g", r.value[1]);
  cr_assert_eq(params_get(PARAMS_WINDOW_BYTES), r.value[1]); /* left set */
  cr_assert_lt(r.in_rms, 1e-6);
  cr_assert_eq(r.folds, 3);
  cr_assert_lt(r.cv_rms, 1e-6, "exact data: every fold recovers them too");
  for (int i = 0; i < NROWS; i++) cr_assert(isfinite(r.cv_error[i]));
  calibrate_result_free(&r);
}

Test(calibrate, cross_validated_error_is_the_held_out_one) {
  const double noise[NROWS] = {0.03, -0.02, -0.03, 0.02, 0.01, -0.01};
  calibrate_result r;
  fit(generate("noisy.csv", noise), &r);
  cr_log_info("noisy: site %.6g +/- %.2g window %.6g +/- %.2g; in median "
              "%.4f rms %.4f, cv median %.4f rms %.4f", r.value[0], r.sigma[0],
              r.value[1], r.sigma[1], r.in_median, r.in_rms, r.cv_median,
              r.cv_rms);
  /* the in-sample fit absorbs some noise; rows held out cannot */
  cr_assert_gt(r.in_rms, 0.005);
  cr_assert_gt(r.cv_rms, r.in_rms, "cv %g in %g", r.cv_rms, r.in_rms);
  cr_assert_lt(fabs(r.value[0] / TRUE_SITE_EFF - 1), 0.05);
  cr_assert_lt(fabs(r.value[1] / TRUE_WINDOW - 1), 0.10);
  cr_assert(r.sigma[0] > 0 && r.sigma[1] > 0);
  calibrate_result_free(&r);
}

Test(calibrate, a_fit_that_does_not_converge_says_so_and_restores) {
  const char *path = generate("short.csv", NULL);
  calibrate_result r;
  err e = {0};
  cr_assert_eq(fit_at_most(path, 1, &r, &e), ERR_CONFIG);
  char want[1024];
  snprintf(want, sizeof want, "%s: the fit did not converge after 1 "
           "iterations (exceeded max number of iterations); nothing written",
           path);
  cr_assert_str_eq(e.msg, want);
  cr_assert(params_all_default(), "the parameters as they were");
}

/* A time of 1 / gemm_efficiency, capped where the efficiency passes its
 * bound: the rows ask for more than the bound allows. */
static int capped(void *ctx, int i, double *out, err *e) {
  (void)ctx, (void)e;
  *out = (1 + i) / params_get(PARAMS_GEMM_EFFICIENCY);
  return ERR_OK;
}

/* Issue 35, 15: a one-parameter fit that ends where no row moves with it
 * says so, not that the rows "do not determine it apart from the others"
 * (there are none). */
Test(calibrate, a_lone_parameter_at_its_bound_is_not_apart_from_others) {
  const params_info *g = &params_table[PARAMS_GEMM_EFFICIENCY];
  double measured[3];
  for (int i = 0; i < 3; i++) measured[i] = (1 + i) / (g->hi * 4);
  calibrate_problem p = {.name = "rows.csv", .n = 3, .measured = measured,
                         .sim = capped};
  int ids[] = {PARAMS_GEMM_EFFICIENCY};
  calibrate_result r;
  err e = {0};
  int rc = calibrate_fit(&p, ids, 1, &(calibrate_opts){.folds = 0}, &r, &e);
  cr_assert_eq(rc, ERR_CONFIG, "%s", e.msg);
  cr_expect(strstr(e.msg, "parameter 'gemm_efficiency': the rows of rows.csv "
                   "do not determine it: at the fitted value no row's time "
                   "moves with it"), "%s", e.msg);
  cr_expect(!strstr(e.msg, "apart from the others"), "%s", e.msg);
  cr_assert(params_all_default(), "the parameters as they were");
}
