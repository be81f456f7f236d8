/* predict: one iteration of a runtime (modern, DT-FM's or Megatron's) in
 * closed form; one message, ring or synchronisation alone: predict_op.c.
 * Invariant: pure functions of their arguments; the only memory is a few
 * per-call arrays of O(devices) entries, freed before return.
 *
 * Why each term has the form it has (sim/train.c builds what is modelled):
 *
 * Pipeline boundary. A transfer is one NCCL message on its connection
 * (hop.h): messages leave in issue order, back to back, and arrive one
 * latency later; a receive stream only orders completion. So a boundary
 * is a FIFO server (the transfer time) then a pure delay (the latency): a
 * phase pays the latency once, not once per micro-batch.
 *
 * GPipe. A pass's forward phase of replica r, F_r, is the tandem
 * (tandem.h) stage 0, boundary 0 -> 1, stage 1, ...; its backward phase
 * B_r the tandem the other way. DT-FM's barrier between the phases waits
 * for every rank's last forward and costs g (runtime_barrier_ns); stage 0
 * starts pass p + 1 when its own backward of pass p ends. So the first
 * backward phase starts at max_r F_r + g, each later one max_r (B_r +
 * F_r) + g after the previous; replica r's alone (F_r + g, B_r + F_r + g)
 * where replicas barrier apart (hivemind, DiLoCo), and without g where the
 * runtime has no barrier (modern).
 *
 * 1F1B (streams, or Megatron's blocking calls of call_s each): one pass
 * per replica evaluated op by op (onef1b.h), whose steady state has the
 * closed-form period onef1b_period; the passes follow each other.
 *
 * Tail. Stage s of replica r is ready to synchronise after its last
 * backward (and once its last send is in its socket buffers: the
 * gradient's messages queue behind it), under Megatron after its last
 * call. Each data-parallel group synchronises from its members' ready
 * times (dpsync.h; hivemind's rounds: hivemind.h); every member steps its
 * optimizer (runtime.h), DT-FM's last barrier ends the iteration.
 * Megatron: each pipeline then all-reduces the tied embedding's gradient
 * between its ends, then two scalar all-reduces over its stages, then
 * steps Adam on its GPUs.
 *
 * Links (hop.h): warm connections; NICs (and under path shaping the paths
 * between sites) shared among the flows of one phase that cross them —
 * every pipeline's pass (under 1F1B each direction a phase apart), every
 * group's synchronisation from when its members are ready — by the
 * engine's weighted max-min with flows leaving as they finish
 * (models/fill.h) where flows share one, else split by socket weight
 * (then exact). tcp's idle restart (off by default) is approximate: each
 * phase's connections restart from the initial window, and one idle past
 * its RTO between messages restarts on each (hop_paced); with restarts a
 * pipeline may settle in another steady state than the engine's.
 *
 * Reported terms: predict_result's (predict.h). Left out (PREDICT_GAP_MAP
 * names those that may cost more than PREDICT_TOLERANCE): a phase's flows
 * meet only within it (a stage's gradient messages beside its own last
 * transfers; a 1F1B pass's two directions); the fill's approximations
 * (hop.h); time-varying links (the values at t = 0). */
#include "models/predict.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/compress.h"
#include "models/diloco.h"
#include "models/dpsync.h"
#include "models/hivemind.h"
#include "models/hop.h"
#include "models/onef1b.h"
#include "models/predict_gap.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/tandem.h"

static unsigned gap_bit(predict_gap g) { return 1u << g; }

/* One prediction's inputs and per-call arrays. */
typedef struct ctx {
  const spec_workload *w;
  const scenario *s;
  const spec_gpu *const *gpu;
  const alloc *a;
  hop_net net;
  int R, D, K, P;
  double act;     /* activation bytes */
  double g;       /* one barrier (DT-FM), s */
  double *gr;     /* [R]: replica r's barrier (each its own when apart) */
  double *rend;   /* [R]: when replica r's step ends (finish) */
  double *f, *b;  /* [R D]: compute of a micro-batch on stage s of r */
  double *ready;  /* [R D]: when stage s of r is ready to synchronise */
  double *nc;     /* [R]: its passes with free communication */
  double t_pipe;  /* every pipeline done */
  double period;
  double window;  /* hivemind, delayed: the next round's matchmaking
                     window, which the step's end waits for */
  double last;    /* GPipe: the last backward phase's start (latest) */
  unsigned gaps;  /* predict_result.left_out's bits found on the way */
} ctx;

