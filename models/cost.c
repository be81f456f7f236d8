/* cost: DT-FM's analytic model (DESIGN.md section 3) over precomputed edge
 * tables. Invariant: ctx->pp and ctx->dp hold, for every ordered site
 * pair, the pipeline and data-parallel edge weights in seconds, and ctx->ov
 * those of the device pairs with an override, fixed at cost_ctx_new; the
 * weight of a device pair is its override's, else its sites'. Scoring only
 * reads them and writes the caller's scratch.
 *
 * Differences from DT-FM's reference scheduler (DS3Lab/DT-FM,
 * scheduler/heuristic_evolutionary_solver/scheduler.py), on purpose:
 * - its bipartite_matching finds the bottleneck value by forbidding edges
 *   in descending order until linear_sum_assignment must use a forbidden
 *   one, then returns the pairing of that *infeasible* assignment: the
 *   value is right, the pairing is not one that realises it. Here the
 *   pairing comes from the feasible matching at the optimal threshold.
 * - it assumes symmetric links (it fills w(C', C) from w(C, C')); here
 *   w(C, C') uses the links C -> C' and the TSP is over the directed
 *   matrix, which is the same when the links are symmetric.
 * - its TSP runs Held–Karp once per start node; one Held–Karp with every
 *   start in the base case gives the same minimum. */
#include "models/cost.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/cost_parts.h"
#include "models/spec.h"
#include "models/spec_workload.h"

/* One override of the links a -> b: both weights (models the scenario's
 * per-device-pair exceptions; key = a * n + b + 1, 0: an empty slot). */
typedef struct ctx_override {
  uint64_t key;
  double pp, dp;
} ctx_override;

struct cost_ctx {
  int replicas, stages, n;
  double activation_gb, gradient_gb;
  bool symmetric;  /* pp(a, b) == pp(b, a) for all device pairs */
  int nsites;      /* the link classes: a scenario's sites (or, from
                      cost_ctx_new's dense matrices, one per device) */
  int *site;       /* n: device -> site */
  int *site_size;  /* nsites: its devices */
  double *pp;      /* nsites x nsites: alpha/1e3 + 8 c_pp / beta */
  double *dp;      /* nsites x nsites: 2 (alpha/1e3 + 8 c_dp / (D_dp beta)) */
  ctx_override *ov; /* open addressing, ovcap slots (a power of 2), or NULL */
  size_t ovcap, nov;
  uint64_t serial;  /* unique per context made: names it in scratch memos */
};

/* A number no other context of this process has (a scratch's memo tells
 * its context by it: an address may be reused after a free). */
static uint64_t ctx_serial(void) {
  static _Atomic uint64_t next = 1;
  return atomic_fetch_add(&next, 1);
}

/* A context with zeroed site tables over nsites link classes (site[d]
 * filled by the caller) and room for novr device-pair overrides (each
 * stored in both directions); ctx_set fills it, ctx_finish seals it. Memory
 * is O(n + nsites^2 + novr): no table per device pair. */
static cost_ctx *ctx_alloc(int replicas, int stages, int nsites, size_t novr,
                           double activation_gb, double gradient_gb) {
  assert(replicas >= 1 && stages >= 1 && nsites >= 1);
  cost_ctx *c = mem_alloc(sizeof *c);
  int n = replicas * stages;
  *c = (cost_ctx){.replicas = replicas, .stages = stages, .n = n,
                  .activation_gb = activation_gb, .gradient_gb = gradient_gb,
                  .symmetric = true, .nsites = nsites,
                  .serial = ctx_serial()};
  c->site = mem_alloc((size_t)n * sizeof *c->site);
  c->site_size = mem_calloc((size_t)nsites, sizeof *c->site_size);
  c->pp = mem_calloc((size_t)nsites * nsites, sizeof *c->pp);
  c->dp = mem_calloc((size_t)nsites * nsites, sizeof *c->dp);
  if (novr) {
    c->ovcap = 4;
    while (c->ovcap < 4 * novr) c->ovcap *= 2; /* load <= 1/2 */
    c->ov = mem_calloc(c->ovcap, sizeof *c->ov);
  }
  return c;
}

