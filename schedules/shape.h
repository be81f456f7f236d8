/* shape: the search of the parallel shape and the device subset, not only
 * the placement (`geodes schedule --shape auto`): stages x replicas x
 * micro-batch x which devices work (the others idle) x layer split x
 * placement, under the memory constraint, for the most samples per second
 * (at the batch per replica kept, so the global batch follows the
 * replicas, or at the scenario's global batch) or the shortest iteration
 * at the scenario's global batch. The predictor judges every
 * configuration; the simulation, a function pointer (so schedules/ never
 * calls up into sim/), decides among the predictor's best (as `--method
 * sim` does). The throughput search simulates what the iteration search
 * would too, so its best has at least the samples/s of the iteration
 * search's best.
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
/* Values of the family's u tried one by one; past it, a grid (1, 2, 3, 4,
 * 6, 8, 12, ... and the largest) and then, around the grid's best, the
 * midpoints towards its neighbours until they are adjacent: about
 * 2 log2(most) + 2 log2(gap) subsets instead of most (volunteer-10k: 20 of
 * 145; every other built-in has at most 64 devices a site). A refinement,
 * not an enumeration: it assumes the best u lies near the grid's best. */
#define SHAPE_FAMILY_FULL 64
/* Every split (SHAPE_MAX_SPLITS) only for shapes of at most this many
 * devices; past it partition_balanced's alone, as past SHAPE_MAX_SPLITS
 * (each split is a prediction over every device). */
#define SHAPE_SPLIT_DEVICES 1024
/* The devices the decision's simulations may cover together by default
 * (shape_opts.simulate_devices): the predictor's best is always simulated,
 * then its next best and each shape's best, by prediction, while they fit
 * (a simulation costs about its devices; the built-ins use a tenth of it;
 * at volunteer-10k, four simulations of every device). */
#define SHAPE_SIMULATE_DEVICES 40000

/* What the search maximises, X(ID, "name"): samples per second, the
 * shortest iteration, or the samples per dollar (usd-per-sample minimises
 * its inverse: the same order); the dollar goals keep the batch per
 * replica, as throughput does. */
#define SHAPE_GOAL_MAP(X)              \
  X(THROUGHPUT, "throughput")          \
  X(ITERATION, "iteration")            \
  X(USD_PER_SAMPLE, "usd-per-sample")  \
  X(SAMPLES_PER_USD, "samples-per-usd")
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
  long simulate_devices;   /* their devices together at most, and each
                              shape's best's (SHAPE_SIMULATE_DEVICES; 0: no
                              bound) */
  int micro[SHAPE_MAX_MICRO]; /* micro-batch candidates; nmicro 0: the
                              workload's, half and double where they divide */
  int nmicro;
  int stages, replicas;    /* > 0: fixed */
  bool diloco;             /* also DiLoCo and streaming DiLoCo at H */
  diloco_plan plan;        /* their H, F and tau (0: the workload's; F:
                              else the smallest >= 2 that divides the
                              layers and H) */
  transport_options t;     /* what the predictor models */
  bool price;              /* price each configuration (models/bill.h): its
                              devices' GPU-hours and its egress */
  double max_usd_per_hour; /* > 0: a budget; a configuration that costs
                              more per hour is never the best */
  shape_sim_fn sim;        /* NULL: the predictor decides */
  void *sim_ctx;           /* borrowed */
  /* Called after each subset and each simulation with the steps done and
   * planned (subsets, then simulations; the plan an estimate past
   * SHAPE_FAMILY_FULL, done = total at the end); may be NULL. */
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
  double usd_per_s;        /* its devices' GPU-hours per second (NAN: a
                              site not priced; 0 without price) */
  double egress_usd;       /* one iteration's egress, closed form (a pair
                              not priced adds nothing) */
} shape_config;

typedef struct shape_result {
  shape_config *all;       /* every configuration that fits, in
                              enumeration order (owned) */
  long nall;
  long best;               /* index into all */
  long fastest;            /* the most samples/s of those that count,
                              within the budget or not */
  long over_budget;        /* of those that count, over the budget */
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

/* The shape a search is given (stages, replicas; <= 0: searched) and, for
 * a search of DiLoCo too (plan: its knobs' H and F; NULL: none), its
 * fragments, against s's devices and layers (the workload's, else its
 * model's depth): ERR_OK, or ERR_CONFIG naming the field (stages, replicas
 * or fragments) in a message led by the options ("--stages 11: ..."). */
int shape_check_given(const scenario *s, long stages, long replicas,
                      const diloco_plan *plan, err *e);

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

/* The devices of site k of s that c works. */
int shape_config_at_site(const scenario *s, const shape_config *c, int k);

/* The devices of s that c leaves idle, increasing, into idle (room for
 * s->ndevices); their count. */
int shape_config_idle(const scenario *s, const shape_config *c, int *idle);

/* The view of s over devices keep[0 .. n) (increasing) with stages x
 * replicas = n, batch, micro-batch m, dp algorithm algo (static) and layer
 * split layers (borrowed; NULL: the even split): a scenario_subset view
 * (free with scenario_subset_free). */
scenario *shape_view(const scenario *s, const int *keep, int n, int stages,
                     int replicas, int batch, int m, const char *algo,
                     const int *layers);

/* The view configuration c of a search of s under o runs on: shape_view
 * of its devices, shape, batch, micro-batch, dp algorithm and split, with
 * o's DiLoCo plan (free with scenario_subset_free). What the search
 * simulates, and what an allocation file of c states. */
scenario *shape_config_view(const scenario *s, const shape_opts *o,
                            const shape_config *c);

/* c's allocation on the device numbers of its view (shape_view over
 * c->keep): device k of the view is c->keep[k] of the parent. The caller
 * frees it (alloc_free). */
alloc *shape_config_alloc(const shape_config *c);

/* Scores of c under goal: lower is better (seconds per sample for
 * throughput, seconds per iteration for iteration, USD per sample for the
 * dollar goals) of time t. */
double shape_score(shape_goal goal, const shape_config *c, double t);

/* The time that decides for c: simulated when it was, else predicted. */
double shape_decided_s(const shape_config *c);

/* What c costs per hour (its devices and its egress) at time t per
 * iteration; and per sample. */
double shape_usd_per_hour(const shape_config *c, double t);
double shape_usd_per_sample(const shape_config *c, double t);

#endif
