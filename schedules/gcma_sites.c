/* gcma_sites: GCMA over site counts. Without device-pair overrides two
 * devices of one site are interchangeable in every DT-FM score
 * (schedules/bysite.h), so a partition is, up to an equal score, its
 * count matrix: cnt[g * ns + x] devices of site x in group g. This file
 * breeds those matrices with GCMA's operators read on sites -- the
 * five-point crossover, the clone mutation, the rebuild mutation and the
 * cyclic local search, whose points and moves carry a grain of devices of
 * one site (one device up to 64 replicas: the crossover is then the one
 * over the devices, read on the canonical partitions) -- and
 * gcma_evolve.c runs the same genetic algorithm over them; each candidate
 * goes to the objective as the partition bysite_groups makes of it (the
 * devices of a site dealt to the groups in order). Every operator is
 * O(D_pp x sites^2) or less, against O(D_dp^2) and more over the devices:
 * at 10^4 devices in 69 sites a child costs what one over 64 devices does.
 * Invariant: every matrix the state holds is balanced -- each row sums to
 * D_dp, each column to its site's devices, every entry >= 0 -- and every
 * random choice comes from the gcma's generator. */
#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "schedules/bysite.h"
#include "schedules/gcma.h"
#include "schedules/gcma_parts.h"

#define SITES_CROSS_POINTS 5 /* gcma.c's GCMA_CROSS_POINTS, on sites */

/* A local-search move carries D_dp / SITES_GRAIN devices of one site (at
 * least one): the same share of a group whatever its size, and one device,
 * as over the devices, up to 64 replicas. */
#define SITES_GRAIN 64

/* A candidate pair of the rebuild: devices of site y of the neighbour and
 * of site x for the rebuilt group, at weight w; own: x holds devices of
 * the rebuilt group (taken first on equal weights, the smallest change). */
typedef struct rb_pair {
  double w;
  int own, y, x;
} rb_pair;

struct gcma_sites {
  bysite *b;
  int ns, m;       /* sites; m = D_pp x sites, a matrix's entries */
  double *w;       /* ns x ns: the gain's weight, site x -> site y */
  double *pp;      /* ns x ns: the pipeline weight (the rebuild's) */
  int *rename, *used, *ov; /* ng, ng, ng x ng: the crossover's renaming */
  int *fix;        /* m: the crossover's points, per group and site */
  int *moved;      /* 2 x points x grain: their (site, rank) */
  int *rank;       /* n: a device's place among its site's, from 0 */
  int *save, *lock, *lsave; /* m: a cycle's start, locked units, their copy */
  double *gsum;    /* m: sum over group g's devices of w(x, device) */
  int *size;       /* ng: the group sizes inside a cycle */
  int *mv_x, *mv_from, *mv_to, *tau_x; /* 2 ng + 1: a cycle's moves */
  double *eps, *tau;
  int *groups, *order, *guard; /* n, ng, ng: the rebuild's */
  double *neck;
  rb_pair *pairs;   /* ns x ns: the rebuild's candidate pairs */
  int *need, *avail, *own, *pick, *outg; /* ns each, m: the rebuild's */
  char *gmark;      /* ng: groups marked (oversized, drawable, touched) */
};

