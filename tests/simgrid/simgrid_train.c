/* simgrid_train: geodes's training workload run by SimGrid 3.32, for the
 * speed comparison of the bench (issue 10, item 5) and the agreement tests
 * of tests/simgrid/test_simgrid_train.c. The workload is the same by
 * construction: the task graph is the one sim/train.c builds (the inputs
 * sim_run gives sim_train_build), read back through sim_graph_tasks and
 * sim_graph_edges, and the platform is written from the same scenario
 * (tests/simgrid/simgrid_platform.h: geodes's ideal or netem as links).
 *
 * Mapping. A device is a host whose speed is its GPU's peak x the
 * roofline's fraction of it on a layer (models/roofline.h), over its
 * site's compute factor (a compute task of d ns is an execution of d x speed flops
 * there); a transfer is sg_host_sendto(src, dst, bytes); a join takes no
 * time. --model lv08 is SimGrid's default (latency x 13.01, bandwidth x
 * 0.97, TCP-gamma 4 MiB: rate <= gamma / (2 latency), weight-S 20537, cross
 * traffic); --model cm02 its plain fluid model (no factors, no window
 * bound, no cross traffic), the one geodes's ideal and netem are.
 *
 * Execution. Tasks keep geodes's semantics: a task starts when its last
 * predecessor trigger fires; a transfer with a completion-order predecessor
 * completes at the later of its arrival and that predecessor's completion.
 * What SimGrid's communication cannot say is when a message's last byte
 * has left: it has one completion. --latency link (SimGrid's way) puts the
 * latency on the links, paid before the bytes flow, and LEFT fires at the
 * arrival: a send stream is busy one latency longer per message than in
 * geodes. --latency after (geodes's way) writes links without latency: the
 * communication is the bytes leaving (LEFT), then the worker sleeps the
 * pair's latency (DONE). --send async fires LEFT when the send is posted
 * (messages of a connection then share it, not queue). Ready computes and
 * transfers go to a pool of worker actors, grown when none is idle, so no
 * task waits for one; iteration k+1 starts when every task of iteration k
 * has completed (DT-FM ends each with a barrier).
 * Invariant: every task of an iteration completes exactly once; the pool
 * and the graph's arrays are reused across iterations, so memory does not
 * grow with them.
 *
 * --engine geodes runs the same workload through sim_run N times (today's
 * single iteration, repeated) and prints the same figures. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <xbt/config.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/graph.h"
#include "sim/sim.h"
#include "sim/train.h"
#include "tests/bench.h"
#include "tests/simgrid/simgrid_platform.h"

typedef struct options {
  const char *scenario, *method, *network, *model, *engine;
  bool after;        /* --latency after: geodes's way (see the top) */
  bool async;        /* --send async: a send completes when posted */
  int micro_batches; /* per pipeline and pass; 0: the scenario's */
  int iterations;
  bool json;
} options;

/* The workload: the scenario with its knobs applied, the placement and the
 * graph of one iteration, as sim_run would build them. */
typedef struct workload {
  scenario *s;
  alloc *a;
  sim_graph *g;
  const spec_gpu **gpu;
  double *speed; /* device -> flop/s of its host */
  simgrid_platform plat;
} workload;

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "simgrid_train: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  exit(1);
}

/* ---- the workload, from geodes's own code ---- */

static void apply_knobs(scenario *s, const options *o) {
  if (o->micro_batches <= 0) return;
  scenario_knobs k;
  scenario_knobs_init(&k);
  long per = (long)s->workload.replicas * s->workload.micro_batch;
  k.batch = per * o->micro_batches;
  k.micro_batches_per_pass = o->micro_batches;
  err e = {0};
  if (scenario_apply(s, &k, &e)) die("%s", e.msg);
}

