/* queue: the engine's future event list, an indexed 4-ary min-heap.
 * Invariant: the root is the minimum (time, seq); seq is unique among the
 * pending events and grows with every push or move, so the pop order is
 * total and reproducible (equal times pop in insertion order). Event
 * records come from a pool that grows by doubling and recycles through a
 * free list: no malloc per event. */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_queue sim_queue;

/* A handle to a pending event. It stays valid until the event is popped or
 * cancelled; after that the slot may be reused, so the owner must forget it
 * (set it to SIM_QUEUE_NONE). */
typedef uint32_t sim_queue_event;
#define SIM_QUEUE_NONE UINT32_MAX

/* What a popped event carries: a kind the engine dispatches on and one
 * integer argument (an index into the owner's tables). */
typedef struct sim_queue_item {
  int64_t t_ns;
  int kind;
  uint32_t arg;
} sim_queue_item;

/* An empty queue; free with sim_queue_free (NULL is fine). */
sim_queue *sim_queue_new(void);
void sim_queue_free(sim_queue *q);

/* Schedules (kind, arg) at t_ns; returns its handle. O(log n). */
sim_queue_event sim_queue_push(sim_queue *q, int64_t t_ns, int kind,
                               uint32_t arg);

/* Removes the earliest event into *out; false when the queue is empty. */
bool sim_queue_pop(sim_queue *q, sim_queue_item *out);

/* The same when the earliest event is before t_stop; false, removing
 * nothing, when the queue is empty or that event is at or after t_stop. */
bool sim_queue_pop_before(sim_queue *q, int64_t t_stop, sim_queue_item *out);

/* Cancels a pending event (h must be pending). O(log n). */
void sim_queue_cancel(sim_queue *q, sim_queue_event h);

/* Moves a pending event to t_ns, as if cancelled and pushed again (it takes a
 * fresh seq, so it pops after events already at t_ns). O(log n). */
void sim_queue_move(sim_queue *q, sim_queue_event h, int64_t t_ns);

size_t sim_queue_size(const sim_queue *q);
/* Time of the earliest event; INT64_MAX when empty. */
int64_t sim_queue_peek_time(const sim_queue *q);
/* The time a pending event is scheduled at. */
int64_t sim_queue_time(const sim_queue *q, sim_queue_event h);

/* For tests: the next push or move of the empty queue q takes sequence
 * number seq, so a test reaches the renumbering that keeps sequence numbers
 * 32-bit (after 2^32 pushes) without making them all. */
void sim_queue_seq_start(sim_queue *q, uint64_t seq);

#endif