gcma_sites *gcma_sites_new(gcma *g) {
  bysite *b = bysite_new(g->c);
  if (!b) return NULL;
  gcma_sites *st = mem_calloc(1, sizeof *st);
  int ns = b->ns, ng = g->ng, m = ng * ns;
  *st = (gcma_sites){.b = b, .ns = ns, .m = m};
  st->w = mem_alloc((size_t)ns * ns * sizeof *st->w);
  st->pp = mem_alloc((size_t)ns * ns * sizeof *st->pp);
  for (int x = 0; x < ns; x++)
    for (int y = 0; y < ns; y++) {
      st->pp[x * ns + y] = cost_site_pp(g->c, x, y);
      st->w[x * ns + y] = g->gain == GCMA_GAIN_CUT ? cost_site_dp(g->c, x, y)
                                                   : st->pp[x * ns + y];
    }
  st->rename = mem_alloc((size_t)ng * sizeof *st->rename);
  st->used = mem_alloc((size_t)ng * sizeof *st->used);
  st->ov = mem_alloc((size_t)ng * ng * sizeof *st->ov);
  st->fix = mem_alloc((size_t)m * sizeof *st->fix);
  st->moved = mem_alloc(2 * (size_t)SITES_CROSS_POINTS *
                        (g->k / SITES_GRAIN + 1) * sizeof *st->moved);
  st->rank = mem_alloc((size_t)g->n * sizeof *st->rank);
  for (int x = 0; x < ns; x++)
    for (int i = b->start[x]; i < b->start[x + 1]; i++)
      st->rank[b->dev[i]] = i - b->start[x];
  st->save = mem_alloc((size_t)m * sizeof *st->save);
  st->lock = mem_alloc((size_t)m * sizeof *st->lock);
  st->lsave = mem_alloc((size_t)m * sizeof *st->lsave);
  st->gsum = mem_alloc((size_t)m * sizeof *st->gsum);
  st->size = mem_alloc((size_t)ng * sizeof *st->size);
  int moves = 2 * ng + 1;
  st->mv_x = mem_alloc((size_t)moves * 4 * sizeof *st->mv_x);
  st->mv_from = st->mv_x + moves, st->mv_to = st->mv_x + 2 * moves;
  st->tau_x = st->mv_x + 3 * moves;
  st->eps = mem_alloc((size_t)moves * 2 * sizeof *st->eps);
  st->tau = st->eps + moves;
  st->groups = mem_alloc((size_t)g->n * sizeof *st->groups);
  st->order = mem_alloc((size_t)ng * 2 * sizeof *st->order);
  st->guard = st->order + ng;
  st->neck = mem_alloc((size_t)ng * sizeof *st->neck);
  st->pairs = mem_alloc((size_t)ns * ns * sizeof *st->pairs);
  st->gmark = mem_alloc((size_t)ng);
  st->need = mem_alloc((size_t)ns * 4 * sizeof *st->need);
  st->avail = st->need + ns, st->own = st->need + 2 * ns;
  st->pick = st->need + 3 * ns;
  st->outg = mem_alloc((size_t)m * sizeof *st->outg);
  return st;
}

void gcma_sites_free(gcma_sites *st) {
  if (!st) return;
  bysite_free(st->b);
  free(st->w), free(st->pp), free(st->rename), free(st->used), free(st->ov);
  free(st->fix), free(st->moved), free(st->rank), free(st->save);
  free(st->lock), free(st->lsave);
  free(st->gsum), free(st->size), free(st->mv_x), free(st->eps);
  free(st->groups), free(st->order), free(st->neck), free(st->pairs);
  free(st->need), free(st->outg), free(st->gmark);
  free(st);
}

#ifndef NDEBUG
/* The file's invariant. */
static bool counts_balanced(const gcma *g, const int *cnt) {
  const gcma_sites *st = g->st;
  for (int x = 0; x < st->ns; x++) {
    int col = 0;
    for (int grp = 0; grp < g->ng; grp++) {
      if (cnt[grp * st->ns + x] < 0) return false;
      col += cnt[grp * st->ns + x];
    }
    if (col != bysite_size(st->b, x)) return false;
  }
  for (int grp = 0; grp < g->ng; grp++) {
    int row = 0;
    for (int x = 0; x < st->ns; x++) row += cnt[grp * st->ns + x];
    if (row != g->k) return false;
  }
  return true;
}
#endif

/* ---- the representation's conversions ---- */

static void counts_of_groups(gcma *g, const int *groups, int *cnt) {
  bysite_counts(g->st->b, g->ng, g->k, groups, cnt);
}

static void counts_to_groups(gcma *g, const int *cnt, int *groups) {
  assert(counts_balanced(g, cnt));
  bysite_groups(g->st->b, g->ng, g->k, cnt, groups);
}

