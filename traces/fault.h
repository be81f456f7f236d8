/* fault: a fault trace (DESIGN.md section 10) — outages and slowdowns of
 * devices, sites and links, each from a time for a duration — read from
 * CSV against a scenario and replayed as step functions the engine queries.
 * Invariant: events keep file order, their times non-decreasing; every
 * target is a device or a site of the scenario the trace was read against;
 * an event holds on [t, t + duration) (for ever with duration inf), and a
 * query at time t sees exactly the events that hold at t, every query a
 * binary search. */
#ifndef TRACES_FAULT_H
#define TRACES_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "traces/fault_kind.h"
#include "traces/scenario.h"

typedef struct fault_trace fault_trace;

/* Parses fault-trace CSV text (len bytes; '#' comments for provenance, then
 * exactly FAULT_HEADER, then rows sorted by t_s) against s: device indices
 * 0 .. ndevices-1, site names of s. name is used in "NAME:LINE: message"
 * errors: an unknown event, device or site, a time that is negative or not
 * a number, rows out of time order, a duration that is not a number > 0 or
 * inf, a factor that is missing, NaN or not > 0 where one is needed, or
 * given where none is. A header with no rows is an empty trace. NULL and e
 * filled on error; the caller owns the result. */
fault_trace *fault_parse(const char *text, size_t len, const char *name,
                         const scenario *s, err *e);

/* fault_parse on the file at path. */
fault_trace *fault_load(const char *path, const scenario *s, err *e);

/* Frees f; NULL is fine. */
void fault_free(fault_trace *f);

size_t fault_count(const fault_trace *f);
const fault_event *fault_event_at(const fault_trace *f, size_t i);

/* The first "# key: value" of a key, or NULL; borrowed. */
const char *fault_comment(const fault_trace *f, const char *key);

/* The events' content (times, kinds, targets, durations, factors), not the
 * comments or the file's layout: what a result depends on. */
uint64_t fault_hash(const fault_trace *f);

/* ---- replay: the state at time t_ns >= 0 ---- */

/* Device d is up: no device_down of d and no site_down of its site holds. */
bool fault_device_up(const fault_trace *f, int d, int64_t t_ns);

/* The product of the device_slow factors of d that hold (1: none). */
double fault_device_speed(const fault_trace *f, int d, int64_t t_ns);

/* The bandwidth multiplier between sites a and b (either order): 0 while a
 * link_down holds, else the product of the link_slow factors (1: none). */
double fault_link_factor(const fault_trace *f, int a, int b, int64_t t_ns);

/* The first time > t_ns at which any of the above changes, or FAULT_FOREVER;
 * fault_device_next gives the same for device d's up state and speed. */
int64_t fault_next_change(const fault_trace *f, int64_t t_ns);
int64_t fault_device_next(const fault_trace *f, int d, int64_t t_ns);

/* The end of the outage of d that holds at t_ns (the time it is up again,
 * FAULT_FOREVER when never), or t_ns when d is up. */
int64_t fault_device_up_again(const fault_trace *f, int d, int64_t t_ns);

/* ---- writing ---- */

/* Seconds of ns as the shortest exact decimal ("12", "0.5", "3.000000001")
 * into buf (>= 32 bytes); FAULT_FOREVER as "inf". */
void fault_format_s(char *buf, size_t size, int64_t ns);

/* One row in the trace's format: the target as a device index, a site name
 * or "A:B" (names of s); factor written only for the *_slow events.
 * Returns ERR_OK or ERR_IO (errno's reason in e, naming path). */
int fault_write_row(FILE *out, const char *path, const scenario *s,
                    const fault_event *ev, err *e);

#endif
