/* runtime: the table of what each runtime implies, and the calibrated
 * fixed costs of DT-FM's and Megatron-LM's runtimes. Every constant of
 * those two is a physical parameter fitted on the rows of
 * shared/data/dtfm_measured named beside it, and nowhere else (DESIGN.md
 * section 4, "Calibration and held-out truth"). They are the defaults of
 * models/params.h's rows, which the functions below read (a run may
 * replace them: `--params`). The modern runtime's row is read off its
 * parts' documentation and datasheets; nothing of it was measured. */
#include "models/runtime.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

#include "models/roofline.h"
#include "models/params.h"

/* Mixed-precision Adam(W) on the GPU reads and writes, per parameter, the
 * fp16 / bf16 weight and gradient and the fp32 master weight and two
 * moments (reads: gradient 2, master 4, moments 8; writes: master 4,
 * moments 8, the 16-bit copy 2): 28 bytes through device memory. */
#define RUNTIME_ADAM_BYTES_PER_PARAM 28.0

/* DT-FM's optimizer step with the fp32 copy on the host, per parameter of
 * the stage: 1.5 ns (0.38 s for a first or last stage of GPT-3 XL with its
 * 255 M parameters). Fitted jointly with the p3.2xlarge efficiency on the
 * pipeline rows (the intercept of the default network's M sweep: 9.30 /
 * 8.34 / 5.97 / 3.51 s) and the homogeneous rows. */
#define RUNTIME_DTFM_OFFLOAD_S_PER_PARAM PARAMS_DTFM_OPTIMIZER_DEFAULT /* 1.5e-9 */

/* Megatron's fixed host cost per blocking point-to-point call (the batch
 * of isend/irecv, its waits, torch.cuda.synchronize and the timers' own
 * synchronisations): 30 ms, the value that minimises the median error
 * over every Megatron row of the homogeneous and geo tables (27 rows).
 * No single value fits both tables: the homogeneous table's default
 * network (0.1 ms, 10 Gbit/s) took 26.1 s where the geo table's multi-dc,
 * a slower network for the same layout, took 21.3 s. */
#define RUNTIME_MEGATRON_P2P_CALL_S PARAMS_MEGATRON_P2P_CALL_S_DEFAULT /* 0.030 */

/* DT-FM's and Megatron's checkpoints, as their runs had them: the EBS
 * bandwidth of a p3.2xlarge, 1.5 Gbit/s (AWS, "New - Amazon EC2 Instances
 * with Up to 8 NVIDIA Tesla V100 GPUs (P3)", 2017: 1.5, 7 and 14 Gbit/s
 * for the p3.2xlarge, p3.8xlarge and p3.16xlarge, 1.5 to 1.75 per GPU). */
#define RUNTIME_EBS_P3_GBPS 1.5
/* The modern runtime's: a local NVMe drive per GPU (AWS p4d and p5 carry
 * 8 for their 8 GPUs) written at 2 GB/s = 16 Gbit/s, the low end of the
 * sequential write PCIe 4.0 datacentre drives' datasheets give (1.5-4
 * GB/s by capacity). An assumption, not a measurement. */
#define RUNTIME_NVME_GBPS 16.0

static const runtime_row rows[SPEC_NRUNTIMES] = {
    [SPEC_RUNTIME_MODERN] = {
        .optimizer = "GPU AdamW", .place = RUNTIME_ON_GPU,
        .weight_bytes = 2, .gradient_bytes = 2, .optimizer_bytes = 12,
        .step_bytes = RUNTIME_ADAM_BYTES_PER_PARAM, .state_bytes = 12,
        .pass_barrier = false, .blocking_calls = false,
        .checkpoint_gbps = RUNTIME_NVME_GBPS,
        .activations = "the schedule's micro-batches in flight (GPipe: a "
                       "pass's K; 1F1B: D_pp - stage); recompute keeps each "
                       "layer's input and recomputes the layer",
        .boundary = "none: asynchronous NCCL send/recv, gradient "
                    "accumulation across passes without a barrier",
        .checkpoint = "local NVMe, 16 Gbit/s per device",
        .source = "PyTorch DDP / FSDP, torch.distributed.pipelining, "
                  "DeepSpeed ZeRO: bf16 weights and gradients, fp32 master "
                  "weights and AdamW moments (Rajbhandari et al., ZeRO, SC "
                  "2020, section 3.1: 16 B/param)"},
    [SPEC_RUNTIME_DTFM] = {
        .optimizer = "host SGD", .place = RUNTIME_ON_HOST,
        .weight_bytes = 2, .gradient_bytes = 2, .optimizer_bytes = 0,
        .step_bytes = 0, .state_bytes = 4,
        .pass_barrier = true, .blocking_calls = false,
        .checkpoint_gbps = RUNTIME_EBS_P3_GBPS,
        .activations = "a pass's K micro-batches in flight (GPipe); "
                       "recompute keeps each layer's input",
        .boundary = "a barrier over every rank between GPipe's phases and "
                    "at the end of the iteration",
        .checkpoint = "EBS, 1.5 Gbit/s per device (p3.2xlarge)",
        .source = "DT-FM's runtime (Yuan et al. 2022): fp16 weights and "
                  "gradients on the GPU, fp32 master weights and SGD on the "
                  "host, 1.5 ns a parameter (fitted)"},
    [SPEC_RUNTIME_MEGATRON] = {
        .optimizer = "GPU Adam", .place = RUNTIME_ON_GPU,
        .weight_bytes = 2, .gradient_bytes = 2, .optimizer_bytes = 12,
        .step_bytes = RUNTIME_ADAM_BYTES_PER_PARAM, .state_bytes = 12,
        .pass_barrier = false, .blocking_calls = true,
        .checkpoint_gbps = RUNTIME_EBS_P3_GBPS,
        .activations = "1F1B: D_pp - stage micro-batches in flight; "
                       "recompute keeps each layer's input "
                       "(--checkpoint-activations)",
        .boundary = "blocking point-to-point calls, 30 ms of host time each "
                    "(fitted); no barrier",
        .checkpoint = "EBS, 1.5 Gbit/s per device (p3.2xlarge)",
        .source = "Megatron-LM of early 2022 as DT-FM ran it: fp16 "
                  "weights, gradients, fp32 master weights and Adam on the "
                  "GPU (16 B/param)"},
};

