/* bench_schedule: the scheduler's figures — CPU time of one DT-FM partition
 * score and of 5000 GCMA candidates on 64 devices, and the best score per
 * built-in scenario and seed for gcma, hybrid, random-search and greedy with
 * DT-FM's settings (population 100, 4900 trials, paper-era sizes), with the
 * candidate at which each run first reached its best; and `--method sim`
 * (simulator in the loop, 200 simulations) against the cost model's choice
 * on the geo cases under netem and tcp. Not a test: it prints numbers for
 * the issue note. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/cost.h"
#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "schedules/search.h"
#include "sim/place.h"
#include "tests/bench.h"
#include "traces/scenario.h"

static void bench_score(const cost_ctx *c) {
  int n = cost_ctx_replicas(c) * cost_ctx_stages(c);
  int *groups = malloc((size_t)n * sizeof *groups);
  for (int i = 0; i < n; i++) groups[i] = (i * 37) % n;
  cost_scratch *w = cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  int reps = 20000;
  double sink = 0, t0 = bench_cpu_s();
  for (int i = 0; i < reps; i++) {
    int a = i % n, b = (i * 7 + 3) % n, t = groups[a];
    groups[a] = groups[b], groups[b] = t;
    sink += cost_partition(c, groups, w, NULL);
  }
  double dt = bench_cpu_s() - t0;
  printf("cost_partition, 64 devices: %.2f us per score (%d scores, sink %g)\n",
         1e6 * dt / reps, reps, sink / reps);
  cost_scratch_free(w);
  free(groups);
}

/* GCMA on worldwide at 500 and 5000 candidates (population 100), CPU
 * seconds in this process (the least of three seeds), against DT-FM's
 * Python reference scheduler at the same candidates: 23.1 CPU-s at 500
 * (issue 26's measurement) and 290-480 CPU-s at 5000 (tests/PERFORMANCE.md's). */
static void bench_dtfm_ratio(const cost_ctx *c) {
  static const struct { int trials; double lo, hi; } runs[] = {
      {400, 23.1, 23.1}, {4900, 290, 480}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    double least = INFINITY, score = NAN;
    for (int seed = 0; seed < 3; seed++) {
      search_opts o;
      search_opts_default(&o);
      o.seed = (uint64_t)seed, o.trials = runs[i].trials;
      err e;
      err_clear(&e);
      double t0 = bench_cpu_s();
      search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
      double dt = bench_cpu_s() - t0;
      least = dt < least ? dt : least;
      score = r ? r->parts.score_s : NAN;
      search_result_free(r);
    }
    printf("gcma worldwide, %4d candidates: %.3f CPU-s (score %.3f); DT-FM's "
           "Python %.1f-%.1f CPU-s: %.0f-%.0fx (peak RSS %.1f MiB)\n",
           runs[i].trials + 100, least, score, runs[i].lo, runs[i].hi,
           runs[i].lo / least, runs[i].hi / least,
           bench_peak_rss_kib() / 1024.0);
  }
}

/* The candidate (1-based) at which the convergence first reached its end. */
static long first_best(const search_result *r) {
  long i = r->candidates - 1;
  while (i > 0 && r->convergence[i - 1] == r->convergence[i]) i--;
  return i + 1;
}

/* sim against the cost model's choice (its start), simulated both. */
static int bench_sim(int seeds) {
  static const char *const names[] = {"multi-dc", "regional", "worldwide"};
  static const transport_model nets[] = {TRANSPORT_NETEM, TRANSPORT_TCP};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    for (size_t k = 0; k < sizeof nets / sizeof *nets; k++)
      for (int seed = 0; seed < seeds; seed++) {
        err e;
        err_clear(&e);
        scenario *s = scenario_load(names[i], &e);
        cost_ctx *c = s ? cost_ctx_from_scenario(s, &e) : NULL;
        search_opts o;
        search_opts_default(&o);
        o.seed = (uint64_t)seed;
        sim_options so = sim_options_default();
        so.transport.model = nets[k];
        so.seed = (uint64_t)seed;
        double t0 = bench_cpu_s();
        search_result *r = c ? sim_place_search(s, c, "sim", &o, &so, &e) : NULL;
        if (!r) {
          fprintf(stderr, "%s\n", e.msg);
          cost_ctx_free(c);
          scenario_free(s);
          return 1;
        }
        printf("sim %-10s %-5s seed %d: cost model's choice %8.3f s, sim %8.3f s"
               " (%5.1f %% less; its DT-FM score %.3f; best at %3ld of %ld,"
               " %.2f s CPU)\n",
               names[i], transport_model_name(nets[k]), seed, r->start_s,
               r->objective_s, 100 * (r->start_s - r->objective_s) / r->start_s,
               r->parts.score_s, first_best(r), r->candidates, bench_cpu_s() - t0);
        search_result_free(r);
        cost_ctx_free(c);
        scenario_free(s);
      }
  return 0;
}

/* argv[1]: seeds (default 5, seeds 0 .. N-1; `sim` runs min(N, 2));
 * argv[2]: "gcma" or "sim" to run only that part, anything else for all. */
int main(int argc, char **argv) {
  static const char *const names[] = {"datacenter", "spot", "multi-dc",
                                      "regional", "worldwide"};
  int seeds = argc > 1 ? atoi(argv[1]) : 5;
  const char *only = argc > 2 ? argv[2] : "";
  int methods = strcmp(only, "gcma") == 0 ? 1 : 3;
  if (strcmp(only, "sim") == 0) return bench_sim(seeds < 2 ? seeds : 2);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    err e;
    err_clear(&e);
    scenario *s = scenario_load(names[i], &e);
    cost_ctx *c = s ? cost_ctx_from_scenario(s, &e) : NULL;
    if (!c) {
      fprintf(stderr, "%s\n", e.msg);
      scenario_free(s);
      return 1;
    }
    if (i == 0) bench_score(c);
    if (strcmp(names[i], "worldwide") == 0) bench_dtfm_ratio(c);
    for (int seed = 0; seed < seeds; seed++) {
      search_opts o;
      search_opts_default(&o);
      o.seed = (uint64_t)seed;
      printf("%-10s seed %d:", names[i], seed);
      for (int m = 0; m < methods; m++) {
        double t0 = bench_cpu_s();
        search_result *r =
            m == 2 ? baseline_random_search(c, NULL, &o, &e)
                   : gcma_search(c, m ? GCMA_GAIN_CUT : GCMA_GAIN_PIPELINE,
                                 NULL, &o, &e);
        printf("  %s %.3f (at %ld of %ld, %.2f s CPU)", r->method,
               r->parts.score_s, first_best(r), r->candidates, bench_cpu_s() - t0);
        search_result_free(r);
      }
      printf("\n");
    }
    search_result *g = baseline_greedy(c, &(search_opts){0});
    printf("%-10s greedy %.3f\n", names[i], g->parts.score_s);
    search_result_free(g);
    cost_ctx_free(c);
    scenario_free(s);
  }
  return strcmp(only, "gcma") == 0 ? 0 : bench_sim(seeds < 2 ? seeds : 2);
}
