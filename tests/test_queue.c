/* test_queue: the event queue against a naive reference (an unsorted array
 * scanned for the minimum (time, seq)) on seeded random operation sequences:
 * push, pop, cancel and move, with many equal times to exercise tie order,
 * and pushes and moves at the current time (the last pop's), which the
 * queue keeps in a FIFO beside its heap; pops until a time too
 * (sim_queue_pop_before). A pop from the heap leaves its root vacant until
 * the next operation (a push fills it): every operation follows one. */
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

/* nops random operations from seq0 on (the queue's seq counter set there
 * too), times in [0, tmax). */
static void run_sequence_from(unsigned long seed, int nops, int tmax,
                              uint64_t seq0) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, seed);
  sim_queue *q = sim_queue_new();
  sim_queue_seq_start(q, seq0);
  ref_ev *r = calloc((size_t)nops, sizeof *r);
  size_t n = 0;
  uint64_t seq = seq0;
  int64_t now = -1; /* the last pop's time */
  uint32_t next_arg = 0;
  for (int op = 0; op < nops; op++) {
    unsigned long k = gsl_rng_uniform_int(g, 10);
    int64_t t = (int64_t)gsl_rng_uniform_int(g, (unsigned long)tmax);
    if (k == 0 && now >= 0) t = now; /* at the current time: the FIFO */
    if (k == 9 && now >= 0 && n) t = now; /* moved to it */
    if (k < 5 || n == 0) {
      r[n] = (ref_ev){t, seq++, next_arg, 0};
      r[n].h = sim_queue_push(q, t, 7, next_arg++);
      n++;
    } else if (k == 7 && gsl_rng_uniform_int(g, 2)) { /* pop before t */
      size_t m = ref_min(r, n);
      sim_queue_item it;
      bool took = sim_queue_pop_before(q, t, &it);
      cr_assert_eq(took, r[m].t < t, "op %d: pop before %lld", op, (long long)t);
      if (took) { /* else nothing changed: the checks below say so */
        cr_assert_eq(it.t_ns, r[m].t);
        cr_assert_eq(it.arg, r[m].arg);
        now = it.t_ns;
        r[m] = r[--n];
      }
    } else if (k < 8) {
      size_t m = ref_min(r, n);
      sim_queue_item it;
      cr_assert(sim_queue_pop(q, &it));
      cr_assert_eq(it.t_ns, r[m].t);
      cr_assert_eq(it.arg, r[m].arg, "op %d: popped %u, want %u", op, it.arg,
                   r[m].arg);
      cr_assert_eq(it.kind, 7);
      now = it.t_ns;
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

/* The queue keeps its seqs 32-bit by renumbering the pending events when
 * its counter reaches 2^32: the order stays the reference's, whose seqs
 * simply go on (64-bit), across one renumbering and, from the limit
 * itself, right at it. */
Test(queue, matches_reference_across_seq_renumbering) {
  for (unsigned long s = 1; s <= 10; s++)
    run_sequence_from(s, 3000, 16, ((uint64_t)1 << 32) - 1000);
  run_sequence_from(11, 3000, 1 << 20, (uint64_t)1 << 32);
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
