/* runtime: the fixed costs of the two training runtimes whose iteration
 * times were measured (DT-FM's, and Megatron-LM's of early 2022) — the
 * physical parameters geodes fits on shared/data/dtfm_measured, each with
 * the rows it came from (runtime.c). The schedules themselves (what waits
 * for what) are built in sim/train.c and modelled in models/predict.c.
 * Invariant: pure functions of their arguments. */
#ifndef MODELS_RUNTIME_H
#define MODELS_RUNTIME_H

#include "models/spec.h"

/* The optimizer step of a stage with `params` parameters on GPU g under
 * runtime rt. DT-FM keeps the fp32 master copy on the host (its
 * Fp16Optimizer with offload): gradients go to the CPU, a CPU SGD step,
 * weights come back — a cost per parameter. Megatron steps mixed-precision
 * Adam on the GPU, streaming its state through device memory. */
double runtime_optimizer_s(spec_runtime rt, const spec_gpu *g, double params);

/* Fixed host-side cost of one blocking point-to-point call of Megatron's
 * pipeline (batch_isend_irecv, wait, torch.cuda.synchronize, its timers),
 * seconds; 0 for DT-FM's asynchronous streams. */
double runtime_p2p_call_s(spec_runtime rt);

#endif