const runtime_row *runtime_of(spec_runtime rt) {
  assert((int)rt >= 0 && (int)rt < SPEC_NRUNTIMES && rows[rt].optimizer);
  return &rows[rt];
}

double runtime_optimizer_s(spec_runtime rt, const spec_gpu *g, double params) {
  switch (runtime_of(rt)->place) {
    case RUNTIME_ON_HOST:
      return params * params_get(PARAMS_DTFM_OPTIMIZER_S_PER_PARAM);
    case RUNTIME_ON_GPU:
      return roofline_stream_s(g, params * runtime_of(rt)->step_bytes);
  }
  assert(!"unknown place");
  return 0;
}

/* The share of a stage's optimizer state one device keeps and steps:
 * 1 / D_dp under ZeRO, else all of it. */
static double zero_share(const spec_workload *w, int stage) {
  return w->given.zero >= stage ? 1.0 / w->replicas : 1.0;
}

double runtime_step_s(const spec_workload *w, const spec_gpu *g, int st) {
  return runtime_optimizer_s(w->runtime, g,
                             spec_stage_params(w, st) * zero_share(w, 1));
}

double runtime_step_max_s(const spec_workload *w, const spec_gpu *const *gpu,
                          const alloc *a) {
  double most = 0;
  for (int r = 0; r < a->replicas; r++)
    for (int st = 0; st < a->stages; st++)
      most = fmax(most, runtime_step_s(w, gpu[alloc_at(a, r, st)], st));
  return most;
}

double runtime_state_bytes(spec_runtime rt, double params) {
  return params * runtime_of(rt)->state_bytes;
}

double runtime_stage_state_bytes(const spec_workload *w, int st) {
  return runtime_state_bytes(w->runtime, spec_stage_params(w, st)) *
         zero_share(w, 1);
}

double runtime_p2p_call_s(spec_runtime rt) {
  return runtime_of(rt)->blocking_calls
             ? params_get(PARAMS_MEGATRON_P2P_CALL_S)
             : 0;
}

double runtime_checkpoint_gbps(spec_runtime rt) {
  return runtime_of(rt)->checkpoint_gbps;
}

double runtime_gpu_bytes_per_param(const spec_workload *w) {
  const runtime_row *r = runtime_of(w->runtime);
  return r->weight_bytes + r->gradient_bytes * zero_share(w, 2) +
         r->optimizer_bytes * zero_share(w, 1);
}

void runtime_text(const spec_workload *w, double step_s, double iteration_s,
                  char *buf, size_t size) {
  const runtime_row *r = runtime_of(w->runtime);
  int n = snprintf(buf, size, "%s, ", r->optimizer);
  if (w->given.zero > 0 && n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "ZeRO-%d: ", w->given.zero);
  if (n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "%.3g B/param",
                  runtime_gpu_bytes_per_param(w));
  if (n >= 0 && (size_t)n < size && isfinite(step_s) && step_s >= 0 &&
      isfinite(iteration_s) && iteration_s > 0)
    snprintf(buf + n, size - (size_t)n, ", optimizer %.2g %% of the "
             "iteration", 100 * step_s / iteration_s);
}

/* The dissemination barrier over ranks first .. first + n - 1 of a. */
static int64_t dissemination_ns(const scenario *s, const alloc *a, int first,
                                int n) {
  double sum = 0;
  for (int d = 1; d < n; d *= 2) {
    double most = 0;
    for (int i = 0; i < n; i++) {
      int u = first + i, v = first + (i + d) % n;
      double l = scenario_link(s, alloc_at(a, u / a->stages, u % a->stages),
                               alloc_at(a, v / a->stages, v % a->stages), 0)
                     .latency_ms;
      if (l > most) most = l;
    }
    sum += most;
  }
  return llround(sum * 1e6);
}

int64_t runtime_barrier_ns(const scenario *s, const alloc *a) {
  return dissemination_ns(s, a, 0, a->replicas * a->stages);
}

int64_t runtime_replica_barrier_ns(const scenario *s, const alloc *a, int r) {
  return dissemination_ns(s, a, r * a->stages, a->stages);
}

int64_t runtime_slowest_replica_barrier_ns(const scenario *s, const alloc *a) {
  int64_t most = 0;
  for (int r = 0; r < a->replicas; r++) {
    int64_t ns = runtime_replica_barrier_ns(s, a, r);
    if (ns > most) most = ns;
  }
  return most;
}
