/* test_stats: the validation statistics against hand-computed values (with
 * ties) and against naive O(n^2) references on seeded random data. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "analysis/stats.h"

#define EPS 1e-12

Test(stats, ranks_average_ties) {
  double x[] = {10, 20, 20, 5, 20, 7};
  double r[6];
  stats_ranks(x, 6, r);
  double want[] = {3, 5, 5, 1, 5, 2}; /* 20s share ranks 4,5,6 */
  for (int i = 0; i < 6; i++) cr_expect_float_eq(r[i], want[i], EPS, "%d", i);
}

Test(stats, hand_case_ties_in_y) {
  double x[] = {1, 2, 3, 4, 5}, y[] = {5, 6, 7, 8, 7};
  /* ranks y = 1 2 3.5 5 3.5: rho = 8 / sqrt(10 * 9.5) */
  cr_expect_float_eq(stats_spearman(x, y, 5), 8 / sqrt(95), EPS);
  /* C = 8, D = 1, one y tie: tau_b = 7 / sqrt(10 * 9) */
  cr_expect_float_eq(stats_kendall(x, y, 5), 7 / sqrt(90), EPS);
}

Test(stats, hand_case_ties_both_sides) {
  double x[] = {1, 1, 2, 2, 3}, y[] = {1, 2, 1, 2, 3};
  cr_expect_float_eq(stats_spearman(x, y, 5), 5.0 / 9.0, EPS);
  /* C = 5, D = 1, n1 = n2 = 2: tau_b = 4 / sqrt(8 * 8) */
  cr_expect_float_eq(stats_kendall(x, y, 5), 0.5, EPS);
}

Test(stats, perfect_and_reversed) {
  double x[] = {1, 2, 3, 4}, up[] = {10, 20, 30, 40}, down[] = {4, 3, 2, 1};
  cr_expect_float_eq(stats_spearman(x, up, 4), 1.0, EPS);
  cr_expect_float_eq(stats_kendall(x, up, 4), 1.0, EPS);
  cr_expect_float_eq(stats_spearman(x, down, 4), -1.0, EPS);
  cr_expect_float_eq(stats_kendall(x, down, 4), -1.0, EPS);
}

Test(stats, undefined_cases_are_nan) {
  double x[] = {1, 2, 3}, c[] = {7, 7, 7};
  cr_expect(isnan(stats_spearman(x, c, 3)));
  cr_expect(isnan(stats_kendall(c, x, 3)));
  cr_expect(isnan(stats_kendall(x, x, 1)));
  cr_expect(isnan(stats_mape(x, x, 0)));
  cr_expect(isnan(stats_regret(x, x, 0)));
}

Test(stats, mape_percent_skips_zero_actual) {
  double p[] = {110, 90, 50, 3}, a[] = {100, 100, 40, 0};
  cr_expect_float_eq(stats_mape(p, a, 4), 15.0, EPS);
}

Test(stats, regret_of_the_best_score_ties_averaged) {
  double score[] = {3, 1, 2, 1}, actual[] = {10, 12, 11, 9};
  /* samples 1 and 3 tie: (12 + 9) / 2 over the best 9 */
  cr_expect_float_eq(stats_regret(score, actual, 4), 10.5 / 9.0 - 1, EPS);
  double good[] = {9, 12, 11, 10};
  cr_expect_float_eq(stats_regret(score, good, 4), 11.0 / 9.0 - 1, EPS);
  double unique[] = {3, 1, 2, 1.5};
  cr_expect_float_eq(stats_regret(unique, actual, 4), 12.0 / 9.0 - 1, EPS);
  double best[] = {12, 9, 11, 10};
  cr_expect_float_eq(stats_regret(unique, best, 4), 0.0, EPS);
  /* a tie within rounding (1e-12 relative) is a tie */
  double near[] = {3, 1, 2, 1 + 1e-12};
  cr_expect_float_eq(stats_regret(near, actual, 4), 10.5 / 9.0 - 1, EPS);
}

