/* test_unused: the workload values a run does not use (models/unused.c),
 * each checked against the engine — another value of one stated unused
 * gives the same times to the bit — and the options Megatron's runtime
 * cannot honour refused naming it (models/spec_workload.c; issue 33: under
 * --runtime megatron, --dp-algo ring, central-ps and sharded-ps gave the
 * same iteration to the bit). */
#include <criterion/criterion.h>
#include <string.h>

#include "models/spec_workload.h"
#include "models/unused.h"
#include "sim/sim.h"
#include "tests/support.h"

TestSuite(unused, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

/* Sites a, b, c of two A100 each, 10 ms and 1 Gbit/s between them. */
static scenario *six(const char *workload) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"six\", \"sites\": [{\"name\": \"a\", \"devices\": "
           "2, \"gpu\": \"A100\"}, {\"name\": \"b\", \"devices\": 2, \"gpu\": "
           "\"A100\"}, {\"name\": \"c\", \"devices\": 2, \"gpu\": "
           "\"A100\"}], \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": "
           "1, \"links\": [{\"between\": [\"a\", \"a\"], \"latency_ms\": 0.01, "
           "\"bandwidth_gbps\": 100}]}, \"workload\": {\"model\": "
           "\"gpt3-small\", \"layers\": 6, \"batch\": 12, %s}}", workload);
  return support_scenario(support_write_file(support_path("six.json"), text));
}

/* The unused values of s under a, as "row,row,...". */
static void list(const scenario *s, const alloc *a, char *buf, size_t size) {
  spec_workload w;
  err e = {0};
  cr_assert_eq(spec_workload_resolve(s, &w, &e), ERR_OK, "%s", e.msg);
  unused_value u[UNUSED_MAX];
  int n = unused_values(s, &w, a, NULL, u);
  buf[0] = '\0';
  for (int i = 0; i < n; i++)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? "," : "",
             workload_rows[u[i].row].key);
}

static double run_with(const char *workload, const alloc *a) {
  scenario *s = six(workload);
  sim_options o = sim_options_default();
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &o, &r, &e), ERR_OK, "%s", e.msg);
  double t = r.iteration_s;
  sim_result_free(&r);
  scenario_free(s);
  return t;
}

/* One replica: no sync, whatever the algorithm, and no ZeRO sharding
 * (stated, and true); a
 * hier-ring whose groups each sit in one site is central-ps, one whose
 * groups have one member per site is the ring (both stated, both true). */
Test(unused, stated_values_change_nothing) {
  char buf[256];
  alloc *tall = alloc_identity(1, 6);
  scenario *s = six("\"micro_batch\": 1, \"stages\": 6, \"replicas\": 1, "
                    "\"dp_algo\": \"sharded-ps\", \"grad_bits\": 8");
  list(s, tall, buf, sizeof buf);
  cr_expect_str_eq(buf, "dp_algo,grad_bits");
  scenario_free(s);
  double one = run_with("\"micro_batch\": 1, \"stages\": 6, \"replicas\": 1, "
                        "\"dp_algo\": \"sharded-ps\"", tall);
  cr_expect(one == run_with("\"micro_batch\": 1, \"stages\": 6, \"replicas\": "
                            "1, \"dp_algo\": \"ring\", \"grad_bits\": 4", tall));
  /* ZeRO over one replica shards nothing (stated, and true) */
  const char *z = "\"micro_batch\": 1, \"stages\": 6, \"replicas\": 1, "
                  "\"dp_algo\": \"ring\", \"zero\": %d";
  char z0[256], z2[256];
  snprintf(z0, sizeof z0, z, 0), snprintf(z2, sizeof z2, z, 2);
  s = six(z2);
  list(s, tall, buf, sizeof buf);
  cr_expect_str_eq(buf, "dp_algo,zero");
  scenario_free(s);
  cr_expect(run_with(z0, tall) == run_with(z2, tall));
  alloc_free(tall);
  /* 3 x 2: stage st's group is devices {2 st, 2 st + 1}, one site each */
  alloc *inside = alloc_megatron(2, 3);
  const char *w = "\"micro_batch\": 1, \"stages\": 3, \"replicas\": 2, "
                  "\"dp_algo\": \"%s\"";
  char hier[256], central[256], ring[256];
  snprintf(hier, sizeof hier, w, "hier-ring");
  snprintf(central, sizeof central, w, "central-ps");
  snprintf(ring, sizeof ring, w, "ring");
  s = six(hier);
  list(s, inside, buf, sizeof buf);
  cr_expect_str_eq(buf, "dp_algo");
  scenario_free(s);
  cr_expect(run_with(hier, inside) == run_with(central, inside));
  alloc_free(inside);
  /* identity: pipeline r = devices 3 r .. 3 r + 2, so stage st's group is
   * {st, 3 + st}: sites {a, b}, {a, c}, {b, c}, one member each */
  alloc *apart = alloc_identity(2, 3);
  s = six(hier);
  list(s, apart, buf, sizeof buf);
  cr_expect_str_eq(buf, "dp_algo");
  scenario_free(s);
  cr_expect(run_with(hier, apart) == run_with(ring, apart));
  cr_expect(run_with(hier, apart) != run_with(central, apart),
            "and the ring is not central-ps here: the test shows something");
  alloc_free(apart);
}

/* Megatron-LM's runtime runs 1F1B and NCCL's ring: an option that asks
 * for another schedule, algorithm or passes is refused naming the runtime
 * (exit 2); the scenario file's are stated (and its passes of K, which a
 * measurements CSV gives for either runtime), with the run's own in the
 * workload line and --json. */
Test(unused, megatron_refuses_or_states) {
  support_run r = {0};
  const char *base = "simulate regional --method dtfm-identity --runtime "
                     "megatron --layers 8";
  static const char *const refused[] = {
      "--dp-algo central-ps", "--dp-algo sharded-ps", "--dp-algo hier-ring",
      "--schedule gpipe"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    cr_expect_eq(support_geodes(&r, "%s %s", base, refused[i]), 2, "%s: %s",
                 refused[i], r.err);
    cr_expect(strstr(r.err, "runtime megatron"), "%s: %s", refused[i], r.err);
  }
  cr_assert_eq(support_geodes(&r, "%s --dp-algo ring --schedule 1f1b", base),
               0, "%s", r.err);
  cr_assert_eq(support_geodes(&r, "%s", base), 0, "%s", r.err);
  cr_expect(strstr(r.out, ", 1f1b, 1 pass x "), "%s", r.out);
  cr_expect(strstr(r.out, "unused      schedule gpipe: runtime megatron runs "
                   "1F1B\n"), "%s", r.out);
  cr_expect(strstr(r.out, "unused      dp_algo central-ps: runtime megatron "
                   "all-reduces with NCCL's ring\n"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "%s --micro-batches-per-pass 4", base), 0,
               "%s", r.err);
  cr_expect(strstr(r.out, "unused      micro_batches_per_pass 4: runtime "
                   "megatron runs a replica's micro-batches in one 1F1B "
                   "schedule, without passes\n"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "%s --json", base), 0, "%s", r.err);
  cr_expect(strstr(r.out, "\"dp_algo\":\"ring\""), "%s", r.out);
  cr_expect(strstr(r.out, "\"unused\":{\"schedule\":"), "%s", r.out);
  support_run_clear(&r);
}