/* Each row of a is a row of b, one for one. */
static bool counts_same(gcma *g, const int *a, const int *b) {
  int ns = g->st->ns, *used = g->st->used;
  memset(used, 0, (size_t)g->ng * sizeof *used);
  for (int i = 0; i < g->ng; i++) {
    int j = 0;
    while (j < g->ng &&
           (used[j] || memcmp(a + i * ns, b + j * ns, (size_t)ns * sizeof *a)))
      j++;
    if (j == g->ng) return false;
    used[j] = 1;
  }
  return true;
}

/* A device drawn uniformly among those cnt holds, less the `less` ones
 * (when not NULL), in the groups where ok[grp]: its group and site, or
 * *grp = -1 when there is none. */
static void draw_unit(gcma *g, const int *cnt, const int *less,
                      const char *ok, int *grp, int *x) {
  int ns = g->st->ns;
  long total = 0;
  for (int i = 0; i < g->ng * ns; i++)
    if (ok[i / ns]) total += cnt[i] - (less ? less[i] : 0);
  *grp = -1;
  if (!total) return;
  long r = (long)gsl_rng_uniform_int(g->rng, (unsigned long)total);
  for (int i = 0; i < g->ng * ns; i++) {
    if (!ok[i / ns]) continue;
    r -= cnt[i] - (less ? less[i] : 0);
    if (r < 0) {
      *grp = i / ns, *x = i % ns;
      return;
    }
  }
}

/* The grain of a move: D_dp / SITES_GRAIN devices, at least one. */
static int grain(const gcma *g) {
  return g->k / SITES_GRAIN > 1 ? g->k / SITES_GRAIN : 1;
}

/* ---- crossover ---- */

/* rename[a] = the group of p2 that p1's group a is matched to: the pair
 * with the largest overlap (the devices they could share, sum over sites
 * of the smaller count) first; ties: lowest indices. */
static void sites_rename(gcma *g, const int *p1, const int *p2) {
  gcma_sites *st = g->st;
  int ng = g->ng, ns = st->ns;
  for (int a = 0; a < ng; a++)
    for (int b = 0; b < ng; b++) {
      int o = 0;
      for (int x = 0; x < ns; x++) {
        int u = p1[a * ns + x], v = p2[b * ns + x];
        o += u < v ? u : v;
      }
      st->ov[a * ng + b] = o;
    }
  memset(st->used, 0, (size_t)ng * sizeof *st->used);
  for (int a = 0; a < ng; a++) st->rename[a] = -1;
  for (int step = 0; step < ng; step++) {
    int ba = 0, bb = 0, best = -1;
    for (int a = 0; a < ng; a++)
      for (int b = 0; b < ng && st->rename[a] < 0; b++)
        if (!st->used[b] && st->ov[a * ng + b] > best)
          best = st->ov[a * ng + b], ba = a, bb = b;
    st->rename[ba] = bb;
    st->used[bb] = 1;
  }
}

/* Rows back to D_dp: while a group holds more, a device drawn at random
 * from the oversized groups (sparing the crossover's points, st->fix, while
 * others are left) moves, with up to a grain of its site's devices there
 * as the two groups' excess and shortage allow, to a random undersized
 * group. */
static void sites_repair(gcma *g, int *child) {
  gcma_sites *st = g->st;
  int ns = st->ns, ng = g->ng, *size = st->size, q = grain(g);
  char *ov = st->gmark;
  for (;;) {
    int nunder = 0, a, x;
    for (int grp = 0; grp < ng; grp++) {
      size[grp] = 0;
      for (int y = 0; y < ns; y++) size[grp] += child[grp * ns + y];
      ov[grp] = size[grp] > g->k;
      if (size[grp] < g->k) st->used[nunder++] = grp;
    }
    if (!nunder) break;
    draw_unit(g, child, st->fix, ov, &a, &x);
    bool spared = a >= 0;
    if (!spared) draw_unit(g, child, NULL, ov, &a, &x);
    int to = st->used[gsl_rng_uniform_int(g->rng, (unsigned long)nunder)];
    int i = a * ns + x, m = child[i] - (spared ? st->fix[i] : 0);
    m = q < m ? q : m;
    m = size[a] - g->k < m ? size[a] - g->k : m;
    m = g->k - size[to] < m ? g->k - size[to] : m;
    child[i] -= m, child[to * ns + x] += m;
    if (st->fix[i] > child[i]) st->fix[i] = child[i];
  }
}

