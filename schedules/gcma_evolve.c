/* gcma_evolve: GCMA's genetic algorithm (gcma.h's gcma_evolve, gcma_best,
 * gcma_search) over the operators of gcma.c: the first population, the
 * offspring in broods judged in batches, the replacement of the worse
 * parent. Shares gcma.c's state through gcma_parts.h. */
#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "schedules/baseline.h"
#include "schedules/gcma.h"
#include "schedules/gcma_parts.h"
#include "schedules/schedule.h"

/* ---- the genetic algorithm --------------------------------------------- */

static bool labels_same(gcma *g, const int *a, const int *b);

/* A child identical to a parent teaches nothing (the population collapses
 * onto clones once parents agree): swap two random devices of different
 * groups instead. DT-FM has no mutation; this is the usual GA remedy. */
static void mutate_if_clone(gcma *g, const int *p1, const int *p2,
                            int *child) {
  if (g->ng < 2 || (!labels_same(g, child, p1) && !labels_same(g, child, p2)))
    return;
  int a = (int)gsl_rng_uniform_int(g->rng, (unsigned long)g->n), b;
  do b = (int)gsl_rng_uniform_int(g->rng, (unsigned long)g->n);
  while (child[b] == child[a]);
  int t = child[a];
  child[a] = child[b];
  child[b] = t;
  assert(gcma_balanced(g, child)); /* a swap keeps the sizes */
}

/* Offspring made before any of them is judged (a brood): trial k's parents
 * p[2k], p[2k+1], its child before the local search (before) and after
 * (after), n labels each; what the objective is given (groups: before,
 * after, one after another per trial) and its scores (s).
 * Why: the objective may be a user's model behind a pipe, whose answers
 * cost a round trip each; a brood goes in one batch (streamed, when the
 * objective can: each child submitted when made, so the model works while
 * the next is made; the scores collected after the brood's last). The result is the
 * one-at-a-time search's to the bit: a child is made from its parents'
 * labels and the generator alone (scores draw nothing), so children whose
 * parents no earlier child of the brood may replace are made exactly as
 * they would be after those earlier children were judged; the brood ends
 * before the first child that shares a parent with one in it (its parents
 * drawn, kept for the next brood), and the judgements are applied in
 * trial order. */
typedef struct brood {
  int m, cap;
  int *p;
  int *before, *after, *groups;
  double *s;
} brood;

static void brood_init(brood *b, int cap, int n, int len, int population) {
  int rows = 2 * cap > population ? 2 * cap : population;
  b->m = 0, b->cap = cap;
  b->p = mem_alloc((size_t)2 * cap * sizeof *b->p);
  b->before = mem_alloc((size_t)cap * len * sizeof *b->before);
  b->after = mem_alloc((size_t)cap * len * sizeof *b->after);
  b->groups = mem_alloc((size_t)rows * n * sizeof *b->groups);
  b->s = mem_alloc((size_t)rows * sizeof *b->s);
}

static void brood_free(brood *b) {
  free(b->p), free(b->before), free(b->after), free(b->groups), free(b->s);
}

/* Whether parent x is a parent of a child in the brood. */
static bool brood_has_parent(const brood *b, int x) {
  for (int i = 0; i < 2 * b->m; i++)
    if (b->p[i] == x) return true;
  return false;
}

/* The first population: the seeds given, then random partitions (a
 * shuffle of the devices); scored together (in order) and logged. ERR_OK,
 * or the objective's error. */
static int seed_population(gcma *g, const int *seeds, int nseeds,
                           const search_objective *obj, search_log *log,
                           brood *b, err *e) {
  int n = g->n, len = g->len;
  for (int i = 0; i < g->pop; i++) {
    int *groups = b->groups + (size_t)i * n;
    if (i < nseeds) {
      memcpy(groups, seeds + (size_t)i * n, (size_t)n * sizeof *groups);
    } else {
      for (int d = 0; d < n; d++) groups[d] = d;
      gsl_ran_shuffle(g->rng, groups, (size_t)n, sizeof *groups);
    }
    int *ind = g->plabel + (size_t)i * len;
    g->repr->of_groups(g, groups, ind);
    g->repr->to_groups(g, ind, groups);
  }
  int rc = search_objective_partitions(obj, g->pop, b->groups, n, g->pscore, e);
  for (int i = 0; i < g->pop && rc == ERR_OK; i++)
    search_log_push(log, g->pscore[i]);
  return rc;
}

