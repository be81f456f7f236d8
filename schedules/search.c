/* search: see search.h. The log keeps best-so-far values, so its array is
 * non-increasing by construction; NaN (a failed score) never becomes a best. */
#include "schedules/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

void search_opts_default(search_opts *o) {
  *o = (search_opts){.population = SEARCH_POPULATION,
                     .trials = -1,
                     .seed = 0,
                     .starts = SEARCH_SIM_STARTS};
}

long search_sim_trials(int ndevices) {
  if (ndevices <= SEARCH_SIM_FULL_DEVICES) return SEARCH_SIM_TRIALS;
  return (long)SEARCH_SIM_TRIALS * SEARCH_SIM_FULL_DEVICES / ndevices;
}

void search_result_free(search_result *r) {
  if (!r) return;
  alloc_free(r->best);
  free(r->convergence);
  free(r);
}

int search_convergence_write(const search_result *r, FILE *f) {
  int bad = fprintf(f, "candidate,best_score_s\n") < 0;
  for (long i = 0; i < r->candidates; i++)
    bad |= fprintf(f, "%ld,%.9g\n", i + 1, r->convergence[i]) < 0;
  return bad ? ERR_IO : ERR_OK;
}

search_result *search_result_new(const char *name, alloc *best,
                                 const cost_ctx *c) {
  search_result *r = mem_calloc(1, sizeof *r);
  snprintf(r->method, sizeof r->method, "%s", name);
  r->best = best;
  r->objective_s = NAN;
  r->start_s = NAN;
  r->parts.score_s = cost_alloc(c, best, &r->parts);
  return r;
}

struct search_dtfm {
  const cost_ctx *c;  /* borrowed */
  cost_scratch *w;    /* owned */
};

search_dtfm *search_dtfm_new(const cost_ctx *c) {
  search_dtfm *d = mem_alloc(sizeof *d);
  d->c = c;
  d->w = cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  return d;
}

void search_dtfm_free(search_dtfm *d) {
  if (!d) return;
  cost_scratch_free(d->w);
  free(d);
}

static double dtfm_partition(void *ctx, const int *groups, err *e) {
  (void)e;
  search_dtfm *d = ctx;
  return cost_partition(d->c, groups, d->w, NULL);
}

static double dtfm_alloc(void *ctx, const alloc *a, err *e) {
  (void)e;
  search_dtfm *d = ctx;
  return cost_alloc(d->c, a, NULL);
}

search_objective search_dtfm_objective(search_dtfm *d) {
  return (search_objective){.name = "dtfm-score",
                            .partition = dtfm_partition,
                            .alloc = dtfm_alloc,
                            .ctx = d};
}

alloc *search_objective_realise(const search_objective *obj, const cost_ctx *c,
                                const int *groups) {
  if (obj->realise) return obj->realise(obj->ctx, groups);
  cost_scratch *w = cost_scratch_new(cost_ctx_replicas(c), cost_ctx_stages(c));
  alloc *a = cost_realise(c, groups, w);
  cost_scratch_free(w);
  return a;
}

/* rc, or ERR_RANGE (e filled) when one of out[0 .. m) is NAN. */
static int check_scores(const search_objective *obj, int rc, int m,
                        const double *out, err *e) {
  for (int i = 0; i < m && rc == ERR_OK; i++)
    if (isnan(out[i])) rc = ERR_RANGE;
  if (rc && e && e->code == ERR_OK)
    err_set(e, ERR_RANGE, "%s: the objective returned no value",
            obj->name ? obj->name : "objective");
  return rc;
}

int search_objective_submit(const search_objective *obj, const int *groups,
                            err *e) {
  return obj->submit ? obj->submit(obj->ctx, groups, e) : ERR_OK;
}

int search_objective_collect(const search_objective *obj, int m,
                             const int *groups, int n, double *out, err *e) {
  if (!obj->collect) return search_objective_partitions(obj, m, groups, n, out, e);
  return check_scores(obj, obj->collect(obj->ctx, m, out, e), m, out, e);
}

int search_objective_partitions(const search_objective *obj, int m,
                                const int *groups, int n, double *out,
                                err *e) {
  int rc = ERR_OK;
  if (obj->partitions) {
    rc = obj->partitions(obj->ctx, m, groups, out, e);
  } else {
    for (int i = 0; i < m && rc == ERR_OK; i++) {
      out[i] = obj->partition(obj->ctx, groups + (size_t)i * n, e);
      if (isnan(out[i])) rc = e && e->code ? e->code : ERR_RANGE;
    }
  }
  return check_scores(obj, rc, m, out, e);
}

const search_objective *search_objective_or_dtfm(const search_objective *obj,
                                                 const cost_ctx *c,
                                                 search_dtfm **own,
                                                 search_objective *buf) {
  *own = NULL;
  if (obj) return obj;
  *own = search_dtfm_new(c);
  *buf = search_dtfm_objective(*own);
  return buf;
}

void search_log_init(search_log *l, const search_opts *o, long total) {
  *l = (search_log){.opts = o, .total = total};
}

double search_log_best(const search_log *l) {
  return l->n ? l->best[l->n - 1] : INFINITY;
}

bool search_log_push(search_log *l, double value_s) {
  double best = search_log_best(l);
  bool better = value_s < best;  /* false for NaN */
  if (better) best = value_s;
  if (l->n == l->cap) {
    size_t cap = (size_t)l->cap;
    mem_grow((void **)&l->best, &cap, (size_t)l->n + 1, sizeof *l->best);
    l->cap = (long)cap;
  }
  l->best[l->n++] = best;
  if (l->opts && l->opts->progress)
    l->opts->progress(l->opts->progress_ctx, l->n,
                      l->total > l->n ? l->total : l->n, best);
  return better;
}

void search_log_finish(search_log *l, search_result *r) {
  free(r->convergence);
  r->convergence = l->best;
  r->candidates = l->n;
  *l = (search_log){.opts = l->opts};
}