/* The two edge weights of a link of latency_ms and bandwidth_gbps. */
static void ctx_weights(const cost_ctx *c, double latency_ms,
                        double bandwidth_gbps, double *pp, double *dp) {
  double alpha = latency_ms / 1e3, beta = bandwidth_gbps;
  assert(beta > 0);
  *pp = alpha + 8.0 * c->activation_gb / beta;
  *dp = 2.0 * (alpha + 8.0 * c->gradient_gb / (c->replicas * beta));
}

/* The links from site x to site y. */
static void ctx_set_sites(cost_ctx *c, int x, int y, double latency_ms,
                          double bandwidth_gbps) {
  size_t i = (size_t)x * c->nsites + y;
  ctx_weights(c, latency_ms, bandwidth_gbps, &c->pp[i], &c->dp[i]);
}

static size_t ov_slot(const cost_ctx *c, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ULL;
  size_t i = (size_t)(h >> 17) & (c->ovcap - 1);
  while (c->ov[i].key && c->ov[i].key != key) i = (i + 1) & (c->ovcap - 1);
  return i;
}

/* The override of the link a -> b (a != b): replaces its site pair's. */
static void ctx_set(cost_ctx *c, int a, int b, double latency_ms,
                    double bandwidth_gbps) {
  assert(a != b && c->ov && 2 * (c->nov + 1) <= c->ovcap);
  uint64_t key = (uint64_t)a * (uint64_t)c->n + (uint64_t)b + 1;
  ctx_override *o = &c->ov[ov_slot(c, key)];
  if (!o->key) c->nov++;
  o->key = key;
  ctx_weights(c, latency_ms, bandwidth_gbps, &o->pp, &o->dp);
}

static const ctx_override *ov_find(const cost_ctx *c, int a, int b) {
  if (!c->nov) return NULL;
  const ctx_override *o =
      &c->ov[ov_slot(c, (uint64_t)a * (uint64_t)c->n + (uint64_t)b + 1)];
  return o->key ? o : NULL;
}

/* Symmetric when every site pair x -> y is y -> x, except a pair of sites
 * whose device pairs all carry an override (an override covers both
 * directions with one value): the same answer a scan of every ordered
 * device pair gives. Overrides are counted per unordered site pair. */
static cost_ctx *ctx_finish(cost_ctx *c, const int *cover) {
  int ns = c->nsites;
  for (int d = 0; d < c->n; d++) c->site_size[c->site[d]]++;
  for (int x = 0; x < ns && c->symmetric; x++)
    for (int y = x + 1; y < ns; y++) {
      size_t i = (size_t)x * ns + y, j = (size_t)y * ns + x;
      long long pairs = (long long)c->site_size[x] * c->site_size[y];
      if (c->pp[i] != c->pp[j] && pairs > 0 && (!cover || cover[i] < pairs)) {
        c->symmetric = false;
        break;
      }
    }
  return c;
}

cost_ctx *cost_ctx_new(int replicas, int stages, const double *latency_ms,
                       const double *bandwidth_gbps, double activation_gb,
                       double gradient_gb) {
  int n = replicas * stages;
  cost_ctx *c = ctx_alloc(replicas, stages, n, 0, activation_gb, gradient_gb);
  for (int a = 0; a < n; a++) {
    c->site[a] = a;
    for (int b = 0; b < n; b++) {
      size_t i = (size_t)a * n + b;
      if (a != b) ctx_set_sites(c, a, b, latency_ms[i], bandwidth_gbps[i]);
    }
  }
  return ctx_finish(c, NULL);
}

/* The sizes at the workload's widths (compress_widths) and, under DiLoCo,
 * the gradients spread over the H inner steps one exchange serves (the
 * score prices one iteration). */
