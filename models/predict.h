/* predict: the end-to-end iteration time in closed form — compute per
 * micro-batch from the specs and the hosts' efficiency, the pipeline
 * passes (GPipe's tandem with DT-FM's barriers, or 1F1B under DT-FM's
 * streams or Megatron's blocking calls), data-parallel synchronisation by
 * the chosen algorithm, Megatron's tail all-reduces and the optimizer step
 * — an estimate of what simulating the runtime gives under the ideal,
 * netem or tcp network model (DESIGN.md sections 3 and 4).
 * Invariant: every term is a pure function of (workload, GPUs, links at
 * t = 0, allocation, options); nothing allocated outlives a call. */
#ifndef MODELS_PREDICT_H
#define MODELS_PREDICT_H

#include <math.h>

#include "base/err.h"
#include "base/names.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "models/transport.h"
#include "traces/scenario.h"

/* The agreement with the engine (simulate) the predictor states where it
 * names nothing it leaves out: measured within it on the cases of
 * analysis/VALIDATION.md (the built-ins, their path exports, nic_shared
 * clusters), a relative error. */
#define PREDICT_TOLERANCE 0.02

/* What the predictor leaves out where it may cost more than
 * PREDICT_TOLERANCE, X(ID, "name", bound, "what"): bound is the most it
 * was measured to cost (a relative error; INFINITY: not bounded) on the
 * built-in cases and, where a row says so, on the consistency harness's
 * cases (tests/harness_gen.c, seeds 1..4000, and 1..10^4 for the rows
 * re-measured by issue 33's last point: sync-overlap, fill-shares,
 * chain-sharing, pass-boundaries, and 1f1b-sharing's and
 * sync-beside-pass's figures; each under its own network model:
 * analysis/VALIDATION.md). predict_result.left_out has bit
 * PREDICT_GAP_ID set when the case predicted has it, and error_bound says
 * how far off the prediction may be; a search simulates, rather than
 * prunes, what could be the best within it (schedules/shape.c). */
#define PREDICT_GAP_MAP(X)                                                   \
  X(LINKS_CHANGE, "links-change", 0.0,                                      \
    "links that move by more than the tolerance during the iteration: the " \
    "predictor reads them at t = 0")                                        \
  X(IDLE_RESTART, "idle-restart", 0.07,                                     \
    "tcp's slow start after idle, approximate (up to 7 % on the built-ins)") \
  X(SHAPER_ORDER, "shaper-order", 0.16,                                     \
    "DT-FM's 1F1B sends a stage's activation and gradient on one egress "   \
    "shaper at once: served in issue order here, shared by the engine "     \
    "(up to 7 % short on the built-ins, 15.5 % off on the harness)")        \
  X(PASS_SHARING, "1f1b-sharing", 0.25,                                     \
    "a 1F1B pass's activations and gradients on one NIC or path at once "   \
    "(pipelines sharing one; a stage's own NIC binding both of its "        \
    "boundaries; one stage's activation and another's gradient on a NIC, "  \
    "or under path shaping a path between sites, that cannot carry both) "  \
    "are shared as two phases (up to 21 % long on the built-ins, 22.0 % "   \
    "off on the harness)")                                                  \
  X(SYNC_OVERLAP, "sync-overlap", 0.41,                                     \
    "sharded-ps's pieces to every member, beside the pipelines' last "      \
    "transfers on the senders' shapers and NICs, shared as one round (up "  \
    "to 15 % short on the built-ins, 40.3 % off on the harness)")           \
  X(SYNC_BESIDE_PASS, "sync-beside-pass", 0.27,                             \
    "a stage's gradient synchronisation (or Megatron's tied embedding's "   \
    "between a pipeline's ends) beside the pass's last transfers on a "     \
    "NIC, or under path shaping a path between sites, that cannot carry "   \
    "both at once, shared as two phases (or as one fluid phase where "      \
    "paths or NICs are shared): up to 26.8 % off on the harness")           \
  X(FILL_SHARES, "fill-shares", 0.14,                                       \
    "flows that share a NIC or a path and whose shares change as others "   \
    "start or finish: each connection at its rate averaged over its "       \
    "flow's life (models/fill.h; up to 13.6 % off on the harness)")         \
  X(CHAIN_SHARING, "chain-sharing", 0.10,                                   \
    "a synchronisation's chain or ring whose own connections bind one NIC " \
    "or path together, shared at one rate throughout: the engine gives it " \
    "to those sending (the first alone until the next starts, the last "    \
    "alone once the others are done): up to 9.2 % off on the harness")      \
  X(PASS_BOUNDARIES, "pass-boundaries", 0.33,                               \
    "a pass's boundaries binding one NIC or path together, shared at one "  \
    "rate as if they sent at once throughout, where a pass of a few "       \
    "micro-batches sends them partly one after the other: up to 32.8 % "    \
    "off on the harness")                                                   \
  X(DILOCO_OVERLAP, "diloco-overlap", INFINITY,                             \
    "streaming DiLoCo's exchanges overlapping inner steps: their "          \
    "interference with the steps")                                          \
  X(HIVEMIND_ROUND, "hivemind-round", 0.31,                                 \
    "hivemind's round as a fluid of its connections, not the engine's "     \
    "chunked parts (volunteer-mix: up to 14 % short under tcp, 31 % "       \
    "delayed under netem; analysis/VALIDATION.md)")
