/* fill: see fill.h. Each solve is progressive filling with a heap of
 * levels (a resource's remaining capacity over its unfrozen weight, a
 * flow's cap over its weight, a caught-up flow's upstream rate over its
 * weight), the least of which freezes its flows: O((E + R) log(E + R))
 * for E (flow, resource) pairs and R resources. A phase takes one solve
 * per event: a start, a departure, a flow catching up with its upstream.
 * A flow that has caught up with its upstream stays held to it until that
 * one is done: a solve gives every flow its max-min rate at its own
 * weight, then caps the held ones at their upstream's rate (down the
 * chain) and solves again so that what they leave goes to the others
 * (held to a rate at or above its own, a flow that falls behind loses
 * nothing; no catch-up chatters).
 * Invariant: between solves every active flow has its progress rate,
 * never above its upstream's while held, and every saturated resource a
 * finite level. */
#include "models/fill.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/mem.h"

/* The least unfrozen weight a resource's level divides by (rounding may
 * leave a few ulps where flows remain). */
#define WSUM_FLOOR 1e-300
/* Work left below which a flow is done, and by which a flow counts as
 * caught up with its upstream: progress is a fraction of 1, and rate x dt
 * rounds by about an ulp at each step. */
#define WORK_EPS 1e-12
/* Events per flow past which the rest of a phase goes at the current
 * rates (a start, a departure and a few catch-ups each are the most a
 * phase needs; the bound only stops a chatter of catch-ups that rounding
 * could cause). */
#define FILL_EPOCHS_PER_FLOW 16
/* Relative change of a flow's rate between epochs that counts as one
 * (below: rounding of the same shares solved again). */
#define FILL_RATE_REL 1e-9

typedef struct hent {
  double key;
  int id;       /* resource id, or nres + flow id for a flow's bound */
  unsigned ver; /* a resource's version when pushed */
} hent;

/* A flow's resources, merged: coef = the bytes its legs move through it
 * per unit of work. */
typedef struct use {
  int res;
  double coef;
} use;

typedef struct state {
  int nres, nf;
  const fill_flow *f;
  const fill_leg *leg;
  const double *res_cap;
  double *w, *cap;       /* [nf] weight per unit of work, progress cap */
  use *u;                /* the flows' uses, flow i's at ufirst[i] */
  int *ufirst;           /* [nf + 1] */
  int *rfirst, *rflow;   /* [nres + 1], [uses]: each resource's flows */
  double *rem, *wsum, *level; /* [nres] */
  double *wleg;          /* [nres]: active legs' weights */
  unsigned *ver;         /* [nres] */
  int *unfrozen;         /* [nres] */
  bool *active, *frozen, *caught, *done; /* [nf] */
  bool *vary;            /* [nf]: its rate changed while it sent */
  double *rate, *left;   /* [nf] */
  double *held;          /* [nf]: a held flow's cap in this solve */
  double *began;         /* [nf]: when it started sending */
  double *was;           /* [nf]: its rate in the epoch before (NAN: none) */

  hent *heap;
  size_t nheap;
} state;

