/* compress: bytes on the wire and quantisation time at a width.
 * Invariant: pure functions of their arguments (see compress.h). The time
 * is a derivation, not a measurement: a quantiser moves each value through
 * memory once each way, so its time is its bytes over the bandwidth its
 * kernel reaches: an H100 (3.35 TB/s) quantises 10.2 G fp16 values to int8
 * in 11 ms, a V100 (900 GB/s) a GPT-3 XL stage's 296 MB in 0.6 ms. */
#include "models/compress.h"

bool compress_grad_bits_ok(int bits) {
  return workload_bits_ok(workload_rows[WORKLOAD_grad_bits].names, bits);
}

bool compress_act_bits_ok(int bits) {
  return workload_bits_ok(workload_rows[WORKLOAD_activation_bits].names, bits);
}

double compress_activation_bytes(const spec_workload *w) {
  return compress_bytes(spec_activation_bytes(w), w->given.activation_bits);
}

double compress_grad_bytes(const spec_workload *w, double bytes16) {
  return compress_bytes(bytes16, w->given.grad_bits);
}

double compress_gradient_bytes(const spec_workload *w, int st) {
  return compress_grad_bytes(w, spec_stage_gradient_bytes(w, st));
}

void compress_widths(const scenario_workload *w, double *act, double *grad) {
  *act = compress_bytes(*act, w->activation_bits);
  *grad = compress_bytes(*grad, w->grad_bits);
}

double compress_bytes(double bytes16, int bits) {
  if (bits <= 0) return bytes16; /* unset: a workload built in code */
  return bytes16 * bits / COMPRESS_FULL_BITS;
}

/* Seconds for bytes of memory traffic on g. */
static double traffic_s(const spec_gpu *g, double bytes) {
  return bytes / (COMPRESS_BW_FRACTION * g->mem_bw_bytes_s);
}

double compress_quantise_s(const spec_gpu *g, double bytes16, int bits) {
  if (bits <= 0 || bits >= COMPRESS_FULL_BITS) return 0;
  return traffic_s(g, bytes16 + compress_bytes(bytes16, bits));
}

double compress_dequantise_s(const spec_gpu *g, double bytes16, int bits) {
  return compress_quantise_s(g, bytes16, bits);
}

double compress_stage_s(const spec_workload *w, int st, const spec_gpu *g,
                        bool bwd) {
  double a = spec_activation_bytes(w), t = 0;
  bool sends = bwd ? st > 0 : st + 1 < w->stages;
  bool receives = bwd ? st + 1 < w->stages : st > 0;
  if (sends) t += compress_quantise_s(g, a, w->given.activation_bits);
  if (receives) t += compress_dequantise_s(g, a, w->given.activation_bits);
  return t;
}

double compress_grad_s(const spec_workload *w, const spec_gpu *g,
                       double bytes16, bool update) {
  return update ? compress_dequantise_s(g, bytes16, w->given.grad_bits)
                : compress_quantise_s(g, bytes16, w->given.grad_bits);
}

double compress_sync_s(const spec_workload *w, int st, const spec_gpu *g) {
  if (w->replicas < 2) return 0; /* one replica exchanges nothing */
  double b = spec_stage_gradient_bytes(w, st);
  return compress_grad_s(w, g, b, false) + compress_grad_s(w, g, b, true);
}
