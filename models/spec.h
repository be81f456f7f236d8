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
#include "base/names.h"
#include "traces/model.h"
#include "traces/scenario.h"
#include "traces/workload.h"

/* A transformer shape: traces/model.h's dimensions (plain data), the one
 * struct for the static table below and for a scenario's own model (an
 * object, or a config.json: spec_scenario_model). Its zero block is GPT-3
 * as DT-FM ran it (a two-matrix MLP, learned positions, LayerNorm, every
 * bias, eager attention, an untied head); ffn 0 means 4h and kv_heads 0
 * the heads. */
typedef model_dims spec_model;

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
/* The runtime that executes the schedule (DESIGN.md section 4; what each
 * implies is its row of models/runtime.c's table): a modern one (the
 * default: streams without barriers, GPU AdamW, ZeRO optional), DT-FM's
 * (compute, send and receive streams, barriers between GPipe phases, host
 * SGD) or Megatron-LM's of 2022 (1F1B with blocking point-to-point calls,
 * NCCL all-reduce, tied embeddings, GPU Adam). */
typedef enum spec_runtime {
  WORKLOAD_RUNTIME_MAP(SPEC_RUNTIME_ENUM) /* SPEC_RUNTIME_MODERN, _DTFM, ... */
} spec_runtime;
enum { SPEC_NRUNTIMES = 0 WORKLOAD_RUNTIME_MAP(NAMES_COUNT_ROW) };
/* SPEC_CENTRAL_PS: NCCL reduce to replica 0, then broadcast (DT-FM);
 * SPEC_RING: NCCL ring all-reduce; SPEC_SHARDED_PS: DT-FM's all-to-all
 * scatter-reduce + all-gather; SPEC_HIER_RING: two levels, a reduce and a
 * broadcast inside each site around a ring across the sites;
 * SPEC_HIVEMIND: hivemind's matchmaking and butterfly all-reduce, parts
 * by declared bandwidth, averaged on the host (models/hivemind.h). */
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

/* Whether a replica under algo runs its passes apart from the others, no
 * barrier across replicas before the synchronisation (DiLoCo's inner
 * steps, hivemind's accumulation: each peer on its own until the group's
 * averaging): DT-FM's barriers are then each replica's own. */
bool spec_dp_algo_apart(spec_dp_algo algo);
/* Whether algo's per-step messages go on the members' send streams,
 * behind their pipeline's last sends (sim/train.c: NCCL's central-ps,
 * ring and hier-ring); sharded-ps sends on no stream, hivemind on its own
 * per pair, DiLoCo's inner steps send nothing. */
bool spec_dp_algo_behind_sends(spec_dp_algo algo);
/* Whether algo forms its groups by matchmaking before each round
 * (hivemind: it takes matchmaking_s and delay_averaging). */
bool spec_dp_algo_matchmakes(spec_dp_algo algo);
/* Whether w averages each step's gradients in the background during the
 * next step (hivemind with delay_averaging). */
bool spec_dp_delayed(const spec_workload *w);

/* Tables. The model and GPU names of a scenario are looked up here, case-
 * insensitively ("gpt3-xl" = "GPT3-XL"; "RTX 3090" = "rtx3090"). NULL when
 * unknown. spec_models/spec_gpus return the static tables and their size. */
const spec_model *spec_model_find(const char *name);

/* The model of s's workload: the dimensions it gave (an object or a
 * config.json: borrowed from s) or its name's row of the table; NULL when
 * the name is unknown. */
const spec_model *spec_scenario_model(const scenario *s);
const spec_gpu *spec_gpu_find(const char *name);
const spec_model *spec_models(int *n);
const spec_gpu *spec_gpus(int *n);

/* The tables' names, ", "-joined, into buf (for messages and help). */
void spec_model_list(char *buf, size_t size);
void spec_gpu_list(char *buf, size_t size);

/* The resolution of a scenario's workload into a spec_workload:
 * spec_workload_resolve (models/spec_workload.h). */

/* Resolves the GPU type of every device of s into gpu[0..ndevices-1]
 * (borrowed pointers into the static table). ERR_UNKNOWN names the site,
 * at the FILE:LINE of its gpu when the file gave it. */
int spec_device_gpus(const scenario *s, const spec_gpu **gpu, err *e);

/* Layers of stage st: w->stage_layers[st] when set, else the even split,
 * floor(L / D_pp) and one more for the first L mod D_pp stages. */
int spec_stage_layers(const spec_workload *w, int st);

/* Parameters of one transformer layer's weight matrices: q and the output
 * projection h x h, k and v h x (kv_heads / heads) h, the MLP's two (gelu)
 * or three (gated) h x ffn: 12 h^2 for GPT at ffn = 4h. */
