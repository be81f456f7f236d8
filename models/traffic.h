/* traffic: the bytes one iteration sends from each device to each other,
 * in closed form, as the engine builds its transfers (sim/train.c,
 * sim/train_sync.c, sim/outer.c): the pipeline's activations and their
 * gradients, each stage's gradient synchronisation by the workload's
 * algorithm (central-ps's reduce and broadcast chains, ring, sharded-ps,
 * hier-ring's three levels), Megatron's tail all-reduces, DiLoCo's outer
 * exchange of every fragment of every stage over its replicas (a ring, or
 * hier-ring's levels) once per H inner steps. What a search needs to price
 * an allocation's egress without simulating it; a test holds it to the
 * simulation's bytes per ordered site pair.
 * Invariant: a pure function of (workload, scenario's device sites,
 * allocation); the sink sees every sending pair's bytes, in a fixed order,
 * and nothing is allocated past a call. */
#ifndef MODELS_TRAFFIC_H
#define MODELS_TRAFFIC_H

#include "models/alloc.h"
#include "models/spec.h"
#include "traces/scenario.h"

/* Where traffic_iteration hands each message class: `bytes` from device
 * src to device dst (src != dst) in one iteration. A pair may come more
 * than once; the sink sums. */
typedef void (*traffic_sink)(void *ctx, int src, int dst, double bytes);

/* Every transfer of one iteration of w (resolved) on s under allocation a
 * (D_dp x D_pp, s's devices), to sink: DiLoCo's per inner step (its
 * pipeline per step, its exchange over H). Sharded-ps, ring and central-ps
 * carry compress_gradient_bytes per stage, the pipeline
 * compress_activation_bytes per micro-batch. */
void traffic_iteration(const spec_workload *w, const scenario *s,
                       const alloc *a, traffic_sink sink, void *ctx);

#endif
