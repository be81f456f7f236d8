/* test_train: the engine end to end (sim_run on hand-written scenarios)
 * against closed forms: a pipeline with free communication takes
 * (M + S - 1) forward+backward slots per pass (GPipe and 1F1B); ring
 * all-reduce = 2 (D-1) (alpha + S/(D beta)); central-ps = two pipelined
 * chains; sharded-ps = 2 (alpha + (D-1) S/(D beta)); back-to-back sends on
 * one stream overlap their latency; determinism; the built-in worldwide
 * sanity (random slower than dtfm-identity, tcp not faster than netem);
 * the timeline is valid JSON; bad allocations are refused; the edge list
 * reads back as built; a graph laid out by its run's order runs the same. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/simtime.h"
#include "models/predict.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/graph.h"
#include "sim/sim.h"
#include "sim/train.h"
#include "tests/support.h"

/* The graph-level tests below work netem's closed forms by hand (no TCP
 * window): they name it, the library default being tcp. */
static const transport_options NETEM = {.model = TRANSPORT_NETEM,
                                        .window_bytes = TRANSPORT_DTFM_WINDOW};

TestSuite(train, .init = support_dir_make, .fini = support_dir_remove);

/* A one-site scenario with uniform links, shaped as DT-FM's tc did (each
 * sender's egress shaped; its hosts' 1.45 MB window) under DT-FM's
 * runtime, whose closed forms the tests below work; returns it loaded. */
static scenario *uniform(int stages, int replicas, int layers, int batch,
                         int k, const char *sched, const char *algo,
                         double lat_ms, double gbps, double nic_gbps) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"u\", \"sites\": [{\"name\": \"a\", \"devices\": %d, "
           "\"gpu\": \"V100\", \"nic_gbps\": %g, \"tcp_window_bytes\": 1.45e6}],\n"
           "\"network\": {\"shaping\": \"tc\", \"latency_ms\": %g, "
           "\"bandwidth_gbps\": %g},\n"
           "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": %d, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": %d, \"replicas\": %d, "
           "\"micro_batches_per_pass\": %d, \"schedule\": \"%s\", "
           "\"dp_algo\": \"%s\", \"runtime\": \"dtfm\"}}\n",
           stages * replicas, nic_gbps, lat_ms, gbps, layers, batch, stages,
           replicas, k, sched, algo);
  const char *path = support_write_file(support_path("u.json"), text);
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

static sim_result run(const scenario *s, const alloc *a, transport_model m,
                      double scale) {
  sim_options o = sim_options_default();
  o.transport.model = m;
  o.compute_scale = scale;
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  return r;
}

/* The naive reference for one pipeline with free communication: each
 * stage runs its ops in schedule order (GPipe: all forwards, then all
 * backwards; 1F1B: min(S - s - 1, M) warm-up forwards, then alternate), an
 * op starting when the stage is free and its input is done (F(s, k) after
 * F(s - 1, k); B(s, k) after B(s + 1, k), the last stage's after its own
 * F). Passes follow each other, each stage's optimizer step ends it. The
 * ops are relaxed in rounds until nothing changes (a fixed point of the
 * max-plus recurrence). Returns the end in ns. */
#define REF_MAXS 8
#define REF_MAXM 16
static double naive_pipeline(bool gpipe, int S, int M, int P,
                             const sim_compute *c) {
  double F[REF_MAXS][REF_MAXM], B[REF_MAXS][REF_MAXM], start = 0, end = 0;
  for (int p = 0; p < P; p++) {
    for (int s = 0; s < S; s++)
      for (int k = 0; k < M; k++) F[s][k] = B[s][k] = -1;
    for (bool changed = true; changed;) {
      changed = false;
      for (int s = 0; s < S; s++) {
        double t = start; /* the stage's clock */
        int f = 0, b = 0, warm = S - s - 1 < M ? S - s - 1 : M;
        for (int j = 0; j < 2 * M; j++) {
          bool bwd = gpipe ? j >= M : (j >= warm && (j - warm) % 2 == 1) ||
                                          f == M;
          int k = bwd ? b++ : f++;
          double in = bwd ? (s + 1 < S ? B[s + 1][k] : F[s][k])
                          : (s > 0 ? F[s - 1][k] : start);
          if (in < 0) break; /* not known yet: next round */
          double done = fmax(t, in) + (double)(bwd ? c[s].bwd_ns : c[s].fwd_ns);
          double *slot = bwd ? &B[s][k] : &F[s][k];
          if (*slot != done) *slot = done, changed = true;
          t = done;
        }
      }
    }
    start = B[0][M - 1];
    for (int s = 0; s < S; s++) end = fmax(end, B[s][M - 1]);
  }
  for (int s = 0; s < S; s++) end = fmax(end, B[s][M - 1] + (double)c[s].opt_ns);
  return end;
}

