/* compress: what compressing the values a run exchanges costs — the
 * synchronised gradients or pseudo-gradients at --grad-bits 16|8|4
 * (INTELLECT-1's int8, streaming DiLoCo's 4-bit) and the pipeline's
 * activations and their gradients at --activation-bits 16|8|4|2 (AC-SGD's
 * 2-4 bits): the bytes on the wire, and the time a GPU spends quantising
 * before a send and dequantising after a receive.
 * Invariant: pure functions; 16 bits is the uncompressed fp16 of the rest
 * of geodes (bytes unchanged, no time), and so is a width <= 0 (unset). Bytes scale exactly with bits: no
 * per-block scale or lookup table is counted (PRIME's 256-entry table per
 * chunk is 1 KB against megabytes). */
#ifndef MODELS_COMPRESS_H
#define MODELS_COMPRESS_H

#include <stdbool.h>

#include "models/spec.h"
#include "traces/workload.h"

/* The uncompressed width: the fp16 values every byte count of spec.h is. */
#define COMPRESS_FULL_BITS 16

/* Quantising and dequantising are memory-bound element-wise kernels; they
 * reach this fraction of a GPU's peak memory bandwidth (spec_gpu's
 * mem_bw_bytes_s): pytorch/ao issue #4054 measured its blockwise FP8
 * quantisation kernels above 80 % of an H100 SXM5's peak (against 92 %
 * achievable). */
#define COMPRESS_BW_FRACTION 0.8

/* The widths each knob allows (the names of traces/workload.h's rows,
 * their home). */
bool compress_grad_bits_ok(int bits);  /* 16, 8, 4 */
bool compress_act_bits_ok(int bits);   /* 16, 8, 4, 2 */

/* bytes16 (an fp16 byte count) at bits per value: bytes16 x bits / 16. */
double compress_bytes(double bytes16, int bits);

/* Seconds GPU g takes to quantise the bytes16 / 2 fp16 values to bits
 * (one read of the values, one write of the result: 2 + bits / 8 bytes per
 * value at COMPRESS_BW_FRACTION of its memory bandwidth), and to
 * dequantise them back (bits / 8 + 2 bytes per value). 0 at 16 bits. */
double compress_quantise_s(const spec_gpu *g, double bytes16, int bits);
double compress_dequantise_s(const spec_gpu *g, double bytes16, int bits);

/* What w sends at the widths its scenario gives (w->given): one
 * micro-batch's activation (and its gradient) at the activations' width,
 * stage st's synchronised gradient, or bytes16 of (pseudo-)gradient, at
 * the gradients' width. */
double compress_activation_bytes(const spec_workload *w);
double compress_gradient_bytes(const spec_workload *w, int st);
double compress_grad_bytes(const spec_workload *w, double bytes16);

/* The cost model's sizes (act, grad: fp16 bytes or GB) at w's widths. */
void compress_widths(const scenario_workload *w, double *act, double *grad);

/* Seconds stage st of w on g adds to one forward (bwd false) or backward
 * of a micro-batch: quantising what it sends, dequantising what it
 * receives, at the activations' width. 0 at 16 bits. */
double compress_stage_s(const spec_workload *w, int st, const spec_gpu *g,
                        bool bwd);

/* Seconds g spends quantising bytes16 of w's (pseudo-)gradient to its
 * width before a synchronisation (update false), or dequantising the
 * result (update true). 0 at 16 bits. */
double compress_grad_s(const spec_workload *w, const spec_gpu *g,
                       double bytes16, bool update);

/* Seconds stage st of w on g spends quantising its gradient before a
 * synchronisation and dequantising the result; 0 with one replica, which
 * exchanges nothing (issue 33: --grad-bits moved a one-replica run). */
double compress_sync_s(const spec_workload *w, int st, const spec_gpu *g);

#endif