static void push(state *s, hent e) {
  size_t i = s->nheap++;
  while (i > 0 && s->heap[(i - 1) / 2].key > e.key) {
    s->heap[i] = s->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  s->heap[i] = e;
}

static hent pop(state *s) {
  hent top = s->heap[0], x = s->heap[--s->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= s->nheap) break;
    if (c + 1 < s->nheap && s->heap[c + 1].key < s->heap[c].key) c++;
    if (!(s->heap[c].key < x.key)) break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (s->nheap) s->heap[i] = x;
  return top;
}

/* Flow i's uses, each resource once (its legs' bytes summed). */
static int merge_uses(state *s, int i, use *out) {
  int n = 0;
  const fill_flow *fl = &s->f[i];
  for (int k = fl->first; k < fl->first + fl->nlegs; k++)
    for (int j = 0; j < s->leg[k].nres; j++) {
      int r = s->leg[k].res[j], m = 0;
      while (m < n && out[m].res != r) m++;
      if (m == n) out[n++] = (use){r, 0};
      out[m].coef += s->leg[k].bytes;
    }
  return n;
}

/* CSR lists: first[key[i] + 1] counts, then prefix sums, then items. */
static void csr(int nkeys, int n, const int *key, int *first, int *item) {
  for (int k = 0; k <= nkeys; k++) first[k] = 0;
  for (int i = 0; i < n; i++) if (key[i] >= 0) first[key[i] + 1]++;
  for (int k = 0; k < nkeys; k++) first[k + 1] += first[k];
  int *at = mem_alloc(((size_t)nkeys + 1) * sizeof *at);
  for (int k = 0; k < nkeys; k++) at[k] = first[k];
  for (int i = 0; i < n; i++) if (key[i] >= 0) item[at[key[i]]++] = i;
  free(at);
}

/* Each flow's weight, cap and uses; each resource's flows. */
static void build(state *s) {
  int total = 0;
  for (int i = 0; i < s->nf; i++) total += s->f[i].nlegs * FILL_MAXRES;
  s->u = mem_alloc(((size_t)total + 1) * sizeof *s->u);
  s->ufirst = mem_alloc(((size_t)s->nf + 1) * sizeof *s->ufirst);
  int n = 0;
  for (int i = 0; i < s->nf; i++) {
    const fill_flow *fl = &s->f[i];
    double w = INFINITY, c = fl->cap;
    for (int k = fl->first; k < fl->first + fl->nlegs; k++) {
      w = fmin(w, s->leg[k].weight / s->leg[k].bytes);
      c = fmin(c, s->leg[k].cap / s->leg[k].bytes);
    }
    s->w[i] = isfinite(w) ? w : 1, s->cap[i] = c;
    s->ufirst[i] = n;
    n += merge_uses(s, i, s->u + n);
  }
  s->ufirst[s->nf] = n;
  int *key = mem_alloc(((size_t)n + 1) * sizeof *key);
  for (int k = 0; k < n; k++) key[k] = s->u[k].res;
  s->rfirst = mem_alloc(((size_t)s->nres + 1) * sizeof *s->rfirst);
  s->rflow = mem_alloc(((size_t)n + 1) * sizeof *s->rflow);
  csr(s->nres, n, key, s->rfirst, s->rflow); /* use indices: to flows */
  for (int i = 0, k = 0; i < s->nf; i++)
    for (; k < s->ufirst[i + 1]; k++) key[k] = i;
  for (int k = 0; k < s->rfirst[s->nres]; k++) s->rflow[k] = key[s->rflow[k]];
  free(key);
  s->heap = mem_alloc(((size_t)s->nres + 2 * (size_t)s->nf + (size_t)n + 1) *
                      sizeof *s->heap);
}

static void push_res(state *s, int r) {
  if (s->unfrozen[r] <= 0 || isfinite(s->level[r])) return;
  double k = fmax(s->rem[r], 0) / fmax(s->wsum[r], WSUM_FLOOR);
  push(s, (hent){k, r, ++s->ver[r]});
}

/* Flow i gets progress rate p: its resources lose its use. */
static void freeze(state *s, int i, double p) {
  s->frozen[i] = true;
  s->rate[i] = p;
  for (int k = s->ufirst[i]; k < s->ufirst[i + 1]; k++) {
    int r = s->u[k].res;
    s->rem[r] -= s->u[k].coef * p;
    s->wsum[r] -= s->u[k].coef * s->w[i];
    s->unfrozen[r]--;
  }
  for (int k = s->ufirst[i]; k < s->ufirst[i + 1]; k++) push_res(s, s->u[k].res);
}

/* Before a solve: each active flow's weight, and its resources' sums; a
 * caught-up flow whose upstream has not started is held at 0. */
static void solve_init(state *s) {
  for (int r = 0; r < s->nres; r++) {
    s->rem[r] = s->res_cap[r], s->wsum[r] = 0, s->unfrozen[r] = 0;
    s->level[r] = INFINITY;
  }
  s->nheap = 0;
  for (int i = 0; i < s->nf; i++) {
    s->frozen[i] = !s->active[i];
    s->rate[i] = 0;
    if (!s->active[i]) continue;
    for (int k = s->ufirst[i]; k < s->ufirst[i + 1]; k++) {
      s->wsum[s->u[k].res] += s->u[k].coef * s->w[i];
      s->unfrozen[s->u[k].res]++;
    }
    double c = fmin(s->cap[i], s->held[i]);
    if (isfinite(c)) push(s, (hent){c / s->w[i], s->nres + i, 0});
  }
  for (int i = 0; i < s->nf; i++) {
    int u = s->f[i].up;
    if (s->active[i] && s->caught[i] && u >= 0 && !s->active[u] && !s->done[u])
      freeze(s, i, 0);
  }
}

/* The max-min progress rates of the active flows at their caps and held
 * caps, each resource's level. */
static void solve_once(state *s) {
  solve_init(s);
  for (int r = 0; r < s->nres; r++) push_res(s, r);
  while (s->nheap) {
    hent e = pop(s);
    if (e.id >= s->nres) {
      int i = e.id - s->nres;
      if (!s->frozen[i])
        freeze(s, i, fmin(fmin(s->cap[i], s->held[i]), e.key * s->w[i]));
      continue;
    }
    int r = e.id;
    if (e.ver != s->ver[r] || isfinite(s->level[r]) || s->unfrozen[r] <= 0)
      continue; /* stale, or its flows frozen elsewhere */
    s->level[r] = e.key;
    for (int k = s->rfirst[r]; k < s->rfirst[r + 1]; k++)
      if (!s->frozen[s->rflow[k]])
        freeze(s, s->rflow[k], s->w[s->rflow[k]] * e.key);
  }
  for (int i = 0; i < s->nf; i++) /* no resource and no cap: at once */
    if (!s->frozen[i]) s->rate[i] = INFINITY;
}

/* Flow i's rate held to its upstream's, down the chain (memo: done[] is
 * not touched; depth bounds a cycle). */
static double held_rate(state *s, int i, int depth) {
  int u = s->f[i].up;
  if (!s->caught[i] || u < 0 || !s->active[u] || depth > s->nf) return s->rate[i];
  return fmin(s->rate[i], held_rate(s, u, depth + 1));
}

/* The rates: a solve at the flows' own weights; where a held flow goes
 * faster than its upstream, a second solve with it capped there; held
 * flows then never above their upstream's. */
static void solve(state *s) {
  for (int i = 0; i < s->nf; i++) s->held[i] = INFINITY;
  solve_once(s);
  bool again = false;
  for (int i = 0; i < s->nf; i++) {
    if (!s->active[i]) continue;
    double h = held_rate(s, i, 0);
    if (h < s->rate[i]) s->held[i] = h, again = true;
  }
  if (again) solve_once(s);
  for (int i = 0; i < s->nf; i++) /* upstream first: the chain's order */
    if (s->active[i]) s->held[i] = held_rate(s, i, 0);
  for (int i = 0; i < s->nf; i++)
    if (s->active[i]) s->rate[i] = s->held[i];
}

/* Marks the active flows whose rate differs from their last epoch's
 * (the time-averages of their legs then differ from any one rate). */
static void note_changes(state *s) {
  for (int i = 0; i < s->nf; i++) {
    if (!s->active[i]) continue;
    double r = s->rate[i], w = s->was[i];
    if (!isnan(w) && fabs(r - w) > FILL_RATE_REL * fmax(r, w)) s->vary[i] = true;
    s->was[i] = r;
  }
}

/* Sums the weights of the active legs on each resource (wleg). */
static void leg_weights(state *s) {
  for (int r = 0; r < s->nres; r++) s->wleg[r] = 0;
  for (int i = 0; i < s->nf; i++) {
    if (!s->active[i]) continue;
    const fill_flow *fl = &s->f[i];
    for (int k = fl->first; k < fl->first + fl->nlegs; k++)
      for (int j = 0; j < s->leg[k].nres; j++)
        s->wleg[s->leg[k].res[j]] += s->leg[k].weight;
  }
}

/* Leg k of flow i's available rate now: its cap, and on each resource it
 * shares with other sending legs the more of what it moves there (its
 * bytes x its flow's rate) and its weight's share of the capacity among
 * them all (what it gets when they send at once: the phases' flows run
 * in step); the least of these. */
static double avail(const state *s, int i, int k) {
  const fill_leg *g = &s->leg[k];
  double a = g->cap, mine = g->bytes * s->rate[i];
  for (int j = 0; j < g->nres; j++) {
    int r = g->res[j];
    if (s->wleg[r] > g->weight * (1 + 1e-12))
      a = fmin(a, fmax(mine, s->res_cap[r] * g->weight / s->wleg[r]));
  }
  return a;
}

/* Whether the flows flow i starts after are all done (none: yes). */
static bool preceded(const state *s, int i) {
  int a = s->f[i].after, n = s->f[i].nafter > 1 ? s->f[i].nafter : 1;
  for (int k = a; a >= 0 && k < a + n; k++)
    if (!s->done[k]) return false;
  return true;
}

/* Starts the flows due at t (their start come, the flow they follow
 * done); marks which have caught up with their upstream. */
static void epoch_begin(state *s, double t) {
  for (int i = 0; i < s->nf; i++) {
    if (!s->done[i] && !s->active[i] && s->f[i].start <= t && preceded(s, i))
      s->active[i] = true, s->began[i] = t;
  }
  for (int i = 0; i < s->nf; i++) {
    int u = s->f[i].up;
    s->caught[i] = u >= 0 && !s->done[u] &&
                   (s->caught[i] || s->left[i] <= s->left[u] + WORK_EPS);
  }
}

/* When flow i, active, catches up with its upstream at the current rates
 * (INFINITY: not before it is done). */
static double catch_up(const state *s, int i, double t) {
  int u = s->f[i].up;
  if (u < 0 || !s->active[u] || s->caught[i] || !(s->rate[i] > s->rate[u]))
    return INFINITY;
  return t + (s->left[i] - s->left[u]) / (s->rate[i] - s->rate[u]);
}

/* The next event after t: a start, a departure at the current rates, a
 * flow catching up with its upstream. */
static double next_event(const state *s, double t) {
  double next = INFINITY;
  for (int i = 0; i < s->nf; i++) {
    if (s->done[i]) continue;
    if (!s->active[i]) {
      if (preceded(s, i)) next = fmin(next, s->f[i].start);
      continue;
    }
    if (s->rate[i] > 0) next = fmin(next, t + s->left[i] / s->rate[i]);
    next = fmin(next, catch_up(s, i, t));
  }
  return next;
}

/* The last departure at the current rates (every active flow done by
 * then), INFINITY when one never leaves. */
static double last_departure(const state *s, double t) {
  double last = t;
  for (int i = 0; i < s->nf; i++)
    if (s->active[i]) last = fmax(last, s->rate[i] > 0
                                            ? t + s->left[i] / s->rate[i]
                                            : INFINITY);
  return last;
}

/* Flow i's work left once it is never ahead of its upstream (-1: caught
 * up with it by this step: its upstream's). */
static double settled_left(state *s, int i, int depth) {
  int u = s->f[i].up;
  bool held = u >= 0 && s->active[u] && !s->done[u] && depth <= s->nf;
  if (!held) return s->left[i] = fmax(s->left[i], 0);
  double lu = settled_left(s, u, depth + 1);
  return s->left[i] = s->left[i] < 0 ? lu : fmax(s->left[i], lu);
}

/* Advances the active flows from t to t1 (their legs' sums by the
 * available rates); marks those done at t1. An event due by t1 happens
 * whatever the rounding of t1 - t (times, not spans, are compared). */
static void advance(state *s, double t, double t1, double *sum,
                    double *finish) {
  double dt = t1 - t;
  for (int i = 0; i < s->nf; i++) {
    if (!s->active[i]) continue;
    const fill_flow *fl = &s->f[i];
    for (int k = fl->first; k < fl->first + fl->nlegs && sum && dt > 0; k++)
      sum[k] += avail(s, i, k) * dt;
  }
  for (int i = 0; i < s->nf; i++) {
    if (!s->active[i]) continue;
    bool caught = catch_up(s, i, t) <= t1;
    bool last = isinf(s->rate[i]) || t + s->left[i] / s->rate[i] <= t1;
    s->left[i] = last ? 0 : fmax(s->left[i] - s->rate[i] * dt, 0);
    if (caught) s->left[i] = -1; /* set to its upstream's below */
  }
  for (int i = 0; i < s->nf; i++)
    if (s->active[i]) s->left[i] = settled_left(s, i, 0);
  for (int i = 0; i < s->nf; i++)
    if (s->active[i] && s->left[i] <= WORK_EPS) {
      s->done[i] = true, s->active[i] = false;
      finish[i] = t1;
    }
}

static void alloc_state(state *s) {
  size_t nf = (size_t)s->nf + 1, nr = (size_t)s->nres + 1;
  s->w = mem_alloc(7 * nf * sizeof *s->w);
  s->cap = s->w + nf, s->rate = s->cap + nf, s->left = s->rate + nf;
  s->began = s->left + nf, s->held = s->began + nf, s->was = s->held + nf;
  for (size_t i = 0; i < nf; i++) s->was[i] = NAN;
  s->rem = mem_alloc(4 * nr * sizeof *s->rem);
  s->wsum = s->rem + nr, s->level = s->wsum + nr;
  s->wleg = s->level + nr;
  s->ver = mem_calloc(nr, sizeof *s->ver);
  s->unfrozen = mem_alloc(nr * sizeof *s->unfrozen);
  s->active = mem_calloc(5 * nf, sizeof *s->active);
  s->frozen = s->active + nf, s->caught = s->frozen + nf;
  s->done = s->caught + nf, s->vary = s->done + nf;
}

static void free_state(state *s) {
  free(s->w), free(s->rem), free(s->ver), free(s->unfrozen), free(s->active);
  free(s->u), free(s->ufirst), free(s->rfirst), free(s->rflow);
  free(s->heap);
}

/* Each leg's sum over its flow's life as a rate (its cap at no duration). */
static void leg_rates(const state *s, const double *finish, const double *sum,
                      double *leg_rate) {
  for (int i = 0; i < s->nf; i++) {
    const fill_flow *fl = &s->f[i];
    double d = finish[i] - s->began[i];
    for (int k = fl->first; k < fl->first + fl->nlegs; k++)
      leg_rate[k] = isinf(d) ? 0 : d > 0 ? sum[k] / d : s->leg[k].cap;
  }
}

/* fill_solve on one component (no resource, upstream or predecessor
 * outside it); returns its flows whose rate changed while they sent. */
static int fill_one(const double *res_cap, int nres, const fill_flow *f,
                     int nf, const fill_leg *leg, double *finish,
                     double *leg_rate) {
  state s = {.nres = nres, .nf = nf, .f = f, .leg = leg, .res_cap = res_cap};
  alloc_state(&s);
  build(&s);
  int nlegs = 0;
  for (int i = 0; i < nf; i++)
    if (f[i].first + f[i].nlegs > nlegs) nlegs = f[i].first + f[i].nlegs;
  double *sum = leg_rate ? mem_calloc((size_t)nlegs + 1, sizeof *sum) : NULL;
  double t = INFINITY;
  for (int i = 0; i < nf; i++) {
    t = fmin(t, f[i].start);
    s.left[i] = 1, s.began[i] = f[i].start, finish[i] = INFINITY;
  }
  for (int left = nf, epochs = 0; left > 0; epochs++) {
    epoch_begin(&s, t);
    solve(&s);
    note_changes(&s);
    leg_weights(&s);
    double t1 = next_event(&s, t);
    if (isinf(t1)) break; /* the rest never finish */
    if (epochs > FILL_EPOCHS_PER_FLOW * nf) t1 = last_departure(&s, t);
    advance(&s, t, t1, sum, finish);
    left = 0;
    for (int i = 0; i < nf; i++) left += !s.done[i];
    t = t1;
  }
  if (leg_rate) leg_rates(&s, finish, sum, leg_rate);
  int varied = 0;
  for (int i = 0; i < nf; i++) varied += s.vary[i];
  free(sum);
  free_state(&s);
  return varied;
}

/* Union-find over flows: the root of i, paths halved. */
static int root(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

static void join(int *parent, int a, int b) {
  a = root(parent, a), b = root(parent, b);
  if (a != b) parent[a > b ? a : b] = a < b ? a : b;
}

/* Flows that meet (a resource, an upstream, a predecessor) in one
 * component: comp[i] gets the root of flow i. */
static void components(const fill_flow *f, int nf, const fill_leg *leg,
                       int nres, int *comp) {
  int *first = mem_alloc(((size_t)nres + 1) * sizeof *first);
  for (int r = 0; r < nres; r++) first[r] = -1;
  for (int i = 0; i < nf; i++) comp[i] = i;
  for (int i = 0; i < nf; i++) {
    for (int k = 0; f[i].after >= 0 && k < (f[i].nafter > 1 ? f[i].nafter : 1); k++)
      join(comp, i, f[i].after + k);
    if (f[i].up >= 0) join(comp, i, f[i].up);
    for (int k = f[i].first; k < f[i].first + f[i].nlegs; k++)
      for (int j = 0; j < leg[k].nres; j++) {
        int r = leg[k].res[j];
        if (first[r] < 0) first[r] = i;
        else join(comp, i, first[r]);
      }
  }
  for (int i = 0; i < nf; i++) comp[i] = root(comp, i);
  free(first);
}

/* One component's problem, renumbered from 0: its flows, legs and
 * resources, and where each came from. */
typedef struct sub {
  fill_flow *f;
  fill_leg *leg;
  double *cap, *finish, *rate;
  int *flow_of, *leg_of, *res_of; /* sub -> whole; res_of: whole -> sub */
  int nf, nleg, nres;
} sub;

/* Component c's problem out of the whole (comp[i]: flow i's root). */
static void sub_build(sub *x, int c, const int *comp, const double *res_cap,
                      const fill_flow *f, int nf, const fill_leg *leg) {
  int *idx = x->res_of;
  x->nf = x->nleg = x->nres = 0;
  for (int i = 0; i < nf; i++) {
    if (comp[i] != c) continue;
    x->flow_of[x->nf] = i;
    fill_flow g = f[i];
    g.first = x->nleg;
    for (int k = f[i].first; k < f[i].first + f[i].nlegs; k++) {
      fill_leg l = leg[k];
      for (int j = 0; j < l.nres; j++) {
        int r = l.res[j];
        if (idx[r] < 0) idx[r] = x->nres, x->cap[x->nres++] = res_cap[r];
        l.res[j] = idx[r];
      }
      x->leg_of[x->nleg] = k;
      x->leg[x->nleg++] = l;
    }
    x->f[x->nf++] = g;
  }
}

int fill_solve(const double *res_cap, int nres, const fill_flow *f, int nf,
               const fill_leg *leg, double *finish, double *leg_rate) {
  int varied = 0;
  int nlegs = 0;
  for (int i = 0; i < nf; i++)
    if (f[i].first + f[i].nlegs > nlegs) nlegs = f[i].first + f[i].nlegs;
  int *comp = mem_alloc(2 * ((size_t)nf + 1) * sizeof *comp);
  int *to = comp + nf + 1; /* whole flow -> its index in its component */
  components(f, nf, leg, nres, comp);
  size_t nl = (size_t)nlegs + 1, n = (size_t)nf + 1;
  sub x = {.f = mem_alloc(n * sizeof *x.f), .leg = mem_alloc(nl * sizeof *x.leg),
           .cap = mem_alloc(((size_t)nres + 1) * sizeof *x.cap),
           .finish = mem_alloc(n * sizeof *x.finish),
           .rate = mem_alloc(nl * sizeof *x.rate),
           .flow_of = mem_alloc(n * sizeof *x.flow_of),
           .leg_of = mem_alloc(nl * sizeof *x.leg_of),
           .res_of = mem_alloc(((size_t)nres + 1) * sizeof *x.res_of)};
  for (int r = 0; r < nres; r++) x.res_of[r] = -1;
  for (int c = 0; c < nf; c++) {
    if (comp[c] != c) continue; /* each component once, at its root */
    sub_build(&x, c, comp, res_cap, f, nf, leg);
    for (int i = 0; i < x.nf; i++) to[x.flow_of[i]] = i;
    for (int i = 0; i < x.nf; i++) { /* its links, renumbered (the flows
                                        one starts after stay in a row) */
      if (x.f[i].after >= 0) x.f[i].after = to[x.f[i].after];
      if (x.f[i].up >= 0) x.f[i].up = to[x.f[i].up];
    }
    varied += fill_one(x.cap, x.nres, x.f, x.nf, x.leg, x.finish,
                       leg_rate ? x.rate : NULL);
    for (int i = 0; i < x.nf; i++) finish[x.flow_of[i]] = x.finish[i];
    for (int k = 0; k < x.nleg && leg_rate; k++) leg_rate[x.leg_of[k]] = x.rate[k];
    for (int i = 0; i < x.nf; i++) /* its resources free for the next */
      for (int k = x.f[i].first; k < x.f[i].first + x.f[i].nlegs; k++)
        for (int j = 0; j < leg[x.leg_of[k]].nres; j++)
          x.res_of[leg[x.leg_of[k]].res[j]] = -1;
  }
  free(comp), free(x.f), free(x.leg), free(x.cap), free(x.finish);
  free(x.rate), free(x.flow_of), free(x.leg_of), free(x.res_of);
  return varied;
}
