/* cost_parts: the working memory models/cost.c and models/cost_solve.c
 * share (a cost_scratch). Internal to models/. */
#ifndef MODELS_COST_PARTS_H
#define MODELS_COST_PARTS_H

#include "models/cost.h"

struct cost_scratch {
  int kmax, nmax;
  double *w;       /* kmax^2: a matching's weights */
  double *vals;    /* kmax^2: its sorted distinct values */
  int *pos;        /* kmax^2: raise_threshold's places of vals in w */
  int *row_of;     /* kmax: column -> matched row, -1 if free */
  int *col_of;     /* kmax: row -> matched column */
  int *stamp;      /* kmax: visit marks of one augmenting search */
  int epoch;
  double *gw;      /* nmax^2: group-pair weights */
  int *order;      /* nmax */
  int *tmp;        /* nmax */
  int *match;      /* kmax */
  int *idx;        /* kmax */
  double *hk;      /* Held–Karp: (1 << nmax) x nmax path costs, or NULL */
  signed char *hk_prev; /* Held–Karp: predecessor of the last node */
};

#endif