/* Shares the phase counted on c's net (hop_net_solve): fill-shares where
 * a shared flow's rate changed while it sent. */
static void solve(ctx *c) {
  hop_net_solve(&c->net);
  if (c->net.nvaried) c->gaps |= gap_bit(PREDICT_GAP_FILL_SHARES);
  if (c->net.ncoupled) c->gaps |= gap_bit(PREDICT_GAP_CHAIN_SHARING);
  if (c->net.ncoupled_pass) c->gaps |= gap_bit(PREDICT_GAP_PASS_BOUNDARIES);
}

static void ctx_init(ctx *c, const spec_workload *w, const scenario *s,
                     const spec_gpu *const *gpu, const alloc *a,
                     const transport_options *o) {
  int R = w->replicas, D = w->stages;
  size_t n = (size_t)R * D;
  *c = (ctx){.w = w, .s = s, .gpu = gpu, .a = a, .R = R, .D = D,
             .K = w->micro_batches_per_pass, .P = w->passes,
             .act = compress_activation_bytes(w)};
  hop_net_init(&c->net, s, o);
  c->f = mem_alloc(3 * n * sizeof *c->f);
  c->b = c->f + n, c->ready = c->b + n;
  c->nc = mem_calloc(3 * (size_t)R, sizeof *c->nc);
  c->gr = c->nc + R, c->rend = c->gr + R;
  for (int r = 0; r < R; r++)
    for (int st = 0; st < D; st++) {
      int d = alloc_at(a, r, st);
      double k = spec_site_compute_factor(&s->sites[s->device_site[d]], gpu[d]);
      c->f[r * D + st] = roofline_stage_fwd_s(gpu[d], w, st) * k +
                         compress_stage_s(w, st, gpu[d], false);
      c->b[r * D + st] = roofline_stage_bwd_s(gpu[d], w, st) * k +
                         compress_stage_s(w, st, gpu[d], true);
    }
  switch (w->runtime) {
    case SPEC_RUNTIME_DTFM: /* its barriers (each replica's when apart) */
      for (int r = 0; r < R; r++) { /* c->g: the slowest */
        c->gr[r] = 1e-9 * (double)(spec_dp_algo_apart(w->dp_algo)
                                       ? runtime_replica_barrier_ns(s, a, r)
                                       : runtime_barrier_ns(s, a));
        c->g = fmax(c->g, c->gr[r]);
      }
      break;
    case SPEC_RUNTIME_MODERN: /* none: its passes follow on each device */
    case SPEC_RUNTIME_MEGATRON: break; /* none: its calls block */
  }
}

static void ctx_free(ctx *c) {
  hop_net_free(&c->net);
  free(c->f), free(c->nc);
}

static double most_of(const double *v, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, v[i]);
  return m;
}

/* The pace of K micro-batches of compute x: their rate, 1/s. */
static double pace(const ctx *c, double x) {
  return x > 0 ? 1 / (c->K * x) : INFINITY;
}

/* Counts every pipeline's boundaries s -> s + 1 on the NICs; each
 * pipeline's pass a tandem of boundaries carrying K activations each (the
 * backward pass the reversed phase), a boundary at most one micro-batch
 * per compute of the stage that sends it. */
static void count_pipelines(ctx *c) {
  hop_net_reset(&c->net);
  for (int r = 0; r < c->R; r++)
    for (int st = 0; st + 1 < c->D; st++) {
      int d = alloc_at(c->a, r, st), e = alloc_at(c->a, r, st + 1);
      size_t i = (size_t)r * c->D + st;
      double cf = pace(c, c->f[i]), cb = pace(c, c->b[i + 1]);
      if (st) hop_net_next(&c->net, 0, cf, cb);
      else hop_net_flow(&c->net, 0, cf, cb);
      if (!st) hop_net_pass(&c->net);
      if (!st && c->K == 1) hop_net_whole(&c->net);
      hop_net_count(&c->net, d, e, c->act, TRANSPORT_P2P_CHANNELS);
      hop_net_leg(&c->net, d, e, c->act, c->K * c->act, TRANSPORT_P2P_CHANNELS);
    }
  solve(c);
}

/* ---- GPipe ---- */

/* The servers of one phase, 2 D_pp - 1 of them in flow order: first job,
 * the others, the latency after each, a boundary's socket buffers over its
 * rate (hand), and compute alone (comp: free communication). */
typedef struct phase {
  double *first, *t, *delay, *hand, *comp;
} phase;

