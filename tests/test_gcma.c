/* test_gcma: GCMA against brute force on small cases (every balanced
 * partition enumerated), and its invariants: crossover and local search keep
 * partitions balanced, the realised pipelines cost what the partition
 * scores (the pairing realises the bottleneck), a seed reproduces a run;
 * and the plateau of DT-FM's spot case (and smaller analogues of it), whose
 * optimum has a closed form, is crossed by the rebuild mutation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
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
    err e = {0};
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
  err e = {0};
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
  err e = {0};
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

/* DT-FM's spot case, built by hand: `inst` instances of `per` GPUs (100
 * inside) and standalone machines, 1.25 between any two machines, zero
 * delay, paper-era sizes (c_pp 0.28125, c_dp 1.0). spotlike(8, 8, 4) is
 * the spot matrix. With replicas = inst every group with a standalone
 * machine has DataPCost (k-1) 2 (8 / (k 1.25)); a boundary is cheap
 * (0.0225 s) only between two groups holding one GPU of every instance,
 * so at most per-1 boundaries are cheap and the optimum is below. */
static cost_ctx *spotlike(int replicas, int stages, int per) {
  int n = replicas * stages;
  double *lat = calloc((size_t)n * n, sizeof *lat);
  double *bw = malloc((size_t)n * n * sizeof *bw);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      int ia = a < replicas * per ? a / per : -1 - a;
      int ib = b < replicas * per ? b / per : -1 - b;
      bw[a * n + b] = ia == ib ? 100 : 1.25;
    }
  cost_ctx *c = cost_ctx_new(replicas, stages, lat, bw, 0.28125, 1.0);
  free(lat);
  free(bw);
  return c;
}

static double spotlike_score(int k, int ng, int cheap) {
  return (k - 1) * 2.0 * (8.0 / (k * 1.25)) +
         2 * (cheap * 8 * 0.28125 / 100 + (ng - 1 - cheap) * 8 * 0.28125 / 1.25);
}

Test(gcma, spot_closed_form_matches_the_paper) {
  cr_assert_float_eq(spotlike_score(8, 8, 3), 25.735, 1e-9);
  cr_assert_float_eq(spotlike_score(8, 8, 2), 29.290, 1e-9);
}

/* The state where GCMA stalled on spot: groups 0-2 hold GPU 0, 1, 2 of
 * every instance (two cheap boundaries); the eight GPUs 3 are split over
 * groups 3 and 4 among standalone machines. No swap of two devices changes
 * the score (a boundary is cheap only when all eight pairs are). */
static void spot_stall(int *groups) {
  int standalone = 32;
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < 8; i++) groups[s * 8 + i] = 4 * i + s;
  for (int s = 3; s < 5; s++)
    for (int i = 0; i < 8; i++)
      groups[s * 8 + i] = i < 4 ? 4 * ((s - 3) * 4 + i) + 3 : standalone++;
  for (int s = 5; s < 8; s++)
    for (int i = 0; i < 8; i++) groups[s * 8 + i] = standalone++;
}

Test(gcma, spot_stall_is_a_plateau_for_swaps) {
  cost_ctx *c = spotlike(8, 8, 4);
  cost_scratch *w = cost_scratch_new(8, 8);
  int groups[64];
  spot_stall(groups);
  double base = cost_partition(c, groups, w, NULL);
  cr_assert_float_eq(base, spotlike_score(8, 8, 2), 1e-9);
  for (int i = 0; i < 64; i++)
    for (int j = i + 1; j < 64; j++) {
      if (i / 8 == j / 8) continue;
      int t = groups[i];
      groups[i] = groups[j], groups[j] = t;
      cr_assert_geq(cost_partition(c, groups, w, NULL), base - 1e-9,
                    "swap %d %d improves", i, j);
      groups[j] = groups[i], groups[i] = t;
    }
  cost_scratch_free(w);
  cost_ctx_free(c);
}

