/* traffic: see traffic.h. Each collective is walked as its builder walks
 * it, summing per sending pair what the builder cuts into chunks, slices
 * and loops (C chunks of bytes / C, K ring pieces of the plan's piece). */
#include "models/traffic.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/diloco.h"
#include "models/hivemind.h"
#include "models/transport.h"

/* The sink and the factor every byte is scaled by (DiLoCo's 1 / H). */
typedef struct out {
  traffic_sink sink;
  void *ctx;
  double scale;
} out;

static void put(const out *o, int src, int dst, double bytes) {
  if (src != dst && bytes > 0) o->sink(o->ctx, src, dst, bytes * o->scale);
}

/* NCCL's chains in C chunks of bytes / C (sim/train_sync.c chain_chunks):
 * the reduce grp[1] -> ... -> grp[k-1] -> grp[0], the broadcast grp[0] ->
 * ... -> grp[k-1]. */
static void chains(const out *o, const int *grp, int k, double bytes) {
  int C = (int)ceil(bytes / TRANSPORT_NCCL_CHUNK_BYTES);
  C = C > TRANSPORT_NCCL_MAX_CHUNKS ? TRANSPORT_NCCL_MAX_CHUNKS : C < 1 ? 1 : C;
  double each = C * (bytes / C);
  for (int i = 1; i < k; i++) put(o, grp[i], grp[(i + 1) % k], each);
  for (int i = 0; i + 1 < k; i++) put(o, grp[i], grp[i + 1], each);
}

/* NCCL's ring all-reduce: every member sends its successor
 * 2 (n - 1) x loops x slices pieces. */
static void ring(const out *o, const int *grp, int n, double bytes) {
  if (n < 2) return;
  transport_ring r = transport_ring_plan(bytes, n);
  double each = (double)(2 * (n - 1) * r.loops * r.slices) * r.piece;
  for (int i = 0; i < n; i++) put(o, grp[i], grp[(i + 1) % n], each);
}

/* sharded-ps: bytes / R from every member to every other, and back. */
static void sharded(const out *o, const int *grp, int n, double bytes) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) put(o, grp[i], grp[j], 2 * (bytes / n));
}

/* hier-ring: the members by site (sites in order of first appearance,
 * members in group order), a chain reduce and broadcast inside each, a
 * ring across the sites' first members. */
static void hier(const out *o, const scenario *s, const int *grp, int n,
                 double bytes) {
  int *m = mem_alloc((size_t)n * sizeof *m), *lead = mem_alloc((size_t)n * sizeof *lead);
  char *taken = mem_calloc((size_t)n, 1);
  int L = 0, at = 0;
  for (int i = 0; i < n; i++) {
    if (taken[i]) continue;
    int first = at, site = s->device_site[grp[i]];
    for (int j = i; j < n; j++)
      if (!taken[j] && s->device_site[grp[j]] == site) m[at++] = grp[j], taken[j] = 1;
    lead[L++] = m[first];
    chains(o, m + first, at - first, bytes);
  }
  if (L > 1) ring(o, lead, L, bytes);
  free(m), free(lead), free(taken);
}

/* hivemind's butterfly (sim/train_hivemind.c): each member j averages
 * the fraction frac_j of the vector, in C_j chunks; every other member
 * sends it its slice of that part and gets the average back. */
static void butterfly(const out *o, const scenario *s, const int *grp, int n,
                      double bytes) {
  double *frac = mem_alloc((size_t)n * sizeof *frac);
  hivemind_fractions(s, grp, n, frac);
  for (int j = 0; j < n; j++) {
    double part = bytes * frac[j];
    int C = hivemind_chunks(part);
    double each = C ? C * (part / C) : 0;
    for (int k = 0; k < n; k++)
      if (k != j) put(o, grp[k], grp[j], each), put(o, grp[j], grp[k], each);
  }
  free(frac);
}

static void sync_group(const out *o, const spec_workload *w,
                       const scenario *s, const int *grp, int n, double bytes) {
  switch (w->dp_algo) {
    case SPEC_CENTRAL_PS: chains(o, grp, n, bytes); return;
    case SPEC_RING: ring(o, grp, n, bytes); return;
    case SPEC_SHARDED_PS: sharded(o, grp, n, bytes); return;
    case SPEC_HIER_RING: hier(o, s, grp, n, bytes); return;
    case SPEC_HIVEMIND: butterfly(o, s, grp, n, bytes); return;
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return; /* the outer exchange, below */
  }
}

/* Megatron's tail per pipeline: the tied embeddings' gradient between its
 * ends, then two scalar all-reduces over its stages (sim/train.c). */
static void megatron_tail(const out *o, const spec_workload *w, const int *grp,
                          int S) {
  if (S < 2) return;
  int ends[2] = {grp[0], grp[S - 1]};
  ring(o, ends, 2, (double)w->model->vocab * w->model->hidden *
                       w->model->value_bytes);
  for (int round = 0; round < 2; round++) ring(o, grp, S, 4.0 * S);
}

/* DiLoCo's exchange of every fragment of every stage over its replicas,
 * once per outer step: per inner step, 1 / H of it. */
static void exchange(out o, const spec_workload *w, const scenario *s,
                     const alloc *a, int *grp) {
  diloco_plan p = diloco_plan_of(w);
  o.scale /= p.inner_steps;
  for (int f = 0; f < p.fragments; f++)
    for (int st = 0; st < a->stages && a->replicas > 1; st++) {
      if (diloco_fragment_params(w, &p, st, f) <= 0) continue;
      for (int r = 0; r < a->replicas; r++) grp[r] = alloc_at(a, r, st);
      double bytes = diloco_fragment_bytes(w, &p, st, f);
      if (w->given.exchange_levels > 1) hier(&o, s, grp, a->replicas, bytes);
      else ring(&o, grp, a->replicas, bytes);
    }
}

void traffic_iteration(const spec_workload *w, const scenario *s,
                       const alloc *a, traffic_sink sink, void *ctx) {
  out o = {sink, ctx, 1};
  int R = a->replicas, S = a->stages;
  double act = compress_activation_bytes(w) *
               ((double)w->passes * w->micro_batches_per_pass);
  for (int r = 0; r < R; r++)
    for (int st = 0; st + 1 < S; st++) {
      put(&o, alloc_at(a, r, st), alloc_at(a, r, st + 1), act);
      put(&o, alloc_at(a, r, st + 1), alloc_at(a, r, st), act);
    }
  int *grp = mem_alloc((size_t)(R > S ? R : S) * sizeof *grp);
  for (int st = 0; st < S && R > 1; st++) {
    for (int r = 0; r < R; r++) grp[r] = alloc_at(a, r, st);
    sync_group(&o, w, s, grp, R, compress_gradient_bytes(w, st));
  }
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON:
      for (int r = 0; r < R; r++) {
        for (int st = 0; st < S; st++) grp[st] = alloc_at(a, r, st);
        megatron_tail(&o, w, grp, S);
      }
      break;
  }
  if (spec_is_diloco(w)) exchange(o, w, s, a, grp);
  free(grp);
}
