/* train_sync: the data-parallel collectives of sim/train.h as task-graph
 * builders (NCCL's chains and ring, hier-ring's two levels) and the bounds
 * on the tasks an iteration adds, which the size check reads before a
 * build. Invariant: each builder adds only transfers and joins of its
 * members, each send ordered on its member's send stream, and no more
 * tasks than its bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/compress.h"
#include "sim/train.h"

/* One NCCL chain operation's chunks: bytes in TRANSPORT_NCCL_CHUNK_BYTES,
 * at most TRANSPORT_NCCL_MAX_CHUNKS. */
static int chain_chunks(double bytes) {
  int C = (int)ceil(bytes / TRANSPORT_NCCL_CHUNK_BYTES);
  if (C > TRANSPORT_NCCL_MAX_CHUNKS) C = TRANSPORT_NCCL_MAX_CHUNKS;
  return C < 1 ? 1 : C;
}

/* NCCL's ring reduce of bytes over the k members of grp to grp[0], in C
 * chunks (prev: C entries of scratch): grp[1] -> ... -> grp[k-1] ->
 * grp[0], member i sending when ready[i] is done. Returns the join on
 * grp[0] that has the sum. */
static uint32_t chain_reduce(sim_graph *g, uint32_t *sstream, const int *grp,
                             int k, const uint32_t *ready, double bytes,
                             int channels, uint32_t *prev) {
  int C = chain_chunks(bytes);
  double cb = bytes / C;
  for (int i = 1; i < k; i++) /* NCCL's order: grp[1] -> ... -> grp[0] */
    for (int j = 0; j < C; j++) {
      uint32_t x = sim_graph_xfer(g, grp[i], grp[(i + 1) % k], cb,
                                  SIM_ROLE_DP, j);
      sim_graph_channels(g, x, channels);
      sim_graph_edge(g, ready[i], x, SIM_ON_DONE);
      if (i > 1) sim_graph_edge(g, prev[j], x, SIM_ON_DONE);
      sim_graph_stream(g, &sstream[grp[i]], x, SIM_ON_LEFT);
      prev[j] = x;
    }
  uint32_t reduced = sim_graph_join(g, grp[0], SIM_ROLE_SYNC);
  sim_graph_edge(g, ready[0], reduced, SIM_ON_DONE);
  for (int j = 0; j < C && k > 1; j++)
    sim_graph_edge(g, prev[j], reduced, SIM_ON_DONE);
  return reduced;
}

/* NCCL's broadcast of bytes from grp[0] after `start` along grp[0] -> ...
 * -> grp[k-1] in C chunks (prev: scratch); sync[i] waits for member i's
 * copy and for its own last chunk to have left. */
static void chain_bcast(sim_graph *g, uint32_t *sstream, const int *grp,
                        int k, uint32_t start, double bytes, int channels,
                        uint32_t *prev, uint32_t *sync) {
  int C = chain_chunks(bytes);
  double cb = bytes / C;
  for (int i = 0; i + 1 < k; i++)
    for (int j = 0; j < C; j++) {
      uint32_t x = sim_graph_xfer(g, grp[i], grp[i + 1], cb, SIM_ROLE_DP, j);
      sim_graph_channels(g, x, channels);
      sim_graph_edge(g, i == 0 ? start : prev[j], x, SIM_ON_DONE);
      sim_graph_stream(g, &sstream[grp[i]], x, SIM_ON_LEFT);
      prev[j] = x;
      /* the last member holds the gradient when every chunk has arrived
       * (chunks sent before a latency drop arrive after later ones); the
       * others' syncs wait for their last forward, which waited for every
       * chunk's arrival */
      if (i + 2 == k || j == C - 1)
        sim_graph_edge(g, x, sync[i + 1], SIM_ON_DONE);
      if (j == C - 1) sim_graph_edge(g, x, sync[i], SIM_ON_LEFT);
    }
}

void sim_train_central(sim_graph *g, uint32_t *sstream, const int *grp,
                       int n, const uint32_t *ready, double bytes,
                       int channels, uint32_t *sync) {
  uint32_t *prev = mem_alloc((size_t)chain_chunks(bytes) * sizeof *prev);
  uint32_t reduced = chain_reduce(g, sstream, grp, n, ready, bytes, channels,
                                  prev);
  chain_bcast(g, sstream, grp, n, reduced, bytes, channels, prev, sync);
  free(prev);
}

