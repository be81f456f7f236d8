/* schedule: see schedule.h. Fixed placements come from models/alloc; the
 * searches from gcma, baseline and local. `sim` spends GCMA's default
 * budget on the cost model first (milliseconds), then o->trials
 * simulations, the expensive part. */
#include "schedules/schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "schedules/local.h"
#include "base/mem.h"

static const char *const methods[] = {
    "dtfm-identity", "megatron", "random", "random-search", "greedy",
    "gcma",          "hybrid",   "sim",    NULL};

const char *const *schedule_method_names(void) { return methods; }

bool schedule_method_known(const char *name) {
  for (const char *const *m = methods; *m; m++)
    if (strcmp(*m, name) == 0) return true;
  return false;
}

bool schedule_method_needs_objective(const char *name) {
  return strcmp(name, "sim") == 0;
}

static search_result *fixed(const char *name, const cost_ctx *c,
                            const search_opts *o, alloc *a) {
  search_result *r = search_result_new(name, a, c);
  r->objective_s = r->parts.score_s;
  search_log log;
  search_log_init(&log, o, 1);
  search_log_push(&log, r->objective_s);
  search_log_finish(&log, r);
  return r;
}

static search_result *sim_method(const cost_ctx *c, const search_opts *o,
                                 const search_objective *sim_obj, err *e) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  int starts = o->starts > 0 ? o->starts : SEARCH_SIM_STARTS;
  search_dtfm *d = search_dtfm_new(c);
  search_objective dtfm = search_dtfm_objective(d);
  search_opts quiet = *o;
  quiet.progress = NULL;
  gcma *g = gcma_new(c, GCMA_GAIN_PIPELINE, o->seed);
  int *groups = mem_alloc((size_t)starts * n * sizeof *groups);
  baseline_greedy_groups(c, groups);
  search_log log;
  search_log_init(&log, &quiet, 0);
  search_result *r = NULL;
  alloc **alloc_starts = mem_calloc((size_t)starts + 1, sizeof *alloc_starts);
  int got = 0;
  if (gcma_evolve(g, o->population > 0 ? o->population : SEARCH_POPULATION,
                  SEARCH_TRIALS, groups, 1, &dtfm, &log, e) != ERR_OK)
    goto done;
  got = gcma_best(g, starts, groups, NULL);
  cost_scratch *w = cost_scratch_new(k, ng);
  for (int i = 0; i < got; i++)
    alloc_starts[i] = cost_realise(c, groups + (size_t)i * n, w);
  cost_scratch_free(w);
  alloc_starts[got++] = baseline_greedy_pipelines(c);
  r = local_search(c, sim_obj, (const alloc *const *)alloc_starts, got, o, e);
done:
  for (int i = 0; i < got; i++) alloc_free(alloc_starts[i]);
  free(alloc_starts);
  free(log.best);
  free(groups);
  gcma_free(g);
  search_dtfm_free(d);
  return r;
}

search_result *schedule_method(const char *name, const cost_ctx *c,
                               const search_opts *o,
                               const search_objective *sim_obj, err *e) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c);
  alloc *a = alloc_fixed(name, k, ng, o->seed);
  if (a) return fixed(name, c, o, a);
  if (strcmp(name, "random-search") == 0)
    return baseline_random_search(c, NULL, o, e);
  if (strcmp(name, "greedy") == 0) return baseline_greedy(c, o);
  if (strcmp(name, "gcma") == 0)
    return gcma_search(c, GCMA_GAIN_PIPELINE, NULL, o, e);
  if (strcmp(name, "hybrid") == 0)
    return gcma_search(c, GCMA_GAIN_CUT, NULL, o, e);
  if (strcmp(name, "sim") == 0) {
    if (!sim_obj || !sim_obj->alloc) {
      err_set(e, ERR_CONFIG, "method sim needs a simulation objective");
      return NULL;
    }
    return sim_method(c, o, sim_obj, e);
  }
  err_set(e, ERR_UNKNOWN,
          "unknown method '%s' (dtfm-identity, megatron, random, "
          "random-search, greedy, gcma, hybrid, sim)",
          name);
  return NULL;
}