/* The graph of one iteration: sim_run's inputs to sim_train_build. */
static void build_graph(workload *w, const spec_workload *sw) {
  const scenario *s = w->s;
  double *factor = mem_alloc((size_t)s->ndevices * sizeof *factor);
  w->speed = mem_alloc((size_t)s->ndevices * sizeof *w->speed);
  for (int d = 0; d < s->ndevices; d++) {
    const spec_gpu *g = w->gpu[d];
    factor[d] = spec_site_compute_factor(&s->sites[s->device_site[d]], g);
    w->speed[d] = g->peak_flops * roofline_layer_fraction(g, sw) / factor[d];
  }
  sim_train_inputs in = {.w = sw, .a = w->a, .gpu = w->gpu, .factor = factor,
                         .compute_scale = 1,
                         .barrier_ns = runtime_barrier_ns(s, w->a)};
  sim_train_marks mk;
  w->g = sim_graph_new();
  sim_train_build(w->g, &in, &mk);
  sim_train_marks_free(&mk);
  free(factor);
}

static void workload_load(workload *w, const options *o) {
  err e = {0};
  *w = (workload){0};
  if (!(w->s = scenario_load(o->scenario, &e))) die("%s", e.msg);
  apply_knobs(w->s, o);
  if (trace_next_change_any(w->s->network, 0) != TRACE_NEVER)
    die("%s: the network changes over time; this program writes a static "
        "platform", w->s->name);
  spec_workload sw;
  if (spec_workload_resolve(w->s, &sw, &e)) die("%s", e.msg);
  w->a = alloc_fixed(o->method, sw.replicas, sw.stages, w->s->seed);
  if (!w->a) die("unknown placement method %s", o->method);
  w->gpu = mem_calloc((size_t)w->s->ndevices, sizeof *w->gpu);
  if (spec_device_gpus(w->s, w->gpu, &e) ||
      spec_check_memory(&sw, w->s, w->a->device, w->gpu, &e))
    die("%s", e.msg);
  build_graph(w, &sw);
  simgrid_platform_init(&w->plat, w->s, w->speed);
}

static void workload_free(workload *w) {
  sim_graph_free(w->g);
  alloc_free(w->a);
  scenario_free(w->s);
  free(w->gpu);
  free(w->speed);
  simgrid_platform_free(&w->plat);
}

/* Writes w's platform under network model net into a temporary file and
 * loads it; its links carry no latency when after (the workers sleep it
 * instead). */
static void platform_load(const workload *w, const char *net, bool after) {
  char path[] = "/tmp/simgrid_train_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || close(fd) != 0 ||
      simgrid_platform_write(&w->plat, path, strcmp(net, "ideal") == 0,
                             after ? 0 : 1) != 0)
    die("cannot write a platform file: %s", strerror(errno));
  simgrid_load_platform(path);
  unlink(path);
}

/* ---- the execution: geodes's task semantics over SimGrid's activities ---- */

typedef struct run {
  const sim_task *t;
  uint32_t n;
  uint32_t *off, *succ, *nleft; /* CSR: LEFT successors first, then DONE */
  uint32_t *ord;                /* completion-order successor, or NONE */
  uint32_t *deps0, *deps;       /* predecessor triggers: total, not fired */
  uint8_t *ordwait0, *ordwait, *arrived;
  uint32_t *ready;              /* ring of tasks waiting for a worker */
  size_t rhead, rcount;
  uint32_t *zero;               /* zero-time tasks to complete now */
  size_t nzero;
  uint32_t done;
  int iter, niter;
  double *iter_end;
  sg_host_t *host;
  const double *speed;
  double *lat;                  /* [a n + b]: seconds, when after; or NULL */
  bool async;                   /* LEFT fires when a send is posted */
  int ndev;
  sg_sem_t jobs, finished;
  int idle, workers;
  uint64_t comms, execs;
} run;

static run R;

/* CSR successors from the edge list: per source, LEFT edges then DONE
 * edges, each in edge order (as sim/graph.c's freeze). */
