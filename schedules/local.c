/* local: see local.h. Iterated first-improvement local search. Every
 * evaluation is a full objective call (a simulation, milliseconds), so the
 * budget is counted in evaluations, and the neighbourhood is ordered by
 * what moves a simulated iteration most:
 * - whole rows (swaps and reversed runs of pipelines): the pipelines stay
 *   as they are, but every data-parallel group's ring (rank order = row
 *   order) and its root (row 0) change. The cost model's DataPCost sums
 *   over all members and cannot see ring order, yet on worldwide under tcp
 *   one row swap of GCMA's choice changes the simulated iteration by up to
 *   a third;
 * - whole columns (swaps and reversed runs: groups exchange stage
 *   positions in every pipeline; the first stage carries the embeddings,
 *   neighbours change);
 * - swaps guided by the cost model's bottleneck: re-pairings at the worst
 *   pipeline boundary, and the worst data-parallel member moved to another
 *   group;
 * - plain device swaps: all pairs on small cases, a random sample on large.
 * The moves of the current point are shuffled and taken in that order; the
 * first one that improves is kept and a new neighbourhood drawn. When none
 * improves (a local optimum, or a plateau), the walk restarts from the next
 * unused start, then from the best point kicked by a few random moves. */
#include "schedules/local.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "schedules/schedule_method.h"

/* Plain swaps: all pairs up to this many, else this many drawn. */
#define LOCAL_ALL_SWAPS 256
#define LOCAL_SAMPLED_SWAPS 64
/* Random moves of a kick. */
#define LOCAL_KICK 3

typedef enum local_kind {
  LOCAL_ROW_SWAP,     /* rows i and j exchanged */
  LOCAL_ROW_REVERSE,  /* rows i .. j in reverse order */
  LOCAL_COL_SWAP,     /* columns i and j exchanged */
  LOCAL_COL_REVERSE,  /* columns i .. j in reverse order */
  LOCAL_CELL_SWAP     /* entries i and j of device[] exchanged */
} local_kind;

typedef struct local_move {
  local_kind kind;
  int i, j;
} local_move;

typedef struct local_walk {
  const cost_ctx *c;           /* borrowed */
  const search_objective *obj; /* borrowed */
  search_log *log;             /* borrowed */
  gsl_rng *rng;
  long budget;
  int R, S, n;
  alloc *best, *cur, *trial;
  double best_s, cur_s;
  local_move *moves;
  int nmoves, cap;
  int cls[3];                  /* where columns, guided, plain swaps begin */
  int *group;                  /* R: one column's devices */
} local_walk;

static double evaluate(local_walk *w, const alloc *a, err *e) {
  double v = w->obj->alloc(w->obj->ctx, a, e);
  if (isnan(v) && e && e->code == ERR_OK)
    err_set(e, ERR_RANGE, "%s: the objective returned no value",
            w->obj->name ? w->obj->name : "objective");
  /* The first value is the best so far even when it is +inf (nothing
   * fits in memory): best always holds a placement that was evaluated. */
  if (!isnan(v) && (search_log_push(w->log, v) || w->log->n == 1)) {
    w->best_s = v;
    memcpy(w->best->device, a->device, (size_t)w->n * sizeof(int));
  }
  return v;
}

static void swap_int(int *a, int *b) {
  int t = *a;
  *a = *b;
  *b = t;
}

/* How many rows, columns or cells a move of kind k indexes in a. */
static int move_bound(const alloc *a, local_kind k) {
  switch (k) {
    case LOCAL_ROW_SWAP:
    case LOCAL_ROW_REVERSE: return a->replicas;
    case LOCAL_COL_SWAP:
    case LOCAL_COL_REVERSE: return a->stages;
    case LOCAL_CELL_SWAP: return a->replicas * a->stages;
  }
  assert(!"unknown move");
  return 0;
}

/* Every move permutes the devices of a: a valid allocation stays valid
 * (asserted on the way out). */
static void apply_move(alloc *a, local_move m) {
  int S = a->stages, bound = move_bound(a, m.kind);
  assert(m.i >= 0 && m.j >= 0 && m.i < bound && m.j < bound);
  (void)bound;
  switch (m.kind) {
  case LOCAL_ROW_SWAP:
    for (int s = 0; s < S; s++)
      swap_int(&a->device[m.i * S + s], &a->device[m.j * S + s]);
    break;
  case LOCAL_ROW_REVERSE:
    for (int lo = m.i, hi = m.j; lo < hi; lo++, hi--)
      for (int s = 0; s < S; s++)
        swap_int(&a->device[lo * S + s], &a->device[hi * S + s]);
    break;
  case LOCAL_COL_SWAP:
    for (int r = 0; r < a->replicas; r++)
      swap_int(&a->device[r * S + m.i], &a->device[r * S + m.j]);
    break;
  case LOCAL_COL_REVERSE:
    for (int lo = m.i, hi = m.j; lo < hi; lo++, hi--)
      for (int r = 0; r < a->replicas; r++)
        swap_int(&a->device[r * S + lo], &a->device[r * S + hi]);
    break;
  case LOCAL_CELL_SWAP:
    swap_int(&a->device[m.i], &a->device[m.j]);
    break;
  }
  assert(alloc_validate(a, a->replicas, S, a->replicas * S, "local move",
                        NULL) == ERR_OK);
}

