/* schedule: see schedule.h. Fixed placements come from models/alloc; the
 * searches from gcma, baseline and local. `sim` spends GCMA's default
 * budget on the cost model first (milliseconds on the small built-ins,
 * seconds at 10^4 devices: o->memo keeps it for the next search), then
 * o->trials simulations, the expensive part. */
#include "schedules/schedule.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/names.h"
#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "schedules/local.h"

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
                                 const search_objective *obj,
                                 const search_objective *sim_obj, err *e) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c), n = k * ng;
  int starts = o->starts > 0 ? o->starts : SEARCH_SIM_STARTS;
  search_dtfm *d = NULL; /* the DT-FM score's, where obj is NULL */
  search_objective dtfm;
  const search_objective *start = search_objective_or_dtfm(obj, c, &d, &dtfm);
  search_opts quiet = *o;
  quiet.progress = NULL;
  search_log log;
  search_log_init(&log, &quiet, 0);
  int *groups = mem_alloc((size_t)starts * n * sizeof *groups);
  int got = gcma_memo_take(c, GCMA_GAIN_PIPELINE, obj, o, SEARCH_TRIALS,
                           starts, groups);
  if (got < 0)
    got = gcma_best_of_search(c, GCMA_GAIN_PIPELINE, obj, start, o,
                              SEARCH_TRIALS, starts, &log, groups, NULL, e);
  search_result *r = NULL;
  alloc **alloc_starts = mem_calloc((size_t)starts + 1, sizeof *alloc_starts);
  if (got >= 0) {
    for (int i = 0; i < got; i++)
      alloc_starts[i] =
          search_objective_realise(start, c, groups + (size_t)i * n);
    alloc_starts[got++] = baseline_greedy_pipelines(c);
    r = local_search(c, sim_obj, (const alloc *const *)alloc_starts, got, o,
                     e);
  }
  free(groups);
  for (int i = 0; i < got; i++) alloc_free(alloc_starts[i]);
  free(alloc_starts);
  free(log.best);
  search_dtfm_free(d);
  return r;
}

search_result *schedule_method(const char *name, const cost_ctx *c,
                               const search_opts *o,
                               const search_objective *sim_obj, err *e) {
  return schedule_method_with(name, c, o, NULL, sim_obj, e);
}

/* A placement that no search chose (fixed, greedy) valued by obj: its
 * convergence is that one value. NULL and e filled when obj fails. */
static search_result *valued(search_result *r, const search_objective *obj,
                             err *e) {
  if (!r || !obj || !obj->alloc) return r;
  double v = obj->alloc(obj->ctx, r->best, e);
  if (isnan(v)) {
    search_result_free(r);
    return NULL;
  }
  r->objective_s = v;
  for (long i = 0; i < r->candidates; i++) r->convergence[i] = v;
  return r;
}

search_result *schedule_method_with(const char *name, const cost_ctx *c,
                                    const search_opts *o,
                                    const search_objective *obj,
                                    const search_objective *sim_obj, err *e) {
  int k = cost_ctx_replicas(c), ng = cost_ctx_stages(c);
  int m = schedule_method_find(name);
  if (m < 0) {
    char known[256];
    names_join(schedule_method_names(), ", ", ", ", known, sizeof known);
    err_set(e, ERR_UNKNOWN, "unknown method '%s' (%s)", name, known);
    return NULL;
  }
  switch ((schedule_method_id)m) {
    case SCHEDULE_DTFM_IDENTITY:
    case SCHEDULE_MEGATRON:
    case SCHEDULE_RANDOM:
      return valued(fixed(name, c, o, alloc_fixed(name, k, ng, o->seed)), obj,
                    e);
    case SCHEDULE_RANDOM_SEARCH: return baseline_random_search(c, obj, o, e);
    case SCHEDULE_GREEDY: return valued(baseline_greedy(c, o), obj, e);
    case SCHEDULE_GCMA: return gcma_search(c, GCMA_GAIN_PIPELINE, obj, o, e);
    case SCHEDULE_HYBRID: return gcma_search(c, GCMA_GAIN_CUT, obj, o, e);
    case SCHEDULE_SIM:
      if (sim_obj && sim_obj->alloc) return sim_method(c, o, obj, sim_obj, e);
      err_set(e, ERR_CONFIG, "method sim needs a simulation objective");
      return NULL;
  }
  assert(!"unknown method");
  return NULL;
}