void sim_train_hier_ring(sim_graph *g, uint32_t *sstream, const int *grp,
                         int n, const int *site, const uint32_t *ready,
                         double bytes, int channels, uint32_t *sync) {
  /* members by site, sites in order of first appearance, members in grp
   * order within a site: at[first[l] .. first[l + 1]) */
  int top = 0;
  for (int i = 0; i < n; i++) top = site && site[grp[i]] > top ? site[grp[i]] : top;
  int *slot = mem_alloc(((size_t)top + 1) * sizeof *slot);
  for (int i = 0; i < n; i++) slot[site ? site[grp[i]] : 0] = -1;
  int L = 0;
  int *first = mem_calloc((size_t)n + 2, sizeof *first);
  int *of = mem_alloc((size_t)n * sizeof *of);
  for (int i = 0; i < n; i++) {
    int *sl = &slot[site ? site[grp[i]] : 0];
    if (*sl < 0) *sl = L++;
    of[i] = *sl;
    first[*sl + 1]++;
  }
  for (int l = 0; l < L; l++) first[l + 1] += first[l];
  int *fill = mem_alloc((size_t)L * sizeof *fill), *at = mem_alloc((size_t)n * sizeof *at);
  memcpy(fill, first, (size_t)L * sizeof *fill);
  for (int i = 0; i < n; i++) at[fill[of[i]]++] = i;
  int *m = mem_alloc((size_t)n * sizeof *m);
  uint32_t *rd = mem_alloc((size_t)n * sizeof *rd), *sy = mem_alloc((size_t)n * sizeof *sy);
  for (int i = 0; i < n; i++) m[i] = grp[at[i]], rd[i] = ready[at[i]], sy[i] = sync[at[i]];
  uint32_t *prev = mem_alloc((size_t)chain_chunks(bytes) * sizeof *prev);
  int *lead = mem_alloc((size_t)L * sizeof *lead);
  uint32_t *red = mem_alloc((size_t)L * sizeof *red), *cross = mem_alloc((size_t)L * sizeof *cross);
  for (int l = 0; l < L; l++) { /* level 1: reduce inside each site */
    int f = first[l], k = first[l + 1] - f;
    lead[l] = m[f];
    red[l] = chain_reduce(g, sstream, m + f, k, rd + f, bytes, channels, prev);
  }
  if (L > 1) { /* level 2: a ring across the sites' leaders */
    for (int l = 0; l < L; l++) cross[l] = sim_graph_join(g, lead[l], SIM_ROLE_SYNC);
    sim_train_ring(g, sstream, lead, L, red, bytes, channels, cross);
  } else {
    cross[0] = red[0];
  }
  for (int l = 0; l < L; l++) { /* level 3: broadcast inside each site */
    int f = first[l], k = first[l + 1] - f;
    sim_graph_edge(g, cross[l], sy[f], SIM_ON_DONE);
    chain_bcast(g, sstream, m + f, k, cross[l], bytes, channels, prev, sy + f);
  }
  free(slot), free(first), free(of), free(fill), free(at), free(m);
  free(rd), free(sy), free(prev), free(lead), free(red), free(cross);
}

uint64_t sim_train_hier_ring_tasks(int n, int sites, double bytes) {
  if (n < 2) return 0;
  uint64_t L = (uint64_t)(sites < n ? sites : n);
  uint64_t chains = 2 * (uint64_t)n * (uint64_t)chain_chunks(bytes);
  uint64_t ring = 0;
  if (L > 1) {
    transport_ring r = transport_ring_plan(bytes, (int)L);
    ring = 2 * L * (L - 1) * (uint64_t)r.loops * (uint64_t)r.slices;
  }
  return chains + 2 * L + ring;
}