static void sizes_at_widths(const scenario_workload *w, double *act,
                            double *grad) {
  compress_widths(w, act, grad);
  int algo = spec_dp_algo_parse(w->dp_algo);
  bool diloco = algo >= 0 && spec_dp_algo_outer((spec_dp_algo)algo);
  if (diloco && w->inner_steps > 0) *grad /= w->inner_steps;
}

int cost_sizes(const scenario *s, double *activation_gb, double *gradient_gb,
               err *e) {
  *activation_gb = s->activation_gb;
  *gradient_gb = s->gradient_gb;
  if (isnan(*activation_gb) || isnan(*gradient_gb)) {
    spec_workload w;
    int rc = spec_workload_resolve(s, &w, e);
    if (rc) return rc;
    if (isnan(*activation_gb)) *activation_gb = spec_default_activation_gb(&w);
    if (isnan(*gradient_gb)) *gradient_gb = spec_default_gradient_gb(&w);
  }
  sizes_at_widths(&s->workload, activation_gb, gradient_gb);
  return ERR_OK;
}

/* Above this many replicas a group pair's pairing comes from the transport
 * over its classes (pair_big); up to it, from the matching over the
 * devices, as always (every built-in's groups are smaller). */
#define COST_PAIR_DEVICES_MAX 64

/* The links are scenario_link's at t = 0: the trace between the sites, then
 * the overrides (one per device pair, both directions) on top — the same
 * values scenario_link gives, kept per site pair plus a sparse map. */
cost_ctx *cost_ctx_from_scenario(const scenario *s, err *e) {
  int n = s->ndevices, rep = s->workload.replicas, st = s->workload.stages;
  if (rep < 1 || st < 1 || (long)rep * st != n) {
    err_set(e, ERR_CONFIG, "%s: workload.stages x workload.replicas = %d x %d "
            "is not the %d devices", s->name, st, rep, n);
    return NULL;
  }
  bool devices = s->noverrides > 0 || rep <= COST_PAIR_DEVICES_MAX;
  double act, grad, need = cost_scratch_bytes(rep, st, devices),
                    limit = mem_limit_bytes();
  if (need > limit) {
    err_set(e, ERR_MEMORY, "%s: scoring a placement of %d replicas x %d "
            "stages needs %.3g GB (a matching of replicas^2 entries), more "
            "than the %.3g GB this process may hold (physical memory, ulimit "
            "-v)", s->name, rep, st, need / 1e9, limit / 1e9);
    return NULL;
  }
  if (cost_sizes(s, &act, &grad, e)) return NULL;
  int ns = s->nsites;
  cost_ctx *c = ctx_alloc(rep, st, ns, (size_t)s->noverrides, act, grad);
  memcpy(c->site, s->device_site, (size_t)n * sizeof *c->site);
  for (int x = 0; x < ns; x++)
    for (int y = 0; y < ns; y++) {
      trace_value v = trace_at(s->network, x, y, 0);
      ctx_set_sites(c, x, y, v.latency_ms, v.bandwidth_gbps);
    }
  int *cover = NULL;
  if (s->noverrides) cover = mem_calloc((size_t)ns * ns, sizeof *cover);
  for (int i = 0; i < s->noverrides; i++) {
    const scenario_override *o = &s->overrides[i];
    ctx_set(c, o->a, o->b, o->latency_ms, o->bandwidth_gbps);
    ctx_set(c, o->b, o->a, o->latency_ms, o->bandwidth_gbps);
    int x = c->site[o->a], y = c->site[o->b];
    cover[(size_t)(x < y ? x : y) * ns + (x < y ? y : x)]++;
  }
  ctx_finish(c, cover);
  free(cover);
  return c;
}

void cost_ctx_free(cost_ctx *c) {
  if (!c) return;
  free(c->site);
  free(c->site_size);
  free(c->pp);
  free(c->dp);
  free(c->ov);
  free(c);
}

