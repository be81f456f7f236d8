/* spec: workload and hardware specs — transformer shapes, GPU types, and the
 * byte and FLOP counts the cost model, the predictor and the engine use.
 * Invariant: a spec_workload that spec_workload_resolve accepted is
 * consistent: its model and schedule names are known, stages * replicas is
 * the number of devices, B = passes * D_dp * m * K with every factor >= 1,
 * and every stage holds at least one layer. Every count here is a pure
 * function of the workload: no state, no allocation. */
#ifndef MODELS_SPEC_H
#define MODELS_SPEC_H

#include <stdbool.h>

#include "base/err.h"
#include "traces/scenario.h"
#include "traces/workload.h"

/* The block a model is made of: GPT's (learned positions, LayerNorm with
 * biases, a 4h two-matrix MLP) or Llama's (rotary positions, RMSNorm, no
 * biases, grouped-query attention, a gated three-matrix MLP of width ffn). */
#define SPEC_ARCH_MAP(X) X(GPT, "gpt") X(LLAMA, "llama")
#define SPEC_ARCH_ID_(id, name) SPEC_ARCH_##id,
typedef enum spec_arch { SPEC_ARCH_MAP(SPEC_ARCH_ID_) } spec_arch;
#undef SPEC_ARCH_ID_
extern const char *const spec_arch_names[]; /* "gpt", "llama", NULL */

/* A transformer shape (plain data; the table is static). */
typedef struct spec_model {
  const char *name;   /* "gpt3-small", "gpt3-medium", "gpt3-large",
                         "gpt3-xl", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b",
                         "intellect-1" */
  int layers;         /* the model's own depth (a workload may override) */
  int hidden;         /* h */
  int heads;          /* attention heads a */
  int seq;            /* sequence length s */
  int vocab;          /* V */
  int value_bytes;    /* bytes per activation / weight value: 2 (fp16) */
  const char *source; /* where the shape comes from */
  spec_arch arch;     /* GPT unless stated */
  int ffn;            /* MLP width (0: 4h, GPT's) */
  int kv_heads;       /* key/value heads (0: heads, no grouping) */
} spec_model;

/* A GPU type (plain data; the table is static). */
typedef struct spec_gpu {
  const char *name;         /* "V100", "A100", "H100", "RTX3090", ... */
  double peak_flops;        /* dense fp16 tensor-core rate with fp32
                               accumulate (mixed precision), FLOP/s */
  double memory_bytes;      /* device memory, bytes */
  double mem_bw_bytes_s;    /* memory bandwidth, bytes/s */
  const char *source;       /* datasheet the numbers come from */
  double board_w;           /* the board's maximum power (TDP, TBP), W: what
                               a busy GPU draws at most; 0: not stated */
  double idle_w;            /* the board's power while it waits, W; 0: not
                               stated (no datasheet of this table states
                               one: a site's idle_w gives it) */
  const char *power_source; /* where board_w and idle_w come from */
} spec_gpu;

/* The enums are generated from traces/workload.h's maps, the home of the
 * names: SPEC_GPIPE is workload_schedules[SPEC_GPIPE], and so on. */
#define SPEC_ENUM(id, name) SPEC_##id,
#define SPEC_RUNTIME_ENUM(id, name) SPEC_RUNTIME_##id,
typedef enum spec_schedule {
  WORKLOAD_SCHEDULE_MAP(SPEC_ENUM) /* SPEC_GPIPE, SPEC_1F1B */
} spec_schedule;
/* The runtime that executes the schedule (DESIGN.md section 4): DT-FM's
 * (compute, send and receive streams, barriers between GPipe phases) or
 * Megatron-LM's of 2022 (1F1B with blocking point-to-point calls, NCCL
 * all-reduce, tied embeddings, GPU Adam). */
typedef enum spec_runtime {
  WORKLOAD_RUNTIME_MAP(SPEC_RUNTIME_ENUM) /* SPEC_RUNTIME_DTFM, _MEGATRON */
} spec_runtime;
/* SPEC_CENTRAL_PS: NCCL reduce to replica 0, then broadcast (DT-FM);
 * SPEC_RING: NCCL ring all-reduce; SPEC_SHARDED_PS: DT-FM's all-to-all
 * scatter-reduce + all-gather; SPEC_HIER_RING: two levels, a reduce and a
 * broadcast inside each site around a ring across the sites. */
