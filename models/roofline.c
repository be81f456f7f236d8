/* roofline: the operations of a transformer layer and of the LM head, and
 * their times on a GPU's two roofs (roofline.h states the model).
 * Invariant: the operation lists are pure functions of the model's shape;
 * the GEMM FLOPs of a forward pass sum to spec.c's FLOP count (the tests
 * check it), so the FLOPs the rest of geodes reports and the times here
 * describe the same work.
 *
 * Counting conventions, for T = mb s tokens, h hidden, f the MLP width,
 * kv = h kv_heads / heads, a heads, b = value_bytes (2, fp16):
 * - a GEMM y[T x n] = x[T x k] W[k x n] does 2 T k n FLOPs and moves
 *   b (T k + k n + T n) bytes (each operand read once, the output written
 *   once: the tiles' reuse is the GEMM kernel's job). Its backward is two
 *   GEMMs of the same FLOPs, dx = dy W^T and dW = x^T dy, each reading two
 *   of the three tensors and writing the third: the same bytes. Biases are
 *   added in the GEMM's epilogue (PyTorch's addmm), their gradients are
 *   one reduction over dy per linear layer.
 * - an elementwise operation, a norm or a softmax reads each input once
 *   and writes each output once (one kernel; PyTorch's own kernels for
 *   LayerNorm and softmax are single-pass).
 * - the attention scores of an unfused attention are mb a s^2 values,
 *   kept in fp16; a fused (flash) attention never writes them: it reads
 *   q, k, v and writes its output, and its backward recomputes the scores
 *   (2.5x the forward's FLOPs: QK^T again, then dV, dP, dQ, dK).
 * - the embedding lookup (stage 0) is left out, as spec.c leaves its
 *   FLOPs: a gather of T h values, small beside a layer. */
#include "models/roofline.h"

#include <assert.h>
#include <math.h>

/* The efficiencies, fitted on DT-FM's V100 rows only: datacenter-physical
 * (8 p3.16xlarge, NVLink inside, 64 vCPUs for 8 GPUs) on DT-FM's scheduler,
 * batch 1024 / 2048 / 4096, measured 10.14 / 17.69 / 33.05 s (the rows the
 * blanket 0.60 of peak was fitted on before). Those rows are one shape:
 * GPT-3 XL, micro-batch 1, s = 2048, so they fix one number, the V100's
 * time per layer, and not how it splits between the classes: every point
 * of a line through (eff.gemm, eff.mem) fits them equally. The two are
 * taken equal, the one point that prefers neither class; "What was
 * fitted" (analysis/VALIDATION.md) gives how far the GDDR cards' times
 * move along the line.
 * Least squares over the three rows' relative errors (a grid of 0.78 /
 * 0.82 / 0.86, errors linear in between) gives 0.78: -2.1 / +0.7 / +1.6 %.
 * The V100 then reaches 0.566 of its peak over a layer's counted FLOPs
 * (the blanket rule said 0.60 over the layers and the head). */
const roofline_eff roofline_fitted = {.gemm = ROOFLINE_EFF_GEMM,
                                      .mem = ROOFLINE_EFF_MEM};

/* A fused attention's backward FLOPs over its forward's: five s^2 products
 * (S = QK^T recomputed, dV, dP, dQ, dK) against the forward's two. */
#define ROOFLINE_FLASH_BWD_RATIO 2.5

/* A list being built: its ops and the shape every count needs. */
typedef struct oplist {
  roofline_op *op;
  int n;
  double T, b; /* tokens of the micro-batch, bytes per value */
} oplist;

static void push(oplist *l, const char *name, roofline_class cls,
                 double flops, double bytes) {
  assert(l->n < ROOFLINE_MAX_OPS);
  l->op[l->n++] = (roofline_op){.name = name, .cls = cls, .flops = flops,
                                .bytes = bytes};
}

/* A memory operation reading `in` and writing `out` values per token. */
static void mem(oplist *l, const char *name, double in, double out) {
  push(l, name, ROOFLINE_MEM, 0, l->b * l->T * (in + out));
}

