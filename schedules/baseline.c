/* baseline: see baseline.h. Greedy is deterministic (ties go to the lowest
 * device index); random search draws only from its own seeded generator. */
#include "schedules/baseline.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "schedules/bysite.h"
#include "schedules/schedule_method.h"

search_result *baseline_random_search(const cost_ctx *c,
                                      const search_objective *obj,
                                      const search_opts *o, err *e) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  search_dtfm *d = NULL;
  search_objective dtfm;
  obj = search_objective_or_dtfm(obj, c, &d, &dtfm);
  long trials = o->trials >= 0 ? o->trials : SEARCH_POPULATION + SEARCH_TRIALS;
  if (trials < 1) trials = 1;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, (unsigned long)o->seed);
  /* The samples are drawn before any is judged (scores draw nothing), in
   * batches of `cap` submitted as drawn (a stream's scorer works while the
   * next is drawn) and logged in order: the one-at-a-time search's result
   * to the bit. */
  int cap = o->batch > 0 ? o->batch : SEARCH_BATCH;
  if (cap > trials) cap = (int)trials;
  int *perm = mem_alloc((size_t)cap * n * sizeof *perm);
  double *score = mem_alloc((size_t)cap * sizeof *score);
  int *best = mem_alloc((size_t)n * sizeof *best);
  for (int i = 0; i < n; i++) best[i] = i;
  search_log log;
  search_log_init(&log, o, trials);
  search_result *r = NULL;
  double best_s = INFINITY;
  int rc = ERR_OK;
  for (long t = 0; t < trials && rc == ERR_OK;) {
    int m = trials - t < cap ? (int)(trials - t) : cap;
    for (int j = 0, sent = ERR_OK; j < m; j++) {
      int *p = perm + (size_t)j * n;
      for (int i = 0; i < n; i++) p[i] = i;
      gsl_ran_shuffle(rng, p, (size_t)n, sizeof *p);
      if (sent == ERR_OK) sent = search_objective_submit(obj, p, e);
    }
    rc = search_objective_collect(obj, m, perm, n, score, e);
    for (int j = 0; j < m && rc == ERR_OK; j++, t++)
      if (search_log_push(&log, score[j])) {
        best_s = score[j];
        memcpy(best, perm + (size_t)j * n, (size_t)n * sizeof *best);
      }
  }
  if (rc == ERR_OK) {
    r = search_result_new(schedule_method_name(SCHEDULE_RANDOM_SEARCH),
                          search_objective_realise(obj, c, best), c);
    r->objective_s = best_s;
    search_log_finish(&log, r);
  }
  if (!r) free(log.best);
  free(perm), free(score);
  free(best);
  gsl_rng_free(rng);
  search_dtfm_free(d);
  return r;
}

/* ---- greedy by sites ----
 * Without overrides a free device's sum over a group's members, and its
 * pipeline edge from a device, are its site's: the device-by-device scans
 * below pick the lowest free device of the site whose value is least
 * (ties: the lowest such device), so they run over sites and a cursor per
 * site, O(sites) a pick instead of O(devices x members). Each site's sum
 * adds the same terms in the same order as the scan (sum += a + b per
 * member), so the picks, hence the groups, are the same bit for bit
 * (tests/test_baseline.c against the scan). */

/* The lowest free device among the sites whose value val[] is least (all
 * sites when val is NULL); its site in *at; -1 when none is free. */
static int lowest_of_least(const bysite *b, const int *cur, const double *val,
                           int *at) {
  int pick = -1;
  double best = INFINITY;
  for (int x = 0; x < b->ns; x++) {
    if (cur[x] == b->start[x + 1]) continue;
    int d = b->dev[cur[x]];
    double v = val ? val[x] : 0;
    if (pick < 0 || v < best || (v == best && d < pick))
      best = v, pick = d, *at = x;
  }
  return pick;
}

static void greedy_groups_sites(const cost_ctx *c, const bysite *b,
                                int *groups) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), ns = b->ns, x = 0;
  int *cur = mem_alloc((size_t)ns * sizeof *cur);
  double *sum = mem_alloc((size_t)ns * sizeof *sum);
  memcpy(cur, b->start, (size_t)ns * sizeof *cur);
  for (int s = 0; s < ng; s++) {
    int *gr = groups + s * k;
    for (int y = 0; y < ns; y++) sum[y] = 0;
    for (int m = 0; m < k; m++) {
      gr[m] = lowest_of_least(b, cur, m ? sum : NULL, &x);
      cur[x]++;
      for (int y = 0; y < ns; y++)
        sum[y] += cost_site_dp(c, y, x) + cost_site_dp(c, x, y);
    }
  }
  free(cur);
  free(sum);
}

static void greedy_pipelines_sites(const cost_ctx *c, const bysite *b,
                                   alloc *a) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), ns = b->ns, x = 0;
  int *cur = mem_alloc((size_t)ns * sizeof *cur);
  double *edge = mem_alloc((size_t)ns * sizeof *edge);
  memcpy(cur, b->start, (size_t)ns * sizeof *cur);
  for (int r = 0; r < k; r++)
    for (int s = 0; s < ng; s++) {
      a->device[r * ng + s] = lowest_of_least(b, cur, s ? edge : NULL, &x);
      cur[x]++;
      for (int y = 0; y < ns; y++) edge[y] = cost_site_pp(c, x, y);
    }
  free(cur);
  free(edge);
}

void baseline_greedy_groups(const cost_ctx *c, int *groups) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  bysite *b = bysite_new(c);
  if (b) {
    greedy_groups_sites(c, b, groups);
    bysite_free(b);
    return;
  }
  char *used = mem_calloc((size_t)n, 1);
  for (int s = 0; s < ng; s++) {
    int *gr = groups + s * k;
    int first = 0;
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

alloc *baseline_greedy_pipelines(const cost_ctx *c) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  alloc *a = alloc_new(k, ng);
  bysite *b = bysite_new(c);
  if (b) {
    greedy_pipelines_sites(c, b, a);
    bysite_free(b);
    return a;
  }
  char *used = mem_calloc((size_t)n, 1);
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

search_result *baseline_greedy(const cost_ctx *c, const search_opts *o) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c);
  int *groups = mem_alloc((size_t)k * ng * sizeof *groups);
  baseline_greedy_groups(c, groups);
  cost_scratch *w = cost_scratch_new(k, ng);
  alloc *by_groups = cost_realise(c, groups, w);
  alloc *by_pipes = baseline_greedy_pipelines(c);
  double s1 = cost_alloc(c, by_groups, NULL), s2 = cost_alloc(c, by_pipes, NULL);
  search_log log;
  search_log_init(&log, o, 2);
  search_log_push(&log, s1);
  search_log_push(&log, s2);
  bool first = s1 <= s2;
  search_result *r = search_result_new(schedule_method_name(SCHEDULE_GREEDY),
                                       first ? by_groups : by_pipes, c);
  alloc_free(first ? by_pipes : by_groups);
  r->objective_s = r->parts.score_s;
  search_log_finish(&log, r);
  cost_scratch_free(w);
  free(groups);
  return r;
}
