/* queue: indexed 4-ary min-heap over (time, seq) with a pooled event table.
 * Invariant: heap[i] orders before its children heap[4i+1 .. 4i+4];
 * rec[h].pos is the heap position of pending event h (or FREE_POS when h is on the free
 * list), and heap[rec[h].pos].id == h. seq grows on every push/move, so keys
 * are unique and the pop order is total. */
#include "sim/queue.h"

#include <assert.h>
#include <stdlib.h>

#include "base/mem.h"

#define FREE_POS UINT32_MAX
#define ARITY 4 /* children per node: half the depth of a binary heap */

typedef struct node {
  int64_t t;
  uint64_t seq;
  uint32_t id;
} node;

typedef struct rec {
  uint32_t pos;   /* heap position, or FREE_POS */
  uint32_t next;  /* free-list link when free */
  int kind;
  uint32_t arg;
} rec;

struct sim_queue {
  node *heap;
  size_t n, heap_cap;
  rec *recs;
  size_t nrecs, recs_cap;
  uint32_t free_head;
  uint64_t seq;
};

sim_queue *sim_queue_new(void) {
  sim_queue *q = mem_calloc(1, sizeof *q);
  q->free_head = SIM_QUEUE_NONE;
  return q;
}

void sim_queue_free(sim_queue *q) {
  if (!q) return;
  free(q->heap);
  free(q->recs);
  free(q);
}

/* Without branches: equal times are common (devices finish alike), so the
 * outcome is hard to predict and a mispredicted branch costs more than the
 * extra compare. */
static inline bool less(const node *a, const node *b) {
  return (a->t < b->t) | ((a->t == b->t) & (a->seq < b->seq));
}

static inline void place(sim_queue *q, size_t i, node x) {
  q->heap[i] = x;
  q->recs[x.id].pos = (uint32_t)i;
}

/* The smallest of the children c .. c+3 that exist (c < n); a full set of
 * four, the usual case, is a tournament of three comparisons. */
static inline size_t min_child(const sim_queue *q, size_t c, size_t n) {
  const node *h = q->heap;
  if (c + 3 < n) {
    size_t a = c + less(&h[c + 1], &h[c]);
    size_t b = c + 2 + less(&h[c + 3], &h[c + 2]);
    return less(&h[b], &h[a]) ? b : a;
  }
  size_t m = c;
  for (size_t k = c + 1; k < n; k++)
    if (less(&h[k], &h[m])) m = k;
  return m;
}

/* The heap order around position i: its parent orders before it, and it
 * before each of its children. Asserted (builds without NDEBUG) where an
 * operation ends, at the node it placed last: O(ARITY). */
#ifndef NDEBUG
static inline bool ordered_at(const sim_queue *q, size_t i) {
  const node *h = q->heap;
  if (i > 0 && less(&h[i], &h[(i - 1) / ARITY])) return false;
  for (size_t c = ARITY * i + 1; c < q->n && c <= ARITY * i + ARITY; c++)
    if (less(&h[c], &h[i])) return false;
  return q->recs[h[i].id].pos == i;
}
#endif

#if defined(SIM_QUEUE_DEBUG) && !defined(NDEBUG)
/* The whole invariant, checked after every operation when SIM_QUEUE_DEBUG
 * is defined (CMake's Debug build type): O(n) each, so a run becomes
 * quadratic, which is why asserts alone (the Sanitize build) check only
 * ordered_at. */
static void check_heap(const sim_queue *q) {
  for (size_t i = 0; i < q->n; i++) assert(ordered_at(q, i));
}
#else
static inline void check_heap(const sim_queue *q) { (void)q; }
#endif

/* Moves x up from the hole at i. */
static void rise(sim_queue *q, size_t i, node x) {
  while (i > 0) {
    size_t p = (i - 1) / ARITY;
    if (!less(&x, &q->heap[p])) break;
    place(q, i, q->heap[p]);
    i = p;
  }
  place(q, i, x);
  assert(ordered_at(q, i));
}

static void sift_down(sim_queue *q, size_t i) {
  node x = q->heap[i];
  for (;;) {
    size_t c = ARITY * i + 1;
    if (c >= q->n) break;
    c = min_child(q, c, q->n);
    if (!less(&q->heap[c], &x)) break;
    place(q, i, q->heap[c]);
    i = c;
  }
  place(q, i, x);
  assert(ordered_at(q, i));
}

/* Pops the root (Floyd's bottom-up deletion): the hole at the root goes down
 * to a leaf along the smallest children, and the last node then rises from
 * there. The last node belongs near the bottom, so this skips the compare
 * against it on every level of a plain sift-down. */
static void remove_root(sim_queue *q) {
  size_t n = --q->n, i = 0;
  if (n == 0) return;
  for (;;) {
    size_t c = ARITY * i + 1;
    if (c >= n) break;
    c = min_child(q, c, n);
    place(q, i, q->heap[c]);
    i = c;
  }
  rise(q, i, q->heap[n]);
}

static uint32_t rec_take(sim_queue *q) {
  if (q->free_head != SIM_QUEUE_NONE) {
    uint32_t h = q->free_head;
    q->free_head = q->recs[h].next;
    return h;
  }
  mem_grow((void **)&q->recs, &q->recs_cap, q->nrecs + 1, sizeof *q->recs);
  assert(q->nrecs < SIM_QUEUE_NONE);
  return (uint32_t)q->nrecs++;
}

static void rec_give(sim_queue *q, uint32_t h) {
  q->recs[h].pos = FREE_POS;
  q->recs[h].next = q->free_head;
  q->free_head = h;
}

sim_queue_event sim_queue_push(sim_queue *q, int64_t t_ns, int kind,
                               uint32_t arg) {
  uint32_t h = rec_take(q);
  q->recs[h].kind = kind;
  q->recs[h].arg = arg;
  if (q->n == q->heap_cap)
    mem_grow((void **)&q->heap, &q->heap_cap, q->n + 1, sizeof *q->heap);
  size_t i = q->n++;
  rise(q, i, (node){t_ns, q->seq++, h});
  check_heap(q);
  return h;
}

/* Removes the node at heap position i, keeping the heap order. */
static void remove_at(sim_queue *q, size_t i) {
  q->n--;
  if (i == q->n) return;
  node last = q->heap[q->n];
  if (i > 0 && less(&last, &q->heap[(i - 1) / ARITY])) {
    rise(q, i, last);
  } else {
    place(q, i, last);
    sift_down(q, i);
  }
}

bool sim_queue_pop(sim_queue *q, sim_queue_item *out) {
  if (q->n == 0) return false;
  node top = q->heap[0];
  out->t_ns = top.t;
  out->kind = q->recs[top.id].kind;
  out->arg = q->recs[top.id].arg;
  remove_root(q);
  rec_give(q, top.id);
  check_heap(q);
  return true;
}

void sim_queue_cancel(sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  remove_at(q, q->recs[h].pos);
  rec_give(q, h);
  check_heap(q);
}

void sim_queue_move(sim_queue *q, sim_queue_event h, int64_t t_ns) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  size_t i = q->recs[h].pos;
  node x = {t_ns, q->seq++, h};
  if (less(&x, &q->heap[i])) {
    rise(q, i, x);
  } else {
    q->heap[i] = x;
    sift_down(q, i);
  }
  check_heap(q);
}

size_t sim_queue_size(const sim_queue *q) { return q->n; }

int64_t sim_queue_peek_time(const sim_queue *q) {
  return q->n ? q->heap[0].t : INT64_MAX;
}

int64_t sim_queue_time(const sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  return q->heap[q->recs[h].pos].t;
}
