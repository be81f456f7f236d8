/* test_scenario_price: a scenario's prices and power
 * (traces/scenario_price.c): a site's own GPU-hour over its instance's,
 * the table's on-demand and spot columns, the egress price of each ordered
 * pair (link over site over network, directional, inside a site free),
 * the export round trip, the prices hash (apart from scenario_hash), a
 * user's "prices" table, and every refusal at its FILE:LINE. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/support.h"
#include "traces/scenario.h"
#include "traces/scenario_export.h"

#define SITES_                                                            \
  "\"sites\": [{\"name\": \"A\", \"devices\": 1, %s},\n"                  \
  "{\"name\": \"B\", \"devices\": 1, \"instance\": \"p3.8xlarge\"%s},\n"    \
  "{\"name\": \"C\", \"devices\": 1}],\n"
#define WORK_                                                              \
  "\"workload\": {\"model\": \"gpt3-small\", \"batch\": 3, \"micro_batch\": " \
  "1, \"stages\": 3, \"replicas\": 1}}"

/* Three sites A (its keys a), B (a p3.8xlarge, keys b), C; the network
 * block's keys net. NULL and *e when it does not load. */
static scenario *load(const char *a, const char *b, const char *net,
                      err *e) {
  char text[4096];
  snprintf(text, sizeof text, "{\"name\": \"p\",\n" SITES_
           "\"network\": {%s},\n" WORK_, a, b, net);
  return scenario_parse(text, strlen(text), support_path("p.json"), e);
}

static double pair(const scenario *s, int a, int b) {
  return s->usd_per_gb[(size_t)a * s->nsites + b];
}

