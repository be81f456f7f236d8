/* bench_gcma_sites: GCMA over site counts (gcma_sites.c, what volunteer-10k
 * gets) against GCMA over labels (what every other built-in keeps) on the
 * small built-ins, forced both ways (search_opts.by_site), DT-FM's budget,
 * seeds 1-10: the mean, best and worst DT-FM score of each, how many
 * seeds each wins, and the CPU seconds. Then volunteer-10k over sites
 * against greedy. Figures, not tests. */
#include <math.h>
#include <stdio.h>

#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "tests/bench.h"

#define SEEDS 10

typedef struct tally {
  double sum, lo, hi, cpu;
} tally;

static double one(const cost_ctx *c, int by_site, uint64_t seed, tally *t) {
  search_opts o;
  search_opts_default(&o);
  o.seed = seed, o.by_site = by_site;
  err e = {0};
  double c0 = bench_cpu_s();
  search_result *r = gcma_search(c, GCMA_GAIN_PIPELINE, NULL, &o, &e);
  t->cpu += bench_cpu_s() - c0;
  if (!r) {
    fprintf(stderr, "%s\n", e.msg);
    exit(1);
  }
  double s = r->parts.score_s;
  t->sum += s, t->lo = fmin(t->lo, s), t->hi = fmax(t->hi, s);
  search_result_free(r);
  return s;
}

static void compare(const char *name) {
  scenario *s = bench_scenario(name);
  err e = {0};
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  tally lab = {0, INFINITY, -INFINITY, 0}, sit = lab;
  int wins = 0, ties = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    double a = one(c, -1, seed, &lab), b = one(c, 1, seed, &sit);
    wins += b < a, ties += b == a;
  }
  printf("%-14s labels %9.4f [%9.4f, %9.4f] %5.2f CPU-s | sites %9.4f "
         "[%9.4f, %9.4f] %5.2f CPU-s | sites better %d, equal %d, worse %d "
         "of %d\n", name, lab.sum / SEEDS, lab.lo, lab.hi, lab.cpu,
         sit.sum / SEEDS, sit.lo, sit.hi, sit.cpu, wins, ties,
         SEEDS - wins - ties, SEEDS);
  fflush(stdout);
  cost_ctx_free(c);
  scenario_free(s);
}

int main(void) {
  const char *small[] = {"worldwide", "regional", "multi-dc", "spot",
                         "datacenter", "volunteer-mix"};
  printf("GCMA, DT-FM's budget (100 + 4900), seeds 1-%d: mean [best, worst] "
         "DT-FM score, s\n", SEEDS);
  for (size_t i = 0; i < sizeof small / sizeof *small; i++) compare(small[i]);
  scenario *s = bench_scenario("volunteer-10k");
  err e = {0};
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  search_opts o;
  search_opts_default(&o);
  search_result *g = baseline_greedy(c, &o);
  tally t = {0, INFINITY, -INFINITY, 0};
  for (uint64_t seed = 1; seed <= 3; seed++) one(c, 0, seed, &t);
  printf("volunteer-10k  greedy %9.4f | gcma over sites, seeds 1-3: %9.4f "
         "[%9.4f, %9.4f] %5.2f CPU-s each\n", g->parts.score_s, t.sum / 3,
         t.lo, t.hi, t.cpu / 3);
  search_result_free(g);
  cost_ctx_free(c);
  scenario_free(s);
  return 0;
}