/* The group of the j-th device of site x (in increasing order) when cnt's
 * groups take each site's devices in group order (bysite_groups). */
static int group_of(const gcma *g, const int *cnt, int x, int j) {
  int a = 0;
  for (; a + 1 < g->ng; a++)
    if ((j -= cnt[a * g->st->ns + x]) < 0) break;
  return a;
}

/* gcma_crossover on counts: child = p2 with the devices of five random
 * points, each a grain of consecutive devices of one site from a random
 * device on, put in p1's groups (renamed to overlap p2's most); then
 * repaired. With a grain of one device (up to 64 replicas) this is the
 * crossover over the devices, read on the canonical partitions. */
static void sites_crossover(gcma *g, const int *p1, const int *p2,
                            int *child) {
  gcma_sites *st = g->st;
  int ns = st->ns, q = grain(g), nmoved = 0;
  sites_rename(g, p1, p2);
  memcpy(child, p2, (size_t)st->m * sizeof *child);
  memset(st->fix, 0, (size_t)st->m * sizeof *st->fix);
  int points = g->n < SITES_CROSS_POINTS ? g->n : SITES_CROSS_POINTS;
  for (int i = 0; i < points; i++) {
    int d = (int)gsl_rng_uniform_int(g->rng, (unsigned long)g->n);
    int x = st->b->site[d], j0 = st->rank[d], size = bysite_size(st->b, x);
    for (int j = j0; j < j0 + q && j < size; j++) {
      int was = 0; /* a device moves once (the devices' labels are set) */
      for (int t = 0; t < nmoved && !was; t++)
        was = st->moved[2 * t] == x && st->moved[2 * t + 1] == j;
      if (was) continue;
      st->moved[2 * nmoved] = x, st->moved[2 * nmoved++ + 1] = j;
      int from = group_of(g, p2, x, j), to = st->rename[group_of(g, p1, x, j)];
      child[from * ns + x]--, child[to * ns + x]++;
      st->fix[to * ns + x]++;
    }
  }
  sites_repair(g, child);
  assert(counts_balanced(g, child));
}

/* A child equal to a parent: one device of a random group and one of
 * another change places. */
static void sites_mutate_if_clone(gcma *g, const int *p1, const int *p2,
                                  int *child) {
  if (g->ng < 2 || (!counts_same(g, child, p1) && !counts_same(g, child, p2)))
    return;
  int ns = g->st->ns, a, x, b, y;
  char *okp = g->st->gmark;
  memset(okp, 1, (size_t)g->ng);
  draw_unit(g, child, NULL, okp, &a, &x);
  okp[a] = 0;
  draw_unit(g, child, NULL, okp, &b, &y);
  child[a * ns + x]--, child[b * ns + x]++;
  child[b * ns + y]--, child[a * ns + y]++;
}

/* ---- cyclic local search, a grain of one site's devices a move ---- */

/* gsum and size from cnt: O(D_pp x sites^2). */
static void sums_build(gcma *g, const int *cnt) {
  gcma_sites *st = g->st;
  int ns = st->ns;
  for (int a = 0; a < g->ng; a++) {
    const int *row = cnt + a * ns;
    st->size[a] = 0;
    for (int y = 0; y < ns; y++) st->size[a] += row[y];
    for (int x = 0; x < ns; x++) {
      const double *wx = st->w + (size_t)x * ns;
      double sum = 0;
      for (int y = 0; y < ns; y++) sum += row[y] * wx[y];
      st->gsum[a * ns + x] = sum;
    }
  }
}

