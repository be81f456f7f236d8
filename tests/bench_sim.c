/* bench_sim: the event engine's throughput -- one worldwide iteration (64
 * GPUs, L24, B1024) under each network model, and a scale case of 1024
 * devices over 32 sites -- events and flows per CPU-second, wall time and
 * peak memory. Figures, not tests.
 *
 * Profiled with valgrind --tool=callgrind on this binary
 * (GEODES_BENCH_ONLY=worldwide|scale GEODES_BENCH_NET=... GEODES_BENCH_REPS=1;
 * the worldwide rows are two runs, dtfm-identity and random). Instructions,
 * Release, gcc 12, before (774da4a) -> after:
 *   worldwide netem   262.9 M -> 127.5 M  (2.06x)
 *   worldwide tcp     365.5 M -> 171.8 M  (2.13x)
 *   scale netem      1704.5 M -> 777.2 M  (2.19x)
 * What the profile showed and what was done, in order of weight:
 *   30% qsort of per-device busy intervals in the statistics -> counting
 *       sort by device, inline merge sort by start (sim.c);
 *   20% event-queue pops -> 4-ary heap, Floyd's bottom-up pop, branch-free
 *       (time, seq) compare (the outcome of equal times is unpredictable);
 *   15% progressive filling of one-flow components -> solved directly with
 *       the same arithmetic, the component search skipped for a flow alone
 *       on its resources and for changes that touch no flow (net.c);
 *    8% mem_grow calls per element on hot paths -> inline checks, scratch
 *       reserved once per solve;
 *    5% scenario_link + next_change per flow start -> shaper kept on the
 *       pair, link values cached once next_change says the network is
 *       static from then on;
 *   cache misses on the 72-byte task records (deps decrements, a third of
 *       the scale case's time under perf) -> dependency counts and a 32-byte
 *       hot record per task in dense arrays (graph.c).
 * Iteration times, events and every statistic of geodes simulate (9 built-in
 * scenarios x 3 methods x 3 networks, and dp-algo/schedule/window/seed
 * variants) are bit-identical before and after.
 *
 * Wall figures, 2 cores shared with other builds (load ~2.7), same moment:
 *                        before                      after
 *   worldwide ideal      5.3-5.5 M ev/s, 2.0 M fl/s  12.7-13.4 M, 4.7-5.0 M
 *   worldwide netem      5.0 M ev/s, 1.8 M fl/s      10.6-13.6 M, 3.9-5.1 M
 *   worldwide tcp        5.6-6.0 M ev/s, 1.3-1.6 M   13.6-14.2 M, 3.0-4.1 M
 *   scale (3 models)     3.2-3.5 M ev/s, 1.3-1.4 M   5.4-5.8 M, 2.1-2.35 M
 *   peak RSS             79 MiB                      75 MiB
 * One worldwide iteration: 12-18 ms -> 5-8 ms. The scale case stayed under
 * 3 M flows/s: about 15% of it page faults on the run's fresh memory and much
 * of the rest cache misses on 1024 devices' task records.
 *
 * Second pass (435b4d1 -> 3074311), the scale case. perf stat: 17.7k page
 * faults a run (70 MB touched fresh: tasks, edges, CSR, realloc copies; a
 * quarter of the time in the kernel); perf record -e cpu-clock: queue pop
 * 28%, then the graph's on_done/start (misses on the successor's dependency
 * count and hot record, on the succ array, on the 72-byte task records).
 *   sim_run keeps the last run's emptied graph per thread and freeze reuses
 *       its arrays: ~1k faults a run after the first (graph.c, sim.c);
 *   the dependency count moved into the 32-byte hot record (one miss per
 *       edge target, not two), times into a dense 24-byte array, and the
 *       public records are read once by freeze and written once after the
 *       run, in order (graph.c).
 * Tried and dropped (slower, min of 6-8 interleaved A/B runs): 16-byte heap
 * nodes with a 32-bit seq (+4%), an 8-ary heap (+8%), a 64-byte hot record
 * holding times and two inline successors (+10%: twice the lines). Queue
 * pops stay the largest cost: the heap holds ~1.7k events, so a pop is five
 * dependent levels of L1 loads and compares; no event is pushed at the
 * current time (1k of 700k), so a same-time FIFO would not help.
 * Instructions (callgrind, one run) barely move: worldwide netem 129.0 M ->
 * 130.4 M, tcp 173.3 M -> 174.7 M, scale netem 785.6 M -> 797.2 M (the
 * publish pass); the gain is memory. Wall, 3 whole-bench runs interleaved
 * (load ~1.4), flows per CPU-second:
 *                        before               after
 *   scale ideal          2.31-2.32 M          2.72-3.12 M (pays the first
 *                                             run's fresh memory)
 *   scale netem          2.14-2.21 M          3.36-3.42 M
 *   scale tcp            2.09-2.16 M          3.32-3.42 M
 *   scale wall a run     0.122-0.135 s        0.083-0.104 s
 *   worldwide ideal      4.58-4.84 M          4.85-5.03 M
 *   worldwide netem      4.43-4.92 M          4.57-5.03 M
 *   worldwide tcp        2.97-4.03 M          2.65-4.13 M
 *   peak RSS             74.9 MiB             84.2 MiB (the times array)
 * Results bit-identical: geodes simulate --json, 4 scenarios x 3 methods x
 * 3 networks plus sharded-ps, ring and 1f1b. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim.h"
#include "tests/bench.h"

/* GEODES_BENCH_ONLY=worldwide|scale and GEODES_BENCH_NET=ideal|netem|tcp pick
 * one case, GEODES_BENCH_REPS=n overrides the repetitions: small, repeatable
 * drivers for valgrind --tool=callgrind. */
