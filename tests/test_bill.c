/* test_bill: a bill by hand (models/bill.h): the energy of a device half
 * busy, egress priced in each direction at its sender, totals that are
 * missing when one part is not priced, what lost time cost, the compute
 * rate and the cheapest GPU-hour. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "models/bill.h"
#include "tests/support.h"

/* Two sites A and B of one V100 each; A's keys a, B's keys b, the
 * network's keys net. */
static scenario *two(const char *a, const char *b, const char *net) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"two\", \"sites\": [{\"name\": \"A\", \"devices\": 1%s},"
           "{\"name\": \"B\", \"devices\": 1%s}], \"network\": {\"latency_ms\": "
           "1, \"bandwidth_gbps\": 1%s}, \"workload\": {\"model\": "
           "\"gpt3-small\", \"batch\": 4, \"micro_batch\": 1, \"stages\": 2, "
           "\"replicas\": 1}}", a, b, net);
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), "two.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  return s;
}

static void make(const scenario *s, const bill_use *u, bill *b) {
  err e = {0};
  cr_assert_eq(bill_make(s, u, b, &e), ERR_OK, "%s", e.msg);
}

/* An hour held, half of it busy: 0.5 h x 300 W (the V100's board power)
 * + 0.5 h x 50 W idle = 0.175 kWh, at 400 g/kWh 70 g. */
Test(bill, energy_of_a_device_half_busy) {
  scenario *s = two(", \"idle_w\": 50, \"gco2_per_kwh\": 400",
                    ", \"idle_w\": 50, \"gco2_per_kwh\": 400", "");
  int dev = 0;
  double busy[2] = {1800, 0};
  bill_use u = {.held_s = 3600, .devices = &dev, .ndevices = 1,
                .busy_s = busy};
  bill b;
  make(s, &u, &b);
  cr_expect_eq(b.devices, 1);
  cr_expect(fabs(b.busy_kwh - 0.15) < 1e-12, "%.17g", b.busy_kwh);
  cr_expect(fabs(b.kwh - 0.175) < 1e-12, "%.17g", b.kwh);
  cr_expect(fabs(b.gco2 - 70) < 1e-9, "%.17g", b.gco2);
  cr_expect(isnan(b.usd), "no price: no dollars");
  cr_expect_eq(b.site[1].devices, 0);
  bill_free(&b);
  scenario_free(s);
  s = two("", "", ""); /* no idle power stated: energy not known */
  make(s, &u, &b);
  cr_expect(fabs(b.busy_kwh - 0.15) < 1e-12);
  cr_expect(isnan(b.kwh) && isnan(b.gco2));
  bill_free(&b);
  scenario_free(s);
}

/* 2 GB A -> B at A's 0.09 per GB, 1 GB B -> A at B's 0.02: 0.18 billed at
 * A, 0.02 at B; inside A free; the GPUs at 2 and 3 per hour for 30 min. */
Test(bill, egress_each_direction_at_its_sender) {
  scenario *s = two(", \"usd_per_gpu_hour\": 2, \"usd_per_gb\": 0.09",
                    ", \"usd_per_gpu_hour\": 3, \"usd_per_gb\": 0.02", "");
  bill_bytes v[] = {{1, 0, 1e9}, {0, 1, 2e9}, {0, 0, 5e9}};
  bill_use u = {.held_s = 1800, .bytes = v, .nbytes = 3, .samples = 500};
  bill b;
  make(s, &u, &b);
  cr_expect(fabs(b.site[0].egress_usd - 0.18) < 1e-12);
  cr_expect(fabs(b.site[1].egress_usd - 0.02) < 1e-12);
  cr_expect_eq(b.site[0].egress_bytes, 2e9, "inside A is not egress");
  cr_expect(fabs(b.egress_usd - 0.20) < 1e-12);
  cr_expect(fabs(b.compute_usd - 2.5) < 1e-12, "(2 + 3) x 0.5 h");
  cr_expect(fabs(b.usd - 2.7) < 1e-12);
  cr_expect(fabs(b.usd_per_hour - 5.4) < 1e-12);
  cr_expect(fabs(b.usd_per_1k_samples - 5.4) < 1e-12);
  cr_expect(fabs(b.egress_share - 0.2 / 2.7) < 1e-12);
  cr_expect(b.pair[0].src == 0 && b.pair[0].dst == 1, "most dollars first");
  cr_expect(fabs(b.pair[0].usd - 0.18) < 1e-12);
  cr_expect(fabs(b.compute_usd_per_hour - 5) < 1e-12);
  cr_expect(isnan(b.lost_usd), "no loss given");
  bill_free(&b);
  scenario_free(s);
}

/* B not priced: its line and every total that holds it are missing, A's
 * line is not; egress without a price is missing too. */
Test(bill, totals_missing_a_part) {
  scenario *s = two(", \"usd_per_gpu_hour\": 2", "", "");
  bill_bytes v[] = {{0, 1, 1e9}};
  bill_use u = {.held_s = 3600, .bytes = v, .nbytes = 1, .samples = 10};
  bill b;
  make(s, &u, &b);
  cr_expect_eq(b.site[0].usd, 2);
  cr_expect(isnan(b.site[1].usd));
  cr_expect(isnan(b.compute_usd) && isnan(b.usd) && isnan(b.usd_per_1k_samples));
  cr_expect(isnan(b.egress_usd), "A -> B has no price");
  cr_expect(b.any_price);
  int where;
  cr_expect(isnan(bill_compute_usd_per_s(s, NULL, 0, &where)));
  cr_expect_eq(where, 1, "B is the first site not priced");
  int only_a = 0;
  cr_expect(fabs(bill_compute_usd_per_s(s, &only_a, 1, &where) - 2.0 / 3600) <
            1e-15);
  cr_expect_eq(where, -1);
  cr_expect_eq(bill_cheapest_gpu_hour(s, &where), 2);
  cr_expect_eq(where, 0);
  bill_free(&b);
  scenario_free(s);
}

/* An hour lost waiting while two GPUs at $2 are held costs $4. */
Test(bill, lost_time_at_the_devices_held) {
  scenario *s = two(", \"usd_per_gpu_hour\": 2", ", \"usd_per_gpu_hour\": 2",
                    "");
  double lost[] = {100, 0, 3600};
  const char *names[] = {"redone", "checkpoint", "waiting"};
  bill_use u = {.held_s = 7200, .samples = 1, .lost_s = lost,
                .lost_names = names, .nlost = 3};
  bill b;
  make(s, &u, &b);
  cr_expect(fabs(b.lost_usd_by[2] - 4) < 1e-12);
  cr_expect(fabs(b.lost_usd - 4 * 3700.0 / 3600) < 1e-12);
  cr_expect_str_eq(b.lost_names[2], "waiting");
  cr_expect(fabs(b.usd - 8) < 1e-12, "two GPUs for two hours");
  bill_free(&b);
  scenario_free(s);
}

Test(bill, nothing_priced) {
  scenario *s = two("", "", "");
  cr_expect(!bill_any_price(s));
  int where;
  cr_expect(isnan(bill_cheapest_gpu_hour(s, &where)));
  cr_expect_eq(where, -1);
  scenario_free(s);
}