/* The nearest weight from a device of site x to the others of group a
 * (gcma.c's own[]); INFINITY for a lone device. */
static double own_near(const gcma *g, const int *cnt, int a, int x) {
  const gcma_sites *st = g->st;
  const double *wx = st->w + (size_t)x * st->ns;
  double best = INFINITY;
  for (int y = 0; y < st->ns; y++)
    if (cnt[a * st->ns + y] - (y == x) > 0 && wx[y] < best) best = wx[y];
  return best;
}

/* gcma.c's move_gain for a device of site x moving from group a to b. */
static double sites_gain(const gcma *g, const int *cnt, int x, int a, int b) {
  const gcma_sites *st = g->st;
  int ns = st->ns;
  if (g->gain == GCMA_GAIN_CUT)
    return st->gsum[a * ns + x] - st->w[(size_t)x * ns + x] - st->gsum[b * ns + x];
  double mean = st->size[b] ? st->gsum[b * ns + x] / st->size[b] : 0;
  return mean - own_near(g, cnt, a, x);
}

static bool movable(const gcma *g, const int *cnt, int a, int x, int q) {
  int i = a * g->st->ns + x;
  return cnt[i] - g->st->lock[i] >= q;
}

/* gcma.c's best_move on sites: the best move of q devices out of group s
 * (*x, *to), its gain; *x = -1 (and -inf) when none. */
static double sites_best_move(const gcma *g, const int *cnt, int s, int q,
                              int *x, int *to) {
  int ns = g->st->ns, pick = -1;
  double best = -INFINITY;
  *x = *to = -1;
  if (g->gain == GCMA_GAIN_PIPELINE) {
    double near = INFINITY;
    for (int y = 0; y < ns; y++)
      if (movable(g, cnt, s, y, q) && own_near(g, cnt, s, y) < near)
        near = own_near(g, cnt, s, y), pick = y;
    if (pick < 0) return best;
  }
  for (int y = 0; y < ns; y++) {
    if ((pick >= 0 && y != pick) || !movable(g, cnt, s, y, q)) continue;
    for (int b = 0; b < g->ng; b++) {
      if (b == s) continue;
      double gain = sites_gain(g, cnt, y, s, b);
      if (gain > best) best = gain, *x = y, *to = b;
    }
  }
  return best;
}

/* gcma.c's close_gain: the gain of closing the cycle from s back to s0,
 * and the site *who that does it. */
static double sites_close_gain(const gcma *g, const int *cnt, int s, int s0,
                               int x, int q, int *who) {
  *who = x;
  if (g->gain == GCMA_GAIN_PIPELINE) return sites_gain(g, cnt, x, s, s0);
  double best = -INFINITY;
  for (int y = 0; y < g->st->ns; y++)
    if (movable(g, cnt, s, y, q) && sites_gain(g, cnt, y, s, s0) > best)
      best = sites_gain(g, cnt, y, s, s0), *who = y;
  return best;
}

/* q devices of site x from group a to b, locked there; gsum kept when
 * sums. */
static void sites_move(gcma *g, int *cnt, int x, int a, int b, int q,
                       bool sums) {
  gcma_sites *st = g->st;
  int ns = st->ns;
  cnt[a * ns + x] -= q, cnt[b * ns + x] += q;
  st->lock[b * ns + x] += q;
  st->size[a] -= q, st->size[b] += q;
  if (!sums) return;
  for (int z = 0; z < ns; z++) {
    double wzx = st->w[(size_t)z * ns + x] * q;
    st->gsum[a * ns + z] -= wzx;
    st->gsum[b * ns + z] += wzx;
  }
}

/* gcma.c's cycle on sites, moves of q devices: the chain from the group
 * with the best move, cut at its best prefix, kept when positive. The
 * kept gain, 0 when nothing was kept, -1 when no group can move q. */
