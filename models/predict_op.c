/* predict_op: one message, one ring operation or one group's
 * synchronisation priced alone by the predictor's transport (hop.h), and
 * an optimizer step: what the cost model and explain ask of it (see
 * predict.h).
 * Invariant: pure functions of their arguments; nothing outlives a call. */
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/dpsync.h"
#include "models/hop.h"
#include "models/predict.h"
#include "models/runtime.h"

double predict_optimizer_s(const spec_gpu *g, double params) {
  return runtime_optimizer_s(SPEC_RUNTIME_MEGATRON, g, params);
}

double predict_message_s(const scenario *s, int a, int b, double bytes,
                         const transport_options *o) {
  hop_net n;
  hop_net_init(&n, s, o);
  hop h = hop_of(&n, a, b, bytes, 1, TRANSPORT_P2P_CHANNELS);
  double t = hop_time(&n, &h, bytes) + h.lat;
  hop_net_free(&n);
  return t;
}

double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes, const transport_options *o) {
  hop_net x;
  hop_net_init(&x, s, o);
  for (int i = 0; i + 1 < n; i++)
    hop_net_count(&x, group[i], group[i + 1], bytes,
                  TRANSPORT_NCCL_RING_CHANNELS);
  double t = dpsync_chain_s(&x, group, n, bytes);
  hop_net_free(&x);
  return t;
}

double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes,
                         const transport_options *o) {
  if (n < 2) return 0;
  hop_net x;
  hop_net_init(&x, s, o);
  dpsync_count(&x, algo, group, n, bytes, TRANSPORT_NCCL_RING_CHANNELS, NULL);
  hop_net_solve(&x);
  double *done = mem_alloc((size_t)n * sizeof *done), t = 0;
  dpsync_run(&x, algo, group, n, bytes, TRANSPORT_NCCL_RING_CHANNELS, NULL, done);
  for (int i = 0; i < n; i++) t = fmax(t, done[i]);
  free(done);
  hop_net_free(&x);
  return t;
}