/* A product of flops and bytes: one GEMM forward (fwd), two backward (the
 * gradients b1 and b2, each as costly). */
static void gemm(oplist *l, roofline_pass p, const char *fwd, const char *b1,
                 const char *b2, double flops, double bytes) {
  switch (p) {
    case ROOFLINE_FWD: push(l, fwd, ROOFLINE_GEMM, flops, bytes); break;
    case ROOFLINE_BWD:
      push(l, b1, ROOFLINE_GEMM, flops, bytes);
      push(l, b2, ROOFLINE_GEMM, flops, bytes);
      break;
  }
}

/* A linear layer x[T x k] W[k x n]: one GEMM forward, two backward. */
static void linear(oplist *l, roofline_pass p, const char *fwd,
                   const char *dx, const char *dw, double k, double n) {
  double flops = 2.0 * l->T * k * n;
  double bytes = l->b * (l->T * k + k * n + l->T * n);
  gemm(l, p, fwd, dx, dw, flops, bytes);
}

/* An unfused attention product over the mb a (s x s) score matrices:
 * scores = QK^T reads q and k (T h each) and writes the scores; the
 * weighted sum reads the scores and v and writes T h. 2 mb s^2 h FLOPs
 * each; backward two products each, with the same three tensors. */
static void attn_product(oplist *l, roofline_pass p, const char *fwd,
                         const char *b1, const char *b2, double scores,
                         double s, double h) {
  double flops = 2.0 * l->T * s * h; /* 2 mb s^2 h, T = mb s */
  double bytes = l->b * (scores + 2.0 * l->T * h);
  gemm(l, p, fwd, b1, b2, flops, bytes);
}

/* The block's forward operations, as m's attention and MLP build it.
 * Eager (GPT's block as DT-FM ran it for its measured runs:
 * Decentralized_FM_alpha modules/gpt_modules.py, GPTTransformerLayer at
 * 353a89d, March 2022, the version of the April 2022 runs): LayerNorm; q,
 * k and v as three linear layers; QK^T; / sqrt(d); softmax; PV (no causal
 * mask, no dropout); the heads merged by a transpose + contiguous copy;
 * the output projection; the residual add. Flash (Llama's as INTELLECT-1
 * runs it, PrimeIntellect-ai/prime): RMSNorm, one q,k,v GEMM, rotary on q
 * and k, fused attention, the output projection, the residual add. Then
 * the norm and the MLP: linear, activation, linear (GPT's ReLU), or one
 * gate-and-up GEMM, SwiGLU (silu(g) u) and the down projection; the
 * residual add. Rotary positions add their pass on q and k wherever they
 * are. An encoder's post-norm (BERT) orders the same operations
 * differently: the same time. Widths are values per token. */
typedef struct block {
  double h, s, f, kv, sc, as; /* widths; score values, per token */
  bool eager, rotary, gated, rms;
} block;

static block block_of(const spec_model *m, double mb) {
  double h = m->hidden, s = m->seq;
  bool eager = false, rotary = false, gated = false, rms = false;
  switch (m->attention) {
    case MODEL_ATTENTION_EAGER: eager = true; break;
    case MODEL_ATTENTION_FLASH: eager = false; break;
  }
  switch (m->positions) {
    case MODEL_POSITIONS_LEARNED: rotary = false; break;
    case MODEL_POSITIONS_ROTARY: rotary = true; break;
  }
  switch (m->mlp) {
    case MODEL_MLP_GELU: gated = false; break;
    case MODEL_MLP_GATED: gated = true; break;
  }
  switch (m->norm) {
    case MODEL_NORM_LAYERNORM: rms = false; break;
    case MODEL_NORM_RMSNORM: rms = true; break;
  }
  return (block){.h = h, .s = s, .f = m->ffn > 0 ? m->ffn : 4.0 * h,
                 .kv = m->kv_heads > 0 ? h * m->kv_heads / m->heads : h,
                 .sc = mb * m->heads * s * s, .as = m->heads * s,
                 .eager = eager, .rotary = rotary, .gated = gated,
                 .rms = rms};
}

