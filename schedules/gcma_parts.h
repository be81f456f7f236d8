/* gcma_parts: the state GCMA's files share -- gcma.c (the state, the
 * operators: crossover, local search, rebuild) and gcma_evolve.c (the
 * genetic algorithm over them). Internal to schedules/.
 * circle: internal header of GCMA's files (gcma.c, gcma_evolve.c,
 * gcma_sites.c): its state holds gcma.h's types, so it includes gcma.h and
 * gcma.c includes it. */
#ifndef SCHEDULES_GCMA_PARTS_H
#define SCHEDULES_GCMA_PARTS_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>

#include "schedules/gcma.h"

/* Share of offspring that get the rebuild mutation (gcma.c's top). 0.1 and
 * 0.5 reach spot's optimum on seeds 0-7 as well; 0.25 reached it soonest
 * (bench_schedule) and costs about 4 % more CPU than none. */
#define GCMA_REBUILD_P 0.25

/* GCMA over site counts (gcma_sites.c): the state of the other
 * representation. */
typedef struct gcma_sites gcma_sites;

/* What the genetic algorithm (gcma_evolve.c) breeds: an individual is
 * gcma.len ints -- a label per device (gcma.c's operators) or a group x site count
 * matrix (gcma_sites.c's). The loop, the broods, the replacement and the
 * random draws of parents are the same for both. */
typedef struct gcma_repr {
  /* ind := the individual of partition groups (group-major) */
  void (*of_groups)(gcma *g, const int *groups, int *ind);
  /* groups := the partition ind stands for, canonical (group-major, each
   * group's devices increasing) */
  void (*to_groups)(gcma *g, const int *ind, int *groups);
  /* a child of p1 and p2: before the local search, and after it */
  void (*breed)(gcma *g, const int *p1, const int *p2, int *before,
                int *after);
  /* whether a and b are the same partition (groups unordered) */
  bool (*same)(gcma *g, const int *a, const int *b);
} gcma_repr;

struct gcma {
  const cost_ctx *c;  /* borrowed */
  const gcma_repr *repr; /* labels, or site counts (then st) */
  gcma_sites *st;     /* owned; NULL when breeding labels */
  int len;            /* ints per individual: n, or D_pp x sites */
  gcma_gain gain;
  /* the gain's edge weights per site pair (wtab[x * wns + y]) when the
   * cost context has no device-pair overrides, else NULL: O(sites^2) */
  const int *wsite;   /* borrowed: device -> site */
  int wns;
  double *wtab;
  int n, ng, k;       /* devices, groups (D_pp), group size (D_dp) */
  gsl_rng *rng;
  /* local-search working memory */
  double *sum;        /* n*ng: sum of w(v, u) over members u != v of group */
  double *ssum;       /* wns*ng (with wtab): sum of w(site x, u) over the
                         members u of a group, in increasing u */
  int *glist;         /* n: the devices by group, increasing in each */
  int *size;          /* ng: current group sizes (vary inside a cycle) */
  double *own;        /* n: pipeline gain: nearest member of own group */
  int *members;       /* n: one group's devices, in increasing order */
  char *locked, *touched;
  int *mv_v, *mv_to;  /* the moves of the current cycle */
  double *eps, *tau;  /* their gains, and the gain of closing there */
  int *tau_v;         /* the device that closes there */
  int *save;          /* labels at the start of the cycle */
  /* crossover working memory */
  int *perm, *fixed, *overlap, *rename, *spare;
  /* rebuild-mutation working memory */
  cost_scratch *cs;
  int *rb_groups, *rb_order, *rb_pick, *rb_guard;
  double *rb_neck;
  char *rb_taken, *rb_done;
  /* population */
  int pop;
  int *plabel;        /* pop x repr->len: the individuals */
  double *pscore;
};

/* The labels' representation (gcma_evolve.c). */
extern const gcma_repr gcma_labels;

/* The state and representation of GCMA over site counts for g's context,
 * drawing from g->rng: NULL when the context has device-pair overrides
 * (gcma_sites.c). */
gcma_sites *gcma_sites_new(gcma *g);
void gcma_sites_free(gcma_sites *st); /* NULL is fine */
extern const gcma_repr gcma_site_counts;

/* Whether label is balanced: D_pp groups of exactly D_dp devices (for
 * asserts: defined without NDEBUG only). */
bool gcma_balanced(const gcma *g, const int *label);

#endif