static void free_comm_pipeline(const char *sched, int S, int M, int P) {
  /* 1e8 Gbit/s, no delay: an 8 MiB activation takes 0.67 ns (1 ns). */
  scenario *s = uniform(S, 1, 2 * S, M * P, M, sched, "ring", 0, 1e8, 1e8);
  alloc *a = alloc_identity(1, S);
  sim_result r = run(s, a, TRANSPORT_NETEM, 1);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  sim_compute c[REF_MAXS];
  for (int st = 0; st < S; st++)
    c[st] = sim_train_compute(&w, st, spec_gpu_find("V100"), 1, 1);
  double want = naive_pipeline(strcmp(sched, "gpipe") == 0, S, M, P, c);
  /* each of the 2 P M (S-1) transfers may round up by 1 ns */
  cr_assert(fabs(r.iteration_s * 1e9 - want) <= 2.0 * P * M * S + 2,
            "%s S %d M %d P %d: %.0f ns, want %.0f", sched, S, M, P,
            r.iteration_s * 1e9, want);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(train, gpipe_free_communication_matches_the_naive_recurrence) {
  free_comm_pipeline("gpipe", 4, 8, 1);
  free_comm_pipeline("gpipe", 4, 8, 2);
  free_comm_pipeline("gpipe", 8, 3, 1);
  free_comm_pipeline("gpipe", 1, 5, 3);
}

Test(train, one_f_one_b_free_communication_matches_the_naive_recurrence) {
  free_comm_pipeline("1f1b", 4, 8, 1);
  free_comm_pipeline("1f1b", 4, 8, 2);
  free_comm_pipeline("1f1b", 8, 3, 1);
  free_comm_pipeline("1f1b", 6, 12, 1);
}

Test(train, equal_stages_take_m_plus_s_minus_1_slots) {
  /* the closed form where the stages are alike: without the last stage's
   * head, every stage computes the same: (M + S - 1) slots a pass */
  sim_compute c[REF_MAXS];
  for (int s = 0; s < 4; s++) c[s] = (sim_compute){10, 30, 5};
  cr_assert_float_eq(naive_pipeline(true, 4, 8, 1, c), 11 * 40 + 5, 1e-9);
  cr_assert_float_eq(naive_pipeline(false, 4, 8, 1, c), 11 * 40 + 5, 1e-9);
  cr_assert_float_eq(naive_pipeline(true, 4, 8, 2, c), 2 * 11 * 40 + 5, 1e-9);
}

/* DT-FM's two barriers of a one-pass iteration (between its phases, and
 * after the optimizer), each a dissemination barrier over D ranks:
 * ceil(log2 D) rounds of one latency on a uniform network. */
static double barriers_s(int D, double lat_ms) {
  return 2 * ceil(log2(D)) * lat_ms * 1e-3;
}

/* One stage, D replicas, no compute: the iteration is the gradient sync
 * and DT-FM's barriers. */
static double sync_time(const char *algo, int D, double lat_ms, double gbps,
                        double *bytes) {
  scenario *s = uniform(1, D, 2, D, 1, "gpipe", algo, lat_ms, gbps, 1e6);
  alloc *a = alloc_identity(D, 1);
  sim_result r = run(s, a, TRANSPORT_NETEM, 1e-12);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  *bytes = spec_stage_gradient_bytes(&w, 0);
  double t = r.iteration_s;
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
  return t;
}

/* NCCL's ring on a long link: 8 members 50 ms apart pay 2 (D - 1) = 14
 * latencies per loop of 2 x 8 x 2 MiB, not 14 in all: the gradient of one
 * gpt3-xl stage of 2 layers (about 200 MB) runs 6 loops. */
Test(train, ring_on_a_long_link_pays_nccl_loops) {
  double S, beta = 1.25e9;
  double t = sync_time("ring", 8, 50, 10, &S);
  int L, sl;
  double p;
  support_ring_plan(S, 8, &L, &sl, &p);
  cr_assert_gt(L, 3, "%d loops", L);
  double want = support_ring_uniform_s(S, 8, 0.050, beta) + barriers_s(8, 50);
  cr_assert(fabs(t - want) < 1e-6, "%.9f vs %.9f", t, want);
  double once = 14 * (0.050 + S / (8 * beta)) + barriers_s(8, 50);
  cr_assert_gt(t, once + 0.9 * (L - 1) * 14 * 0.050, "%.3f vs %.3f", t, once);
}

Test(train, ring_all_reduce_closed_form) {
  int Ds[] = {2, 4, 8};
  for (int i = 0; i < 3; i++) {
    double S, D = Ds[i], beta = 1.25e9 / 8 * 8; /* bytes/s at 10 Gbit/s */
    double t = sync_time("ring", Ds[i], 20, 10, &S);
    /* NCCL's ring by hand: loops of 2 (D - 1) latency-bound steps */
    double want = support_ring_uniform_s(S, Ds[i], 0.020, beta) +
                  barriers_s(Ds[i], 20);
    cr_assert(fabs(t - want) < 1e-6, "D %g: %.9f vs %.9f", D, t, want);
  }
}

/* NCCL's ring on a window-bound link (issue 18): one socket per
 * connection (a generic NIC), a 1.45 MB window over a 40 ms round trip,
 * 10 Gbit/s links. The ring runs on NCCL's 2 ring channels, each its own
 * connection, so a message leaves at 2 windows per RTT (72.5 MB/s), not
 * one connection's 36.25 MB/s; the predictor's ring agrees with the
 * engine. */
Test(train, ring_on_a_window_bound_link_runs_two_channels) {
  int D = 4;
  scenario *s = uniform(1, D, 2, D, 1, "gpipe", "ring", 20, 10, 1e6);
  cr_assert_eq(s->sites[0].nccl_sockets, 1);
  alloc *a = alloc_identity(D, 1);
  sim_result r = run(s, a, TRANSPORT_TCP, 1e-12);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  double S = spec_stage_gradient_bytes(&w, 0), W = TRANSPORT_DTFM_WINDOW;
  double beta = TRANSPORT_NCCL_RING_CHANNELS * W / 0.040;
  double ring = support_ring_uniform_s(S, D, 0.020, beta);
  double want = ring + barriers_s(D, 20);
  cr_assert(fabs(r.iteration_s - want) < 1e-6, "%.9f vs %.9f", r.iteration_s,
            want);
  double one = support_ring_uniform_s(S, D, 0.020, W / 0.040);
  cr_assert_gt(one, 1.9 * ring, "one connection: %.3f s, 2 channels: %.3f s",
               one, ring);
  int grp[4] = {0, 1, 2, 3};
  transport_options tcp = transport_options_default();
  cr_assert_float_eq(predict_dp_sync_s(s, SPEC_RING, grp, D, S, &tcp), ring,
                     1e-9 * ring);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(train, central_ps_is_two_pipelined_chains) {
  int Ds[] = {2, 3, 8};
  for (int i = 0; i < 3; i++) {
    double S, D = Ds[i], beta = 1.25e8; /* 1 Gbit/s */
    double t = sync_time("central-ps", Ds[i], 50, 1, &S);
    double C = fmin(ceil(S / TRANSPORT_NCCL_CHUNK_BYTES), TRANSPORT_NCCL_MAX_CHUNKS);
    double c = S / C;
    double op = (D - 1) * (0.050 + c / beta) + (C - 1) * c / beta;
    double want = 2 * op + barriers_s(Ds[i], 50);
    cr_assert(fabs(t - want) < 1e-6, "D %g: %.9f vs %.9f", D, t, want);
  }
}

/* Three sites A, B, C of one device, 10 ms and 1 Gbit/s every way but
 * B -> A at 0.1 Gbit/s. NCCL's ring reduce to A runs B -> C -> A
 * (src/device/reduce.h: the root's successor sends first, the root
 * receives last), its broadcast A -> B -> C: the engine's central-ps
 * never crosses B -> A, so each is a two-hop chain at 1 Gbit/s. */
Test(train, central_ps_reduce_runs_nccl_ring_order) {
  const char *text = support_three_asymmetric(
      "\"layers\": 2, \"batch\": 3, \"micro_batch\": 1, "
      "\"micro_batches_per_pass\": 1, \"dp_algo\": \"central-ps\", "
      "\"runtime\": \"dtfm\"");
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "three.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  alloc *a = alloc_identity(3, 1);
  sim_result r = run(s, a, TRANSPORT_NETEM, 1e-12);
  double S = spec_stage_gradient_bytes(&w, 0), beta = 1.25e8;
  double C = fmin(ceil(S / TRANSPORT_NCCL_CHUNK_BYTES), TRANSPORT_NCCL_MAX_CHUNKS);
  double c = S / C, op = 2 * (0.010 + c / beta) + (C - 1) * c / beta;
  double want = 2 * op + barriers_s(3, 10);
  cr_assert(fabs(r.iteration_s - want) < 1e-4, "%.9f vs %.9f", r.iteration_s,
            want);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* A network whose one-way latency drops from 100 ms to 1 ms at 135 ms
 * (10 Gbit/s throughout): chunks that leave before the drop arrive after
 * chunks that leave after it. */
static trace_value drop_link(const void *ctx, int a, int b, int64_t t) {
  (void)ctx, (void)a, (void)b;
  return (trace_value){.latency_ms = t < 135000000 ? 100 : 1, .bandwidth_gbps = 10};
}

static int64_t drop_next(const void *ctx, int64_t t) {
  (void)ctx;
  return t < 135000000 ? 135000000 : TRACE_NEVER;
}

/* central-ps, 2 replicas, 8 chunks of 4 MiB: the broadcast's first chunks
 * leave before the drop, the last after it and arrives first. The last
 * member's gradient is complete only when every chunk has arrived, so its
 * sync (and optimizer step) cannot come before the latest chunk. */
Test(train, central_ps_sync_waits_for_every_chunk) {
  scenario *s = uniform(1, 2, 2, 2, 1, "gpipe", "central-ps", 0, 10, 10);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  alloc *a = alloc_identity(2, 1);
  const spec_gpu *gpu[2] = {spec_gpu_find("V100"), spec_gpu_find("V100")};
  double grad = 8 * TRANSPORT_NCCL_CHUNK_BYTES;
  sim_graph *g = sim_graph_new();
  sim_train_marks mk;
  double factor[2] = {1, 1};
  sim_train_inputs in = {.w = &w, .a = a, .gpu = gpu, .factor = factor,
                         .compute_scale = 1e-12, .grad_bytes = &grad};
  sim_train_build(g, &in, &mk);
  sim_net_topo topo = {.ndevices = 2, .link = drop_link, .next_change = drop_next};
  cr_assert_geq(sim_graph_run(g, &topo, &NETEM), 0);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  int64_t last = 0, first = INT64_MAX;
  for (uint32_t i = 0; i < n; i++)
    if (t[i].role == SIM_ROLE_DP && t[i].dst == 1) {
      if (t[i].t_done > last) last = t[i].t_done;
      if (t[i].t_done < first) first = t[i].t_done;
    }
  /* the set-up does what it says: chunk arrivals straddle the drop */
  cr_assert_gt(last - first, 50000000, "%lld .. %lld", (long long)first,
               (long long)last);
  cr_assert_geq(t[mk.sync[1]].t_done, last, "sync %lld before chunk %lld",
                (long long)t[mk.sync[1]].t_done, (long long)last);
  cr_assert_geq(t[mk.opt[1]].t_start, last);
  sim_train_marks_free(&mk);
  sim_graph_free(g);
  alloc_free(a);
  scenario_free(s);
}

/* Bytes per link class against a hand count: sites A and B of 2 devices,
 * 2 stages x 2 replicas, identity (pipeline r inside site r), ring: inside
 * each site 2 P M activations + gradients; across, per stage 2 ring steps
 * of half the gradient each way. Sorted by bytes, then sites. */
Test(train, link_classes_count_the_bytes_between_sites) {
  const char *path = support_write_file(
      support_path("two.json"),
      "{\"name\": \"two\", \"sites\": [{\"name\": \"A\", \"devices\": 2, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}, {\"name\": \"B\", \"devices\": "
      "2, \"gpu\": \"V100\", \"nic_gbps\": 10}],\n"
      "\"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 10},\n"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 12, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2, "
      "\"micro_batches_per_pass\": 3, \"dp_algo\": \"ring\"}}\n");
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_not_null(s, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  alloc *a = alloc_identity(2, 2);
  sim_result r = run(s, a, TRANSPORT_NETEM, 1);
  double act = spec_activation_bytes(&w), pm = 2.0 * 3; /* P M */
  double dp = spec_stage_gradient_bytes(&w, 0) +
              spec_stage_gradient_bytes(&w, 1);
  cr_assert_eq(r.nclasses, 4);
  uint64_t flows = 0;
  for (int i = 0; i < 4; i++) {
    const sim_link_class *c = &r.classes[i];
    flows += c->flows;
    bool inside = c->src_site == c->dst_site;
    cr_assert_float_eq(c->bytes, inside ? 2 * pm * act : dp, 1e-3 * act,
                       "%d -> %d: %.0f", c->src_site, c->dst_site, c->bytes);
    /* each stage's ring: one member's messages each way (NCCL's loops) */
    int L, sl;
    double piece;
    uint64_t K = (uint64_t)support_ring_plan(spec_stage_gradient_bytes(&w, 0),
                                             2, &L, &sl, &piece) +
                 (uint64_t)support_ring_plan(spec_stage_gradient_bytes(&w, 1),
                                             2, &L, &sl, &piece);
    cr_assert_eq(c->flows, inside ? 2 * pm : K);
    if (i) {
      const sim_link_class *p = &r.classes[i - 1];
      cr_assert(p->bytes > c->bytes ||
                (p->bytes == c->bytes && (p->src_site < c->src_site ||
                 (p->src_site == c->src_site && p->dst_site < c->dst_site))));
    }
  }
  cr_assert_eq(flows, r.flows);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* A batch whose task graph would overflow the engine's 32-bit task and
 * edge indices is refused before anything is built (it used to wrap the
 * ids, or to grow until memory ran out), naming the file, line and
 * field; the bound counts what the builder adds. */
Test(train, huge_batch_is_refused_not_wrapped) {
  scenario *s = uniform(8, 8, 24, 1 << 25, 64, "gpipe", "central-ps", 1, 1,
                        10);
  alloc *a = alloc_identity(8, 8);
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, NULL, &r, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "u.json:3: workload.batch: 33554432") != NULL,
            "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
  /* the bound holds for every schedule and algorithm on a small case, at
   * the spec's gradient (the bound's chunks and ring cuts are its) */
  const char *algos[] = {"central-ps", "ring", "sharded-ps", "hier-ring"};
  const char *scheds[] = {"gpipe", "1f1b"};
  int own[12]; /* hier-ring at its most: every device a site of its own */
  for (int d = 0; d < 12; d++) own[d] = d;
  for (int i = 0; i < 8; i++) {
    s = uniform(3, 4, 6, 24, 2, scheds[i % 2], algos[i / 2], 1, 1, 10);
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    a = alloc_identity(4, 3);
    const spec_gpu *gpu[12];
    for (int d = 0; d < 12; d++) gpu[d] = spec_gpu_find("V100");
    sim_graph *g = sim_graph_new();
    sim_train_marks mk;
    double factor[12];
    for (int d = 0; d < 12; d++) factor[d] = 1;
    sim_train_inputs in = {.w = &w, .a = a, .gpu = gpu, .factor = factor,
                           .compute_scale = 1, .device_site = own};
    sim_train_build(g, &in, &mk);
    uint32_t n;
    sim_graph_tasks(g, &n);
    cr_assert_leq(n, sim_train_task_bound(&w, 4), "%s %s: %u tasks",
                  scheds[i % 2], algos[i / 2], n);
    sim_train_marks_free(&mk);
    sim_graph_free(g);
    alloc_free(a);
    scenario_free(s);
  }
}

/* Issue 24, 4: a device whose iteration of compute would last past the
 * span a simulation covers (compute_efficiency 1e-12, in the accepted
 * range) is refused before the graph is built: the compute times would
 * wrap int64 nanoseconds. The same check passes a device at the limit. */
Test(train, compute_past_the_span_is_refused_not_wrapped) {
  scenario *s = uniform(2, 1, 2, 1, 1, "gpipe", "central-ps", 1, 1, 10);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  alloc *a = alloc_identity(1, 2);
  const spec_gpu *gpu[2] = {spec_gpu_find("V100"), spec_gpu_find("V100")};
  double factor[2] = {1, 1};
  sim_train_inputs in = {.w = &w, .a = a, .gpu = gpu, .factor = factor,
                         .compute_scale = 1};
  err e = {0};
  cr_expect_eq(sim_train_check_compute(&in, s, &e), ERR_OK, "%s", e.msg);
  sim_compute c = sim_train_compute(&w, 1, gpu[1], 1, 1);
  double work = (double)(c.fwd_ns + c.bwd_ns + c.opt_ns) * 1e-9;
  factor[1] = 0.99 * SIMTIME_LIMIT_S / work; /* just inside: still fine */
  cr_expect_eq(sim_train_check_compute(&in, s, &e), ERR_OK, "%s", e.msg);
  factor[1] = 1e12; /* a host 1e12 times slower than the GPU */
  cr_expect_eq(sim_train_check_compute(&in, s, &e), ERR_RANGE);
  cr_expect(strstr(e.msg, "u: device 1 (V100, site a) computes stage 1 of "
                   "one iteration in ") != NULL, "%s", e.msg);
  cr_expect(strstr(e.msg, "past " SIMTIME_LIMIT_TEXT) != NULL, "%s", e.msg);
  sim_result r;
  cr_expect_eq(sim_run(s, a, NULL, &r, &e), ERR_OK, "the scenario itself runs");
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(train, sharded_ps_closed_form) {
  int Ds[] = {2, 4};
  for (int i = 0; i < 2; i++) {
    double S, D = Ds[i], beta = 1.25e8;
    double t = sync_time("sharded-ps", Ds[i], 30, 1, &S);
    double want = 2 * (0.030 + (D - 1) * S / (D * beta)) + barriers_s(Ds[i], 30);
    cr_assert(fabs(t - want) < 1e-6, "D %g: %.9f vs %.9f", D, t, want);
  }
}

static trace_value flat(const void *ctx, int a, int b, int64_t t) {
  (void)ctx, (void)a, (void)b, (void)t;
  return (trace_value){.latency_ms = 50, .bandwidth_gbps = 1};
}

Test(train, back_to_back_sends_on_one_stream_overlap_latency) {
  sim_net_topo topo = {.ndevices = 3, .link = flat};
  sim_graph *g = sim_graph_new();
  uint32_t send = SIM_GRAPH_NONE;
  uint32_t x1 = sim_graph_xfer(g, 0, 1, 1e7, SIM_ROLE_ACT, 0);
  uint32_t x2 = sim_graph_xfer(g, 0, 2, 1e7, SIM_ROLE_ACT, 1);
  sim_graph_stream(g, &send, x1, SIM_ON_LEFT);
  sim_graph_stream(g, &send, x2, SIM_ON_LEFT);
  cr_assert_gt(sim_graph_run(g, &topo, &NETEM), 0);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  /* x1's send completes when its last 1.45 MB (one socket's buffer) fit:
   * (1e7 - 1.45e6) B at 0.125 B/ns; the shaper carries both from then on */
  cr_assert_eq(t[x2].t_start, 68400000);
  cr_assert_eq(t[x2].t_done, 210000000); /* 2 x 80 + 50 ms, not 260 */
  sim_graph_free(g);
  /* a cycle is reported, not hung on */
  g = sim_graph_new();
  x1 = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 0);
  x2 = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 1);
  sim_graph_edge(g, x1, x2, SIM_ON_DONE);
  sim_graph_edge(g, x2, x1, SIM_ON_DONE);
  cr_assert_eq(sim_graph_run(g, &topo, &NETEM), -1);
  sim_graph_free(g);
}

/* One run of g from 0 over topo under o at speeds sp (NULL: 1), its rate
 * log kept: the records (a copy), the log and the events. */
typedef struct graph_ran {
  sim_task *t;
  uint32_t n;
  sim_rate_log log;
  int64_t events;
} graph_ran;

static graph_ran graph_run_logged(sim_graph *g, const sim_net_topo *topo,
                                  const transport_options *o,
                                  const sim_graph_speed *sp) {
  graph_ran r = {0};
  bool stopped;
  sim_graph_attach(g, topo, o, SIM_NET_WARM);
  sim_graph_log_rates(g, &r.log);
  r.events = sim_graph_run_at(g, 0, INT64_MAX, sp, &stopped);
  sim_graph_detach(g);
  const sim_task *t = sim_graph_tasks(g, &r.n);
  r.t = malloc(r.n * sizeof *r.t);
  memcpy(r.t, t, r.n * sizeof *r.t);
  return r;
}

static void graph_same_run(const graph_ran *x, const graph_ran *y) {
  cr_assert_eq(x->events, y->events);
  cr_assert_eq(x->n, y->n);
  cr_assert(memcmp(x->t, y->t, x->n * sizeof *x->t) == 0, "the records");
  cr_assert_eq(x->log.n, y->log.n);
  for (size_t k = 0; k < x->log.n; k++)
    cr_assert(x->log.v[k].t == y->log.v[k].t &&
                  x->log.v[k].tag == y->log.v[k].tag &&
                  memcmp(&x->log.v[k].rate, &y->log.v[k].rate,
                         sizeof(double)) == 0,
              "rate change %zu", k);
}

/* Odd devices compute at half speed from 1 ms on. */
static double half_speed(const void *ctx, int dev, int64_t t) {
  (void)ctx;
  return dev % 2 && t >= 1000000 ? 0.5 : 1;
}

static int64_t half_next(const void *ctx, int64_t t) {
  (void)ctx;
  return t < 1000000 ? 1000000 : INT64_MAX;
}

/* Issue 37: a graph laid out in the order its last run started the tasks
 * (sim_graph_relayout; run ids apart from task ids) runs as before, bit
 * for bit: its records in task ids, its rate log naming task ids, its
 * events, under netem and tcp, with and without device speeds (which read
 * a task's role through the layout), on the first laid-out run and the
 * next. Hier-ring over 12 sites of 1F1B stages, whose run order is not the
 * builder's. */
Test(train, a_graph_laid_out_by_its_run_runs_the_same) {
  scenario *s = uniform(3, 4, 6, 24, 2, "1f1b", "hier-ring", 1, 1, 10);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  alloc *a = alloc_identity(4, 3);
  const spec_gpu *gpu[12];
  int own[12];
  double factor[12];
  for (int d = 0; d < 12; d++)
    gpu[d] = spec_gpu_find("V100"), own[d] = d, factor[d] = 1;
  sim_train_inputs in = {.w = &w, .a = a, .gpu = gpu, .factor = factor,
                         .compute_scale = 1, .device_site = own};
  sim_net_topo topo = {.ndevices = 12, .link = flat};
  const sim_graph_speed half = {NULL, half_speed, half_next};
  const transport_options models[] = {NETEM, transport_options_default()};
  for (int m = 0; m < 2; m++)
    for (int v = 0; v < 2; v++) {
      const sim_graph_speed *sp = v ? &half : NULL;
      sim_graph *g = sim_graph_new();
      sim_train_marks mk;
      sim_train_build(g, &in, &mk);
      graph_ran ids = graph_run_logged(g, &topo, &models[m], sp);
      cr_assert_gt(ids.events, 0);
      cr_assert_gt(ids.log.n, 0);
      bool reordered = false; /* the layout is not the identity */
      for (uint32_t i = 1; i < ids.n && !reordered; i++)
        reordered = ids.t[i].t_start < ids.t[i - 1].t_start;
      cr_assert(reordered);
      sim_graph_relayout(g);
      for (int k = 0; k < 2; k++) {
        graph_ran laid = graph_run_logged(g, &topo, &models[m], sp);
        graph_same_run(&ids, &laid);
        free(laid.t);
        sim_rate_log_free(&laid.log);
      }
      free(ids.t);
      sim_rate_log_free(&ids.log);
      sim_train_marks_free(&mk);
      sim_graph_free(g);
    }
  alloc_free(a);
  scenario_free(s);
}

/* A small graph of k stages: per stage a compute fanned out to three
 * transfers (more successors than fit inline) joined by a barrier. */
static void build_fan(sim_graph *g, int k) {
  uint32_t prev = SIM_GRAPH_NONE, send = SIM_GRAPH_NONE;
  for (int i = 0; i < k; i++) {
    uint32_t c = sim_graph_compute(g, 0, 1000 * (i + 1), SIM_ROLE_FWD, i);
    if (prev != SIM_GRAPH_NONE) sim_graph_edge(g, prev, c, SIM_ON_DONE);
    uint32_t j = sim_graph_join(g, -1, SIM_ROLE_BARRIER);
    for (int d = 1; d <= 3; d++) {
      uint32_t x = sim_graph_xfer(g, 0, d, 1e6 * d, SIM_ROLE_ACT, i);
      sim_graph_edge(g, c, x, SIM_ON_DONE);
      sim_graph_stream(g, &send, x, SIM_ON_LEFT);
      sim_graph_edge(g, x, j, SIM_ON_DONE);
    }
    prev = j;
  }
}

Test(train, cleared_graph_runs_like_a_fresh_one) {
  sim_net_topo topo = {.ndevices = 4, .link = flat};
  sim_graph *g = sim_graph_new();
  build_fan(g, 7);
  cr_assert_gt(sim_graph_run(g, &topo, &NETEM), 0);
  sim_graph_clear(g);
  build_fan(g, 3); /* smaller: the kept arrays hold stale tasks beyond n */
  int64_t ev = sim_graph_run(g, &topo, &NETEM);
  sim_graph *f = sim_graph_new();
  build_fan(f, 3);
  cr_assert_eq(sim_graph_run(f, &topo, &NETEM), ev);
  uint32_t n, nf;
  const sim_task *t = sim_graph_tasks(g, &n), *tf = sim_graph_tasks(f, &nf);
  cr_assert_eq(n, nf);
  cr_assert_eq(n, 3 * 5);
  cr_assert_eq(sim_graph_end(g), sim_graph_end(f));
  cr_assert_eq(sim_graph_flows(g), 9);
  uint32_t succ = 0;
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_eq(memcmp(&t[i], &tf[i], sizeof t[i]), 0, "task %u", i);
    cr_assert_geq(t[i].t_done, t[i].t_left);
    cr_assert_geq(t[i].t_left, t[i].t_start);
    cr_assert_eq(t[i].deps, 0);
    cr_assert_eq(t[i].succ, succ); /* CSR offsets in task order */
    succ += t[i].nleft + t[i].ndone;
  }
  cr_assert_eq(t[0].ndone, 3); /* the compute fans out to three transfers */
  sim_graph_free(f);
  /* a cycle after a clear: unstarted tasks keep their pending counts */
  sim_graph_clear(g);
  uint32_t a = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 0);
  uint32_t b = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 1);
  uint32_t c = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 2);
  sim_graph_edge(g, a, b, SIM_ON_DONE);
  sim_graph_edge(g, b, a, SIM_ON_DONE);
  sim_graph_edge(g, c, a, SIM_ON_DONE);
  cr_assert_eq(sim_graph_run(g, &topo, &NETEM), -1);
  t = sim_graph_tasks(g, &n);
  cr_assert_eq(n, 3);
  cr_assert_eq(t[a].deps, 1); /* c fired, b never did */
  cr_assert_eq(t[b].deps, 1);
  cr_assert_eq(t[a].t_start, -1);
  cr_assert_eq(t[c].t_done, 5);
  sim_graph_free(g);
}