/* The servers of phase bwd of replica r (forward: stage 0, boundary
 * 0 -> 1, stage 1, ...; backward the other way). */
static void phase_servers(ctx *c, int r, bool bwd, phase v) {
  int D = c->D;
  double pace = 0; /* the slowest server so far: hop_paced */
  for (int i = 0; i < D; i++) {
    int st = bwd ? D - 1 - i : i, d = alloc_at(c->a, r, st), j = 2 * i + 1;
    double x = (bwd ? c->b : c->f)[r * D + st];
    v.first[j - 1] = v.t[j - 1] = v.comp[j - 1] = x;
    v.delay[j - 1] = v.hand[j - 1] = 0;
    pace = fmax(pace, x);
    if (i + 1 == D) break;
    int to = alloc_at(c->a, r, bwd ? st - 1 : st + 1);
    hop h = hop_of(&c->net, d, to, c->act, 1, TRANSPORT_P2P_CHANNELS);
    double extra = hop_first_extra(&c->net, &h, c->act, c->K, &x);
    v.t[j] = hop_paced(&c->net, &h, c->act, x, pace);
    v.first[j] = fmax(v.t[j], x + extra);
    v.delay[j] = h.lat;
    v.hand[j] = h.room * v.t[j] / c->act;
    v.comp[j] = 0;
    pace = fmax(pace, v.t[j]);
  }
}

/* Whether a stage's gradient messages queue behind its pipeline sends on
 * its send stream: of a group of two or more (one syncs nothing). */
static bool behind_sends(const ctx *c) {
  return c->R > 1 && spec_dp_algo_behind_sends(c->w->dp_algo);
}

/* Stage D - 1 - i of replica r, in its backward phase v: its last backward
 * ends, and where the gradient's messages queue behind it on the send
 * stream (behind_sends) its last send is in its buffers. */
static double gpipe_ready(const ctx *c, phase v, int i) {
  double done = tandem_span(0, 2 * i, c->K, v.first, v.t, v.delay);
  if (i + 1 == c->D || !behind_sends(c)) return done;
  int j = 2 * i + 1;
  double left = tandem_span(0, j, c->K, v.first, v.t, v.delay) - v.delay[j];
  return fmax(done, left - v.hand[j]);
}

/* The passes from the phases ph[bwd R + r]. With DT-FM's barriers the
 * last backward phase starts at max_r F_r + g + (P - 1) (max_r (F_r + B_r)
 * + g); where replicas barrier apart (spec_dp_algo_apart: hivemind's
 * peers, DiLoCo's inner steps) replica r's at F_r + g + (P - 1)
 * (F_r + B_r + g). Without barriers (the modern runtime) each replica's
 * passes follow each other alone: its last stage starts a backward phase
 * as its forward phase ends, its first stage the next pass as its
 * backward phase ends (it ends last), so replica r's last one starts at
 * F_r + (P - 1) (F_r + B_r). */
/* Whether every replica's passes pass one barrier (DT-FM's runtime, its
 * replicas not apart): their last backward phases start together. */
static bool passes_together(const ctx *c) {
  return runtime_of(c->w->runtime)->pass_barrier &&
         !spec_dp_algo_apart(c->w->dp_algo);
}

static void gpipe_barriers(ctx *c, const double *ph) {
  double fm = 0, bm = 0, fbm = 0;
  for (int r = 0; r < c->R; r++) {
    fm = fmax(fm, ph[r]), bm = fmax(bm, ph[c->R + r]);
    fbm = fmax(fbm, ph[r] + ph[c->R + r]);
  }
  bool barrier = runtime_of(c->w->runtime)->pass_barrier;
  bool together = passes_together(c);
  c->t_pipe = c->last = 0;
  for (int r = 0; r < c->R; r++) {
    double g = barrier ? c->gr[r] : 0;
    double f = (together ? fm : ph[r]) + g;
    double fb = (together ? fbm : ph[r] + ph[c->R + r]) + g;
    double b = together ? bm : ph[c->R + r];
    double last = f + (c->P - 1) * fb;
    for (int st = 0; st < c->D; st++) c->ready[(size_t)r * c->D + st] += last;
    c->t_pipe = fmax(c->t_pipe, last + b), c->last = fmax(c->last, last);
  }
}

