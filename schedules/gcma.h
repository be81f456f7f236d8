/* gcma: DT-FM's scheduler — a genetic algorithm over balanced partitions
 * (five-point crossover with balance repair, cyclic-partitioning local search,
 * replacement of the worse parent; plus a rebuild mutation that re-forms one
 * group to pair cheaply with its pipeline neighbour, see gcma.c), then
 * partition -> pipelines by the cost model (TSP order of the groups,
 * bottleneck pairing between them).
 * Invariant: every partition the state holds is balanced — D_pp groups of
 * exactly D_dp devices — and every random choice comes from one mt19937
 * seeded with the run's seed, so a seed reproduces a run exactly. */
#ifndef SCHEDULES_GCMA_H
#define SCHEDULES_GCMA_H

#include <stdint.h>

#include "models/cost.h"
#include "schedules/search.h"

/* The gain the local search ranks moves by. */
typedef enum gcma_gain {
  GCMA_GAIN_PIPELINE, /* `gcma`: DT-FM's pipeline-aware gain */
  GCMA_GAIN_CUT       /* `hybrid`: the conventional cut-based gain */
} gcma_gain;

typedef struct gcma gcma;

/* From this many replicas (D_dp) on, gcma_new breeds site counts instead
 * of labels (gcma_sites.c) when the context has no device-pair overrides
 * and its sites hold GCMA_SITES_MIN_PER_SITE devices or more on average:
 * the operators then cost O(D_pp x sites^2), not O(D_dp^2) and more. Every
 * built-in but volunteer-10k has fewer replicas. */
#define GCMA_SITES_MIN_REPLICAS 65
#define GCMA_SITES_MIN_PER_SITE 4

/* A GCMA state over c's devices (borrowed), seeded with seed. A partition
 * here is a label per device: label[d] = its group, 0 .. D_pp-1. */
gcma *gcma_new(const cost_ctx *c, gcma_gain gain, uint64_t seed);
void gcma_free(gcma *g);  /* NULL is fine */

/* Breeds site counts (by_sites) or labels from the next gcma_evolve on;
 * whether g now does as asked (false: counts asked of a context with
 * overrides, which keeps labels). The operators below work on labels
 * either way. */
bool gcma_by_sites(gcma *g, bool by_sites);

/* Five-point crossover: child = p2 with the groups of five random devices
 * taken from p1 (p1's labels first renamed to overlap p2's most), then
 * repaired to balance. p1, p2 balanced; child may alias neither. */
void gcma_crossover(gcma *g, const int *p1, const int *p2, int *child);

/* Cyclic-partitioning local search on label (balanced in, balanced out):
 * cycles of moves S0 -> S1 -> ... -> S0 chosen by the gain, each cycle cut
 * at its best prefix and kept only when its summed gain is positive. */
void gcma_local_search(gcma *g, int *label);

/* Rebuild mutation: in the pipeline order of label's groups (the cost
 * model's TSP), re-forms one group of boundary `boundary` (side 0: the
 * earlier group, 1: the later; < 0: drawn at random) from the devices with
 * the cheapest pipeline edges to its neighbour's members. Balanced in,
 * balanced out. */
void gcma_rebuild(gcma *g, int *label, int boundary, int side);

/* Runs the whole search: a population of the nseeds partitions in seeds
 * (group-major, nseeds * D_pp * D_dp ints; may be NULL when nseeds = 0)
 * completed by random ones, then trials offspring; each candidate scored
 * by obj (search_objective_partitions: obj->partition must not be NULL)
 * and logged in log. Candidates go to obj in batches -- the population at
 * once, then up to log's opts->batch offspring (SEARCH_BATCH when 0) --
 * with the same candidates, in the same order, and the same result as
 * one at a time (batch 1). Returns ERR_OK, or the scorer's error. */
int gcma_evolve(gcma *g, int population, int trials, const int *seeds,
                int nseeds, const search_objective *obj, search_log *log,
                err *e);

/* After gcma_evolve: the k best distinct partitions (by score, best first)
 * written group-major into groups (k * D_pp * D_dp ints), their scores in
 * scores (may be NULL). Returns how many were written (<= k). */
int gcma_best(gcma *g, int k, int *groups, double *scores);

/* Labels <-> group-major partition (devices of a group in index order). */
void gcma_to_groups(const gcma *g, const int *label, int *groups);
void gcma_to_labels(const gcma *g, const int *groups, int *label);

/* GCMA's best partitions kept between the searches that begin with the
 * same evolution: `gcma` (gcma_search) ends with it and `sim` starts from
 * its best, so a caller running both on one cost context and objective
 * (geodes run: gcma, then sim under each network model) evolves once.
 * Held in search_opts.memo; its key is what the evolution reads besides
 * the context's values: the context and the objective asked for (NULL:
 * the DT-FM score) by address, the gain, the population, the trials, the
 * seed and by_site. */
typedef struct gcma_memo gcma_memo;
gcma_memo *gcma_memo_new(void);
void gcma_memo_free(gcma_memo *m); /* NULL is fine */

/* gcma_search's evolution — gcma_evolve from the greedy data-parallel
 * groups with o's population, seed and by_site and trials offspring,
 * scored by obj (asked: the caller's objective, NULL for the DT-FM score;
 * obj: its stand-in), logged in log — then its k best distinct partitions
 * into groups (k x D_pp x D_dp ints) and scores (may be NULL), left in
 * o->memo when there. Returns how many (1 .. k), or -1 with e filled. */
int gcma_best_of_search(const cost_ctx *c, gcma_gain gain,
                        const search_objective *asked,
                        const search_objective *obj, const search_opts *o,
                        int trials, int k, search_log *log, int *groups,
                        double *scores, err *e);

/* The partitions gcma_best_of_search would give for these arguments,
 * when o->memo holds that evolution's best k or more (its first k: how
 * many), into groups; -1 otherwise. */
int gcma_memo_take(const cost_ctx *c, gcma_gain gain,
                   const search_objective *asked, const search_opts *o,
                   int trials, int k, int *groups);

/* The method as the front end runs it: gcma_evolve with o's population,
 * trials (default SEARCH_TRIALS) and seed, scored by obj (NULL: the DT-FM
 * score), the population seeded with the greedy data-parallel groups
 * (baseline_greedy_groups; DT-FM seeds none), then the best partition
 * realised as pipelines (cost_realise); with o->memo, its o->starts best
 * (SEARCH_SIM_STARTS when 0) are left there for `sim`.
 * NULL and e filled when the objective fails. The caller owns the result. */
search_result *gcma_search(const cost_ctx *c, gcma_gain gain,
                           const search_objective *obj, const search_opts *o,
                           err *e);

#endif