void sim_train_ring(sim_graph *g, uint32_t *sstream, const int *grp, int n,
                    const uint32_t *ready, double bytes, int channels,
                    uint32_t *sync) {
  transport_ring r = transport_ring_plan(bytes, n);
  int K = 2 * (n - 1) * r.loops * r.slices;
  uint32_t *x = mem_alloc((size_t)n * (size_t)K * sizeof *x); /* [i][p] */
  for (int p = 0; p < K; p++) {
    int w = transport_ring_wait(&r, n, p);
    for (int i = 0; i < n; i++) {
      int q = (i + n - 1) % n;
      uint32_t t = x[(size_t)i * K + p] = sim_graph_xfer(
          g, grp[i], grp[(i + 1) % n], r.piece, SIM_ROLE_DP, p);
      sim_graph_channels(g, t, channels);
      if (p == 0) sim_graph_edge(g, ready[i], t, SIM_ON_DONE);
      if (w >= 0) sim_graph_edge(g, x[(size_t)q * K + w], t, SIM_ON_DONE);
      sim_graph_stream(g, &sstream[grp[i]], t, SIM_ON_LEFT);
    }
  }
  for (int i = 0; i < n; i++) {
    int q = (i + n - 1) % n;
    sim_graph_edge(g, x[(size_t)q * K + K - 1], sync[i], SIM_ON_DONE);
    sim_graph_edge(g, x[(size_t)i * K + K - 1], sync[i], SIM_ON_LEFT);
  }
  free(x);
}

/* The largest gradient one synchronisation carries (the transport's cuts
 * grow with the bytes): its largest stage's at the workload's width (a
 * DiLoCo fragment is part of one); when the layers are balanced per
 * allocation, not known yet, the whole model's. */
static double grad_bytes_bound(const spec_workload *w) {
  double sum = 0, most = 0;
  for (int s = 0; s < w->stages; s++) {
    double b = compress_gradient_bytes(w, s);
    sum += b;
    most = b > most ? b : most;
  }
  return w->balanced ? sum : most;
}

uint64_t sim_train_sync_tasks(const spec_workload *w, spec_dp_algo algo,
                              int sites, int channels) {
  uint64_t R = (uint64_t)w->replicas;
  if (R < 2) return 2 * R;
  double bytes = grad_bytes_bound(w);
  uint64_t tasks = 0;
  (void)channels; /* the cut is NCCL's whatever the channels */
  switch (algo) {
    case SPEC_CENTRAL_PS:
      tasks = 2 * (R - 1) * (uint64_t)chain_chunks(bytes) + 1;
      break;
    case SPEC_SHARDED_PS:
      tasks = R + 2 * R * (R - 1);
      break;
    case SPEC_HIER_RING:
      tasks = sim_train_hier_ring_tasks(w->replicas, sites, bytes);
      break;
    case SPEC_HIVEMIND: /* and delayed, a join per member (its exposed
                           sync) */
      tasks = sim_train_hivemind_tasks(w->replicas) + R;
      break;
    case SPEC_RING: { /* also DiLoCo's exchange (outer.c names it) */
      transport_ring r = transport_ring_plan(bytes, w->replicas);
      tasks = 2 * R * (R - 1) * (uint64_t)r.loops * (uint64_t)r.slices;
      break;
    }
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: break; /* nothing per step */
  }
  return 2 * R + tasks;
}

uint64_t sim_train_task_bound(const spec_workload *w, int sites) {
  uint64_t R = (uint64_t)w->replicas, S = (uint64_t)w->stages;
  uint64_t cells = R * S * (uint64_t)w->passes *
                   (uint64_t)w->micro_batches_per_pass;
  /* per stage: R syncs and R optimizer steps, and the sync transfers of the
   * workload's algorithm (a local step, DiLoCo's inner, has none); R
   * barrier gates */
  uint64_t sync = spec_is_diloco(w) ? 2 * R
                  : sim_train_sync_tasks(w, w->dp_algo, sites,
                                         TRANSPORT_NCCL_RING_CHANNELS);
  uint64_t n = 4 * cells + 2 * (uint64_t)w->passes * (R + 1) + S * sync + 2 * R;
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON: /* its calls (two tasks each, at most two
      per op) and, per replica, the embeddings' 2-member ring (at most 2 x
      loops x slices messages each way) and two scalar rings */
      n += 8 * cells +
           R * (4 * (uint64_t)TRANSPORT_NCCL_MAX_LOOPS *
                    (TRANSPORT_NCCL_ALLREDUCE_CHUNKSTEPS /
                     TRANSPORT_NCCL_ALLREDUCE_SLICESTEPS) +
                4 * S * S + 4 * S + 8);
      break;
  }
  return n;
}