static void run_csr(const sim_graph *g) {
  size_t ne;
  const sim_edge *e = sim_graph_edges(g, &ne);
  uint32_t n = R.n;
  uint32_t *cnt = mem_calloc(2 * (size_t)n + 1, sizeof *cnt);
  R.off = mem_calloc((size_t)n + 1, sizeof *R.off);
  R.nleft = mem_calloc(n, sizeof *R.nleft);
  R.succ = mem_alloc((ne + 1) * sizeof *R.succ);
  R.ord = mem_alloc(n * sizeof *R.ord);
  R.deps0 = mem_calloc(n, sizeof *R.deps0);
  R.ordwait0 = mem_calloc(n, 1);
  memset(R.ord, 0xff, n * sizeof *R.ord);
  for (size_t k = 0; k < ne; k++) {
    if (e[k].when == SIM_EDGE_ORDER) {
      R.ord[e[k].a] = e[k].b;
      R.ordwait0[e[k].b] = 1;
      continue;
    }
    cnt[2 * (size_t)e[k].a + (e[k].when == SIM_ON_LEFT ? 0 : 1)]++;
    R.deps0[e[k].b]++;
  }
  uint32_t o = 0;
  for (uint32_t i = 0; i < n; i++) {
    R.off[i] = o;
    R.nleft[i] = cnt[2 * (size_t)i];
    uint32_t l = o, d = o + cnt[2 * (size_t)i];
    o = d + cnt[2 * (size_t)i + 1];
    cnt[2 * (size_t)i] = l; /* now cursors */
    cnt[2 * (size_t)i + 1] = d;
  }
  R.off[n] = o;
  for (size_t k = 0; k < ne; k++)
    if (e[k].when != SIM_EDGE_ORDER)
      R.succ[cnt[2 * (size_t)e[k].a + (e[k].when == SIM_ON_LEFT ? 0 : 1)]++] =
          e[k].b;
  free(cnt);
}

static void worker(int argc, char **argv);

/* Task id can start: zero-time tasks complete at once (after the caller's
 * loop), others wait in the ring for a worker, one is made if none idles. */
static void ready(uint32_t id) {
  const sim_task *t = &R.t[id];
  if (t->kind == SIM_TASK_JOIN ||
      (t->kind == SIM_TASK_COMPUTE && t->dur_ns == 0)) {
    R.zero[R.nzero++] = id;
    return;
  }
  R.ready[(R.rhead + R.rcount++) % R.n] = id;
  if (R.idle == 0) {
    sg_actor_t w = sg_actor_create("worker", R.host[0], worker, 0, NULL);
    sg_actor_daemonize(w);
    R.workers++;
  } else {
    R.idle--;
  }
  sg_sem_release(R.jobs);
}

static void fire(uint32_t from, uint32_t count) {
  for (uint32_t k = 0; k < count; k++) {
    uint32_t b = R.succ[from + k];
    if (--R.deps[b] == 0) ready(b);
  }
}

static void iteration_start(void) {
  memcpy(R.deps, R.deps0, R.n * sizeof *R.deps);
  memcpy(R.ordwait, R.ordwait0, R.n);
  memset(R.arrived, 0, R.n);
  R.done = 0;
  for (uint32_t i = 0; i < R.n; i++)
    if (R.deps[i] == 0) ready(i);
}

/* Task id completes: its DONE successors fire and its completion-order
 * successor, when already arrived, completes too. The last task of an
 * iteration starts the next one, or ends the run. */
static void complete(uint32_t id) {
  for (;;) {
    R.done++;
    fire(R.off[id] + R.nleft[id], R.off[id + 1] - R.off[id] - R.nleft[id]);
    uint32_t nx = R.ord[id];
    if (nx == UINT32_MAX) break;
    R.ordwait[nx] = 0;
    if (!R.arrived[nx]) break;
    id = nx;
  }
  if (R.done < R.n) return;
  R.iter_end[R.iter++] = simgrid_get_clock();
  if (R.iter < R.niter) iteration_start();
  else sg_sem_release(R.finished);
}

/* Completes the zero-time tasks that became ready, and those they free. */
static void settle(void) {
  while (R.nzero > 0) complete(R.zero[--R.nzero]);
}

/* A transfer's bytes have left: its LEFT successors fire. */
static void left(uint32_t id) {
  fire(R.off[id], R.nleft[id]);
  settle();
}

/* A transfer arrived: DONE, unless its receive-stream predecessor is still
 * pending (then that one's completion completes it). */
static void arrived(uint32_t id) {
  if (R.ordwait[id]) R.arrived[id] = 1;
  else complete(id);
}

/* The transfer: SimGrid's communication, whose one completion is both LEFT
 * and DONE with links that carry the latency; with R.lat (after), the
 * communication is the bytes leaving and the latency a sleep after it. */