/* The four-product attention's FLOPs: QK^T and PV, 2 mb s^2 h each. */
static double attn_flops(const block *k, double mb) {
  return 4.0 * mb * k->s * k->s * k->h;
}

static void attention_fwd(oplist *l, const block *k, double mb) {
  double h = k->h, kv = k->kv;
  roofline_pass p = ROOFLINE_FWD;
  if (k->eager) {
    linear(l, p, "q", NULL, NULL, h, h);
    linear(l, p, "k", NULL, NULL, h, kv);
    linear(l, p, "v", NULL, NULL, h, kv);
  } else {
    linear(l, p, "qkv", NULL, NULL, h, h + 2.0 * kv);
  }
  if (k->rotary) mem(l, "rotary", h + kv, h + kv);
  if (k->eager) {
    attn_product(l, p, "scores", NULL, NULL, k->sc, k->s, h);
    mem(l, "scale", k->as, k->as);
    mem(l, "softmax", k->as, k->as);
    attn_product(l, p, "weighted_sum", NULL, NULL, k->sc, k->s, h);
    mem(l, "merge_heads", h, h);
  } else {
    push(l, "flash_attention", ROOFLINE_GEMM, attn_flops(k, mb),
         l->b * l->T * (2.0 * h + 2.0 * kv)); /* q k v in, o out */
  }
}

static void mlp_fwd(oplist *l, const block *k) {
  roofline_pass p = ROOFLINE_FWD;
  if (k->gated) {
    linear(l, p, "gate_up", NULL, NULL, k->h, 2.0 * k->f);
    mem(l, "swiglu", 2 * k->f, k->f);
    linear(l, p, "down", NULL, NULL, k->f, k->h);
  } else {
    linear(l, p, "fc_1", NULL, NULL, k->h, k->f);
    mem(l, "activation", k->f, k->f);
    linear(l, p, "fc_2", NULL, NULL, k->f, k->h);
  }
}

static void layer_fwd(oplist *l, const block *k, double mb) {
  double h = k->h;
  mem(l, k->rms ? "rms_1" : "norm_1", h, h);
  attention_fwd(l, k, mb);
  linear(l, ROOFLINE_FWD, "out_proj", NULL, NULL, h, h);
  mem(l, "residual_1", 2 * h, h);
  mem(l, k->rms ? "rms_2" : "norm_2", h, h);
  mlp_fwd(l, k);
  mem(l, "residual_2", 2 * h, h);
}

/* Backward in reverse: each residual add becomes the sum of the two
 * gradients reaching its input; eager q, k, v sum their input gradients;
 * a fused attention reads q k v o dO and writes dq dk dv. */
static void attention_bwd(oplist *l, const block *k, double mb) {
  double h = k->h, kv = k->kv;
  roofline_pass p = ROOFLINE_BWD;
  if (k->eager) {
    mem(l, "merge_heads_grad", h, h);
    attn_product(l, p, NULL, "weighted_sum_dp", "weighted_sum_dv", k->sc,
                 k->s, h);
    mem(l, "softmax_grad", 2 * k->as, k->as);
    mem(l, "scale_grad", k->as, k->as);
    attn_product(l, p, NULL, "scores_dq", "scores_dk", k->sc, k->s, h);
  } else {
    push(l, "flash_attention_grad", ROOFLINE_GEMM,
         ROOFLINE_FLASH_BWD_RATIO * attn_flops(k, mb),
         l->b * l->T * (4.0 * h + 4.0 * kv));
  }
  if (k->rotary) mem(l, "rotary_grad", h + kv, h + kv);
  if (k->eager) {
    linear(l, p, NULL, "v_dx", "v_dw", h, kv);
    linear(l, p, NULL, "k_dx", "k_dw", h, kv);
    linear(l, p, NULL, "q_dx", "q_dw", h, h);
    mem(l, "input_grad_sum", 3 * h, h); /* dx of q, k, v summed */
  } else {
    linear(l, p, NULL, "qkv_dx", "qkv_dw", h, h + 2.0 * kv);
  }
}

/* The biases' gradients, one reduction over each biased linear layer's
 * dy: their widths per token (0: no bias). */
