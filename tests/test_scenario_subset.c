/* test_scenario_subset: a scenario restricted to some devices keeps every
 * link, GPU and site of the devices it keeps (checked pair by pair against
 * the parent), renumbers them in order, keeps the overrides between kept
 * devices, and scales the batch with the replicas; a trace snapshot holds
 * the instant it was taken, pair by pair. */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/support.h"
#include "traces/scenario_subset.h"
#include "traces/trace_snapshot.h"

TestSuite(scenario_subset, .timeout = 60);

Test(scenario_subset, links_and_sites_are_the_parents) {
  scenario *s = support_scenario("worldwide-varying");
  int keep[56], n = 0;
  for (int d = 0; d < 64 && n < 56; d++)
    if (d != 3 && d % 9 != 5) keep[n++] = d; /* drops 3, 5, 14, 23, ... */
  cr_assert_eq(n, 56);
  scenario *v = scenario_subset(s, keep, n, 7);
  cr_expect_eq(v->ndevices, 56);
  cr_expect_eq(v->workload.replicas, 7);
  cr_expect_eq(v->workload.batch, 1024 / 8 * 7);
  cr_expect_eq(v->nsites, s->nsites);
  int total = 0;
  for (int k = 0; k < v->nsites; k++) {
    cr_expect_eq(v->sites[k].first_device, total);
    total += v->sites[k].ndevices;
    for (int i = 0; i < v->sites[k].ndevices; i++)
      cr_expect_eq(v->device_site[v->sites[k].first_device + i], k);
    cr_expect_str_eq(v->sites[k].name, s->sites[k].name);
  }
  cr_expect_eq(total, 56);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j) continue;
      for (int64_t t = 0; t < 4000000000000LL; t += 977000000000LL) {
        trace_value a = scenario_link(v, i, j, t),
                    b = scenario_link(s, keep[i], keep[j], t);
        cr_assert(a.latency_ms == b.latency_ms &&
                  a.bandwidth_gbps == b.bandwidth_gbps, "%d %d", i, j);
      }
    }
  scenario_subset_free(v);
  scenario_free(s);
}

Test(scenario_subset, overrides_between_kept_devices) {
  const char *json =
      "{\"name\": \"o\", \"sites\": [{\"name\": \"x\", \"devices\": 4, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}], \"network\": {\"latency_ms\": 1,"
      " \"bandwidth_gbps\": 1, \"overrides\": ["
      "{\"a\": 0, \"b\": 3, \"latency_ms\": 7, \"bandwidth_gbps\": 2},"
      "{\"a\": 1, \"b\": 2, \"latency_ms\": 9, \"bandwidth_gbps\": 3}]},"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 2, \"batch\": 8, "
      "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}";
  err e;
  err_clear(&e);
  scenario *s = scenario_parse(json, strlen(json), "o.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  int keep[] = {0, 3};
  scenario *v = scenario_subset(s, keep, 2, 1);
  cr_expect_eq(v->noverrides, 1);
  cr_expect_eq(scenario_link(v, 0, 1, 0).latency_ms, 7);
  cr_expect_eq(scenario_link(v, 1, 0, 0).bandwidth_gbps, 2);
  cr_expect_eq(v->workload.batch, 4);
  cr_expect_eq(s->workload.batch, 8, "the parent is untouched");
  cr_expect_eq(s->noverrides, 2);
  scenario_subset_free(v);
  scenario_free(s);
}

Test(scenario_subset, snapshot_holds_the_instant) {
  scenario *s = support_scenario("worldwide-varying");
  for (int64_t t = 0; t < 3700000000000LL; t += 123456789012LL) {
    err e;
    err_clear(&e);
    trace *snap = trace_snapshot(s->network, t, &e);
    cr_assert_not_null(snap, "%s", e.msg);
    cr_expect(trace_is_static(snap));
    for (int a = 0; a < s->nsites; a++)
      for (int b = 0; b < s->nsites; b++) {
        trace_value x = trace_at(snap, a, b, 5), y = trace_at(s->network, a, b, t);
        cr_assert(x.latency_ms == y.latency_ms &&
                  x.bandwidth_gbps == y.bandwidth_gbps);
      }
    trace_free(snap);
  }
  scenario_free(s);
}
