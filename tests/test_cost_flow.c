/* test_cost_flow: the bottleneck matching over site classes of any number
 * (models/cost_flow.c) against the matching over the devices
 * (cost_bottleneck_match, itself checked against every permutation in
 * test_cost.c): random class instances with ties and with spread weights,
 * and random scenarios whose groups are larger than the memo reaches
 * (pairings from the transport included: a permutation whose largest edge
 * is the value); and greedy's constructions by site against the device
 * scan they replace, bit for bit. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "models/cost_parts.h"
#include "schedules/baseline.h"
#include "tests/support.h"
#include "traces/scenario.h"

/* k units drawn into at most most classes of random sizes (the last takes
 * what is left): their number; c[i] their sizes. */
static int draw_classes(gsl_rng *r, int k, int most, int *c) {
  int n = 0;
  for (int left = k; left > 0 && n < most; n++) {
    c[n] = n + 1 == most ? left
                         : 1 + (int)gsl_rng_uniform_int(r, (unsigned long)(
                                   left < 2 * k / most + 1 ? left
                                                           : 2 * k / most + 1));
    left -= c[n];
  }
  return n;
}

enum { KMAX = 96, CMAX = 24 };

/* The transport's value equals the expanded matrix's matching, to the bit;
 * its flow sends every unit over edges no heavier than the value. */
Test(cost_flow, classes_equal_the_expanded_matching) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  cost_scratch *s = cost_scratch_new(KMAX, 2);
  cost_flow fw = {0};
  static double w[KMAX * KMAX];
  for (int t = 0; t < 3000; t++) {
    int k = 1 + (int)gsl_rng_uniform_int(r, KMAX);
    int most = 1 + (int)gsl_rng_uniform_int(r, CMAX);
    int ca[CMAX], cb[CMAX], flow[CMAX * CMAX];
    int da = draw_classes(r, k, most, ca), db = draw_classes(r, k, most, cb);
    double v[CMAX * CMAX];
    for (int i = 0; i < da * db; i++)
      v[i] = t % 2 ? (double)gsl_rng_uniform_int(r, 6)
                   : gsl_rng_uniform(r) * 100;
    int row = 0;
    for (int x = 0; x < da; x++)
      for (int a = 0; a < ca[x]; a++, row++) {
        int col = 0;
        for (int y = 0; y < db; y++)
          for (int b = 0; b < cb[y]; b++, col++) w[row * k + col] = v[x * db + y];
      }
    double want = cost_bottleneck_match(k, w, NULL, s);
    double got = cost_bottleneck_flow(da, ca, db, cb, v, flow, &fw);
    cr_assert(got == want, "t %d k %d: %.17g vs %.17g", t, k, got, want);
    for (int x = 0; x < da; x++) {
      int sum = 0;
      for (int y = 0; y < db; y++) {
        int f = flow[x * db + y];
        cr_assert(f >= 0 && (f == 0 || v[x * db + y] <= got), "t %d", t);
        sum += f;
      }
      cr_assert_eq(sum, ca[x], "t %d: row class %d", t, x);
    }
    for (int y = 0; y < db; y++) {
      int sum = 0;
      for (int x = 0; x < da; x++) sum += flow[x * db + y];
      cr_assert_eq(sum, cb[y], "t %d: column class %d", t, y);
    }
    if (da <= COST_CLASSES_MAX && db <= COST_CLASSES_MAX)
      cr_assert(cost_bottleneck_classes(da, ca, db, cb, v) == want);
  }
  cost_flow_free(&fw);
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* Groups larger than the memo reaches (replicas > 16), over up to 40
 * sites: the value by classes equals the device matching, and above
 * COST_PAIR_DEVICES_MAX the pairing from the transport is a permutation
 * whose heaviest edge is the value. */