/* A trimmed graph (issue 37: explain's critical path reads the records
 * and edges of a run of 10^4 devices after its run-time arrays are gone)
 * keeps both as they were, and runs again like a fresh one. */
Test(train, trimmed_graph_keeps_records_and_edges) {
  sim_net_topo topo = {.ndevices = 4, .link = flat};
  sim_graph *g = sim_graph_new(), *f = sim_graph_new();
  build_fan(g, 4);
  build_fan(f, 4);
  int64_t ev = sim_graph_run(g, &topo, &NETEM);
  cr_assert_gt(ev, 0);
  uint32_t n, nf;
  size_t ne, nef;
  const sim_task *t = sim_graph_tasks(g, &n);
  sim_task *before = malloc(n * sizeof *before);
  memcpy(before, t, n * sizeof *t);
  int64_t end = sim_graph_end(g);
  sim_graph_trim(g);
  t = sim_graph_tasks(g, &n);
  cr_assert_eq(n, 4 * 5);
  cr_assert_eq(memcmp(t, before, n * sizeof *t), 0, "the records stay");
  cr_assert_eq(sim_graph_end(g), end);
  const sim_edge *e = sim_graph_edges(g, &ne);
  cr_assert_eq(sim_graph_run(f, &topo, &NETEM), ev);
  const sim_edge *ef = sim_graph_edges(f, &nef);
  cr_assert_eq(ne, nef);
  for (size_t k = 0; k < ne; k++) /* field by field: an edge has padding */
    cr_assert(e[k].a == ef[k].a && e[k].b == ef[k].b &&
                  e[k].when == ef[k].when,
              "the edges stay: %zu", k);
  cr_assert_eq(sim_graph_run(g, &topo, &NETEM), ev, "it runs again");
  const sim_task *tf = sim_graph_tasks(f, &nf);
  t = sim_graph_tasks(g, &n);
  cr_assert_eq(memcmp(t, tf, n * sizeof *t), 0);
  free(before);
  sim_graph_free(g);
  sim_graph_free(f);
}

