/* train: builds the task graph of one iteration.
 * Invariant: for every device, its compute, send and receive streams list
 * their tasks in the order DT-FM's runtime issues them (the schedule's op
 * order: each op's incoming transfer on the receive stream, the op on the
 * compute stream, its outgoing transfer on the send stream); a transfer
 * starts when its data is ready and the sender's send stream is free (the
 * previous send's last byte has left), and completes when its bytes have
 * arrived and the receive stream has completed the receive before it: NCCL
 * has no end-to-end credit over sockets, so consecutive messages stream
 * back to back and a boundary's latency overlaps the next transfer. Gradient
 * synchronisation transfers of central-ps and ring use the send stream (in
 * chunk or step order) but not the receive stream: NCCL keeps several
 * chunks in flight; sharded-ps sends to every member at once, on no
 * stream, and hivemind's round on a stream per pair of its own
 * (sim/train_hivemind.c). Replicas whose algorithm runs them apart
 * (spec_dp_algo_apart) pass DT-FM's barriers each on its own. */
#include "sim/train.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "base/simtime.h"
#include "models/compress.h"
#include "models/roofline.h"
#include "models/runtime.h"

/* sim_train_compute's three times in seconds: forward, backward, step. */
static void compute_s(const spec_workload *w, int st, const spec_gpu *g,
                      double factor, double scale, double t[3]) {
  double f = roofline_stage_fwd_s(g, w, st) * factor * scale;
  double b = roofline_stage_bwd_s(g, w, st) * factor * scale;
  double o = runtime_step_s(w, g, st) * scale;
  /* compression (models/compress.h): the activations' around each op, the
   * gradient's before the optimizer (DiLoCo's are in its exchanges) */
  f += compress_stage_s(w, st, g, false) * scale;
  b += compress_stage_s(w, st, g, true) * scale;
  if (!spec_is_diloco(w)) o += compress_sync_s(w, st, g) * scale;
  t[0] = f, t[1] = b, t[2] = o;
}

sim_compute sim_train_compute(const spec_workload *w, int st,
                              const spec_gpu *g, double factor, double scale) {
  double t[3];
  compute_s(w, st, g, factor, scale, t);
  /* the engine checks every device's sum first (sim_train_check_compute):
   * no time here wraps */
  return (sim_compute){llround(t[0] * 1e9), llround(t[1] * 1e9),
                       llround(t[2] * 1e9)};
}

int sim_train_check_compute(const sim_train_inputs *in, const scenario *s,
                            err *e) {
  const spec_workload *w = in->w;
  for (int i = 0; i < in->a->replicas * in->a->stages; i++) {
    int d = in->a->device[i], st = i % in->a->stages;
    double t[3];
    compute_s(w, st, in->gpu[d], in->factor[d], in->compute_scale, t);
    /* one iteration's work on the device, end to end */
    double work = (t[0] + t[1]) * w->passes * w->micro_batches_per_pass + t[2];
    if (!(work <= SIMTIME_LIMIT_S))
      return err_set(e, ERR_RANGE, "%s: device %d (%s, site %s) computes "
                     "stage %d of one iteration in %.3g s, past "
                     SIMTIME_LIMIT_TEXT " (a compute_efficiency or "
                     "compute scale this small has no time to report)",
                     s->name, d, in->gpu[d]->name,
                     s->sites[s->device_site[d]].name, st, work);
  }
  return ERR_OK;
}

void sim_train_marks_free(sim_train_marks *m) {
  if (!m) return;
  free(m->stage);
  free(m->last_bwd);
  free(m->sync);
  free(m->opt);
  free(m->end);
  *m = (sim_train_marks){0};
}

/* One op of a stage's schedule: forward or backward of micro-batch k. */
typedef struct op {
  int bwd, k;
} op;

