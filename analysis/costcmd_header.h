/* costcmd_header: what geodes tells a user's cost model before the first
 * candidate (costcmd.h's protocol) — the resolved scenario and workload as
 * one JSON line, so that a model needs no knowledge of geodes's files or
 * of the transformer's formulas:
 *
 *   {"protocol": "geodes-cost-cmd/1",
 *    "scenario": {"name", "seed", "network_model",
 *                 "sites": [{"name", "devices", "gpu", "nic_gbps",
 *                            "nic_shared", "nccl_sockets", "flow_gbps"}],
 *                 "devices": [{"index", "site", "gpu", "peak_flops",
 *                              "efficiency", "flops_per_s",
 *                              "memory_bytes", "nic_gbps"}],
 *                 "latency_ms": [[n x n]], "bandwidth_gbps": [[n x n]]},
 *    "workload": {"model", "layers", "hidden", "heads", "seq", "vocab",
 *                 "value_bytes", "batch", "micro_batch", "stages",
 *                 "replicas", "micro_batches_per_pass", "passes",
 *                 "schedule", "dp_algo", "runtime", "recompute",
 *                 "layer_fwd_flops", "layer_bwd_flops", "head_fwd_flops",
 *                 "head_bwd_flops", "layer_params", "embedding_params",
 *                 "head_params", "activation_bytes", "gradient_value_bytes"},
 *    "cost": {"activation_gb", "gradient_gb"}}
 *
 * Units are in the names (bytes, flops per micro-batch, seconds, ms,
 * Gbit/s); the link matrices hold the links at t = 0 between devices
 * (scenario_link; the diagonal is 0 ms and null). flops_per_s is what the
 * engine computes a layer at: peak x efficiency / the site's compute
 * factor, efficiency being the roofline's fraction of the GPU's peak on
 * this workload's layer (roofline_layer_fraction; it depends on the shape).
 * A candidate's stage st then costs layers_per_stage[st] x layer_*_flops,
 * plus head_*_flops on the last stage, per micro-batch (the head at the
 * layer's rate, an approximation: the engine's roofline times the head
 * apart, about 10 % faster for GPT-3 XL on a V100).
 * Invariant: a pure function of its inputs; key order is fixed. */
#ifndef ANALYSIS_COSTCMD_HEADER_H
#define ANALYSIS_COSTCMD_HEADER_H

#include "analysis/costcmd.h"
#include "models/cost.h"
#include "models/spec.h"
#include "models/transport.h"
#include "traces/scenario.h"

/* The header line for s (workload w resolved from it, gpu per device from
 * spec_device_gpus, cost sizes in GB, the network model simulated), as
 * compact JSON without a newline; malloc'ed, the caller frees it. */
char *costcmd_header_json(const scenario *s, const spec_workload *w,
                          const spec_gpu *const *gpu, double activation_gb,
                          double gradient_gb, transport_model network);

/* Starts cmd (costcmd_start) with the header of s under network, the cost
 * sizes of c (both borrowed). NULL and e filled when the workload, a GPU
 * or the process fails. */
costcmd *costcmd_open(const scenario *s, const cost_ctx *c, const char *cmd,
                      transport_model network, double timeout_s, err *e);

#endif
