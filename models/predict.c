/* predict: one iteration of DT-FM's runtime in closed form.
 * Invariant: pure functions of their arguments; the only memory is a few
 * per-call arrays of D_pp or D_dp entries, freed before return.
 *
 * The model, per GPipe pass (K micro-batches) and replica r, with f_s and
 * b_s the forward and backward compute of stage s on its device, and for
 * boundary s -> s+1 the one-way latency a_s and the transfer time x_s =
 * activation bytes / bandwidth (backward: the reverse link, a'_s, x'_s):
 *   forward phase  F_r = sum_s f_s + sum_s (a_s + x_s)
 *                        + (K - 1) max(max_s f_s, max_s x_s)
 * i.e. the first micro-batch crosses the whole pipeline, then one leaves
 * every period, the period being the slowest stream: a compute stream or a
 * send stream (latency overlaps the next transfer, DESIGN.md section 4).
 * The backward phase B_r is the same with b, a', x'. DT-FM puts a barrier
 * between the phases, so a pass takes max_r F_r + max_r B_r (1F1B: no
 * barrier, max_r (F_r + B_r)). Reported terms (they sum to the pass):
 *   compute   K (max f + max b) of the slowest replica's slowest stages
 *   bubble    (sum f - max f) + (sum b - max b): (D_pp - 1) slots when the
 *             stages are equal, the (M + D_pp - 1)-slot GPipe bubble
 *   pp_comm   sum (a + x) + (K - 1) max(0, max x - max f), both phases.
 * After the last pass stage s finishes its backward lag_s = sum_{s'<s}
 * (b_s' + a'_s' + x'_s') before stage 0 (backward flows to stage 0; the
 * smallest lag over the group's replicas, the member that ends last), then
 * its group synchronises gradients (sync_s, by the DP algorithm) and steps
 * the optimizer (opt_s); the iteration ends with the last of these:
 *   tail = max_s (sync_s + opt_s - lag_s),
 * reported as dp_sync = tail - opt of the stage attaining it, and
 * optimizer = that opt. Links are taken at t = 0; a cross-site hop is
 * capped by both sites' NIC capacity. What the formula leaves out (flow
 * sharing between a device's flows of one class except in sharded-ps, NIC
 * sharing between an instance's GPUs, TCP) is what the simulator adds. */
#include "models/predict.h"

#include <math.h>
#include <stdlib.h>

#include "traces/mem.h"

/* One hop a -> b: latency in seconds and bandwidth in bytes/s. */
static void hop(const scenario *s, int a, int b, double *lat_s,
                double *bytes_s) {
  trace_value v = scenario_link(s, a, b, 0);
  double gbps = v.bandwidth_gbps;
  int sa = s->device_site[a], sb = s->device_site[b];
  if (sa != sb) {
    if (s->sites[sa].nic_gbps > 0) gbps = fmin(gbps, s->sites[sa].nic_gbps);
    if (s->sites[sb].nic_gbps > 0) gbps = fmin(gbps, s->sites[sb].nic_gbps);
  }
  *lat_s = v.latency_ms / 1e3;
  *bytes_s = gbps * 1e9 / 8.0;
}

double predict_optimizer_s(const spec_gpu *g, double params) {
  return params * PREDICT_OPT_BYTES_PER_PARAM / g->mem_bw_bytes_s;
}

/* A pipelined chain over the group from index start, n - 1 hops around the
 * ring: latencies add up, the slowest hop sets the pace. */
static double chain_s(const scenario *s, const int *group, int n, int start,
                      double bytes) {
  double lat = 0, slowest = INFINITY;
  for (int i = 0; i + 1 < n; i++) {
    double l, bw;
    hop(s, group[(start + i) % n], group[(start + i + 1) % n], &l, &bw);
    lat += l;
    slowest = fmin(slowest, bw);
  }
  return n < 2 ? 0 : lat + bytes / slowest;
}

double predict_ring_op_s(const scenario *s, const int *group, int n,
                         double bytes) {
  return chain_s(s, group, n, 0, bytes);
}

/* sharded-ps, one phase: every member sends bytes/n to every other member
 * at once; flows to destinations of one class (same latency and rate)
 * share that class's rate, as netem shapes them. */
static double sharded_phase_s(const scenario *s, const int *group, int n,
                              double bytes) {
  double worst = 0, piece = bytes / n;
  for (int i = 0; i < n; i++) {
    double member = 0;
    for (int j = 0; j < n; j++) {
      if (j == i) continue;
      double l, bw, l2, bw2;
      hop(s, group[i], group[j], &l, &bw);
      int same = 0;  /* destinations in j's class */
      for (int q = 0; q < n; q++) {
        if (q == i) continue;
        hop(s, group[i], group[q], &l2, &bw2);
        same += l2 == l && bw2 == bw;
      }
      member = fmax(member, l + same * piece / bw);
    }
    worst = fmax(worst, member);
  }
  return worst;
}