/* The labels' child of p1 and p2: crossover, the clone mutation, sometimes
 * the rebuild (before), then the local search (after). */
static void labels_breed(gcma *g, const int *p1, const int *p2, int *before,
                         int *after) {
  gcma_crossover(g, p1, p2, after);
  mutate_if_clone(g, p1, p2, after);
  if (gsl_rng_uniform(g->rng) < GCMA_REBUILD_P) gcma_rebuild(g, after, -1, -1);
  memcpy(before, after, (size_t)g->n * sizeof *after);
  gcma_local_search(g, after);
}

/* The child of parents p1 and p2, as brood entry m (the representation's
 * breed), both forms submitted to the objective at once (a stream's scorer
 * starts on them while the next child is made). The gains are surrogates:
 * the local search's result is kept only when the objective agrees that
 * it is no worse (brood_judge). ERR_OK, or the objective's error. */
static int offspring(gcma *g, int p1, int p2, brood *b,
                     const search_objective *obj, err *e) {
  int n = g->n, m = b->m, len = g->len;
  int *child = b->after + (size_t)m * len, *before = b->before + (size_t)m * len;
  g->repr->breed(g, g->plabel + (size_t)p1 * len, g->plabel + (size_t)p2 * len,
                 before, child);
  b->p[2 * m] = p1, b->p[2 * m + 1] = p2;
  b->m++;
  int *gb = b->groups + (size_t)2 * m * n, *ga = gb + n;
  g->repr->to_groups(g, before, gb);
  g->repr->to_groups(g, child, ga);
  int rc = search_objective_submit(obj, gb, e);
  return rc ? rc : search_objective_submit(obj, ga, e);
}

/* A child worse than both parents is dropped; otherwise it takes the place
 * of the worse parent. */
static void replace_worse_parent(gcma *g, int p1, int p2, const int *child,
                                 double s) {
  double s1 = g->pscore[p1], s2 = g->pscore[p2];
  if (s > (s1 > s2 ? s1 : s2)) return;
  int worse = s1 > s2 ? p1 : p2, len = g->len;
  memcpy(g->plabel + (size_t)worse * len, child, (size_t)len * sizeof *child);
  g->pscore[worse] = s;
}

/* Judges the brood in one batch (each child before, then after its local
 * search, as offspring submitted them) and applies the results in trial
 * order; empties it. */
static int brood_judge(gcma *g, brood *b, const search_objective *obj,
                       search_log *log, err *e) {
  int n = g->n, len = g->len;
  int rc = search_objective_collect(obj, 2 * b->m, b->groups, n, b->s, e);
  for (int k = 0; k < b->m && rc == ERR_OK; k++) {
    double s0 = b->s[2 * k], s = b->s[2 * k + 1];
    const int *child = b->after + (size_t)k * len;
    if (s0 < s) {
      s = s0;
      child = b->before + (size_t)k * len;
    }
    search_log_push(log, s);
    replace_worse_parent(g, b->p[2 * k], b->p[2 * k + 1], child, s);
  }
  b->m = 0;
  return rc;
}