int cost_ctx_replicas(const cost_ctx *c) { return c->replicas; }
int cost_ctx_stages(const cost_ctx *c) { return c->stages; }
double cost_ctx_activation_gb(const cost_ctx *c) { return c->activation_gb; }
double cost_ctx_gradient_gb(const cost_ctx *c) { return c->gradient_gb; }
/* The override of a -> b if any, else the site pair's weight. */
static inline double pp_at(const cost_ctx *c, int a, int b) {
  const ctx_override *o = ov_find(c, a, b);
  return o ? o->pp : c->pp[(size_t)c->site[a] * c->nsites + c->site[b]];
}
static inline double dp_at(const cost_ctx *c, int a, int b) {
  const ctx_override *o = ov_find(c, a, b);
  return o ? o->dp : c->dp[(size_t)c->site[a] * c->nsites + c->site[b]];
}

double cost_pp_edge(const cost_ctx *c, int a, int b) {
  assert(a != b);
  return pp_at(c, a, b);
}
double cost_dp_edge(const cost_ctx *c, int a, int b) {
  assert(a != b);
  return dp_at(c, a, b);
}
const int *cost_ctx_site_map(const cost_ctx *c, int *nsites) {
  *nsites = c->nov ? 0 : c->nsites;
  return c->nov ? NULL : c->site;
}

double cost_site_pp(const cost_ctx *c, int x, int y) {
  assert(x >= 0 && x < c->nsites && y >= 0 && y < c->nsites);
  return c->pp[(size_t)x * c->nsites + y];
}
double cost_site_dp(const cost_ctx *c, int x, int y) {
  assert(x >= 0 && x < c->nsites && y >= 0 && y < c->nsites);
  return c->dp[(size_t)x * c->nsites + y];
}

size_t cost_ctx_bytes(const cost_ctx *c) {
  size_t ns = (size_t)c->nsites;
  return sizeof *c + (size_t)c->n * sizeof *c->site +
         ns * (sizeof *c->site_size + 2 * ns * sizeof *c->pp) +
         c->ovcap * sizeof *c->ov;
}

/* ---- DT-FM's cost ---- */

/* Above this many replicas (and without overrides) a group's DataPCost
 * sums per site: member i's sum over the others is sum over sites t, in
 * increasing order, of (members at t, less i itself) x dp(site of i, t),
 * once per site: O(D_dp + sites^2) instead of O(D_dp^2). The same terms,
 * summed in another order: equal up to rounding; below it (every
 * built-in) the pairwise sum, bit for bit. The value depends on the
 * group's members, not their order, so an allocation realised from a
 * partition (cost_realise, whose columns list the groups in another
 * order) scores what the partition does, to the bit. */
#define COST_DP_BY_SITE_MIN 64

static double dp_group_by_site(const cost_ctx *c, const int *group,
                               int *worst) {
  int k = c->replicas, ns = c->nsites, nt = 0;
  int *cnt = mem_calloc((size_t)ns, sizeof *cnt);
  int *at = mem_alloc((size_t)ns * sizeof *at);
  double *val = mem_alloc((size_t)ns * sizeof *val);
  for (int i = 0; i < k; i++) cnt[c->site[group[i]]]++;
  for (int t = 0; t < ns; t++) /* the group's sites, in increasing order */
    if (cnt[t]) at[nt++] = t;
  /* A member's sum depends on its site alone: once per site, O(nt^2). */
  for (int p = 0; p < nt; p++) {
    int si = at[p];
    const double *row = c->dp + (size_t)si * ns;
    double sum = 0;
    for (int q = 0; q < nt; q++) {
      int t = at[q];
      sum += (cnt[t] - (t == si)) * row[t];
    }
    val[si] = sum;
  }
  double most = 0;
  int arg = group[0];
  for (int i = 0; i < k; i++) {
    double sum = val[c->site[group[i]]];
    if (sum > most) most = sum, arg = group[i];
  }
  free(cnt);
  free(at);
  free(val);
  if (worst) *worst = arg;
  return most;
}

