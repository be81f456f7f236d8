/* test_cost: DT-FM's cost model against naive references — bottleneck
 * matching against all permutations, Held–Karp against all orders, a whole
 * partition's pipeline term against brute force, DataPCost by hand, the
 * paper's known values on the built-in scenarios — and theories: the score
 * never falls when a bandwidth falls or a latency or a size grows. */
#include <criterion/criterion.h>
#include <criterion/theories.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "models/cost.h"
#include "tests/support.h"
#include "traces/scenario.h"

/* ---- naive references ---- */

/* Next lexicographic permutation of p[0..n-1]; false after the last. */
static bool next_perm(int *p, int n) {
  int i = n - 2;
  while (i >= 0 && p[i] >= p[i + 1]) i--;
  if (i < 0) return false;
  int j = n - 1;
  while (p[j] <= p[i]) j--;
  int t = p[i];
  p[i] = p[j], p[j] = t;
  for (int a = i + 1, b = n - 1; a < b; a++, b--) t = p[a], p[a] = p[b], p[b] = t;
  return true;
}

static double naive_bottleneck(int k, const double *w) {
  int p[16];
  for (int i = 0; i < k; i++) p[i] = i;
  double best = INFINITY;
  do {
    double m = -INFINITY;
    for (int i = 0; i < k; i++) m = fmax(m, w[i * k + p[i]]);
    best = fmin(best, m);
  } while (next_perm(p, k));
  return best;
}

static double naive_tsp(int n, const double *w) {
  int p[16];
  for (int i = 0; i < n; i++) p[i] = i;
  double best = INFINITY;
  do {
    double c = 0;
    for (int i = 0; i + 1 < n; i++) c += w[p[i] * n + p[i + 1]];
    best = fmin(best, c);
  } while (next_perm(p, n));
  return best;
}

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  return r;
}

/* ---- bottleneck matching ---- */