/* sim_graph_edges lists the edges as added (a reader runs the same graph
 * elsewhere: tests/simgrid): a non-transfer's LEFT reads DONE, a receive
 * stream's link is SIM_EDGE_ORDER, and the run's CSR counts agree. */
Test(train, edges_are_listed_as_added) {
  sim_net_topo topo = {.ndevices = 3, .link = flat};
  sim_graph *g = sim_graph_new();
  uint32_t c = sim_graph_compute(g, 0, 5, SIM_ROLE_FWD, 0);
  uint32_t x1 = sim_graph_xfer(g, 0, 1, 1e6, SIM_ROLE_ACT, 0);
  uint32_t x2 = sim_graph_xfer(g, 2, 1, 1e6, SIM_ROLE_ACT, 1);
  uint32_t j = sim_graph_join(g, 1, SIM_ROLE_SYNC), rs = SIM_GRAPH_NONE;
  sim_graph_edge(g, c, x1, SIM_ON_DONE);
  sim_graph_edge(g, c, x2, SIM_ON_LEFT);
  sim_graph_recv_stream(g, &rs, x1);
  sim_graph_recv_stream(g, &rs, x2);
  sim_graph_edge(g, x1, j, SIM_ON_LEFT);
  sim_graph_edge(g, x2, j, SIM_ON_DONE);
  const sim_edge want[] = {{c, x1, SIM_ON_DONE}, {c, x2, SIM_ON_DONE},
                           {x1, x2, SIM_EDGE_ORDER}, {x1, j, SIM_ON_LEFT},
                           {x2, j, SIM_ON_DONE}};
  size_t ne;
  const sim_edge *e = sim_graph_edges(g, &ne);
  cr_assert_eq(ne, 5);
  for (size_t k = 0; k < ne; k++)
    cr_assert(e[k].a == want[k].a && e[k].b == want[k].b &&
              e[k].when == want[k].when, "edge %zu", k);
  cr_assert_gt(sim_graph_run(g, &topo, &NETEM), 0);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  cr_assert_eq(t[c].ndone, 2);
  cr_assert(t[x1].nleft == 1 && t[x1].ndone == 0);
  cr_assert(t[x2].nleft == 0 && t[x2].ndone == 1);
  cr_assert_eq(sim_graph_edges(g, &ne), e); /* still there after the run */
  sim_graph_free(g);
}

