/* cost: DT-FM's analytic communication cost model (DESIGN.md section 3).
 * A cost_ctx is built once per scenario and sizes: it holds, for every
 * ordered site pair and for every device pair with an override (a sparse
 * map), the two edge weights the model uses (pipeline and data-parallel),
 * already in seconds, so scoring is table lookups through a device's site:
 * O(devices + sites^2 + overrides) memory, no table per device pair.
 * Invariant: a cost_ctx is immutable after cost_ctx_new (many threads may
 * share one); all mutable working memory of a score lives in a
 * cost_scratch (one per thread), so scoring never allocates.
 *
 * Layouts: a partition is `groups`, D_pp groups of D_dp devices, group-major
 * (group g = groups[g*D_dp .. g*D_dp + D_dp - 1]), as alloc_partition
 * stores it; an allocation is the alloc matrix device[r][s]. */
#ifndef MODELS_COST_H
#define MODELS_COST_H

#include <stdbool.h>

#include "base/err.h"
#include "models/alloc.h"
#include "traces/scenario.h"

typedef struct cost_ctx cost_ctx;
typedef struct cost_scratch cost_scratch;

/* Exact open-loop TSP (Held–Karp, O(2^n n^2)) up to this many groups;
 * above it cost_tsp_path falls back to nearest neighbour from every start
 * plus 2-opt, which is not guaranteed optimal. */
#define COST_HELD_KARP_MAX 16

typedef struct cost_parts {
  double dp_s;     /* DataPCost */
  double pp_s;     /* 2 x PipelinePCost (already doubled) */
  double score_s;  /* dp_s + pp_s */
} cost_parts;

/* A context for D_dp = replicas, D_pp = stages on n = replicas*stages
 * devices. latency_ms and bandwidth_gbps are n x n row-major ([a*n + b]
 * is the link a -> b; the diagonal is ignored), copied (each device its own
 * link class: n^2 memory, for callers that hold the dense form anyway);
 * bandwidth > 0.
 * Sizes in decimal GB. Never NULL. */
cost_ctx *cost_ctx_new(int replicas, int stages, const double *latency_ms,
                       const double *bandwidth_gbps, double activation_gb,
                       double gradient_gb);

/* A context for scenario s at t = 0 (scenario_link), with the sizes of
 * cost_sizes. NULL and e filled when the workload does not resolve, or
 * (ERR_MEMORY, with the numbers) when a score's scratch
 * (cost_scratch_bytes; its replicas^2 matching only where s has device-pair
 * overrides) would pass the memory this process may hold
 * (mem_limit_bytes): 200,000 replicas took 320 GB and aborted. */
cost_ctx *cost_ctx_from_scenario(const scenario *s, err *e);

/* The sizes a score uses for s: s->activation_gb / s->gradient_gb where
 * set (not NaN), else the workload defaults of spec.h (section 3); then at
 * the workload's widths (compress_widths: x bits / 16 each) and,
 * under DiLoCo, the gradient divided by the H inner steps an exchange
 * serves, so the score stays a per-iteration cost. */
int cost_sizes(const scenario *s, double *activation_gb, double *gradient_gb,
               err *e);

void cost_ctx_free(cost_ctx *c);  /* NULL is fine */

int cost_ctx_replicas(const cost_ctx *c);  /* D_dp */
int cost_ctx_stages(const cost_ctx *c);    /* D_pp */
double cost_ctx_activation_gb(const cost_ctx *c);
double cost_ctx_gradient_gb(const cost_ctx *c);

/* Edge weights, seconds: pipeline a -> b is alpha/1e3 + 8 c_pp / beta;
 * data-parallel a -> b is 2 (alpha/1e3 + 8 c_dp / (D_dp beta)). */
double cost_pp_edge(const cost_ctx *c, int a, int b);
double cost_dp_edge(const cost_ctx *c, int a, int b);

/* The site map when every edge weight is a function of its endpoints'
 * sites (no device-pair overrides): site[d] in [0, *nsites) for each of
 * the n devices, owned by c; NULL (and *nsites = 0) when c has overrides.
 * Callers may then cache per-site-pair weights (read through
 * cost_pp_edge / cost_dp_edge of any devices at those sites). */