static void gpipe(ctx *c) {
  int D = c->D, R = c->R, NS = 2 * D - 1;
  double *m = mem_alloc(5 * (size_t)NS * sizeof *m);
  double *ph = mem_alloc(2 * (size_t)R * sizeof *ph), *slow = mem_calloc((size_t)R, sizeof *slow);
  phase v = {.first = m, .t = m + NS, .delay = m + 2 * NS,
             .hand = m + 3 * NS, .comp = m + 4 * NS};
  count_pipelines(c);
  for (int bwd = 0; bwd < 2; bwd++) {
    c->net.swap = bwd;
    for (int r = 0; r < R; r++) {
      phase_servers(c, r, bwd, v);
      ph[bwd * R + r] = tandem_span(0, NS - 1, c->K, v.first, v.t, v.delay);
      c->nc[r] += c->P * tandem_span(0, NS - 1, c->K, v.comp, v.comp, NULL);
      slow[r] += most_of(v.t, NS);
      for (int i = 0; bwd && i < D; i++)
        c->ready[(size_t)r * D + D - 1 - i] = gpipe_ready(c, v, i);
    }
  }
  c->net.swap = false;
  gpipe_barriers(c, ph);
  c->period = most_of(slow, R);
  free(m), free(ph), free(slow);
}

/* ---- 1F1B ---- */

/* Whether a's flows to b and to e share a resource: under tc a's egress
 * shaper, one netem class (the same latency and bandwidth at t = 0, as
 * sim/net_res.c's shaper); under path shaping one shared path (b and e in
 * one site other than a's, neither pair overridden). */
static bool same_class(const hop_net *n, int a, int b, int e) {
  const scenario *s = n->s;
  if (n->path) {
    int p = scenario_path(s, a, b);
    return p >= 0 && p == scenario_path(s, a, e);
  }
  trace_value u = scenario_link(s, a, b, 0), v = scenario_link(s, a, e, 0);
  return u.latency_ms == v.latency_ms && u.bandwidth_gbps == v.bandwidth_gbps;
}

/* The pipe of replica r: its computes and its boundaries' hops (act[s]:
 * s -> s + 1, grad[s]: s -> s - 1, read with the counts swapped). */
static onef1b_pipe pipe_of(ctx *c, int r, hop *act, hop *grad, bool *shaper) {
  int D = c->D;
  for (int st = 0; st < D; st++) {
    int d = alloc_at(c->a, r, st);
    shaper[st] = st > 0 && st + 1 < D && transport_is_shared(c->net.o.model) &&
                 same_class(&c->net, d, alloc_at(c->a, r, st - 1),
                            alloc_at(c->a, r, st + 1));
    if (st + 1 < D)
      act[st] = hop_of(&c->net, d, alloc_at(c->a, r, st + 1), c->act, 1,
                       TRANSPORT_P2P_CHANNELS);
    c->net.swap = true;
    if (st > 0)
      grad[st] = hop_of(&c->net, d, alloc_at(c->a, r, st - 1), c->act, 1,
                        TRANSPORT_P2P_CHANNELS);
    c->net.swap = false;
  }
  bool meg = runtime_of(c->w->runtime)->blocking_calls;
  return (onef1b_pipe){.stages = D, .micro_batches = c->K,
                       .f = c->f + (size_t)r * D, .b = c->b + (size_t)r * D,
                       .act = act, .grad = grad, .shaper = shaper,
                       .bytes = c->act,
                       .megatron = meg, .call_s = runtime_p2p_call_s(c->w->runtime),
                       .net = &c->net};
}

static void onef1b(ctx *c) {
  int D = c->D;
  hop *h = mem_alloc(3 * (size_t)D * sizeof *h);
  bool *shaper = mem_alloc((size_t)D * sizeof *shaper);
  double *end = mem_alloc(2 * (size_t)D * sizeof *end), *sent = end + D;
  count_pipelines(c);
  if (c->net.nshared) c->gaps |= gap_bit(PREDICT_GAP_PASS_SHARING);
  for (int r = 0; r < c->R; r++) {
    onef1b_pipe p = pipe_of(c, r, h, h + D, shaper), q = onef1b_free(&p, h + 2 * D);
    for (int st = 0; st < D; st++) {
      if (shaper[st] && !p.megatron) c->gaps |= gap_bit(PREDICT_GAP_SHAPER_ORDER);
      if (predict_gap_two_ways(&c->net, c->a, r, st, c->act))
        c->gaps |= gap_bit(PREDICT_GAP_PASS_SHARING);
    }
    double pass = onef1b_pass(&p, end, sent);
    c->period = fmax(c->period, onef1b_period(&p));
    c->nc[r] = c->P * onef1b_pass(&q, NULL, NULL);
    c->t_pipe = fmax(c->t_pipe, c->P * pass);
    for (int st = 0; st < D; st++)
      c->ready[(size_t)r * D + st] =
          (c->P - 1) * pass +
          (p.megatron || !behind_sends(c) ? end[st] : fmax(end[st], sent[st]));
  }
  free(h), free(shaper), free(end);
}