/* The op order of stage st of S for M micro-batches. */
static void schedule_ops(spec_schedule sched, int st, int S, int M, op *ops) {
  int n = 0;
  switch (sched) {
    case SPEC_GPIPE:
      for (int k = 0; k < M; k++) ops[n++] = (op){0, k};
      for (int k = 0; k < M; k++) ops[n++] = (op){1, k};
      return;
    case SPEC_1F1B: {
      int warm = S - st - 1 < M ? S - st - 1 : M;
      int f = 0, b = 0;
      for (; f < warm; f++) ops[n++] = (op){0, f};
      while (f < M) {
        ops[n++] = (op){0, f++};
        ops[n++] = (op){1, b++};
      }
      while (b < M) ops[n++] = (op){1, b++};
      return;
    }
  }
}

typedef struct builder {
  sim_graph *g;
  const spec_workload *w;
  const alloc *a;
  int R, S, P, M;
  uint32_t *F, *B, *act, *grad; /* [((r S + s) P + p) M + k] */
  uint32_t *cstream, *sstream, *rstream; /* per device: last task */
  int64_t barrier_ns; /* a barrier's own latency */
  bool local;         /* no data-parallel synchronisation: the barriers are
                         each replica's own */
  bool apart;         /* the barriers are each replica's own (local, or an
                         algorithm whose replicas run apart: spec_dp_algo_
                         apart) */
  const scenario *s;  /* hivemind's links (sim_train_inputs.s) */
  const uint32_t *start; /* per device: its step's start, or NULL */
  uint32_t *window;   /* per stage: hivemind's matchmaking window task
                         (delayed: the next round's, which the step's end
                         waits for), or SIM_GRAPH_NONE */
  const int64_t *replica_barrier_ns; /* local: per replica */
  const double *factor; /* per device: spec_site_compute_factor */
  const int *site;      /* per device: its site, or NULL (one site) */
} builder;

static size_t ix(const builder *b, int r, int s, int p, int k) {
  assert(r >= 0 && r < b->R && s >= 0 && s < b->S && p >= 0 && p < b->P &&
         k >= 0 && k < b->M);
  return (((size_t)r * b->S + s) * b->P + p) * b->M + k;
}

static void build_pipelines(builder *b, const spec_gpu *const *gpu,
                            double scale, double act_bytes) {
  sim_graph *g = b->g;
  for (int r = 0; r < b->R; r++)
    for (int s = 0; s < b->S; s++) {
      int d = alloc_at(b->a, r, s);
      sim_compute c = sim_train_compute(b->w, s, gpu[d], b->factor[d], scale);
      for (int p = 0; p < b->P; p++)
        for (int k = 0; k < b->M; k++) {
          size_t i = ix(b, r, s, p, k);
          b->F[i] = sim_graph_compute(g, d, c.fwd_ns, SIM_ROLE_FWD, k);
          b->B[i] = sim_graph_compute(g, d, c.bwd_ns, SIM_ROLE_BWD, k);
        }
    }
  for (int r = 0; r < b->R; r++)
    for (int s = 0; s < b->S; s++)
      for (int p = 0; p < b->P; p++)
        for (int k = 0; k < b->M; k++) {
          size_t i = ix(b, r, s, p, k);
          int d = alloc_at(b->a, r, s);
          if (s + 1 < b->S) {
            uint32_t x = sim_graph_xfer(g, d, alloc_at(b->a, r, s + 1),
                                        act_bytes, SIM_ROLE_ACT, k);
            b->act[i] = x;
            sim_graph_edge(g, b->F[i], x, SIM_ON_DONE);
            sim_graph_edge(g, x, b->F[ix(b, r, s + 1, p, k)], SIM_ON_DONE);
          }
          if (s > 0) {
            uint32_t x = sim_graph_xfer(g, d, alloc_at(b->a, r, s - 1),
                                        act_bytes, SIM_ROLE_GRAD, k);
            b->grad[i] = x;
            sim_graph_edge(g, b->B[i], x, SIM_ON_DONE);
            sim_graph_edge(g, x, b->B[ix(b, r, s - 1, p, k)], SIM_ON_DONE);
          }
        }
}

