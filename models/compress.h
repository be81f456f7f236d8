/* compress: what compressing the values a run exchanges costs — the
 * synchronised gradients or pseudo-gradients at --grad-bits 16|8|4
 * (INTELLECT-1's int8, streaming DiLoCo's 4-bit) and the pipeline's
 * activations and their gradients at --activation-bits 16|8|4|2 (AC-SGD's
 * 2-4 bits): the bytes on the wire, and the time a GPU spends quantising
 * before a send and dequantising after a receive.
 * Invariant: pure functions; 16 bits is the uncompressed fp16 of the rest
 * of geodes (bytes unchanged, no time). Bytes scale exactly with bits: no
 * per-block scale or lookup table is counted (PRIME's 256-entry table per
 * chunk is 1 KB against megabytes). */
#ifndef MODELS_COMPRESS_H
#define MODELS_COMPRESS_H

#include <stdbool.h>

#include "models/spec.h"

/* The uncompressed width: the fp16 values every byte count of spec.h is. */
#define COMPRESS_FULL_BITS 16

/* Quantising and dequantising are memory-bound element-wise kernels; they
 * reach this fraction of a GPU's peak memory bandwidth (spec_gpu's
 * mem_bw_bytes_s): pytorch/ao issue #4054 measured its blockwise FP8
 * quantisation kernels above 80 % of an H100 SXM5's peak (against 92 %
 * achievable). */
#define COMPRESS_BW_FRACTION 0.8

/* The widths each knob allows, and their text for messages and help. */
bool compress_grad_bits_ok(int bits);  /* 16, 8, 4 */
bool compress_act_bits_ok(int bits);   /* 16, 8, 4, 2 */
#define COMPRESS_GRAD_BITS_TEXT "16, 8 or 4"
#define COMPRESS_ACT_BITS_TEXT "16, 8, 4 or 2"

/* bytes16 (an fp16 byte count) at bits per value: bytes16 x bits / 16. */
double compress_bytes(double bytes16, int bits);

/* Seconds GPU g takes to quantise the bytes16 / 2 fp16 values to bits
 * (one read of the values, one write of the result: 2 + bits / 8 bytes per
 * value at COMPRESS_BW_FRACTION of its memory bandwidth), and to
 * dequantise them back (bits / 8 + 2 bytes per value). 0 at 16 bits. */
double compress_quantise_s(const spec_gpu *g, double bytes16, int bits);
double compress_dequantise_s(const spec_gpu *g, double bytes16, int bits);

#endif