static void transfer(uint32_t id, const sim_task *t) {
  R.comms++;
  if (R.async) left(id);
  sg_host_sendto(R.host[t->dev], R.host[t->dst], t->bytes);
  if (!R.async) left(id);
  double lat = R.lat ? R.lat[(size_t)t->dev * R.ndev + t->dst] : 0;
  if (lat > 0) sg_actor_sleep_for(lat);
  arrived(id);
}

static void worker(int argc, char **argv) {
  (void)argc, (void)argv;
  for (;;) {
    sg_sem_acquire(R.jobs);
    uint32_t id = R.ready[R.rhead];
    R.rhead = (R.rhead + 1) % R.n;
    R.rcount--;
    const sim_task *t = &R.t[id];
    if (t->kind == SIM_TASK_XFER) {
      transfer(id, t);
    } else {
      R.execs++;
      sg_exec_t x = sg_actor_exec_init((double)t->dur_ns * 1e-9 * R.speed[t->dev]);
      sg_exec_set_host(x, R.host[t->dev]);
      sg_exec_start(x);
      sg_exec_wait(x);
      complete(id);
    }
    settle();
    R.idle++;
  }
}

static void driver(int argc, char **argv) {
  (void)argc, (void)argv;
  iteration_start();
  settle();
  sg_sem_acquire(R.finished);
}

/* The one-way latency of every ordered pair, for --latency after. */
static double *pair_latencies(const scenario *s) {
  int n = s->ndevices;
  double *lat = mem_calloc((size_t)n * n, sizeof *lat);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b) lat[(size_t)a * n + b] = scenario_link(s, a, b, 0).latency_ms * 1e-3;
  return lat;
}

static void run_init(const workload *w, int niter, bool after, bool async) {
  R = (run){0};
  R.t = sim_graph_tasks(w->g, &R.n);
  run_csr(w->g);
  R.deps = mem_alloc(R.n * sizeof *R.deps);
  R.ordwait = mem_alloc(R.n);
  R.arrived = mem_alloc(R.n);
  R.ready = mem_alloc(R.n * sizeof *R.ready);
  R.zero = mem_alloc(R.n * sizeof *R.zero);
  R.niter = niter;
  R.iter_end = mem_calloc((size_t)niter, sizeof *R.iter_end);
  R.speed = w->speed;
  R.host = mem_alloc((size_t)w->s->ndevices * sizeof *R.host);
  for (int d = 0; d < w->s->ndevices; d++) {
    char id[32];
    snprintf(id, sizeof id, "d%d", d);
    R.host[d] = sg_host_by_name(id);
  }
  R.ndev = w->s->ndevices;
  R.lat = after ? pair_latencies(w->s) : NULL;
  R.async = async;
  R.jobs = sg_sem_init(0);
  R.finished = sg_sem_init(0);
}

static void run_free(void) {
  free(R.off);
  free(R.succ);
  free(R.nleft);
  free(R.ord);
  free(R.deps0);
  free(R.deps);
  free(R.ordwait0);
  free(R.ordwait);
  free(R.arrived);
  free(R.ready);
  free(R.zero);
  free(R.iter_end);
  free(R.host);
  free(R.lat);
}

/* ---- the figures ---- */

typedef struct figures {
  const char *engine, *network, *model, *latency, *send;
  uint64_t comms, computes;
  double first_s, min_s, max_s, total_s; /* simulated */
  double setup_cpu_s, run_cpu_s;
  long rss_kib;
  int workers;
} figures;