Test(cost, bottleneck_matches_all_permutations_8x8) {
  gsl_rng *r = rng_new(1);
  cost_scratch *s = cost_scratch_new(8, 8);
  double w[64];
  int match[8];
  for (int trial = 0; trial < 40; trial++) {
    /* Half the trials with few distinct values, so ties are exercised. */
    for (int i = 0; i < 64; i++)
      w[i] = trial % 2 ? gsl_rng_uniform(r) : (double)gsl_rng_uniform_int(r, 5);
    double got = cost_bottleneck_match(8, w, match, s);
    cr_assert_float_eq(got, naive_bottleneck(8, w), 1e-15, "trial %d", trial);
    /* The pairing is a permutation that realises the value (DT-FM's
     * reference returns a pairing that does not). */
    int used[8] = {0};
    double m = -INFINITY;
    for (int i = 0; i < 8; i++) {
      cr_assert(match[i] >= 0 && match[i] < 8);
      cr_assert_eq(used[match[i]]++, 0);
      m = fmax(m, w[i * 8 + match[i]]);
    }
    cr_assert_eq(m, got, "trial %d: pairing gives %g, value %g", trial, m, got);
  }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

Test(cost, bottleneck_small_sizes) {
  gsl_rng *r = rng_new(2);
  cost_scratch *s = cost_scratch_new(6, 2);
  double w[36];
  for (int k = 1; k <= 6; k++)
    for (int trial = 0; trial < 10; trial++) {
      for (int i = 0; i < k * k; i++) w[i] = gsl_rng_uniform(r);
      cr_assert_eq(cost_bottleneck_match(k, w, NULL, s), naive_bottleneck(k, w));
    }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* The answer many distinct values above the rows' and columns' bound:
 * column 0 is cheap for every row, column j > 0 costs 1000 + i k + j in
 * row i, so the bound is row 0's 1000 + k - 1 while the columns j > 0
 * need k - 1 distinct rows: at best row k - 2 takes column 1, 1000 +
 * (k - 2) k + 1, 20 values above the bound for k = 6: the threshold is
 * raised value by value and then, past its steps, searched. */
Test(cost, bottleneck_far_above_the_bound) {
  enum { K = 6 };
  cost_scratch *s = cost_scratch_new(K, 2);
  double w[K * K];
  int match[K];
  for (int i = 0; i < K; i++)
    for (int j = 0; j < K; j++) w[i * K + j] = j ? 1000.0 + i * K + j : 1.0;
  double want = naive_bottleneck(K, w);
  cr_assert_eq(want, 1000.0 + (K - 2) * K + 1);
  cr_assert_eq(cost_bottleneck_match(K, w, NULL, s), want);
  cr_assert_eq(cost_bottleneck_match(K, w, match, s), want);
  double m = -INFINITY;
  int used[K] = {0};
  for (int i = 0; i < K; i++) {
    cr_assert_eq(used[match[i]]++, 0);
    m = fmax(m, w[i * K + match[i]]);
  }
  cr_assert_eq(m, want);
  cost_scratch_free(s);
}

/* ---- open-loop TSP ---- */

Test(cost, held_karp_matches_all_orders) {
  gsl_rng *r = rng_new(3);
  cost_scratch *s = cost_scratch_new(2, 8);
  double w[64];
  int order[8];
  for (int n = 1; n <= 8; n++)
    for (int trial = 0; trial < 6; trial++) {
      for (int i = 0; i < n * n; i++) w[i] = gsl_rng_uniform(r);
      double got = cost_tsp_path(n, w, order, s);
      cr_assert_float_eq(got, naive_tsp(n, w), 1e-12, "n %d trial %d", n, trial);
      int seen[8] = {0};
      double c = 0;
      for (int i = 0; i < n; i++) cr_assert_eq(seen[order[i]]++, 0);
      for (int i = 0; i + 1 < n; i++) c += w[order[i] * n + order[i + 1]];
      cr_assert_float_eq(c, got, 1e-12, "the order realises the value");
    }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* The textbook (push) Held–Karp the pulled one replaced: for every state,
 * expand to each node outside it, keeping the first strictly cheaper. */
static double push_held_karp(int n, const double *w, int *order) {
  size_t full = ((size_t)1 << n) - 1;
  double *hk = malloc((full + 1) * n * sizeof *hk);
  signed char *prev = malloc((full + 1) * n);
  for (size_t i = 0; i < (full + 1) * n; i++) hk[i] = INFINITY;
  for (int j = 0; j < n; j++) hk[((size_t)1 << j) * n + j] = 0;
  for (size_t mask = 1; mask < full; mask++)
    for (int j = 0; j < n; j++) {
      if (!(mask >> j & 1)) continue;
      for (int k = 0; k < n; k++) {
        if (mask >> k & 1) continue;
        size_t next = (mask | (size_t)1 << k) * n + k;
        double c = hk[mask * n + j] + w[j * n + k];
        if (c < hk[next]) hk[next] = c, prev[next] = (signed char)j;
      }
    }
  int end = 0;
  for (int j = 1; j < n; j++)
    if (hk[full * n + j] < hk[full * n + end]) end = j;
  double best = hk[full * n + end];
  for (int pos = n - 1, j = end, mask = (int)full; pos >= 0; pos--) {
    order[pos] = j;
    int p = pos ? prev[(size_t)mask * n + j] : -1;
    mask &= ~(1 << j);
    j = p;
  }
  free(hk), free(prev);
  return best;
}

/* Same bits and same order as the push form, ties included (small integer
 * weights tie often), up to the exact limit's neighbourhood. */
Test(cost, held_karp_equals_the_push_form_bit_for_bit) {
  gsl_rng *r = rng_new(5);
  enum { N = 14 };
  cost_scratch *s = cost_scratch_new(2, N);
  double w[N * N];
  int got[N], want[N];
  for (int n = 2; n <= N; n++)
    for (int trial = 0; trial < 8; trial++) {
      for (int i = 0; i < n * n; i++)
        w[i] = trial % 2 ? (double)gsl_rng_uniform_int(r, 4)
                         : gsl_rng_uniform(r) * 1e3;
      double a = cost_tsp_path(n, w, got, s);
      double b = push_held_karp(n, w, want);
      cr_assert(a == b, "n %d trial %d: %.17g vs %.17g", n, trial, a, b);
      cr_assert(cost_tsp_path(n, w, NULL, s) == b, "value only, n %d", n);
      cr_assert_arr_eq(got, want, (size_t)n * sizeof *got, "n %d trial %d",
                       n, trial);
    }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* The value alone (Held–Karp without its predecessors) is the push form's
 * to the bit: ties (small integers), spread magnitudes
 * (1e-3 .. 1e3: rounding differs by order), near-equal paths (1 + tiny
 * noise), and zeros. */
Test(cost, held_karp_value_alone_equals_the_push_form_bit_for_bit) {
  gsl_rng *r = rng_new(11);
  enum { N = 15 };
  cost_scratch *s = cost_scratch_new(2, N);
  double w[N * N];
  int want[N];
  for (int n = 2; n <= N; n++)
    for (int trial = 0; trial < (n <= 12 ? 24 : 6); trial++) {
      for (int i = 0; i < n * n; i++) {
        double x = gsl_rng_uniform(r);
        switch (trial % 4) {
        case 0: w[i] = (double)gsl_rng_uniform_int(r, 4); break;
        case 1: w[i] = pow(10, 6 * x - 3); break;
        case 2: w[i] = 1 + 1e-13 * (double)gsl_rng_uniform_int(r, 8); break;
        default: w[i] = x < 0.3 ? 0 : x * 7.3; break;
        }
      }
      double b = push_held_karp(n, w, want);
      double a = cost_tsp_path(n, w, NULL, s);
      cr_assert(a == b, "n %d trial %d: %.17g vs %.17g", n, trial, a, b);
    }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

Test(cost, tsp_heuristic_above_held_karp_limit) {
  /* Points on a line under shuffled labels: the best path costs n - 1. */
  enum { N = COST_HELD_KARP_MAX + 4 };
  gsl_rng *r = rng_new(4);
  int pos[N], order[N];
  for (int i = 0; i < N; i++) pos[i] = i;
  gsl_ran_shuffle(r, pos, N, sizeof *pos);
  double w[N * N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) w[i * N + j] = fabs((double)pos[i] - pos[j]);
  cost_scratch *s = cost_scratch_new(2, N);
  cr_assert_float_eq(cost_tsp_path(N, w, order, s), N - 1, 1e-12);
  int seen[N] = {0};
  for (int i = 0; i < N; i++) cr_assert_eq(seen[order[i]]++, 0);
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* ---- DataPCost and the fixed-order cost by hand ---- */

/* 4 devices, 2 groups of 2: hand-made links. */
static cost_ctx *hand_ctx(void) {
  /* latency ms / bandwidth Gbit/s, symmetric. */
  double lat[16] = {0, 10, 20, 30, 10, 0, 40, 50, 20, 40, 0, 60, 30, 50, 60, 0};
  double bw[16] = {1, 1, 2, 4, 1, 1, 8, 2, 2, 8, 1, 1, 4, 2, 1, 1};
  return cost_ctx_new(2, 2, lat, bw, 0.5, 1.0);
}

Test(cost, data_parallel_cost_by_hand) {
  cost_ctx *c = hand_ctx();
  /* Groups {0,1} and {2,3}. D_dp = 2, c_dp = 1 GB:
   * pair 0-1: 2 (0.010 + 8 / (2 * 1)) = 8.02; pair 2-3: 2 (0.060 + 8/2) =
   * 8.12. A group of two: each member's sum is its one pair. */
  int groups[4] = {0, 1, 2, 3};
  cr_assert_float_eq(cost_dp(c, groups), 8.12, 1e-12);
  /* Groups {0,3} and {1,2}: 2 (0.03 + 8/8) = 2.06; 2 (0.04 + 8/16) = 1.08. */
  int g2[4] = {0, 3, 1, 2};
  cr_assert_float_eq(cost_dp(c, g2), 2.06, 1e-12);
  /* Pipeline term of {0,3} -> {1,2}, c_pp = 0.5 GB: edges 0-1 = 0.01 + 4,
   * 0-2 = 0.02 + 2, 3-1 = 0.05 + 2, 3-2 = 0.06 + 4. Matchings: {0-1, 3-2}
   * max 4.06; {0-2, 3-1} max 2.05. Score = 2.06 + 2 x 2.05 = 6.16. */
  cost_scratch *s = cost_scratch_new(2, 2);
  cost_parts parts;
  cr_assert_float_eq(cost_partition(c, g2, s, &parts), 6.16, 1e-12);
  cr_assert_float_eq(parts.dp_s, 2.06, 1e-12);
  cr_assert_float_eq(parts.pp_s, 4.10, 1e-12);
  /* The explicit allocation [[0,1],[3,2]] pairs 0-1 and 3-2: 2.06 + 2 x
   * 4.06; [[0,2],[3,1]] is the realised best. */
  alloc *a = alloc_new(2, 2);
  memcpy(a->device, (int[]){0, 1, 3, 2}, sizeof(int[4]));
  cr_assert_float_eq(cost_alloc(c, a, NULL), 2.06 + 2 * 4.06, 1e-12);
  alloc *best = cost_realise(c, g2, s);
  cr_assert_float_eq(cost_alloc(c, best, NULL), 6.16, 1e-12);
  alloc_free(a);
  alloc_free(best);
  cost_scratch_free(s);
  cost_ctx_free(c);
}

/* Pipeline term by brute force: every group order, every pairing. */
static double naive_pp(const cost_ctx *c, const int *groups, int k, int n) {
  int ord[8], p[8];
  for (int i = 0; i < n; i++) ord[i] = i;
  double best = INFINITY;
  do {
    double sum = 0;
    for (int g = 0; g + 1 < n; g++) {
      const int *ga = groups + ord[g] * k, *gb = groups + ord[g + 1] * k;
      double bb = INFINITY;
      for (int i = 0; i < k; i++) p[i] = i;
      do {
        double m = 0;
        for (int i = 0; i < k; i++) m = fmax(m, cost_pp_edge(c, ga[i], gb[p[i]]));
        bb = fmin(bb, m);
      } while (next_perm(p, k));
      sum += bb;
    }
    best = fmin(best, sum);
  } while (next_perm(ord, n));
  return best;
}

Test(cost, partition_matches_brute_force_asymmetric) {
  gsl_rng *r = rng_new(5);
  enum { K = 3, N = 4, D = K * N };
  double lat[D * D], bw[D * D];
  int groups[D];
  cost_scratch *s = cost_scratch_new(K, N);
  for (int trial = 0; trial < 10; trial++) {
    for (int i = 0; i < D * D; i++) {
      lat[i] = gsl_rng_uniform(r) * 100;
      bw[i] = 0.1 + gsl_rng_uniform(r) * 10;
    }
    cost_ctx *c = cost_ctx_new(K, N, lat, bw, 0.3, 0.8);
    for (int i = 0; i < D; i++) groups[i] = i;
    gsl_ran_shuffle(r, groups, D, sizeof *groups);
    cost_parts parts;
    cost_partition(c, groups, s, &parts);
    cr_assert_float_eq(parts.pp_s, 2 * naive_pp(c, groups, K, N), 1e-12);
    alloc *a = cost_realise(c, groups, s);
    cr_assert_eq(alloc_validate(a, K, N, D, "realised", NULL), ERR_OK);
    cr_assert_float_eq(cost_alloc(c, a, NULL), parts.score_s, 1e-12);
    alloc_free(a);
    cost_ctx_free(c);
  }
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* ---- known values with paper-era sizes (DESIGN.md section 3) ---- */

static cost_ctx *builtin_ctx(const char *name) {
  err e;
  err_clear(&e);
  scenario *sc = support_scenario(name);
  cost_ctx *c = cost_ctx_from_scenario(sc, &e);
  cr_assert_not_null(c, "%s", e.msg);
  scenario_free(sc);
  return c;
}

static double partition_score(const cost_ctx *c, const alloc *a) {
  alloc_partition *p = alloc_to_partition(a);
  cost_scratch *s = cost_scratch_new(8, 8);
  double v = cost_partition(c, p->device, s, NULL);
  cost_scratch_free(s);
  alloc_partition_free(p);
  return v;
}

Test(cost, identity_known_values) {
  static const struct { const char *name; double score; } cases[] = {
      {"datacenter", 4.795}, {"multi-dc", 14.751},
      {"regional", 31.419}, {"worldwide", 58.666}};
  alloc *id = alloc_identity(8, 8);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cost_ctx *c = builtin_ctx(cases[i].name);
    double v = partition_score(c, id);
    cr_assert(fabs(v - cases[i].score) < 5e-4, "%s: %.4f, paper %.3f",
              cases[i].name, v, cases[i].score);
    /* Identity is already in its best order: the fixed-order cost agrees. */
    cr_assert(fabs(cost_alloc(c, id, NULL) - cases[i].score) < 5e-4);
    cost_ctx_free(c);
  }
  alloc_free(id);
}

Test(cost, multi_dc_groups_inside_one_site) {
  /* Megatron's layout puts data-parallel group s = devices 8s..8s+7, all
   * in one data centre: 12.266, better than DT-FM's best found 14.751. */
  cost_ctx *c = builtin_ctx("multi-dc");
  alloc *m = alloc_megatron(8, 8);
  cr_assert(fabs(partition_score(c, m) - 12.266) < 5e-4, "%.4f",
            partition_score(c, m));
  alloc_free(m);
  cost_ctx_free(c);
}

Test(cost, datacenter_every_boundary_crosses_instances) {
  /* device[r][s] on instance (r + s) mod 8, slot s: every group spans the
   * 8 instances and every stage boundary changes instance:
   * DP 7 x 2 x 8 / (8 x 3.125) = 4.48, PP 2 x 7 x 8 x 0.28125 / 3.125. */
  cost_ctx *c = builtin_ctx("datacenter");
  alloc *a = alloc_new(8, 8);
  for (int r = 0; r < 8; r++)
    for (int s = 0; s < 8; s++) a->device[r * 8 + s] = 8 * ((r + s) % 8) + s;
  cr_assert_eq(alloc_validate(a, 8, 8, 64, "crossing", NULL), ERR_OK);
  cost_parts parts;
  cost_alloc(c, a, &parts);
  cr_assert_float_eq(parts.dp_s, 4.48, 1e-9);
  cr_assert_float_eq(parts.pp_s, 2 * 7 * 0.72, 1e-9);
  cr_assert_float_eq(parts.score_s, 14.56, 1e-9);
  /* As a partition the pairing may stay inside instances: 4.795. */
  cr_assert(fabs(partition_score(c, a) - 4.795) < 5e-4);
  alloc_free(a);
  cost_ctx_free(c);
}

/* ---- theories: monotone in bandwidth, latency and sizes ---- */

TheoryDataPoints(cost, score_monotone) = {
    DataPoints(unsigned long, 1, 2, 3, 4, 5, 6, 7, 8),
    DataPoints(double, 0.1, 0.5, 0.9, 0.999),
};

Theory((unsigned long seed, double factor), cost, score_monotone) {
  enum { K = 4, N = 4, D = K * N };
  gsl_rng *r = rng_new(seed);
  double lat[D * D], bw[D * D], lat2[D * D], bw2[D * D];
  int groups[D];
  for (int i = 0; i < D * D; i++) {
    lat[i] = gsl_rng_uniform(r) * 50;
    bw[i] = 0.2 + gsl_rng_uniform(r) * 5;
  }
  for (int i = 0; i < D; i++) groups[i] = i;
  gsl_ran_shuffle(r, groups, D, sizeof *groups);
  /* Worsen a random set of links: bandwidth x factor, latency / factor. */
  memcpy(lat2, lat, sizeof lat);
  memcpy(bw2, bw, sizeof bw);
  for (int i = 0; i < D * D; i++)
    if (gsl_rng_uniform(r) < 0.3) {
      if (gsl_rng_uniform(r) < 0.5) bw2[i] *= factor;
      else lat2[i] /= factor;
    }
  cost_scratch *s = cost_scratch_new(K, N);
  cost_ctx *base = cost_ctx_new(K, N, lat, bw, 0.3, 0.7);
  cost_ctx *worse = cost_ctx_new(K, N, lat2, bw2, 0.3, 0.7);
  cost_ctx *bigger = cost_ctx_new(K, N, lat, bw, 0.3 / factor, 0.7 / factor);
  alloc *a = alloc_random(K, N, seed);
  double v0 = cost_partition(base, groups, s, NULL);
  cr_assert(cost_partition(worse, groups, s, NULL) >= v0);
  cr_assert(cost_partition(bigger, groups, s, NULL) >= v0);
  cr_assert(cost_alloc(worse, a, NULL) >= cost_alloc(base, a, NULL));
  cr_assert(cost_alloc(bigger, a, NULL) >= cost_alloc(base, a, NULL));
  alloc_free(a);
  cost_ctx_free(base);
  cost_ctx_free(worse);
  cost_ctx_free(bigger);
  cost_scratch_free(s);
  gsl_rng_free(r);
}

/* cost_ctx_from_scenario fills the tables from the trace and then the
 * overrides (not scenario_link per pair): the same edges as cost_ctx_new on
 * the scenario_link matrix, overrides included, in both directions. */
Test(cost, from_scenario_matches_scenario_link) {
  const char *text =
      "{\"name\": \"ov\", \"sites\": [{\"name\": \"a\", \"devices\": 3},"
      " {\"name\": \"b\", \"devices\": 3}],\n"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1, \"overrides\":"
      " [{\"a\": 4, \"b\": 1, \"latency_ms\": 50, \"bandwidth_gbps\": 0.25},"
      " {\"a\": 0, \"b\": 5, \"latency_ms\": 0, \"bandwidth_gbps\": 8}]},\n"
      " \"cost\": {\"activation_gb\": 0.5, \"gradient_gb\": 0.75},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 3, \"batch\": 2,"
      " \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2}}\n";
  err e;
  err_clear(&e);
  scenario *s = scenario_parse(text, strlen(text), "ov.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  enum { N = 6 };
  double lat[N * N] = {0}, bw[N * N];
  for (int a = 0; a < N; a++)
    for (int b = 0; b < N; b++) {
      trace_value v = a == b ? (trace_value){.latency_ms = 0, .bandwidth_gbps = 1} : scenario_link(s, a, b, 0);
      lat[a * N + b] = v.latency_ms, bw[a * N + b] = v.bandwidth_gbps;
    }
  cost_ctx *want = cost_ctx_new(2, 3, lat, bw, 0.5, 0.75);
  cost_ctx *got = cost_ctx_from_scenario(s, &e);
  cr_assert_not_null(got, "%s", e.msg);
  for (int a = 0; a < N; a++)
    for (int b = 0; b < N; b++) {
      if (a == b) continue;
      cr_assert_eq(cost_pp_edge(got, a, b), cost_pp_edge(want, a, b), "%d %d", a, b);
      cr_assert_eq(cost_dp_edge(got, a, b), cost_dp_edge(want, a, b), "%d %d", a, b);
    }
  /* by hand: 1 -> 4 is the override, 50 ms + 8 * 0.5 / 0.25 */
  cr_assert_float_eq(cost_pp_edge(got, 1, 4), 0.05 + 16.0, 1e-12);
  cr_assert_float_eq(cost_dp_edge(got, 5, 0), 2 * (8 * 0.75 / (2 * 8.0)), 1e-12);
  cost_ctx_free(got), cost_ctx_free(want);
  scenario_free(s);
}

/* cost_ctx_site_map: with overrides none (NULL); without, a map under which
 * every edge is its site pair's (the same double for every device pair). */
Test(cost, site_map_only_without_overrides) {
  const char *fmt =
      "{\"name\": \"sm\", \"sites\": [{\"name\": \"a\", \"devices\": 3},"
      " {\"name\": \"b\", \"devices\": 3}],\n"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1%s},\n"
      " \"cost\": {\"activation_gb\": 0.5, \"gradient_gb\": 0.75},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 3, \"batch\": 2,"
      " \"micro_batch\": 1, \"stages\": 3, \"replicas\": 2}}\n";
  const char *ovr = ", \"overrides\": [{\"a\": 4, \"b\": 1, \"latency_ms\": 50,"
                    " \"bandwidth_gbps\": 0.25}]";
  for (int with = 0; with < 2; with++) {
    char text[1024];
    snprintf(text, sizeof text, fmt, with ? ovr : "");
    err e;
    err_clear(&e);
    scenario *s = scenario_parse(text, strlen(text), "sm.json", &e);
    cr_assert_not_null(s, "%s", e.msg);
    cost_ctx *c = cost_ctx_from_scenario(s, &e);
    cr_assert_not_null(c, "%s", e.msg);
    int ns = -1;
    const int *site = cost_ctx_site_map(c, &ns);
    if (with) {
      cr_assert_null(site);
      cr_assert_eq(ns, 0);
    } else {
      cr_assert_not_null(site);
      cr_assert_eq(ns, 2);
      for (int d = 0; d < 6; d++) cr_assert_eq(site[d], d / 3, "%d", d);
      for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++)
          for (int a2 = 0; a2 < 6; a2++)
            for (int b2 = 0; b2 < 6; b2++) {
              if (a == b || a2 == b2 || site[a] != site[a2] || site[b] != site[b2])
                continue;
              cr_assert_eq(cost_pp_edge(c, a, b), cost_pp_edge(c, a2, b2));
              cr_assert_eq(cost_dp_edge(c, a, b), cost_dp_edge(c, a2, b2));
            }
    }
    cost_ctx_free(c);
    scenario_free(s);
  }
}

/* ---- the site-pair representation against the dense one ---- */

/* The dense context of s: every ordered device pair's scenario_link at
 * t = 0 in n x n matrices, as cost_ctx_from_scenario held them before it
 * kept links per site pair. */
static cost_ctx *dense_ctx(const scenario *s) {
  int n = s->ndevices;
  double *lat = calloc((size_t)n * n, sizeof *lat);
  double *bw = calloc((size_t)n * n, sizeof *bw);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      trace_value v = a == b ? (trace_value){.latency_ms = 0, .bandwidth_gbps = 1} : scenario_link(s, a, b, 0);
      lat[(size_t)a * n + b] = v.latency_ms;
      bw[(size_t)a * n + b] = v.bandwidth_gbps;
    }
  double act, grad;
  err e = {0};
  cr_assert_eq(cost_sizes(s, &act, &grad, &e), ERR_OK, "%s", e.msg);
  cost_ctx *c = cost_ctx_new(s->workload.replicas, s->workload.stages, lat,
                             bw, act, grad);
  free(lat);
  free(bw);
  return c;
}

/* A scenario too large for n x n matrices (volunteer-10k: 1.6 GB): the
 * edges of a strided sample of device pairs against the model's formula
 * (cost.h) over scenario_link, bit for bit. */
static void expect_sample_as_formula(const scenario *s, const cost_ctx *sp) {
  double act, grad;
  err e = {0};
  cr_assert_eq(cost_sizes(s, &act, &grad, &e), ERR_OK, "%s", e.msg);
  int n = s->ndevices, R = s->workload.replicas;
  for (int a = 0; a < n; a += 7)
    for (int b = a % 13; b < n; b += 211) {
      if (a == b) continue;
      trace_value v = scenario_link(s, a, b, 0);
      double alpha = v.latency_ms / 1e3, beta = v.bandwidth_gbps;
      cr_assert(cost_pp_edge(sp, a, b) == alpha + 8.0 * act / beta,
                "%s: pp %d -> %d", s->name, a, b);
      cr_assert(cost_dp_edge(sp, a, b) ==
                    2.0 * (alpha + 8.0 * grad / (R * beta)),
                "%s: dp %d -> %d", s->name, a, b);
    }
}

/* Every edge, bit for bit, and the score of the identity partition (which
 * reads the symmetry flag through the TSP) equal. */
static void expect_same_as_dense(const scenario *s) {
  err e = {0};
  cost_ctx *sp = cost_ctx_from_scenario(s, &e);
  cr_assert(sp, "%s: %s", s->name, e.msg);
  if (s->ndevices > 1024) {
    expect_sample_as_formula(s, sp);
    cost_ctx_free(sp);
    return;
  }
  cost_ctx *de = dense_ctx(s);
  int n = s->ndevices;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      if (a == b) continue;
      cr_assert(cost_pp_edge(sp, a, b) == cost_pp_edge(de, a, b),
                "%s: pp %d -> %d", s->name, a, b);
      cr_assert(cost_dp_edge(sp, a, b) == cost_dp_edge(de, a, b),
                "%s: dp %d -> %d", s->name, a, b);
    }
  int R = s->workload.replicas, S = s->workload.stages;
  int *groups = malloc((size_t)n * sizeof *groups);
  for (int st = 0; st < S; st++)
    for (int r = 0; r < R; r++) groups[st * R + r] = r * S + st;
  cost_scratch *w = cost_scratch_new(R, S);
  cr_expect(cost_partition(sp, groups, w, NULL) ==
                cost_partition(de, groups, w, NULL),
            "%s: the partition's score", s->name);
  cr_expect_lt(cost_ctx_bytes(sp), cost_ctx_bytes(de) + 1);
  cost_scratch_free(w);
  free(groups);
  cost_ctx_free(sp);
  cost_ctx_free(de);
}

Test(cost_sparse, builtins_equal_the_dense_matrices) {
  for (const char *const *name = scenario_builtin_names(); *name; name++) {
    err e = {0};
    scenario *s = scenario_load(*name, &e);
    cr_assert(s, "%s: %s", *name, e.msg);
    expect_same_as_dense(s);
    scenario_free(s);
  }
}

/* Overrides (the sparse map) on top of the site pairs, one of them on a
 * pair inside a site. */
Test(cost_sparse, overrides_equal_the_dense_matrices) {
  static const char text[] =
      "{\"name\": \"ov\", \"sites\": [{\"name\": \"a\", \"devices\": 3},"
      " {\"name\": \"b\", \"devices\": 3}],"
      " \"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 2,"
      "  \"overrides\": ["
      "   {\"a\": 0, \"b\": 4, \"latency_ms\": 3, \"bandwidth_gbps\": 9},"
      "   {\"a\": 5, \"b\": 1, \"latency_ms\": 70, \"bandwidth_gbps\": 0.5},"
      "   {\"a\": 1, \"b\": 2, \"latency_ms\": 1, \"bandwidth_gbps\": 40}]},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"batch\": 12,"
      "  \"micro_batch\": 1, \"stages\": 2, \"replicas\": 3,"
      "  \"micro_batches_per_pass\": 4}}";
  err e = {0};
  scenario *s = scenario_parse(text, sizeof text - 1, "ov.json", &e);
  cr_assert(s, "%s", e.msg);
  expect_same_as_dense(s);
  scenario_free(s);
}

/* Above COST_DP_BY_SITE_MIN replicas a group's DataPCost sums per site:
 * the pairwise sum's value up to rounding, and the same worst member. */
Test(cost_sparse, dp_group_by_site_equals_the_pairwise_sum) {
  static const char text[] =
      "{\"name\": \"wide\", \"sites\": [{\"name\": \"a\", \"devices\": 70},"
      " {\"name\": \"b\", \"devices\": 50}, {\"name\": \"c\", \"devices\": 40}],"
      " \"network\": {\"trace\": \"wide.csv\"},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"batch\": 160,"
      "  \"micro_batch\": 1, \"stages\": 2, \"replicas\": 80,"
      "  \"micro_batches_per_pass\": 1}}";
  support_write_file(support_path("wide.csv"),
                     "t_s,src,dst,latency_ms,bandwidth_gbps\n"
                     "0,a,a,1,10\n0,a,b,30,1\n0,a,c,80,0.5\n"
                     "0,b,a,31,1.1\n0,b,b,2,8\n0,b,c,60,0.7\n"
                     "0,c,a,79,0.4\n0,c,b,61,0.8\n0,c,c,3,9\n");
  const char *path = support_write_file(support_path("wide.json"), text);
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert(s, "%s", e.msg);
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  cr_assert(c, "%s", e.msg);
  int R = 80, groups[160];
  for (int i = 0; i < 160; i++) groups[i] = (i * 37) % 160; /* mixed sites */
  for (int g = 0; g < 2; g++) {
    const int *grp = groups + g * R;
    double most = 0;
    int arg = grp[0];
    for (int i = 0; i < R; i++) {
      double sum = 0;
      for (int j = 0; j < R; j++)
        if (j != i) sum += cost_dp_edge(c, grp[i], grp[j]);
      if (sum > most) most = sum, arg = grp[i];
    }
    int worst;
    double got = cost_dp_group(c, grp, &worst);
    cr_expect_float_eq(got, most, 1e-12 * most, "group %d", g);
    cr_expect_eq(worst, arg, "group %d", g);
  }
  cost_ctx_free(c);
  scenario_free(s);
}

/* The text of a scenario of `sites` sites of `per` V100s each, one link
 * class (10 ms, 1 Gbit/s), stages x replicas, and (overrides) one
 * device-pair override. The caller frees it. */
static char *big_scenario(int sites, int per, int stages, int replicas,
                          bool overrides) {
  size_t cap = 1 << 20;
  char *text = malloc(cap);
  int at = snprintf(text, cap, "{\"name\": \"big\", \"sites\": [");
  for (int i = 0; i < sites; i++)
    at += snprintf(text + at, cap - (size_t)at,
                   "%s{\"name\": \"s%d\", \"devices\": %d, \"gpu\": "
                   "\"V100\"}", i ? ", " : "", i, per);
  at += snprintf(text + at, cap - (size_t)at,
                 "], \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": "
                 "1%s}, ", overrides ? ", \"overrides\": [{\"from\": \"s0:0\", "
                 "\"to\": \"s1:0\", \"latency_ms\": 5, \"bandwidth_gbps\": 2}]"
                 : "");
  snprintf(text + at, cap - (size_t)at,
           "\"workload\": {\"model\": \"gpt3-small\", \"batch\": %d, "
           "\"micro_batch\": 1, \"stages\": %d, \"replicas\": %d}}",
           replicas, stages, replicas);
  return text;
}

/* Issue 35, 1: predict and schedule on 200,000 devices (one stage each)
 * aborted allocating the replicas' matching (replicas^2 doubles, 320 GB);
 * where that matching can run (a device-pair override) the context is
 * refused with the numbers before anything is allocated, and the estimate
 * is the scratch's own arrays. */
Test(cost, a_scratch_past_memory_is_refused_with_its_size) {
  char *text = big_scenario(100, 2000, 1, 200000, true);
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "big.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_null(cost_ctx_from_scenario(s, &e));
  cr_expect_eq(e.code, ERR_MEMORY);
  cr_expect(strstr(e.msg, "big: scoring a placement of 200000 replicas x 1 "
                   "stages needs 800 GB (a matching of replicas^2 entries), "
                   "more than the "), "%s", e.msg);
  /* 2 doubles and an int per pair of replicas, the rest linear */
  double k = 200000;
  cr_expect(cost_scratch_bytes(200000, 1, true) >= k * k * 20 &&
            cost_scratch_bytes(200000, 1, true) < k * k * 20 * 1.001);
  cr_expect_lt(cost_scratch_bytes(200000, 1, false), k * 100,
               "over site classes: linear");
  cr_expect_lt(cost_scratch_bytes(8, 8, true), 1e5, "a small run: small");
  scenario_free(s);
  free(text);
}

/* Issue 37: without overrides a group pair is matched over its site
 * classes, so the replicas^2 scratch is made only on the device-level path
 * (first use): 50,000 replicas (50 GB of it) were refused; now they score,
 * and a realised allocation's fixed-order cost is the partition's. */
Test(cost, fifty_thousand_replicas_over_site_classes_score) {
  enum { SITES = 25, PER = 4000, S = 2, R = SITES * PER / S };
  char *text = big_scenario(SITES, PER, S, R, false);
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "big.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  cr_assert_not_null(c, "%s", e.msg);
  cr_expect_gt(cost_scratch_bytes(R, S, true), 4e10, "what was refused");
  int *groups = malloc((size_t)R * S * sizeof *groups);
  for (int st = 0; st < S; st++)
    for (int r = 0; r < R; r++) groups[st * R + r] = r * S + st;
  cost_scratch *w = cost_scratch_new(R, S);
  cost_parts p;
  double score = cost_partition(c, groups, w, &p);
  /* one link class: pp is 2 x (10 ms + 8 act / 1 Gbit/s) */
  double act = cost_ctx_activation_gb(c);
  cr_expect(p.pp_s == 2 * (10 / 1e3 + 8.0 * act / 1), "pp %.17g", p.pp_s);
  cr_expect(score == p.dp_s + p.pp_s && isfinite(score) && score > 0);
  alloc *a = cost_realise(c, groups, w);
  cr_assert_not_null(a);
  cr_expect(cost_alloc(c, a, NULL) == score, "%.17g against %.17g",
            cost_alloc(c, a, NULL), score);
  alloc_free(a);
  cost_scratch_free(w);
  free(groups);
  cost_ctx_free(c);
  scenario_free(s);
  free(text);
}
