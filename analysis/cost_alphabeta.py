#!/usr/bin/env python3
"""A plain alpha-beta cost model of the kind planners use, for
`geodes validate|schedule|sweep --cost-cmd analysis/cost_alphabeta.py`.

For an allocation device[r][s] (pipelines r, stages s), K micro-batches per
pass, P passes, D_pp stages and D_dp replicas:

  compute   c_s = max_r (layers_s (F + B) + [s last] (F_h + B_h)) / speed(device[r][s])
            the forward and backward of one micro-batch on stage s, set by
            its slowest device (F, B, F_h, B_h, speed: the header's
            layer_*_flops, head_*_flops and flops_per_s)
  boundary  x_s = max_r (alpha(d, d') + A / beta(d, d')), d = device[r][s],
            d' = device[r][s+1], A the activation bytes of one micro-batch;
            a micro-batch crosses it twice (activation forward, gradient back)
  pass      (K + D_pp - 1) max(max_s c_s, max_s 2 x_s)
            every micro-batch slot as long as the slowest stage or boundary
            (communication overlaps compute), plus D_pp - 1 slots of bubble
  all-reduce of stage s, ring over its group in replica order:
            2 (D_dp - 1) (max alpha + (G_s / D_dp) / min beta), the ring's
            slowest link, G_s the stage's gradient bytes
  iteration P pass + max_s all-reduce_s

alpha in seconds (latency_ms / 1e3), beta in bytes/s (bandwidth_gbps 1e9 / 8).
No optimizer step, no barriers, no sharing of links or NICs: what the plain
model leaves out is what geodes's simulation has and the validation measures.
Standard library only; the protocol loop is costcmd_serve.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from costcmd_serve import serve  # noqa: E402


def stage_params(w, layers, s):
    """Parameters of stage s holding `layers` layers (embeddings on the
    first stage, the final norm and LM head on the last)."""
    p = layers * w['layer_params']
    if s == 0:
        p += w['embedding_params']
    if s == w['stages'] - 1:
        p += w['head_params']
    return p


def make_model(header):
    sc, w = header['scenario'], header['workload']
    inv_speed = [1.0 / d['flops_per_s'] for d in sc['devices']]
    alpha = [[l / 1e3 for l in row] for row in sc['latency_ms']]
    inv_beta = [[0.0 if b is None else 8.0 / (b * 1e9) for b in row]
                for row in sc['bandwidth_gbps']]
    act = w['activation_bytes']
    hop = [[alpha[a][b] + act * inv_beta[a][b] for b in range(len(alpha))]
           for a in range(len(alpha))]
    S, D = w['stages'], w['replicas']
    K, P = w['micro_batches_per_pass'], w['passes']
    layer_fb = w['layer_fwd_flops'] + w['layer_bwd_flops']
    head_fb = w['head_fwd_flops'] + w['head_bwd_flops']
    gvb = w['gradient_value_bytes']

    def predict(cand):
        cols = list(zip(*cand['pipelines']))
        layers = cand['layers_per_stage']
        slot = sync = 0.0
        for s, col in enumerate(cols):
            flops = layers[s] * layer_fb + (head_fb if s == S - 1 else 0.0)
            c = flops * max(map(inv_speed.__getitem__, col))
            if s < S - 1:
                c = max(c, 2.0 * max([hop[a][b] for a, b in zip(col, cols[s + 1])]))
            if c > slot:
                slot = c
            if D > 1:
                ring = list(zip(col, col[1:] + col[:1]))
                a = max([alpha[x][y] for x, y in ring])
                ib = max([inv_beta[x][y] for x, y in ring])
                g = stage_params(w, layers[s], s) * gvb
                sync = max(sync, 2.0 * (D - 1) * (a + g / D * ib))
        return P * (K + S - 1) * slot + sync

    return predict


if __name__ == '__main__':
    serve(make_model)
