/* queue: a radix heap over event times with a pooled event table.
 * Event times are monotone: nothing is scheduled before the last pop's time
 * (asserted), so the pending events can be kept in buckets by how far they
 * lie from it, as Ahuja, Mehlhorn, Orlin and Tarjan's radix heap does.
 * Invariant: `last` is the time of the last pop (the sign bit flipped, so
 * that unsigned order is signed order; 0 before any pop); a pending event
 * at time u sits in bucket 0 when u == last, else in bucket
 * 64 - clz(u ^ last) (the highest bit where u and last differ), so every
 * event of a bucket orders before every event of a higher one. Within a
 * bucket the live events lie in the order they were pushed or moved in:
 * a push or a move appends, a removal leaves a tombstone (order kept), and
 * a bucket is refilled only while it and every bucket below it are empty
 * (spill, below), in its source's order. So equal times -- all in one
 * bucket -- pop in insertion order without a sequence number, and the pop
 * order is total and reproducible.
 * A pop takes the head of bucket 0; when bucket 0 is empty, the lowest
 * bucket with live events is spilled: its minimum becomes last and its
 * events move to lower buckets. An event moves down at most 64 times, and
 * in practice a few: a pop costs a few dozen instructions where the
 * 4-ary heap it replaces cost about 200.
 * rec[h].idx is the index of pending event h in its bucket rec[h].b (or
 * FREE_IDX when h is on the free list), and the node there names h. */
#include "sim/queue.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

#define FREE_IDX UINT32_MAX
#define TOMB UINT32_MAX /* a node's id after its event was removed */
#define NBUCKETS 65
#define SIGN ((uint64_t)1 << 63)
#define COMPACT_MIN 64 /* a bucket this long compacts when half tombstones */

typedef struct node {
  uint64_t u;  /* the time, sign bit flipped */
  uint32_t id; /* the event, or TOMB */
  uint32_t pad;
} node;

typedef struct bucket {
  node *v;
  uint32_t head, len, cap, live; /* v[head .. len): live and tombstones */
  uint64_t min; /* the least live time; UINT64_MAX when none */
} bucket;

typedef struct rec {
  uint32_t idx;  /* index in bucket b, or FREE_IDX */
  uint32_t b;    /* bucket when pending; free-list link when free */
  int kind;
  uint32_t arg;
} rec;

struct sim_queue {
  bucket b[NBUCKETS];
  uint64_t mask; /* bit k - 1: bucket k (>= 1) has live events */
  uint64_t last; /* the last pop's time, flipped; 0 before any */
  size_t live;   /* pending events */
  rec *recs;
  size_t nrecs, recs_cap;
  uint32_t free_head;
};

static inline uint64_t flip(int64_t t) { return (uint64_t)t ^ SIGN; }
static inline int64_t unflip(uint64_t u) { return (int64_t)(u ^ SIGN); }