/* What waits for barrier join j of replica r (-1: of every device): j
 * itself, or the barrier's own latency after it (a timed task on the
 * replica's first device, not GPU work). */
static uint32_t barrier_gate(builder *b, uint32_t j, int r) {
  int64_t ns = r < 0                  ? b->barrier_ns
               : b->replica_barrier_ns ? b->replica_barrier_ns[r]
                                       : 0;
  if (ns <= 0) return j;
  uint32_t x = sim_graph_compute(b->g, alloc_at(b->a, r < 0 ? 0 : r, 0), ns,
                                 SIM_ROLE_BARRIER, -1);
  sim_graph_edge(b->g, j, x, SIM_ON_DONE);
  return x;
}

/* Streams in op order, and under DT-FM's runtime GPipe's barrier between
 * the phases of a pass (the modern runtime's passes follow each other on
 * each device's streams alone). */
static void build_streams(builder *b) {
  sim_graph *g = b->g;
  op *ops = mem_alloc(2 * (size_t)b->M * sizeof *ops);
  bool phased = false; /* a barrier between the phases of a pass */
  switch (b->w->schedule) {
    case SPEC_GPIPE: phased = runtime_of(b->w->runtime)->pass_barrier; break;
    case SPEC_1F1B: break;
  }
  for (int p = 0; p < b->P; p++) {
    uint32_t barrier = SIM_GRAPH_NONE, gate = SIM_GRAPH_NONE;
    for (int r = 0; r < b->R; r++) {
      if (phased && (r == 0 || b->apart)) {
        barrier = sim_graph_join(g, -1, SIM_ROLE_BARRIER);
        gate = barrier_gate(b, barrier, b->apart ? r : -1);
      }
      for (int s = 0; s < b->S; s++) {
        int d = alloc_at(b->a, r, s);
        schedule_ops(b->w->schedule, s, b->S, b->M, ops);
        for (int j = 0; j < 2 * b->M; j++) {
          size_t i = ix(b, r, s, p, ops[j].k);
          bool bw = ops[j].bwd;
          bool has_in = bw ? s + 1 < b->S : s > 0;
          bool has_out = bw ? s > 0 : s + 1 < b->S;
          if (has_in) {
            size_t src = ix(b, r, bw ? s + 1 : s - 1, p, ops[j].k);
            sim_graph_recv_stream(g, &b->rstream[d],
                                  bw ? b->grad[src] : b->act[src]);
          }
          uint32_t t = bw ? b->B[i] : b->F[i];
          sim_graph_stream(g, &b->cstream[d], t, SIM_ON_DONE);
          if (has_out)
            sim_graph_stream(g, &b->sstream[d], bw ? b->grad[i] : b->act[i],
                             SIM_ON_LEFT);
          if (barrier != SIM_GRAPH_NONE && !bw && ops[j].k == b->M - 1)
            sim_graph_edge(g, t, barrier, SIM_ON_DONE);
          if (barrier != SIM_GRAPH_NONE && bw && ops[j].k == 0)
            sim_graph_edge(g, gate, t, SIM_ON_DONE);
        }
      }
    }
  }
  free(ops);
}

/* central-ps: NCCL reduce to replica 0 then broadcast from it (ring
 * collectives: TRANSPORT_NCCL_RING_CHANNELS channels), each a
 * pipelined chain in chunks along the ring: the reduce from the root's
 * successor to the root (src/device/reduce.h runRing: the rank whose
 * predecessor is the root only sends, the root only receives), 1 -> 2 ->
 * ... -> R-1 -> 0; the broadcast 0 -> 1 -> ... -> R-1. */
static void sync_central(builder *b, const int *grp, const uint32_t *ready,
                         double bytes, uint32_t *sync) {
  sim_train_central(b->g, b->sstream, grp, b->R, ready, bytes,
                    TRANSPORT_NCCL_RING_CHANNELS, sync);
}

/* ring: NCCL's ring all-reduce over the n members of grp
 * (transport_ring_plan): a slice of a step starts on a device when it has
 * received that slice of the previous step (transport_ring_wait). */
