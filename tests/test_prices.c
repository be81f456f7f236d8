/* test_prices: the price table (traces/prices.c): the built-in rows as
 * their source reads, a user's table, and every refusal's message pinned
 * byte for byte (a negative, NaN or infinite price, a row without its
 * source or date, a type twice, a bad header, no rows). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "traces/prices.h"

Test(prices, builtin_rows) {
  err e = {0};
  prices *p = prices_builtin(&e);
  cr_assert_not_null(p, "%s", e.msg);
  const prices_row *r = prices_find(p, "p3.2xlarge");
  cr_assert_not_null(r);
  cr_expect_eq(r->gpus, 1);
  cr_expect_eq(r->usd_per_hour, 3.06);
  cr_expect_eq(r->spot_usd_per_hour, 0.6135);
  cr_expect_str_eq(r->region, "us-east-1");
  cr_expect(strstr(r->source, "skypilot-catalog") != NULL);
  r = prices_find(p, "p3.16xlarge");
  cr_assert_not_null(r);
  cr_expect_eq(r->gpus, 8);
  cr_expect_eq(r->usd_per_hour, 24.48);
  cr_expect_null(prices_find(p, "p5.48xlarge"));
  cr_expect_str_eq(prices_file(p), "prices.csv");
  prices_free(p);
}

#define H_ PRICES_HEADER "\n"

Test(prices, a_users_table) {
  const char *t = "# mine\n" H_
                  "g5.xlarge,1,1.006,,us-east-1,2026-01-02,\"AWS, pricing page\"\n";
  err e = {0};
  prices *p = prices_parse(t, strlen(t), "mine.csv", &e);
  cr_assert_not_null(p, "%s", e.msg);
  const prices_row *r = prices_find(p, "g5.xlarge");
  cr_assert_not_null(r);
  cr_expect(isnan(r->spot_usd_per_hour), "an empty spot price is none");
  cr_expect_str_eq(r->source, "AWS, pricing page");
  cr_expect_eq(r->line, 3);
  prices_free(p);
}

Test(prices, refusals_pinned) {
  struct { const char *text, *msg; } c[] = {
      {"a,b\n", "m.csv:1: expected the header '" PRICES_HEADER "'"},
      {H_, "m.csv:1: no rows"},
      {H_ "p3,1,-3.06,,r,2026-01-01,s\n",
       "m.csv:2: usd_per_hour: '-3.06' is negative"},
      {H_ "p3,1,nan,,r,2026-01-01,s\n",
       "m.csv:2: usd_per_hour: 'nan' is not a finite number"},
      {H_ "p3,1,3,inf,r,2026-01-01,s\n",
       "m.csv:2: spot_usd_per_hour: 'inf' is not a finite number"},
      {H_ "p3,1,,,r,2026-01-01,s\n",
       "m.csv:2: usd_per_hour: missing (USD per hour)"},
      {H_ "p3,1,3,,r,2026-01-01,\n",
       "m.csv:2: source: missing (every price names where it was read)"},
      {H_ "p3,1,3,,r,,s\n",
       "m.csv:2: date: missing (when the price was read, YYYY-MM-DD)"},
      {H_ "p3,0,3,,r,2026-01-01,s\n",
       "m.csv:2: gpus_per_instance: '0' is not an integer >= 1"},
      {H_ "p3,1,3,,r,2026-01-01,s\np3,1,3,,r,2026-01-01,s\n",
       "m.csv:3: instance_type: 'p3' is already line 2"},
      {H_ "p3,1,3\n", "m.csv:2: expected 7 columns (" PRICES_HEADER
                      "), found 3"}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    err e = {0};
    prices *p = prices_parse(c[i].text, strlen(c[i].text), "m.csv", &e);
    cr_expect_null(p, "case %zu parsed", i);
    cr_expect_str_eq(e.msg, c[i].msg, "case %zu", i);
    prices_free(p);
  }
}
