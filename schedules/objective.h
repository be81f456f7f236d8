/* objective: what a search can minimise beyond DT-FM's communication-only
 * score, with the constraints every search keeps:
 *   - `predicted`: the end-to-end predictor (models/predict), which counts
 *     compute, the bubble, communication and synchronisation, so that a
 *     search sees a slow GPU as the stage's pace;
 *   - any allocation scorer the caller brings (a user's cost model, the
 *     simulation), given the allocation's layers per stage;
 *   - memory: an allocation with a stage that does not fit a device that
 *     runs it scores +inf in every objective made here (a constraint, not
 *     an error: the search goes on around it).
 * A partition is judged as cost_realise turns it into pipelines (the TSP
 * order of its groups and the bottleneck pairings: what GCMA's result
 * becomes), and an allocation's layers per stage are the workload's (even,
 * or its explicit list) or, when asked, partition_balanced's for that
 * allocation.
 * Invariant: an objective borrows the scenario and the cost context for
 * its life and owns its scratch; scoring is a pure function of the
 * candidate (one objective per thread). */
#ifndef SCHEDULES_OBJECTIVE_H
#define SCHEDULES_OBJECTIVE_H

#include <stdbool.h>

#include "base/names.h"
#include "models/cost.h"
#include "models/spec.h"
#include "models/transport.h"
#include "schedules/search.h"
#include "traces/scenario.h"

/* The objectives a search can be told to use, X(ID, "name"): DT-FM's
 * communication-only score, the end-to-end predictor, a caller's scorer
 * (the front end's --cost-cmd), and the dollars per sample (the
 * predictor's time at the devices' GPU-hours, and the egress of its bytes:
 * models/bill.h), which samples-per-usd reports the other way up. */
#define OBJECTIVE_KIND_MAP(X)          \
  X(DTFM, "dtfm")                      \
  X(PREDICTED, "predicted")            \
  X(COST_CMD, "cost-cmd")              \
  X(USD_PER_SAMPLE, "usd-per-sample")  \
  X(SAMPLES_PER_USD, "samples-per-usd")

#define OBJECTIVE_KIND_ID(id, name) OBJECTIVE_##id,
typedef enum objective_kind {
  OBJECTIVE_KIND_MAP(OBJECTIVE_KIND_ID)
} objective_kind;
#undef OBJECTIVE_KIND_ID
enum { OBJECTIVE_NKINDS = 0 OBJECTIVE_KIND_MAP(NAMES_COUNT_ROW) };

/* Their names, NULL-terminated, in the map's order. */
extern const char *const objective_kind_names[];

/* Whether kind counts dollars (usd-per-sample, samples-per-usd). */
bool objective_kind_dollars(objective_kind kind);

/* A search's score under kind as kind's name states it: samples per USD
 * for samples-per-usd (the inverse of the USD per sample it minimises),
 * else the score itself (seconds, or USD per sample). */
double objective_kind_value(objective_kind kind, double score);

/* The unit of objective_kind_value's number: "s", "USD per sample" or
 * "samples per USD". */
const char *objective_kind_unit(objective_kind kind);

typedef struct objective objective;

/* A scorer of an allocation a whose workload (with a's layers per stage)
 * is w: seconds, or NAN with e filled on failure (the search then stops). */
typedef double (*objective_alloc_fn)(void *ctx, const alloc *a,
                                     const spec_workload *w, err *e);

/* A scorer of n allocations at once: a[i], whose layers per stage are
 * layers[i] (D_pp entries), into out[i] -- each what objective_alloc_fn
 * would give it alone, judged in that order. ERR_OK, or the error (e
 * filled; out then unusable; the search stops). */
typedef int (*objective_allocs_fn)(void *ctx, int n, const alloc *const *a,
                                   const int *const *layers, double *out,
                                   err *e);

/* A stream of such a batch: submit hands allocation a over with its layers
 * per stage (D_pp entries; both copied) and may start judging it; collect
 * gives the scores of the n allocations submitted since the last collect,
 * in that order, each what objective_alloc_fn would give it alone. ERR_OK,
 * or the error (e filled; the search stops; collect still ends the batch,
 * its n then counting the submit that failed). */
