/* bench_costcmd: candidates per second through --cost-cmd with the shipped
 * Python models on the 64 devices of worldwide — in batches (validate's and
 * sweep's way: many candidates written before their answers are read) and
 * one at a time (a search's way: each answer awaited before the next
 * candidate exists). Wall clock, Python's start included once. Then GCMA
 * searching through the α–β model, one candidate per round trip (search
 * batch 1), in broods made then sent (objective_custom_batch) and in
 * broods streamed (objective_custom_stream, the CLI's way: each candidate
 * sent when made, so the model works while geodes makes the next): model
 * candidates per second of wall and of CPU (geodes and the model both),
 * the same search every way; CPU/wall above 1 shows the two working at
 * once (a second core free). Not a test: it prints numbers for the issue
 * note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "analysis/costcmd.h"
#include "analysis/costcmd_header.h"
#include "models/cost.h"
#include "models/spec_workload.h"
#include "schedules/gcma.h"
#include "schedules/objective.h"
#include "tests/bench.h"
#include "base/mem.h"

static int run(const char *model, const char *header, alloc **a,
               const int *const *layers, int n, int batch) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 %s/analysis/%s", GEODES_SOURCE_DIR, model);
  err e;
  err_clear(&e);
  double *out = mem_alloc((size_t)n * sizeof *out);
  double t0 = bench_wall_s();
  costcmd *c = costcmd_start(cmd, header, 30, &e);
  int rc = c ? ERR_OK : e.code;
  for (int i = 0; rc == ERR_OK && i < n; i += batch) {
    int k = n - i < batch ? n - i : batch;
    rc = costcmd_score(c, k, (const alloc *const *)a + i, layers + i, out + i,
                       &e);
  }
  if (rc == ERR_OK) rc = costcmd_close(c, &e);
  double dt = bench_wall_s() - t0;
  costcmd_free(c);
  if (rc)
    fprintf(stderr, "bench_costcmd: %s\n", e.msg);
  else
    printf("%-18s %6d candidates in batches of %5d: %.2f s, %.0f candidates/s"
           " (first %.4g s)\n", model, n, batch, dt, n / dt, out[0]);
  free(out);
  return rc;
}

/* CPU seconds of this process (*self) and its reaped children (*kids). */
static void cpu_split_s(double *self, double *kids, long *child_peak_kib) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  *child_peak_kib = ru.ru_maxrss;
  *self = bench_cpu_s();
  *kids = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
          (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* How GCMA's candidates reach the model. */
enum { ONE_AT_A_TIME, BROODS, STREAMED };
static const char *const way_name[] = {"one at a time", "broods as before",
                                       "broods streamed"};

/* GCMA (trials offspring) through the α–β model, the candidates sent one
 * at a time (search batch 1), in broods (objective_custom_batch: a brood
 * made, then sent) or streamed (objective_custom_stream, the CLI's way:
 * each sent when made, the brood's answers collected after its last). */
static int run_gcma_with(scenario *s, const char *header, int trials, int way,
                         const char *cmd, const char *label);

static int run_gcma(scenario *s, const char *header, int trials, int way) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 %s/analysis/cost_alphabeta.py",
           GEODES_SOURCE_DIR);
  return run_gcma_with(s, header, trials, way, cmd, "cost_alphabeta.py");
}

/* A model that waits 200 us a candidate without using a CPU (a model on
 * another machine, or one that waits on a device): what streaming gains
 * whatever else runs on this one. */
static int run_gcma_sleepy(scenario *s, const char *header, int trials,
                           int way) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "python3 -c \"import sys, time; sys.path.insert("
           "0, '%s/analysis'); from costcmd_serve import serve; serve(lambda "
           "h: lambda c: time.sleep(2e-4) or 1.0 + sum(c['pipelines'][0]) %% "
           "7)\"", GEODES_SOURCE_DIR);
  return run_gcma_with(s, header, trials, way, cmd, "a 200-us sleep");
}

