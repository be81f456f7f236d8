/* spec_gpu: the GPU table (models/spec.h's spec_gpu_*), datasheet figures
 * only, and its lookup by name.
 * Invariant: the table is static and read-only. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "models/spec.h"

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
    {.name = "V100-16GB", .peak_flops = 125e12, .memory_bytes = 16e9,
     .mem_bw_bytes_s = 900e9,
     .source = "NVIDIA Tesla V100 datasheet, SXM2 16 GB (p3.2xlarge, "
               "p3.8xlarge, p3.16xlarge): 125 TFLOP/s tensor, 16 GB HBM2, "
               "900 GB/s; = V100",
     .board_w = 300,
     .power_source = "NVIDIA Tesla V100 datasheet: max power consumption 300 W "
                     "(SXM2)"},
    {.name = "V100-32GB", .peak_flops = 125e12, .memory_bytes = 32e9,
     .mem_bw_bytes_s = 900e9,
     .source = "NVIDIA Tesla V100 datasheet, SXM2 32 GB (p3dn.24xlarge): 125 "
               "TFLOP/s tensor, 32 GB HBM2, 900 GB/s",
     .board_w = 300,
     .power_source = "NVIDIA Tesla V100 datasheet: max power consumption 300 W "
                     "(SXM2)"},
    {.name = "A100", .peak_flops = 312e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 2039e9,
     .source = "NVIDIA A100 datasheet, 80GB SXM: 312 TFLOP/s fp16 / bf16 "
               "tensor dense (624 with sparsity), 2039 GB/s HBM2e",
     .board_w = 400,
     .power_source = "NVIDIA A100 datasheet: max thermal design power 400 W "
                     "(80GB SXM; 300 W PCIe)"},
    {.name = "A100-40GB", .peak_flops = 312e12, .memory_bytes = 40e9,
     .mem_bw_bytes_s = 1555e9,
     .source = "NVIDIA A100 datasheet, 40GB SXM (p4d.24xlarge, GCP "
               "a2-highgpu): 312 TFLOP/s fp16 / bf16 tensor dense (624 with "
               "sparsity), 40 GB HBM2, 1555 GB/s",
     .board_w = 400,
     .power_source = "NVIDIA A100 datasheet: max thermal design power 400 W "
                     "(40GB SXM)"},
    {.name = "A100-80GB", .peak_flops = 312e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 2039e9,
     .source = "NVIDIA A100 datasheet, 80GB SXM (p4de.24xlarge, GCP "
               "a2-ultragpu): 312 TFLOP/s fp16 / bf16 tensor dense, 80 GB "
               "HBM2e, 2039 GB/s; = A100",
     .board_w = 400,
     .power_source = "NVIDIA A100 datasheet: max thermal design power 400 W "
                     "(80GB SXM)"},
    {.name = "H100", .peak_flops = 989e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 3350e9,
     .source = "NVIDIA H100 datasheet, SXM5: 1979 TFLOP/s fp16 / bf16 tensor "
               "with sparsity, 989 dense; 80 GB HBM3, 3.35 TB/s",
     .board_w = 700,
     .power_source = "NVIDIA H100 datasheet: max thermal design power up to 700 "
                     "W (SXM, configurable)"},
    {.name = "H100-SXM", .peak_flops = 989e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 3350e9,
     .source = "NVIDIA H100 datasheet, H100 SXM (p5.48xlarge): 1979 TFLOP/s "
               "fp16 / bf16 tensor with sparsity, 989 dense; 80 GB HBM3, "
               "3.35 TB/s; = H100",
     .board_w = 700,
     .power_source = "NVIDIA H100 datasheet: max thermal design power up to 700 "
                     "W (SXM, configurable)"},
    {.name = "H100-PCIe", .peak_flops = 756e12, .memory_bytes = 80e9,
     .mem_bw_bytes_s = 2000e9,
     .source = "NVIDIA H100 PCIe datasheet: 1513 TFLOP/s fp16 / bf16 tensor "
               "with sparsity, 756 dense; 80 GB HBM2e, 2 TB/s",
     .board_w = 350,
     .power_source = "NVIDIA H100 PCIe datasheet: max thermal design power "
                     "300-350 W (configurable)"},
    {.name = "H100-NVL", .peak_flops = 835.5e12, .memory_bytes = 94e9,
     .mem_bw_bytes_s = 3900e9,
     .source = "NVIDIA H100 datasheet, H100 NVL: 1671 TFLOP/s fp16 / bf16 "
               "tensor with sparsity, 835.5 dense; 94 GB HBM3, 3.9 TB/s",
     .board_w = 400,
     .power_source = "NVIDIA H100 datasheet, H100 NVL: max thermal design "
                     "power 350-400 W (configurable)"},
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

#define NGPUS ((int)(sizeof gpus / sizeof *gpus))

/* Case-insensitive equality ignoring spaces, '-' and '_': "RTX 3090" =
 * "rtx3090" (the models' names: spec_model.c). */
static bool same_name(const char *a, const char *b) {
  for (;;) {
    while (*a == ' ' || *a == '-' || *a == '_') a++;
    while (*b == ' ' || *b == '-' || *b == '_') b++;
    if (!*a || !*b) return !*a && !*b;
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    a++, b++;
  }
}

const spec_gpu *spec_gpu_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NGPUS; i++)
    if (same_name(name, gpus[i].name)) return &gpus[i];
  return NULL;
}

const spec_gpu *spec_gpus(int *n) {
  *n = NGPUS;
  return gpus;
}

void spec_gpu_list(char *buf, size_t size) {
  buf[0] = '\0';
  for (int i = 0; i < NGPUS; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? ", " : "",
             gpus[i].name);
}