static void sync_ring(builder *b, const int *grp, int n, const uint32_t *ready,
                      double bytes, uint32_t *sync) {
  sim_train_ring(b->g, b->sstream, grp, n, ready, bytes,
                 TRANSPORT_NCCL_RING_CHANNELS, sync);
}

/* sharded-ps: every member sends bytes/R to every other at once, reduces its
 * shard when all have arrived, and sends it back to all. DT-FM runs it as
 * NCCL send/recv (p2p): one channel per message (TRANSPORT_P2P_CHANNELS). */
static void sync_sharded(builder *b, const int *grp, const uint32_t *ready,
                         double bytes, uint32_t *sync) {
  sim_graph *g = b->g;
  int R = b->R;
  uint32_t *have = mem_alloc((size_t)R * sizeof *have);
  for (int j = 0; j < R; j++) {
    have[j] = sim_graph_join(g, grp[j], SIM_ROLE_SYNC);
    sim_graph_edge(g, ready[j], have[j], SIM_ON_DONE);
  }
  for (int i = 0; i < R; i++)
    for (int j = 0; j < R; j++)
      if (i != j) {
        uint32_t x = sim_graph_xfer(g, grp[i], grp[j], bytes / R, SIM_ROLE_DP, 0);
        sim_graph_edge(g, ready[i], x, SIM_ON_DONE);
        sim_graph_edge(g, x, have[j], SIM_ON_DONE);
      }
  for (int j = 0; j < R; j++)
    for (int i = 0; i < R; i++)
      if (i != j) {
        uint32_t x = sim_graph_xfer(g, grp[j], grp[i], bytes / R, SIM_ROLE_DP, 1);
        sim_graph_edge(g, have[j], x, SIM_ON_DONE);
        sim_graph_edge(g, x, sync[i], SIM_ON_DONE);
        sim_graph_edge(g, x, sync[j], SIM_ON_LEFT);
      }
  free(have);
}

/* ---- Megatron-LM's runtime ---- */

/* One blocking point-to-point call of Megatron's pipeline on device d
 * (p2p_communication.py: batch_isend_irecv, wait on every request, then
 * torch.cuda.synchronize): the stage's host goes on only when its send has
 * left and its receive has arrived, then pays the call's fixed cost. A
 * call without a transfer (a first or last stage's missing peer) is no
 * call. The compute stream carries the host's order. */
static void megatron_call(builder *b, int d, uint32_t send, uint32_t recv,
                          int64_t call_ns) {
  if (send == SIM_GRAPH_NONE && recv == SIM_GRAPH_NONE) return;
  sim_graph *g = b->g;
  uint32_t j = sim_graph_join(g, d, SIM_ROLE_CALL);
  sim_graph_stream(g, &b->cstream[d], j, SIM_ON_DONE);
  if (send != SIM_GRAPH_NONE) sim_graph_edge(g, send, j, SIM_ON_LEFT);
  if (recv != SIM_GRAPH_NONE) sim_graph_edge(g, recv, j, SIM_ON_DONE);
  uint32_t o = sim_graph_compute(g, d, call_ns, SIM_ROLE_CALL, -1);
  sim_graph_stream(g, &b->cstream[d], o, SIM_ON_DONE);
}

/* The transfers stage s of replica r sends and receives in pass p. */
typedef struct megatron_io {
  const builder *b;
  int r, s, p;
} megatron_io;

static uint32_t act_in(megatron_io x, int k) {
  return x.s > 0 ? x.b->act[ix(x.b, x.r, x.s - 1, x.p, k)] : SIM_GRAPH_NONE;
}
static uint32_t act_out(megatron_io x, int k) {
  return x.s + 1 < x.b->S ? x.b->act[ix(x.b, x.r, x.s, x.p, k)] : SIM_GRAPH_NONE;
}
static uint32_t grad_in(megatron_io x, int k) {
  return x.s + 1 < x.b->S ? x.b->grad[ix(x.b, x.r, x.s + 1, x.p, k)] : SIM_GRAPH_NONE;
}
static uint32_t grad_out(megatron_io x, int k) {
  return x.s > 0 ? x.b->grad[ix(x.b, x.r, x.s, x.p, k)] : SIM_GRAPH_NONE;
}

