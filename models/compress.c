/* compress: bytes on the wire and quantisation time at a width.
 * Invariant: pure functions of their arguments (see compress.h). The time
 * is a derivation, not a measurement: a quantiser moves each value through
 * memory once each way, so its time is its bytes over the bandwidth its
 * kernel reaches: an H100 (3.35 TB/s) quantises 10.2 G fp16 values to int8
 * in 11 ms, a V100 (900 GB/s) a GPT-3 XL stage's 296 MB in 0.6 ms. */
#include "models/compress.h"

bool compress_grad_bits_ok(int bits) {
  return bits == 16 || bits == 8 || bits == 4;
}

bool compress_act_bits_ok(int bits) {
  return bits == 16 || bits == 8 || bits == 4 || bits == 2;
}

double compress_bytes(double bytes16, int bits) {
  return bytes16 * bits / COMPRESS_FULL_BITS;
}

/* Seconds for bytes of memory traffic on g. */
static double traffic_s(const spec_gpu *g, double bytes) {
  return bytes / (COMPRESS_BW_FRACTION * g->mem_bw_bytes_s);
}

double compress_quantise_s(const spec_gpu *g, double bytes16, int bits) {
  if (bits >= COMPRESS_FULL_BITS) return 0;
  return traffic_s(g, bytes16 + compress_bytes(bytes16, bits));
}

double compress_dequantise_s(const spec_gpu *g, double bytes16, int bits) {
  return compress_quantise_s(g, bytes16, bits);
}
