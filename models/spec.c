/* spec: the model and GPU tables and the byte / FLOP counts of a workload.
 * Invariant: the tables are static and read-only; every function here is a
 * pure function of its arguments (see spec.h). Counts are doubles: a 13B
 * model's FLOPs overflow 32-bit integers and the callers divide anyway. */
#include "models/spec.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "models/diloco.h"
#include "models/params.h"
#include "traces/scenario_row.h"

/* GPT-3 shapes from Brown et al. 2020, table 2.1, except: GPT-3 XL runs with
 * 16 heads as DT-FM ran it (the paper lists 24; the head count changes no
 * FLOP or byte count used here), and 13B uses h = 5120 (= 40 heads x 128;
 * the table's 5140 is inconsistent with its own d_head). */
static const spec_model models[] = {
    {.name = "gpt3-small", .layers = 12, .hidden = 768, .heads = 12,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Small, 125M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-medium", .layers = 24, .hidden = 1024, .heads = 16,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Medium, 350M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-large", .layers = 24, .hidden = 1536, .heads = 16,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 Large, 760M (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-xl", .layers = 24, .hidden = 2048, .heads = 16, .seq = 2048,
     .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 XL (Brown et al. 2020), 16 heads as in DT-FM's runs"},
    {.name = "gpt3-2.7b", .layers = 32, .hidden = 2560, .heads = 32,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 2.7B (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-6.7b", .layers = 32, .hidden = 4096, .heads = 32,
     .seq = 2048, .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 6.7B (Brown et al. 2020, table 2.1)"},
    {.name = "gpt3-13b", .layers = 40, .hidden = 5120, .heads = 40, .seq = 2048,
     .vocab = 50257, .value_bytes = 2,
     .source = "GPT-3 13B (Brown et al. 2020, table 2.1; h = 40 x 128)"},
    /* Llama-architecture models, after GPT's (issue 12). */
    {.name = "intellect-1", .layers = 42, .hidden = 4096, .heads = 32,
     .seq = 8192, .vocab = 128256, .value_bytes = 2,
     .source = "INTELLECT-1, 10B (PrimeIntellect-ai/prime, llama3_configs['10B']: "
               "dim 4096, 42 layers, 32 heads, 8 kv heads, ffn_dim_multiplier 1.3, "
               "multiple_of 1024 -> 14336; seq_length 8192 in configs/10B; Llama-3 "
               "vocabulary 128256)",
     .arch = SPEC_ARCH_LLAMA, .ffn = 14336, .kv_heads = 8},
};

/* The GPU table: datasheet figures only. peak_flops is the dense fp16
 * tensor-core rate with fp32 accumulate, what mixed-precision training runs
 * at (without the 2:4 sparsity doubling the datasheets headline); GeForce
 * cards run fp32 accumulate at half their fp16-accumulate rate and their
 * whitepapers list both, datacentre and workstation parts run it at full
 * rate. mem_bw_bytes_s is the datasheet's memory bandwidth. How fast a
 * workload runs follows from these two numbers and the two efficiencies
 * fitted on the V100 (models/roofline.h); only the V100 was measured, every
 * other row is extrapolated from its datasheet (models/MODELS.md). */
static const spec_gpu gpus[] = {
    {.name = "V100", .peak_flops = 125e12, .memory_bytes = 16e9,
     .mem_bw_bytes_s = 900e9,
     .source = "NVIDIA Tesla V100 datasheet (SXM2): 125 TFLOP/s tensor "
               "(mixed precision: fp16 multiply, fp32 accumulate), 16 GB "
               "HBM2 (p3 instances), 900 GB/s",
     .board_w = 300,
     .power_source = "NVIDIA Tesla V100 datasheet: max power consumption 300 W "
                     "(SXM2; 250 W PCIe)"},
    {.name = "A100", .peak_flops = 312e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 2039e9,
     .source = "NVIDIA A100 datasheet, 80GB SXM: 312 TFLOP/s fp16 / bf16 "
               "tensor dense (624 with sparsity), 2039 GB/s HBM2e",
     .board_w = 400,
     .power_source = "NVIDIA A100 datasheet: max thermal design power 400 W "
                     "(80GB SXM; 300 W PCIe)"},
    {.name = "H100", .peak_flops = 989e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 3350e9,
     .source = "NVIDIA H100 datasheet, SXM5: 1979 TFLOP/s fp16 / bf16 tensor "
               "with sparsity, 989 dense; 80 GB HBM3, 3.35 TB/s",
     .board_w = 700,
     .power_source = "NVIDIA H100 datasheet: max thermal design power up to 700 "
                     "W (SXM, configurable)"},
    {.name = "RTX3090", .peak_flops = 71e12, .memory_bytes = 24e9,
     .mem_bw_bytes_s = 936e9,
     .source = "NVIDIA Ampere GA102 whitepaper, GeForce RTX 3090: 71 TFLOP/s "
               "peak fp16 tensor with fp32 accumulate dense (142 with fp16 "
               "accumulate), 24 GB GDDR6X, 936 GB/s",
     .board_w = 350,
     .power_source = "NVIDIA GeForce RTX 3090 specifications: total graphics "
                     "power 350 W"},
    {.name = "RTX4090", .peak_flops = 165.2e12, .memory_bytes = 24e9,
     .mem_bw_bytes_s = 1008e9,
     .source = "NVIDIA Ada Lovelace AD102 whitepaper, GeForce RTX 4090: 165.2 "
               "TFLOP/s peak fp16 tensor with fp32 accumulate dense (330.3 "
               "with fp16 accumulate), 24 GB GDDR6X, 1008 GB/s",
     .board_w = 450,
     .power_source = "NVIDIA Ada Lovelace AD102 whitepaper, GeForce RTX 4090: "
                     "total graphics power 450 W"},
    {.name = "T4", .peak_flops = 65e12, .memory_bytes = 16e9,
     .mem_bw_bytes_s = 320e9,
     .source = "NVIDIA T4 datasheet: 65 TFLOP/s mixed-precision (fp16 / fp32) "
               "tensor, 16 GB GDDR6, 320 GB/s",
     .board_w = 70,
     .power_source = "NVIDIA T4 datasheet: max power 70 W"},
    /* A whole node as one device, for runs whose replica is a node under
     * FSDP (INTELLECT-1's, issue 12): geodes does not split its work over
     * the 8 GPUs of NVLink, it counts their sums. */
    {.name = "HGX-H100", .peak_flops = 8 * 989e12, .memory_bytes = 8 * 80e9,
     .mem_bw_bytes_s = 8 * 3350e9,
     .source = "NVIDIA HGX H100 8-GPU: 8 H100 SXM5 (989 TFLOP/s dense fp16, "
               "80 GB, 3.35 TB/s each) with NVLink, counted as one device",
     .board_w = 5600,
     .power_source = "NVIDIA H100 datasheet: 700 W per SXM5 GPU, 8 GPUs (the "
                     "GPUs only: not the node's CPUs, NVSwitches or fans)"},
    /* issue 11: more datacentre and AMD GPUs, from their datasheets */
    {.name = "A10G", .peak_flops = 70e12, .memory_bytes = 24e9,
     .mem_bw_bytes_s = 600e9,
     .source = "AWS G5's A10G (NVIDIA publishes no datasheet): 70 TFLOP/s "
               "fp16 tensor, 24 GB GDDR6, 600 GB/s (Baseten, 'NVIDIA A10 vs "
               "A10G for ML model inference'); = 80 SMs x 4 tensor cores x "
               "1.71 GHz at GA102's half rate with fp32 accumulate",
     .board_w = 0,
     .power_source = "AWS and NVIDIA state no power for the A10G"},
    {.name = "A40", .peak_flops = 149.7e12, .memory_bytes = 48e9,
     .mem_bw_bytes_s = 696e9,
     .source = "NVIDIA A40 datasheet: 149.7 TFLOP/s fp16 / bf16 tensor with "
               "fp32 accumulate (299.4 with sparsity), 48 GB GDDR6, 696 GB/s",
     .board_w = 300,
     .power_source = "NVIDIA A40 datasheet: max power consumption 300 W"},
    {.name = "L4", .peak_flops = 121e12, .memory_bytes = 24e9,
     .mem_bw_bytes_s = 300e9,
     .source = "NVIDIA L4 datasheet: 242 TFLOP/s fp16 tensor with sparsity, "
               "121 dense; 24 GB GDDR6, 300 GB/s",
     .board_w = 72,
     .power_source = "NVIDIA L4 datasheet: max thermal design power 72 W"},
    {.name = "L40S", .peak_flops = 362.05e12, .memory_bytes = 48e9,
     .mem_bw_bytes_s = 864e9,
     .source = "NVIDIA L40S datasheet: 362.05 TFLOP/s fp16 / bf16 tensor "
               "(733 with sparsity), 48 GB GDDR6, 864 GB/s",
     .board_w = 350,
     .power_source = "NVIDIA L40S datasheet: max power consumption 350 W"},
    {.name = "H200", .peak_flops = 989e12, .memory_bytes = 141e9,
     .mem_bw_bytes_s = 4800e9,
     .source = "NVIDIA H200 SXM datasheet: 1979 TFLOP/s fp16 tensor with "
               "sparsity, 989 dense (H100's compute); 141 GB HBM3e, 4.8 TB/s",
     .board_w = 700,
     .power_source = "NVIDIA H200 datasheet: max thermal design power up to 700 "
                     "W (SXM, configurable)"},
    {.name = "MI250", .peak_flops = 362.1e12, .memory_bytes = 128e9,
     .mem_bw_bytes_s = 3276.8e9,
     .source = "AMD Instinct MI250 specifications: 362.1 TFLOP/s peak fp16 "
               "matrix, 128 GB HBM2e, 3.2768 TB/s (one OAM module of two "
               "GCDs, here one device)",
     .board_w = 500,
     .power_source = "AMD Instinct MI250 specifications: typical board power 500 "
                     "W (560 W peak)"},
    {.name = "MI300X", .peak_flops = 1307.4e12, .memory_bytes = 192e9,
     .mem_bw_bytes_s = 5300e9,
     .source = "AMD Instinct MI300X data sheet: 1307.4 TFLOP/s peak fp16 "
               "matrix (2614.9 with sparsity), 192 GB HBM3, 5.3 TB/s",
     .board_w = 750,
     .power_source = "AMD Instinct MI300X data sheet: peak board power 750 W"},
};

#define NMODELS ((int)(sizeof models / sizeof *models))
#define NGPUS ((int)(sizeof gpus / sizeof *gpus))

/* Case-insensitive equality ignoring spaces, '-' and '_' in the GPU names
 * only where asked: "RTX 3090" = "rtx3090", "gpt3-xl" = "GPT3-XL". */
static bool same_name(const char *a, const char *b, bool loose) {
  for (;;) {
    if (loose) {
      while (*a == ' ' || *a == '-' || *a == '_') a++;
      while (*b == ' ' || *b == '-' || *b == '_') b++;
    }
    if (!*a || !*b) return !*a && !*b;
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    a++, b++;
  }
}

const spec_model *spec_model_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NMODELS; i++)
    if (same_name(name, models[i].name, false)) return &models[i];
  return NULL;
}

const spec_gpu *spec_gpu_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NGPUS; i++)
    if (same_name(name, gpus[i].name, true)) return &gpus[i];
  return NULL;
}