Test(cost_flow, big_groups_as_the_device_matching) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int t = 0; t < 24; t++) {
    int k = 17 + (int)gsl_rng_uniform_int(r, 100), ns = 2 + t % 40;
    scenario *sc = support_random_scenario(r, ns, 3, k, t % 2);
    err e = {0};
    cost_ctx *c = cost_ctx_from_scenario(sc, &e);
    cr_assert(c, "%s", e.msg);
    cost_scratch *s = cost_scratch_new(k, 3), *cold = cost_scratch_new(k, 3);
    int n = 3 * k, *g = malloc((size_t)n * sizeof *g);
    int *m = malloc((size_t)k * sizeof *m), *seen = calloc((size_t)k, sizeof *seen);
    double *w = malloc((size_t)k * k * sizeof *w);
    for (int i = 0; i < n; i++) g[i] = i;
    for (int q = 0; q < 20; q++) {
      if (q) gsl_ran_shuffle(r, g, (size_t)n, sizeof *g);
      for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) w[i * k + j] = cost_pp_edge(c, g[i], g[k + j]);
      double want = cost_bottleneck_match(k, w, NULL, cold);
      cr_assert(cost_group_pair(c, g, g + k, NULL, s) == want, "t %d q %d", t, q);
      cr_assert(cost_group_pair(c, g, g + k, m, s) == want, "t %d q %d", t, q);
      double most = -INFINITY;
      memset(seen, 0, (size_t)k * sizeof *seen);
      for (int i = 0; i < k; i++) {
        cr_assert(m[i] >= 0 && m[i] < k && !seen[m[i]], "t %d: a permutation", t);
        seen[m[i]] = 1;
        most = fmax(most, w[i * k + m[i]]);
      }
      cr_assert(most == want, "t %d q %d: the pairing realises the value", t, q);
    }
    free(g), free(m), free(seen), free(w);
    cost_scratch_free(s);
    cost_scratch_free(cold);
    cost_ctx_free(c);
    scenario_free(sc);
  }
  gsl_rng_free(r);
}

/* ---- greedy by sites against the device scan ---- */

static void naive_groups(const cost_ctx *c, int *groups) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  char *used = calloc((size_t)n, 1);
  for (int s = 0; s < ng; s++) {
    int *gr = groups + s * k, first = 0;
    while (used[first]) first++;
    gr[0] = first;
    used[first] = 1;
    for (int m = 1; m < k; m++) {
      int pick = -1;
      double best = INFINITY;
      for (int d = 0; d < n; d++) {
        if (used[d]) continue;
        double sum = 0;
        for (int j = 0; j < m; j++)
          sum += cost_dp_edge(c, d, gr[j]) + cost_dp_edge(c, gr[j], d);
        if (sum < best) best = sum, pick = d;
      }
      gr[m] = pick;
      used[pick] = 1;
    }
  }
  free(used);
}

static alloc *naive_pipelines(const cost_ctx *c) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  alloc *a = alloc_new(k, ng);
  char *used = calloc((size_t)n, 1);
  for (int r = 0; r < k; r++) {
    int cur = 0;
    while (used[cur]) cur++;
    used[cur] = 1;
    a->device[r * ng] = cur;
    for (int s = 1; s < ng; s++) {
      int pick = -1;
      double best = INFINITY;
      for (int d = 0; d < n; d++)
        if (!used[d] && cost_pp_edge(c, cur, d) < best)
          best = cost_pp_edge(c, cur, d), pick = d;
      a->device[r * ng + s] = cur = pick;
      used[pick] = 1;
    }
  }
  free(used);
  return a;
}

static void expect_greedy_as_scan(const cost_ctx *c, const char *what) {
  int n = cost_ctx_replicas(c) * cost_ctx_stages(c);
  int *g1 = malloc((size_t)n * sizeof *g1), *g2 = malloc((size_t)n * sizeof *g2);
  baseline_greedy_groups(c, g1);
  naive_groups(c, g2);
  cr_assert_arr_eq(g1, g2, (size_t)n * sizeof *g1, "%s: groups", what);
  alloc *a1 = baseline_greedy_pipelines(c), *a2 = naive_pipelines(c);
  cr_assert_arr_eq(a1->device, a2->device, (size_t)n * sizeof *g1,
                   "%s: pipelines", what);
  alloc_free(a1), alloc_free(a2);
  free(g1), free(g2);
}

Test(cost_flow, greedy_by_sites_as_the_device_scan) {
  for (const char *const *name = scenario_builtin_names(); *name; name++) {
    err e = {0};
    scenario *s = scenario_load(*name, &e);
    cr_assert(s, "%s: %s", *name, e.msg);
    if (s->ndevices <= 64) {
      cost_ctx *c = cost_ctx_from_scenario(s, &e);
      cr_assert(c, "%s: %s", *name, e.msg);
      expect_greedy_as_scan(c, *name);
      cost_ctx_free(c);
    }
    scenario_free(s);
  }
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  for (int t = 0; t < 30; t++) {
    int stages = 1 + t % 5, k = 1 + (int)gsl_rng_uniform_int(r, 24);
    scenario *sc = support_random_scenario(r, 1 + t % 9, stages, k, t % 2);
    err e = {0};
    cost_ctx *c = cost_ctx_from_scenario(sc, &e);
    cr_assert(c, "%s", e.msg);
    char what[32];
    snprintf(what, sizeof what, "random %d", t);
    expect_greedy_as_scan(c, what);
    cost_ctx_free(c);
    scenario_free(sc);
  }
  gsl_rng_free(r);
}
