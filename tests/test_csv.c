/* test_csv: the shared CSV text layer — lines with their numbers, checks
 * and trimming; provenance comments against free text; field splitting;
 * exact nanosecond times against integer arithmetic on random decimals,
 * doubles against strtod, and each kind of bad number. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/csv.h"

Test(csv, lines_numbered_trimmed_and_checked) {
  const char text[] = "\xEF\xBB\xBF a,b \r\n\n\t# c: d \nlast";
  csv_reader r;
  csv_reader_init(&r, text, sizeof text - 1, "f.csv");
  const char *s;
  size_t n;
  static const char *const want[] = {"a,b", "", "# c: d", "last"};
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(csv_next(&r, &s, &n, NULL), 1);
    cr_expect_eq(r.line, i + 1);
    cr_expect_eq(n, strlen(want[i]));
    cr_expect(memcmp(s, want[i], n) == 0, "line %d: '%.*s'", i + 1, (int)n, s);
  }
  cr_expect_eq(csv_next(&r, &s, &n, NULL), 0);
  cr_expect(r.any_text);

  const char bad[] = "ok\nx\xC3(y\n";
  err e;
  err_clear(&e);
  csv_reader_init(&r, bad, sizeof bad - 1, "g.csv");
  cr_assert_eq(csv_next(&r, &s, &n, &e), 1);
  cr_expect_eq(csv_next(&r, &s, &n, &e), ERR_PARSE);
  cr_expect_str_eq(e.msg, "g.csv:2: invalid UTF-8 (byte 0xc3 at column 2)");
  const char nul[] = "a\0b\n";
  err_clear(&e);
  csv_reader_init(&r, nul, sizeof nul - 1, "h.csv");
  cr_expect_eq(csv_next(&r, &s, &n, &e), ERR_PARSE);
  cr_expect_str_eq(e.msg, "h.csv:1: NUL byte (a binary file, not CSV text)");
  csv_reader_init(&r, "  \n\t\n", 5, "i.csv");
  while (csv_next(&r, &s, &n, NULL) > 0) {}
  cr_expect_not(r.any_text);
}

Test(csv, comments_and_fields) {
  const char *k, *v;
  size_t kn, vn;
  const char *c = "#  source :  x, y  ";
  cr_assert(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn) == false,
            "a blank before ':' makes free text");
  c = "# source.v2: x, y";
  cr_assert(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));
  cr_expect(kn == 9 && memcmp(k, "source.v2", 9) == 0);
  cr_expect(vn == 4 && memcmp(v, "x, y", 4) == 0);
  c = "# just words";
  cr_expect_not(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));
  c = "#: empty key";
  cr_expect_not(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));

  const char *f[3];
  size_t fn[3];
  const char *line = " a , ,c,d";
  cr_assert_eq(csv_split(line, strlen(line), f, fn, 3), 4);
  cr_expect(fn[0] == 1 && f[0][0] == 'a');
  cr_expect_eq(fn[1], 0);
  cr_expect(fn[2] == 1 && f[2][0] == 'c');
  cr_expect_eq(csv_split("", 0, f, fn, 3), 1);
}

Test(csv, nanoseconds_exact_against_integers) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int i = 0; i < 2000; i++) {
    long long sec = (long long)gsl_rng_uniform_int(r, 1000000000);
    long long frac = (long long)gsl_rng_uniform_int(r, 1000000000);
    char buf[64];
    snprintf(buf, sizeof buf, "%lld.%09lld", sec, frac);
    int64_t ns;
    cr_assert_eq(csv_parse_ns(buf, strlen(buf), &ns), CSV_NUM_OK, "%s", buf);
    cr_assert_eq(ns, sec * 1000000000LL + frac, "%s", buf);
    double d;
    cr_assert_eq(csv_parse_double(buf, strlen(buf), &d), CSV_NUM_OK);
    cr_assert_eq(d, strtod(buf, NULL), "%s", buf);
  }
  gsl_rng_free(r);
  int64_t ns;
  cr_expect_eq(csv_parse_ns("1.5e-9", 6, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 2, "1.5 ns rounds to nearest");
  cr_expect_eq(csv_parse_ns("25e-1", 5, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 2500000000LL);
  cr_expect_eq(csv_parse_ns("-0", 2, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 0);
}

Test(csv, bad_numbers_say_why) {
  int64_t ns;
  double d;
  cr_expect_eq(csv_parse_ns("-1", 2, &ns), CSV_NUM_NEGATIVE);
  cr_expect_eq(csv_parse_ns("1e400", 5, &ns), CSV_NUM_OVERFLOW);
  cr_expect_eq(csv_parse_ns("NaN", 3, &ns), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_ns("inf", 3, &ns), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_ns("1x", 2, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_ns("", 0, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_ns("0x10", 4, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_double("-Infinity", 9, &d), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_double("1e999", 5, &d), CSV_NUM_OVERFLOW);
  cr_expect_eq(csv_parse_double("-2.5", 4, &d), CSV_NUM_OK);
  cr_expect_eq(d, -2.5);
  cr_expect(csv_is_inf("INF", 3));
  cr_expect(csv_is_inf("infinity", 8));
  cr_expect_not(csv_is_inf("+inf", 4));
  cr_expect_str_eq(csv_num_what(CSV_NUM_NEGATIVE), "is negative");
  cr_expect_eq(csv_num_err(CSV_NUM_SYNTAX), ERR_PARSE);
  cr_expect_eq(csv_num_err(CSV_NUM_OVERFLOW), ERR_RANGE);
}

/* Issue 24, 16: "-0" is zero, and prints as "0" (a latency of -0 was
 * shown as "-0 .. -0 ms"). */
Test(csv, minus_zero_is_zero) {
  double d = 1;
  cr_assert_eq(csv_parse_double("-0", 2, &d), CSV_NUM_OK);
  cr_expect(d == 0 && !signbit(d), "signbit %d", signbit(d) != 0);
  cr_assert_eq(csv_parse_double("-0.0e3", 6, &d), CSV_NUM_OK);
  cr_expect(!signbit(d));
  char buf[16];
  snprintf(buf, sizeof buf, "%g", d);
  cr_expect_str_eq(buf, "0");
}