Test(gcma, rebuild_crosses_the_spot_plateau) {
  cost_ctx *c = spotlike(8, 8, 4);
  cost_scratch *w = cost_scratch_new(8, 8);
  gcma *g = gcma_new(c, GCMA_GAIN_PIPELINE, 5);
  int groups[64], label[64], start[64], out[64];
  spot_stall(groups);
  gcma_to_labels(g, groups, start);
  double best = INFINITY;
  for (int b = 0; b < 7; b++)
    for (int side = 0; side < 2; side++) {
      memcpy(label, start, sizeof label);
      gcma_rebuild(g, label, b, side);
      cr_assert(balanced(label, 64, 8, 8), "boundary %d side %d", b, side);
      gcma_to_groups(g, label, out);
      double v = cost_partition(c, out, w, NULL);
      if (v < best) best = v;
      /* the chain's groups are guarded unless one is rebuilt */
      int kept = 0;
      for (int i = 0; i < 24; i++) kept += label[groups[i]] == start[groups[i]];
      cr_expect_geq(kept, 16, "boundary %d side %d broke the chain", b, side);
    }
  cr_expect_float_eq(best, spotlike_score(8, 8, 3), 1e-9,
                     "one rebuild completes the fourth group");
  gcma_free(g);
  cost_scratch_free(w);
  cost_ctx_free(c);
}

/* The whole search on smaller analogues of spot, where DT-FM's operators
 * alone stall on about half of the seeds (8/20 and 11/20 reached the
 * optimum before the rebuild mutation; 20/20 after). The full spot case
 * (5000 candidates, seeds 0-4) is in bench_schedule. */
static void reaches_spotlike_optimum(int k, int ng, int per, int trials,
                                     int seeds) {
  cost_ctx *c = spotlike(k, ng, per);
  double opt = spotlike_score(k, ng, per - 1);
  for (int seed = 0; seed < seeds; seed++) {
    search_opts o;
    search_opts_default(&o);
    o.population = 30;
    o.trials = trials;
    o.seed = (uint64_t)seed;
    err e = {0};
    search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
    cr_assert_not_null(r, "%s", e.msg);
    cr_expect_float_eq(r->objective_s, opt, 1e-9, "%dx%d seed %d: %.4f, optimum %.4f",
                       k, ng, seed, r->objective_s, opt);
    cr_expect_float_eq(r->parts.score_s, r->objective_s, 1e-9);
    search_result_free(r);
  }
  cost_ctx_free(c);
}

Test(gcma, reaches_the_optimum_of_spot_analogues) {
  reaches_spotlike_optimum(4, 6, 3, 1000, 10);
  reaches_spotlike_optimum(4, 8, 4, 1000, 5);
}

/* A recording objective: DT-FM's score of each candidate, and a hash of
 * every candidate it was given, in order; with `partitions` it also counts
 * the batches. */
typedef struct recorder {
  search_dtfm *d;
  int n;
  uint64_t *seen;
  long nseen, cap, batches;
} recorder;

static double rec_partition(void *ctx, const int *groups, err *e) {
  recorder *r = ctx;
  uint64_t h = 1469598103934665603u;
  for (int i = 0; i < r->n; i++) h = (h ^ (uint64_t)groups[i]) * 1099511628211u;
  if (r->nseen == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->seen = realloc(r->seen, (size_t)r->cap * sizeof *r->seen);
  }
  r->seen[r->nseen++] = h;
  search_objective o = search_dtfm_objective(r->d);
  return o.partition(o.ctx, groups, e);
}

static int rec_partitions(void *ctx, int m, const int *groups, double *out,
                          err *e) {
  recorder *r = ctx;
  r->batches++;
  for (int i = 0; i < m; i++)
    out[i] = rec_partition(ctx, groups + (size_t)i * r->n, e);
  return ERR_OK;
}

/* GCMA with batch size `batch` (1: one at a time), through `partitions`
 * when many: the result, and the candidates in *r. */
static search_result *recorded_search(cost_ctx *c, int batch, bool many,
                                      uint64_t seed, recorder *r) {
  *r = (recorder){.d = search_dtfm_new(c),
                  .n = cost_ctx_replicas(c) * cost_ctx_stages(c)};
  search_objective obj = {.name = "recorded", .partition = rec_partition,
                          .partitions = many ? rec_partitions : NULL,
                          .ctx = r};
  search_opts o;
  search_opts_default(&o);
  o.population = 20, o.trials = 300, o.seed = seed, o.batch = batch;
  err e = {0};
  search_result *res = gcma_search(c, GCMA_GAIN_PIPELINE, &obj, &o, &e);
  cr_assert_not_null(res, "%s", e.msg);
  search_dtfm_free(r->d);
  return res;
}

/* Batches change nothing: the same candidates reach the objective in the
 * same order, and the convergence and result are the one-at-a-time
 * search's to the bit, whatever the batch size; with a batch scorer the
 * 320 candidates go in far fewer calls. */
