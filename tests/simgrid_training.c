/* simgrid_training: SimGrid's side of bench_training (issue 10) — the same
 * workload (tests/bench_training.h: the worldwide scenario, 64 V100 in 8
 * cities, pipeline r inside city r, one GPipe pass of M micro-batches,
 * central-ps gradient synchronisation) for N iterations as a SimGrid 3.32
 * program of the C API: one host per device, its NIC as an up and a down
 * link, one link per ordered pair of sites with the scenario's latency and
 * bandwidth, Full routing; one actor per device computing its stage's
 * forward and backward passes (geodes's compute times) and sending each
 * micro-batch's activations and gradients asynchronously (the send does not
 * hold up the next compute, as geodes's send stream), then every replica
 * of a stage sending its gradients to replica 0 and receiving the update
 * back. It prints bench_training_row: communications (SimGrid's unit of a
 * transfer) per CPU-second of simgrid_run, and the peak memory.
 *
 *   simgrid_training M N
 *
 * Built only when libsimgrid-dev is installed (CMakeLists.txt); a figure,
 * not a test. SimGrid's own network model (LV08, its defaults) times the
 * transfers: the simulated times are not geodes's and are not compared. */
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "models/spec.h"
#include "tests/bench.h"
#include "tests/bench_training.h"

enum { MAX_STAGES = 64 };

static struct {
  int M, N, replicas, stages;
  double fwd_s[MAX_STAGES], bwd_s[MAX_STAGES]; /* per micro-batch */
  double act_bytes, grad_bytes[MAX_STAGES];
  long comms;
} job;

static const double SPEED = 1e12; /* flop/s of a host: flops = s x SPEED */

/* Writes the platform of s (its devices, NICs and site pairs) to path. */
static int write_platform(const scenario *s, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
          "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
          "<zone id=\"world\" routing=\"Full\">\n");
  for (int d = 0; d < s->ndevices; d++) {
    double nic = s->sites[s->device_site[d]].nic_gbps;
    fprintf(f, "<host id=\"d%d\" speed=\"%.17gf\"/>\n", d, SPEED);
    fprintf(f, "<link id=\"up%d\" bandwidth=\"%.17gGbps\" latency=\"0ms\"/>\n"
            "<link id=\"dn%d\" bandwidth=\"%.17gGbps\" latency=\"0ms\"/>\n",
            d, nic, d, nic);
  }
  for (int a = 0; a < s->nsites; a++)
    for (int b = 0; b < s->nsites; b++) {
      int da = s->sites[a].first_device, db = s->sites[b].first_device;
      if (a == b) db = da + 1 < s->ndevices ? da + 1 : da;
      trace_value v = scenario_link(s, da, db, 0);
      fprintf(f, "<link id=\"p%d_%d\" bandwidth=\"%.17gGbps\" "
              "latency=\"%.17gms\"/>\n", a, b, v.bandwidth_gbps, v.latency_ms);
    }
  for (int x = 0; x < s->ndevices; x++)
    for (int y = 0; y < s->ndevices; y++)
      if (x != y)
        fprintf(f, "<route src=\"d%d\" dst=\"d%d\" symmetrical=\"NO\">"
                "<link_ctn id=\"up%d\"/><link_ctn id=\"p%d_%d\"/>"
                "<link_ctn id=\"dn%d\"/></route>\n", x, y, x,
                s->device_site[x], s->device_site[y], y);
  fprintf(f, "</zone>\n</platform>\n");
  return fclose(f);
}

static sg_mailbox_t box(const char *kind, int r, int st) {
  char name[64];
  snprintf(name, sizeof name, "%s_%d_%d", kind, r, st);
  return sg_mailbox_by_name(name);
}

static char token; /* every message's payload */

/* Sends size bytes to mb without waiting; the comm joins pending. */
static void send_async(sg_mailbox_t mb, double size, sg_comm_t *pending,
                       size_t *n) {
  pending[(*n)++] = sg_mailbox_put_async(mb, &token, (long)size);
  job.comms++;
}

