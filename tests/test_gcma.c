/* test_gcma: GCMA against brute force on small cases (every balanced
 * partition enumerated), and its invariants: crossover and local search keep
 * partitions balanced, the realised pipelines cost what the partition
 * scores (the pairing realises the bottleneck), a seed reproduces a run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/cost.h"
#include "schedules/gcma.h"
#include "schedules/search.h"

/* n devices in sites of `per` devices; heterogeneous links from a fixed LCG
 * so that optima are (nearly always) unique. */
static cost_ctx *hand_ctx(int replicas, int stages, int per, unsigned seed) {
  int n = replicas * stages;
  double *lat = malloc((size_t)n * n * sizeof *lat);
  double *bw = malloc((size_t)n * n * sizeof *bw);
  unsigned x = seed;
  for (int a = 0; a < n; a++)
    for (int b = a; b < n; b++) {
      x = x * 1103515245u + 12345u;
      double jitter = (double)((x >> 16) % 1000) / 1000.0;
      bool same = a / per == b / per;
      lat[a * n + b] = lat[b * n + a] = same ? 1 + jitter : 20 + 30 * jitter;
      bw[a * n + b] = bw[b * n + a] = same ? 10 + 5 * jitter : 0.5 + jitter;
    }
  cost_ctx *c = cost_ctx_new(replicas, stages, lat, bw, 0.3, 1.0);
  free(lat);
  free(bw);
  return c;
}

static bool balanced(const int *label, int n, int ng, int k) {
  int size[64] = {0};
  for (int d = 0; d < n; d++) {
    if (label[d] < 0 || label[d] >= ng) return false;
    size[label[d]]++;
  }
  for (int s = 0; s < ng; s++)
    if (size[s] != k) return false;
  return true;
}

/* Brute force: every assignment of devices to groups with sizes k, groups
 * unordered (device 0's group is group 0, etc. — enumerated with labels in
 * first-appearance order). */
static void brute(const cost_ctx *c, cost_scratch *w, int *label, int d,
                  int used, int *size, double *best) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  if (d == n) {
    int groups[64], fill[16] = {0};
    for (int v = 0; v < n; v++) groups[label[v] * k + fill[label[v]]++] = v;
    double s = cost_partition(c, groups, w, NULL);
    if (s < *best) *best = s;
    return;
  }
  for (int s = 0; s < ng && s <= used; s++) {
    if (size[s] == k) continue;
    label[d] = s;
    size[s]++;
    brute(c, w, label, d + 1, s == used ? used + 1 : used, size, best);
    size[s]--;
  }
}

static double brute_optimum(const cost_ctx *c) {
  int label[64], size[16] = {0};
  double best = INFINITY;
  cost_scratch *w = cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  brute(c, w, label, 0, 0, size, &best);
  cost_scratch_free(w);
  return best;
}

static void finds_optimum(int replicas, int stages, int per, gcma_gain gain) {
  for (unsigned inst = 1; inst <= 4; inst++) {
    cost_ctx *c = hand_ctx(replicas, stages, per, inst);
    double opt = brute_optimum(c);
    search_opts o;
    search_opts_default(&o);
    o.population = 20;
    o.trials = 1000;
    o.seed = inst;
    err e = {ERR_OK, ""};
    search_result *r = gcma_search(c, gain, NULL, &o, &e);
    cr_assert_not_null(r, "%s", e.msg);
    cr_expect_float_eq(r->objective_s, opt, 1e-9,
                       "instance %u: gcma %.6f, brute force %.6f", inst,
                       r->objective_s, opt);
    /* the realised pipelines cost exactly the partition's score */
    cr_expect_float_eq(r->parts.score_s, r->objective_s, 1e-9);
    search_result_free(r);
    cost_ctx_free(c);
  }
}

Test(gcma, finds_brute_force_optimum_8_devices_2x4) {
  finds_optimum(2, 4, 4, GCMA_GAIN_PIPELINE);
  finds_optimum(4, 2, 4, GCMA_GAIN_PIPELINE);
}

Test(gcma, hybrid_finds_brute_force_optimum_8_devices) {
  finds_optimum(2, 4, 4, GCMA_GAIN_CUT);
  finds_optimum(4, 2, 2, GCMA_GAIN_CUT);
}

