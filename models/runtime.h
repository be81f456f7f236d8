/* runtime: what each training runtime implies, one row of one table per
 * runtime (runtime.c; the names are traces/workload.h's
 * WORKLOAD_RUNTIME_MAP): where and at what cost it steps the optimizer,
 * the bytes per parameter it keeps on the GPU, its activation policy, what
 * a pass boundary costs, its point-to-point calls and where its checkpoints
 * go — and the latency of DT-FM's barrier, which follows from the network
 * alone (one home: the engine waits it, the predictor adds it). The fixed
 * costs of DT-FM's and Megatron-LM's runtimes are physical parameters
 * geodes fits on shared/data/dtfm_measured (models/params.h); the modern
 * runtime's are datasheet rooflines, not measured. The schedules
 * themselves (what waits for what) are built in sim/train.c and modelled
 * in models/predict.c.
 * Invariant: the table is static and read-only; pure functions. */
#ifndef MODELS_RUNTIME_H
#define MODELS_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/alloc.h"
#include "models/spec.h"
#include "traces/scenario.h"

/* Where a runtime steps its optimizer. */
typedef enum runtime_place { RUNTIME_ON_HOST, RUNTIME_ON_GPU } runtime_place;

/* What a runtime implies (plain data). Bytes per parameter are as a stage
 * keeps them before any ZeRO sharding (spec_stage_memory shards them). */
typedef struct runtime_row {
  const char *optimizer;     /* "host SGD", "GPU Adam", "GPU AdamW" */
  runtime_place place;
  double weight_bytes;       /* on the GPU, per parameter: fp16 / bf16 */
  double gradient_bytes;     /* on the GPU: fp16 / bf16 gradients */
  double optimizer_bytes;    /* on the GPU: fp32 master weights and the two
                                moments (0 when stepped on the host) */
  double step_bytes;         /* streamed through GPU memory by one step, per
                                parameter (0 on the host) */
  double state_bytes;        /* what a checkpoint writes, per parameter */
  bool pass_barrier;         /* a barrier between GPipe's phases and at the
                                end of the iteration (DT-FM) */
  bool blocking_calls;       /* blocking point-to-point calls (Megatron) */
  double checkpoint_gbps;    /* checkpoint storage per device, Gbit/s */
  const char *activations;   /* the activation policy, in words */
  const char *boundary;      /* what a pass boundary costs, in words */
  const char *checkpoint;    /* the checkpoint path, in words */
  const char *source;        /* where the row's figures come from */
} runtime_row;

/* The row of runtime rt. */
const runtime_row *runtime_of(spec_runtime rt);

/* The optimizer step of `params` parameters on GPU g under runtime rt.
 * DT-FM keeps the fp32 master copy on the host (its Fp16Optimizer with
 * offload): gradients go to the CPU, a CPU SGD step, weights come back — a
 * cost per parameter. Megatron and the modern runtime step mixed-precision
 * Adam(W) on the GPU, streaming its state through device memory at the
 * roofline's memory efficiency (roofline_stream_s of step_bytes each). */
double runtime_optimizer_s(spec_runtime rt, const spec_gpu *g, double params);

/* The optimizer step of stage st of w on GPU g: runtime_optimizer_s of its
 * parameters, of 1 / D_dp of them under ZeRO (each replica steps its
 * shard; the shards' reduce-scatter and all-gather move what the
 * all-reduce moves, timed as the workload's algorithm). */
double runtime_step_s(const spec_workload *w, const spec_gpu *g, int st);

/* The longest optimizer step of any device of a under w (gpu per device):
 * what the outputs' "optimizer share of the iteration" divides. */
double runtime_step_max_s(const spec_workload *w, const spec_gpu *const *gpu,
                          const alloc *a);

/* Bytes of training state a stage with `params` parameters must keep to
 * resume: what a checkpoint writes and a device taking the stage over
 * receives. DT-FM's plain SGD resumes from its fp32 master weights (4
 * bytes a parameter; the fp16 copy is derived from them); mixed-precision
 * Adam from the fp32 weights and both moments (12 bytes: Rajbhandari et
 * al., ZeRO, SC 2020, section 3.1). */
double runtime_state_bytes(spec_runtime rt, double params);

/* runtime_state_bytes of stage st of w on one device: under ZeRO each
 * replica writes its 1 / D_dp shard. */
double runtime_stage_state_bytes(const spec_workload *w, int st);

/* Fixed host-side cost of one blocking point-to-point call of Megatron's
 * pipeline (batch_isend_irecv, wait, torch.cuda.synchronize, its timers),
 * seconds; 0 for the asynchronous streams of DT-FM and the modern
 * runtime. */
double runtime_p2p_call_s(spec_runtime rt);

/* The checkpoint storage of w's runtime per device, Gbit/s (a training
 * run's --storage-gbps replaces it). */
double runtime_checkpoint_gbps(spec_runtime rt);

/* What w's runtime implies, in words, into buf: "GPU AdamW, 16 B/param"
 * ("ZeRO-1: 5.5 B/param" when sharded); with step_s and iteration_s
 * finite and positive, ", optimizer 3.1 % of the iteration" after it. */
void runtime_text(const spec_workload *w, double step_s, double iteration_s,
                  char *buf, size_t size);

/* Bytes per parameter w's runtime keeps on a GPU, after ZeRO's sharding
 * over w's replicas: weights, gradients and optimizer state. */
double runtime_gpu_bytes_per_param(const spec_workload *w);

/* What one of DT-FM's barriers (torch.distributed.barrier over gloo) costs
 * beyond waiting for the last rank, ns: a dissemination barrier over the
 * ranks of a (rank = replica x stages + stage), ceil(log2 n) rounds, in
 * round k rank i signals rank i + 2^k (mod n), a round lasting its slowest
 * signal's one-way latency at t = 0. The engine waits exactly this and the
 * predictor reads it. */
int64_t runtime_barrier_ns(const scenario *s, const alloc *a);

/* The same barrier over replica r's pipeline alone (its stages' ranks), as
 * DiLoCo's inner steps wait for it, each replica apart. */
int64_t runtime_replica_barrier_ns(const scenario *s, const alloc *a, int r);

/* The slowest replica's runtime_replica_barrier_ns: what the predictor
 * charges DiLoCo's inner steps and hivemind's peers, apart. */
int64_t runtime_slowest_replica_barrier_ns(const scenario *s, const alloc *a);

#endif
