/* net_solve: weighted max-min rates (progressive filling) on the
 * component of flows and resources a change touches.
 * Invariant: after sim_net_solve every flow of the component has its
 * weighted max-min rate (no resource above its capacity, every flow
 * bottlenecked at a saturated resource or its own cap) and its LEFT event
 * at the time its remaining bytes leave at that rate. Most solves are a
 * flow alone on its resources: sim_net_solve_alone and fill_one do them
 * with the general path's exact arithmetic, without its search. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/net_parts.h"

/* The heap was reserved by fill for the whole solve. */
static inline void heap_push(sim_net *n, hent e) {
  size_t i = n->nheap++;
  while (i > 0 && n->heap[(i - 1) / 2].key > e.key) {
    n->heap[i] = n->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  n->heap[i] = e;
}

static inline hent heap_pop(sim_net *n) {
  hent top = n->heap[0], x = n->heap[--n->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n->nheap) break;
    if (c + 1 < n->nheap && n->heap[c + 1].key < n->heap[c].key) c++;
    if (!(n->heap[c].key < x.key)) break;
    n->heap[i] = n->heap[c];
    i = c;
  }
  if (n->nheap) n->heap[i] = x;
  return top;
}

/* Collects the component reachable from the seeds into cres/cflow. */
static void collect(sim_net *n) {
  n->epoch++;
  n->ncres = n->ncflow = 0;
  /* Each resource and flow enters at most once: no growth in the loops. */
  reserve((void **)&n->cres, &n->cres_cap, n->nres, sizeof *n->cres);
  reserve((void **)&n->cflow, &n->cflow_cap, n->nflows, sizeof *n->cflow);
  for (size_t i = 0; i < n->nseeds; i++) {
    res *r = &n->res[n->seeds[i]];
    if (r->mark == n->epoch) continue;
    r->mark = n->epoch;
    n->cres[n->ncres++] = n->seeds[i];
  }
  n->nseeds = 0;
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    for (uint32_t j = 0; j < r->nfl; j++) {
      flow *f = &n->flows[r->fl[j]];
      if (f->mark == n->epoch) continue;
      f->mark = n->epoch;
      n->cflow[n->ncflow++] = r->fl[j];
      for (int m = 0; m < f->nres; m++) {
        res *r2 = &n->res[f->res[m]];
        if (r2->mark == n->epoch) continue;
        r2->mark = n->epoch;
        n->cres[n->ncres++] = f->res[m];
      }
    }
  }
}

static void freeze(sim_net *n, flow *f, double rate) {
  assert(!f->frozen && rate >= 0);
  f->frozen = true;
  f->rate = rate;
  for (int m = 0; m < f->nres; m++) {
    res *r = &n->res[f->res[m]];
    r->rem -= rate;
    r->wsum -= f->w;
    r->unfrozen--;
    r->ver++;
    if (r->unfrozen > 0)
      heap_push(n, (hent){fmax(r->rem, 0) / fmax(r->wsum, 1e-300),
                          (uint32_t)(r - n->res), r->ver});
  }
}

/* fill for a component of one flow, with the same arithmetic: each of its
 * resources offers cap / w, its own cap offers cap / w as well; fill pushes
 * the flow's cap first and the heap moves an entry up only past a strictly
 * greater key, so on a tie the flow's cap is taken. Most solves are this. */
static void fill_one(sim_net *n, flow *f) {
  double key = INFINITY;
  for (int m = 0; m < f->nres; m++) {
    double k = n->res[f->res[m]].cap / f->w;
    if (k < key) key = k;
  }
  f->frozen = true;
  f->rate = isfinite(f->cap) && f->cap / f->w <= key ? f->cap : f->w * key;
}

