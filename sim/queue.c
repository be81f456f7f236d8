/* queue: indexed 4-ary min-heap over (time, seq) with a pooled event table.
 * Invariant: heap[i] orders before its children heap[4i+1 .. 4i+4];
 * rec[h].pos is the heap position of pending event h (or FREE_POS when h is
 * on the free list), and the id in heap[rec[h].pos] is h. The pending
 * events' seqs are unique and below 2^32, so keys are unique and the pop
 * order is total.
 * Layout: a heap node is one 128-bit key -- the time (its sign bit flipped,
 * so that unsigned order is signed order), then the seq, then the event's
 * id, which never decides an order (seqs differ) -- so a comparison is one
 * 128-bit compare, without branches (equal times are common: devices
 * finish alike, and a mispredicted branch costs more than the compare).
 * A node is 16 bytes and the heap is placed so that every set of four
 * siblings fills one cache line.
 * Events at the current time (the last pop's), a quarter of a run's (a
 * join, a zero-length compute, a hand-over), skip the heap: they go to a
 * FIFO, all of one time (fifo_t) in seq order, and a pop takes the smaller
 * of the heap's root and the FIFO's head, so the order is the heap's
 * alone. rec[h].pos is then FIFO_BIT | index; a cancelled or moved FIFO
 * event leaves a tombstone (TOMB) that the head skips, and the FIFO's
 * head is always a live event or the FIFO is empty.
 * A pop from the heap defers the root's removal (hole): the handler of
 * the event popped usually pushes one, which then takes the root's place
 * (the hole goes down to a leaf, the new event rises from there): one pass
 * instead of a removal's and an insertion's. Until then the
 * heap's root slot is vacant (its node stale, its record free); every
 * operation but a push into the heap removes it first (settle).
 * When the seq counter reaches 2^32, the
 * pending events are renumbered 0 .. n-1 in their order (renumber): the
 * order of every pair is kept. */
#include "sim/queue.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

#define FREE_POS UINT32_MAX
#define FIFO_BIT ((uint32_t)1 << 31) /* rec.pos: an index into the FIFO */
#define ARITY 4 /* children per node: half the depth of a binary heap */
#define SEQ_LIMIT ((uint64_t)1 << 32)
#define LINE 64 /* bytes in a cache line: four nodes */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 node; /* GCC, Clang */
#define NODE_HI(x) ((uint64_t)((x) >> 64))
#define NODE_LO(x) ((uint64_t)(x))
#define NODE_MAKE(hi, lo) (((node)(hi) << 64) | (node)(lo))
static inline int less(node a, node b) { return a < b; }
#else
typedef struct node {
  uint64_t lo, hi;
} node;
#define NODE_HI(x) ((x).hi)
#define NODE_LO(x) ((x).lo)
#define NODE_MAKE(h, l) ((node){.lo = (l), .hi = (h)})
static inline int less(node a, node b) {
  return (a.hi < b.hi) | ((a.hi == b.hi) & (a.lo < b.lo));
}
#endif

static inline node node_make(int64_t t, uint64_t seq, uint32_t id) {
  return NODE_MAKE((uint64_t)t ^ ((uint64_t)1 << 63), (seq << 32) | id);
}
static inline int64_t node_t(node x) {
  return (int64_t)(NODE_HI(x) ^ ((uint64_t)1 << 63));
}
static inline uint32_t node_id(node x) { return (uint32_t)NODE_LO(x); }
/* A FIFO slot whose event was cancelled or moved: no live key is this. */
#define TOMB NODE_MAKE(UINT64_MAX, UINT64_MAX)
/* A heap slot past the last node: it orders after every live key (a live
 * key's id is below SIM_QUEUE_NONE), so a set of siblings that the last
 * node ends early is still a tournament of four. */
#define PAD TOMB
static inline bool is_tomb(node x) {
  return NODE_HI(x) == UINT64_MAX && NODE_LO(x) == UINT64_MAX;
}

typedef struct rec {
  uint32_t pos;   /* heap position, or FREE_POS */
  uint32_t next;  /* free-list link when free */
  int kind;
  uint32_t arg;
} rec;