/* Stage s's pass p in the op order of forward_backward_pipelining_without_
 * interleaving: w = min(S - s - 1, M) warm-up forwards (recv, F, send),
 * then steady 1F1B with the combined calls send_forward_recv_backward and
 * send_backward_recv_forward, then w cool-down backwards. */
static void megatron_stage(builder *b, int r, int s, int p, int64_t call_ns) {
  sim_graph *g = b->g;
  int S = b->S, M = b->M, d = alloc_at(b->a, r, s);
  int w = S - s - 1 < M ? S - s - 1 : M;
  megatron_io x = {.b = b, .r = r, .s = s, .p = p};
  const uint32_t none = SIM_GRAPH_NONE;
  for (int k = 0; k < w; k++) {
    megatron_call(b, d, none, act_in(x, k), call_ns);
    sim_graph_stream(g, &b->cstream[d], b->F[ix(b, r, s, p, k)], SIM_ON_DONE);
    megatron_call(b, d, act_out(x, k), none, call_ns);
  }
  if (M > w) megatron_call(b, d, none, act_in(x, w), call_ns);
  for (int i = 0; i < M - w; i++) {
    int k = w + i;
    sim_graph_stream(g, &b->cstream[d], b->F[ix(b, r, s, p, k)], SIM_ON_DONE);
    megatron_call(b, d, act_out(x, k), grad_in(x, i), call_ns);
    sim_graph_stream(g, &b->cstream[d], b->B[ix(b, r, s, p, i)], SIM_ON_DONE);
    megatron_call(b, d, grad_out(x, i), k + 1 < M ? act_in(x, k + 1) : none,
                  call_ns);
  }
  for (int i = M - w; i < M; i++) {
    megatron_call(b, d, none, grad_in(x, i), call_ns);
    sim_graph_stream(g, &b->cstream[d], b->B[ix(b, r, s, p, i)], SIM_ON_DONE);
    megatron_call(b, d, grad_out(x, i), none, call_ns);
  }
}

static void build_megatron(builder *b) {
  int64_t call_ns = llround(runtime_p2p_call_s(b->w->runtime) * 1e9);
  for (int p = 0; p < b->P; p++)
    for (int r = 0; r < b->R; r++)
      for (int s = 0; s < b->S; s++) megatron_stage(b, r, s, p, call_ns);
}

/* After the data-parallel all-reduce: the tied word embeddings' gradient
 * all-reduced between each pipeline's first and last stage, then the two
 * scalar all-reduces over the pipeline (found-inf, gradient norm) that the
 * optimizer step waits for (training.py, optimizer.py). sync[d] becomes
 * the join the optimizer of d waits for. */
static void megatron_tail(builder *b, uint32_t *sync) {
  sim_graph *g = b->g;
  int S = b->S;
  int *grp = mem_alloc((size_t)S * sizeof *grp);
  uint32_t *ready = mem_alloc((size_t)S * sizeof *ready);
  uint32_t *done = mem_alloc((size_t)S * sizeof *done);
  double emb = (double)b->w->model->vocab * b->w->model->hidden *
               b->w->model->value_bytes;
  for (int r = 0; r < b->R; r++) {
    for (int s = 0; s < S; s++) grp[s] = alloc_at(b->a, r, s);
    if (S > 1) {
      int ends[2] = {grp[0], grp[S - 1]};
      uint32_t in[2] = {sync[ends[0]], sync[ends[1]]}, out[2];
      for (int i = 0; i < 2; i++) out[i] = sim_graph_join(g, ends[i], SIM_ROLE_SYNC);
      sync_ring(b, ends, 2, in, emb, out);
      sync[ends[0]] = out[0], sync[ends[1]] = out[1];
    }
    for (int round = 0; round < 2 && S > 1; round++) {
      for (int s = 0; s < S; s++) {
        ready[s] = sync[grp[s]];
        done[s] = sim_graph_join(g, grp[s], SIM_ROLE_SYNC);
      }
      sync_ring(b, grp, S, ready, 4.0 * S, done);
      for (int s = 0; s < S; s++) sync[grp[s]] = done[s];
    }
  }
  free(grp);
  free(ready);
  free(done);
}

