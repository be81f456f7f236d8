/* calibrate: nonlinear least squares over the named parameters (see
 * calibrate.h). The fold assignment is a shuffle of the rows by a
 * Mersenne twister seeded with the seed, then row k of the shuffle in fold
 * k mod K: the same seed gives the same folds. */
#include "analysis/calibrate.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/mem.h"

/* Finite-difference step on log(value): 0.1 % of the parameter. A
 * simulated time is piecewise smooth (an event that changes order moves
 * it by a jump), so a step much below that reads a jump as a steep slope
 * and the uncertainty as far too small; 0.1 % is a secant over it. */
#define CALIBRATE_H_DF 1e-3
/* Convergence tolerances of gsl_multifit_nlinear_driver. */
#define CALIBRATE_XTOL 1e-10
#define CALIBRATE_GTOL 1e-12
#define CALIBRATE_FTOL 1e-14
/* A Jacobian column below this norm (relative error per unit of log
 * parameter) means no row depends on the parameter. */
#define CALIBRATE_ZERO_COLUMN 1e-9
/* Relative tolerance of the covariance's rank test. */
#define CALIBRATE_COVAR_EPS 1e-12

/* One fit's context: the rows it uses and the parameters it varies. */
typedef struct fit {
  const calibrate_problem *p;
  const int *rows; /* indices into p's rows */
  int n;
  const int *ids;
  int np, max_iter;
  err *e;
  int rc; /* the first simulation error */
} fit;

/* Sets the parameters from log values x, clamped to their bounds. */
static void set_params(const int *ids, int np, const gsl_vector *x) {
  for (int k = 0; k < np; k++) {
    const params_info *i = &params_table[ids[k]];
    double v = exp(gsl_vector_get(x, (size_t)k));
    params_set(ids[k], fmin(fmax(v, i->lo), i->hi));
  }
}

static int residuals(const gsl_vector *x, void *ctx, gsl_vector *f) {
  fit *t = ctx;
  set_params(t->ids, t->np, x);
  for (int j = 0; j < t->n; j++) {
    int i = t->rows[j];
    double sim;
    int rc = t->p->sim(t->p->ctx, i, &sim, t->e);
    if (rc) {
      if (!t->rc) t->rc = rc;
      return GSL_EBADFUNC;
    }
    gsl_vector_set(f, (size_t)j, sim / t->p->measured[i] - 1);
  }
  return GSL_SUCCESS;
}

/* A column of J (the parameter k) that is zero: no row depends on it. */
static int zero_column(const fit *t, const gsl_matrix *J, err *e) {
  for (int k = 0; k < t->np; k++) {
    gsl_vector_const_view c = gsl_matrix_const_column(J, (size_t)k);
    if (gsl_blas_dnrm2(&c.vector) < CALIBRATE_ZERO_COLUMN)
      return err_set(e, ERR_CONFIG, "parameter '%s': no row of %s depends on "
                     "it (a zero Jacobian column); add rows it changes",
                     params_table[t->ids[k]].name, t->p->name);
  }
  return ERR_OK;
}

/* The fitted log values into x, the covariance into covar (NULL: none),
 * the residual sum of squares into *chi2. */
static int solve(fit *t, gsl_vector *x, gsl_matrix *covar, double *chi2,
                 int *iters, err *e) {
  if (t->n < t->np)
    return err_set(e, ERR_CONFIG, "parameter '%s': %d rows cannot determine "
                   "%d parameters", params_table[t->ids[t->np - 1]].name,
                   t->n, t->np);
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  fp.h_df = CALIBRATE_H_DF;
  gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(
      gsl_multifit_nlinear_trust, &fp, (size_t)t->n, (size_t)t->np);
  gsl_multifit_nlinear_fdf fdf = {.f = residuals, .n = (size_t)t->n,
                                  .p = (size_t)t->np, .params = t};
  int info = 0, status = gsl_multifit_nlinear_init(x, &fdf, w), rc = ERR_OK;
  if (!status) rc = zero_column(t, gsl_multifit_nlinear_jac(w), e);
  if (!status && !rc)
    status = gsl_multifit_nlinear_driver((size_t)t->max_iter, CALIBRATE_XTOL,
                                         CALIBRATE_GTOL, CALIBRATE_FTOL, NULL,
                                         NULL, &info, w);
  /* GSL_ENOPROG: no step lowers the cost any more, a minimum to the
   * simulator's resolution; GSL_EMAXITER and the rest did not converge. */
  if (status == GSL_ENOPROG) status = GSL_SUCCESS;
  if (t->rc) rc = t->rc;
  else if (!rc && status)
    rc = err_set(e, ERR_CONFIG, "%s: the fit did not converge after %zu "
                 "iterations (%s); nothing written", t->p->name,
                 gsl_multifit_nlinear_niter(w), gsl_strerror(status));
  if (!rc) {
    gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w),
                  gsl_multifit_nlinear_residual(w), chi2);
    if (covar)
      gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w),
                                 CALIBRATE_COVAR_EPS, covar);
    *iters = (int)gsl_multifit_nlinear_niter(w);
  }
  gsl_multifit_nlinear_free(w);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median and root mean square of |v| over its n finite entries. */