struct sim_queue {
  node *heap;     /* heap_cap + ARITY slots, PAD from n on; &heap[1] is
                     LINE-aligned */
  void *heap_mem; /* heap's allocation */
  size_t n, heap_cap; /* n counts the vacant root while hole */
  bool hole;           /* heap[0] is vacant: its removal is deferred */
  rec *recs;
  size_t nrecs, recs_cap;
  uint32_t free_head;
  uint64_t seq;   /* the next seq; below SEQ_LIMIT */
  int64_t now;    /* the time of the last pop (INT64_MIN before any) */
  node *fifo;     /* fifo[fhead .. ftail): events at fifo_t, seq order */
  size_t fhead, ftail, fcap, flive;
  int64_t fifo_t;
};

sim_queue *sim_queue_new(void) {
  sim_queue *q = mem_calloc(1, sizeof *q);
  q->free_head = SIM_QUEUE_NONE;
  q->now = INT64_MIN;
  return q;
}

void sim_queue_free(sim_queue *q) {
  if (!q) return;
  free(q->heap_mem);
  free(q->recs);
  free(q->fifo);
  free(q);
}

/* Doubles the heap's room, keeping its nodes, with &heap[1] on a line;
 * the slots past them, and ARITY - 1 beyond the room, are PAD. */
static void heap_grow(sim_queue *q) {
  size_t cap = q->heap_cap ? 2 * q->heap_cap : 64;
  assert(cap < SIZE_MAX / sizeof(node) - ARITY - 2 * LINE);
  char *mem = mem_alloc((cap + ARITY) * sizeof(node) + 2 * LINE);
  uintptr_t first = ((uintptr_t)mem + sizeof(node) + LINE - 1) &
                    ~(uintptr_t)(LINE - 1);
  node *heap = (node *)(first - sizeof(node));
  if (q->n) memcpy(heap, q->heap, q->n * sizeof(node));
  for (size_t i = q->n; i < cap + ARITY; i++) heap[i] = PAD;
  free(q->heap_mem);
  q->heap_mem = mem;
  q->heap = heap;
  q->heap_cap = cap;
}

static inline void place(sim_queue *q, size_t i, node x) {
  q->heap[i] = x;
  q->recs[node_id(x)].pos = (uint32_t)i;
}

/* The smallest of the children c .. c+3 that exist (c < n, the slots from
 * n on PAD): a tournament of three comparisons. */
static inline size_t min_child(const sim_queue *q, size_t c, size_t n) {
  const node *h = q->heap;
  (void)n;
  assert(c < n);
  size_t a = c + (size_t)less(h[c + 1], h[c]);
  size_t b = c + 2 + (size_t)less(h[c + 3], h[c + 2]);
  return less(h[b], h[a]) ? b : a;
}

/* The heap order around position i: its parent orders before it, and it
 * before each of its children. Asserted (builds without NDEBUG) where an
 * operation ends, at the node it placed last: O(ARITY). */
#ifndef NDEBUG
static inline bool ordered_at(const sim_queue *q, size_t i) {
  const node *h = q->heap;
  if (i > 0 && less(h[i], h[(i - 1) / ARITY])) return false;
  for (size_t c = ARITY * i + 1; c < q->n && c <= ARITY * i + ARITY; c++)
    if (less(h[c], h[i])) return false;
  return q->recs[node_id(h[i])].pos == i;
}
#endif

#if defined(SIM_QUEUE_DEBUG) && !defined(NDEBUG)
/* The whole invariant, checked after every operation when SIM_QUEUE_DEBUG
 * is defined (CMake's Debug build type): O(n) each, so a run becomes
 * quadratic, which is why asserts alone (the Sanitize build) check only
 * ordered_at. */
static void check_heap(const sim_queue *q) {
  for (size_t i = q->hole; i < q->n; i++) assert(ordered_at(q, i));
  for (size_t i = q->n; q->heap && i < q->heap_cap + ARITY; i++)
    assert(is_tomb(q->heap[i])); /* PAD */
  size_t live = 0;
  const node *last = NULL;
  for (size_t i = q->fhead; i < q->ftail; i++) {
    const node *x = &q->fifo[i];
    if (is_tomb(*x)) continue;
    live++;
    assert(node_t(*x) == q->fifo_t && (!last || less(*last, *x)));
    assert(q->recs[node_id(*x)].pos == (FIFO_BIT | (uint32_t)i));
    last = x;
  }
  assert(live == q->flive && (!live || !is_tomb(q->fifo[q->fhead])));
}
#else
static inline void check_heap(const sim_queue *q) { (void)q; }
#endif

/* Moves x up from the hole at i. */
static void rise(sim_queue *q, size_t i, node x) {
  while (i > 0) {
    size_t p = (i - 1) / ARITY;
    if (!less(x, q->heap[p])) break;
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
    if (!less(q->heap[c], x)) break;
    place(q, i, q->heap[c]);
    i = c;
  }
  place(q, i, x);
  assert(ordered_at(q, i));
}

