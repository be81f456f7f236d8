/* params: the named physical parameters of the models — the numbers geodes
 * fits on measurements (`geodes calibrate`) rather than derives — in one
 * table: name, default, bounds, unit, where it is used, what it means.
 * The models read each through params_get, so a run can replace them
 * (`--params FILE`, a calibration's fit) without a rebuild.
 * Invariant: until params_set is called every value is its default, the
 * compile-time constant it replaced, so default outputs are bit-identical;
 * a set value is always within its bounds (or the "unset" 0 where the
 * parameter has one). The values are process-wide: a run sets them before
 * it starts (forked sweep workers inherit them) and nothing else writes
 * them. To add a parameter, add one row to PARAMS_MAP and read it. */
#ifndef MODELS_PARAMS_H
#define MODELS_PARAMS_H

#include <stdbool.h>

#include "traces/scenario.h"

/* The fitted defaults kept in the files that explain them (each defines its
 * constant from these): models/roofline.h's ROOFLINE_EFF_GEMM and
 * ROOFLINE_EFF_MEM, models/runtime.c's RUNTIME_MEGATRON_P2P_CALL_S and
 * RUNTIME_DTFM_OFFLOAD_S_PER_PARAM. The window's fit starts at DT-FM's
 * window (traces/scenario.h's SCENARIO_TCP_WINDOW_DTFM, models/transport.h's
 * TRANSPORT_DTFM_WINDOW; each site's own window is its default), its lower
 * bound is the loader's (traces/trace.h): transport.h reads this table, so
 * it names the traces' constants it aliases. */
#define PARAMS_GEMM_EFFICIENCY_DEFAULT 0.78
#define PARAMS_MEMORY_EFFICIENCY_DEFAULT 0.78
#define PARAMS_MEGATRON_P2P_CALL_S_DEFAULT 0.030
#define PARAMS_DTFM_OPTIMIZER_DEFAULT 1.5e-9
/* hivemind's averaging on the host (models/hivemind.h): one stream of
 * element-wise passes over fp32 tensors at 10 GB/s, a server core's
 * streaming rate (assumed, not fitted: no hivemind run is among the
 * measurements). */
#define PARAMS_HIVEMIND_HOST_DEFAULT 1e-10

/* X(ID, "name", default, lo, hi, fit start when the default is 0 (unset),
 *   "unit", "where it is used", "what it is"). Bounds are inclusive; every
 * parameter is positive, so calibrate fits its logarithm. */
#define PARAMS_MAP(X)                                                       \
  X(GEMM_EFFICIENCY, "gemm_efficiency", PARAMS_GEMM_EFFICIENCY_DEFAULT,     \
    0.01, 1.0, PARAMS_GEMM_EFFICIENCY_DEFAULT, "fraction",                  \
    "models/roofline.c", "fraction of the tensor rate a GEMM reaches (the " \
    "roofline's compute class; fitted on V100 rows, every GPU uses it)")    \
  X(MEMORY_EFFICIENCY, "memory_efficiency",                                 \
    PARAMS_MEMORY_EFFICIENCY_DEFAULT, 0.01, 1.0,                            \
    PARAMS_MEMORY_EFFICIENCY_DEFAULT, "fraction", "models/roofline.c",      \
    "fraction of the memory bandwidth a memory-bound operation reaches "    \
    "(the roofline's memory class)")                                        \
  X(SITE_COMPUTE_EFFICIENCY, "site_compute_efficiency", 0, 0.01, 1.0, 0.5,  \
    "factor", "models/spec.c", "replaces every site's "                     \
    "compute_efficiency, a factor on the roofline's speed (0: each "        \
    "site's own)")                                                          \
  X(WINDOW_BYTES, "window_bytes", 0, TRACE_WINDOW_MIN_BYTES, 1e12,         \
    SCENARIO_TCP_WINDOW_DTFM, "bytes", "models/transport.h", "replaces every " \
    "site's tcp_window_bytes, the TCP window per socket of connections "    \
    "whose link gives no window_bytes or flow_gbps and when no "            \
    "--window-bytes is given (tcp model; 0: each site's own)")              \
  X(MEGATRON_P2P_CALL_S, "megatron_p2p_call_s",                             \
    PARAMS_MEGATRON_P2P_CALL_S_DEFAULT, 1e-6, 10,                           \
    PARAMS_MEGATRON_P2P_CALL_S_DEFAULT, "s", "models/runtime.c",            \
    "Megatron's host cost per blocking p2p call")                           \
  X(DTFM_OPTIMIZER_S_PER_PARAM, "dtfm_optimizer_s_per_param",               \
    PARAMS_DTFM_OPTIMIZER_DEFAULT, 1e-13, 1e-6,                             \
    PARAMS_DTFM_OPTIMIZER_DEFAULT, "s", "models/runtime.c",                 \
    "DT-FM's host optimizer step per parameter of a stage")                \
  X(HIVEMIND_HOST_S_PER_BYTE, "hivemind_host_s_per_byte",                   \
    PARAMS_HIVEMIND_HOST_DEFAULT, 1e-13, 1e-6, PARAMS_HIVEMIND_HOST_DEFAULT, \
    "s", "models/hivemind.c", "hivemind's averaging on the host, per byte " \
    "of memory traffic (assumed 10 GB/s, not fitted)")

#define PARAMS_ID(id, ...) PARAMS_##id,
typedef enum params_id { PARAMS_MAP(PARAMS_ID) PARAMS_N } params_id;
#undef PARAMS_ID

/* One row of the table. */
typedef struct params_info {
  const char *name;
  double def, lo, hi, start;
  const char *unit, *where, *doc;
} params_info;

extern const params_info params_table[PARAMS_N];

/* The value of p now (its default until set). */
double params_get(params_id p);

/* Sets p to v. False (nothing set) when v is outside p's bounds (0 is
 * allowed where the default is 0: unset). */
bool params_set(params_id p, double v);

/* Every value back to its default. */
void params_reset(void);

/* The id of name, or -1. */
int params_find(const char *name);

/* The ids of list's comma-separated names into ids (room for PARAMS_N),
 * *n of them: ERR_OK, ERR_MISSING for an unknown name, ERR_CONFIG for a
 * name given twice or none at all (e names it). */
int params_parse_list(const char *list, int *ids, int *n, err *e);

/* True when every value is its default. */
bool params_all_default(void);

/* A hash of the values that differ from their defaults (0 when none), for
 * the identity of stored results computed under them. */
unsigned long long params_hash(void);

#endif
