/* test_compress: the allowed widths, bytes exactly proportional to bits, and
 * the quantisation time against its closed form (memory traffic over the
 * bandwidth a quantiser reaches). */
#include <criterion/criterion.h>
#include <criterion/theories.h>
#include <math.h>

#include "models/compress.h"
#include "models/spec.h"

Test(compress, allowed_widths) {
  for (int b = -1; b <= 33; b++) {
    cr_assert_eq(compress_grad_bits_ok(b), b == 16 || b == 8 || b == 4, "%d", b);
    cr_assert_eq(compress_act_bits_ok(b), b == 16 || b == 8 || b == 4 || b == 2,
                 "%d", b);
  }
}

TheoryDataPoints(compress, bytes_scale_exactly) = {
    DataPoints(double, 1.0, 8388608.0, 296e6, 20.4e9, 3.0),
    DataPoints(int, 16, 8, 4, 2),
};

Theory((double bytes16, int bits), compress, bytes_scale_exactly) {
  double b = compress_bytes(bytes16, bits);
  /* exact in binary: 16 / bits is a power of two */
  cr_assert_eq(b * (16 / bits), bytes16, "%g at %d bits: %g", bytes16, bits, b);
  cr_assert_eq(compress_bytes(bytes16, 16), bytes16);
  if (bits < 16) cr_assert_lt(b, bytes16);
}

Test(compress, quantise_time_closed_form) {
  const spec_gpu *h100 = spec_gpu_find("H100");
  cr_assert_not_null(h100);
  double bytes16 = 2 * 10.2e9; /* 10.2 G fp16 values */
  /* int8: read 2 bytes, write 1 per value, at 80 % of 3.35 TB/s */
  double want = 10.2e9 * 3 / (0.8 * 3350e9);
  cr_assert(fabs(compress_quantise_s(h100, bytes16, 8) - want) < 1e-15);
  cr_assert(fabs(compress_dequantise_s(h100, bytes16, 8) - want) < 1e-15);
  cr_assert_eq(compress_quantise_s(h100, bytes16, 16), 0);
  cr_assert_eq(compress_dequantise_s(h100, bytes16, 16), 0);
  /* fewer bits write less; a slower memory takes longer */
  double t8 = compress_quantise_s(h100, bytes16, 8);
  double t4 = compress_quantise_s(h100, bytes16, 4);
  double t2 = compress_quantise_s(h100, bytes16, 2);
  cr_assert(t2 < t4 && t4 < t8);
  const spec_gpu *v100 = spec_gpu_find("V100");
  cr_assert_gt(compress_quantise_s(v100, bytes16, 8), t8);
}