static int run_gcma_with(scenario *s, const char *header, int trials, int way,
                         const char *cmd, const char *label) {
  err e;
  err_clear(&e);
  long peak;
  double s0, k0, s1, k1, w0 = bench_wall_s();
  cpu_split_s(&s0, &k0, &peak);
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  objective *o = c ? objective_new(s, c, NULL, false, &e) : NULL;
  costcmd *cc = o ? costcmd_start(cmd, header, 30, &e) : NULL;
  search_result *r = NULL;
  if (cc) {
    search_objective obj =
        way == ONE_AT_A_TIME ? objective_custom(o, "cost-cmd", costcmd_judge, cc)
        : way == BROODS ? objective_custom_batch(o, "cost-cmd", costcmd_judge,
                                                 costcmd_judge_many, cc)
                        : objective_custom_stream(o, "cost-cmd", costcmd_judge,
                                                  costcmd_judge_submit,
                                                  costcmd_judge_collect, cc);
    search_opts so;
    search_opts_default(&so);
    so.trials = trials, so.batch = way == ONE_AT_A_TIME ? 1 : 0;
    r = gcma_search(c, GCMA_GAIN_PIPELINE, &obj, &so, &e);
  }
  long answered = cc ? costcmd_answered(cc) : 0;
  int rc = r && costcmd_close(cc, &e) == ERR_OK ? ERR_OK : 1;
  costcmd_free(cc);
  cpu_split_s(&s1, &k1, &peak);
  double wall = bench_wall_s() - w0, cpu = s1 - s0 + k1 - k0;
  if (rc)
    fprintf(stderr, "bench_costcmd: %s\n", e.msg);
  else
    printf("gcma + %s, %5ld partitions, %-16s: %6ld model "
           "candidates, %.2f s wall, %.2f CPU-s (geodes %.2f, model %.2f): "
           "%6.0f candidates/s, %6.0f /CPU-s, CPU/wall %.2f (best %.4f s; peak "
           "RSS %.1f MiB, model %.1f MiB)\n",
           label, r->candidates, way_name[way], answered, wall, cpu, s1 - s0,
           k1 - k0, answered / wall, answered / cpu, cpu / wall, r->objective_s,
           bench_peak_rss_kib() / 1024.0, peak / 1024.0);
  search_result_free(r);
  objective_free(o);
  cost_ctx_free(c);
  return rc;
}

int main(void) {
  err e;
  err_clear(&e);
  scenario *s = scenario_load("worldwide", &e);
  spec_workload w;
  const spec_gpu *gpu[64];
  double ag, gg;
  if (!s || spec_workload_resolve(s, &w, &e) || spec_device_gpus(s, gpu, &e) ||
      cost_sizes(s, &ag, &gg, &e)) {
    fprintf(stderr, "bench_costcmd: %s\n", e.msg);
    return 1;
  }
  char *h = costcmd_header_json(s, &w, gpu, ag, gg, TRANSPORT_NETEM);
  enum { N = 100000 };
  alloc **a = mem_alloc(N * sizeof *a);
  const int **l = mem_alloc(N * sizeof *l);
  int layers[8];
  for (int st = 0; st < 8; st++) layers[st] = spec_stage_layers(&w, st);
  for (int i = 0; i < N; i++) a[i] = alloc_random(8, 8, (uint64_t)i), l[i] = layers;
  int rc = run("cost_alphabeta.py", h, a, l, N, 10000) ||
           run("cost_alphabeta.py", h, a, l, 10000, 1) ||
           run("cost_alpa.py", h, a, l, N, 10000) ||
           run("cost_alpa.py", h, a, l, 10000, 1) ||
           run_gcma(s, h, 900, ONE_AT_A_TIME);
  /* alternated, three rounds: on a shared machine compare like rounds
     (CPU/wall above 1: geodes and the model ran at the same time) */
  for (int round = 0; round < 3 && !rc; round++)
    rc = run_gcma(s, h, 900, BROODS) || run_gcma(s, h, 900, STREAMED) ||
         run_gcma(s, h, 4900, BROODS) || run_gcma(s, h, 4900, STREAMED);
  rc = rc || run_gcma_sleepy(s, h, 900, BROODS) ||
       run_gcma_sleepy(s, h, 900, STREAMED);
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  free(a), free(l), free(h);
  scenario_free(s);
  return rc;
}