typedef enum spec_dp_algo {
  WORKLOAD_DP_ALGO_MAP(SPEC_ENUM) /* SPEC_CENTRAL_PS, SPEC_RING, ... */
} spec_dp_algo;
#undef SPEC_ENUM
#undef SPEC_RUNTIME_ENUM

/* A scenario's workload with its names resolved (plain data). */
typedef struct spec_workload {
  const spec_model *model;    /* borrowed from the static table */
  int layers;                 /* L */
  int batch;                  /* B, sequences per iteration */
  int micro_batch;            /* m */
  int stages;                 /* D_pp */
  int replicas;               /* D_dp */
  int micro_batches_per_pass; /* K (resolved: never 0) */
  int passes;                 /* B / (D_dp m K): gradient accumulation */
  bool recompute;
  spec_schedule schedule;
  spec_dp_algo dp_algo;
  spec_runtime runtime;
  /* The workload as the scenario gives it (names borrowed): the knobs the
   * models read as they are, checked here — DiLoCo's plan and its
   * exchange's levels (models/diloco.h), the compression widths
   * (models/compress.h) */
  scenario_workload given;
  const int *stage_layers;    /* layers of each stage, D_pp entries summing
                                 to L (borrowed: the scenario's list, or a
                                 caller's balanced partition); NULL: the
                                 even split of spec_stage_layers */
  bool balanced;              /* the scenario's balanced_layers: a caller
                                 with the allocation sets stage_layers to
                                 partition_balanced's (partition_apply) */
} spec_workload;

/* Whether w's data parallelism is DiLoCo's (plain or streaming). */
bool spec_is_diloco(const spec_workload *w);

/* Whether algo is DiLoCo's: inner steps without synchronisation and an
 * outer exchange every H of them (diloco, streaming-diloco); the others
 * synchronise every step. */
bool spec_dp_algo_outer(spec_dp_algo algo);
/* Whether algo exchanges the model in fragments, overlapped with inner
 * steps (streaming-diloco: it takes fragments and overlap_steps). */
bool spec_dp_algo_streams(spec_dp_algo algo);

/* Tables. The model and GPU names of a scenario are looked up here, case-
 * insensitively ("gpt3-xl" = "GPT3-XL"; "RTX 3090" = "rtx3090"). NULL when
 * unknown. spec_models/spec_gpus return the static tables and their size. */
const spec_model *spec_model_find(const char *name);
const spec_gpu *spec_gpu_find(const char *name);
const spec_model *spec_models(int *n);
const spec_gpu *spec_gpus(int *n);

/* The tables' names, ", "-joined, into buf (for messages and help). */
void spec_model_list(char *buf, size_t size);
void spec_gpu_list(char *buf, size_t size);

/* Resolves s's workload into w: model, schedule and DP algorithm names, K
 * (0 means B / (D_dp m)), passes, DiLoCo's plan (diloco_check; diloco
 * under Megatron's runtime, --fragments or --overlap-steps without
 * streaming-diloco, DiLoCo's knobs without a DiLoCo algorithm: ERR_CONFIG
 * naming the option). Rejects unknown names, D_pp * D_dp !=
 * s->ndevices, L < D_pp, B not a multiple of D_dp m K: ERR_UNKNOWN or
 * ERR_CONFIG with a message naming the field, at its FILE:LINE when the
 * file gave it (scenario_where). */
int spec_workload_resolve(const scenario *s, spec_workload *w, err *e);

/* Resolves the GPU type of every device of s into gpu[0..ndevices-1]
 * (borrowed pointers into the static table). ERR_UNKNOWN names the site,
 * at the FILE:LINE of its gpu when the file gave it. */
int spec_device_gpus(const scenario *s, const spec_gpu **gpu, err *e);

/* Layers of stage st: w->stage_layers[st] when set, else the even split,
 * floor(L / D_pp) and one more for the first L mod D_pp stages. */
int spec_stage_layers(const spec_workload *w, int st);

/* Parameters of one transformer layer: 12 h^2 + 13 h for GPT; for Llama
 * 2 h^2 + 2 h (kv_heads h / heads) attention, 3 h ffn MLP, 2 h RMSNorm. */