static int same_result(const sim_result *a, const sim_result *b) {
  if (a->iteration_s != b->iteration_s || a->events != b->events ||
      memcmp(&a->mean, &b->mean, sizeof a->mean) || a->nclasses != b->nclasses)
    return 0;
  return memcmp(a->stage, b->stage, (size_t)a->stages * sizeof *a->stage) == 0;
}

Test(train, worldwide_sanity_and_determinism) {
  err e = {0};
  scenario *s = scenario_load("worldwide", &e);
  cr_assert_not_null(s, "%s", e.msg);
  alloc *id = alloc_fixed("dtfm-identity", 8, 8, 1);
  alloc *rnd = alloc_fixed("random", 8, 8, 1);
  sim_result ri = run(s, id, TRANSPORT_NETEM, 1);
  sim_result ri2 = run(s, id, TRANSPORT_NETEM, 1);
  sim_result rr = run(s, rnd, TRANSPORT_NETEM, 1);
  sim_result rt = run(s, id, TRANSPORT_TCP, 1);
  sim_result rrt = run(s, rnd, TRANSPORT_TCP, 1);
  cr_assert(same_result(&ri, &ri2));
  cr_assert_gt(rr.iteration_s, 1.5 * ri.iteration_s, "random %g identity %g",
               rr.iteration_s, ri.iteration_s);
  cr_assert_geq(rt.iteration_s, ri.iteration_s);
  cr_assert_geq(rrt.iteration_s, rr.iteration_s);
  const sim_result *all[] = {&ri, &rr, &rt};
  for (int i = 0; i < 3; i++) {
    const sim_breakdown *m = &all[i]->mean;
    cr_assert_leq(m->compute_s, all[i]->iteration_s);
    cr_assert_leq(m->bubble_s, all[i]->iteration_s);
    cr_assert_leq(m->comm_s, all[i]->iteration_s);
    cr_assert_leq(m->dp_sync_s, all[i]->iteration_s);
    cr_assert_gt(m->bubble_s, 0);
  }
  /* identity keeps pipelines inside a site: its busiest class is internal */
  cr_assert_eq(ri.classes[0].src_site, ri.classes[0].dst_site);
  sim_result_free(&ri);
  sim_result_free(&ri2);
  sim_result_free(&rr);
  sim_result_free(&rt);
  sim_result_free(&rrt);
  alloc_free(id);
  alloc_free(rnd);
  scenario_free(s);
}

