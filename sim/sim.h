/* sim: the public entry point of the event engine — one training iteration
 * of a scenario under an allocation, simulated event by event (DESIGN.md
 * section 4), and its measured breakdown.
 * Invariant: the result is a pure function of (scenario, allocation,
 * options): simulated time is integer nanoseconds, ties pop in insertion
 * order and nothing reads a clock or an unseeded generator, so the same
 * inputs give bit-identical results. */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "sim/graph.h"
#include "sim/net.h"
#include "sim/result.h"
#include "traces/fault.h"
#include "traces/scenario.h"

typedef struct sim_options {
  transport_options transport; /* network model, TCP window, restarts */
  uint64_t seed;             /* recorded; the engine itself draws nothing */
  const char *timeline_path; /* Chrome Trace Event JSON, or NULL */
  double compute_scale;      /* multiplies every compute time; <= 0: 1 */
  bool diloco_full;          /* DiLoCo: every inner step in the graph, no
                                periodic shortcut (sim/outer.h; tests) */
  const double *speedup;     /* [ndevices]: each device's compute speed
                                multiplied (what-ifs, sim/whatif.h); NULL: 1 */
  /* Called once by sim_run after a run that succeeded, with its finished
   * graph (borrowed for the call): the critical path reads it
   * (sim/critpath.h). NULL: none. */
  void (*inspect)(void *ctx, const sim_graph *g);
  void *inspect_ctx;
  /* Every message's rate changes during the run (sim/net.h), appended to
   * the caller's log, e.g. for sim_linkstats_build; NULL: none. */
  sim_rate_log *rates;
} sim_options;

/* The version of what the numbers of a run depend on beyond its inputs: the
 * engine here and the models it uses (spec, cost model, predictor). Bump it
 * with any change that alters a simulated or predicted number: sweep rows
 * keep it in their identity, so rows of the older code are recomputed, not
 * reused. 2: the transport of NCCL sockets, the runtimes calibrated on
 * DT-FM's measurements. */
#define SIM_RESULTS_VERSION 2

/* What a run holds per device besides its task graph (GPU, NIC and stream
 * arrays, marks, the network's per-device state, the statistics), bytes:
 * an upper figure, measured (tests/bench_scale.c) well below it. */
#define SIM_BYTES_PER_DEVICE 1024

/* The bytes a run of w on s may need at most: its task graph under w's own
 * synchronisation algorithm (sim_train_task_bound, sim_outer_task_bound;
 * data-parallel groups over at most min(sites, D_dp) sites), the
 * statistics' spans, the net's memo per task (sim_net_bytes_per_tag) and
 * SIM_BYTES_PER_DEVICE per device; *tasks (if not NULL) gets the graph's
 * task bound. sim_run refuses a workload whose
 * estimate passes mem_limit_bytes (base/mem.h), before building it. */
double sim_run_bytes(const scenario *s, const spec_workload *w,
                     uint64_t *tasks);

/* Defaults: transport_options_default, seed 0, no timeline, scale 1. */
sim_options sim_options_default(void);

/* Simulates one iteration of s (workload resolved by models/spec) under
 * allocation a. Returns ERR_OK and fills out (free with sim_result_free),
 * or an error code with e filled (unknown model/GPU, wrong allocation
 * shape, timeline file not writable; ERR_MEMORY when a stage does not fit
 * in its device's memory (spec_check_memory, as predict checks) or the graph
 * could pass the memory (sim_run_bytes); ERR_RANGE when the iteration would run past
 * the span a simulation covers, base/simtime.h). */
int sim_run(const scenario *s, const alloc *a, const sim_options *o,
            sim_result *out, err *e);

/* sim_run building its task graph in *spare when there is one (taken out
 * of it) and leaving the graph there, emptied, for the next run (freeing
 * whatever *spare held): a search calls sim_run thousands of times, and a
 * large graph's fresh memory (tens of MB at 1024 devices) costs page faults
 * on every run. The caller owns *spare and frees it with sim_graph_free;
 * spare NULL: sim_run. */