const spec_model *spec_models(int *n) {
  *n = NMODELS;
  return models;
}

const spec_gpu *spec_gpus(int *n) {
  *n = NGPUS;
  return gpus;
}

#define SPEC_ARCH_NAME_(id, name) name,
const char *const spec_arch_names[] = {SPEC_ARCH_MAP(SPEC_ARCH_NAME_) NULL};
#undef SPEC_ARCH_NAME_

const char *spec_schedule_name(spec_schedule s) {
  return workload_schedules[s];
}

const char *spec_dp_algo_name(spec_dp_algo a) { return workload_dp_algos[a]; }

const char *spec_runtime_name(spec_runtime r) { return workload_runtimes[r]; }

int spec_schedule_parse(const char *name) {
  return name ? names_find(workload_schedules, name) : 0;
}

int spec_dp_algo_parse(const char *name) {
  return name ? names_find(workload_dp_algos, name) : 0;
}

int spec_runtime_parse(const char *name) {
  return name ? names_find(workload_runtimes, name) : 0;
}

/* "'x' is unknown (a, b, c)" for a workload name (row r) no list holds. */
static int unknown_name(const scenario *s, int r, const char *v, err *e) {
  char known[128];
  names_join(workload_rows[r].names, ", ", ", ", known, sizeof known);
  return err_set_field(e, r, ERR_UNKNOWN, "%s: workload.%s '%s' is unknown "
                       "(%s)", s->name, workload_rows[r].key, v, known);
}