/* What ends each device's iteration: DT-FM's last barrier (sgd_iter's; each
 * replica's own when apart), or its optimizer step. Under delayed
 * averaging the barrier also waits for the device's passes (its optimizer
 * steps the previous step's gradients beside them) and for the next
 * round's matchmaking windows. */
static void build_end(builder *b, sim_train_marks *m) {
  if (!runtime_of(b->w->runtime)->pass_barrier) {
    for (int d = 0; d < m->ndevices; d++) m->end[d] = m->opt[d];
    return;
  }
  bool delayed = spec_dp_delayed(b->w);
  for (int r = 0; r < (b->apart ? b->R : 1); r++) {
    uint32_t j = sim_graph_join(b->g, -1, SIM_ROLE_BARRIER);
    int n = b->apart ? b->S : m->ndevices; /* its devices */
    for (int i = 0; i < n; i++) {
      int d = b->apart ? alloc_at(b->a, r, i) : i;
      sim_graph_edge(b->g, m->opt[d], j, SIM_ON_DONE);
      if (delayed) sim_graph_edge(b->g, b->cstream[d], j, SIM_ON_DONE);
    }
    for (int st = 0; delayed && st < b->S; st++)
      if (b->window[st] != SIM_GRAPH_NONE)
        sim_graph_edge(b->g, b->window[st], j, SIM_ON_DONE);
    uint32_t end = barrier_gate(b, j, b->apart ? r : -1);
    for (int i = 0; i < n; i++) m->end[b->apart ? alloc_at(b->a, r, i) : i] = end;
  }
}

/* What a device's sync waits for after its last backward: that backward,
 * or under Megatron its host's last call (the host goes on after it). */
static uint32_t sync_ready(const builder *b, int d, uint32_t last_bwd) {
  switch (b->w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: return last_bwd;
    case SPEC_RUNTIME_MEGATRON: return b->cstream[d];
  }
  assert(!"unknown runtime");
  return last_bwd;
}

/* Stage st's hivemind round (sim/train_hivemind.c); delayed, of the
 * previous step's gradients, from the members' step starts. */
static void sync_hivemind(builder *b, int st, const int *grp,
                          const uint32_t *ready, double bytes,
                          uint32_t *sync) {
  bool delayed = spec_dp_delayed(b->w);
  uint32_t *from = mem_alloc((size_t)b->R * sizeof *from);
  for (int r = 0; r < b->R; r++)
    from[r] = !delayed ? ready[r] : b->start ? b->start[grp[r]] : SIM_GRAPH_NONE;
  sim_hivemind_in in = {.s = b->s, .grp = grp, .n = b->R, .ready = from,
                        .start = b->start, .bytes = bytes,
                        .values = spec_stage_params(b->w, st),
                        .matchmaking_s = b->w->given.matchmaking_s,
                        .delayed = delayed};
  uint32_t win = sim_train_hivemind(b->g, &in, sync);
  b->window[st] = delayed ? win : SIM_GRAPH_NONE;
  free(from);
}

/* One stage's group grp synchronises its gradients by the workload's
 * algorithm; DiLoCo's steps are local (its exchange is outer.c's). */
