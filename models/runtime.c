/* runtime: the calibrated fixed costs of DT-FM's and Megatron-LM's runtimes.
 * Every constant below is a physical parameter fitted on the rows of
 * shared/data/dtfm_measured named beside it, and nowhere else (DESIGN.md
 * section 4, "Calibration and held-out truth"). They are the defaults of
 * models/params.h's rows, which the functions below read (a run may
 * replace them: `--params`). */
#include "models/runtime.h"

#include <assert.h>
#include <math.h>

#include "models/roofline.h"
#include "models/params.h"

/* Megatron's mixed-precision Adam reads and writes, per parameter, the fp16
 * weight and gradient and the fp32 master weight, gradient copy and two
 * moments: 28 bytes through device memory. */
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

double runtime_optimizer_s(spec_runtime rt, const spec_gpu *g, double params) {
  switch (rt) {
    case SPEC_RUNTIME_DTFM:
      return params * params_get(PARAMS_DTFM_OPTIMIZER_S_PER_PARAM);
    case SPEC_RUNTIME_MEGATRON:
      return roofline_stream_s(g, params * RUNTIME_ADAM_BYTES_PER_PARAM);
  }
  assert(!"unknown runtime");
  return 0;
}

double runtime_state_bytes(spec_runtime rt, double params) {
  switch (rt) {
    case SPEC_RUNTIME_DTFM: return params * 4.0;
    case SPEC_RUNTIME_MEGATRON: return params * 12.0;
  }
  assert(!"unknown runtime");
  return 0;
}

double runtime_p2p_call_s(spec_runtime rt) {
  switch (rt) {
    case SPEC_RUNTIME_DTFM: return 0;
    case SPEC_RUNTIME_MEGATRON: return params_get(PARAMS_MEGATRON_P2P_CALL_S);
  }
  assert(!"unknown runtime");
  return 0;
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
