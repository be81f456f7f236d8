/* shape: the search of the parallel shape and the device subset, not only
 * the placement (`geodes schedule --shape auto`): stages x replicas x
 * micro-batch x which devices work (the others idle) x layer split x
 * placement, under the memory constraint, for the most samples per second
 * (the batch per replica kept, so the global batch follows the replicas)
 * or the shortest iteration at the scenario's global batch. The predictor
 * judges every configuration; the simulation, a function pointer (so
 * schedules/ never calls up into sim/), decides among the predictor's best
 * (as `--method sim` does).
 * A subset is how many devices of each site work: a site's devices share
 * one GPU type, NIC and links (per-device overrides aside), so which ones
 * matters little and the first ones of the site are taken. Up to
 * SHAPE_MAX_SUBSETS count vectors all are tried; past it, the family of
 * vectors where each chosen site gives the same count (its whole site when
 * smaller), over every set of sites up to SHAPE_MAX_SITE_SETS sites (past
 * it, every site). A
 * placement is the better, by the predictor, of the greedy pipelines and
 * the greedy data-parallel groups (schedules/baseline.h); the split is
 * partition_balanced's, and every split when a shape has at most
 * SHAPE_MAX_SPLITS of them.
 * Invariant: the same scenario and options give the same result, bit for
 * bit (fixed enumeration order, ties kept by the first found). */
#ifndef SCHEDULES_SHAPE_H
#define SCHEDULES_SHAPE_H

#include <stdbool.h>

#include "base/err.h"
#include "base/names.h"
#include "models/alloc.h"
#include "models/diloco.h"
#include "models/transport.h"
#include "traces/scenario.h"

#define SHAPE_MAX_SUBSETS 4096 /* count vectors enumerated whole */
#define SHAPE_MAX_SITE_SETS 12 /* sites whose sets the family walks */
#define SHAPE_MAX_SPLITS 64    /* splits of one shape enumerated whole */
#define SHAPE_SIMULATE 8       /* the predictor's best simulated */
#define SHAPE_MAX_MICRO 8      /* micro-batch candidates */

/* What the search maximises, X(ID, "name"). */
#define SHAPE_GOAL_MAP(X)         \
  X(THROUGHPUT, "throughput")     \
  X(ITERATION, "iteration")
#define SHAPE_GOAL_ID(id, name) SHAPE_##id,
typedef enum shape_goal { SHAPE_GOAL_MAP(SHAPE_GOAL_ID) } shape_goal;
#undef SHAPE_GOAL_ID
enum { SHAPE_NGOALS = 0 SHAPE_GOAL_MAP(NAMES_COUNT_ROW) };
extern const char *const shape_goal_names[]; /* NULL-terminated */

/* The simulation of view (a scenario over the configuration's devices,
 * its shape, split and dp algorithm in its workload) with allocation a
 * (view's device numbers): seconds per iteration, NAN and e filled on
 * failure (the search then stops). */
typedef double (*shape_sim_fn)(void *ctx, const scenario *view,
                               const alloc *a, err *e);

typedef struct shape_opts {
  shape_goal goal;
  int simulate;            /* the predictor's best simulated (0: the
                              predictor decides) */
  int micro[SHAPE_MAX_MICRO]; /* micro-batch candidates; nmicro 0: the
                              workload's, half and double where they divide */
  int nmicro;
  int stages, replicas;    /* > 0: fixed */
  bool diloco;             /* also DiLoCo and streaming DiLoCo at H */
  diloco_plan plan;        /* their H, F and tau (0: the workload's; F:
                              else the smallest >= 2 that divides the
                              layers and H) */
  transport_options t;     /* what the predictor models */
  shape_sim_fn sim;        /* NULL: the predictor decides */
  void *sim_ctx;           /* borrowed */
  /* After each simulation: done of the total planned (NULL: none). */
  void (*progress)(void *ctx, long done, long total);
  void *progress_ctx;      /* borrowed */
} shape_opts;

/* Defaults: throughput, SHAPE_SIMULATE, the workload's micro-batches, no
 * shape fixed, no DiLoCo, default transport, no simulation. */
void shape_opts_default(shape_opts *o);

/* One evaluated configuration. */
typedef struct shape_config {
  int stages, replicas, micro_batch, batch;
  const char *dp_algo;     /* a static name of workload_dp_algos */
  int fragments;           /* streaming-diloco's F, else 0 */
  int ndev;                /* devices working (stages x replicas) */
  int *keep;               /* [ndev] the parent's devices, increasing */
  int *layers;             /* [stages] layers per stage */
  alloc *a;                /* on the parent's device numbers */
  double predicted_s;      /* predictor's seconds per iteration */
  double error_bound;      /* how far off it may be (predict_result's) */
  double simulated_s;      /* NAN when not simulated */
  double samples_per_s;    /* batch / the deciding time */
} shape_config;

typedef struct shape_result {
  shape_config *all;       /* every configuration that fits, in
                              enumeration order (owned) */
  long nall;
  long best;               /* index into all */
  long *per_shape;         /* the best of each (stages, replicas,
                              dp_algo), in enumeration order: indices */
  int nshapes;
  long considered;         /* placements judged, fitting or not (each
                              configuration has up to two) */
  long pruned_memory;      /* ... that do not fit in memory */
  long pruned_predictor;   /* fitting, not simulated */
  long simulated_inexact;  /* simulated because the predictor leaves out
                              more than its tolerance there and its bound
                              could not rule them out (in simulated) */
  long simulated;
  int nsubsets;            /* count vectors tried */
  bool all_subsets;        /* every count vector (not the family) */
} shape_result;

/* Searches s (its workload must resolve) under o. Returns ERR_OK and fills
 * r (free with shape_result_free), or ERR_MEMORY when nothing fits, naming
 * the smallest stage that does not, ERR_CONFIG when no shape divides the
 * batch, or the simulation's error (r is then empty). */
int shape_search(const scenario *s, const shape_opts *o, shape_result *r,
                 err *e);

void shape_result_free(shape_result *r);

/* For a site of s where r's best leaves devices idle: the index in r->all
 * of the best configuration (by the deciding time) that works more of that
 * site's devices, or -1 when none fits. */
long shape_idle_alternative(const scenario *s, const shape_result *r,
                            int site);

/* The view of s over devices keep[0 .. n) (increasing) with stages x
 * replicas = n, batch, micro-batch m, dp algorithm algo (static) and layer
 * split layers (borrowed; NULL: the even split): a scenario_subset view
 * (free with scenario_subset_free). */
scenario *shape_view(const scenario *s, const int *keep, int n, int stages,
                     int replicas, int batch, int m, const char *algo,
                     const int *layers);

/* Scores of c under goal: lower is better (seconds per sample for
 * throughput, seconds per iteration for iteration) of time t. */
double shape_score(shape_goal goal, const shape_config *c, double t);

#endif