double cost_dp_group(const cost_ctx *c, const int *group, int *worst) {
  if (c->replicas > COST_DP_BY_SITE_MIN && !c->nov)
    return dp_group_by_site(c, group, worst);
  double most = 0;
  int arg = group[0];
  for (int i = 0; i < c->replicas; i++) {
    double sum = 0;
    for (int j = 0; j < c->replicas; j++)
      if (j != i) sum += dp_at(c, group[i], group[j]);
    if (sum > most) most = sum, arg = group[i];
  }
  if (worst) *worst = arg;
  return most;
}

double cost_dp(const cost_ctx *c, const int *groups) {
  double most = 0;
  for (int g = 0; g < c->stages; g++)
    most = fmax(most, cost_dp_group(c, groups + g * c->replicas, NULL));
  return most;
}

/* Whether pairs of c's groups may be memoised (cost_memo.c): no overrides,
 * and a group's sites fit a signature (16 members, 255 sites). */
static bool memo_ok(const cost_ctx *c) {
  return !c->nov && c->replicas <= 16 && c->nsites <= 255;
}

/* A group's signature: its members' sites + 1, sorted, one byte each, in
 * s->sw words (1 up to 8 members, else 2). */
static void group_sig(const cost_ctx *c, const int *g, const cost_scratch *s,
                      uint64_t *sig) {
  unsigned char b[16] = {0};
  for (int i = 0; i < c->replicas; i++) {
    unsigned char x = (unsigned char)(c->site[g[i]] + 1);
    int j = i - 1;
    while (j >= 0 && b[j] > x) b[j + 1] = b[j], j--;
    b[j + 1] = x;
  }
  memcpy(sig, b, (size_t)s->sw * sizeof *sig);
}

/* The bottleneck value of ga -> gb, matched afresh. */
static double pair_value(const cost_ctx *c, const int *ga, const int *gb,
                         int *match, cost_scratch *s) {
  int k = c->replicas;
  double *w = cost_scratch_square(s);
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) w[i * k + j] = pp_at(c, ga[i], gb[j]);
  }
  return cost_bottleneck_match(k, w, match, s);
}

/* The classes of a group's sites: *d distinct sites, their devices cnt[]
 * and sites at[], first seen first; false past COST_CLASSES_MAX. */
static bool site_classes(const cost_ctx *c, const int *g, int *d, int *at,
                         int *cnt) {
  *d = 0;
  for (int i = 0; i < c->replicas; i++) {
    int x = c->site[g[i]], q = 0;
    while (q < *d && at[q] != x) q++;
    if (q == *d) {
      if (*d == COST_CLASSES_MAX) return false;
      at[q] = x, cnt[q] = 0, (*d)++;
    }
    cnt[q]++;
  }
  return true;
}

/* The bottleneck value of ga -> gb without overrides: over their site
 * classes (cost_bottleneck_classes) when each spans at most
 * COST_CLASSES_MAX sites, else over the devices. (Over worldwide's groups
 * of 8 at up to 8 sites the classes took 8.7 K instructions a pair, the
 * augmenting paths over the devices 12.5 K.) */
static double pair_value_sites(const cost_ctx *c, const int *ga,
                               const int *gb, cost_scratch *s) {
  int da, db, xa[COST_CLASSES_MAX], ya[COST_CLASSES_MAX];
  int ca[COST_CLASSES_MAX], cb[COST_CLASSES_MAX];
  if (!site_classes(c, ga, &da, xa, ca) || !site_classes(c, gb, &db, ya, cb))
    return pair_value(c, ga, gb, NULL, s);
  double v[COST_CLASSES_MAX * COST_CLASSES_MAX];
  for (int x = 0; x < da; x++)
    for (int y = 0; y < db; y++)
      v[x * db + y] = c->pp[(size_t)xa[x] * c->nsites + ya[y]];
  return cost_bottleneck_classes(da, ca, db, cb, v);
}