static double bias_widths(const spec_model *m, const block *k) {
  double w = 0;
  if (model_bias_qkv(m->bias)) w += k->h + 2.0 * k->kv;
  if (model_bias_out(m->bias)) w += k->h;
  if (model_bias_mlp(m->bias)) w += (k->gated ? 2.0 : 1.0) * k->f + k->h;
  return w;
}

static void layer_bwd(oplist *l, const spec_model *m, const block *k,
                      double mb) {
  double h = k->h, f = k->f;
  roofline_pass p = ROOFLINE_BWD;
  mem(l, "residual_2_grad", 2 * h, h);
  if (k->gated) {
    linear(l, p, NULL, "down_dx", "down_dw", f, h);
    mem(l, "swiglu_grad", 3 * f, 2 * f);
    linear(l, p, NULL, "gate_up_dx", "gate_up_dw", h, 2.0 * f);
  } else {
    linear(l, p, NULL, "fc_2_dx", "fc_2_dw", f, h);
    mem(l, "activation_grad", 2 * f, f);
    linear(l, p, NULL, "fc_1_dx", "fc_1_dw", h, f);
  }
  mem(l, k->rms ? "rms_2_grad" : "norm_2_grad", 2 * h, h);
  mem(l, "residual_1_grad", 2 * h, h);
  linear(l, p, NULL, "out_proj_dx", "out_proj_dw", h, h);
  attention_bwd(l, k, mb);
  double biases = bias_widths(m, k);
  if (biases > 0) mem(l, "bias_grads", biases, 0); /* a reduction over each dy */
  mem(l, k->rms ? "rms_1_grad" : "norm_1_grad", 2 * h, h);
}

int roofline_layer_ops(const spec_model *m, int mb, roofline_pass p,
                       roofline_op *ops) {
  oplist l = {.op = ops, .T = (double)mb * m->seq, .b = m->value_bytes};
  block k = block_of(m, mb);
  switch (p) {
    case ROOFLINE_FWD: layer_fwd(&l, &k, mb); break;
    case ROOFLINE_BWD: layer_bwd(&l, m, &k, mb); break;
  }
  return l.n;
}

/* The output: the final norm, the LM head (no bias), the loss, as spec.c
 * counts an LM head on every model's last stage. (DT-FM's measured runs of
 * April 2022 ended in a GLUE classifier on one token, GPTGlueModel at
 * 353a89d, not an LM head: the fitted efficiencies and the p3.2xlarge's
 * 0.43 absorb that.) DT-FM's later gpt_loss_func copies the shifted logits
 * (contiguous) and takes cross_entropy: log_softmax over V writes T V
 * values, the NLL picks T.
 * Backward: the NLL's gradient (a T x V tensor, zero but one per row), the
 * log_softmax's (reads it and the output, writes dlogits), and with eager
 * attention (DT-FM's GPT loss; not an encoder's) the slice's (zeros, then
 * the copy back). An encoder's masked-LM head is timed as this LM head
 * over every token (BERT's transform and its pooler, one h x h GEMM each,
 * left out as the embedding lookup is). */
int roofline_head_ops(const spec_model *m, int mb, roofline_pass p,
                      roofline_op *ops) {
  oplist l = {.op = ops, .T = (double)mb * m->seq, .b = m->value_bytes};
  double h = m->hidden, V = m->vocab;
  bool shift = true; /* DT-FM's GPT loss copies the shifted logits */
  switch (m->attention) {
    case MODEL_ATTENTION_EAGER: shift = !m->encoder; break;
    case MODEL_ATTENTION_FLASH: shift = false; break;
  }
  switch (p) {
    case ROOFLINE_FWD:
      mem(&l, "final_norm", h, h);
      linear(&l, p, "lm_head", NULL, NULL, h, V);
      if (shift) mem(&l, "shift_logits", V, V);
      mem(&l, "log_softmax", V, V);
      return l.n;
    case ROOFLINE_BWD: break; /* below */
  }
  mem(&l, "nll_grad", 0, V);
  mem(&l, "log_softmax_grad", 2 * V, V);
  if (shift) mem(&l, "shift_logits_grad", V, 2 * V);
  linear(&l, p, NULL, "lm_head_dx", "lm_head_dw", h, V);
  mem(&l, "final_norm_grad", 2 * h, h);
  return l.n;
}