/* The bucket of time u (>= last). */
static inline unsigned bucket_of(uint64_t u, uint64_t last) {
  uint64_t x = u ^ last;
  return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

sim_queue *sim_queue_new(void) {
  sim_queue *q = mem_calloc(1, sizeof *q);
  q->free_head = SIM_QUEUE_NONE;
  for (int k = 0; k < NBUCKETS; k++) q->b[k].min = UINT64_MAX;
  return q;
}

void sim_queue_free(sim_queue *q) {
  if (!q) return;
  for (int k = 0; k < NBUCKETS; k++) free(q->b[k].v);
  free(q->recs);
  free(q);
}

#if defined(SIM_QUEUE_DEBUG) && !defined(NDEBUG)
/* The whole invariant, checked after every operation when SIM_QUEUE_DEBUG
 * is defined (CMake's Debug build type): O(n) each. */
static void check_all(const sim_queue *q) {
  size_t live = 0;
  for (unsigned k = 0; k < NBUCKETS; k++) {
    const bucket *x = &q->b[k];
    uint32_t n = 0;
    uint64_t min = UINT64_MAX;
    for (uint32_t i = x->head; i < x->len; i++) {
      if (x->v[i].id == TOMB) continue;
      n++;
      if (x->v[i].u < min) min = x->v[i].u;
      assert(bucket_of(x->v[i].u, q->last) == k);
      assert(q->recs[x->v[i].id].b == k && q->recs[x->v[i].id].idx == i);
    }
    assert(n == x->live && (k == 0 || min == x->min));
    assert(k == 0 || (!!(q->mask & ((uint64_t)1 << (k - 1)))) == (n > 0));
    assert(x->live || (x->head == 0 && x->len == 0));
    assert(k != 0 || !x->live || x->v[x->head].id != TOMB);
    live += n;
  }
  assert(live == q->live);
}
#else
static inline void check_all(const sim_queue *q) { (void)q; }
#endif

/* Room for one more node in bucket x (full). */
static void room(bucket *x) {
  size_t cap = x->cap;
  mem_grow((void **)&x->v, &cap, (size_t)x->len + 1, sizeof *x->v);
  assert(cap < FREE_IDX);
  x->cap = (uint32_t)cap;
}

/* Appends event id at u to bucket k (its order: the newest). */
static inline void append(sim_queue *q, unsigned k, uint64_t u, uint32_t id) {
  bucket *x = &q->b[k];
  if (x->len == x->cap) room(x);
  x->v[x->len] = (node){u, id, 0};
  uint64_t lo = x->min;
  x->min = u < lo ? u : lo;
  q->recs[id].idx = x->len++;
  q->recs[id].b = k;
  x->live++;
  q->mask |= k ? (uint64_t)1 << (k - 1) : 0;
}

/* Bucket k's nodes from head on without its tombstones, in order. */
static void compact(sim_queue *q, unsigned k) {
  bucket *x = &q->b[k];
  uint32_t j = 0;
  for (uint32_t i = x->head; i < x->len; i++) {
    if (x->v[i].id == TOMB) continue;
    x->v[j] = x->v[i];
    q->recs[x->v[j].id].idx = j;
    j++;
  }
  x->head = 0;
  x->len = j;
}

/* The least live time of bucket x (UINT64_MAX when none): a scan. */
static uint64_t scan_min(const bucket *x) {
  uint64_t m = UINT64_MAX;
  for (uint32_t i = x->head; i < x->len; i++)
    if (x->v[i].id != TOMB && x->v[i].u < m) m = x->v[i].u;
  return m;
}

/* Takes the node at (k, i) out (a cancel or a move): a tombstone stays;
 * an empty bucket starts over, bucket 0's head moves past tombstones, a
 * long bucket that is mostly tombstones is compacted, and a bucket that
 * lost its least time finds the next. */
static void remove_at(sim_queue *q, unsigned k, uint32_t i) {
  bucket *x = &q->b[k];
  assert(i >= x->head && i < x->len && x->v[i].id != TOMB);
  uint64_t u = x->v[i].u;
  x->v[i].id = TOMB;
  q->live--;
  if (--x->live == 0) {
    x->head = x->len = 0;
    x->min = UINT64_MAX;
    if (k) q->mask &= ~((uint64_t)1 << (k - 1));
    return;
  }
  if (k == 0)
    while (x->v[x->head].id == TOMB) x->head++;
  if (x->len - x->head >= COMPACT_MIN && 2 * x->live < x->len - x->head)
    compact(q, k);
  if (k && u == x->min) x->min = scan_min(x);
}

/* Bucket k (>= 1), the lowest with live events while bucket 0 has none,
 * whose least time is m: m becomes last, and its events go to the buckets
 * below, in order (those buckets are empty, so each keeps its order). The
 * loop has no data-dependent branch but the rare growth: least times by
 * select, the mask and live counts set once after it. */
static void spill(sim_queue *q, unsigned k, uint64_t m) {
  bucket *x = &q->b[k];
  assert(q->b[0].live == 0 && m > q->last);
  q->last = m;
  rec *restrict recs = q->recs;
  uint64_t touched = 0; /* bit j: bucket j received events */
  for (uint32_t i = x->head, n = x->len; i < n; i++) {
    uint32_t id = x->v[i].id;
    if (id == TOMB) continue;
    uint64_t u = x->v[i].u;
    unsigned j = bucket_of(u, m);
    assert(j < k && (q->b[j].live == 0 || (touched >> j & 1)));
    bucket *y = &q->b[j];
    if (y->len == y->cap) room(y);
    uint32_t at = y->len++;
    y->v[at] = (node){u, id, 0};
    uint64_t lo = y->min;
    y->min = u < lo ? u : lo;
    recs[id].idx = at;
    recs[id].b = j;
    touched |= (uint64_t)1 << j;
  }
  for (uint64_t t = touched; t; t &= t - 1) {
    bucket *y = &q->b[__builtin_ctzll(t)];
    y->live = y->len;
  }
  x->head = x->len = x->live = 0;
  x->min = UINT64_MAX;
  q->mask = (q->mask & ~((uint64_t)1 << (k - 1))) | touched >> 1;
}

/* The lowest bucket with live events (bucket 0 has none) and its least
 * time; false when the queue is empty. */
static inline bool lowest(const sim_queue *q, unsigned *k, uint64_t *m) {
  if (!q->mask) return false;
  *k = (unsigned)__builtin_ctzll(q->mask) + 1;
  *m = q->b[*k].min;
  return true;
}

/* t_ns flipped, which must not be before the last pop's time (asserted);
 * without asserts such a time is taken as the last pop's, so that a
 * caller's bug misorders one event instead of breaking the buckets. */
static inline uint64_t at_least_last(const sim_queue *q, int64_t t_ns) {
  uint64_t u = flip(t_ns);
  assert(u >= q->last);
  return u < q->last ? q->last : u;
}

static uint32_t rec_take(sim_queue *q) {
  if (q->free_head != SIM_QUEUE_NONE) {
    uint32_t h = q->free_head;
    q->free_head = q->recs[h].b;
    return h;
  }
  mem_grow((void **)&q->recs, &q->recs_cap, q->nrecs + 1, sizeof *q->recs);
  assert(q->nrecs < SIM_QUEUE_NONE);
  return (uint32_t)q->nrecs++;
}

static void rec_give(sim_queue *q, uint32_t h) {
  q->recs[h].idx = FREE_IDX;
  q->recs[h].b = q->free_head;
  q->free_head = h;
}

sim_queue_event sim_queue_push(sim_queue *q, int64_t t_ns, int kind,
                               uint32_t arg) {
  uint64_t u = at_least_last(q, t_ns);
  uint32_t h = rec_take(q);
  q->recs[h].kind = kind;
  q->recs[h].arg = arg;
  append(q, bucket_of(u, q->last), u, h);
  q->live++;
  check_all(q);
  return h;
}

/* Pops the earliest event when its time (flipped) is at most lim. */
static inline bool pop_upto(sim_queue *q, uint64_t lim, sim_queue_item *out) {
  bucket *z = &q->b[0];
  if (z->live == 0) {
    unsigned k;
    uint64_t m;
    if (!lowest(q, &k, &m) || m > lim) return false;
    spill(q, k, m);
  } else if (q->last > lim) {
    return false;
  }
  uint32_t h = z->v[z->head].id;
  assert(h != TOMB);
  const rec *r = &q->recs[h];
  out->t_ns = unflip(q->last);
  out->kind = r->kind;
  out->arg = r->arg;
  q->live--;
  if (--z->live == 0) { /* the head taken: no tombstone needed */
    z->head = z->len = 0;
  } else {
    do z->head++; while (z->v[z->head].id == TOMB);
  }
  rec_give(q, h);
  check_all(q);
  return true;
}

bool sim_queue_pop(sim_queue *q, sim_queue_item *out) {
  return pop_upto(q, UINT64_MAX, out);
}

bool sim_queue_pop_before(sim_queue *q, int64_t t_stop, sim_queue_item *out) {
  return t_stop != INT64_MIN && pop_upto(q, flip(t_stop) - 1, out);
}

void sim_queue_cancel(sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].idx != FREE_IDX);
  remove_at(q, q->recs[h].b, q->recs[h].idx);
  rec_give(q, h);
  check_all(q);
}

void sim_queue_move(sim_queue *q, sim_queue_event h, int64_t t_ns) {
  assert(h < q->nrecs && q->recs[h].idx != FREE_IDX);
  uint64_t u = at_least_last(q, t_ns);
  remove_at(q, q->recs[h].b, q->recs[h].idx);
  append(q, bucket_of(u, q->last), u, h);
  q->live++;
  check_all(q);
}

size_t sim_queue_size(const sim_queue *q) { return q->live; }

int64_t sim_queue_peek_time(const sim_queue *q) {
  if (q->b[0].live) return unflip(q->last);
  unsigned k;
  uint64_t m;
  return lowest(q, &k, &m) ? unflip(m) : INT64_MAX;
}

int64_t sim_queue_time(const sim_queue *q, sim_queue_event h) {
  assert(h < q->nrecs && q->recs[h].idx != FREE_IDX);
  const rec *r = &q->recs[h];
  return unflip(q->b[r->b].v[r->idx].u);
}