/* The value of ga -> gb of signatures sa, sb: from the memo, or matched. */
static double pair_memo(const cost_ctx *c, const int *ga, const int *gb,
                        const uint64_t *sa, const uint64_t *sb,
                        cost_scratch *s) {
  uint64_t key[4];
  memcpy(key, sa, (size_t)s->sw * sizeof *key);
  memcpy(key + s->sw, sb, (size_t)s->sw * sizeof *key);
  double v;
  size_t at;
  if (cost_memo_get(&s->pairs, c->serial, key, &v, &at)) return v;
  v = pair_value_sites(c, ga, gb, s);
  cost_memo_put(&s->pairs, at, key, v);
  return v;
}

/* ---- groups above the memo's reach, without overrides ---- */


/* The scratch's class buffers for c's sites and k members. */
static void classes_reserve(const cost_ctx *c, cost_scratch *s) {
  if (s->ncls >= c->nsites) return;
  int ns = c->nsites;
  free(s->cls_at), free(s->cls_cnt), free(s->cls_of), free(s->cls_v);
  free(s->cls_flow), free(s->cls_next);
  s->ncls = ns;
  s->cls_at = mem_alloc(2 * (size_t)ns * sizeof *s->cls_at);
  s->cls_cnt = mem_alloc(2 * (size_t)ns * sizeof *s->cls_cnt);
  s->cls_of = mem_alloc((size_t)ns * sizeof *s->cls_of);
  for (int x = 0; x < ns; x++) s->cls_of[x] = -1;
  s->cls_v = mem_alloc((size_t)ns * ns * sizeof *s->cls_v);
  s->cls_flow = mem_alloc((size_t)ns * ns * sizeof *s->cls_flow);
  s->cls_next = mem_alloc((size_t)s->kmax * sizeof *s->cls_next);
}

/* A group's sites, first seen first, into at[] with their counts cnt[]:
 * how many. */
static int group_classes(const cost_ctx *c, const int *g, cost_scratch *s,
                         int *at, int *cnt) {
  int d = 0;
  for (int i = 0; i < c->replicas; i++) {
    int x = c->site[g[i]];
    if (s->cls_of[x] < 0) s->cls_of[x] = d, at[d] = x, cnt[d++] = 0;
    cnt[s->cls_of[x]]++;
  }
  for (int q = 0; q < d; q++) s->cls_of[at[q]] = -1;
  return d;
}

/* match[i] := a member of gb for each member i of ga, realising the
 * transport s->cls_flow between their classes (da x db): row i of class x
 * takes the next unused member of the first class y that x still sends
 * units to. */
static void pairing_of_flow(const cost_ctx *c, const int *ga, const int *gb,
                            int da, int db, cost_scratch *s, int *match) {
  int k = c->replicas, *at_a = s->cls_at, *at_b = s->cls_at + c->nsites;
  int *head = s->cls_cnt, *tail = s->cls_cnt + c->nsites, *nx = s->cls_next;
  for (int y = 0; y < db; y++) head[y] = tail[y] = -1, s->cls_of[at_b[y]] = y;
  for (int j = 0; j < k; j++) { /* gb's members by class, in order */
    int y = s->cls_of[c->site[gb[j]]];
    nx[j] = -1;
    if (tail[y] < 0) head[y] = j;
    else nx[tail[y]] = j;
    tail[y] = j;
  }
  for (int y = 0; y < db; y++) s->cls_of[at_b[y]] = -1;
  for (int x = 0; x < da; x++) s->cls_of[at_a[x]] = x;
  for (int i = 0; i < k; i++) {
    int x = s->cls_of[c->site[ga[i]]], y = 0;
    int *f = s->cls_flow + (size_t)x * db;
    while (f[y] == 0) y++;
    f[y]--;
    match[i] = head[y];
    head[y] = nx[head[y]];
  }
  for (int x = 0; x < da; x++) s->cls_of[at_a[x]] = -1;
}