typedef int (*objective_submit_fn)(void *ctx, const alloc *a,
                                   const int *layers, err *e);
typedef int (*objective_collect_fn)(void *ctx, int n, double *out, err *e);

/* An objective environment for s (workload resolved here) and its cost
 * context c (both borrowed), the transport the predictor models (NULL:
 * defaults) and whether layers are balanced per allocation (also when the
 * scenario's workload asks for it: balanced_layers). NULL and e
 * filled when the workload or a GPU does not resolve. */
objective *objective_new(const scenario *s, const cost_ctx *c,
                         const transport_options *t, bool balanced, err *e);
void objective_free(objective *o);  /* NULL is fine */

/* The layers per stage of allocation a into layers (D_pp entries): the
 * workload's, or balanced for a. ERR_OK, or ERR_MEMORY (balanced: no
 * partition fits). */
int objective_layers(objective *o, const alloc *a, int *layers, err *e);

/* Whether every stage of a, with its layers per stage, fits every device
 * that runs it. */
bool objective_fits(objective *o, const alloc *a);

/* The predictor as an objective ("predicted"): predict_iteration_with's
 * iteration_s of a with its layers; +inf when it does not fit. */
search_objective objective_predicted(objective *o);

/* fn (borrowing ctx) as an objective called name: +inf for an allocation
 * that does not fit, else fn. One custom scorer per objective: a second
 * call replaces the first. */
search_objective objective_custom(objective *o, const char *name,
                                  objective_alloc_fn fn, void *ctx);

/* objective_custom with a batch scorer too: a search that judges many
 * partitions at once (search_objective_partitions) sends every allocation
 * of them that fits to many in one call, in the order fn would see them
 * one at a time, so the scores are fn's (a scorer that is a pure function
 * of its candidate gives the same search). */
search_objective objective_custom_batch(objective *o, const char *name,
                                        objective_alloc_fn fn,
                                        objective_allocs_fn many, void *ctx);

/* objective_custom with a stream too: a search that makes partitions one
 * by one and judges them together (search_objective_submit, then
 * search_objective_collect) hands each allocation of them that fits to
 * submit as soon as the partition is made, in the order fn would see them
 * one at a time, and takes their scores from collect; so the scorer (a
 * user's model in another process) works while the search makes the next
 * partition, and the scores are fn's. */
search_objective objective_custom_stream(objective *o, const char *name,
                                         objective_alloc_fn fn,
                                         objective_submit_fn submit,
                                         objective_collect_fn collect,
                                         void *ctx);

/* The predictor's objective in dollars (objective_predicted's time t of an
 * allocation becomes (usd_per_s x t + its egress in USD) / batch, USD per
 * sample) when cost, and a budget when max_usd_per_hour > 0: an
 * allocation whose devices and egress cost more per hour scores +inf (a
 * constraint, as memory). usd_per_s: what every device of the scenario
 * costs per second together (bill_compute_usd_per_s), finite. */
void objective_price(objective *o, bool cost, double usd_per_s,
                     double max_usd_per_hour);

/* The objective of kind on o: DT-FM's score, or the predictor's time
 * (objective_price: in dollars for the dollar kinds, named after them;
 * every device priced as the scenario's, bill_compute_usd_per_s) under a
 * budget of max_usd_per_hour (0: none). ERR_OK, or ERR_CONFIG for
 * cost-cmd: a model the caller runs (objective_custom_stream). */
int objective_of_kind(objective *o, objective_kind kind,
                      double max_usd_per_hour, search_objective *obj,
                      err *e);

/* ERR_OK when a search's best under o (its score best) is finite, else
 * ERR_CONFIG: nothing method found fits o's budget (the message states
 * what the scenario's devices alone cost per hour). */
int objective_within_budget(const objective *o, double best,
                            const char *method, err *e);

/* DT-FM's score restricted to what fits: cost_partition / cost_alloc, +inf
 * for a candidate whose realised allocation does not fit. When every
 * device holds the largest stage whatever its place (checked once, here),
 * no candidate is realised for the check. */
search_objective objective_dtfm(objective *o);

/* Candidates refused for memory so far, by any objective of o. */
long objective_refused(const objective *o);

#endif