Test(train, timeline_is_chrome_trace_json) {
  scenario *s = uniform(2, 2, 4, 8, 2, "gpipe", "central-ps", 5, 1, 10);
  alloc *a = alloc_identity(2, 2);
  const char *path = support_path("t.json");
  sim_options o = sim_options_default();
  o.timeline_path = path;
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  cr_assert_not_null(j, "%s:%d: %s", path, je.line, je.text);
  json_t *ev = json_object_get(j, "traceEvents");
  cr_assert(json_is_array(ev));
  size_t x = 0;
  for (size_t i = 0; i < json_array_size(ev); i++) {
    json_t *o1 = json_array_get(ev, i);
    if (strcmp(json_string_value(json_object_get(o1, "ph")), "X") == 0) {
      x++;
      cr_assert_geq(json_number_value(json_object_get(o1, "dur")), 0);
    }
  }
  /* every compute once (4 devices x 2 passes x 2 micro-batches x fwd+bwd,
   * plus 4 optimizer steps), DT-FM's barriers (one per pass and one at the
   * end, each its latency), every transfer twice (send and receive) */
  cr_assert_eq(x, 4 * 2 * 2 * 2 + 4 + 3 + 2 * r.flows);
  json_decref(j);
  sim_result_free(&r);
  /* an unwritable timeline is an error naming the file */
  o.timeline_path = "/nonexistent/dir/t.json";
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_IO);
  cr_assert(strstr(e.msg, "/nonexistent/dir/t.json:") != NULL, "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
}

