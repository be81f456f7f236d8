/* test_cli_bill: the bill as the commands show it (sim/cli/cli_bill.c and
 * the dollar options of schedule): simulate's cost object against its own
 * parts, "not priced" where nothing is, every refusal of the dollar
 * objectives and of the budget pinned (exit 1, or 2 for a bad option), a
 * bad price in a scenario at its FILE:LINE, and a sweep's bill columns
 * equal with and without --jobs and MPI. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_bill, .init = support_dir_make, .fini = support_dir_remove);

/* Two sites of four V100s, Dear first ($3) and Cheap ($1); prices as the
 * keys say (dear, cheap: a site's extra keys). */
static const char *two(const char *name, const char *dear,
                       const char *cheap) {
  const support_site sites[] = {{.name = "Dear", .devices = 4, .keys = dear},
                                {.name = "Cheap", .devices = 4, .keys = cheap}};
  return support_build_file(&(support_spec){
      .name = "two", .nsites = 2, .sites = sites,
      .network = "\"latency_ms\": 5, \"bandwidth_gbps\": 10",
      .workload = "\"model\": \"gpt3-small\", \"batch\": 8, "
                  "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 4",
      .file = name});
}

static const char *priced(void) {
  return two("priced.json", ", \"usd_per_gpu_hour\": 3, \"usd_per_gb\": 0.02",
             ", \"usd_per_gpu_hour\": 1, \"usd_per_gb\": 0.09");
}

static double num(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  cr_assert(json_is_number(v), "%s is not a number", key);
  return json_number_value(v);
}

Test(cli_bill, simulate_json_adds_up) {
  const char *f = priced();
  json_t *o = support_geodes_json("simulate '%s' --method dtfm-identity "
                                  "--json", f);
  json_t *c = json_object_get(o, "cost");
  double it = num(o, "iteration_s");
  cr_expect(fabs(num(c, "compute_usd") - (4 * 3 + 4 * 1) * it / 3600) < 1e-12);
  cr_expect(fabs(num(c, "usd") - num(c, "compute_usd") - num(c, "egress_usd")) <
            1e-15);
  cr_expect(fabs(num(c, "usd_per_1k_samples") - num(c, "usd") / 8 * 1000) <
            1e-12, "the batch of 8");
  double share = 0, wan = 0;
  json_t *e;
  size_t i;
  json_array_foreach(json_object_get(c, "egress"), i, e) {
    share += num(e, "share"), wan += num(e, "bytes");
    const char *src = json_string_value(json_object_get(e, "src_site"));
    cr_expect_eq(num(e, "usd_per_gb"), strcmp(src, "Dear") ? 0.09 : 0.02,
                 "billed at the sender");
  }
  cr_expect(fabs(share - 1) < 1e-12);
  cr_expect(fabs(wan - num(o, "wan_bytes")) <= 1e-9 * wan);
  cr_expect(json_is_true(json_object_get(c, "any_price")));
  cr_expect(json_is_null(json_object_get(c, "kwh")), "no idle power stated");
  json_decref(o);
}

Test(cli_bill, nothing_priced_says_so) {
  const char *f = two("free.json", "", "");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity", f),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "cost        not priced (no site states "
                   "usd_per_gpu_hour or an instance of prices.csv, no egress "
                   "price)\n") != NULL, "%s", r.out);
  json_t *o = support_geodes_json("simulate '%s' --method dtfm-identity "
                                  "--json", f),
         *c = json_object_get(o, "cost");
  cr_expect(json_is_false(json_object_get(c, "any_price")));
  cr_expect(json_is_null(json_object_get(c, "usd")));
  json_decref(o);
  support_run_clear(&r);
}