double spec_layer_params(const spec_model *m);

/* Parameters of the input embedding (token, and GPT's learned positions)
 * and of the output: the final norm and the untied LM head. */
double spec_embedding_params(const spec_model *m);
double spec_head_params(const spec_model *m);

/* Parameters of stage st: its layers, plus the token and position
 * embeddings on stage 0 and the final layer norm and (untied) LM head on
 * the last stage, as DT-FM's GPT stages hold them. */
double spec_stage_params(const spec_workload *w, int st);

/* fp16 gradient bytes of stage st (parameters x value_bytes): what DT-FM's
 * runtime synchronises across a data-parallel group. */
double spec_stage_gradient_bytes(const spec_workload *w, int st);

/* Bytes of the activation sent across one stage boundary for one
 * micro-batch: m s h value_bytes (8 MiB for GPT-3 XL fp16, m = 1). The
 * activation gradient sent back has the same size. */
double spec_activation_bytes(const spec_workload *w);

/* Forward FLOPs of one transformer layer for one sequence: 2 s times its
 * weight matrices' parameters plus 4 s^2 h for the attention scores and
 * their weighted sum: 24 s h^2 + 4 s^2 h for GPT (DESIGN.md section 4). */
double spec_layer_flops(const spec_model *m);

/* Forward FLOPs of the LM head (the vocabulary projection) for one
 * sequence: 2 s h V. */
double spec_head_flops(const spec_model *m);

/* FLOPs of one micro-batch on stage st: forward = layers m F_layer, plus
 * m F_head on the last stage; backward = 2x the layers' forward, plus one
 * forward more with recomputation, and 2x the head's (it is not
 * recomputed). The embedding lookup costs no FLOPs worth counting. */
double spec_stage_fwd_flops(const spec_workload *w, int st);
double spec_stage_bwd_flops(const spec_workload *w, int st);

/* How much longer g computes on the hosts of site than the roofline says
 * (models/roofline.h times every GPU from its datasheet): the site's
 * compute_efficiency is a factor on g's speed, so 1 / compute_efficiency
 * (1 when the site sets none). */
double spec_site_compute_factor(const scenario_site *site, const spec_gpu *g);

/* Bytes of device memory per parameter under runtime rt: fp16 weights and
 * gradients (4), plus on Megatron the fp32 master copy and Adam's two
 * moments (12 more: 16, as ZeRO, Rajbhandari et al. SC'20, section 3.1,
 * counts mixed-precision Adam); DT-FM keeps those on the host
 * (models/runtime.h). */
double spec_state_bytes_per_param(spec_runtime rt);

/* Peak memory of stage st on one device, bytes: its parameters' state
 * (spec_state_bytes_per_param) plus the activations kept for backward (see
 * spec.c for the count). */
double spec_stage_memory_bytes(const spec_workload *w, int st);

/* spec_stage_memory_bytes of stage st if it held `layers` layers. */
double spec_stage_memory_with(const spec_workload *w, int st, int layers);

/* Checks that every stage fits in the memory of every device that runs it:
 * device[r][s] of the allocation, given row-major (replicas x stages), and
 * gpu per device from spec_device_gpus. Returns ERR_OK, or ERR_MEMORY
 * naming the scenario, stage, device, GPU and both byte counts. */
int spec_check_memory(const spec_workload *w, const scenario *s,
                      const int *device, const spec_gpu *const *gpu, err *e);

/* The cost model's default sizes, in decimal GB (DESIGN.md section 3):
 * c_pp = (B / D_dp) s h value_bytes, c_dp = the largest stage's gradient. */
double spec_default_activation_gb(const spec_workload *w);
double spec_default_gradient_gb(const spec_workload *w);

/* The name of a schedule / DP algorithm / runtime, as every file and the
 * command line spell it (traces/workload.h). */
const char *spec_schedule_name(spec_schedule s);
const char *spec_dp_algo_name(spec_dp_algo a);
const char *spec_runtime_name(spec_runtime r);

/* The value called name (NULL: the default, the map's first), or -1 for
 * an unknown name. */
int spec_schedule_parse(const char *name);
int spec_dp_algo_parse(const char *name);
int spec_runtime_parse(const char *name);

#endif