static double sites_cycle(gcma *g, int *cnt, int q, char *touched) {
  gcma_sites *st = g->st;
  int s0 = -1, x, to, m = 0, chain = 2 * g->ng;
  memcpy(st->save, cnt, (size_t)st->m * sizeof *cnt);
  memcpy(st->lsave, st->lock, (size_t)st->m * sizeof *cnt);
  sums_build(g, cnt);
  double top = -INFINITY;
  for (int s = 0; s < g->ng; s++) {
    double gain = sites_best_move(g, cnt, s, q, &x, &to);
    if (x >= 0 && gain > top) top = gain, s0 = s;
  }
  if (s0 < 0) return -1;
  for (int si = s0; m < chain;) {
    double gain = sites_best_move(g, cnt, si, q, &x, &to);
    if (x < 0) break;
    st->eps[m] = gain;
    st->tau[m] = si == s0 ? -INFINITY
                          : sites_close_gain(g, cnt, si, s0, x, q, &st->tau_x[m]);
    st->mv_x[m] = x, st->mv_from[m] = si, st->mv_to[m++] = to;
    sites_move(g, cnt, x, si, to, q, true);
    if ((si = to) == s0) {
      st->tau[m - 1] = gain, st->tau_x[m - 1] = x;
      break;
    }
  }
  double run = 0, kept = 0;
  int l = -1;
  for (int i = 0; i < m; i++) {
    if (run + st->tau[i] > kept) kept = run + st->tau[i], l = i;
    run += st->eps[i];
  }
  memcpy(cnt, st->save, (size_t)st->m * sizeof *cnt);
  memcpy(st->lock, st->lsave, (size_t)st->m * sizeof *cnt);
  for (int i = 0; i < l; i++) {
    sites_move(g, cnt, st->mv_x[i], st->mv_from[i], st->mv_to[i], q, false);
    touched[st->mv_to[i]] = 1;
  }
  if (l >= 0) {
    sites_move(g, cnt, st->tau_x[l], st->mv_from[l], s0, q, false);
    touched[s0] = 1;
  }
  return kept;
}

static void sites_local_search(gcma *g, int *cnt) {
  gcma_sites *st = g->st;
  int q = grain(g);
  char *touched = st->gmark;
  memset(touched, 0, (size_t)g->ng);
  memset(st->lock, 0, (size_t)st->m * sizeof *st->lock);
  for (int c = 0; c < g->ng; c++) {
    if (sites_cycle(g, cnt, q, touched) < 0) break;
    int all = 1;
    for (int s = 0; s < g->ng; s++) all &= touched[s];
    if (all) break;
  }
  assert(counts_balanced(g, cnt));
}

/* ---- rebuild mutation ---- */

static int cmp_pair(const void *a, const void *b) {
  const rb_pair *p = a, *q = b;
  if (p->w != q->w) return p->w < q->w ? -1 : 1;
  if (p->own != q->own) return q->own - p->own;
  if (p->y != q->y) return p->y - q->y;
  return p->x - q->x;
}

/* The pipeline order of cnt's groups and each boundary's bottleneck, as
 * gcma_rebuild reads them (the cost model over the realised groups). */
static void sites_necks(gcma *g, const int *cnt) {
  gcma_sites *st = g->st;
  int k = g->k;
  counts_to_groups(g, cnt, st->groups);
  cost_pp(g->c, st->groups, st->order, g->cs);
  for (int i = 0; i + 1 < g->ng; i++)
    st->neck[i] = cost_group_pair(g->c, st->groups + st->order[i] * k,
                                  st->groups + st->order[i + 1] * k, NULL,
                                  g->cs);
}

/* pick[x] := the rebuilt group's devices per site: the neighbour ref's
 * devices paired greedily, cheapest site pair first, with the devices of
 * the unguarded groups (avail[x]). */