int sim_run_reuse(const scenario *s, const alloc *a, const sim_options *o,
                  sim_graph **spare, sim_result *out, err *e);

/* The checks sim_run makes of s's workload before any allocation is known:
 * it resolves (models/spec) and its task graph fits the engine's limits
 * (32-bit indices, sim_run_bytes within mem_limit_bytes). ERR_OK, or e filled naming the field,
 * at its FILE:LINE when the file gave it. */
int sim_check_size(const scenario *s, err *e);

/* One allocation of a scenario ready to run iteration after iteration on
 * one clock (sim/training): the workload resolved and checked as sim_run
 * does, the task graph built once, a queue and a net kept between runs so
 * the trace moves on and TCP connections keep their state. faults (NULL:
 * none; borrowed) slow or cut links and slow devices event by event during
 * a run; device_map[d] is the fault trace's index of device d (s a subset
 * of the trace's scenario; NULL: the same). conn: how the TCP connections
 * start. s, a's shape and device_map are borrowed and must outlive it.
 * ERR_OK and *out, or sim_run's errors. */
typedef struct sim_engine sim_engine;
int sim_engine_new(const scenario *s, const alloc *a, const sim_options *o,
                   const fault_trace *faults, const int *device_map,
                   sim_net_conn conn, sim_engine **out, err *e);

/* Runs one iteration, its work free to start at t0 (>= the previous run's
 * end), until it completes or the next event is at or after t_stop. On
 * completion: ERR_OK, *stopped false and out filled as sim_run fills it
 * (iteration_s from t0 to the last device's end, end_ns that end). At
 * t_stop: ERR_OK, *stopped true, out empty, and the engine must be freed.
 * ERR_RANGE past the span a simulation covers (base/simtime.h). */
int sim_engine_run(sim_engine *x, int64_t t0, int64_t t_stop, sim_result *out,
                   bool *stopped, err *e);

/* Whether the task graph of s under x's allocation is x's: x has no
 * faults and the shortcut's graph (not diloco_full), s has x's devices,
 * its DT-FM barriers (runtime_barrier_ns, each replica's) take x's
 * latencies, and its workload reads no link while it is built (hivemind's
 * rounds do). The caller vouches that s differs from x's scenario in links
 * or hosts' settings only (sim/whatif.h: LINK, HOSTS), not in GPUs, speeds
 * or the workload. */
bool sim_engine_same_graph(const sim_engine *x, const scenario *s);

/* sim_run of s, on x's graph (reset, not rebuilt) over s's network: s as
 * sim_engine_same_graph accepts (borrowed; x reads it until the next
 * rerun or its free). The same result as sim_run of s with x's options
 * (tests/test_whatif.c), though the re-runs after the first run on a graph
 * laid out in its order (sim_graph_relayout); ERR_OK and out, or
 * sim_engine_run's errors. */
int sim_engine_rerun(sim_engine *x, const scenario *s, sim_result *out,
                     err *e);

/* The last run's task records (borrowed until the next run). */
const sim_task *sim_engine_tasks(const sim_engine *x, uint32_t *n);

/* DiLoCo: where each inner step of the engine's outer step ends in its
 * graph (sim/outer.h; borrowed, the engine's); NULL for other workloads. */
struct sim_outer_marks;
const struct sim_outer_marks *sim_engine_outer_marks(const sim_engine *x);

void sim_engine_free(sim_engine *x);

/* One transfer of sim_moves: bytes from device src to device dst. */
typedef struct sim_move {
  int src, dst;
  double bytes;
} sim_move;

/* Moves the n transfers at once over s's network from t0 (new TCP
 * connections; links slowed or cut by faults, as in an engine): ERR_OK and
 * *end_ns when the last byte has arrived (t0 for none); ERR_RANGE when one
 * cannot finish (a link down for ever). */
int sim_moves(const scenario *s, const sim_options *o,
                  const fault_trace *faults, const sim_move *v, int n,
                  int64_t t0, int64_t *end_ns, err *e);

#endif