static void print(const figures *f, const options *o, const workload *w) {
  double rate = f->run_cpu_s > 0 ? (double)f->comms / f->run_cpu_s : 0;
  uint32_t ntasks;
  sim_graph_tasks(w->g, &ntasks);
  if (o->json) {
    printf("{\"engine\": \"%s\", \"scenario\": \"%s\", \"placement\": \"%s\", "
           "\"network\": \"%s\", \"model\": \"%s\", \"latency\": \"%s\", "
           "\"send\": \"%s\", \"micro_batches\": %d, "
           "\"iterations\": %d, \"tasks\": %u, \"comms\": %llu, "
           "\"computes\": %llu, \"first_iteration_s\": %.17g, "
           "\"min_iteration_s\": %.17g, \"max_iteration_s\": %.17g, "
           "\"simulated_s\": %.17g, \"setup_cpu_s\": %.6f, "
           "\"run_cpu_s\": %.6f, \"comms_per_cpu_s\": %.6g, "
           "\"peak_rss_kib\": %ld, \"workers\": %d}\n",
           f->engine, w->s->name, o->method, f->network, f->model, f->latency,
           f->send, w->s->workload.micro_batches_per_pass, o->iterations,
           ntasks,
           (unsigned long long)f->comms, (unsigned long long)f->computes,
           f->first_s, f->min_s, f->max_s, f->total_s, f->setup_cpu_s,
           f->run_cpu_s, rate, f->rss_kib, f->workers);
    return;
  }
  printf("%-7s %-5s %-4s %-5s %-6s M=%-3d N=%-4d %9llu comms  iteration %.6f s "
         "(min %.6f max %.6f)  simulated %.3f s  cpu %.3f s (+%.3f setup)  "
         "%.3g comms/cpu-s  peak RSS %.1f MiB\n",
         f->engine, f->network, f->model, f->latency, f->send,
         w->s->workload.micro_batches_per_pass, o->iterations,
         (unsigned long long)f->comms, f->first_s, f->min_s, f->max_s,
         f->total_s, f->run_cpu_s, f->setup_cpu_s, rate,
         (double)f->rss_kib / 1024);
}

static void set_model(const char *model) {
  if (strcmp(model, "cm02") == 0) {
    sg_cfg_set_string("network/model", "CM02");
    sg_cfg_set_double("network/TCP-gamma", 0);
    sg_cfg_set_boolean("network/crosstraffic", "no");
  } else if (strcmp(model, "lv08") != 0) {
    die("--model: lv08 or cm02, not %s", model);
  }
}

static figures run_simgrid(const options *o, const workload *w, double c0) {
  figures f = {.engine = "simgrid", .network = o->network, .model = o->model,
               .latency = o->after ? "after" : "link",
               .send = o->async ? "async" : "wait"};
  set_model(o->model);
  platform_load(w, o->network, o->after);
  run_init(w, o->iterations, o->after, o->async);
  sg_actor_create("driver", R.host[0], driver, 0, NULL);
  double c1 = bench_cpu_s();
  simgrid_run();
  f.run_cpu_s = bench_cpu_s() - c1;
  f.setup_cpu_s = c1 - c0;
  if (R.iter != o->iterations) die("%s: the run stopped early (deadlock)",
                                   w->s->name);
  f.comms = R.comms;
  f.computes = R.execs;
  f.first_s = f.min_s = f.max_s = R.iter_end[0];
  for (int k = 1; k < R.iter; k++) {
    double d = R.iter_end[k] - R.iter_end[k - 1];
    f.min_s = fmin(f.min_s, d);
    f.max_s = fmax(f.max_s, d);
  }
  f.total_s = R.iter_end[R.iter - 1];
  f.workers = R.workers;
  return f;
}

static figures run_geodes(const options *o, const workload *w, double c0) {
  figures f = {.engine = "geodes", .network = o->network, .model = "-",
               .latency = "after", .send = "handed", .min_s = INFINITY};
  sim_options so = sim_options_default();
  int m = transport_model_parse(o->network);
  if (m < 0) die("--network: ideal, netem or tcp, not %s", o->network);
  so.transport.model = (transport_model)m;
  double c1 = bench_cpu_s();
  f.setup_cpu_s = c1 - c0;
  for (int k = 0; k < o->iterations; k++) {
    sim_result r;
    err e = {0};
    if (sim_run(w->s, w->a, &so, &r, &e)) die("%s", e.msg);
    if (k == 0) f.first_s = r.iteration_s;
    f.min_s = fmin(f.min_s, r.iteration_s);
    f.max_s = fmax(f.max_s, r.iteration_s);
    f.total_s += r.iteration_s;
    f.comms += r.flows;
    sim_result_free(&r);
  }
  f.run_cpu_s = bench_cpu_s() - c1;
  return f;
}

/* ---- the command line ---- */