/* Each refusal: its exit status and its whole message. */
Test(cli_bill, refusals_pinned) {
  const char *f = priced();
  const char *none = two("none.json", "", "");
  const char *half = two("half.json", "", ", \"usd_per_gpu_hour\": 1");
  struct { const char *file, *args; int status; const char *msg; } c[] = {
      {none, "--objective usd-per-sample", 1,
       "geodes: schedule: --objective usd-per-sample: nothing in two is "
       "priced (give its sites usd_per_gpu_hour, or an instance of "
       "prices.csv; traces/FORMATS.md)\n"},
      {half, "--shape auto --objective samples-per-usd", 1,
       "geodes: schedule: --objective samples-per-usd: sites[0] (Dear) of "
       "two is not priced: a search would take its GPUs for free (give its "
       "usd_per_gpu_hour, or an instance of prices.csv)\n"},
      {f, "--max-usd-per-hour 15", 1,
       "geodes: schedule: --max-usd-per-hour 15: below what the 8 devices of "
       "two cost per hour, $16 (a placement holds them all)\n"},
      {f, "--shape auto --max-usd-per-hour 0.5", 1,
       "geodes: schedule: --max-usd-per-hour 0.5: below the cheapest "
       "device-hour of two, $1 (Cheap)\n"},
      {f, "--max-usd-per-hour nan", 2,
       "geodes schedule: --max-usd-per-hour wants a number in [1e-09, "
       "1e+12], not 'nan'\nTry 'geodes schedule --help'.\n"},
      {f, "--max-usd-per-hour -3", 2,
       "geodes schedule: --max-usd-per-hour wants a number in [1e-09, "
       "1e+12], not '-3'\nTry 'geodes schedule --help'.\n"},
      {f, "--objective usd-per-sample --method greedy", 2,
       "geodes schedule: --objective usd-per-sample: --method greedy "
       "searches nothing; give gcma, hybrid or random-search\n"
       "Try 'geodes schedule --help'.\n"},
      {f, "--objective dtfm --max-usd-per-hour 40", 2,
       "geodes schedule: --max-usd-per-hour constrains the predictor's "
       "objectives: give --objective predicted, usd-per-sample or "
       "samples-per-usd\nTry 'geodes schedule --help'.\n"},
      {f, "--shape auto --objective usd-per-sample --shape-objective "
          "iteration", 2,
       "geodes schedule: --objective usd-per-sample and --shape-objective "
       "iteration: give one\nTry 'geodes schedule --help'.\n"}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    support_run r = {0};
    int st = support_geodes(&r, "schedule '%s' %s --quiet", c[i].file,
                            c[i].args);
    cr_expect_eq(st, c[i].status, "case %zu: status %d", i, st);
    cr_expect_str_eq(r.err, c[i].msg, "case %zu", i);
    cr_expect_eq(r.out_len, 0, "case %zu: nothing written", i);
    support_run_clear(&r);
  }
}

/* A bad price in a scenario: the file, the line and the key. */
Test(cli_bill, a_bad_price_names_its_line) {
  const char *f = two("bad.json", "", ", \"gco2_per_kwh\": -20");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity", f),
               1);
  char want[512];
  snprintf(want, sizeof want, "geodes: %s:3: sites[1].gco2_per_kwh: must be "
           ">= 0, not -20\n", f);
  cr_expect_str_eq(r.err, want);
  support_run_clear(&r);
}

/* The dollar objective in a placement search reports the fastest beside
 * its choice; the choice is no dearer per sample than the fastest. */
Test(cli_bill, schedule_reports_the_fastest_beside) {
  const char *f = priced();
  json_t *o = support_geodes_json("schedule '%s' --objective usd-per-sample "
                                  "--trials 200 --json --quiet", f);
  json_t *fast = json_object_get(o, "fastest"), *c = json_object_get(o, "cost");
  cr_assert(json_is_object(fast));
  cr_expect_str_eq(json_string_value(json_object_get(o, "objective")),
                   "usd-per-sample");
  cr_expect(num(o, "objective_value") > 0);
  cr_expect(num(c, "usd_per_1k_samples") > 0);
  cr_expect(num(fast, "usd_per_1k_samples") > 0);
  json_decref(o);
}

/* A sweep's rows, the bill's columns among them, are the same whether one
 * process, forked jobs or MPI ranks computed them; the columns are filled
 * for a scenario priced everywhere. */
Test(cli_bill, sweep_rows_agree_three_ways) {
  const char *f = priced();
  const char *sw = support_path("sw.json");
  char text[512];
  snprintf(text, sizeof text, "{\"scenarios\": [\"%s\"], \"methods\": "
           "[\"dtfm-identity\", \"greedy\"], \"networks\": [\"tcp\"]}\n", f);
  support_write_file(sw, text);
  const char *one = support_path("a.db"), *jobs = support_path("b.db"),
             *mpi = support_path("c.db");
  support_sweep_three_ways(sw, "", one, jobs, mpi, support_dump_results);
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM results WHERE usd "
                                    "> 0 AND usd_per_1k_samples > 0 AND "
                                    "egress_usd >= 0 AND usd_per_hour > 0"),
               2);
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM results WHERE kwh "
                                    "IS NULL"), 2, "no idle power stated");
}
