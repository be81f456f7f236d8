/* spec_memory: what a stage keeps in a device's memory (models/spec.h's
 * memory functions), part by part, and the check every search and the
 * engine make with it.
 * Invariant: pure functions of their arguments; the parts are as the
 * workload's runtime keeps them (models/runtime.c's row), so a runtime
 * that steps its optimizer on the host keeps no optimizer state here. */
#include <math.h>
#include <stdio.h>

#include "models/runtime.h"
#include "models/spec.h"

/* Activations kept for backward, checked against Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models", section
 * 4.1 (no tensor or sequence parallelism, fp16, dropout masks of a byte):
 * a GPT layer keeps s b h (34 + 5 a s / h) bytes for a micro-batch of b
 * sequences — attention 11 s b h + 5 a s^2 b (its input, Q and K, the
 * softmax's output and its dropout's mask and output, V, the projection's
 * input and its dropout's mask), the MLP 19 s b h, the two layer norms
 * 4 s b h. With full recomputation only each layer's input is kept, 2 s b
 * h (their section 5, "2 s b h L"), plus one layer's full set while it is
 * recomputed. In flight: all K micro-batches of a pass under GPipe; under
 * 1F1B stage st holds at most D_pp - st (Narayanan et al. SC'21, section
 * 2.2: the first stage warms up with D_pp). Left out, as in their count
 * of the layers: the embedding's dropout mask and the output layer's
 * logits (their 4 s b v), which DT-FM's runs (worldwide's last stage on a
 * 16 GB V100 with 64 micro-batches in flight) could not have kept whole. */
static double activation_bytes(const spec_workload *w, int st, int layers) {
  const spec_model *m = w->model;
  double s = m->seq, h = m->hidden, a = m->heads, mb = w->micro_batch;
  double full_layer = mb * s * h * (34.0 + 5.0 * a * s / h);
  double input = mb * s * h * m->value_bytes;
  double in_flight = w->micro_batches_per_pass;
  switch (w->schedule) {
    case SPEC_GPIPE: break;
    case SPEC_1F1B: in_flight = fmin(w->stages - st, in_flight); break;
  }
  return w->recompute ? in_flight * layers * input + full_layer
                      : in_flight * layers * full_layer;
}

/* The reserve, SPEC_MEMORY_RESERVE_BYTES, a stated figure (not fitted):
 * a CUDA context with PyTorch's kernels loaded takes 0.3-0.8 GB (lazy
 * module loading, CUDA 11.7 on, at the low end), cuBLAS's workspaces and
 * NCCL's buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer) some hundred
 * MB more, and PyTorch's caching allocator holds memory it cannot hand out
 * (blocks split for tensors of other sizes; ZeRO's authors, SC'20 section
 * 3.2, saw fragmentation strand up to 30 % on their largest models): 2 GB
 * in all, an eighth of a 16 GB V100. One figure per device, whatever its
 * size: a whole node counted as one device (HGX-H100) holds back 2 GB, not
 * 2 per GPU. */
spec_memory spec_stage_memory(const spec_workload *w, int st, int layers) {
  const runtime_row *r = runtime_of(w->runtime);
  double p = spec_stage_params_with(w, st, layers), R = w->replicas;
  spec_memory m = {
      .weights = p * r->weight_bytes,
      .gradients = p * r->gradient_bytes / (w->given.zero >= 2 ? R : 1),
      .optimizer = p * r->optimizer_bytes / (w->given.zero >= 1 ? R : 1),
      .activations = activation_bytes(w, st, layers)};
  m.reserve = SPEC_MEMORY_RESERVE_BYTES;
  m.total = m.weights + m.gradients + m.optimizer + m.activations + m.reserve;
  return m;
}

double spec_stage_memory_with(const spec_workload *w, int st, int layers) {
  return spec_stage_memory(w, st, layers).total;
}

double spec_stage_memory_bytes(const spec_workload *w, int st) {
  return spec_stage_memory_with(w, st, spec_stage_layers(w, st));
}

double spec_device_memory_bytes(const scenario *s, int d, const spec_gpu *g) {
  double gb = s->sites[s->device_site[d]].gpu_memory_gb;
  return gb > 0 ? gb * 1e9 : g->memory_bytes;
}

void spec_memory_text(const spec_memory *m, char *buf, size_t size) {
  snprintf(buf, size, "%.3g GB = weights %.3g + gradients %.3g + optimizer "
           "%.3g + activations %.3g + reserve %.3g GB", m->total / 1e9,
           m->weights / 1e9, m->gradients / 1e9, m->optimizer / 1e9,
           m->activations / 1e9, m->reserve / 1e9);
}

int spec_check_memory(const spec_workload *w, const scenario *s,
                      const int *device, const spec_gpu *const *gpu, err *e) {
  for (int r = 0; r < w->replicas; r++)
    for (int st = 0; st < w->stages; st++) {
      int d = device[r * w->stages + st];
      int layers = spec_stage_layers(w, st);
      spec_memory m = spec_stage_memory(w, st, layers);
      double have = spec_device_memory_bytes(s, d, gpu[d]);
      if (m.total <= have) continue;
      char parts[256], zero[24] = "";
      spec_memory_text(&m, parts, sizeof parts);
      if (w->given.zero > 0)
        snprintf(zero, sizeof zero, ", ZeRO-%d", w->given.zero);
      return err_set(e, ERR_MEMORY,
                     "%s: device %d (site %s, %s, %.3g GB) cannot hold stage "
                     "%d (%d layers): it needs %s under runtime %s (%s%s)",
                     s->name, d, s->sites[s->device_site[d]].name,
                     gpu[d]->name, have / 1e9, st, layers, parts,
                     spec_runtime_name(w->runtime),
                     runtime_of(w->runtime)->optimizer, zero);
    }
  return ERR_OK;
}
