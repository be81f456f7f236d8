/* workload: the names a scenario's workload block, a knob, a sweep and the
 * command line give the pipeline schedule, the data-parallel algorithm and
 * the runtime — one home, at the lowest layer that checks them (the
 * scenario loader, at FILE:LINE). models/spec resolves them into its enums,
 * which it generates from the maps below, so a name and its enum value
 * cannot part.
 * Invariant: each map's first entry is the default (what a scenario that
 * names none gets); the lists are the maps' names in map order. */
#ifndef TRACES_WORKLOAD_H
#define TRACES_WORKLOAD_H

/* X(ID, "name"), in the order of the enums generated from them. */
#define WORKLOAD_SCHEDULE_MAP(X) \
  X(GPIPE, "gpipe")              \
  X(1F1B, "1f1b")
#define WORKLOAD_DP_ALGO_MAP(X)  \
  X(CENTRAL_PS, "central-ps")    \
  X(RING, "ring")                \
  X(SHARDED_PS, "sharded-ps")
#define WORKLOAD_RUNTIME_MAP(X)  \
  X(DTFM, "dtfm")                \
  X(MEGATRON, "megatron")

/* The names of each map, NULL-terminated ("gpipe", "1f1b", NULL). */
extern const char *const workload_schedules[];
extern const char *const workload_dp_algos[];
extern const char *const workload_runtimes[];

#endif