/* The bottleneck value of ga -> gb over their site classes (no overrides):
 * by Hall's condition when each spans at most COST_CLASSES_MAX sites, else
 * by the transport (cost_flow.c); the same double as the matching over the
 * devices. match (if not NULL) as cost_group_pair's, from the transport.
 * O(D_dp + classes^2) and a few transports, not O(D_dp^2). */
static double pair_big(const cost_ctx *c, const int *ga, const int *gb,
                       int *match, cost_scratch *s) {
  classes_reserve(c, s);
  int ns = c->nsites, *at_a = s->cls_at, *at_b = s->cls_at + ns;
  int *ca = s->cls_cnt, *cb = s->cls_cnt + ns;
  int da = group_classes(c, ga, s, at_a, ca);
  int db = group_classes(c, gb, s, at_b, cb);
  for (int x = 0; x < da; x++)
    for (int y = 0; y < db; y++)
      s->cls_v[x * db + y] = c->pp[(size_t)at_a[x] * ns + at_b[y]];
  if (!match && da <= COST_CLASSES_MAX && db <= COST_CLASSES_MAX)
    return cost_bottleneck_classes(da, ca, db, cb, s->cls_v);
  double v = cost_bottleneck_flow(da, ca, db, cb, s->cls_v,
                                  match ? s->cls_flow : NULL, &s->flow);
  if (match) pairing_of_flow(c, ga, gb, da, db, s, match);
  return v;
}

/* A group pair's value outside the memo: over the classes without
 * overrides, else over the devices. */
static double pair_any(const cost_ctx *c, const int *ga, const int *gb,
                       int *match, cost_scratch *s) {
  if (c->nov || (match && c->replicas <= COST_PAIR_DEVICES_MAX))
    return pair_value(c, ga, gb, match, s);
  return pair_big(c, ga, gb, match, s);
}