static void sync_group(builder *b, int st, const int *grp,
                       const uint32_t *ready, double bytes, uint32_t *sync) {
  switch (b->w->dp_algo) {
    case SPEC_CENTRAL_PS: sync_central(b, grp, ready, bytes, sync); return;
    case SPEC_RING: sync_ring(b, grp, b->R, ready, bytes, sync); return;
    case SPEC_SHARDED_PS: sync_sharded(b, grp, ready, bytes, sync); return;
    case SPEC_HIER_RING:
      sim_train_hier_ring(b->g, b->sstream, grp, b->R, b->site, ready, bytes,
                          TRANSPORT_NCCL_RING_CHANNELS, sync);
      return;
    case SPEC_HIVEMIND: sync_hivemind(b, st, grp, ready, bytes, sync); return;
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: assert(!"DiLoCo's steps are local"); return;
  }
}

/* Each stage's group synchronises from its members' last backwards;
 * before[d] gets what device d's optimizer step waits for (its sync).
 * Delayed, the round is the previous step's and runs beside the passes:
 * the sync mark is then what of it outlasts the passes (a join of both). */
static void sync_stages(builder *b, const double *grad_bytes,
                        sim_train_marks *m, uint32_t *before) {
  sim_graph *g = b->g;
  int R = b->R;
  bool delayed = spec_dp_delayed(b->w);
  int *grp = mem_alloc((size_t)R * sizeof *grp);
  uint32_t *ready = mem_alloc((size_t)R * sizeof *ready);
  uint32_t *sync = mem_alloc((size_t)R * sizeof *sync);
  op *ops = mem_alloc(2 * (size_t)b->M * sizeof *ops);
  for (int s = 0; s < b->S; s++) {
    schedule_ops(b->w->schedule, s, b->S, b->M, ops);
    int last_k = ops[2 * b->M - 1].k;
    for (int r = 0; r < R; r++) {
      grp[r] = alloc_at(b->a, r, s);
      ready[r] = sync_ready(b, grp[r], b->B[ix(b, r, s, b->P - 1, last_k)]);
      sync[r] = sim_graph_join(g, grp[r], SIM_ROLE_SYNC);
      if (!delayed) sim_graph_edge(g, ready[r], sync[r], SIM_ON_DONE);
      m->last_bwd[grp[r]] = ready[r];
      m->stage[grp[r]] = s;
    }
    double bytes = grad_bytes ? grad_bytes[s] : compress_gradient_bytes(b->w, s);
    if (R > 1 && !b->local) sync_group(b, s, grp, ready, bytes, sync);
    for (int r = 0; r < R; r++) {
      before[grp[r]] = m->sync[grp[r]] = sync[r];
      if (!delayed) continue;
      m->sync[grp[r]] = sim_graph_join(g, grp[r], SIM_ROLE_SYNC);
      sim_graph_edge(g, sync[r], m->sync[grp[r]], SIM_ON_DONE);
      sim_graph_edge(g, ready[r], m->sync[grp[r]], SIM_ON_DONE);
    }
  }
  free(ops);
  free(grp);
  free(ready);
  free(sync);
}

static void build_sync(builder *b, const spec_gpu *const *gpu, double scale,
                       const double *grad_bytes, sim_train_marks *m) {
  sim_graph *g = b->g;
  /* what each device's optimizer step waits for */
  uint32_t *before = mem_alloc((size_t)m->ndevices * sizeof *before);
  sync_stages(b, grad_bytes, m, before);
  switch (b->w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON: megatron_tail(b, before); break;
  }
  bool delayed = spec_dp_delayed(b->w); /* the step beside the passes */
  for (int s = 0; s < b->S; s++)
    for (int r = 0; r < b->R; r++) {
      int d = alloc_at(b->a, r, s);
      sim_compute c = sim_train_compute(b->w, s, gpu[d], b->factor[d], scale);
      uint32_t o = sim_graph_compute(g, d, c.opt_ns, SIM_ROLE_OPT, -1);
      sim_graph_edge(g, before[d], o, SIM_ON_DONE);
      if (!delayed) sim_graph_stream(g, &b->cstream[d], o, SIM_ON_DONE);
      m->opt[d] = o;
    }
  build_end(b, m);
  free(before);
}

#ifndef NDEBUG
/* The marks' contract (train.h): every device's marks are tasks of g, of
 * that device and of the role they name; its stage is the allocation's. */