Test(stats, discordant_sorted_by_gap) {
  double score[] = {1, 2, 3}, actual[] = {3, 2, 1};
  stats_pair p[2];
  cr_assert_eq(stats_discordant(score, actual, 3, p, 2), 3);
  cr_expect(p[0].i == 0 && p[0].j == 2);
  cr_expect_float_eq(p[0].gap, 2.0, EPS);
  cr_expect(p[1].i == 1 && p[1].j == 2);
  cr_expect_float_eq(p[1].gap, 1.0, EPS);
  double tied[] = {1, 1, 3};
  cr_expect_eq(stats_discordant(tied, actual, 3, NULL, 0), 2);
}

/* Naive references: O(n^2) pair counts and ranks. */
static double brute_kendall(const double *x, const double *y, size_t n) {
  double c = 0, d = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double s = (x[i] - x[j]) * (y[i] - y[j]);
      if (x[i] == x[j] && y[i] == y[j]) continue;
      if (x[i] == x[j]) tx++;
      else if (y[i] == y[j]) ty++;
      else if (s > 0) c++;
      else d++;
    }
  return (c - d) / sqrt((c + d + tx) * (c + d + ty));
}

static double naive_rank(const double *x, size_t n, size_t i) {
  double less = 0, equal = 0;
  for (size_t j = 0; j < n; j++) less += x[j] < x[i], equal += x[j] == x[i];
  return less + (equal + 1) / 2;
}

static double naive_spearman(const double *x, const double *y, size_t n) {
  double rx[200], ry[200], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    rx[i] = naive_rank(x, n, i), ry[i] = naive_rank(y, n, i);
    mx += rx[i] / n, my += ry[i] / n;
  }
  for (size_t i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx), syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxy / sqrt(sxx * syy);
}

Test(stats, random_against_brute_force) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 42);
  double x[200], y[200], rk[200];
  for (int trial = 0; trial < 300; trial++) {
    size_t n = 2 + gsl_rng_uniform_int(r, 199);
    unsigned long range = 1 + gsl_rng_uniform_int(r, trial % 3 ? 6 : 1000);
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)gsl_rng_uniform_int(r, range);
      y[i] = (double)gsl_rng_uniform_int(r, range) + 0.5 * x[i];
    }
    stats_ranks(x, n, rk);
    for (size_t i = 0; i < n; i++)
      cr_assert_float_eq(rk[i], naive_rank(x, n, i), EPS);
    double k = stats_kendall(x, y, n), ref = brute_kendall(x, y, n);
    if (isnan(ref)) {
      cr_assert(isnan(k), "trial %d", trial);
      continue;
    }
    cr_assert_float_eq(k, ref, 1e-9, "trial %d n %zu: %g vs %g", trial, n, k,
                       ref);
    cr_assert_float_eq(stats_spearman(x, y, n), naive_spearman(x, y, n), 1e-9,
                       "trial %d", trial);
    size_t discordant = stats_discordant(x, y, n, NULL, 0), d = 0;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) d += x[i] < x[j] && y[i] > y[j];
    cr_assert_eq(discordant, d);
  }
  gsl_rng_free(r);
}

/* Three points, two tied on both sides, ranked exactly opposite: rho is -1
 * exactly (GSL's Pearson of the ranks rounds to -1.0000000000000002 here,
 * which `geodes validate datacenter --samples 3` printed), and no input of
 * the random trials gives a rho outside [-1, 1]. */
Test(stats, spearman_stays_in_range) {
  double score[] = {4.795, 10.22, 4.795};
  double actual[] = {14.270837736, 12.32905862, 14.270837736};
  cr_expect_eq(stats_spearman(score, actual, 3), -1.0, "%.17g",
               stats_spearman(score, actual, 3));
  cr_expect_eq(stats_spearman(score, score, 3), 1.0);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  double x[12], y[12];
  for (int trial = 0; trial < 2000; trial++) {
    size_t n = 2 + gsl_rng_uniform_int(r, 11);
    int flip = trial % 2 ? -1 : 1;
    for (size_t i = 0; i < n; i++) {
      x[i] = 0.1 * (double)gsl_rng_uniform_int(r, 4);
      y[i] = flip * x[i] * 3.7; /* monotone in x: rho is exactly +-1 */
    }
    double rho = stats_spearman(x, y, n);
    if (isnan(rho)) continue; /* x constant */
    cr_assert_eq(rho, (double)flip, "trial %d: %.17g", trial, rho);
  }
  gsl_rng_free(r);
}