double roofline_op_s(const spec_gpu *g, const roofline_op *op,
                     const roofline_eff *e) {
  double mem_s = op->bytes / (g->mem_bw_bytes_s * e->mem);
  switch (op->cls) {
    case ROOFLINE_GEMM: return fmax(op->flops / (g->peak_flops * e->gemm), mem_s);
    case ROOFLINE_MEM: return mem_s;
  }
  assert(!"unknown operation class");
  return mem_s;
}

double roofline_ops_s(const spec_gpu *g, const roofline_op *ops, int n,
                      const roofline_eff *e) {
  double t = 0;
  for (int i = 0; i < n; i++) t += roofline_op_s(g, &ops[i], e);
  return t;
}

double roofline_layer_s(const spec_gpu *g, const spec_model *m, int mb,
                        roofline_pass p, const roofline_eff *e) {
  roofline_op ops[ROOFLINE_MAX_OPS];
  int n = roofline_layer_ops(m, mb, p, ops);
  return roofline_ops_s(g, ops, n, e);
}

double roofline_head_s(const spec_gpu *g, const spec_model *m, int mb,
                       roofline_pass p, const roofline_eff *e) {
  roofline_op ops[ROOFLINE_MAX_OPS];
  int n = roofline_head_ops(m, mb, p, ops);
  return roofline_ops_s(g, ops, n, e);
}

/* The head's pass p on stage st: 0 but on the last stage. */
roofline_eff roofline_run_eff(void) {
  return (roofline_eff){.gemm = params_get(PARAMS_GEMM_EFFICIENCY),
                        .mem = params_get(PARAMS_MEMORY_EFFICIENCY)};
}

static double head_s(const spec_gpu *g, const spec_workload *w, int st,
                     roofline_pass p, const roofline_eff *e) {
  if (st != w->stages - 1) return 0;
  return roofline_head_s(g, w->model, w->micro_batch, p, e);
}

double roofline_stage_fwd_with(const spec_gpu *g, const spec_workload *w,
                               int st, int layers) {
  roofline_eff e = roofline_run_eff();
  double f = roofline_layer_s(g, w->model, w->micro_batch, ROOFLINE_FWD, &e);
  return layers * f + head_s(g, w, st, ROOFLINE_FWD, &e);
}

double roofline_stage_bwd_with(const spec_gpu *g, const spec_workload *w,
                               int st, int layers) {
  roofline_eff e = roofline_run_eff();
  double b = roofline_layer_s(g, w->model, w->micro_batch, ROOFLINE_BWD, &e);
  if (w->recompute)
    b += roofline_layer_s(g, w->model, w->micro_batch, ROOFLINE_FWD, &e);
  return layers * b + head_s(g, w, st, ROOFLINE_BWD, &e);
}

double roofline_stage_fwd_s(const spec_gpu *g, const spec_workload *w,
                            int st) {
  return roofline_stage_fwd_with(g, w, st, spec_stage_layers(w, st));
}

double roofline_stage_bwd_s(const spec_gpu *g, const spec_workload *w,
                            int st) {
  return roofline_stage_bwd_with(g, w, st, spec_stage_layers(w, st));
}

double roofline_stream_s(const spec_gpu *g, double bytes) {
  return bytes / (g->mem_bw_bytes_s * params_get(PARAMS_MEMORY_EFFICIENCY));
}

double roofline_layer_fraction(const spec_gpu *g, const spec_workload *w) {
  /* a middle stage's one layer: no head */
  spec_workload one = *w;
  one.stages = 2;
  double t = roofline_stage_fwd_with(g, &one, 0, 1) +
             roofline_stage_bwd_with(g, &one, 0, 1);
  double flops = (w->recompute ? 4.0 : 3.0) * w->micro_batch *
                 spec_layer_flops(w->model);
  return flops / (g->peak_flops * t);
}
