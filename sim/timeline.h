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
#include "models/transport.h"
#include "traces/fault.h"
#include "traces/scenario.h"

/* The name of each task role (sim_task_role), as slices are named. */
#define SIM_TIMELINE_NROLES SIM_NROLES
extern const char *const sim_timeline_role_names[SIM_TIMELINE_NROLES];

/* The network a run's transfers crossed, when the writer knows it: each
 * communication slice then carries its link (site pair), its mean rate on
 * the wire and the cause of that rate (sim/critpath.h), and a "links"
 * process (pid ndevices) holds one counter track per directed site pair:
 * its rate in Gbit/s and its flows on the wire (sim/linkstats.h), whose
 * integral is the bytes of the link's slices. Borrowed. */
typedef struct sim_timeline_net {
  const scenario *s;
  const transport_options *o;
  const sim_rate_log *rates; /* the run's rate changes; NULL: mean rates */
} sim_timeline_net;

/* Writes the tasks (n of them) of a finished run to f. device_name(i) names
 * process i (NULL: "device i"); ndevices processes. meta (NULL: none) is
 * the run's transport (transport_facts_line), kept as the file's
 * otherData.transport. Every communication slice carries its peer and
 * bytes, and with net (NULL: none) the above. */
void sim_timeline_write(FILE *f, const sim_task *t, uint32_t n, int ndevices,
                        const char *const *device_name, const char *meta,
                        const sim_timeline_net *net);

/* The same into the file at path (base/file_out.h: whole or not at all);
 * ERR_IO (naming the path) if it cannot be written. */
int sim_timeline_save(const char *path, const sim_task *t, uint32_t n,
                      int ndevices, const char *const *device_name,
                      const char *meta, const sim_timeline_net *net, err *e);

/* A timeline of a whole training run, written as its iterations finish
 * (memory does not grow with their number): one process per device of the
 * run's scenario, the same tracks as above. */
typedef struct sim_timeline_stream sim_timeline_stream;

/* Opens it at path for scenario s (names borrowed until close), meta as
 * sim_timeline_write's. NULL and e filled (ERR_IO, naming the path) when
 * the file cannot be written. */
sim_timeline_stream *sim_timeline_stream_open(const char *path,
                                              const scenario *s,
                                              const char *meta, err *e);

/* The runs' transport (borrowed until close): from now on slices and
 * counters carry the network's facts as sim_timeline_net says. */
void sim_timeline_stream_net(sim_timeline_stream *t,
                             const transport_options *o);

/* Adds the finished tasks of one run; the run's device d is process
 * dmap[d] (NULL: d). */
void sim_timeline_stream_add(sim_timeline_stream *t, const sim_task *tasks,
                             uint32_t n, const int *dmap);

/* Marks the start of every fault of f: an instant on each device it takes
 * or slows, a global instant for a link. */
void sim_timeline_stream_faults(sim_timeline_stream *t, const fault_trace *f,
                                const scenario *s);

/* Ends the JSON and closes the file, freeing t: ERR_OK, or ERR_IO (in e)
 * when a write failed. e NULL: the run failed, and the file is left as it
 * was (base/file_out.h: the timeline appears whole or not at all). */
int sim_timeline_stream_close(sim_timeline_stream *t, err *e);

#endif