Test(gcma, batches_equal_one_at_a_time) {
  cost_ctx *c = hand_ctx(4, 4, 4, 5);
  for (uint64_t seed = 1; seed <= 4; seed++) {
    recorder r1, rb;
    search_result *one = recorded_search(c, 1, false, seed, &r1);
    const int batches[] = {0, 2, 7, 64};
    for (int k = 0; k < 4; k++)
      for (int many = 0; many < 2; many++) {
        search_result *b = recorded_search(c, batches[k], many, seed, &rb);
        cr_assert_eq(rb.nseen, r1.nseen);
        cr_assert_eq(memcmp(rb.seen, r1.seen, (size_t)r1.nseen * sizeof *rb.seen),
                     0, "seed %llu batch %d: another candidate order",
                     (unsigned long long)seed, batches[k]);
        cr_assert_eq(b->candidates, one->candidates);
        cr_assert_eq(memcmp(b->convergence, one->convergence,
                            (size_t)one->candidates * sizeof *b->convergence),
                     0);
        cr_assert_eq(memcmp(&b->objective_s, &one->objective_s,
                            sizeof b->objective_s), 0);
        cr_assert_eq(memcmp(b->best->device, one->best->device,
                            16 * sizeof *b->best->device), 0);
        if (many && batches[k] != 2)
          cr_expect_lt(rb.batches, r1.nseen / 4, "%ld calls for %ld",
                       rb.batches, r1.nseen);
        free(rb.seen);
        search_result_free(b);
      }
    free(r1.seen);
    search_result_free(one);
  }
  cost_ctx_free(c);
}

/* The gain's per-site-pair weight cache (no overrides) and the per-call
 * lookups (a context with overrides) give the same run: here the one
 * override restates its site pair's link, so the weights are equal. */
Test(gcma, site_cache_equals_per_edge_lookups) {
  static const char *fmt =
      "{\"name\": \"three\", \"sites\": [{\"name\": \"A\", \"devices\": 8},"
      " {\"name\": \"B\", \"devices\": 8}, {\"name\": \"C\", \"devices\": 8}],"
      " \"network\": {\"latency_ms\": 0.1, \"bandwidth_gbps\": 25, \"links\": ["
      "  {\"between\": [\"A\", \"B\"], \"latency_ms\": 25, \"bandwidth_gbps\": 3},"
      "  {\"from\": \"A\", \"to\": \"C\", \"latency_ms\": 50, \"bandwidth_gbps\": 1.5},"
      "  {\"from\": \"C\", \"to\": \"A\", \"latency_ms\": 50, \"bandwidth_gbps\": 0.8},"
      "  {\"between\": [\"B\", \"C\"], \"latency_ms\": 70, \"bandwidth_gbps\": 1}]%s},"
      " \"workload\": {\"model\": \"gpt3-xl\", \"batch\": 96, \"micro_batch\": 1,"
      "  \"stages\": 4, \"replicas\": 6}}";
  const char *ovr = ", \"overrides\": [{\"from\": \"A:0\", \"to\": \"A:1\","
                    " \"latency_ms\": 0.1, \"bandwidth_gbps\": 25}]";
  for (int gain = 0; gain < 2; gain++) {
    search_result *r[2];
    for (int with = 0; with < 2; with++) {
      char text[2048];
      snprintf(text, sizeof text, fmt, with ? ovr : "");
      err e = {0};
      scenario *s = scenario_parse(text, strlen(text), "three.json", &e);
      cr_assert_not_null(s, "%s", e.msg);
      cost_ctx *c = cost_ctx_from_scenario(s, &e);
      cr_assert_not_null(c, "%s", e.msg);
      int ns;
      cr_assert_eq(cost_ctx_site_map(c, &ns) == NULL, with == 1);
      search_opts o;
      search_opts_default(&o);
      o.population = 20;
      o.trials = 100;
      o.seed = 7;
      r[with] = gcma_search(c, gain ? GCMA_GAIN_PIPELINE : GCMA_GAIN_CUT, NULL,
                            &o, &e);
      cr_assert_not_null(r[with], "%s", e.msg);
      cost_ctx_free(c);
      scenario_free(s);
    }
    cr_assert_eq(r[0]->candidates, r[1]->candidates);
    cr_assert_arr_eq(r[0]->convergence, r[1]->convergence,
                     (size_t)r[0]->candidates * sizeof(double));
    cr_assert_arr_eq(r[0]->best->device, r[1]->best->device, 24 * sizeof(int));
    search_result_free(r[0]);
    search_result_free(r[1]);
  }
}
