/* stats: the validation statistics of `geodes validate` — rank correlations
 * between a model's score and the simulated time, the predictor's error, and
 * the regret of trusting the model. Pure functions over caller arrays; no
 * input is modified and nothing is kept. */
#ifndef ANALYSIS_STATS_H
#define ANALYSIS_STATS_H

#include <stddef.h>

/* Average ranks (1-based; ties share the mean of the ranks they span) of
 * x[0..n-1] into ranks[0..n-1]. */
void stats_ranks(const double *x, size_t n, double *ranks);

/* Spearman's rho with average ranks for ties (Pearson of the ranks, as
 * gsl_stats_spearman, but summed in integers: exactly +-1 for a monotone
 * pair, never outside [-1, 1]). NAN when n < 2 or either side is constant. */
double stats_spearman(const double *x, const double *y, size_t n);

/* Kendall's tau-b, O(n log n) (Knight's merge-sort count). NAN when n < 2 or
 * when either side is constant. */
double stats_kendall(const double *x, const double *y, size_t n);

/* Mean absolute percentage error of predicted against actual, in percent:
 * 100/n * sum |p - a| / |a|. Pairs with a == 0 are skipped; NAN if none. */
double stats_mape(const double *predicted, const double *actual, size_t n);

/* Regret of trusting score: actual time of the lowest-scored sample over
 * the lowest actual time, minus 1; >= 0. Samples whose scores tie with the
 * lowest (within a relative 1e-9) are one choice the model cannot break, so
 * their mean actual time counts (the expected regret of picking among
 * them). NAN when n == 0. */
double stats_regret(const double *score, const double *actual, size_t n);

typedef struct stats_pair {
  size_t i, j;  /* score[i] < score[j] but actual[i] > actual[j] */
  double gap;   /* actual[i] / actual[j] - 1 > 0: how wrong the order is */
} stats_pair;

/* The discordant pairs (the model orders them opposite to actual; ties on
 * either side are not discordant): returns their number and writes the max
 * largest by gap into out[0..min(count,max)-1], largest first. O(n^2). */
size_t stats_discordant(const double *score, const double *actual, size_t n,
                        stats_pair *out, size_t max);

#endif