#define PREDICT_GAP_ID_(id, name, bound, what) PREDICT_GAP_##id,
typedef enum predict_gap { PREDICT_GAP_MAP(PREDICT_GAP_ID_) } predict_gap;
#undef PREDICT_GAP_ID_
enum { PREDICT_NGAPS = 0 PREDICT_GAP_MAP(NAMES_COUNT_ROW) };

/* The gaps' names (NULL-terminated), what each leaves out and the most it
 * was measured to cost (models/predict_gap.c). */
extern const char *const predict_gap_names[PREDICT_NGAPS + 1];
const char *predict_gap_what(predict_gap g);
double predict_gap_bound(predict_gap g);

/* The most a link of s between the sites of a's devices moves (bandwidth
 * or latency, relative to its value at t = 0) during [0, T] seconds: 0 on
 * a static network. */
double predict_links_drift(const scenario *s, const alloc *a, double T);

/* The terms of one predicted iteration, seconds unless stated. */
typedef struct predict_result {
  int passes;            /* passes per iteration (gradient accumulation) */
  int micro_batches;     /* K, micro-batches per pass */
  double fwd_s;          /* forward of one micro-batch, slowest stage */
  double bwd_s;          /* backward (with recompute), slowest stage */
  double period_s;       /* steady time per micro-batch of the slowest
                            pipeline (GPipe: its slowest server of each
                            phase; 1F1B: onef1b_period) */
  double barrier_s;      /* one of DT-FM's barriers beyond the last rank
                            (runtime_barrier_ns; 0 under Megatron) */
  double compute_s;      /* passes K (fwd + bwd) on the slowest stage */
  double bubble_s;       /* pipeline fill and drain, all passes */
  double pp_comm_s;      /* what transfers, barriers and calls add to the
                            passes */
  double dp_sync_s;      /* exposed gradient synchronisation (with
                            Megatron's tail all-reduces and DT-FM's last
                            barrier) */
  double optimizer_s;    /* optimizer step of the device that ends last */
  double iteration_s;    /* the sum of the five terms above */
  /* DiLoCo (0 otherwise): iteration_s is outer_step_s / H, and dp_sync_s
   * holds what the exchanges add per inner step */
  double inner_step_s;   /* one inner step (no exchange) */
  double outer_step_s;   /* H inner steps and the exchanges, each replica
                            on from its own result (diloco_exchange_land;
                            equal replicas: diloco_cycle_s with each
                            fragment's quantisation and update) */
  unsigned left_out;     /* bit PREDICT_GAP_X: the case has gap X */
  double error_bound;    /* how far off iteration_s may be: the most of
                            the gaps' bounds (links-change: how far the
                            links move), PREDICT_TOLERANCE with none */
} predict_result;

/* Predicts one iteration of workload w on scenario s (links at t = 0 from
 * scenario_link, GPU per device from spec_device_gpus) for allocation a
 * (D_dp x D_pp, validated) under options o (NULL: defaults). Returns
 * ERR_OK and fills out. */
int predict_iteration_with(const spec_workload *w, const scenario *s,
                           const spec_gpu *const *gpu, const alloc *a,
                           const transport_options *o, predict_result *out);

/* predict_iteration_with under the default options (netem). */
int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out);

/* Megatron's GPU Adam step of a stage with `params` parameters on g:
 * runtime_optimizer_s(SPEC_RUNTIME_MEGATRON, g, params) (models/runtime.h
 * holds the optimizer steps of both runtimes; the predictor uses it). */
double predict_optimizer_s(const spec_gpu *g, double params);

/* One message of bytes from device a to device b of s, alone on a warm
 * connection: seconds until its last byte arrives (models/hop.h). */
double predict_message_s(const scenario *s, int a, int b, double bytes,
                         const transport_options *o);

/* One pipelined NCCL chain operation (reduce or broadcast) over the devices
 * of group (n entries, chain group[0] -> group[1] -> ...) carrying bytes in
 * chunks of TRANSPORT_NCCL_CHUNK_BYTES (at most TRANSPORT_NCCL_MAX_CHUNKS):
 * every hop's latency and chunk time once, plus the other chunks at the
 * slowest hop. */
double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes, const transport_options *o);

/* Gradient synchronisation of one data-parallel group (n devices, replica
 * order, all ready at time 0) carrying bytes, by algorithm algo: the time
 * the last member has the result (models/dpsync.h). o NULL: defaults. */
double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes,
                         const transport_options *o);

#endif