static const char usage[] =
    "usage: simgrid_train [--scenario NAME] [--method NAME] [--micro-batches M]\n"
    "                     [--iterations N] [--network ideal|netem|tcp]\n"
    "                     [--model lv08|cm02] [--latency link|after]\n"
    "                     [--send wait|async]\n"
    "                     [--engine simgrid|geodes] [--json]\n"
    "                     [--cfg=SIMGRID_OPTION:VALUE ...]\n"
    "Runs geodes's task graph of one training iteration (sim/train.c) N times\n"
    "on SimGrid over a platform written from the scenario (default worldwide,\n"
    "dtfm-identity, M micro-batches per pipeline: batch = replicas x m x M, one\n"
    "pass; default the scenario's), or with --engine geodes through sim_run N\n"
    "times. --model lv08 is SimGrid's default network model, cm02 its plain\n"
    "fluid model (no factors, no TCP-gamma bound, no cross traffic).\n"
    "--latency link (default): the links carry the latency, SimGrid's way (a\n"
    "send completes when it arrives); after: they carry none and a transfer\n"
    "arrives one latency after its bytes have left, geodes's way.\n"
    "--send wait (default): a send stream waits for its transfer (the arrival,\n"
    "or the bytes' leaving with --latency after); async: it goes on at once,\n"
    "as geodes's sends do when the message fits in the socket buffers, but\n"
    "then messages of one connection share it instead of leaving in order.\n";

static long number(const char *arg, const char *name, long lo) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  if (errno || *end || end == arg || v < lo || v > 1000000) {
    fprintf(stderr, "simgrid_train: %s: not an integer >= %ld: %s\n%s", name,
            lo, arg, usage);
    exit(2);
  }
  return v;
}

static options parse(int argc, char **argv) {
  options o = {.scenario = "worldwide", .method = "dtfm-identity",
               .network = "netem", .model = "lv08", .engine = "simgrid",
               .iterations = 1};
  static const struct option opts[] = {
      {"scenario", required_argument, NULL, 's'},
      {"method", required_argument, NULL, 'p'},
      {"micro-batches", required_argument, NULL, 'm'},
      {"iterations", required_argument, NULL, 'n'},
      {"network", required_argument, NULL, 'w'},
      {"model", required_argument, NULL, 'o'},
      {"engine", required_argument, NULL, 'e'},
      {"latency", required_argument, NULL, 'l'},
      {"send", required_argument, NULL, 'd'},
      {"json", no_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case 's': o.scenario = optarg; break;
      case 'p': o.method = optarg; break;
      case 'm': o.micro_batches = (int)number(optarg, "--micro-batches", 1); break;
      case 'n': o.iterations = (int)number(optarg, "--iterations", 1); break;
      case 'w': o.network = optarg; break;
      case 'o': o.model = optarg; break;
      case 'e': o.engine = optarg; break;
      case 'l':
        if (strcmp(optarg, "after") && strcmp(optarg, "link")) {
          fprintf(stderr, "simgrid_train: --latency: link or after, not %s\n%s",
                  optarg, usage);
          exit(2);
        }
        o.after = strcmp(optarg, "after") == 0;
        break;
      case 'd':
        if (strcmp(optarg, "wait") && strcmp(optarg, "async")) {
          fprintf(stderr, "simgrid_train: --send: wait or async, not %s\n%s",
                  optarg, usage);
          exit(2);
        }
        o.async = strcmp(optarg, "async") == 0;
        break;
      case 'j': o.json = true; break;
      case 'h': fputs(usage, stdout); exit(0);
      default: fputs(usage, stderr); exit(2);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "simgrid_train: unexpected argument %s\n%s", argv[optind],
            usage);
    exit(2);
  }
  return o;
}

int main(int argc, char **argv) {
  double c0 = bench_cpu_s();
  simgrid_init(&argc, argv); /* takes its --cfg and --log options */
  options o = parse(argc, argv);
  bool geodes = strcmp(o.engine, "geodes") == 0;
  if (!geodes && strcmp(o.engine, "simgrid") != 0)
    die("--engine: simgrid or geodes, not %s", o.engine);
  if (!geodes && strcmp(o.network, "ideal") && strcmp(o.network, "netem"))
    die("--network: ideal or netem on SimGrid, not %s", o.network);
  workload w;
  workload_load(&w, &o);
  figures f = geodes ? run_geodes(&o, &w, c0) : run_simgrid(&o, &w, c0);
  f.rss_kib = bench_peak_rss_kib();
  print(&f, &o, &w);
  if (!geodes) run_free();
  workload_free(&w);
  return 0;
}
