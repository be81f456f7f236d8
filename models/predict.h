/* predict: the end-to-end iteration time in closed form — compute per
 * micro-batch from the specs, the GPipe bubble, exposed pipeline
 * communication, data-parallel synchronisation by the chosen algorithm and
 * the optimizer step — an estimate of what simulating DT-FM's runtime gives
 * under the ideal, netem or tcp network model (DESIGN.md sections 3 and 4).
 * Invariant: every term is a pure function of (workload, GPUs, links,
 * allocation, options); nothing allocated outlives a call. */
#ifndef MODELS_PREDICT_H
#define MODELS_PREDICT_H

#include "models/alloc.h"
#include "models/spec.h"
#include "models/transport.h"
#include "traces/err.h"
#include "traces/scenario.h"


typedef struct predict_options {
  transport_model network;  /* TRANSPORT_NETEM by default */
  double window_bytes;  /* tcp window W; <= 0: 4 MiB */
} predict_options;

/* netem, 4 MiB window. */
predict_options predict_options_default(void);

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
  double optimizer_s;    /* optimizer step of the stage that ends last */
  double iteration_s;    /* the sum of the five terms above */
} predict_result;

/* Predicts one iteration of workload w on scenario s (links at t = 0 from
 * scenario_link, GPU per device from spec_device_gpus) for allocation a
 * (D_dp x D_pp, validated) under options o (NULL: defaults). Returns
 * ERR_OK and fills out. */
int predict_iteration_with(const spec_workload *w, const scenario *s,
                           const spec_gpu *const *gpu, const alloc *a,
                           const predict_options *o, predict_result *out);

/* predict_iteration_with under the default options (netem). */
int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out);

/* The optimizer step of a stage with `params` parameters on GPU g: mixed-
 * precision Adam streams PREDICT_OPT_BYTES_PER_PARAM bytes per parameter
 * through device memory. */
#define PREDICT_OPT_BYTES_PER_PARAM 28.0
double predict_optimizer_s(const spec_gpu *g, double params);

/* Seconds until the last of `bytes` leaves a sender over a link of one-way
 * latency lat_s and rate bytes_s, alone. tcp: rate <= W / RTT (RTT = 2
 * lat_s) and slow start from the connection's window *cwnd (<= 0: a new
 * connection, 10 segments), doubling each RTT until W or the rate binds;
 * *cwnd is updated as the engine keeps it. cwnd may be NULL (a new one). */
double predict_flow_s(double bytes, double lat_s, double bytes_s,
                      const predict_options *o, double *cwnd);

/* One pipelined NCCL ring operation (reduce or broadcast) over the devices
 * of group (n entries, chain group[0] -> group[1] -> ...) carrying bytes in
 * chunks of TRANSPORT_NCCL_CHUNK_BYTES (at most TRANSPORT_NCCL_MAX_CHUNKS): every hop's
 * latency and chunk time once, plus the other chunks at the slowest hop. */
double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes, const predict_options *o);

/* Gradient synchronisation of one data-parallel group (n devices, replica
 * order, all ready at time 0) carrying bytes, by algorithm algo: the time
 * the last member has the result (see predict.c). o NULL: defaults. */
double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes,
                         const predict_options *o);

#endif
