/* cost_parts: the working memory models/cost.c and models/cost_solve.c
 * share (a cost_scratch). Internal to models/.
 * circle: internal header of the cost model's files (cost.c, cost_flow.c,
 * cost_memo.c, cost_solve.c; two tests): its scratch holds cost.h's types,
 * so it includes cost.h and cost.c includes it. */
#ifndef MODELS_COST_PARTS_H
#define MODELS_COST_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "models/cost.h"

/* The memos' entries (cost_scratch_new): a 64-device search of 4900
 * trials meets about 40,000 group pairs and 10,000 partitions; entries
 * are (2 + key words) x 8 bytes (2 MiB and 0.3 MiB there). */
#define COST_MEMO_PAIRS 65536
#define COST_MEMO_PATHS 4096

/* A memo of doubles keyed by `words` 64-bit words (cost_memo.c). */
typedef struct cost_memo {
  uint64_t *slots; /* cap entries of words + 2, allocated on first use */
  int words;
  size_t cap, n;   /* cap: a power of 2; emptied at half full */
  uint64_t ctx;    /* the serial of the context it holds */
} cost_memo;

/* cost_bottleneck_flow's working memory, grown on first use to the
 * largest pair of groups seen (then a score allocates nothing). */
typedef struct cost_flow {
  size_t cap_e, cap_n;
  int *f, *save;   /* cap_e: the flow, and the last infeasible probe's */
  double *vals;    /* cap_e: the thresholds still to search */
  int *rs, *rd, *par, *queue; /* cap_n: residuals, search tree, queue */
  int wa, wb;      /* 64-bit words of a set of rows, of columns */
  uint64_t *adj;   /* a row's usable columns (wb words each) */
  uint64_t *snd;   /* a column's rows that send to it (wa words each) */
  uint64_t *seen;  /* wa + wb: rows and columns a search reached */
} cost_flow;

struct cost_scratch {
  int kmax, nmax;
  /* the matching over the devices' (cost_scratch_square; NULL until its
   * first use: above 64 replicas without overrides none is made) */
  double *w;       /* kmax^2: a matching's weights */
  double *vals;    /* kmax^2: its sorted distinct values */
  int *pos;        /* kmax^2: raise_threshold's places of vals in w */
  int *row_of;     /* kmax: column -> matched row, -1 if free */
  int *col_of;     /* kmax: row -> matched column */
  int *stamp;      /* kmax: visit marks of one augmenting search */
  int epoch;
  double *gw;      /* nmax^2: group-pair weights */
  double *wt;      /* nmax^2: Held–Karp's weights, transposed, +inf diagonal */
  int *order;      /* nmax */
  int *tmp;        /* nmax */
  int *match;      /* kmax */
  int *idx;        /* kmax */
  double *hk;      /* Held–Karp: (1 << nmax) x nmax path costs, or NULL */
  /* cost.c's memos (cost_memo.c): group-pair values by the groups'
   * sorted sites, TSP path values by the sorted group signatures */
  cost_memo pairs, paths;
  int sw;          /* words per group signature: 1 up to 8 members, else 2 */
  uint64_t *sig;   /* nmax x sw: cost_pp's group signatures */
  uint64_t *key;   /* nmax x sw: their sorted copy */
  /* groups above the memo's reach (cost.c's pair_value_sites): their
   * classes, their weights and the flow between them, grown on first use */
  cost_flow flow;
  int ncls;        /* sites the buffers below hold */
  int *cls_at, *cls_cnt, *cls_of; /* 2 x ncls: both groups' sites, counts;
                                     ncls: site -> class, -1 unseen */
  double *cls_v;   /* ncls^2: the classes' pipeline weights */
  int *cls_flow;   /* ncls^2: a transport at the value */
  int *cls_next;   /* kmax: a group's members of one class, linked */
};

/* s's kmax^2 arrays (w, vals, pos), made on the first call: the matching
 * over the devices needs them, the one over site classes does not.
 * Returns s->w. */
double *cost_scratch_square(cost_scratch *s);

/* The pairing a cold search finds among the edges <= t of the k x k
 * matrix w, into match (as cost_bottleneck_match's, which is this search
 * at its value); false when there is none. */
bool cost_match_at(cost_scratch *s, int k, const double *w, double t,
                   int *match);

/* cost_bottleneck_match's value for a matrix whose rows come in da classes
 * of equal rows (ca[x] rows each) and whose columns come in db classes
 * (cb[y] each), v[x * db + y] the weight of the classes' edges (sum of ca =
 * sum of cb). The same double (the least feasible threshold), found by
 * Hall's condition over unions of the classes of the side with fewer:
 * O(2^min(da, db)) a threshold. */
#define COST_CLASSES_MAX 8
double cost_bottleneck_classes(int da, const int *ca, int db, const int *cb,
                               const double *v);

/* cost_bottleneck_classes's value for any number of classes (the same
 * double), by a transport problem (cost_flow.c); flow (if not NULL, da x
 * db) receives a transport at that value: flow[x * db + y] units of row
 * class x sent to column class y. Working memory in w. */
double cost_bottleneck_flow(int da, const int *ca, int db, const int *cb,
                            const double *v, int *flow, cost_flow *w);
void cost_flow_free(cost_flow *w);

/* An empty memo of cap entries keyed by words words; nothing allocated. */
void cost_memo_init(cost_memo *m, int words, size_t cap);
void cost_memo_free(cost_memo *m);

/* Whether m holds key under the context of serial: then *v is its value;
 * if not, *at is the slot cost_memo_put fills (before the next get).
 * Empties a memo of another context or a full one first. */
bool cost_memo_get(cost_memo *m, uint64_t serial, const uint64_t *key,
                   double *v, size_t *at);
void cost_memo_put(cost_memo *m, size_t at, const uint64_t *key, double v);

#endif