static bool marks_hold(const sim_graph *g, const alloc *a,
                       const sim_train_marks *m) {
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  for (int d = 0; d < m->ndevices; d++) {
    uint32_t lb = m->last_bwd[d], sy = m->sync[d], ot = m->opt[d],
             en = m->end[d];
    if (lb >= n || sy >= n || ot >= n || en >= n) return false;
    if (m->stage[d] < 0 || m->stage[d] >= a->stages) return false;
    int r = 0;
    while (r < a->replicas && alloc_at(a, r, m->stage[d]) != d) r++;
    if (r == a->replicas) return false; /* d runs its stage */
    if (t[sy].role != SIM_ROLE_SYNC || t[sy].dev != d) return false;
    if (t[ot].role != SIM_ROLE_OPT || t[ot].dev != d) return false;
    if (t[lb].dev != d) return false; /* a backward, or Megatron's call */
    if (en != ot && t[en].role != SIM_ROLE_BARRIER) return false;
  }
  return true;
}
#endif

void sim_train_build(sim_graph *g, const sim_train_inputs *in,
                     sim_train_marks *m) {
  const spec_workload *w = in->w;
  const alloc *a = in->a;
  const spec_gpu *const *gpu = in->gpu;
  double compute_scale = in->compute_scale > 0 ? in->compute_scale : 1;
  const double *grad_bytes = in->grad_bytes;
  double act_bytes = in->act_bytes;
  int n = a->replicas * a->stages;
  builder b = {.g = g, .w = w, .a = a, .R = a->replicas, .S = a->stages,
               .P = w->passes, .M = w->micro_batches_per_pass,
               .barrier_ns = in->barrier_ns, .factor = in->factor,
               .local = in->local,
               .apart = in->local || spec_dp_algo_apart(w->dp_algo),
               .replica_barrier_ns = in->replica_barrier_ns,
               .site = in->device_site, .s = in->s, .start = in->start};
  size_t cells = (size_t)b.R * b.S * b.P * b.M;
  b.F = mem_alloc(cells * sizeof *b.F);
  b.B = mem_alloc(cells * sizeof *b.B);
  b.act = mem_alloc(cells * sizeof *b.act);
  b.grad = mem_alloc(cells * sizeof *b.grad);
  b.cstream = mem_alloc((size_t)n * sizeof *b.cstream);
  b.sstream = mem_alloc((size_t)n * sizeof *b.sstream);
  b.rstream = mem_alloc((size_t)n * sizeof *b.rstream);
  b.window = mem_alloc((size_t)b.S * sizeof *b.window);
  for (int st = 0; st < b.S; st++) b.window[st] = SIM_GRAPH_NONE;
  for (int d = 0; d < n; d++) {
    b.cstream[d] = in->start ? in->start[d] : SIM_GRAPH_NONE;
    b.sstream[d] = b.rstream[d] = SIM_GRAPH_NONE;
  }
  *m = (sim_train_marks){.ndevices = n,
                         .stage = mem_calloc((size_t)n, sizeof(int)),
                         .last_bwd = mem_calloc((size_t)n, sizeof(uint32_t)),
                         .sync = mem_calloc((size_t)n, sizeof(uint32_t)),
                         .opt = mem_calloc((size_t)n, sizeof(uint32_t)),
                         .end = mem_calloc((size_t)n, sizeof(uint32_t))};
  if (act_bytes <= 0) act_bytes = compress_activation_bytes(w);
  build_pipelines(&b, gpu, compute_scale, act_bytes);
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: build_streams(&b); break;
    case SPEC_RUNTIME_MEGATRON: build_megatron(&b); break;
  }
  build_sync(&b, gpu, compute_scale, grad_bytes, m);
  assert(marks_hold(g, a, m));
  free(b.F);
  free(b.B);
  free(b.act);
  free(b.grad);
  free(b.cstream);
  free(b.sstream);
  free(b.rstream);
  free(b.window);
}