Test(gcma, finds_brute_force_optimum_9_devices_3x3) {
  finds_optimum(3, 3, 3, GCMA_GAIN_PIPELINE);
}

Test(gcma, crossover_and_local_search_keep_balance) {
  for (int gain = 0; gain < 2; gain++) {
    cost_ctx *c = hand_ctx(8, 8, 8, 7);
    gcma *g = gcma_new(c, (gcma_gain)gain, 3);
    int n = 64, p1[64], p2[64], child[64], perm[64];
    for (int t = 0; t < 200; t++) {
      for (int i = 0; i < n; i++) perm[i] = (i * 13 + t * 7) % n;
      gcma_to_labels(g, perm, p1);
      for (int i = 0; i < n; i++) perm[i] = (i * 29 + t * 3 + 1) % n;
      gcma_to_labels(g, perm, p2);
      cr_assert(balanced(p1, n, 8, 8) && balanced(p2, n, 8, 8));
      gcma_crossover(g, p1, p2, child);
      cr_assert(balanced(child, n, 8, 8), "crossover trial %d unbalanced", t);
      gcma_local_search(g, child);
      cr_assert(balanced(child, n, 8, 8), "local search trial %d unbalanced", t);
    }
    gcma_free(g);
    cost_ctx_free(c);
  }
}

Test(gcma, crossover_copies_from_parents_only) {
  /* identical parents: the child is the parent (renaming is the identity and
   * nothing needs repair) */
  cost_ctx *c = hand_ctx(4, 4, 4, 2);
  gcma *g = gcma_new(c, GCMA_GAIN_PIPELINE, 9);
  int p[16], child[16];
  for (int d = 0; d < 16; d++) p[d] = (d * 3) % 4;
  gcma_crossover(g, p, p, child);
  cr_assert_arr_eq(child, p, sizeof p);
  gcma_free(g);
  cost_ctx_free(c);
}

Test(gcma, seed_reproduces_a_run_exactly) {
  cost_ctx *c = hand_ctx(8, 8, 8, 5);
  search_opts o;
  search_opts_default(&o);
  o.population = 30;
  o.trials = 200;
  o.seed = 42;
  err e = {ERR_OK, ""};
  search_result *a = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
  search_result *b = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
  cr_assert(a && b);
  cr_assert_eq(a->candidates, 230);
  cr_assert_eq(a->candidates, b->candidates);
  cr_assert_arr_eq(a->convergence, b->convergence,
                   (size_t)a->candidates * sizeof(double));
  cr_assert_arr_eq(a->best->device, b->best->device, 64 * sizeof(int));
  o.seed = 43;
  search_result *d = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
  cr_expect(memcmp(a->convergence, d->convergence,
                   (size_t)a->candidates * sizeof(double)) != 0,
            "another seed gives another run");
  for (long i = 1; i < a->candidates; i++)
    cr_assert_leq(a->convergence[i], a->convergence[i - 1]);
  search_result_free(a);
  search_result_free(b);
  search_result_free(d);
  cost_ctx_free(c);
}

Test(gcma, best_partitions_are_distinct_and_sorted) {
  cost_ctx *c = hand_ctx(4, 4, 4, 11);
  gcma *g = gcma_new(c, GCMA_GAIN_PIPELINE, 1);
  search_dtfm *d = search_dtfm_new(c);
  search_objective obj = search_dtfm_objective(d);
  search_log log;
  search_opts o;
  search_opts_default(&o);
  search_log_init(&log, &o, 0);
  err e = {ERR_OK, ""};
  cr_assert_eq(gcma_evolve(g, 10, 50, NULL, 0, &obj, &log, &e), ERR_OK);
  int groups[4 * 16];
  double scores[4];
  int got = gcma_best(g, 4, groups, scores);
  cr_assert_geq(got, 1);
  cost_scratch *w = cost_scratch_new(4, 4);
  for (int i = 0; i < got; i++) {
    cr_expect_float_eq(cost_partition(c, groups + 16 * i, w, NULL), scores[i],
                       1e-12);
    if (i) cr_expect_leq(scores[i - 1], scores[i]);
  }
  cr_expect_float_eq(scores[0], search_log_best(&log), 1e-12);
  free(log.best);
  cost_scratch_free(w);
  search_dtfm_free(d);
  gcma_free(g);
  cost_ctx_free(c);
}