Test(train, wrong_allocation_shape_is_refused) {
  scenario *s = uniform(2, 2, 4, 8, 2, "gpipe", "ring", 5, 1, 10);
  alloc *a = alloc_identity(4, 1);
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, NULL, &r, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "4 x 1") != NULL, "%s", e.msg);
  alloc_free(a);
  scenario_free(s);
}

/* ---- Megatron-LM's runtime ---- */

static trace_value scenario_link_ctx(const void *ctx, int a, int b, int64_t t) {
  return scenario_link(ctx, a, b, t);
}

/* A message on one direction of a link, FIFO: it leaves when the link is
 * free and the send is issued, takes x, arrives alpha later. */
static int64_t send_fifo(int64_t *free_at, int64_t t, int64_t x, int64_t alpha) {
  *free_at = (t > *free_at ? t : *free_at) + x;
  return *free_at + alpha;
}

/* Two stages, one replica, M micro-batches under Megatron's 1F1B with
 * blocking calls, against the schedule worked by hand: stage 0 runs F0,
 * send_forward, then per micro-batch F(i+1), send_forward_recv_backward
 * (waits for grad i), B(i), and recv_backward, B(M-1) at the end; stage 1
 * runs recv_forward, then per micro-batch F(i), B(i),
 * send_backward_recv_forward (waits for act i+1). Every call costs c after
 * its wait; an 8 MiB send fits in 16 sockets' buffers at once. */