double predict_dp_sync_s(const scenario *s, spec_dp_algo algo,
                         const int *group, int n, double bytes) {
  if (n < 2) return 0;
  switch (algo) {
    case SPEC_RING: {
      /* 2 (n - 1) steps of bytes / n over every ring link at once. */
      double step = 0;
      for (int i = 0; i < n; i++) {
        double l, bw;
        hop(s, group[i], group[(i + 1) % n], &l, &bw);
        step = fmax(step, l + bytes / n / bw);
      }
      return 2.0 * (n - 1) * step;
    }
    case SPEC_SHARDED_PS:
      return 2.0 * sharded_phase_s(s, group, n, bytes);
    case SPEC_CENTRAL_PS:
      break;
  }
  /* NCCL reduce to group[0] (ring 1 -> 2 -> ... -> 0), then broadcast
   * from it (0 -> 1 -> ... -> n-1). */
  return chain_s(s, group, n, 1, bytes) + chain_s(s, group, n, 0, bytes);
}

/* One phase of one replica: first item through the pipeline, then one per
 * period. comp[s] per stage; lat/xfer[s] per boundary in flow order. */
typedef struct phase {
  double total, compute, bubble, comm;
} phase;

static phase phase_time(int stages, int k, const double *comp,
                        const double *lat, const double *xfer) {
  double sum = 0, most = 0, comm = 0, xmost = 0;
  for (int st = 0; st < stages; st++) sum += comp[st], most = fmax(most, comp[st]);
  for (int b = 0; b + 1 < stages; b++)
    comm += lat[b] + xfer[b], xmost = fmax(xmost, xfer[b]);
  phase p = {.compute = k * most, .bubble = sum - most,
             .comm = comm + (k - 1) * fmax(0, xmost - most)};
  p.total = p.compute + p.bubble + p.comm;
  return p;
}

int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out) {
  int D = w->stages, R = w->replicas, K = w->micro_batches_per_pass;
  double act = spec_activation_bytes(w);
  double *f = mem_alloc((size_t)D * sizeof *f), *b = mem_alloc((size_t)D * sizeof *b);
  double *lf = mem_alloc((size_t)D * sizeof *lf), *xf = mem_alloc((size_t)D * sizeof *xf);
  double *lb = mem_alloc((size_t)D * sizeof *lb), *xb = mem_alloc((size_t)D * sizeof *xb);
  double *lag = mem_calloc((size_t)D, sizeof *lag);
  phase fw = {0}, bw = {0}, both = {0};
  double fmax_s = 0, bmax_s = 0, cum = 0;
  for (int r = 0; r < R; r++) {
    for (int st = 0; st < D; st++) {
      const spec_gpu *g = gpu[alloc_at(a, r, st)];
      f[st] = spec_compute_s(g, spec_stage_fwd_flops(w, st));
      b[D - 1 - st] = spec_compute_s(g, spec_stage_bwd_flops(w, st));
      if (st + 1 < D) {
        double l, rate;
        hop(s, alloc_at(a, r, st), alloc_at(a, r, st + 1), &l, &rate);
        lf[st] = l, xf[st] = act / rate;
        hop(s, alloc_at(a, r, st + 1), alloc_at(a, r, st), &l, &rate);
        lb[D - 2 - st] = l, xb[D - 2 - st] = act / rate;
      }
    }
    phase pf = phase_time(D, K, f, lf, xf), pb = phase_time(D, K, b, lb, xb);
    if (pf.total > fw.total) fw = pf;
    if (pb.total > bw.total) bw = pb;
    if (pf.total + pb.total > both.total)
      both = (phase){pf.total + pb.total, pf.compute + pb.compute,
                     pf.bubble + pb.bubble, pf.comm + pb.comm};
    /* lag of stage st: backward from st down to 0 (b is in flow order);
     * the group finishes with its last member: the smallest lag. */
    for (int st = 1, i = D - 1; st < D; st++, i--) {
      cum += b[i] + lb[i - 1] + xb[i - 1];
      lag[st] = r == 0 ? cum : fmin(lag[st], cum);
    }
    cum = 0;
    for (int st = 0; st < D; st++) fmax_s = fmax(fmax_s, f[st]), bmax_s = fmax(bmax_s, b[st]);
  }
  phase pass = w->schedule == SPEC_GPIPE
                   ? (phase){fw.total + bw.total, fw.compute + bw.compute,
                             fw.bubble + bw.bubble, fw.comm + bw.comm}
                   : both;
  /* The tail: gradient synchronisation and the optimizer step. */
  int *group = mem_alloc((size_t)R * sizeof *group);
  double tail = -INFINITY, tail_opt = 0;
  for (int st = 0; st < D; st++) {
    double opt = 0;
    for (int r = 0; r < R; r++) {
      group[r] = alloc_at(a, r, st);
      opt = fmax(opt, predict_optimizer_s(gpu[group[r]], spec_stage_params(w, st)));
    }
    double sync = predict_dp_sync_s(s, w->dp_algo, group, R,
                                    spec_stage_gradient_bytes(w, st));
    double t = sync + opt - lag[st];
    if (t > tail) tail = t, tail_opt = opt;
  }
  double dp_sync = fmax(0, tail - tail_opt);
  *out = (predict_result){
      .passes = w->passes, .micro_batches = K, .fwd_s = fmax_s, .bwd_s = bmax_s,
      .compute_s = w->passes * pass.compute, .bubble_s = w->passes * pass.bubble,
      .pp_comm_s = w->passes * pass.comm, .dp_sync_s = dp_sync,
      .optimizer_s = tail - dp_sync};
  out->iteration_s = out->compute_s + out->bubble_s + out->pp_comm_s +
                     out->dp_sync_s + out->optimizer_s;
  free(f), free(b), free(lf), free(xf), free(lb), free(xb), free(lag), free(group);
  return ERR_OK;
}