const int *cost_ctx_site_map(const cost_ctx *c, int *nsites);

/* The edge weights between sites x and y of the site map (x == y: two
 * devices of one site), seconds: the same doubles cost_pp_edge and
 * cost_dp_edge give for devices there when c has no overrides. */
double cost_site_pp(const cost_ctx *c, int x, int y);
double cost_site_dp(const cost_ctx *c, int x, int y);

/* The bytes c holds (its site tables, device map and override map). */
size_t cost_ctx_bytes(const cost_ctx *c);

/* Working memory for groups of up to `replicas` devices and up to `stages`
 * groups. One per thread; never NULL. */
cost_scratch *cost_scratch_new(int replicas, int stages);

/* The bytes a scratch of cost_scratch_new(replicas, stages) takes, about
 * (its memos aside); devices: with the matching over the devices'
 * replicas^2 arrays, which it makes on first use (device-pair overrides, or
 * up to 64 replicas; over site classes none). cost_ctx_from_scenario
 * refuses a scenario whose scratch passes the memory this process may
 * hold. */
double cost_scratch_bytes(int replicas, int stages, bool devices);
void cost_scratch_free(cost_scratch *w);  /* NULL is fine */

/* Bottleneck perfect matching of a k x k matrix (row-major, k <= the
 * scratch's replicas): the minimum over perfect matchings of the largest
 * matched weight. If match != NULL, match[i] = the column paired with row i
 * in a matching that realises the value. Exact (threshold + augmenting
 * paths). */
double cost_bottleneck_match(int k, const double *w, int *match,
                             cost_scratch *s);

/* Shortest Hamiltonian path (open loop, any start) over n nodes, weights
 * w[i*n + j] for i -> j (n <= the scratch's stages). If order != NULL it
 * receives the visiting order. Exact for n <= COST_HELD_KARP_MAX. */
double cost_tsp_path(int n, const double *w, int *order, cost_scratch *s);

/* DataPCost of a partition: max over groups C and d in C of the sum of
 * cost_dp_edge(d, d') over d' in C. No scratch needed. */
double cost_dp(const cost_ctx *c, const int *groups);

/* The DataPCost term of one group of D_dp devices; *worst (if not NULL)
 * receives the device attaining it. */
double cost_dp_group(const cost_ctx *c, const int *group, int *worst);

/* w(C, C'): bottleneck matching of group ga -> group gb (each D_dp devices)
 * under cost_pp_edge. match as in cost_bottleneck_match (index into gb);
 * above 64 replicas without overrides the value is solved over the
 * groups' site classes (the same double) and the pairing comes from that
 * transport: another pairing that realises the value. */
double cost_group_pair(const cost_ctx *c, const int *ga, const int *gb,
                       int *match, cost_scratch *s);

/* PipelinePCost of a partition (not doubled): the open-loop TSP over its
 * groups with weights w. order (if not NULL, D_pp entries) receives the
 * group order of a best pipeline. */
double cost_pp(const cost_ctx *c, const int *groups, int *order,
               cost_scratch *s);

/* Cost(partition) = DataPCost + 2 PipelinePCost; parts (if not NULL)
 * receives the terms. Allocation-free: the scheduler's hot path. */
double cost_partition(const cost_ctx *c, const int *groups, cost_scratch *s,
                      cost_parts *parts);

/* The fixed-order cost of an explicit allocation: DataPCost of its columns
 * plus 2 x sum over boundaries s of max over r of
 * cost_pp_edge(device[r][s], device[r][s+1]). */
double cost_alloc(const cost_ctx *c, const alloc *a, cost_parts *parts);

/* Boundary s -> s+1 of allocation a: its largest pipeline edge (seconds);
 * *replica (if not NULL) receives the row that attains it. */
double cost_boundary(const cost_ctx *c, const alloc *a, int s, int *replica);

/* An allocation realising cost_partition: columns in a best TSP order,
 * rows paired by the bottleneck matchings, so that cost_alloc of the
 * result equals cost_partition of groups. The caller owns it. */
alloc *cost_realise(const cost_ctx *c, const int *groups, cost_scratch *s);

#endif