static void add(local_walk *w, local_kind kind, int i, int j) {
  if (w->nmoves == w->cap) return;  /* cap sized in local_search */
  w->moves[w->nmoves++] = (local_move){kind, i, j};
}

/* The moves guided by the cost model's bottlenecks of a: the endpoints of
 * the worst pipeline edge re-paired within their columns, and the member
 * of the worst data-parallel group that attains it swapped, row kept, into
 * every other column. */
static void add_guided(local_walk *w, const alloc *a) {
  int R = w->R, S = w->S;
  if (S > 1) {
    int bs = 0, br = 0;
    double worst = -INFINITY;
    for (int s = 0; s + 1 < S; s++) {
      int r;
      double v = cost_boundary(w->c, a, s, &r);
      if (v > worst) worst = v, bs = s, br = r;
    }
    for (int r = 0; r < R; r++)
      if (r != br) {
        add(w, LOCAL_CELL_SWAP, br * S + bs, r * S + bs);
        add(w, LOCAL_CELL_SWAP, br * S + bs + 1, r * S + bs + 1);
      }
  }
  int ws = 0, wd = -1;
  double worst = -INFINITY;
  for (int s = 0; s < S; s++) {
    for (int r = 0; r < R; r++) w->group[r] = alloc_at(a, r, s);
    int d;
    double v = cost_dp_group(w->c, w->group, &d);
    if (v > worst) worst = v, ws = s, wd = d;
  }
  for (int r = 0; r < R && wd >= 0; r++)
    if (alloc_at(a, r, ws) == wd)
      for (int s = 0; s < S; s++)
        if (s != ws) add(w, LOCAL_CELL_SWAP, r * S + ws, r * S + s);
}

/* Shuffles the moves added since `from`. */
static void shuffle_from(local_walk *w, int from) {
  if (w->nmoves - from > 1)
    gsl_ran_shuffle(w->rng, w->moves + from, (size_t)(w->nmoves - from),
                    sizeof *w->moves);
}

/* The neighbourhood of a: its classes in the order of the file comment,
 * each shuffled. */
static void neighbourhood(local_walk *w, const alloc *a) {
  int R = w->R, S = w->S, n = w->n;
  w->nmoves = 0;
  for (int i = 0; i < R; i++)
    for (int j = i + 1; j < R; j++) {
      add(w, LOCAL_ROW_SWAP, i, j);
      if (j - i >= 2) add(w, LOCAL_ROW_REVERSE, i, j);
    }
  shuffle_from(w, 0);
  int from = w->cls[0] = w->nmoves;
  for (int i = 0; i < S; i++)
    for (int j = i + 1; j < S; j++) {
      add(w, LOCAL_COL_SWAP, i, j);
      if (j - i >= 2) add(w, LOCAL_COL_REVERSE, i, j);
    }
  shuffle_from(w, from);
  w->cls[1] = from = w->nmoves;
  add_guided(w, a);
  shuffle_from(w, from);
  w->cls[2] = from = w->nmoves;
  if ((long)n * (n - 1) / 2 <= LOCAL_ALL_SWAPS) {
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) add(w, LOCAL_CELL_SWAP, i, j);
  } else {
    for (int t = 0; t < LOCAL_SAMPLED_SWAPS; t++) {
      int i = (int)gsl_rng_uniform_int(w->rng, (unsigned long)n);
      int j = (i + 1 + (int)gsl_rng_uniform_int(w->rng, (unsigned long)(n - 1))) % n;
      add(w, LOCAL_CELL_SWAP, i, j);
    }
  }
  shuffle_from(w, from);
}

/* One descent step: the first move of cur's shuffled neighbourhood that
 * improves on cur is applied. Returns 1 when one did, 0 when none did (or
 * the budget ran out first), -1 on an objective error. */
static int descend(local_walk *w, err *e) {
  neighbourhood(w, w->cur);
  for (int k = 0; k < w->nmoves && w->log->n < w->budget; k++) {
    memcpy(w->trial->device, w->cur->device, (size_t)w->n * sizeof(int));
    apply_move(w->trial, w->moves[k]);
    double v = evaluate(w, w->trial, e);
    if (isnan(v)) return -1;
    if (v < w->cur_s) {
      alloc *t = w->cur;
      w->cur = w->trial;
      w->trial = t;
      w->cur_s = v;
      return 1;
    }
  }
  return 0;
}