static void sites_pick(gcma *g, const int *cnt, int tgt, int ref, int side) {
  gcma_sites *st = g->st;
  int ns = st->ns, np = 0;
  rb_pair *p = st->pairs;
  for (int x = 0; x < ns; x++) {
    st->need[x] = cnt[ref * ns + x], st->own[x] = cnt[tgt * ns + x];
    st->avail[x] = st->pick[x] = 0;
    for (int a = 0; a < g->ng; a++)
      if (!st->guard[a]) st->avail[x] += cnt[a * ns + x];
  }
  for (int y = 0; y < ns; y++)
    for (int x = 0; x < ns && st->need[y]; x++)
      if (st->avail[x])
        p[np++] = (rb_pair){side ? st->pp[y * ns + x] : st->pp[x * ns + y],
                            st->own[x] > 0, y, x};
  qsort(p, (size_t)np, sizeof *p, cmp_pair);
  for (int i = 0; i < np; i++) {
    int y = p[i].y, x = p[i].x;
    int q = st->need[y] < st->avail[x] ? st->need[y] : st->avail[x];
    st->need[y] -= q, st->avail[x] -= q, st->pick[x] += q;
  }
}

/* gcma_rebuild on sites: one group of a random boundary of the pipeline
 * order re-formed from the devices with the cheapest pipeline edges to its
 * neighbour; the devices it takes from other unguarded groups (those first
 * in group order) are replaced there by the ones it leaves. */
static void sites_rebuild(gcma *g, int *cnt) {
  gcma_sites *st = g->st;
  int ng = g->ng, ns = st->ns;
  if (ng < 2) return;
  sites_necks(g, cnt);
  int boundary = (int)gsl_rng_uniform_int(g->rng, (unsigned long)(ng - 1));
  int side = (int)gsl_rng_uniform_int(g->rng, 2);
  int tgt = st->order[boundary + side], ref = st->order[boundary + 1 - side];
  memset(st->guard, 0, (size_t)ng * sizeof *st->guard);
  for (int i = 0; i + 1 < ng; i++)
    if (st->neck[i] < st->neck[boundary])
      st->guard[st->order[i]] = st->guard[st->order[i + 1]] = 1;
  st->guard[tgt] = 0, st->guard[ref] = 1;
  sites_pick(g, cnt, tgt, ref, side);
  memset(st->outg, 0, (size_t)st->m * sizeof *st->outg);
  for (int x = 0; x < ns; x++) { /* outsiders: what tgt lacks at x */
    int want = st->pick[x] - st->own[x];
    for (int a = 0; a < ng && want > 0; a++) {
      if (a == tgt || st->guard[a]) continue;
      int q = cnt[a * ns + x] < want ? cnt[a * ns + x] : want;
      st->outg[a * ns + x] = q, want -= q;
    }
  }
  int lx = 0; /* tgt's devices left over, site by site, fill the places */
  for (int a = 0; a < ng; a++) {
    if (a == tgt) continue;
    for (int x = 0; x < ns; x++) {
      int q = st->outg[a * ns + x];
      cnt[a * ns + x] -= q;
      while (q > 0) {
        while (st->own[lx] <= st->pick[lx]) lx++;
        int give = st->own[lx] - st->pick[lx] < q ? st->own[lx] - st->pick[lx] : q;
        cnt[a * ns + lx] += give, st->own[lx] -= give, q -= give;
      }
    }
  }
  memcpy(cnt + tgt * ns, st->pick, (size_t)ns * sizeof *cnt);
  assert(counts_balanced(g, cnt));
}

/* ---- the representation ---- */

static void sites_breed(gcma *g, const int *p1, const int *p2, int *before,
                        int *after) {
  sites_crossover(g, p1, p2, after);
  sites_mutate_if_clone(g, p1, p2, after);
  if (gsl_rng_uniform(g->rng) < GCMA_REBUILD_P) sites_rebuild(g, after);
  memcpy(before, after, (size_t)g->st->m * sizeof *after);
  sites_local_search(g, after);
}

const gcma_repr gcma_site_counts = {.of_groups = counts_of_groups,
                                    .to_groups = counts_to_groups,
                                    .breed = sites_breed,
                                    .same = counts_same};
