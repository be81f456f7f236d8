/* predict_gap: the names, words and bounds of what the predictor leaves
 * out (predict.h's PREDICT_GAP_MAP), how far links move during an
 * iteration, and the predicates of predict_gap.h.
 * Invariant: pure functions of their arguments. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/predict.h"
#include "models/predict_gap.h"

const char *const predict_gap_names[PREDICT_NGAPS + 1] = {
#define PREDICT_GAP_NAME_(id, name, bound, what) name,
    PREDICT_GAP_MAP(PREDICT_GAP_NAME_)
#undef PREDICT_GAP_NAME_
    NULL};

static const char *const gap_what[PREDICT_NGAPS] = {
#define PREDICT_GAP_WHAT_(id, name, bound, what) what,
    PREDICT_GAP_MAP(PREDICT_GAP_WHAT_)
#undef PREDICT_GAP_WHAT_
};

static const double gap_bound[PREDICT_NGAPS] = {
#define PREDICT_GAP_BOUND_(id, name, bound, what) bound,
    PREDICT_GAP_MAP(PREDICT_GAP_BOUND_)
#undef PREDICT_GAP_BOUND_
};

const char *predict_gap_what(predict_gap g) { return gap_what[g]; }

double predict_gap_bound(predict_gap g) { return gap_bound[g]; }

/* The most a link of s between the sites of a's devices moves (bandwidth
 * or latency, relative to its value at t = 0) during [0, T]. */
double predict_links_drift(const scenario *s, const alloc *a, double T) {
  if (s->network_static || !s->network || !(T > 0)) return 0;
  bool *on = mem_calloc((size_t)s->nsites, sizeof *on);
  for (int i = 0; i < a->replicas * a->stages; i++)
    on[s->device_site[a->device[i]]] = true;
  int64_t end = (int64_t)fmin(T * 1e9, 9e18);
  double most = 0;
  for (int x = 0; x < s->nsites; x++)
    for (int y = 0; y < s->nsites && on[x]; y++) {
      if (!on[y]) continue;
      trace_value v0 = trace_at(s->network, x, y, 0);
      for (int64_t t = trace_next_change(s->network, x, y, 0); t <= end;
           t = trace_next_change(s->network, x, y, t)) {
        trace_value v = trace_at(s->network, x, y, t);
        most = fmax(most, fabs(v.bandwidth_gbps / v0.bandwidth_gbps - 1));
        if (v0.latency_ms > 0)
          most = fmax(most, fabs(v.latency_ms / v0.latency_ms - 1));
      }
    }
  free(on);
  return most;
}


/* Whether NIC nd binds the hop a -> b alone: its capacity is the hop's
 * rate, at either end (hop_nic_bound names one end where both could). */
static bool binds(const hop_net *n, int a, int b, double bytes, int channels,
                  int nd) {
  int r = hop_nic_bound(n, a, b, bytes, channels);
  return r >= 0 && (nd == n->nic[a] || nd == n->nic[b]) &&
         n->cap[nd] == n->cap[r];
}

/* Whether hops x -> y and u -> v (rates alone rx, ru) cross one NIC
 * (out of both senders, into both receivers) or one path that cannot
 * carry both at once. */
static bool hops_crowd(const hop_net *n, int x, int y, double rx, int u,
                       int v, double ru) {
  if (!(rx > 0) || !(ru > 0)) return false;
  double least = INFINITY; /* the least capacity of what they share */
  if (n->nic[x] == n->nic[u] && n->cap[n->nic[x]] > 0) least = n->cap[n->nic[x]];
  if (n->nic[y] == n->nic[v] && n->cap[n->nic[y]] > 0)
    least = fmin(least, n->cap[n->nic[y]]);
  int p = n->path ? scenario_path(n->s, x, y) : -1;
  if (p >= 0 && p == scenario_path(n->s, u, v))
    least = fmin(least, scenario_link(n->s, x, y, 0).bandwidth_gbps * 1e9 / 8);
  return isfinite(least) && rx + ru > least * (1 + 1e-9);
}

/* Whether replica r's activation out of stage st and a gradient of
 * another of its boundaries cross one NIC or path that cannot carry both
 * at once (1F1B sends them at once: two stages behind one NIC). */
static bool boundaries_crowd(const hop_net *n, const alloc *a, int r, int st,
                             double bytes) {
  if (st + 1 >= a->stages) return false;
  int x = alloc_at(a, r, st), y = alloc_at(a, r, st + 1);
  int P = TRANSPORT_P2P_CHANNELS;
  double rx = hop_alone_rate(n, x, y, bytes, P);
  for (int j = 0; j + 1 < a->stages && rx > 0; j++) {
    int u = alloc_at(a, r, j + 1), v = alloc_at(a, r, j);
    if (j != st && hops_crowd(n, x, y, rx, u, v,
                              hop_alone_rate(n, u, v, bytes, P)))
      return true;
  }
  return false;
}