int gcma_evolve(gcma *g, int population, int trials, const int *seeds,
                int nseeds, const search_objective *obj, search_log *log,
                err *e) {
  int n = g->n, len = g->len;
  free(g->plabel);
  free(g->pscore);
  g->pop = population;
  g->plabel = mem_alloc((size_t)population * len * sizeof *g->plabel);
  g->pscore = mem_alloc((size_t)population * sizeof *g->pscore);
  int cap = log && log->opts && log->opts->batch > 0 ? log->opts->batch
                                                     : SEARCH_BATCH;
  brood b;
  brood_init(&b, cap, n, len, population);
  int rc = seed_population(g, seeds, nseeds, obj, log, &b, e);
  bool drawn = false; /* p1, p2: the next trial's parents, drawn */
  int p1 = 0, p2 = 0;
  for (int t = 0; t < trials && rc == ERR_OK;) {
    while (t < trials && b.m < cap) {
      if (!drawn) {
        p1 = (int)gsl_rng_uniform_int(g->rng, (unsigned long)population);
        p2 = (int)gsl_rng_uniform_int(g->rng, (unsigned long)population);
        drawn = true;
      }
      if (brood_has_parent(&b, p1) || brood_has_parent(&b, p2)) break;
      rc = offspring(g, p1, p2, &b, obj, e);
      drawn = false;
      t++;
      if (rc) break;
    }
    int judged = brood_judge(g, &b, obj, log, e); /* ends the batch */
    if (rc == ERR_OK) rc = judged;
  }
  brood_free(&b);
  return rc;
}

/* Whether labels a and b make the same partition: canonical form, groups
 * ordered by their smallest device. */
static bool labels_same(gcma *g, const int *a, const int *b) {
  int *ga = g->rb_groups, *gb = g->fixed;
  gcma_to_groups(g, a, ga);
  gcma_to_groups(g, b, gb);
  int ng = g->ng, k = g->k;
  for (int s = 0; s < ng; s++) {
    int t = b[ga[s * k]]; /* the group of b holding a's group s's first */
    if (memcmp(ga + s * k, gb + t * k, (size_t)k * sizeof *ga) != 0)
      return false;
  }
  return true;
}

static void labels_of_groups(gcma *g, const int *groups, int *label) {
  gcma_to_labels(g, groups, label);
}

static void labels_to_groups(gcma *g, const int *label, int *groups) {
  gcma_to_groups(g, label, groups);
}

const gcma_repr gcma_labels = {.of_groups = labels_of_groups,
                               .to_groups = labels_to_groups,
                               .breed = labels_breed, .same = labels_same};

