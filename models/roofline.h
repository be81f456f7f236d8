/* roofline: the time of a transformer layer, the LM head and the optimizer
 * on a GPU, from its datasheet numbers (the dense fp16 tensor rate with
 * fp32 accumulate, the memory bandwidth) and two efficiencies common to
 * every GPU: one for the GEMM class, one for the memory class.
 * Invariant: a pass is a list of operations, each one kernel (or a fused
 * few) that either multiplies matrices on the tensor cores or streams
 * tensors through device memory. An operation takes
 *   t = max(flops / (peak x eff.gemm), bytes / (mem_bw x eff.mem)),
 * and a pass the sum of its operations' times. The kernels of one pass run
 * one after another on one CUDA stream, so their times add; inside one
 * kernel compute and memory traffic overlap, so the slower bound is the
 * kernel's time (Williams et al., "Roofline", CACM 2009). A max over the
 * whole pass's sums instead would let a softmax hide behind a GEMM that
 * ran before it, which no single-stream runtime does. Every function is a
 * pure function of its arguments. */
#ifndef MODELS_ROOFLINE_H
#define MODELS_ROOFLINE_H

#include "models/params.h"
#include "models/spec.h"

/* The two classes: GEMMs (linear layers, the attention products, a fused
 * flash attention) on the tensor cores, bounded by both roofs; memory
 * operations (norms, softmax, ReLU / SwiGLU, residual adds, copies,
 * the loss, the optimizer) whose few FLOPs per byte run on the CUDA cores
 * far below their rate, so bytes alone bound them. */
typedef enum roofline_class { ROOFLINE_GEMM, ROOFLINE_MEM } roofline_class;

/* One operation of a pass (plain data). */
typedef struct roofline_op {
  const char *name;     /* "qkv", "softmax", "fc_dw", ... (static) */
  roofline_class cls;
  double flops;         /* tensor-core FLOPs; 0 in the memory class */
  double bytes;         /* bytes read plus bytes written in device memory */
} roofline_op;

/* The forward pass, or the gradient operations of the backward pass (the
 * recomputed forward of activation checkpointing is not in it: the stage
 * functions add it, as spec_stage_bwd_flops counts it). */
typedef enum roofline_pass { ROOFLINE_FWD, ROOFLINE_BWD } roofline_pass;

/* The fraction of the tensor roof and of the memory roof that the two
 * classes reach (plain data; GPU-independent). */
typedef struct roofline_eff {
  double gemm;
  double mem;
} roofline_eff;

/* The fitted efficiencies, fitted on DT-FM's V100 rows only (roofline.c
 * says which rows and how; analysis/VALIDATION.md). The one home of
 * these two physical parameters: everything else reads roofline_fitted. */
#define ROOFLINE_EFF_GEMM PARAMS_GEMM_EFFICIENCY_DEFAULT  /* 0.78 */
#define ROOFLINE_EFF_MEM PARAMS_MEMORY_EFFICIENCY_DEFAULT  /* 0.78 */
extern const roofline_eff roofline_fitted;

/* The efficiencies a run uses: the gemm_efficiency and memory_efficiency
 * parameters (models/params.h: roofline_fitted's values unless a
 * calibration or --params set them). The stage functions below read it. */
roofline_eff roofline_run_eff(void);

/* The most operations one pass of a layer or of the head lists. */
#define ROOFLINE_MAX_OPS 32

/* The operations of one layer of model m for a micro-batch of mb sequences
 * in pass p, into ops[0..n-1] (ROOFLINE_MAX_OPS entries, caller's); returns
 * n. The block is m's (traces/model.h): eager attention as DT-FM's
 * measured GPT runs ran it (its s^2 scores scaled and soft-maxed in
 * memory) or flash (fused, as INTELLECT-1's runtime runs it), grouped
 * key/value projections, a two- or three-matrix MLP, rotary positions'
 * pass. roofline.c lists every count. The GEMM FLOPs of the forward pass
 * sum to mb x spec_layer_flops(m). */
int roofline_layer_ops(const spec_model *m, int mb, roofline_pass p,
                       roofline_op *ops);

/* The same for the output: the final norm, the LM head's GEMM and the
 * cross-entropy loss over the vocabulary. Its GEMM FLOPs forward are
 * mb x spec_head_flops(m). */
int roofline_head_ops(const spec_model *m, int mb, roofline_pass p,
                      roofline_op *ops);

/* Seconds of one operation on GPU g at efficiencies e: the header's max. */
double roofline_op_s(const spec_gpu *g, const roofline_op *op,
                     const roofline_eff *e);

/* Seconds of n operations run one after another: the sum of their times. */
double roofline_ops_s(const spec_gpu *g, const roofline_op *ops, int n,
                      const roofline_eff *e);

/* Seconds of one layer's / the head's pass p for mb sequences on g at e. */
double roofline_layer_s(const spec_gpu *g, const spec_model *m, int mb,
                        roofline_pass p, const roofline_eff *e);
double roofline_head_s(const spec_gpu *g, const spec_model *m, int mb,
                       roofline_pass p, const roofline_eff *e);

/* Seconds of one micro-batch's forward / backward on stage st of w if it
 * held `layers` layers, on g at the fitted efficiencies: the layers' passes
 * plus the head's on the last stage; backward adds a forward of the layers
 * first when w recomputes (the head is not recomputed). Without the site's
 * factor (spec_site_compute_factor): callers multiply. */
double roofline_stage_fwd_with(const spec_gpu *g, const spec_workload *w,
                               int st, int layers);
double roofline_stage_bwd_with(const spec_gpu *g, const spec_workload *w,
                               int st, int layers);

/* The same at the stage's own layers (spec_stage_layers). */
double roofline_stage_fwd_s(const spec_gpu *g, const spec_workload *w, int st);
double roofline_stage_bwd_s(const spec_gpu *g, const spec_workload *w, int st);

/* Seconds to stream `bytes` through g's memory at the memory class's
 * fitted efficiency (an optimizer step on the GPU). */
double roofline_stream_s(const spec_gpu *g, double bytes);

/* The fraction of g's tensor peak that one layer of w reaches over a
 * micro-batch's forward and backward (with w's recomputation) at the
 * fitted efficiencies: the FLOPs spec.c counts for it over (peak x its
 * roofline time). What a cost model or an explain tool reports as g's
 * efficiency on w; it depends on the shape, not on g alone. */
double roofline_layer_fraction(const spec_gpu *g, const spec_workload *w);

#endif
