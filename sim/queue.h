/* queue: the engine's future event list, a radix heap over event times.
 * Invariant: events pop in (time, insertion) order -- equal times in the
 * order they were pushed or moved -- so the pop order is total and
 * reproducible; times are monotone: no event is scheduled before the last
 * pop's time (asserted). Event records come from a pool that grows by
 * doubling and recycles through a free list: no malloc per event. */
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

/* Schedules (kind, arg) at t_ns, which must not be before the last pop's
 * time; returns its handle. O(1). */
sim_queue_event sim_queue_push(sim_queue *q, int64_t t_ns, int kind,
                               uint32_t arg);

/* Removes the earliest event into *out; false when the queue is empty.
 * O(1) amortised per bucket an event moves down (at most 64). */
bool sim_queue_pop(sim_queue *q, sim_queue_item *out);

/* sim_queue_pop when the earliest event is before t_stop; false (and the
 * queue as it was) when it is not or the queue is empty. */
bool sim_queue_pop_before(sim_queue *q, int64_t t_stop, sim_queue_item *out);

/* Cancels a pending event (h must be pending). O(1) amortised. */
void sim_queue_cancel(sim_queue *q, sim_queue_event h);

/* Moves a pending event to t_ns (not before the last pop's time), as if
 * cancelled and pushed again: it pops after events already at t_ns. O(1)
 * amortised. */
void sim_queue_move(sim_queue *q, sim_queue_event h, int64_t t_ns);

size_t sim_queue_size(const sim_queue *q);
/* Time of the earliest event; INT64_MAX when empty. O(1) after a pop at
 * the same time, else a scan of one bucket: the run loop pops with
 * sim_queue_pop_before instead. */
int64_t sim_queue_peek_time(const sim_queue *q);
/* The time a pending event is scheduled at. */
int64_t sim_queue_time(const sim_queue *q, sim_queue_event h);

#endif