int gcma_best(gcma *g, int k, int *groups, double *scores) {
  int n = g->n, got = 0, len = g->len;
  int *order = mem_alloc((size_t)g->pop * sizeof *order);
  for (int i = 0; i < g->pop; i++) order[i] = i;
  /* Insertion sort by score, ties by index: stable and deterministic. */
  for (int i = 1; i < g->pop; i++)
    for (int j = i; j > 0 && g->pscore[order[j]] < g->pscore[order[j - 1]];
         j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  int *picked = mem_alloc((size_t)(k > 0 ? k : 1) * sizeof *picked);
  for (int i = 0; i < g->pop && got < k; i++) {
    const int *ind = g->plabel + (size_t)order[i] * len;
    bool dup = false;
    for (int j = 0; j < got && !dup; j++)
      dup = g->repr->same(g, ind, g->plabel + (size_t)picked[j] * len);
    if (dup) continue;
    picked[got] = order[i];
    g->repr->to_groups(g, ind, groups + (size_t)got * n);
    if (scores) scores[got] = g->pscore[order[i]];
    got++;
  }
  free(picked);
  free(order);
  return got;
}

/* The method that searches with gain (schedule.h's names). */
static schedule_method_id method_of(gcma_gain gain) {
  switch (gain) {
    case GCMA_GAIN_PIPELINE: return SCHEDULE_GCMA;
    case GCMA_GAIN_CUT: return SCHEDULE_HYBRID;
  }
  assert(!"unknown gain");
  return SCHEDULE_GCMA;
}

/* ---- the best partitions kept between searches (gcma_memo) -------------- */

/* What an evolution reads besides the context's values (gcma_memo). */
typedef struct memo_key {
  const cost_ctx *c;
  const search_objective *asked;
  gcma_gain gain;
  int population, trials, by_site;
  uint64_t seed;
} memo_key;

struct gcma_memo {
  memo_key key;
  int k, got;     /* asked for, found (got < k: no more distinct ones) */
  int *groups;    /* got partitions, group-major; NULL: nothing kept */
};

gcma_memo *gcma_memo_new(void) { return mem_calloc(1, sizeof(gcma_memo)); }

static void memo_clear(gcma_memo *m) {
  free(m->groups);
  *m = (gcma_memo){0};
}

void gcma_memo_free(gcma_memo *m) {
  if (!m) return;
  memo_clear(m);
  free(m);
}

static memo_key key_of(const cost_ctx *c, gcma_gain gain,
                       const search_objective *asked, const search_opts *o,
                       int trials) {
  return (memo_key){
      .c = c, .asked = asked, .gain = gain, .trials = trials,
      .population = o->population > 0 ? o->population : SEARCH_POPULATION,
      .by_site = o->by_site, .seed = o->seed};
}

static bool key_same(const memo_key *a, const memo_key *b) {
  return a->c == b->c && a->asked == b->asked && a->gain == b->gain &&
         a->population == b->population && a->trials == b->trials &&
         a->by_site == b->by_site && a->seed == b->seed;
}

static void memo_keep(gcma_memo *m, const memo_key *key, int k, int got, int n,
                      const int *groups) {
  memo_clear(m);
  *m = (gcma_memo){.key = *key, .k = k, .got = got,
                   .groups = mem_alloc((size_t)got * n * sizeof *groups)};
  memcpy(m->groups, groups, (size_t)got * n * sizeof *groups);
}

int gcma_memo_take(const cost_ctx *c, gcma_gain gain,
                   const search_objective *asked, const search_opts *o,
                   int trials, int k, int *groups) {
  const gcma_memo *m = o->memo;
  memo_key key = key_of(c, gain, asked, o, trials);
  if (!m || !m->groups || !key_same(&m->key, &key) || k > m->k) return -1;
  int got = k < m->got ? k : m->got; /* gcma_best's first k of more */
  size_t n = (size_t)cost_ctx_replicas(c) * cost_ctx_stages(c);
  memcpy(groups, m->groups, (size_t)got * n * sizeof *groups);
  return got;
}

int gcma_best_of_search(const cost_ctx *c, gcma_gain gain,
                        const search_objective *asked,
                        const search_objective *obj, const search_opts *o,
                        int trials, int k, search_log *log, int *groups,
                        double *scores, err *e) {
  assert(k >= 1);
  memo_key key = key_of(c, gain, asked, o, trials);
  int n = cost_ctx_replicas(c) * cost_ctx_stages(c), got = -1;
  gcma *g = gcma_new(c, gain, o->seed);
  if (o->by_site) gcma_by_sites(g, o->by_site > 0);
  baseline_greedy_groups(c, groups); /* the population's seed */
  if (gcma_evolve(g, key.population, trials, groups, 1, obj, log, e) ==
      ERR_OK) {
    got = gcma_best(g, k, groups, scores);
    if (o->memo) memo_keep(o->memo, &key, k, got, n, groups);
  }
  gcma_free(g);
  return got;
}

/* ---- the method ---------------------------------------------------------- */

search_result *gcma_search(const cost_ctx *c, gcma_gain gain,
                           const search_objective *obj, const search_opts *o,
                           err *e) {
  search_dtfm *d = NULL;
  search_objective dtfm;
  const search_objective *asked = obj;
  obj = search_objective_or_dtfm(obj, c, &d, &dtfm);
  int trials = o->trials >= 0 ? o->trials : SEARCH_TRIALS;
  int population = o->population > 0 ? o->population : SEARCH_POPULATION;
  int k = !o->memo ? 1 : o->starts > 0 ? o->starts : SEARCH_SIM_STARTS;
  search_log log;
  search_log_init(&log, o, (long)population + trials);
  search_result *r = NULL;
  int *groups = mem_alloc((size_t)k * cost_ctx_replicas(c) *
                          cost_ctx_stages(c) * sizeof *groups);
  double *scores = mem_alloc((size_t)k * sizeof *scores);
  if (gcma_best_of_search(c, gain, asked, obj, o, trials, k, &log, groups,
                          scores, e) >= 0) {
    alloc *best = search_objective_realise(obj, c, groups);
    r = search_result_new(schedule_method_name(method_of(gain)), best, c);
    r->objective_s = scores[0];
    search_log_finish(&log, r);
  } else {
    free(log.best);
  }
  free(scores);
  free(groups);
  search_dtfm_free(d);
  return r;
}
