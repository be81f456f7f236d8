/* test_queue: the event queue against a naive reference (an unsorted array
 * scanned for the minimum (time, seq)) on seeded random operation sequences:
 * push, pop, pop_before, cancel and move, with many equal times to exercise
 * tie order, and pushes and moves at the current time (the last pop's),
 * which the radix heap keeps in its bucket 0. Times are monotone, as the
 * queue requires: each is drawn at or after the last pop's. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "sim/queue.h"

typedef struct ref_ev {
  int64_t t;
  uint64_t seq;
  uint32_t arg;
  sim_queue_event h;
} ref_ev;

static size_t ref_min(const ref_ev *r, size_t n) {
  size_t m = 0;
  for (size_t i = 1; i < n; i++)
    if (r[i].t < r[m].t || (r[i].t == r[m].t && r[i].seq < r[m].seq)) m = i;
  return m;
}

/* nops random operations from time t0 on, times in [now, now + tmax) where
 * now is the last pop's time (t0 before any). */
static void run_sequence_from(unsigned long seed, int nops, int tmax,
                              int64_t t0) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, seed);
  sim_queue *q = sim_queue_new();
  ref_ev *r = calloc((size_t)nops, sizeof *r);
  size_t n = 0;
  uint64_t seq = 0;
  int64_t now = t0; /* the last pop's time */
  bool popped = false;
  uint32_t next_arg = 0;
  for (int op = 0; op < nops; op++) {
    unsigned long k = gsl_rng_uniform_int(g, 11);
    int64_t t = now + (int64_t)gsl_rng_uniform_int(g, (unsigned long)tmax);
    if (k == 0 && popped) t = now; /* at the current time: bucket 0 */
    if (k == 9 && popped && n) t = now; /* moved to it */
    if (k == 10 && n) { /* pop_before a time around the earliest */
      size_t m = ref_min(r, n);
      int64_t stop = r[m].t + (int64_t)gsl_rng_uniform_int(g, 3) - 1;
      sim_queue_item it;
      bool got = sim_queue_pop_before(q, stop, &it);
      cr_assert_eq(got, r[m].t < stop, "op %d: pop_before %lld, earliest %lld",
                   op, (long long)stop, (long long)r[m].t);
      if (got) {
        cr_assert_eq(it.arg, r[m].arg);
        now = it.t_ns, popped = true;
        r[m] = r[--n];
      }
    } else if (k < 5 || k == 10 || n == 0) {
      r[n] = (ref_ev){t, seq++, next_arg, 0};
      r[n].h = sim_queue_push(q, t, 7, next_arg++);
      n++;
    } else if (k < 8) {
      size_t m = ref_min(r, n);
      sim_queue_item it;
      cr_assert(sim_queue_pop(q, &it));
      cr_assert_eq(it.t_ns, r[m].t);
      cr_assert_eq(it.arg, r[m].arg, "op %d: popped %u, want %u", op, it.arg,
                   r[m].arg);
      cr_assert_eq(it.kind, 7);
      now = it.t_ns, popped = true;
      r[m] = r[--n];
    } else if (k < 9) {
      size_t i = gsl_rng_uniform_int(g, n);
      cr_assert_eq(sim_queue_time(q, r[i].h), r[i].t);
      sim_queue_cancel(q, r[i].h);
      r[i] = r[--n];
    } else {
      size_t i = gsl_rng_uniform_int(g, n);
      sim_queue_move(q, r[i].h, t);
      r[i].t = t;
      r[i].seq = seq++;
    }
    cr_assert_eq(sim_queue_size(q), n);
    if (n) cr_assert_eq(sim_queue_peek_time(q), r[ref_min(r, n)].t);
  }
  while (n) {
    size_t m = ref_min(r, n);
    sim_queue_item it;
    cr_assert(sim_queue_pop(q, &it));
    cr_assert_eq(it.arg, r[m].arg);
    r[m] = r[--n];
  }
  sim_queue_item it;
  cr_assert_not(sim_queue_pop(q, &it));
  cr_assert_eq(sim_queue_peek_time(q), INT64_MAX);
  free(r);
  sim_queue_free(q);
  gsl_rng_free(g);
}

static void run_sequence(unsigned long seed, int nops, int tmax) {
  run_sequence_from(seed, nops, tmax, 0);
}

Test(queue, matches_reference_with_many_ties) {
  for (unsigned long s = 1; s <= 20; s++) run_sequence(s, 3000, 16);
}

Test(queue, matches_reference_wide_times) {
  for (unsigned long s = 100; s < 105; s++) run_sequence(s, 20000, 1 << 30);
}

/* Times of any sign and near the ends of int64: the queue orders them by
 * their sign-flipped bits, and its buckets span all 64 of them. */
Test(queue, matches_reference_at_extreme_times) {
  for (unsigned long s = 1; s <= 5; s++) {
    run_sequence_from(s, 3000, 1 << 20, -((int64_t)1 << 40));
    run_sequence_from(s, 3000, 1 << 30, INT64_MIN);
    run_sequence_from(s, 2000, 16, INT64_MAX - 40000);
  }
}

Test(queue, pop_before_leaves_later_events) {
  sim_queue *q = sim_queue_new();
  sim_queue_push(q, 10, 0, 1);
  sim_queue_push(q, 20, 0, 2);
  sim_queue_item it;
  cr_assert_not(sim_queue_pop_before(q, INT64_MIN, &it));
  cr_assert_not(sim_queue_pop_before(q, 10, &it));
  cr_assert(sim_queue_pop_before(q, 11, &it));
  cr_assert_eq(it.arg, 1);
  cr_assert_not(sim_queue_pop_before(q, 20, &it));
  cr_assert_eq(sim_queue_peek_time(q), 20);
  sim_queue_push(q, 15, 0, 3); /* after the last pop (10): allowed */
  cr_assert(sim_queue_pop(q, &it));
  cr_assert_eq(it.arg, 3);
  cr_assert(sim_queue_pop_before(q, INT64_MAX, &it));
  cr_assert_eq(it.arg, 2);
  cr_assert_not(sim_queue_pop_before(q, INT64_MAX, &it));
  sim_queue_push(q, INT64_MAX, 0, 4); /* the last instant pops too */
  cr_assert(sim_queue_pop(q, &it));
  cr_assert_eq(it.t_ns, INT64_MAX);
  sim_queue_free(q);
}

Test(queue, equal_times_pop_in_insertion_order) {
  sim_queue *q = sim_queue_new();
  for (uint32_t i = 0; i < 100; i++) sim_queue_push(q, 5, 0, i);
  sim_queue_item it;
  for (uint32_t i = 0; i < 100; i++) {
    cr_assert(sim_queue_pop(q, &it));
    cr_assert_eq(it.arg, i);
  }
  sim_queue_free(q);
}

Test(queue, moved_event_goes_after_existing_ties) {
  sim_queue *q = sim_queue_new();
  sim_queue_event a = sim_queue_push(q, 1, 0, 0);
  sim_queue_push(q, 3, 0, 1);
  sim_queue_move(q, a, 3);
  sim_queue_item it;
  cr_assert(sim_queue_pop(q, &it));
  cr_assert_eq(it.arg, 1);
  cr_assert(sim_queue_pop(q, &it));
  cr_assert_eq(it.arg, 0);
  sim_queue_free(q);
  sim_queue_free(NULL);
}
