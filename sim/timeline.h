/* timeline: a simulated run as Chrome Trace Event JSON (opens in Perfetto
 * and chrome://tracing): one process per device, one thread (track) per
 * stream — compute, send, receive — and "X" (complete) events in
 * microseconds; a stream whose slices overlap (gradient chunks in flight
 * together) gets extra tracks, as the format forbids overlapping slices on
 * one thread. Invariant: written from the finished task records only, so
 * the timeline never influences the simulation. */
#ifndef SIM_TIMELINE_H
#define SIM_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "sim/graph.h"

/* Writes the tasks (n of them) of a finished run to f. device_name(i) names
 * process i (NULL: "device i"); ndevices processes. */
void sim_timeline_write(FILE *f, const sim_task *t, uint32_t n, int ndevices,
                        const char *const *device_name);

/* The same into the file at path; ERR_IO (naming the path) if it cannot be
 * written. */
int sim_timeline_save(const char *path, const sim_task *t, uint32_t n,
                      int ndevices, const char *const *device_name, err *e);

#endif