static void summarise(const double *v, int n, double *median, double *rms) {
  double *a = mem_alloc((size_t)(n + 1) * sizeof *a), ss = 0;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(v[i])) a[m++] = fabs(v[i]), ss += v[i] * v[i];
  qsort(a, (size_t)m, sizeof *a, cmp_double);
  *median = m ? (m % 2 ? a[m / 2] : (a[m / 2 - 1] + a[m / 2]) / 2) : NAN;
  *rms = m ? sqrt(ss / m) : NAN;
  free(a);
}

/* The start: each parameter's current value (its table start if unset). */
static void start(const int *ids, int np, gsl_vector *x) {
  for (int k = 0; k < np; k++) {
    double v = params_get(ids[k]);
    gsl_vector_set(x, (size_t)k, log(v > 0 ? v : params_table[ids[k]].start));
  }
}

/* The rows' errors under the current parameters into err_out[row]. */
static int errors(const calibrate_problem *p, const int *rows, int n,
                  double *out, err *e) {
  for (int j = 0; j < n; j++) {
    double sim;
    int rc = p->sim(p->ctx, rows[j], &sim, e);
    if (rc) return rc;
    out[rows[j]] = sim / p->measured[rows[j]] - 1;
  }
  return ERR_OK;
}

/* Fold of each row: a seeded shuffle, dealt round-robin into k folds. */
static void folds_of(int n, int k, uint64_t seed, int *fold) {
  int *perm = mem_alloc((size_t)n * sizeof *perm);
  for (int i = 0; i < n; i++) perm[i] = i;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, (unsigned long)seed);
  gsl_ran_shuffle(rng, perm, (size_t)n, sizeof *perm);
  gsl_rng_free(rng);
  for (int i = 0; i < n; i++) fold[perm[i]] = i % k;
  free(perm);
}

/* k-fold cross-validation: each fold's rows predicted by a fit on the
 * others, from the same start as the full fit. */