/* The walk jumps to the best point moved by LOCAL_KICK random row or
 * column moves (plain swaps only when there are neither): a kick keeps the
 * pipelines and groups and reorders them, as a double bridge does a tour;
 * device-level changes are left to the descent that follows. Returns the
 * objective there (NaN on error). */
static double kick(local_walk *w, err *e) {
  memcpy(w->cur->device, w->best->device, (size_t)w->n * sizeof(int));
  for (int k = 0; k < LOCAL_KICK; k++) {
    neighbourhood(w, w->cur);
    int hi = w->cls[1] ? w->cls[1] : w->nmoves;
    apply_move(w->cur, w->moves[gsl_rng_uniform_int(w->rng, (unsigned long)hi)]);
  }
  return w->cur_s = evaluate(w, w->cur, e);
}

static int move_capacity(int R, int S) {
  int n = R * S;
  long plain = (long)n * (n - 1) / 2;
  if (plain > LOCAL_ALL_SWAPS) plain = LOCAL_SAMPLED_SWAPS;
  return R * R + S * S + 2 * R + S + (int)plain;
}

/* Starts ordered by their value, best first (ties: given order). */
static void order_starts(const double *v, int *order, int nstarts) {
  for (int i = 0; i < nstarts; i++) order[i] = i;
  for (int i = 1; i < nstarts; i++)
    for (int j = i; j > 0 && v[order[j]] < v[order[j - 1]]; j--)
      swap_int(&order[j], &order[j - 1]);
}

/* The walk's generator, seeded from seed, and its allocations. */
static void walk_alloc(local_walk *w, uint64_t seed) {
  w->rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(w->rng, (unsigned long)seed);
  w->best = alloc_new(w->R, w->S);
  w->cur = alloc_new(w->R, w->S);
  w->trial = alloc_new(w->R, w->S);
  w->moves = mem_alloc((size_t)w->cap * sizeof *w->moves);
  w->group = mem_alloc((size_t)w->R * sizeof *w->group);
}

static void walk_free(local_walk *w) {
  alloc_free(w->best);
  alloc_free(w->cur);
  alloc_free(w->trial);
  free(w->moves);
  free(w->group);
  gsl_rng_free(w->rng);
}

/* Scores every start into start_v (each one logged). false on an objective
 * error. */
static bool score_starts(local_walk *w, const alloc *const *starts,
                         int nstarts, double *start_v, err *e) {
  for (int k = 0; k < nstarts; k++)
    if (isnan(start_v[k] = evaluate(w, starts[k], e))) return false;
  return true;
}

/* Descends from the best start; at each local optimum moves on to the next
 * start (by value), then to kicks of the best point, until the budget is
 * spent. false on an objective error. */
static bool walk(local_walk *w, const alloc *const *starts,
                 const double *start_v, int *order, int nstarts, err *e) {
  size_t bytes = (size_t)w->n * sizeof(int);
  order_starts(start_v, order, nstarts);
  memcpy(w->cur->device, starts[order[0]]->device, bytes);
  w->cur_s = start_v[order[0]];
  for (int next = 1; w->n > 1 && w->log->n < w->budget;) {
    int step = descend(w, e);
    if (step < 0) return false;
    if (step > 0 || w->log->n >= w->budget) continue;
    if (next < nstarts) {  /* a local optimum: the next start */
      memcpy(w->cur->device, starts[order[next]]->device, bytes);
      w->cur_s = start_v[order[next++]];
    } else if (isnan(kick(w, e))) {
      return false;
    }
  }
  return true;
}

search_result *local_search(const cost_ctx *c, const search_objective *obj,
                            const alloc *const *starts, int nstarts,
                            const search_opts *o, err *e) {
  int R = starts[0]->replicas, S = starts[0]->stages;
  long budget = o->trials >= 0 ? o->trials : search_sim_trials(R * S);
  if (budget < nstarts) budget = nstarts;
  search_log log;
  search_log_init(&log, o, budget);
  local_walk w = {.c = c, .obj = obj, .log = &log, .budget = budget,
                  .R = R, .S = S, .n = R * S, .best_s = INFINITY,
                  .cap = move_capacity(R, S)};
  walk_alloc(&w, o->seed);
  double *start_v = mem_alloc((size_t)nstarts * sizeof *start_v);
  int *order = mem_alloc((size_t)nstarts * sizeof *order);
  search_result *r = NULL;
  if (score_starts(&w, starts, nstarts, start_v, e) &&
      walk(&w, starts, start_v, order, nstarts, e)) {
    r = search_result_new(schedule_method_name(SCHEDULE_SIM), w.best, c);
    w.best = NULL;
    r->objective_s = w.best_s;
    r->start_s = start_v[0];
    search_log_finish(&log, r);
  }
  if (!r) free(log.best);
  walk_free(&w);
  free(start_v);
  free(order);
  return r;
}