Test(scenario_price, gpu_hours) {
  err e = {0};
  scenario *s = load("\"usd_per_gpu_hour\": 2.5, \"instance\": \"p3.2xlarge\"",
                     "", "\"latency_ms\": 1, \"bandwidth_gbps\": 1", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(s->sites[0].usd_per_gpu_hour, 2.5, "the site's own wins");
  cr_expect_eq(s->sites[1].usd_per_gpu_hour, 12.24 / 4, "on demand / GPUs");
  cr_expect(strstr(s->sites[1].price_from, "prices.csv:") == s->sites[1].price_from);
  cr_expect(strstr(s->sites[1].price_from, "p3.8xlarge on demand, us-east-1"));
  cr_expect(isnan(s->sites[2].usd_per_gpu_hour), "C: not priced");
  cr_expect_null(s->sites[2].price_from);
  scenario_free(s);
  s = load("\"usd_per_gpu_hour\": 1", ", \"spot\": true",
           "\"latency_ms\": 1, \"bandwidth_gbps\": 1", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(s->sites[1].usd_per_gpu_hour, 1.9724 / 4, "spot / GPUs");
  scenario_free(s);
}

Test(scenario_price, egress_pairs) {
  err e = {0};
  scenario *s = load(
      "\"usd_per_gb\": 0.09", "",
      "\"latency_ms\": 1, \"bandwidth_gbps\": 1, \"usd_per_gb\": 0.02,"
      "\"links\": [{\"from\": \"A\", \"to\": \"B\", \"latency_ms\": 1, "
      "\"bandwidth_gbps\": 1, \"usd_per_gb\": 0.01},"
      "{\"from\": \"B\", \"to\": \"A\", \"latency_ms\": 1, "
      "\"bandwidth_gbps\": 1},"
      "{\"between\": [\"C\", \"C\"], \"latency_ms\": 0.1, "
      "\"bandwidth_gbps\": 10, \"usd_per_gb\": 0.005}]", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(pair(s, 0, 1), 0.01, "the link's");
  cr_expect_eq(pair(s, 0, 2), 0.09, "A's, billed at the sender");
  cr_expect_eq(pair(s, 1, 0), 0.02, "the network's: B states none");
  cr_expect_eq(pair(s, 2, 1), 0.02);
  cr_expect_eq(pair(s, 0, 0), 0, "inside a site: free");
  cr_expect_eq(pair(s, 2, 2), 0.005, "unless its link prices it");
  /* the export keeps every price in effect */
  json_t *j = scenario_export(s, NULL);
  char *text = json_dumps(j, 0);
  scenario *t = scenario_parse(text, strlen(text), "x.json", &e);
  cr_assert_not_null(t, "%s", e.msg);
  cr_expect_eq(scenario_prices_hash(t), scenario_prices_hash(s));
  cr_expect_eq(scenario_hash(t), scenario_hash(s));
  free(text), json_decref(j), scenario_free(t), scenario_free(s);
  s = load("\"usd_per_gpu_hour\": 1", "", "\"latency_ms\": 1, "
           "\"bandwidth_gbps\": 1", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect(isnan(pair(s, 0, 1)), "no egress price: not priced");
  scenario_free(s);
}

/* Prices are not what a simulated time depends on: scenario_hash stays,
 * scenario_prices_hash moves (and is 0 for a scenario without any). */
Test(scenario_price, hashes) {
  err e = {0};
  const char *net = "\"latency_ms\": 1, \"bandwidth_gbps\": 1";
  scenario *a = load("\"gpu\": \"V100\"", "", net, &e);
  scenario *b = load("\"usd_per_gpu_hour\": 1", "", net, &e);
  scenario *c = load("\"usd_per_gpu_hour\": 1, \"gco2_per_kwh\": 300", "",
                     net, &e);
  cr_assert(a && b && c, "%s", e.msg);
  cr_expect_eq(scenario_hash(a), scenario_hash(b));
  cr_expect_eq(scenario_hash(b), scenario_hash(c));
  cr_expect_neq(scenario_prices_hash(a), scenario_prices_hash(b));
  cr_expect_neq(scenario_prices_hash(b), scenario_prices_hash(c));
  scenario_free(a), scenario_free(b), scenario_free(c);
  char text[1024];
  snprintf(text, sizeof text, "{\"name\": \"q\", \"sites\": [{\"name\": "
           "\"A\", \"devices\": 3}], \"network\": {%s},\n" WORK_, net);
  a = scenario_parse(text, strlen(text), "q.json", &e);
  cr_assert_not_null(a, "%s", e.msg);
  cr_expect_eq(scenario_prices_hash(a), 0, "nothing priced");
  scenario_free(a);
}

Test(scenario_price, a_users_table) {
  support_write_file(support_path("mine.csv"),
                     "instance_type,gpus_per_instance,usd_per_hour,"
                     "spot_usd_per_hour,region,date,source\n"
                     "p3.8xlarge,4,8,,eu,2026-01-01,my invoice\n");
  err e = {0};
  scenario *s = load("\"usd_per_gpu_hour\": 1", ", \"prices\": 0", "", &e);
  cr_expect_null(s, "prices is a top-level key");
  char text[2048];
  snprintf(text, sizeof text, "{\"name\": \"p\", \"prices\": \"mine.csv\",\n"
           SITES_ "\"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"
           WORK_, "\"usd_per_gpu_hour\": 1", "");
  s = scenario_parse(text, strlen(text), support_path("p.json"), &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_expect_eq(s->sites[1].usd_per_gpu_hour, 2.0);
  cr_expect(strstr(s->sites[1].price_from, "mine.csv:2: p3.8xlarge on demand, "
                   "eu, 2026-01-01") != NULL, "%s", s->sites[1].price_from);
  scenario_free(s);
}

/* Each refusal names the file, the line and the key. */
Test(scenario_price, refusals_pinned) {
  const char *net = "\"latency_ms\": 1, \"bandwidth_gbps\": 1";
  struct { const char *a, *b, *net, *msg; } c[] = {
      {"\"usd_per_gpu_hour\": -1", "", net,
       ":2: sites[0].usd_per_gpu_hour: must be >= 0, not -1"},
      {"\"gco2_per_kwh\": -5", "", net,
       ":2: sites[0].gco2_per_kwh: must be >= 0, not -5"},
      {"\"idle_w\": \"x\"", "", net, ":2: sites[0].idle_w: must be a number"},
      {"\"usd_per_gb\": -0.1", "", net,
       ":2: sites[0].usd_per_gb: must be >= 0, not -0.1"},
      {"\"spot\": 1", "", net, ":2: sites[0].spot: must be true or false"},
      /* issue 35, 12: an unknown type is refused at load (it loaded, and
       * only faults synth refused it), priced or not */
      {"\"instance\": \"p9.huge\"", "", net, ":2: sites[0].instance: "
       "'p9.huge' is not an instance type of prices.csv (a \"prices\" table "
       "may list it)"},
      {"\"instance\": \"P3.2xlarge\", \"usd_per_gpu_hour\": 1", "", net,
       ":2: sites[0].instance: 'P3.2xlarge' is not an instance type of "
       "prices.csv (a \"prices\" table may list it)"},
      {"\"gpu\": \"V100\"", "", "\"latency_ms\": 1, \"bandwidth_gbps\": 1, "
       "\"usd_per_gb\": -2", ":5: network.usd_per_gb: must be >= 0, not -2"}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    err e = {0};
    scenario *s = load(c[i].a, c[i].b, c[i].net, &e);
    cr_expect_null(s, "case %zu loaded", i);
    const char *at = strstr(e.msg, "p.json:");
    cr_expect(at && strcmp(at + 6, c[i].msg) == 0, "case %zu: %s", i, e.msg);
    scenario_free(s);
  }
}

Test(scenario_price, table_refusals) {
  support_write_file(support_path("nosrc.csv"),
                     "instance_type,gpus_per_instance,usd_per_hour,"
                     "spot_usd_per_hour,region,date,source\n"
                     "p3.8xlarge,4,8,,eu,2026-01-01,\n");
  char text[2048];
  snprintf(text, sizeof text, "{\"name\": \"p\", \"prices\": \"nosrc.csv\",\n"
           SITES_ "\"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 1},\n"
           WORK_, "\"usd_per_gpu_hour\": 1", ", \"spot\": true");
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), support_path("p.json"), &e);
  cr_expect_null(s);
  cr_expect(strstr(e.msg, "nosrc.csv:2: source: missing (every price names "
                   "where it was read)") != NULL, "%s", e.msg);
  support_write_file(support_path("nosrc.csv"),
                     "instance_type,gpus_per_instance,usd_per_hour,"
                     "spot_usd_per_hour,region,date,source\n"
                     "p3.8xlarge,4,8,,eu,2026-01-01,mine\n");
  err e2 = {0};
  s = scenario_parse(text, strlen(text), support_path("p.json"), &e2);
  cr_expect_null(s, "B asks the spot price the table lacks");
  cr_expect(strstr(e2.msg, "p.json:3: sites[1].spot: p3.8xlarge has no spot "
                   "price in ") != NULL, "%s", e2.msg);
}
