/* validate: the validation study of `geodes validate` — can DT-FM's
 * analytic cost model (and geodes's end-to-end predictor) be trusted to rank
 * placements? A sample of allocations (fixed placements, the schedulers'
 * best, perturbations of the best, seeded random ones) is scored, predicted
 * and simulated under each requested network model, and the verdict is a
 * set of rank statistics between score and simulated time. */
#ifndef ANALYSIS_VALIDATE_H
#define ANALYSIS_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/db.h"
#include "analysis/stats.h"
#include "schedules/search.h"
#include "sim/net.h"
#include "traces/scenario.h"

#define VALIDATE_DEFAULT_SAMPLES 40
/* Past this many devices the default sample shrinks to keep the
 * simulations' devices: VALIDATE_DEFAULT_SAMPLES x this / devices, at
 * least 2 (volunteer-10k: 4 samples, each a simulation of seconds). */
#define VALIDATE_FULL_DEVICES 1024

/* The default sample of a scenario of n devices (above). */
int validate_default_samples(int ndevices);
#define VALIDATE_WORST 5  /* discordant pairs kept per network model */
/* The network models a validation can cover: all of them, and the mask of
 * validate_opts.networks that asks for every one. */
#define VALIDATE_NETWORKS TRANSPORT_NMODELS
#define VALIDATE_ALL_NETWORKS ((1u << TRANSPORT_NMODELS) - 1)

/* A placement simulated already (`geodes run`'s placements): its
 * allocation and eval_alloc's row of it under each network model (rows
 * indexed by transport_model), under validate_opts.transport. Borrowed. */
typedef struct validate_known {
  const struct alloc *a;
  const db_result *rows;
} validate_known;

typedef struct validate_opts {
  int samples;          /* allocations in the sample (>= 2; less: the
                           scenario's validate_default_samples) */
  unsigned networks;    /* bit (1u << transport_model) per model to simulate */
  transport_options transport; /* TCP options; the model is each verdict's */
  /* A user's cost model (costcmd.h): every sample scored by it in one
   * session, NULL: none; its per-candidate timeout (<= 0: the default). */
  const char *cost_cmd;
  double cost_timeout_s;
  /* An allocation the sample starts with, of kind "alloc" (a user's file:
   * validate --alloc); NULL: none. Borrowed. */
  const struct alloc *include;
  /* A sample equal to one of these (its devices, in order) takes that
   * row under each model instead of a simulation: the same row, eval_alloc
   * being a function of the scenario, the allocation and the transport.
   * NULL: none. */
  const validate_known *known;
  int nknown;
  /* placed[m] (indexed by schedule_method_id): method m's placement as
   * sim_place gives it, which the sample takes instead of searching again,
   * or NULL; placed NULL: none. Borrowed. */
  const struct alloc *const *placed;
  /* Called after each simulation (done of total); may be NULL. */
  void (*progress)(void *ctx, int done, int total);
  /* Called as the draw's searches (greedy, gcma, sim) judge candidates,
   * with progress_ctx (search_opts.progress); may be NULL. */
  search_progress_fn searching;
  void *progress_ctx;
} validate_opts;

/* How one model's values rank and predict the simulated times. */
typedef struct validate_model {
  double spearman, kendall;  /* rank correlation with the simulated time */
  double mape;               /* |value - simulated| / simulated, percent */
  double regret;             /* simulated time of its best / best - 1 */
} validate_model;

/* The verdict under one network model. */
typedef struct validate_verdict {
  transport_model network;
  size_t samples;
  double spearman;   /* rank correlation score <-> simulated time */
  double kendall;    /* tau-b */
  double mape;       /* predictor vs simulation, percent */
  double regret;     /* simulated time of the best-scored / best - 1 */
  size_t discordant; /* pairs the score orders wrongly */
  size_t pairs;      /* n (n - 1) / 2 */
  size_t nworst;
  stats_pair worst[VALIDATE_WORST];  /* indices into the sample */
  validate_model score_model;  /* DT-FM's score (mape of a score that is
                                  no time: beside the others only) */
  validate_model predictor;    /* the end-to-end predictor */
  validate_model cost_cmd;     /* the plugged model (has_cost_cmd) */
  bool has_cost_cmd;
} validate_verdict;

typedef struct validate_report validate_report;

/* Runs the study on s (workload and seed already applied; the sample is
 * drawn from mt19937(s->seed)). NULL and e filled on failure. */
validate_report *validate_run(const scenario *s, const validate_opts *o,
                              err *e);
void validate_report_free(validate_report *r);  /* NULL ok */

/* Accessors. Sample i's kind ("dtfm-identity", "gcma", "perturbed-3",
 * "random", ...), its row under verdict v's network (a db_result with the
 * score, prediction, simulated time and allocation; borrowed). */
int validate_nsamples(const validate_report *r);
int validate_nverdicts(const validate_report *r);
const validate_verdict *validate_verdict_at(const validate_report *r, int v);
const char *validate_kind(const validate_report *r, int i);
const db_result *validate_row(const validate_report *r, int v, int i);

/* The plugged model's prediction of sample i (seconds), NAN without one. */
double validate_cost_cmd_s(const validate_report *r, int i);

/* Stores every (sample, network) row under run id (study "validate"; the
 * point key holds the scenario, workload, network and allocation, so the
 * same point is stored once whatever study found it). */
int validate_store(db *d, int64_t run, const validate_report *r, err *e);

/* The same rows inside the caller's transaction (cli_db_record's rows:
 * r is a validate_report). */
int validate_store_rows(db *d, int64_t run, const void *r, err *e);

#endif