static int cross_validate(const calibrate_problem *p, const int *ids, int np,
                          const gsl_vector *x0, const calibrate_opts *o,
                          double *cv, err *e) {
  int k = o->folds;
  int n = p->n, *fold = mem_alloc((size_t)n * sizeof *fold);
  int *train = mem_alloc((size_t)n * sizeof *train);
  int *test = mem_alloc((size_t)n * sizeof *test), rc = ERR_OK;
  gsl_vector *x = gsl_vector_alloc((size_t)np);
  folds_of(n, k, o->seed, fold);
  for (int f = 0; f < k && !rc; f++) {
    int ntr = 0, nte = 0, iters;
    for (int i = 0; i < n; i++)
      if (fold[i] == f) test[nte++] = i;
      else train[ntr++] = i;
    fit t = {.p = p, .rows = train, .n = ntr, .ids = ids, .np = np,
             .max_iter = o->max_iter, .e = e};
    double chi2;
    gsl_vector_memcpy(x, x0);
    rc = solve(&t, x, NULL, &chi2, &iters, e);
    if (rc && e) {
      char msg[ERR_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", e->msg);
      snprintf(e->msg, sizeof e->msg, "cross-validation fold %d of %d: %.900s",
               f + 1, k, msg);
    }
    if (!rc) set_params(ids, np, x), rc = errors(p, test, nte, cv, e);
  }
  gsl_vector_free(x);
  free(fold), free(train), free(test);
  return rc;
}

/* The full fit: values, uncertainties and in-sample errors into r. */
static int full_fit(const calibrate_problem *p, const int *ids, int np,
                    const gsl_vector *x0, int max_iter, calibrate_result *r,
                    err *e) {
  int *all = mem_alloc((size_t)p->n * sizeof *all), rc;
  for (int i = 0; i < p->n; i++) all[i] = i;
  gsl_vector *x = gsl_vector_alloc((size_t)np);
  gsl_matrix *covar = gsl_matrix_alloc((size_t)np, (size_t)np);
  gsl_vector_memcpy(x, x0);
  fit t = {.p = p, .rows = all, .n = p->n, .ids = ids, .np = np,
           .max_iter = max_iter, .e = e};
  double chi2 = 0;
  rc = solve(&t, x, covar, &chi2, &r->iterations, e);
  double dof = p->n - np, var = dof > 0 ? chi2 / dof : NAN;
  for (int k = 0; k < np && !rc; k++) {
    double c = gsl_matrix_get(covar, (size_t)k, (size_t)k);
    if (!(c > 0))
      rc = err_set(e, ERR_CONFIG, "parameter '%s': the rows of %s do not "
                   "determine it%s (singular covariance)",
                   params_table[ids[k]].name, p->name,
                   np > 1 ? " apart from the others"
                          : ": at the fitted value no row's time moves with "
                            "it (a bound, or a flat stretch)");
  }
  if (!rc) set_params(ids, np, x), rc = errors(p, all, p->n, r->error, e);
  for (int k = 0; k < np && !rc; k++) { /* the values as set: clamped */
    double c = gsl_matrix_get(covar, (size_t)k, (size_t)k);
    r->value[k] = params_get(ids[k]);
    r->sigma[k] = r->value[k] * sqrt(c * var); /* delta method from log */
  }
  gsl_matrix_free(covar);
  gsl_vector_free(x);
  free(all);
  return rc;
}

int calibrate_fit(const calibrate_problem *p, const int *ids, int np,
                  const calibrate_opts *o, calibrate_result *r, err *e) {
  *r = (calibrate_result){.np = np, .n = p->n, .cv_median = NAN,
                          .cv_rms = NAN};
  memcpy(r->ids, ids, (size_t)np * sizeof *ids);
  r->error = mem_alloc((size_t)p->n * sizeof *r->error);
  r->cv_error = mem_alloc((size_t)p->n * sizeof *r->cv_error);
  for (int i = 0; i < p->n; i++) r->error[i] = r->cv_error[i] = NAN;
  double before[PARAMS_N];
  for (int k = 0; k < PARAMS_N; k++) before[k] = params_get(k);
  gsl_error_handler_t *handler = gsl_set_error_handler_off();
  gsl_vector *x0 = gsl_vector_alloc((size_t)np);
  start(ids, np, x0);
  calibrate_opts op = o ? *o : (calibrate_opts){.seed = 1};
  if (op.max_iter <= 0) op.max_iter = CALIBRATE_MAX_ITER;
  if (op.folds > p->n) op.folds = p->n;
  int rc = full_fit(p, ids, np, x0, op.max_iter, r, e);
  if (!rc && op.folds >= 2) {
    r->folds = op.folds;
    rc = cross_validate(p, ids, np, x0, &op, r->cv_error, e);
  }
  gsl_vector_free(x0);
  gsl_set_error_handler(handler);
  for (int j = 0; j < PARAMS_N; j++) params_set(j, before[j]);
  if (rc) {
    calibrate_result_free(r);
    return rc;
  }
  for (int j = 0; j < np; j++) params_set(ids[j], r->value[j]);
  summarise(r->error, p->n, &r->in_median, &r->in_rms);
  summarise(r->cv_error, p->n, &r->cv_median, &r->cv_rms);
  return ERR_OK;
}

void calibrate_result_free(calibrate_result *r) {
  if (!r) return;
  free(r->error);
  free(r->cv_error);
  r->error = r->cv_error = NULL;
}
