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

#include <stdbool.h>

/* X(ID, "name"), in the order of the enums generated from them. */
#define WORKLOAD_SCHEDULE_MAP(X) \
  X(GPIPE, "gpipe")              \
  X(1F1B, "1f1b")
#define WORKLOAD_DP_ALGO_MAP(X)  \
  X(CENTRAL_PS, "central-ps")    \
  X(RING, "ring")                \
  X(SHARDED_PS, "sharded-ps")    \
  X(DILOCO, "diloco")            \
  X(STREAMING_DILOCO, "streaming-diloco") \
  X(HIER_RING, "hier-ring")
#define WORKLOAD_RUNTIME_MAP(X)  \
  X(DTFM, "dtfm")                \
  X(MEGATRON, "megatron")

/* The K (micro-batches per pass) the batch must be a multiple of, D_dp x
 * m x K, under runtime (a name of workload_runtimes; NULL: dtfm): Megatron
 * runs all of a replica's micro-batches in one 1F1B schedule and ignores
 * micro_batches_per_pass (models/spec.c), so 1; DT-FM's passes need kpp
 * (<= 0: 1). */
long long workload_batch_k(const char *runtime, long long kpp);

/* The names of each map, NULL-terminated ("gpipe", "1f1b", NULL). */
extern const char *const workload_schedules[];
extern const char *const workload_dp_algos[];
extern const char *const workload_runtimes[];

/* The value widths of the compression knobs, as text (a scenario's
 * workload.grad_bits and activation_bits, --grad-bits, --activation-bits, a
 * sweep's keys), widest first: the synchronised (pseudo-)gradients at
 * 16, 8 or 4 bits, the pipeline's activations and their gradients at 16,
 * 8, 4 or 2 (models/compress.h prices them). NULL-terminated. */
extern const char *const workload_grad_bits[];
extern const char *const workload_act_bits[];
#define WORKLOAD_GRAD_BITS_TEXT "16, 8 or 4"
#define WORKLOAD_ACT_BITS_TEXT "16, 8, 4 or 2"

/* Whether bits is one of the widths of list. */
bool workload_bits_ok(const char *const *list, long bits);

/* DiLoCo's defaults where a scenario names none: H = 100 inner steps
 * (INTELLECT-1's and OpenDiLoCo's), one fragment, no overlap. */
#define WORKLOAD_DEFAULT_INNER_STEPS 100

#endif