bool predict_gap_two_ways(const hop_net *n, const alloc *a, int r, int st,
                          double bytes) {
  if (boundaries_crowd(n, a, r, st, bytes)) return true;
  if (st == 0 || st + 1 == a->stages) return false;
  int d = alloc_at(a, r, st), nd = n->nic[d], P = TRANSPORT_P2P_CHANNELS;
  int u = alloc_at(a, r, st - 1), v = alloc_at(a, r, st + 1);
  return (binds(n, d, u, bytes, P, nd) && binds(n, d, v, bytes, P, nd)) ||
         (binds(n, u, d, bytes, P, nd) && binds(n, v, d, bytes, P, nd));
}

/* The fastest alone of the pipeline hops of replica r's stage st, out of
 * its device (in false) or into it (in true); 0 when none is wired. */
static double pass_rate(const hop_net *n, const alloc *a, int r, int st,
                        double act, bool in) {
  int d = alloc_at(a, r, st), P = TRANSPORT_P2P_CHANNELS;
  double most = 0;
  for (int k = -1; k <= 1; k += 2) {
    if (st + k < 0 || st + k >= a->stages) continue;
    int e = alloc_at(a, r, st + k);
    most = fmax(most, hop_alone_rate(n, in ? e : d, in ? d : e, act, P));
  }
  return most;
}

/* Whether NIC nd cannot carry a synchronisation hop of rate sync and a
 * pipeline hop of rate pass at their own rates at once. */
static bool crowds(const hop_net *n, int nd, double sync, double pass) {
  return sync > 0 && sync + pass > n->cap[nd] * (1 + 1e-9);
}

/* Whether device e's synchronisation with device d (messages of sync
 * bytes, either way) and d's pipeline hops (the fastest alone: out, in)
 * crowd d's NIC. */
static bool beside(const hop_net *n, int d, int e, double out, double in,
                   double sync) {
  int nd = n->nic[d], C = TRANSPORT_NCCL_RING_CHANNELS;
  if (!(n->cap[nd] > 0)) return false;
  return (out > 0 && crowds(n, nd, hop_alone_rate(n, d, e, sync, C), out)) ||
         (in > 0 && crowds(n, nd, hop_alone_rate(n, e, d, sync, C), in));
}

/* Whether device e's synchronisation with stage st of replica r (either
 * way) and one of that stage's pipeline boundaries cross one path (path
 * shaping) that cannot carry both at their own rates. */
static bool path_beside(const hop_net *n, const alloc *a, int r, int st,
                        int e, double act, double sync) {
  int d = alloc_at(a, r, st), P = TRANSPORT_P2P_CHANNELS;
  int C = TRANSPORT_NCCL_RING_CHANNELS;
  if (!n->path) return false;
  int po = scenario_path(n->s, d, e), pi = scenario_path(n->s, e, d);
  for (int k = -1; k <= 1; k += 2) {
    if (st + k < 0 || st + k >= a->stages) continue;
    int x = alloc_at(a, r, st + k);
    if ((po >= 0 && po == scenario_path(n->s, d, x) &&
         hops_crowd(n, d, e, hop_alone_rate(n, d, e, sync, C), d, x,
                    hop_alone_rate(n, d, x, act, P))) ||
        (pi >= 0 && pi == scenario_path(n->s, x, d) &&
         hops_crowd(n, e, d, hop_alone_rate(n, e, d, sync, C), x, d,
                    hop_alone_rate(n, x, d, act, P))))
      return true;
  }
  return false;
}

bool predict_gap_sync_beside_pass(const hop_net *n, const alloc *a,
                                  double act, double sync) {
  for (int st = 0; st < a->stages && a->stages > 1; st++)
    for (int r = 0; r < a->replicas; r++) {
      int d = alloc_at(a, r, st); /* its pipeline's rates, once for all q */
      double out = pass_rate(n, a, r, st, act, false);
      double in = pass_rate(n, a, r, st, act, true);
      for (int q = 0; q < a->replicas && (out > 0 || in > 0); q++)
        if (q != r && (beside(n, d, alloc_at(a, q, st), out, in, sync) ||
                       path_beside(n, a, r, st, alloc_at(a, q, st), act, sync)))
          return true;
    }
  return false;
}

bool predict_gap_ends_beside_pass(const hop_net *n, const alloc *a,
                                  double act, double emb) {
  int D = a->stages;
  for (int r = 0; r < a->replicas && D > 1; r++) {
    int u = alloc_at(a, r, 0), v = alloc_at(a, r, D - 1);
    if (beside(n, u, v, pass_rate(n, a, r, 0, act, false),
               pass_rate(n, a, r, 0, act, true), emb) ||
        beside(n, v, u, pass_rate(n, a, r, D - 1, act, false),
               pass_rate(n, a, r, D - 1, act, true), emb))
      return true;
  }
  return false;
}