/* One device: replica r, stage st, N iterations. */
static void device(int argc, char **argv) {
  int r = atoi(argv[1]), st = atoi(argv[2]), D = job.stages, M = job.M;
  sg_comm_t *pending = malloc((size_t)(2 * M + job.replicas) * sizeof *pending);
  for (int it = 0; it < job.N; it++) {
    size_t n = 0;
    for (int m = 0; m < M; m++) { /* forward */
      if (st > 0) sg_mailbox_get(box("act", r, st));
      sg_actor_execute(job.fwd_s[st] * SPEED);
      if (st < D - 1) send_async(box("act", r, st + 1), job.act_bytes, pending, &n);
    }
    for (int m = 0; m < M; m++) { /* backward */
      if (st < D - 1) sg_mailbox_get(box("grad", r, st));
      sg_actor_execute(job.bwd_s[st] * SPEED);
      if (st > 0) send_async(box("grad", r, st - 1), job.act_bytes, pending, &n);
    }
    sg_comm_wait_all(pending, n);
    n = 0;
    if (r == 0) { /* the stage's parameter server */
      for (int k = 1; k < job.replicas; k++) sg_mailbox_get(box("ps", 0, st));
      for (int k = 1; k < job.replicas; k++)
        send_async(box("upd", k, st), job.grad_bytes[st], pending, &n);
      sg_comm_wait_all(pending, n);
    } else {
      send_async(box("ps", 0, st), job.grad_bytes[st], pending, &n);
      sg_comm_wait_all(pending, n);
      sg_mailbox_get(box("upd", r, st));
    }
  }
  free(pending);
  (void)argc;
}

/* The job's sizes and times from geodes's workload and cost tables. */
static int fill_job(const scenario *s) {
  spec_workload w;
  err e = {0};
  const spec_gpu **gpu = calloc((size_t)s->ndevices, sizeof *gpu);
  if (spec_workload_resolve(s, &w, &e) || spec_device_gpus(s, gpu, &e) ||
      w.stages > MAX_STAGES) {
    fprintf(stderr, "simgrid_training: %s\n", e.msg);
    free(gpu);
    return -1;
  }
  job.replicas = w.replicas, job.stages = w.stages;
  job.act_bytes = spec_activation_bytes(&w);
  for (int st = 0; st < w.stages; st++) {
    double f = spec_site_compute_factor(&s->sites[s->device_site[st]], gpu[st]);
    job.fwd_s[st] = spec_compute_s(gpu[st], spec_stage_fwd_flops(&w, st)) * f;
    job.bwd_s[st] = spec_compute_s(gpu[st], spec_stage_bwd_flops(&w, st)) * f;
    job.grad_bytes[st] = spec_stage_gradient_bytes(&w, st);
  }
  free(gpu);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 || (job.M = atoi(argv[1])) < 1 || (job.N = atoi(argv[2])) < 1) {
    fprintf(stderr, "usage: simgrid_training M N\n");
    return 2;
  }
  alloc *a = NULL;
  scenario *s = bench_training_workload(job.M, &a);
  if (!s || fill_job(s)) return 1;
  char path[] = "/tmp/simgrid_training_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || close(fd) || write_platform(s, path)) {
    fprintf(stderr, "simgrid_training: cannot write %s\n", path);
    return 1;
  }
  int sargc = 2;
  char *sargv[] = {argv[0], "--log=root.thres:critical", NULL};
  simgrid_init(&sargc, sargv);
  simgrid_load_platform(path);
  remove(path);
  for (int r = 0; r < job.replicas; r++)
    for (int st = 0; st < job.stages; st++) {
      char rs[16], ss[16], name[32], host[16];
      snprintf(rs, sizeof rs, "%d", r);
      snprintf(ss, sizeof ss, "%d", st);
      snprintf(name, sizeof name, "dev_%d_%d", r, st);
      snprintf(host, sizeof host, "d%d", a->device[r * job.stages + st]);
      char *args[] = {name, rs, ss, NULL};
      sg_actor_create(name, sg_host_by_name(host), device, 3, args);
    }
  double c0 = bench_cpu_s(), w0 = bench_wall_s();
  simgrid_run();
  double cpu = bench_cpu_s() - c0, wall = bench_wall_s() - w0;
  bench_training_row("simgrid", job.M, "lv08", job.N, (double)job.comms, NAN,
                     cpu, wall, NAN, (double)bench_peak_rss_kib());
  printf("         (SimGrid 3.32: %.1f s simulated, %d x %d actors)\n",
         simgrid_get_clock(), job.replicas, job.stages);
  alloc_free(a);
  scenario_free(s);
  return 0;
}