double cost_group_pair(const cost_ctx *c, const int *ga, const int *gb,
                       int *match, cost_scratch *s) {
  if (!memo_ok(c)) return pair_any(c, ga, gb, match, s);
  uint64_t sa[2], sb[2];
  group_sig(c, ga, s, sa);
  group_sig(c, gb, s, sb);
  double v = pair_memo(c, ga, gb, sa, sb, s);
  if (match) { /* cost_bottleneck_match's pairing: the search at v */
    int k = c->replicas;
    double *w = cost_scratch_square(s);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) w[i * k + j] = pp_at(c, ga[i], gb[j]);
    bool ok = cost_match_at(s, k, w, v, match);
    assert(ok);
    (void)ok;
  }
  return v;
}
/* Fills s->gw with w(C_i, C_j) for the partition's groups. */
static void group_weights(const cost_ctx *c, const int *groups,
                          cost_scratch *s) {
  int n = c->stages, k = c->replicas;
  bool memo = memo_ok(c);
  if (memo)
    for (int i = 0; i < n; i++)
      group_sig(c, groups + i * k, s, s->sig + s->sw * i);
  for (int i = 0; i < n; i++) {
    s->gw[i * n + i] = 0;
    for (int j = c->symmetric ? i + 1 : 0; j < n; j++) {
      if (j == i) continue;
      const int *ga = groups + i * k, *gb = groups + j * k;
      s->gw[i * n + j] =
          memo ? pair_memo(c, ga, gb, s->sig + s->sw * i, s->sig + s->sw * j,
                           s)
               : pair_any(c, ga, gb, NULL, s);
      if (c->symmetric) s->gw[j * n + i] = s->gw[i * n + j];
    }
  }
}
/* Compares signatures word by word (any total order serves as a key). */
static int memcmp_words(const uint64_t *a, const uint64_t *b, int w) {
  for (int i = 0; i < w; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* The path value of the groups of signatures s->sig from the memo (by
 * the signatures sorted: the value does not depend on the groups' labels,
 * cost_memo.c), or Held–Karp's over s->gw. */
static double path_memo(const cost_ctx *c, cost_scratch *s) {
  int n = c->stages;
  uint64_t *key = s->key;
  int sw = s->sw;
  for (int i = 0; i < n; i++) { /* insertion sort of the signatures */
    const uint64_t *x = s->sig + sw * i;
    int j = i - 1;
    for (; j >= 0 && memcmp_words(key + sw * j, x, sw) > 0; j--)
      memcpy(key + sw * (j + 1), key + sw * j, (size_t)sw * sizeof *key);
    memcpy(key + sw * (j + 1), x, (size_t)sw * sizeof *key);
  }
  double v;
  size_t at;
  if (cost_memo_get(&s->paths, c->serial, key, &v, &at)) return v;
  v = cost_tsp_path(n, s->gw, NULL, s);
  cost_memo_put(&s->paths, at, key, v);
  return v;
}

double cost_pp(const cost_ctx *c, const int *groups, int *order,
               cost_scratch *s) {
  assert(s->kmax >= c->replicas && s->nmax >= c->stages);
  group_weights(c, groups, s);
  if (!order && memo_ok(c) && c->stages <= COST_HELD_KARP_MAX)
    return path_memo(c, s);
  if (!order || c->stages <= COST_HELD_KARP_MAX)
    return cost_tsp_path(c->stages, s->gw, order, s);
  /* The heuristic leaves its best order in s->order. */
  double v = cost_tsp_path(c->stages, s->gw, NULL, s);
  memcpy(order, s->order, (size_t)c->stages * sizeof *order);
  return v;
}

double cost_partition(const cost_ctx *c, const int *groups, cost_scratch *s,
                      cost_parts *parts) {
  double dp = cost_dp(c, groups);
  double pp = 2.0 * cost_pp(c, groups, NULL, s);
  if (parts) *parts = (cost_parts){.dp_s = dp, .pp_s = pp, .score_s = dp + pp};
  return dp + pp;
}

double cost_boundary(const cost_ctx *c, const alloc *a, int s, int *replica) {
  double most = -INFINITY;
  int arg = 0;
  for (int r = 0; r < a->replicas; r++) {
    double v = pp_at(c, alloc_at(a, r, s), alloc_at(a, r, s + 1));
    if (v > most) most = v, arg = r;
  }
  if (replica) *replica = arg;
  return most;
}

double cost_alloc(const cost_ctx *c, const alloc *a, cost_parts *parts) {
  assert(a->replicas == c->replicas && a->stages == c->stages);
  double dp = 0, pp = 0;
  int *group = mem_alloc((size_t)a->replicas * sizeof *group);
  for (int s = 0; s < a->stages; s++) {
    for (int r = 0; r < a->replicas; r++) group[r] = alloc_at(a, r, s);
    dp = fmax(dp, cost_dp_group(c, group, NULL));
    if (s + 1 < a->stages) pp += cost_boundary(c, a, s, NULL);
  }
  free(group);
  pp *= 2.0;
  if (parts) *parts = (cost_parts){.dp_s = dp, .pp_s = pp, .score_s = dp + pp};
  return dp + pp;
}

alloc *cost_realise(const cost_ctx *c, const int *groups, cost_scratch *s) {
  int n = c->stages, k = c->replicas;
  int *order = mem_alloc((size_t)n * sizeof *order);
  cost_pp(c, groups, order, s);
  alloc *a = alloc_new(k, n);
  for (int r = 0; r < k; r++) s->idx[r] = r;
  for (int st = 0; st < n; st++) {
    const int *g = groups + order[st] * k;
    for (int r = 0; r < k; r++) a->device[r * n + st] = g[s->idx[r]];
    if (st + 1 == n) break;
    cost_group_pair(c, g, groups + order[st + 1] * k, s->match, s);
    for (int r = 0; r < k; r++) s->idx[r] = s->match[s->idx[r]];
  }
  free(order);
  return a;
}