/* ---- the tail ---- */

/* Scratch for one group: members, their ready and done times. */
typedef struct members {
  int *dev;
  double *rd, *done;
} members;

static members members_new(int n) {
  return (members){mem_alloc((size_t)n * sizeof(int)),
                 mem_alloc(2 * (size_t)n * sizeof(double)), NULL};
}

static void members_free(members *g) { free(g->dev), free(g->rd); }

/* Data-parallel group st: its members and their ready times. */
static members *column(const ctx *c, members *g, int st) {
  for (int r = 0; r < c->R; r++) {
    g->dev[r] = alloc_at(c->a, r, st);
    g->rd[r] = c->ready[(size_t)r * c->D + st];
  }
  g->done = g->rd + c->R;
  return g;
}

/* Every group's synchronisation at the net's solved shares: ready gets
 * the done times (dp_all's and dp_tail's: the gaps of both). */
static void run_groups(ctx *c, spec_dp_algo algo, members *g) {
  if (predict_gap_sync_beside_pass(&c->net, c->a, c->act,
                                   compress_gradient_bytes(c->w, 0)))
    c->gaps |= gap_bit(PREDICT_GAP_SYNC_BESIDE_PASS);
  switch (algo) { /* pieces to every member at once, beside the passes */
    case SPEC_SHARDED_PS:
      if (c->R > 2 && transport_is_shared(c->net.o.model))
        c->gaps |= gap_bit(PREDICT_GAP_SYNC_OVERLAP);
      break;
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_HIER_RING:
    case SPEC_HIVEMIND: /* matchmakes: hivemind_rounds */
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: break;
  }
  for (int st = 0; st < c->D; st++) {
    column(c, g, st);
    dpsync_run(&c->net, algo, g->dev, c->R, compress_gradient_bytes(c->w, st),
               TRANSPORT_NCCL_RING_CHANNELS, g->rd, g->done);
    for (int r = 0; r < c->R; r++) c->ready[(size_t)r * c->D + st] = g->done[r];
  }
}

/* Every group synchronises its gradient from ready (gets the done times). */
static void dp_all(ctx *c, spec_dp_algo algo) {
  if (spec_dp_algo_matchmakes(algo)) { /* hivemind's rounds, host included */
    if (c->R > 1) c->gaps |= gap_bit(PREDICT_GAP_HIVEMIND_ROUND);
    double win = hivemind_rounds(&c->net, c->w, c->a, c->ready);
    if (spec_dp_delayed(c->w)) c->window = win;
    return;
  }
  members g = members_new(c->R);
  hop_net_reset(&c->net);
  for (int st = 0; st < c->D; st++) {
    column(c, &g, st);
    dpsync_count(&c->net, algo, g.dev, c->R, compress_gradient_bytes(c->w, st),
                 TRANSPORT_NCCL_RING_CHANNELS, g.rd);
  }
  solve(c);
  run_groups(c, algo, &g);
  members_free(&g);
}

/* Megatron, per pipeline after its groups: the tied embedding's gradient
 * all-reduced between its first and last stage, then two scalar
 * all-reduces over its stages (ready gets the done times). */