/* The names of a table, ", "-joined, into buf. */
static void name_list(bool models_table, char *buf, size_t size) {
  buf[0] = '\0';
  int n = models_table ? NMODELS : NGPUS;
  for (int i = 0; i < n; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
             models_table ? models[i].name : gpus[i].name);
}

void spec_model_list(char *buf, size_t size) { name_list(true, buf, size); }
void spec_gpu_list(char *buf, size_t size) { name_list(false, buf, size); }

static int resolve_names(const scenario *s, spec_workload *w, err *e) {
  const scenario_workload *sw = &s->workload;
  w->model = spec_model_find(sw->model);
  if (!w->model) {
    char where[512], known[256];
    scenario_where(s, s->line[WORKLOAD_model], "workload.model", where,
                   sizeof where);
    spec_model_list(known, sizeof known);
    return err_set_field(e, WORKLOAD_model, ERR_UNKNOWN, "%s: '%s' is unknown "
                         "(known: %s)", where, sw->model ? sw->model : "",
                         known);
  }
  int sched = spec_schedule_parse(sw->schedule);
  int algo = spec_dp_algo_parse(sw->dp_algo);
  int rt = spec_runtime_parse(sw->runtime);
  if (sched < 0) return unknown_name(s, WORKLOAD_schedule, sw->schedule, e);
  if (algo < 0) return unknown_name(s, WORKLOAD_dp_algo, sw->dp_algo, e);
  if (rt < 0) return unknown_name(s, WORKLOAD_runtime, sw->runtime, e);
  w->schedule = (spec_schedule)sched;
  w->dp_algo = (spec_dp_algo)algo;
  w->runtime = (spec_runtime)rt;
  switch (w->runtime) {
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON:
      /* Megatron-LM runs 1F1B and synchronises with NCCL all-reduce
       * (DiLoCo under it is refused below). */
      if (!spec_is_diloco(w)) w->schedule = SPEC_1F1B, w->dp_algo = SPEC_RING;
      break;
  }
  return ERR_OK;
}