static bool wanted(const char *label, transport_model m) {
  const char *only = getenv("GEODES_BENCH_ONLY");
  const char *net = getenv("GEODES_BENCH_NET");
  if (only && strncmp(label, only, strlen(only)) != 0) return false;
  return !net || strcmp(net, transport_model_name(m)) == 0;
}

static void bench(const char *label, const scenario *s, const char *method,
                  transport_model m, int reps) {
  if (!wanted(label, m)) return;
  if (getenv("GEODES_BENCH_REPS")) reps = atoi(getenv("GEODES_BENCH_REPS"));
  alloc *a = alloc_fixed(method, s->workload.replicas, s->workload.stages, 1);
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_result r;
  err e = {0};
  double w0 = bench_wall_s(), c0 = bench_cpu_s();
  uint64_t events = 0, flows = 0;
  double it = 0;
  for (int i = 0; i < reps; i++) {
    if (sim_run(s, a, &o, &r, &e)) {
      fprintf(stderr, "%s\n", e.msg);
      exit(1);
    }
    events += r.events;
    flows += r.flows;
    it = r.iteration_s;
    sim_result_free(&r);
  }
  double wall = (bench_wall_s() - w0) / reps, cpu = (bench_cpu_s() - c0) / reps;
  printf("%-30s %-6s %-13s iter %9.3f s | wall %8.4f s  %6.2fM events/s  "
         "%6.2fM flows/s (%llu ev, %llu flows)\n",
         label, transport_model_name(m), method, it, wall,
         (double)events / reps / cpu * 1e-6, (double)flows / reps / cpu * 1e-6,
         (unsigned long long)(events / reps), (unsigned long long)(flows / reps));
  alloc_free(a);
}

int main(void) {
  err e = {0};
  scenario *s = bench_scenario("worldwide");
  const char *methods[] = {"dtfm-identity", "random"};
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < 2; i++)
      bench("worldwide 64 GPUs L24 B1024", s, methods[i], (transport_model)m, 10);
  /* The same under tcp with one socket per connection (the transport
   * before NCCL's sockets were modelled), side by side with the 16 above;
   * and Megatron's runtime (blocking 1F1B, calls, all-reduces). */
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.nccl_sockets = 1;
  scenario *s1 = scenario_load("worldwide", &e);
  if (!s1 || scenario_apply(s1, &k, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  for (int i = 0; i < 2; i++)
    bench("worldwide tcp, 1 socket", s1, methods[i], TRANSPORT_TCP, 10);
  scenario_free(s1);
  scenario_knobs_init(&k);
  k.runtime = "megatron";
  scenario_apply(s, &k, &e);
  for (int m = 1; m < 3; m++)
    bench("worldwide megatron runtime", s, "megatron", (transport_model)m, 10);
  scenario_free(s);

  char path[] = "/tmp/geodes_bench_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"name\": \"scale-1024\", \"sites\": [");
  for (int i = 0; i < 32; i++)
    fprintf(f, "%s{\"name\": \"site%d\", \"devices\": 32, \"gpu\": \"V100\", "
            "\"nic_gbps\": 10}", i ? ", " : "", i);
  fprintf(f, "], \"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 1},\n"
          "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 48, \"batch\": "
          "4096, \"micro_batch\": 1, \"stages\": 16, \"replicas\": 64, "
          "\"micro_batches_per_pass\": 32}}\n");
  fclose(f);
  s = scenario_load(path, &e);
  unlink(path);
  if (!s) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  for (int m = 0; m < 3; m++)
    bench("scale 1024 GPUs 32 sites", s, "random", (transport_model)m, 3);
  scenario_free(s);
  printf("peak memory (max RSS) %.1f MiB\n",
         (double)bench_peak_rss_kib() / 1024);
  return 0;
}