/* The vacant root goes down to a leaf of the heap's first n nodes along
 * the smallest children (Floyd's bottom-up deletion); returns that leaf.
 * What fills it belongs near the bottom (the last node, or a new event,
 * usually later than most), so rising from there skips the compare
 * against it on every level of a plain sift-down. */
static size_t descend(sim_queue *q, size_t n) {
  size_t i = 0;
  for (;;) {
    size_t c = ARITY * i + 1;
    if (c >= n) return i;
    c = min_child(q, c, n);
    place(q, i, q->heap[c]);
    i = c;
  }
}

/* Pops the root: the last node fills the leaf the hole went down to. */
static void remove_root(sim_queue *q) {
  size_t n = --q->n;
  node last = q->heap[n];
  q->heap[n] = PAD;
  if (n == 0) return;
  rise(q, descend(q, n), last);
}

/* Removes the vacant root a pop left, when no push came to fill it. */
static inline void settle(sim_queue *q) {
  if (!q->hole) return;
  q->hole = false;
  remove_root(q);
}

/* The heap's least node (q->n > q->hole): its root, or while the root is
 * vacant the least of the root's children. */
static node heap_min(const sim_queue *q) {
  if (!q->hole) return q->heap[0];
  return q->heap[min_child(q, 1, q->n)];
}

/* ---- the FIFO of events at the current time ---- */

/* Appends x (at fifo_t, its seq the newest) to the FIFO: compacted to its
 * start, or grown, when full. */
static void fifo_append(sim_queue *q, node x) {
  if (q->ftail == q->fcap) {
    if (q->fhead > 0) {
      size_t live = q->ftail - q->fhead;
      memmove(q->fifo, q->fifo + q->fhead, live * sizeof(node));
      q->fhead = 0, q->ftail = live;
      for (size_t i = 0; i < live; i++)
        if (!is_tomb(q->fifo[i]))
          q->recs[node_id(q->fifo[i])].pos = FIFO_BIT | (uint32_t)i;
    }
    if (q->ftail == q->fcap)
      mem_grow((void **)&q->fifo, &q->fcap, q->ftail + 1, sizeof(node));
  }
  assert(q->ftail < FIFO_BIT);
  q->recs[node_id(x)].pos = FIFO_BIT | (uint32_t)q->ftail;
  q->fifo[q->ftail++] = x;
  q->flive++;
}

/* The head past tombstones; the FIFO starts over when empty. */
static void fifo_settle(sim_queue *q) {
  while (q->fhead < q->ftail && is_tomb(q->fifo[q->fhead])) q->fhead++;
  if (q->flive == 0) q->fhead = q->ftail = 0;
}

/* Takes the FIFO event at pos out (a tombstone stays). */
static void fifo_remove(sim_queue *q, uint32_t pos) {
  q->fifo[pos & ~FIFO_BIT] = TOMB;
  q->flive--;
  fifo_settle(q);
}

/* Whether an event at t goes to the FIFO: t is the current time, and the
 * FIFO holds events of that time or none. */
static inline bool fifo_takes(const sim_queue *q, int64_t t) {
  return t == q->now && (q->flive == 0 || q->fifo_t == t);
}

/* Inserts x (its seq the newest) into the FIFO or the heap. */
static void insert(sim_queue *q, node x) {
  int64_t t = node_t(x);
  if (fifo_takes(q, t)) {
    q->fifo_t = t;
    fifo_append(q, x);
    return;
  }
  if (q->hole) { /* the popped root's place */
    q->hole = false;
    rise(q, descend(q, q->n), x);
    return;
  }
  if (q->n == q->heap_cap) heap_grow(q);
  size_t i = q->n++;
  rise(q, i, x);
}

static int node_cmp(const void *a, const void *b) {
  node x = *(const node *)a, y = *(const node *)b;
  return less(y, x) - less(x, y);
}

/* The seq counter reached SEQ_LIMIT: the pending events take seqs 0 .. n-1
 * in their (time, seq) order, which keeps the order of every pair, so the
 * pop order is as if seqs never wrapped. A sorted array is a heap. Once per
 * 2^32 pushes and moves: O(n log n). */