Test(train, megatron_blocking_calls_by_hand) {
  const char *path = support_write_file(
      support_path("m2.json"),
      "{\"name\": \"m2\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10, \"nccl_sockets\": 16}],\n"
      "\"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 1},\n"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 6, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 1, "
      "\"runtime\": \"megatron\"}}\n");
  err e = {0};
  scenario *s = scenario_load(path, &e);
  cr_assert_not_null(s, "%s", e.msg);
  spec_workload w;
  cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
  cr_assert(w.schedule == SPEC_1F1B && w.passes == 1 &&
            w.micro_batches_per_pass == 6);
  const spec_gpu *v = spec_gpu_find("V100"), *gpu[2] = {v, v};
  sim_compute c0 = sim_train_compute(&w, 0, v, 1, 1);
  sim_compute c1 = sim_train_compute(&w, 1, v, 1, 1);
  int64_t c = llround(runtime_p2p_call_s(SPEC_RUNTIME_MEGATRON) * 1e9);
  int64_t x = 67108864, alpha = 20000000, M = 6; /* 8 MiB at 1 Gbit/s */
  int64_t act[6], grad[6], b0[6], b1[6], l01 = 0, l10 = 0;
  int64_t s0 = c0.fwd_ns;
  act[0] = send_fifo(&l01, s0, x, alpha);
  s0 += c;
  int64_t s1 = act[0] + c;
  for (int i = 0; i < M; i++) {
    if (i + 1 < M) {
      s0 += c0.fwd_ns;
      act[i + 1] = send_fifo(&l01, s0, x, alpha);
    }
    s1 += c1.fwd_ns + c1.bwd_ns;
    b1[i] = s1;
    grad[i] = send_fifo(&l10, s1, x, alpha);
    s1 = (i + 1 < M && act[i + 1] > s1 ? act[i + 1] : s1) + c;
    s0 = (grad[i] > s0 ? grad[i] : s0) + c + c0.bwd_ns;
    b0[i] = s0;
  }
  alloc *a = alloc_identity(1, 2);
  double factor[2] = {1, 1};
  sim_train_inputs in = {.w = &w, .a = a, .gpu = gpu, .factor = factor,
                         .compute_scale = 1};
  sim_graph *g = sim_graph_new();
  sim_train_marks mk;
  sim_train_build(g, &in, &mk);
  int sk[2] = {16, 16};
  sim_net_topo topo = {.ndevices = 2, .ctx = s, .link = scenario_link_ctx,
                       .sockets = sk};
  cr_assert_gt(sim_graph_run(g, &topo, &NETEM), 0);
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  int seen = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (t[i].kind != SIM_TASK_COMPUTE || t[i].role != SIM_ROLE_BWD) continue;
    int64_t want = t[i].dev == 0 ? b0[t[i].mb] : b1[t[i].mb];
    /* The last gradient 1 -> 0 leaves beside the embedding all-reduce's
     * ring messages 1 -> 0, a collective on its own connection (NCCL's 2
     * ring channels), which share the shaper with it: device 0's last
     * backward comes later than the blocking calls alone make it. */
    bool shared = t[i].dev == 0 && t[i].mb == M - 1;
    cr_assert(shared ? t[i].t_done >= want - 4
                     : llabs(t[i].t_done - want) <= 4,
              "dev %d B%d: %lld vs %lld", t[i].dev, t[i].mb,
              (long long)t[i].t_done, (long long)want);
    seen++;
  }
  cr_assert_eq(seen, 2 * M);
  sim_train_marks_free(&mk);
  sim_graph_free(g);
  alloc_free(a);
  scenario_free(s);
}

/* hier-ring by hand: L sites of k devices, one stage, every link alpha and
 * beta (netem), all members ready at once. Inside each site central-ps's
 * reduce, a chain of k - 1 hops in C chunks of c: (k - 1)(alpha + c/beta) +
 * (C - 1) c/beta; then NCCL's ring over the L site leaders
 * (support_ring_uniform_s); then the broadcast, the reduce's time again.
 * The engine and the predictor both give it. */
static scenario *sites_of(int L, int k, double lat_ms, double gbps,
                          const char *algo) {
  char net[128], w[512];
  snprintf(net, sizeof net, "\"latency_ms\": %g, \"bandwidth_gbps\": %g",
           lat_ms, gbps);
  snprintf(w, sizeof w, "\"model\": \"gpt3-xl\", \"layers\": 2, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": 1, \"replicas\": %d, "
           "\"micro_batches_per_pass\": 1, \"dp_algo\": \"%s\", "
           "\"runtime\": \"dtfm\"", L * k, L * k, algo);
  return support_build(&(support_spec){
      .name = "h", .nsites = L, .site = {.devices = k, .nic_gbps = 1e6},
      .network = net, .workload = w});
}

Test(train, hier_ring_closed_form) {
  const int Ls[] = {2, 3, 4}, ks[] = {2, 3, 1};
  double lat = 20, a = 0.020, beta = 1.25e8; /* 1 Gbit/s */
  transport_options netem = transport_options_default();
  netem.model = TRANSPORT_NETEM;
  for (int i = 0; i < 3; i++) {
    int L = Ls[i], k = ks[i], D = L * k;
    scenario *s = sites_of(L, k, lat, 1, "hier-ring");
    spec_workload w;
    cr_assert_eq(spec_workload_resolve(s, &w, NULL), ERR_OK);
    double S = spec_stage_gradient_bytes(&w, 0);
    double C = fmin(ceil(S / TRANSPORT_NCCL_CHUNK_BYTES), TRANSPORT_NCCL_MAX_CHUNKS);
    double c = S / C;
    double chain = k > 1 ? (k - 1) * (a + c / beta) + (C - 1) * c / beta : 0;
    double sync = 2 * chain + support_ring_uniform_s(S, L, a, beta);
    alloc *al = alloc_identity(D, 1);
    sim_result r = run(s, al, TRANSPORT_NETEM, 1e-12);
    double want = sync + barriers_s(D, lat);
    cr_assert(fabs(r.iteration_s - want) < 1e-6, "%d x %d: %.9f vs %.9f", L,
              k, r.iteration_s, want);
    int grp[16];
    for (int d = 0; d < D; d++) grp[d] = d;
    cr_assert_float_eq(predict_dp_sync_s(s, SPEC_HIER_RING, grp, D, S, &netem),
                       sync, 1e-9 * sync, "%d x %d", L, k);
    sim_result_free(&r);
    alloc_free(al);
    scenario_free(s);
  }
}

/* One site: hier-ring is central-ps (a reduce and a broadcast, no ring);
 * its tasks grow with the members and the sites' square, not the
 * members' square. */
Test(train, hier_ring_one_site_is_central_ps_and_linear) {
  scenario *h = sites_of(1, 4, 20, 1, "hier-ring");
  scenario *c = sites_of(1, 4, 20, 1, "central-ps");
  alloc *al = alloc_identity(4, 1);
  sim_result rh = run(h, al, TRANSPORT_NETEM, 1e-12);
  sim_result rc = run(c, al, TRANSPORT_NETEM, 1e-12);
  cr_assert(fabs(rh.iteration_s - rc.iteration_s) < 1e-9, "%.9f vs %.9f",
            rh.iteration_s, rc.iteration_s);
  double S = 1e9;
  uint64_t t10 = sim_train_hier_ring_tasks(10000, 100, S);
  uint64_t t20 = sim_train_hier_ring_tasks(20000, 100, S);
  cr_assert_lt(t20 - t10, t10, "%llu, %llu", (unsigned long long)t10,
               (unsigned long long)t20);
  cr_assert_lt(t10, 10000ULL * 10000ULL / 10);
  sim_result_free(&rh);
  sim_result_free(&rc);
  alloc_free(al);
  scenario_free(h);
  scenario_free(c);
}