static void megatron_rounds(ctx *c) {
  int D = c->D;
  if (D < 2) return;
  const spec_model *m = c->w->model;
  double emb = (double)m->vocab * m->hidden * m->value_bytes, *rd = c->ready;
  members g = members_new(D);
  if (predict_gap_ends_beside_pass(&c->net, c->a, c->act, emb))
    c->gaps |= gap_bit(PREDICT_GAP_SYNC_BESIDE_PASS);
  hop_net_reset(&c->net);
  for (int r = 0; r < c->R; r++) {
    int ends[2] = {alloc_at(c->a, r, 0), alloc_at(c->a, r, D - 1)};
    double at[2] = {rd[(size_t)r * D], rd[(size_t)r * D + D - 1]};
    dpsync_count(&c->net, SPEC_RING, ends, 2, emb, TRANSPORT_NCCL_RING_CHANNELS,
                 at);
  }
  solve(c);
  for (int r = 0; r < c->R; r++) {
    size_t o = (size_t)r * D;
    g.dev[0] = alloc_at(c->a, r, 0), g.dev[1] = alloc_at(c->a, r, D - 1);
    g.rd[0] = rd[o], g.rd[1] = rd[o + D - 1];
    dpsync_run(&c->net, SPEC_RING, g.dev, 2, emb, TRANSPORT_NCCL_RING_CHANNELS, g.rd, g.rd + D);
    rd[o] = g.rd[D], rd[o + D - 1] = g.rd[D + 1];
  }
  hop_net_reset(&c->net);
  for (int r = 0; r < c->R; r++) {
    for (int st = 0; st < D; st++) g.dev[st] = alloc_at(c->a, r, st);
    dpsync_count(&c->net, SPEC_RING, g.dev, D, 4.0 * D, TRANSPORT_NCCL_RING_CHANNELS,
                 rd + (size_t)r * D);
  }
  solve(c);
  for (int round = 0; round < 2; round++)
    for (int r = 0; r < c->R; r++) {
      for (int st = 0; st < D; st++)
        g.dev[st] = alloc_at(c->a, r, st), g.rd[st] = rd[(size_t)r * D + st];
      dpsync_run(&c->net, SPEC_RING, g.dev, D, 4.0 * D, TRANSPORT_NCCL_RING_CHANNELS, g.rd,
                 g.rd + D);
      for (int st = 0; st < D; st++) rd[(size_t)r * D + st] = g.rd[D + st];
    }
  members_free(&g);
}

/* Every device steps its optimizer once its synchronisation is done; then
 * DT-FM's last barrier (each replica's own when apart). *opt_last gets the
 * step of the device that ends last. Returns the iteration's end. */
static double finish(const ctx *c, double *opt_last) {
  bool apart = spec_dp_algo_apart(c->w->dp_algo);
  double floor = apart ? c->window : fmax(c->t_pipe, c->window), end = 0;
  *opt_last = 0;
  for (int r = 0; r < c->R; r++) {
    double er = floor, or = 0;
    for (int st = 0; st < c->D; st++) {
      int d = alloc_at(c->a, r, st);
      double o = runtime_step_s(c->w, c->gpu[d], st);
      if (!spec_is_diloco(c->w)) o += compress_sync_s(c->w, st, c->gpu[d]);
      double e = c->ready[(size_t)r * c->D + st] + o;
      if (e > er) er = e, or = o;
    }
    c->rend[r] = er + c->gr[r];
    if (er + c->gr[r] > end) end = er + c->gr[r], *opt_last = or;
  }
  return fmax(end, c->t_pipe);
}

/* The reported terms, from the replica slowest with free communication. */
static void breakdown(const ctx *c, double end, double opt_last,
                      predict_result *out) {
  int rs = 0;
  for (int r = 1; r < c->R; r++) if (c->nc[r] > c->nc[rs]) rs = r;
  double fa = 0, ba = 0, fs = 0, bs = 0;
  for (int r = 0; r < c->R; r++)
    for (int st = 0; st < c->D; st++) {
      double f = c->f[r * c->D + st], b = c->b[r * c->D + st];
      fa = fmax(fa, f), ba = fmax(ba, b);
      if (r == rs) fs = fmax(fs, f), bs = fmax(bs, b);
    }
  double cnb = fmin(c->nc[rs], c->t_pipe), comp = fmin(c->P * c->K * (fs + bs), cnb);
  double tail = end - c->t_pipe, opt = fmin(opt_last, tail);
  *out = (predict_result){
      .passes = c->P, .micro_batches = c->K, .fwd_s = fa, .bwd_s = ba,
      .period_s = c->period, .barrier_s = c->g, .compute_s = comp,
      .bubble_s = cnb - comp, .pp_comm_s = c->t_pipe - cnb,
      .dp_sync_s = tail - opt, .optimizer_s = opt};
  out->iteration_s = out->compute_s + out->bubble_s + out->pp_comm_s +
                     out->dp_sync_s + out->optimizer_s;
  /* The terms split [0, end): none negative, and they add up to it. */
  assert(!isfinite(end) ||
         (comp >= 0 && out->bubble_s >= 0 && out->pp_comm_s >= 0 &&
          out->dp_sync_s >= 0 && opt >= 0 &&
          fabs(out->iteration_s - end) <= 1e-9 * fmax(1, end)));
}

/* Fragment f's ring all-reduces, every stage group at once, member r of
 * stage st from rd[st R + r], its first message after the last one of the
 * exchange before on the same connection (left[st R + r]; gets this
 * one's): done[st R + r] when it has the result. */
