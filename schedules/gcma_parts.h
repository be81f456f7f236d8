/* gcma_parts: the state GCMA's files share -- gcma.c (the state, the
 * operators: crossover, local search, rebuild) and gcma_evolve.c (the
 * genetic algorithm over them). Internal to schedules/. */
#ifndef SCHEDULES_GCMA_PARTS_H
#define SCHEDULES_GCMA_PARTS_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>

#include "schedules/gcma.h"

/* Share of offspring that get the rebuild mutation (gcma.c's top). 0.1 and
 * 0.5 reach spot's optimum on seeds 0-7 as well; 0.25 reached it soonest
 * (bench_schedule) and costs about 4 % more CPU than none. */
#define GCMA_REBUILD_P 0.25

struct gcma {
  const cost_ctx *c;  /* borrowed */
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
  int *plabel;        /* pop*n labels */
  double *pscore;
};

/* Whether label is balanced: D_pp groups of exactly D_dp devices (for
 * asserts: defined without NDEBUG only). */
bool gcma_balanced(const gcma *g, const int *label);

#endif