static void fill(sim_net *n) {
  if (n->ncflow == 1) {
    fill_one(n, &n->flows[n->cflow[0]]);
    return;
  }
  n->nheap = 0;
  /* At most one entry per flow and resource, plus one per resource a
   * freeze touches. */
  reserve((void **)&n->heap, &n->heap_cap,
          n->ncflow * (1 + MAXRES) + n->ncres, sizeof *n->heap);
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    r->rem = r->cap;
    r->wsum = 0;
    r->unfrozen = r->nfl;
    r->ver++;
  }
  for (size_t k = 0; k < n->ncflow; k++) {
    flow *f = &n->flows[n->cflow[k]];
    f->frozen = false;
    for (int m = 0; m < f->nres; m++) n->res[f->res[m]].wsum += f->w;
    if (isfinite(f->cap)) heap_push(n, (hent){f->cap / f->w, n->cflow[k], NONE});
  }
  for (size_t k = 0; k < n->ncres; k++) {
    res *r = &n->res[n->cres[k]];
    if (r->unfrozen) heap_push(n, (hent){r->rem / r->wsum, n->cres[k], r->ver});
  }
  while (n->nheap) {
    hent e = heap_pop(n);
    if (e.ver == NONE) {
      flow *f = &n->flows[e.id];
      if (!f->frozen) freeze(n, f, f->cap);
      continue;
    }
    res *r = &n->res[e.id];
    if (e.ver != r->ver || r->unfrozen == 0) continue;
    for (uint32_t j = 0; j < r->nfl; j++) {
      flow *f = &n->flows[r->fl[j]];
      if (!f->frozen) freeze(n, f, f->w * e.key);
    }
  }
}

/* A flow that would leave after the horizon is put at the horizon (or now,
 * past it), never later: a rate change may still bring it back (the event
 * moves), and if it fires there on_left records the overflow. */
static void schedule_left(sim_net *n, flow *f, int64_t now) {
  double left = f->size - f->sent;
  int64_t t = now;
  if (left > 1e-6) {
    double dt = ceil(left / f->rate);
    if ((double)now + dt < (double)SIM_NET_HORIZON_NS) t = now + (int64_t)dt;
    else t = now > SIM_NET_HORIZON_NS ? now : SIM_NET_HORIZON_NS;
  }
  if (f->ev == SIM_QUEUE_NONE)
    f->ev = sim_queue_push(n->q, t, n->base + EV_LEFT, (uint32_t)(f - n->flows));
  else if (sim_queue_time(n->q, f->ev) != t)
    sim_queue_move(n->q, f->ev, t);
}

/* Brings f's bytes sent up to now at its old rate, before a re-solve. */
static inline void advance(flow *f, int64_t now) {
  f->sent = fmin(f->size, f->sent + f->rate * (double)(now - f->t_upd));
  f->t_upd = now;
  f->old = f->rate;
}

static inline void settle(sim_net *n, flow *f, int64_t now) {
  if (f->old != f->rate || f->ev == SIM_QUEUE_NONE) {
    schedule_left(n, f, now);
    if (n->pairs[f->pair].waiter != NONE)
      sim_net_sock_check(n, f->pair, now, false);
  }
}

void sim_net_solve(sim_net *n, int64_t now) {
  size_t i = 0;
  while (i < n->nseeds && n->res[n->seeds[i]].nfl == 0) i++;
  if (i == n->nseeds) { /* the change touched no flow: nothing to solve */
    n->nseeds = 0;
    return;
  }
  collect(n);
  n->solves++;
  n->flows_solved += n->ncflow;
  for (size_t k = 0; k < n->ncflow; k++) advance(&n->flows[n->cflow[k]], now);
  fill(n);
  for (size_t k = 0; k < n->ncflow; k++) settle(n, &n->flows[n->cflow[k]], now);
}

/* solve after a change to f alone, when f is the only flow on each of its
 * resources and every pending seed is one of them: the component is f, so
 * this is solve without the search (most flows start on idle resources).
 * Returns false, doing nothing, otherwise. */
bool sim_net_solve_alone(sim_net *n, flow *f, int64_t now) {
  for (int m = 0; m < f->nres; m++)
    if (n->res[f->res[m]].nfl != 1) return false;
  for (size_t i = 0; i < n->nseeds; i++) {
    int m = 0;
    while (m < f->nres && f->res[m] != n->seeds[i]) m++;
    if (m == f->nres) return false;
  }
  n->nseeds = 0;
  n->solves++;
  n->flows_solved++;
  advance(f, now);
  fill_one(n, f);
  settle(n, f, now);
  return true;
}