static void fragment_ring(ctx *c, const diloco_plan *p, int f, double *rd,
                          double *done, double *left) {
  spec_dp_algo ex =
      c->w->given.exchange_levels > 1 ? SPEC_HIER_RING : SPEC_RING;
  members g = members_new(c->R);
  for (int i = 0; i < c->R * c->D; i++) rd[i] = fmax(rd[i], left[i]);
  hop_net_reset(&c->net);
  for (int st = 0; st < c->D; st++)
    dpsync_count(&c->net, ex, column(c, &g, st)->dev, c->R,
                 diloco_fragment_bytes(c->w, p, st, f),
                 TRANSPORT_DILOCO_CHANNELS, rd + st * c->R);
  solve(c);
  for (int st = 0; st < c->D; st++)
    dpsync_run_left(&c->net, ex, column(c, &g, st)->dev, c->R,
                    diloco_fragment_bytes(c->w, p, st, f),
                    TRANSPORT_DILOCO_CHANNELS, rd + st * c->R,
                    done + st * c->R, left + st * c->R);
  members_free(&g);
}

/* DiLoCo's outer step as the engine's shortcut runs it (sim/outer.h):
 * per fragment every replica's inner step from its own clock, the
 * exchange from each member's launch, each replica on from its own result
 * (diloco_exchange_land; what the tau overlapped steps do to the ring left
 * out); then the H - F (tau + 1) steps left at the slowest replica's. */
static void outer(ctx *c, predict_result *out) {
  diloco_plan p = diloco_plan_of(c->w);
  size_t n = (size_t)c->R * c->D;
  double *at = mem_calloc((size_t)c->R + 3 * n, sizeof *at), end = 0;
  double *rd = at + c->R, *done = rd + n, *left = done + n;
  for (int f = 0; f < p.fragments; f++) {
    for (int r = 0; r < c->R; r++) at[r] += c->rend[r];
    diloco_exchange_ready(c->w, c->a, c->gpu, &p, f, at, rd);
    fragment_ring(c, &p, f, rd, done, left); /* R = 1: done at rd */
    diloco_exchange_land(c->w, c->a, c->gpu, &p, f, c->rend, done, at);
  }
  for (int r = 0; r < c->R; r++) end = fmax(end, at[r]);
  free(at);
  double inner = out->iteration_s;
  double cycle = end + (p.inner_steps - p.fragments * (p.overlap + 1)) * inner;
  out->inner_step_s = inner, out->outer_step_s = cycle;
  out->dp_sync_s += (cycle - p.inner_steps * inner) / p.inner_steps;
  out->iteration_s = out->compute_s + out->bubble_s + out->pp_comm_s +
                     out->dp_sync_s + out->optimizer_s;
}

/* ---- GPipe: the last backward phase beside the synchronisation ---- */

/* Whether they may meet where one device's flows are not alone: a NIC of
 * a site's GPUs, or a path between sites (netem, tcp). */
static bool tail_meets(const ctx *c) {
  bool shared = c->net.path;
  for (int i = 0; i < c->s->nsites; i++) shared |= c->s->sites[i].nic_shared;
  return shared && transport_is_shared(c->net.o.model);
}

/* One phase: every pipeline's last backward pass from c->last (stage s ->
 * s - 1 a tandem, in the net's forward direction) and every group's
 * synchronisation from when its members are ready. */
static void count_tail(ctx *c, spec_dp_algo algo, members *g) {
  hop_net_reset(&c->net);
  for (int r = 0; r < c->R; r++)
    for (int st = c->D - 1; st > 0; st--) {
      int d = alloc_at(c->a, r, st), e = alloc_at(c->a, r, st - 1);
      double cb = pace(c, c->b[(size_t)r * c->D + st]);
      if (st + 1 < c->D) hop_net_next(&c->net, c->last, cb, cb);
      else hop_net_flow(&c->net, c->last, cb, cb);
      if (st + 1 == c->D) hop_net_pass(&c->net);
      if (st + 1 == c->D && c->K == 1) hop_net_whole(&c->net);
      hop_net_count(&c->net, d, e, c->act, TRANSPORT_P2P_CHANNELS);
      hop_net_leg(&c->net, d, e, c->act, c->K * c->act, TRANSPORT_P2P_CHANNELS);
    }
  for (int st = 0; st < c->D; st++) {
    column(c, g, st);
    dpsync_count(&c->net, algo, g->dev, c->R, compress_gradient_bytes(c->w, st),
                 TRANSPORT_NCCL_RING_CHANNELS, g->rd);
  }
  solve(c);
}

