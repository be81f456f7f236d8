/* bench_costcmd: candidates per second through --cost-cmd with the shipped
 * Python models on the 64 devices of worldwide — in batches (validate's and
 * sweep's way: many candidates written before their answers are read) and
 * one at a time (a search's way: each answer awaited before the next
 * candidate exists). Wall clock, Python's start included once. Not a test:
 * it prints numbers for the issue note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/costcmd.h"
#include "analysis/costcmd_header.h"
#include "models/cost.h"
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
           run("cost_alpa.py", h, a, l, 10000, 1);
  for (int i = 0; i < N; i++) alloc_free(a[i]);
  free(a), free(l), free(h);
  scenario_free(s);
  return rc;
}
