#!/usr/bin/env python3
"""Alpa's pipeline latency model, for `geodes ... --cost-cmd
analysis/cost_alpa.py`.

Source: L. Zheng, Z. Li, H. Zhang, Y. Zhuang, Z. Chen, Y. Huang, Y. Wang,
Y. Xu, D. Zhuo, E. P. Xing, J. E. Gonzalez, I. Stoica, "Alpa: Automating
Inter- and Intra-Operator Parallelism for Distributed Deep Learning",
OSDI 2022, section 5.1, equation (2): the inter-operator pass chooses the
stages and meshes that minimise the pipeline latency

    T* = sum_{i=1}^{S} t_i + (B - 1) max_{1 <= j <= S} t_j

where t_i is the latency of stage i for one micro-batch (forward and
backward) on its submesh and B the number of micro-batches: the first term
is the first micro-batch's trip through the pipeline, the second the rest,
paced by the slowest stage.

What geodes gives the equation, nothing added: t_i is the forward and
backward compute of stage i for one micro-batch on the slowest device of
its data-parallel group (the header's flops per layer and head, divided by
the device's flops_per_s), B the micro-batches of one pass, and an
iteration is `passes` such pipelines. Alpa's equation has no term for the
activations crossing a stage boundary (its stages sit on meshes joined by
fast links) nor for the once-per-iteration gradient synchronisation, so
this model is compute-only: the opposite blind spot of DT-FM's
communication-only score, which is what makes it worth validating here.
Standard library only; the protocol loop is costcmd_serve.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from costcmd_serve import serve  # noqa: E402


def make_model(header):
    sc, w = header['scenario'], header['workload']
    inv_speed = [1.0 / d['flops_per_s'] for d in sc['devices']]
    S, B, P = w['stages'], w['micro_batches_per_pass'], w['passes']
    layer_fb = w['layer_fwd_flops'] + w['layer_bwd_flops']
    head_fb = w['head_fwd_flops'] + w['head_bwd_flops']

    def predict(cand):
        pipes, layers = cand['pipelines'], cand['layers_per_stage']
        t = []
        for s in range(S):
            flops = layers[s] * layer_fb + (head_fb if s == S - 1 else 0.0)
            t.append(flops * max(inv_speed[p[s]] for p in pipes))
        return P * (sum(t) + (B - 1) * max(t))

    return predict


if __name__ == '__main__':
    serve(make_model)