/* The last backward pass again at the tail's shares: ready times, t_pipe. */
static void backward_again(ctx *c) {
  int D = c->D, NS = 2 * D - 1;
  double *m = mem_alloc(5 * (size_t)NS * sizeof *m), bm = 0;
  phase v = {.first = m, .t = m + NS, .delay = m + 2 * NS,
             .hand = m + 3 * NS, .comp = m + 4 * NS};
  for (int r = 0; r < c->R; r++) { /* its legs run forward in the tail */
    phase_servers(c, r, true, v);
    bm = fmax(bm, tandem_span(0, NS - 1, c->K, v.first, v.t, v.delay));
    for (int i = 0; i < D; i++)
      c->ready[(size_t)r * D + D - 1 - i] = c->last + gpipe_ready(c, v, i);
  }
  c->t_pipe = c->last + bm, free(m);
}

/* dp_all with the last backward pass in the same phase: TAIL_ROUNDS
 * rounds of shares (from the ready times) and backward pass (to them). */
#define TAIL_ROUNDS 2
static void dp_tail(ctx *c, spec_dp_algo algo) {
  members g = members_new(c->R);
  for (int k = 0; k < TAIL_ROUNDS; k++) {
    count_tail(c, algo, &g);
    backward_again(c);
  }
  count_tail(c, algo, &g);
  run_groups(c, algo, &g);
  members_free(&g);
}

/* The passes and the synchronisation of one step under the runtime: DT-FM
 * and the modern runtime run the workload's schedule and dp algorithm
 * (gpipe asks whether passes wait for barriers); Megatron one 1F1B
 * schedule whatever the workload's, NCCL's ring all-reduce, then its
 * rounds. */
static void step(ctx *c) {
  const spec_workload *w = c->w;
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM:
      switch (w->schedule) {
        case SPEC_GPIPE:
          gpipe(c);
          if (spec_is_diloco(w)) return;
          if (tail_meets(c) && passes_together(c)) dp_tail(c, w->dp_algo);
          else dp_all(c, w->dp_algo);
          return;
        case SPEC_1F1B: onef1b(c); break;
      }
      if (!spec_is_diloco(w)) dp_all(c, w->dp_algo);
      return;
    case SPEC_RUNTIME_MEGATRON:
      onef1b(c);
      if (!spec_is_diloco(w)) dp_all(c, SPEC_RING);
      megatron_rounds(c);
      return;
  }
}

/* The gaps of the case predicted into out->left_out. */
static void gaps(ctx *c, predict_result *out) {
  diloco_plan p = diloco_plan_of(c->w);
  if (hop_restarts(&c->net)) c->gaps |= gap_bit(PREDICT_GAP_IDLE_RESTART);
  if (spec_is_diloco(c->w) && p.overlap > 0)
    c->gaps |= gap_bit(PREDICT_GAP_DILOCO_OVERLAP);
  double T = fmax(out->iteration_s, out->outer_step_s);
  double drift = predict_links_drift(c->s, c->a, T);
  if (drift > PREDICT_TOLERANCE) c->gaps |= gap_bit(PREDICT_GAP_LINKS_CHANGE);
  out->left_out = c->gaps;
  out->error_bound = c->gaps & gap_bit(PREDICT_GAP_LINKS_CHANGE)
                         ? drift : PREDICT_TOLERANCE;
  for (int g = 0; g < PREDICT_NGAPS; g++) /* links-change's bound is 0 */
    if (c->gaps & gap_bit((predict_gap)g))
      out->error_bound = fmax(out->error_bound, predict_gap_bound((predict_gap)g));
}

int predict_iteration_with(const spec_workload *w, const scenario *s,
                           const spec_gpu *const *gpu, const alloc *a,
                           const transport_options *o, predict_result *out) {
  ctx c;
  ctx_init(&c, w, s, gpu, a, o);
  step(&c);
  double opt_last, end = finish(&c, &opt_last);
  breakdown(&c, end, opt_last, out);
  if (spec_is_diloco(w)) outer(&c, out);
  gaps(&c, out);
  ctx_free(&c);
  return ERR_OK;
}

int predict_iteration(const spec_workload *w, const scenario *s,
                      const spec_gpu *const *gpu, const alloc *a,
                      predict_result *out) {
  return predict_iteration_with(w, s, gpu, a, NULL, out);
}