bool spec_is_diloco(const spec_workload *w) {
  return spec_dp_algo_outer(w->dp_algo);
}

bool spec_dp_algo_outer(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING: return false;
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_algo_streams(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING:
    case SPEC_DILOCO: return false;
    case SPEC_STREAMING_DILOCO: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

/* Where row r's value came from, for a message: the option that set it
 * (line SCENARIO_LINE_KNOB), its key at its line in the file, or its key
 * with "(default)" when the file leaves it out. where names it so
 * ("worldwide: --dp-algo", "s.json:7: workload.dp_algo"); lead begins a
 * message, as jfield's do ("s.json:7: workload.dp_algo:"); name is the
 * short form for the middle of a sentence. */
typedef struct named {
  char where[320], lead[328], name[64];
  int row;
  bool knob;
} named;

static named name_of(const scenario *s, int r) {
  const workload_row *row = &workload_rows[r];
  int line = s->line[r];
  named n = {.row = r, .knob = line == SCENARIO_LINE_KNOB};
  if (n.knob) {
    snprintf(n.where, sizeof n.where, "%s: --%s", s->name, row->option);
    snprintf(n.lead, sizeof n.lead, "%s", n.where);
    snprintf(n.name, sizeof n.name, "--%s", row->option);
    return n;
  }
  char path[48];
  snprintf(path, sizeof path, "workload.%s%s", row->key,
           line > 0 ? "" : " (default)");
  scenario_where(s, line, path, n.where, sizeof n.where);
  snprintf(n.lead, sizeof n.lead, "%s:", n.where);
  snprintf(n.name, sizeof n.name, "workload.%s", row->key);
  return n;
}

/* The row a failure about a and b names: a's, unless b's alone came from
 * a knob (the value the user just gave is the one to change). */
static int blame(const named *a, const named *b) {
  return a->knob || !b->knob ? a->row : b->row;
}

/* DiLoCo's knobs (models/diloco.h's rows) against the algorithm, the
 * runtime and the layers, each named where it came from (an option, or
 * the scenario file's line). */
static int check_diloco(const scenario *s, const spec_workload *w, err *e) {
  named d[DILOCO_NROWS], A = name_of(s, WORKLOAD_dp_algo),
                         R = name_of(s, WORKLOAD_runtime);
  for (int i = 0; i < DILOCO_NROWS; i++) d[i] = name_of(s, diloco_rows[i]);
  const char *algo = workload_dp_algos[w->dp_algo];
  if (!spec_is_diloco(w)) {
    for (int i = 0; i < DILOCO_NROWS; i++)
      if (!scenario_row_is_default(s, diloco_rows[i]))
        return err_set_field(e, blame(&d[i], &A), ERR_CONFIG, "%s needs "
                             "diloco or streaming-diloco as the data-parallel "
                             "algorithm, not %s (%s)", d[i].lead, algo,
                             A.where);
    return ERR_OK;
  }
  switch (w->runtime) {
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON:
      if (w->stages > 1)
        return err_set_field(e, blame(&A, &R), ERR_CONFIG, "%s %s on %s "
                             "megatron needs one stage per replica (a replica "
                             "on one device, stepping Adam on its GPU; "
                             "Megatron's pipelines all-reduce every step)",
                             A.lead, algo, R.name);
      break;
  }
  for (int i = 1; !spec_dp_algo_streams(w->dp_algo) && i <= 2; i++) /* F, tau */
    if (!scenario_row_is_default(s, diloco_rows[i]))
      return err_set_field(e, blame(&d[i], &A), ERR_CONFIG, "%s needs %s "
                           "streaming-diloco (diloco exchanges the whole "
                           "model, blocking)", d[i].lead, A.name);
  diloco_plan p = diloco_plan_of(w);
  diloco_names n;
  for (int i = 0; i < 3; i++)
    n.lead[i] = d[i].lead, n.name[i] = d[i].name, n.field[i] = d[i].row,
    n.knob[i] = d[i].knob;
  return diloco_check(&p, w->layers, &n, e);
}

/* Whether runtime rt runs all of a replica's micro-batches in one pass,
 * whatever micro_batches_per_pass says (Megatron: one 1F1B schedule). */
static bool one_pass(spec_runtime rt) {
  switch (rt) {
    case SPEC_RUNTIME_DTFM: return false;
    case SPEC_RUNTIME_MEGATRON: return true;
  }
  assert(!"unknown runtime");
  return false;
}

/* The scenario's layers per stage (a knob checked their count and zeros)
 * against the layers resolved here, which may be the model's depth. */
static int resolve_layers_per_stage(const scenario *s, spec_workload *w,
                                    err *e) {
  const scenario_workload *sw = &s->workload;
  w->balanced = sw->balanced_layers;
  if (!sw->layers_per_stage) return ERR_OK;
  long sum = 0;
  for (int st = 0; st < w->stages; st++) sum += sw->layers_per_stage[st];
  if (sum != w->layers)
    return err_set(e, ERR_CONFIG, "%s: layers per stage: they sum to %ld, "
                   "not the %d layers", s->name, sum, w->layers);
  w->stage_layers = sw->layers_per_stage;
  return ERR_OK;
}

int spec_workload_resolve(const scenario *s, spec_workload *w, err *e) {
  const scenario_workload *sw = &s->workload;
  *w = (spec_workload){0};
  int rc = resolve_names(s, w, e);
  if (rc) return rc;
  if (sw->stages < 1 || sw->replicas < 1 || sw->micro_batch < 1 ||
      sw->batch < 1 || sw->micro_batches_per_pass < 0)
    return err_set(e, ERR_CONFIG,
                   "%s: workload.stages, replicas, micro_batch and batch must "
                   "be >= 1 (got %d, %d, %d, %d)",
                   s->name, sw->stages, sw->replicas, sw->micro_batch,
                   sw->batch);
  if ((long)sw->stages * sw->replicas != s->ndevices)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG,
                         "%s: workload.stages x workload.replicas = %d x %d "
                         "is not the %d devices",
                         s->name, sw->stages, sw->replicas, s->ndevices);
  w->layers = sw->layers > 0 ? sw->layers : w->model->layers;
  if (w->layers < sw->stages) {
    char where[512];
    scenario_where(s, s->line[WORKLOAD_layers], "workload.layers", where,
                   sizeof where);
    return err_set_field(e, WORKLOAD_layers, ERR_CONFIG, "%s: %d%s is fewer "
                         "than the %d stages", where, w->layers,
                         sw->layers > 0 ? "" : " (the model's own depth)",
                         sw->stages);
  }
  long long per_replica = sw->batch / sw->replicas;
  long long k = sw->micro_batches_per_pass > 0 && !one_pass(w->runtime)
                    ? sw->micro_batches_per_pass
                    : per_replica / sw->micro_batch;
  /* Each factor is at most INT_MAX: D_dp m <= 2^62, and (D_dp m) K is only
   * formed once D_dp m <= B, so nothing overflows. */
  long long rm = (long long)sw->replicas * sw->micro_batch;
  long long per_pass = k >= 1 && rm <= sw->batch ? rm * k : 0;
  if (per_pass < 1 || per_pass > sw->batch || sw->batch % per_pass != 0)
    return err_set(e, ERR_CONFIG,
                   "%s: workload.batch %d is not a multiple of D_dp x m x K "
                   "= %d x %d x %lld",
                   s->name, sw->batch, sw->replicas, sw->micro_batch, k);
  w->batch = sw->batch;
  w->micro_batch = sw->micro_batch;
  w->stages = sw->stages;
  w->replicas = sw->replicas;
  w->micro_batches_per_pass = (int)k;
  w->passes = (int)(sw->batch / per_pass);
  w->recompute = sw->recompute;
  w->given = *sw;
  rc = check_diloco(s, w, e);
  return rc ? rc : resolve_layers_per_stage(s, w, e);
}

int spec_device_gpus(const scenario *s, const spec_gpu **gpu, err *e) {
  for (int d = 0; d < s->ndevices; d++) {
    const scenario_site *site = &s->sites[s->device_site[d]];
    gpu[d] = spec_gpu_find(site->gpu);
    if (!gpu[d]) {
      char key[64], where[512], known[256];
      snprintf(key, sizeof key, "sites[%d].gpu", s->device_site[d]);
      scenario_where(s, site->gpu_line, key, where, sizeof where);
      spec_gpu_list(known, sizeof known);
      return err_set(e, ERR_UNKNOWN, "%s: '%s' is unknown (site '%s'; "
                     "known: %s)", where, site->gpu ? site->gpu : "",
                     site->name, known);
    }
  }
  return ERR_OK;
}

/* A site's compute_efficiency is a factor on its GPUs' speed as the
 * roofline gives it (models/roofline.h): e = 0.5 computes twice as long.
 * The built-in p3.2xlarge sites carry 0.43 / 0.5656: their V100 reached
 * 0.43 of its peak at DT-FM's shape, where the roofline gives it 0.5656
 * (traces/gen/gen_builtins.py; test_roofline.c holds the two agreed). The
 * site_compute_efficiency parameter (models/params.h), when set, replaces
 * every site's. */
double spec_site_compute_factor(const scenario_site *site, const spec_gpu *g) {
  (void)g; /* a factor on g's speed, whatever that is */
  double e = params_get(PARAMS_SITE_COMPUTE_EFFICIENCY) > 0
                 ? params_get(PARAMS_SITE_COMPUTE_EFFICIENCY)
                 : site->compute_efficiency;
  return e > 0 ? 1 / e : 1;
}

int spec_stage_layers(const spec_workload *w, int st) {
  if (w->stage_layers) return w->stage_layers[st];
  return w->layers / w->stages + (st < w->layers % w->stages ? 1 : 0);
}

/* The parameters of a layer's weight matrices: Q and O h x h, K and V
 * h x (kv_heads / heads) h, the MLP two (GPT) or three (gated) h x ffn. */
static double matrix_params(const spec_model *m) {
  double h = m->hidden, ffn = m->ffn > 0 ? m->ffn : 4.0 * h;
  double kv = m->kv_heads > 0 ? h * m->kv_heads / m->heads : h;
  double mlp = 2.0;
  switch (m->arch) {
    case SPEC_ARCH_GPT: mlp = 2.0; break;
    case SPEC_ARCH_LLAMA: mlp = 3.0; break;
  }
  return 2.0 * h * h + 2.0 * h * kv + mlp * h * ffn;
}

double spec_layer_params(const spec_model *m) {
  double h = m->hidden, ffn = m->ffn > 0 ? m->ffn : 4.0 * h;
  switch (m->arch) {
    case SPEC_ARCH_GPT: /* QKV and output biases 4h, MLP biases ffn + h, two
                           layer norms 4h: 12h^2 + 13h at ffn = 4h */
      return matrix_params(m) + 4.0 * h + ffn + h + 4.0 * h;
    case SPEC_ARCH_LLAMA: /* two RMSNorm weights, no biases */
      return matrix_params(m) + 2.0 * h;
  }
  assert(!"unknown architecture");
  return 0;
}

double spec_embedding_params(const spec_model *m) {
  double pos = 0; /* learned position embeddings */
  switch (m->arch) {
    case SPEC_ARCH_GPT: pos = m->seq; break;
    case SPEC_ARCH_LLAMA: pos = 0; break; /* rotary: none */
  }
  return ((double)m->vocab + pos) * m->hidden;
}

double spec_head_params(const spec_model *m) {
  double norm = 2.0; /* the final norm's weights (and bias) */
  switch (m->arch) {
    case SPEC_ARCH_GPT: norm = 2.0; break;
    case SPEC_ARCH_LLAMA: norm = 1.0; break;
  }
  return norm * m->hidden + (double)m->hidden * m->vocab;
}

/* Parameters of stage st holding `layers` layers. */
static double params_with(const spec_workload *w, int st, int layers) {
  const spec_model *m = w->model;
  double p = layers * spec_layer_params(m);
  if (st == 0) p += spec_embedding_params(m);
  if (st == w->stages - 1) p += spec_head_params(m);
  return p;
}

double spec_stage_params(const spec_workload *w, int st) {
  return params_with(w, st, spec_stage_layers(w, st));
}

double spec_stage_gradient_bytes(const spec_workload *w, int st) {
  return spec_stage_params(w, st) * w->model->value_bytes;
}

double spec_activation_bytes(const spec_workload *w) {
  const spec_model *m = w->model;
  return (double)w->micro_batch * m->seq * m->hidden * m->value_bytes;
}

double spec_layer_flops(const spec_model *m) {
  double s = m->seq, h = m->hidden;
  return 2.0 * s * matrix_params(m) + 4.0 * s * s * h;
}

double spec_head_flops(const spec_model *m) {
  return 2.0 * m->seq * m->hidden * m->vocab;
}

/* The layers' share, then the head's on the last stage: the head is not
 * recomputed (activation checkpointing covers the transformer blocks). */
static double layers_fwd_flops(const spec_workload *w, int st) {
  return (double)spec_stage_layers(w, st) * w->micro_batch *
         spec_layer_flops(w->model);
}

static double head_fwd_flops(const spec_workload *w, int st) {
  return st == w->stages - 1 ? w->micro_batch * spec_head_flops(w->model) : 0;
}

double spec_stage_fwd_flops(const spec_workload *w, int st) {
  return layers_fwd_flops(w, st) + head_fwd_flops(w, st);
}

double spec_stage_bwd_flops(const spec_workload *w, int st) {
  return (w->recompute ? 3.0 : 2.0) * layers_fwd_flops(w, st) +
         2.0 * head_fwd_flops(w, st);
}

double spec_state_bytes_per_param(spec_runtime rt) {
  switch (rt) {
    case SPEC_RUNTIME_DTFM: return 4.0;
    case SPEC_RUNTIME_MEGATRON: return 16.0;
  }
  assert(!"unknown runtime");
  return 4.0;
}

/* Activations kept for backward. With recomputation only each layer's
 * input (m s h bytes) is kept per in-flight micro-batch, plus one layer's
 * full working set while it is recomputed; without it every layer keeps
 * its full set, s h (34 + 5 a s / h) bytes per sequence for fp16
 * (Korthikanti et al. 2022, eq. 1). In flight: all K micro-batches of a
 * pass under GPipe; under 1F1B stage st holds at most D_pp - st (Narayanan
 * et al. SC'21, section 2.2: the first stage warms up with D_pp). */
double spec_stage_memory_with(const spec_workload *w, int st, int layers) {
  const spec_model *m = w->model;
  double s = m->seq, h = m->hidden, a = m->heads, mb = w->micro_batch;
  double full_layer = mb * s * h * (34.0 + 5.0 * a * s / h);
  double input = mb * s * h * m->value_bytes;
  double in_flight = w->micro_batches_per_pass;
  switch (w->schedule) {
    case SPEC_GPIPE: break;
    case SPEC_1F1B: in_flight = fmin(w->stages - st, in_flight); break;
  }
  double act = w->recompute ? in_flight * layers * input + full_layer
                            : in_flight * layers * full_layer;
  return spec_state_bytes_per_param(w->runtime) * params_with(w, st, layers) +
         act;
}

double spec_stage_memory_bytes(const spec_workload *w, int st) {
  return spec_stage_memory_with(w, st, spec_stage_layers(w, st));
}

int spec_check_memory(const spec_workload *w, const scenario *s,
                      const int *device, const spec_gpu *const *gpu, err *e) {
  for (int r = 0; r < w->replicas; r++)
    for (int st = 0; st < w->stages; st++) {
      int d = device[r * w->stages + st];
      double need = spec_stage_memory_bytes(w, st);
      if (need > gpu[d]->memory_bytes)
        return err_set(e, ERR_MEMORY,
                       "%s: stage %d (%d layers) needs %.2f GB but device %d "
                       "(%s) has %.2f GB",
                       s->name, st, spec_stage_layers(w, st), need / 1e9, d,
                       gpu[d]->name, gpu[d]->memory_bytes / 1e9);
    }
  return ERR_OK;
}

double spec_default_activation_gb(const spec_workload *w) {
  const spec_model *m = w->model;
  return (double)w->batch / w->replicas * m->seq * m->hidden *
         m->value_bytes / 1e9;
}

double spec_default_gradient_gb(const spec_workload *w) {
  double most = 0;
  for (int st = 0; st < w->stages; st++)
    most = fmax(most, spec_stage_gradient_bytes(w, st));
  return most / 1e9;
}
