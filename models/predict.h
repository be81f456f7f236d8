/* predict: the end-to-end iteration time in closed form — compute per
 * micro-batch from the specs, the GPipe bubble, exposed pipeline
 * communication, data-parallel synchronisation by the chosen algorithm and
 * the optimizer step — an estimate of what simulating DT-FM's runtime under
 * the `netem` network model gives (DESIGN.md sections 3 and 4).
 * Invariant: every term is a pure function of (workload, GPUs, links,
 * allocation); predict_iteration allocates nothing that outlives it. */
#ifndef MODELS_PREDICT_H
#define MODELS_PREDICT_H

#include "models/alloc.h"
#include "models/spec.h"
#include "traces/err.h"
#include "traces/scenario.h"

/* The terms of one predicted iteration, seconds unless stated. */
typedef struct predict_result {
  int passes;            /* GPipe passes per iteration */
  int micro_batches;     /* K, micro-batches per pass */
  double fwd_s;          /* forward of one micro-batch, slowest stage */
  double bwd_s;          /* backward (with recompute), slowest stage */
  double compute_s;      /* passes K (fwd + bwd) on the slowest stage */
  double bubble_s;       /* pipeline fill and drain, all passes */
  double pp_comm_s;      /* exposed activation transfers, all passes */
  double dp_sync_s;      /* exposed gradient synchronisation */
  double optimizer_s;    /* optimizer step of the largest stage */
  double iteration_s;    /* the sum of the five terms above */
} predict_result;

/* Predicts one iteration of workload w on scenario s (links at t = 0 from
 * scenario_link, GPU per device from spec_device_gpus) for allocation a
 * (D_dp x D_pp, validated). Returns ERR_OK and fills out. */
int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out);

/* The optimizer step of a stage with `params` parameters on GPU g: mixed-
 * precision Adam streams PREDICT_OPT_BYTES_PER_PARAM bytes per parameter
 * through device memory. */
#define PREDICT_OPT_BYTES_PER_PARAM 28.0
double predict_optimizer_s(const spec_gpu *g, double params);

/* One pipelined NCCL ring operation (reduce or broadcast) over the devices
 * of group (n entries, ring in the given order) carrying bytes: the sum of
 * the hop latencies plus bytes over the slowest hop. */
double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes);

/* Gradient synchronisation of one data-parallel group (n devices, replica
 * order) carrying bytes, by algorithm algo (see predict.c). */
double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes);

#endif