static void renumber(sim_queue *q) {
  settle(q);
  for (size_t i = q->fhead; i < q->ftail; i++) { /* the FIFO joins the heap */
    if (is_tomb(q->fifo[i])) continue;
    if (q->n == q->heap_cap) heap_grow(q);
    q->heap[q->n++] = q->fifo[i];
  }
  q->fhead = q->ftail = q->flive = 0;
  if (q->n) qsort(q->heap, q->n, sizeof(node), node_cmp);
  for (size_t i = 0; i < q->n; i++)
    place(q, i, node_make(node_t(q->heap[i]), i, node_id(q->heap[i])));
  q->seq = q->n;
  check_heap(q);
}

/* The seq of the next push or move. */
static inline uint64_t next_seq(sim_queue *q) {
  if (q->seq == SEQ_LIMIT) renumber(q);
  return q->seq++;
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
  uint64_t seq = next_seq(q);
  uint32_t h = rec_take(q);
  q->recs[h].kind = kind;
  q->recs[h].arg = arg;
  insert(q, node_make(t_ns, seq, h));
  check_heap(q);
  return h;
}

/* Removes the node at heap position i, keeping the heap order. */
static void remove_at(sim_queue *q, size_t i) {
  q->n--;
  node last = q->heap[q->n];
  q->heap[q->n] = PAD;
  if (i == q->n) return;
  if (i > 0 && less(last, q->heap[(i - 1) / ARITY])) {
    rise(q, i, last);
  } else {
    place(q, i, last);
    sift_down(q, i);
  }
}

/* Takes the earliest event out into *out when it is before t_stop, or
 * whatever its time when !bounded; false, changing nothing visible, when
 * the queue is empty or its earliest event is at or after t_stop. */
static inline bool take(sim_queue *q, sim_queue_item *out, int64_t t_stop,
                        bool bounded) {
  settle(q);
  node top;
  bool fifo = q->flive && (q->n == 0 || less(q->fifo[q->fhead], q->heap[0]));
  if (fifo) top = q->fifo[q->fhead];
  else if (q->n) top = q->heap[0];
  else return false;
  if (bounded && node_t(top) >= t_stop) return false;
  if (fifo) {
    q->fhead++;
    q->flive--;
    fifo_settle(q);
  } else {
    q->hole = true; /* removed by the next operation, or filled by a push */
  }
  const rec *r = &q->recs[node_id(top)];
  out->t_ns = q->now = node_t(top);
  out->kind = r->kind;
  out->arg = r->arg;
  rec_give(q, node_id(top));
  check_heap(q);
  return true;
}

bool sim_queue_pop(sim_queue *q, sim_queue_item *out) {
  return take(q, out, 0, false);
}

bool sim_queue_pop_before(sim_queue *q, int64_t t_stop, sim_queue_item *out) {
  return take(q, out, t_stop, true);
}

void sim_queue_cancel(sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  settle(q);
  uint32_t pos = q->recs[h].pos;
  if (pos & FIFO_BIT) fifo_remove(q, pos);
  else remove_at(q, pos);
  rec_give(q, h);
  check_heap(q);
}

void sim_queue_move(sim_queue *q, sim_queue_event h, int64_t t_ns) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  settle(q);
  uint64_t seq = next_seq(q); /* may renumber: pos is read after */
  size_t i = q->recs[h].pos;
  node x = node_make(t_ns, seq, h);
  if ((i & FIFO_BIT) || fifo_takes(q, t_ns)) { /* out, then in anew */
    if (i & FIFO_BIT) fifo_remove(q, (uint32_t)i);
    else remove_at(q, i);
    insert(q, x);
  } else if (less(x, q->heap[i])) {
    rise(q, i, x);
  } else {
    q->heap[i] = x;
    sift_down(q, i);
  }
  check_heap(q);
}

size_t sim_queue_size(const sim_queue *q) {
  return q->n - q->hole + q->flive;
}

int64_t sim_queue_peek_time(const sim_queue *q) {
  int64_t t = q->n > q->hole ? node_t(heap_min(q)) : INT64_MAX;
  return q->flive && q->fifo_t < t ? q->fifo_t : t;
}

int64_t sim_queue_time(const sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].pos != FREE_POS);
  uint32_t pos = q->recs[h].pos;
  return pos & FIFO_BIT ? q->fifo_t : node_t(q->heap[pos]);
}

void sim_queue_seq_start(sim_queue *q, uint64_t seq) {
  settle(q);
  assert(q->n == 0 && q->flive == 0 && seq <= SEQ_LIMIT);
  q->seq = seq;
}
