/* search: what every allocation search shares — the objective it minimises
 * (a function pointer and its context, so schedules/ never calls up into
 * sim/), its options, and the record it returns (best allocation, score,
 * convergence: best score after each candidate).
 * Invariant: a search_log's best[] is non-increasing and has one entry per
 * candidate scored, in the order they were scored; the same options (seed
 * included) give the same record, bit for bit. */
#ifndef SCHEDULES_SEARCH_H
#define SCHEDULES_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "models/alloc.h"
#include "models/cost.h"

/* An objective: lower is better, in seconds. Either scorer may be NULL when
 * the objective cannot judge that form. A scorer returns NAN and fills e on
 * failure (e.g. a simulation that cannot run); the search then stops. */
typedef struct search_objective {
  const char *name;  /* "dtfm-score", "simulated", ... (borrowed) */
  /* A partition: D_pp groups of D_dp devices, group-major. */
  double (*partition)(void *ctx, const int *groups, err *e);
  /* An explicit allocation (order and pairing fixed). */
  double (*alloc)(void *ctx, const alloc *a, err *e);
  /* The allocation a partition scored by `partition` stands for (owned by
     the caller); NULL: cost_realise's, the cost model's pipelines. */
  alloc *(*realise)(void *ctx, const int *groups);
  /* Optional: m partitions at once (groups: m of them, one after another)
     into out[0 .. m), each exactly what `partition` gives it, judged in
     that order; ERR_OK or the error (e filled; out then unusable). For a
     scorer that gains from a batch (a user's model over a pipe). */
  int (*partitions)(void *ctx, int m, const int *groups, double *out, err *e);
  /* Optional, both or neither: `partitions` in a stream. submit hands one
     partition over (copied; its score not yet known) so that the scorer
     can work on it while the search makes the next; collect gives the
     scores of the m partitions submitted since the last collect, in the
     order submitted, each exactly what `partition` gives it. ERR_OK or the
     error (e filled; collect still ends the batch). */
  int (*submit)(void *ctx, const int *groups, err *e);
  int (*collect)(void *ctx, int m, double *out, err *e);
  void *ctx;  /* borrowed */
} search_objective;

/* Called after every candidate: done of total candidates, best so far. */
typedef void (*search_progress_fn)(void *ctx, long done, long total,
                                   double best_s);

typedef struct search_opts {
  int population;    /* GCMA population (DT-FM: 100) */
  int trials;        /* GCMA offspring, random-search samples, or simulated
                        candidates for `sim`; < 0 = the method's default */
  uint64_t seed;     /* every random choice draws from mt19937(seed) */
  int starts;        /* `sim`: best cost-model candidates to start from */
  search_progress_fn progress;  /* may be NULL */
  void *progress_ctx;           /* borrowed */
  int by_site;       /* GCMA: 1 breeds site counts, -1 labels, 0 as
                        gcma_new chooses (GCMA_SITES_MIN_REPLICAS) */
  int batch;         /* GCMA: offspring judged together at most (0:
                        SEARCH_BATCH; 1: each before the next is made);
                        random-search: samples judged together; the
                        result is the same whatever it is */
  struct gcma_memo *memo; /* may be NULL: GCMA's best partitions kept
                             from gcma for sim (gcma.h; borrowed) */
} search_opts;

#define SEARCH_POPULATION 100
#define SEARCH_TRIALS 4900     /* DT-FM: 100 + 4900 = 5000 candidates */
#define SEARCH_SIM_TRIALS 200  /* simulations are milliseconds each */
/* ... up to this many devices; past it a simulation takes about its
 * devices' time, and `sim` spends the same product of simulations and
 * devices: SEARCH_SIM_TRIALS x this / devices (volunteer-10k: 10). */
#define SEARCH_SIM_FULL_DEVICES 512
#define SEARCH_SIM_STARTS 4
#define SEARCH_BATCH 32        /* offspring a GCMA batch holds at most */

