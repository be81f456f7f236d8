/* calibrate: fits named physical parameters (models/params.h) to measured
 * times by nonlinear least squares (GSL's gsl_multifit_nlinear, trust
 * region with a finite-difference Jacobian), each parameter's logarithm
 * (all are positive), residuals the relative errors sim / measured - 1;
 * reports each value with its uncertainty (the covariance scaled by the
 * residual variance) and the k-fold cross-validated error beside the
 * in-sample one.
 * Invariant: the rows are simulated only through the problem's sim
 * function under the parameter values set here; when calibrate_fit
 * returns, the parameters hold the full fit (ERR_OK) or the values they
 * held before it (an error). */
#ifndef ANALYSIS_CALIBRATE_H
#define ANALYSIS_CALIBRATE_H

#include <stdint.h>

#include "base/err.h"
#include "models/params.h"

/* Row i's simulated seconds under the current parameters. */
typedef int (*calibrate_sim_fn)(void *ctx, int i, double *sim_s, err *e);

/* The rows: n measured times (borrowed) and how to simulate each. name
 * (the data file) appears in messages. */
typedef struct calibrate_problem {
  const char *name;
  int n;
  const double *measured;
  calibrate_sim_fn sim;
  void *ctx;
} calibrate_problem;

#define CALIBRATE_DEFAULT_FOLDS 5
#define CALIBRATE_MAX_ITER 100

typedef struct calibrate_opts {
  int folds;     /* k of the cross-validation; < 2: none */
  uint64_t seed; /* the fold assignment's shuffle */
  int max_iter;  /* of each fit; <= 0: CALIBRATE_MAX_ITER */
} calibrate_opts;

/* A fit: values (also set in models/params), their 1-sigma uncertainties,
 * and the errors: per row in sample (error) and held out (cv_error, NAN
 * without cross-validation), both owned (calibrate_result_free). */
typedef struct calibrate_result {
  int np, ids[PARAMS_N];
  double value[PARAMS_N], sigma[PARAMS_N];
  int n, folds, iterations;
  double *error, *cv_error;
  double in_median, in_rms, cv_median, cv_rms; /* of |error|, NAN: none */
} calibrate_result;

/* Fits the np parameters ids (distinct) to p's rows, starting from their
 * current values (a parameter whose value is 0, unset, from its table
 * start). Errors (e filled, parameters restored): ERR_CONFIG when the rows
 * do not determine a parameter ("parameter 'NAME': ...": a zero Jacobian
 * column, a singular covariance, fewer rows than parameters) or the fit
 * does not converge ("did not converge"); a simulation's error as it is. */
int calibrate_fit(const calibrate_problem *p, const int *ids, int np,
                  const calibrate_opts *o, calibrate_result *r, err *e);
void calibrate_result_free(calibrate_result *r);

#endif