double spec_layer_matrix_params(const spec_model *m);

/* Parameters of one transformer layer: its matrices, their biases (as the
 * model's bias says: q, k, v h + 2 kv, the output h, the MLP ffn + h or
 * 2 ffn + h) and its two norms (2h each with biases, h without): 12 h^2 +
 * 13 h for GPT; for Llama 2 h^2 + 2 h kv + 3 h ffn + 2 h. */
double spec_layer_params(const spec_model *m);

/* Parameters of the input embedding (tokens, learned positions, token
 * types, and an encoder's LayerNorm) and of the output: the final norm
 * (an encoder's pooler, h^2 + h, instead) and the LM head unless tied to
 * the token embedding. */
double spec_embedding_params(const spec_model *m);
double spec_head_params(const spec_model *m);

/* The model's parameters at its own depth: layers x spec_layer_params
 * plus the embedding's and the head's. */
double spec_model_params(const spec_model *m);

/* What the last stage of w holds besides its layers: spec_head_params,
 * plus a copy of the token embedding when the head is tied to it and the
 * pipeline has more than one stage (Megatron-LM's way: the last stage
 * keeps the matrix, its gradient all-reduced with the first's). */
double spec_stage_head_params(const spec_workload *w);

/* Parameters of stage st: its layers, plus the embeddings on stage 0 and
 * spec_stage_head_params on the last stage, as DT-FM's GPT stages hold
 * them. */
double spec_stage_params(const spec_workload *w, int st);
/* spec_stage_params of stage st if it held `layers` layers. */
double spec_stage_params_with(const spec_workload *w, int st, int layers);

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

/* Forward FLOPs per token of the model at its own depth: (layers
 * F_layer + F_head) / s = 2 N + 4 L s h, N = layers x its matrices + h V
 * (the head's GEMM, tied or not; an encoder's pooler left out). Training
 * without recomputation is 3x (6 N + 12 L h s), with it 4x the layers'. */
double spec_token_flops(const spec_model *m);

/* The N of spec_token_flops: layers x the layer's matrices + h V. */
double spec_token_matrix_params(const spec_model *m);

/* Training FLOPs per token with recomputation: the layers' forward 4x
 * (forward, backward 2x, the forward again), the head's 3x (it is not
 * recomputed). */
double spec_token_flops_recompute(const spec_model *m);

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

/* What one device running stage st with `layers` layers keeps in memory,
 * bytes, as the runtime keeps it (models/runtime.c's row): fp16 / bf16
 * weights and gradients, the optimizer's fp32 master weights and moments
 * when it steps on the GPU (ZeRO-1 shards them over the D_dp replicas,
 * ZeRO-2 the gradients too), the activations kept for backward (with or
 * without recomputation: spec_memory.c) and SPEC_MEMORY_RESERVE_BYTES for
 * the CUDA context and the allocator's fragmentation. total is their
 * sum. */
typedef struct spec_memory {
  double weights, gradients, optimizer, activations, reserve, total;
} spec_memory;
spec_memory spec_stage_memory(const spec_workload *w, int st, int layers);

/* The reserve every device holds back: 2 GB of CUDA context, cuBLAS
 * workspaces, NCCL buffers and caching-allocator fragmentation
 * (spec_memory.c says where the figure comes from). */
#define SPEC_MEMORY_RESERVE_BYTES 2e9

/* spec_stage_memory's total for stage st holding `layers` layers, and for
 * its own layers (spec_stage_layers). */
double spec_stage_memory_with(const spec_workload *w, int st, int layers);
double spec_stage_memory_bytes(const spec_workload *w, int st);

/* The memory of device d of s, whose GPU is g: its site's gpu_memory_gb
 * when set, else the GPU type's. */
double spec_device_memory_bytes(const scenario *s, int d, const spec_gpu *g);

/* Checks that every stage fits in the memory of every device that runs it:
 * device[r][s] of the allocation, given row-major (replicas x stages), and
 * gpu per device from spec_device_gpus. Returns ERR_OK, or ERR_MEMORY
 * naming the device, its site, GPU and memory, the stage and what it
 * needs, part by part (spec_memory_text). */
int spec_check_memory(const spec_workload *w, const scenario *s,
                      const int *device, const spec_gpu *const *gpu, err *e);

/* m in words, into buf: "54.9 GB = weights 6.86 + gradients 6.86 +
 * optimizer 41.2 + activations 1.21 + reserve 3.74 GB". */
void spec_memory_text(const spec_memory *m, char *buf, size_t size);

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