/* DT-FM's settings: population 100, default trials, seed 0, no progress. */
void search_opts_default(search_opts *o);

/* `sim`'s default simulations for ndevices (SEARCH_SIM_FULL_DEVICES). */
long search_sim_trials(int ndevices);

/* The outcome of a search. */
typedef struct search_result {
  char method[32];      /* the method's name */
  alloc *best;          /* owned; the best allocation found */
  cost_parts parts;     /* its DT-FM score (cost_alloc), parts included */
  double objective_s;   /* its value under the search's objective */
  double start_s;       /* `sim`: objective of the cost model's choice (the
                           start); NAN for other methods */
  long candidates;      /* candidates scored */
  double *convergence;  /* candidates entries: best objective so far */
} search_result;

void search_result_free(search_result *r);  /* NULL is fine */

/* r's convergence as CSV on f (schedule --convergence): the header
 * candidate,best_score_s, then each candidate's number from 1 and the best
 * score after it (%.9g). ERR_OK, or ERR_IO when a write failed. */
int search_convergence_write(const search_result *r, FILE *f);

/* The DT-FM score as an objective: both scorers call the cost model
 * (cost_partition, cost_alloc). A search_dtfm borrows c and owns a scratch;
 * search_dtfm_objective(d) borrows d. */
typedef struct search_dtfm search_dtfm;
search_dtfm *search_dtfm_new(const cost_ctx *c);
void search_dtfm_free(search_dtfm *d);  /* NULL is fine */
search_objective search_dtfm_objective(search_dtfm *d);

/* obj when given; when obj is NULL, the DT-FM score of c: a new search_dtfm
 * goes to *own (the caller frees it with search_dtfm_free; NULL when obj was
 * given) and its objective to *buf, which the result points to. */
const search_objective *search_objective_or_dtfm(const search_objective *obj,
                                                 const cost_ctx *c,
                                                 search_dtfm **own,
                                                 search_objective *buf);

/* The allocation obj's partition `groups` stands for (owned by the
 * caller): obj->realise's, or cost_realise's when it has none. */
alloc *search_objective_realise(const search_objective *obj, const cost_ctx *c,
                                const int *groups);

/* obj's scores of m partitions of n devices each (groups: one after
 * another) into out: its `partitions` when it has one, else `partition`
 * on each in order. ERR_OK, or the first error (e filled; a scorer's NAN
 * without an error is ERR_RANGE). */
int search_objective_partitions(const search_objective *obj, int m,
                                const int *groups, int n, double *out,
                                err *e);

/* A batch in a stream: obj's submit of partition groups when it has one
 * (ERR_OK or its error), else nothing (the partition is judged by
 * search_objective_collect). */
int search_objective_submit(const search_objective *obj, const int *groups,
                            err *e);

/* The scores of the m partitions (groups: one after another, n devices
 * each) submitted with search_objective_submit since the last collect,
 * into out: obj's collect when it has one, else
 * search_objective_partitions of groups. ERR_OK or the first error, as
 * search_objective_partitions. */
int search_objective_collect(const search_objective *obj, int m,
                             const int *groups, int n, double *out, err *e);

/* The running record of a search: convergence and progress. Internal to
 * schedules/ but shared by its searches. */
typedef struct search_log {
  const search_opts *opts;  /* borrowed */
  long total;               /* candidates planned, for the progress bar */
  long n, cap;
  double *best;             /* best[i]: best objective after candidate i */
} search_log;

void search_log_init(search_log *l, const search_opts *o, long total);
/* Records one candidate's objective value (NaN counts as +inf) and reports
 * progress; returns true when it is a new best. */
bool search_log_push(search_log *l, double value_s);
double search_log_best(const search_log *l);  /* INFINITY when empty */
/* Moves the log into r (convergence, candidates); l is emptied. */
void search_log_finish(search_log *l, search_result *r);

/* A new result of method name owning best (cost parts filled from c). */
search_result *search_result_new(const char *name, alloc *best,
                                 const cost_ctx *c);

#endif
