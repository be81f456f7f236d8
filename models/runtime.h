/* runtime: the fixed costs of the two training runtimes whose iteration
 * times were measured (DT-FM's, and Megatron-LM's of early 2022) — the
 * physical parameters geodes fits on shared/data/dtfm_measured, each with
 * the rows it came from (runtime.c) — and the latency of DT-FM's barrier,
 * which follows from the network alone (one home: the engine waits it, the
 * predictor adds it). The schedules themselves (what waits for what) are
 * built in sim/train.c and modelled in models/predict.c.
 * Invariant: pure functions of their arguments. */
#ifndef MODELS_RUNTIME_H
#define MODELS_RUNTIME_H

#include <stdint.h>

#include "models/alloc.h"
#include "models/spec.h"
#include "traces/scenario.h"

/* The optimizer step of a stage with `params` parameters on GPU g under
 * runtime rt. DT-FM keeps the fp32 master copy on the host (its
 * Fp16Optimizer with offload): gradients go to the CPU, a CPU SGD step,
 * weights come back — a cost per parameter. Megatron steps mixed-precision
 * Adam on the GPU, streaming its state through device memory at the
 * roofline's memory efficiency (roofline_stream_s). */
double runtime_optimizer_s(spec_runtime rt, const spec_gpu *g, double params);

/* Bytes of training state a stage with `params` parameters must keep to
 * resume: what a checkpoint writes and a device taking the stage over
 * receives. DT-FM's plain SGD resumes from its fp32 master weights (4
 * bytes a parameter; the fp16 copy is derived from them); Megatron's
 * mixed-precision Adam from the fp32 weights and both moments (12 bytes:
 * Rajbhandari et al., ZeRO, SC 2020, section 3.1). */
double runtime_state_bytes(spec_runtime rt, double params);

/* Fixed host-side cost of one blocking point-to-point call of Megatron's
 * pipeline (batch_isend_irecv, wait, torch.cuda.synchronize, its timers),
 * seconds; 0 for DT-FM's asynchronous streams. */
double runtime_p2p_call_s(spec_runtime rt);

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

#endif
