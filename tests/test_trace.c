/* test_trace: the trace loader and replay. Hand-computed cases for step,
 * linear, loop, wildcard precedence and time parsing; one test per kind of
 * bad input (code AND "FILE:LINE:" message); the command line on fixture
 * files; and random traces against a naive linear-scan reference. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/simtime.h"
#include "tests/support.h"
#include "traces/trace.h"

#define S TRACE_NS_PER_S
#define HDR "t_s,src,dst,latency_ms,bandwidth_gbps\n"

static trace *parse(const char *text, const char *const *sites, int n, err *e) {
  err_clear(e);
  return trace_parse(text, strlen(text), "w.csv", sites, n, e);
}

static trace *parse_ok(const char *text) {
  err e;
  trace *t = parse(text, NULL, 0, &e);
  cr_assert_not_null(t, "unexpected error: %s", e.msg);
  return t;
}

/* The text must fail with code, a message starting "w.csv:LINE: " and
 * containing what (the field or the fact named). */
static void bad_sites(const char *text, const char *const *sites, int n,
                      int code, int line, const char *what) {
  err e;
  trace *t = parse(text, sites, n, &e);
  cr_assert_null(t, "accepted bad input (expected line %d: %s)", line, what);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "w.csv:%d: ", line);
  cr_expect_eq(e.code, code, "code %d, want %d: %s", e.code, code, e.msg);
  cr_expect(strncmp(e.msg, prefix, strlen(prefix)) == 0, "'%s' does not start "
            "with '%s'", e.msg, prefix);
  cr_expect(strstr(e.msg, what) != NULL, "'%s' does not name '%s'", e.msg, what);
}

static void bad(const char *text, int code, int line, const char *what) {
  bad_sites(text, NULL, 0, code, line, what);
}

static void expect_value(const trace *t, int a, int b, int64_t ns, double lat,
                         double bw) {
  trace_value v = trace_at(t, a, b, ns);
  cr_expect_float_eq(v.latency_ms, lat, 1e-9, "(%d,%d) at %lld ns: latency %g, want %g",
                     a, b, (long long)ns, v.latency_ms, lat);
  cr_expect_float_eq(v.bandwidth_gbps, bw, 1e-9, "(%d,%d) at %lld ns: bandwidth %g, want %g",
                     a, b, (long long)ns, v.bandwidth_gbps, bw);
}

/* ---- loading and replay ---- */

Test(trace, static_matrix) {
  trace *t = parse_ok(HDR "0,a,a,1,10\n0,a,b,20,1\n0,b,a,30,2\n0,b,b,2,20\n");
  cr_assert_eq(trace_nsites(t), 2);
  cr_expect_str_eq(trace_site(t, 0), "a");
  cr_expect_str_eq(trace_site(t, 1), "b");
  cr_expect_eq(trace_site_index(t, "b"), 1);
  cr_expect_eq(trace_site_index(t, "c"), -1);
  expect_value(t, 0, 1, 0, 20, 1);
  expect_value(t, 1, 0, 5 * S, 30, 2);  /* no symmetric fill */
  expect_value(t, 1, 1, INT64_MAX, 2, 20);
  cr_expect(trace_is_static(t));
  cr_expect(!trace_is_linear(t));
  cr_expect_eq(trace_rows(t), 4);
  cr_expect_eq(trace_snapshots(t), 1);
  cr_expect_eq(trace_duration_s(t), 0);
  cr_expect_eq(trace_next_change(t, 0, 1, 0), TRACE_NEVER);
  cr_expect_eq(trace_next_change_any(t, 0), TRACE_NEVER);
  trace_free(t);
}

Test(trace, step_change_exactly_at_t) {
  trace *t = parse_ok(HDR "0,*,*,10,1\n10,a,b,50,0.5\n25.5,a,b,60,0.25\n");
  cr_expect(!trace_is_static(t));
  expect_value(t, 0, 1, 10 * S - 1, 10, 1);
  expect_value(t, 0, 1, 10 * S, 50, 0.5); /* the new value at the change */
  expect_value(t, 0, 1, 25500000000LL, 60, 0.25);
  expect_value(t, 1, 0, 20 * S, 10, 1);
  cr_expect_eq(trace_next_change(t, 0, 1, 0), 10 * S);
  cr_expect_eq(trace_next_change(t, 0, 1, 10 * S - 1), 10 * S);
  cr_expect_eq(trace_next_change(t, 0, 1, 10 * S), 25500000000LL);
  cr_expect_eq(trace_next_change(t, 0, 1, 25500000000LL), TRACE_NEVER);
  cr_expect_eq(trace_next_change(t, 1, 0, 0), TRACE_NEVER);
  cr_expect_eq(trace_next_change_any(t, 10 * S), 25500000000LL);
  cr_expect_float_eq(trace_duration_s(t), 25.5, 1e-12);
  cr_expect_eq(trace_snapshots(t), 3);
  trace_free(t);
}

Test(trace, step_repeated_value_is_not_a_change) {
  trace *t = parse_ok(HDR "0,*,*,10,1\n5,a,b,10,1\n7,b,a,3,1\n9,a,b,11,1\n");
  cr_expect_eq(trace_next_change(t, 0, 1, 0), 9 * S);
  cr_expect_eq(trace_next_change_any(t, 0), 7 * S);
  cr_expect_eq(trace_points(t), 4 + 2);
  trace_free(t);
}

Test(trace, linear_interpolation) {
  trace *t = parse_ok("# interpolate: linear\n" HDR
                      "0,*,*,10,1\n10,a,b,20,3\n20,a,b,20,2\n");
  cr_expect(trace_is_linear(t));
  expect_value(t, 0, 1, 0, 10, 1);
  expect_value(t, 0, 1, 5 * S, 15, 2);
  expect_value(t, 0, 1, 10 * S, 20, 3);
  expect_value(t, 0, 1, 12500000000LL, 20, 2.75);
  expect_value(t, 0, 1, 100 * S, 20, 2);  /* holds after the last point */
  expect_value(t, 1, 0, 5 * S, 10, 1);
  cr_expect_eq(trace_next_change(t, 0, 1, 3 * S), 10 * S);
  cr_expect_eq(trace_next_change(t, 0, 1, 10 * S), 20 * S);
  cr_expect_eq(trace_next_change(t, 0, 1, 20 * S), TRACE_NEVER);
  trace_free(t);
}

Test(trace, step_loop) {
  trace *t = parse_ok("# loop_after_s: 30\n" HDR "0,*,*,10,1\n10,a,b,50,2\n");
  cr_expect_float_eq(trace_loop_after_s(t), 30, 1e-12);
  expect_value(t, 0, 1, 35 * S, 10, 1);
  expect_value(t, 0, 1, 40 * S, 50, 2);
  expect_value(t, 0, 1, 60 * S - 1, 50, 2);
  expect_value(t, 0, 1, 60 * S, 10, 1);
  cr_expect_eq(trace_next_change(t, 0, 1, 12 * S), 30 * S); /* back to t = 0 */
  cr_expect_eq(trace_next_change(t, 0, 1, 30 * S), 40 * S);
  cr_expect_eq(trace_next_change(t, 1, 0, 12 * S), TRACE_NEVER);
  cr_expect_eq(trace_next_change_any(t, 15 * S), 30 * S);
  trace_free(t);
}

Test(trace, step_loop_wrap_without_change) {
  trace *t = parse_ok("# loop_after_s: 30\n" HDR
                      "0,*,*,10,1\n10,a,b,50,2\n20,a,b,10,1\n");
  /* the value at 30 s equals the value before it: the next change is 40 s */
  cr_expect_eq(trace_next_change(t, 0, 1, 25 * S), 40 * S);
  cr_expect_eq(trace_next_change_any(t, 25 * S), 40 * S);
  /* near the end of int64 time the answer saturates, never wraps around */
  int64_t far = trace_next_change(t, 0, 1, INT64_MAX - 5 * S);
  cr_expect(far > INT64_MAX - 5 * S, "%lld", (long long)far);
  trace_free(t);
}

Test(trace, linear_loop_is_continuous) {
  trace *t = parse_ok("# interpolate: linear\n# loop_after_s: 20\n" HDR
                      "0,*,*,10,1\n10,a,b,20,2\n");
  expect_value(t, 0, 1, 15 * S, 15, 1.5); /* toward the t = 0 value at 20 s */
  expect_value(t, 0, 1, 25 * S, 15, 1.5);
  expect_value(t, 0, 1, 40 * S, 10, 1);
  cr_expect_eq(trace_next_change(t, 0, 1, 15 * S), 20 * S);
  cr_expect_eq(trace_next_change(t, 0, 1, 20 * S), 30 * S);
  trace_free(t);
}

Test(trace, wildcard_precedence) {
  static const char *const sites[] = {"a", "b", "c"};
  err e;
  trace *t = parse(HDR "0,a,b,4,4\n0,*,b,3,3\n0,a,*,2,2\n0,*,*,1,1\n"
                   "5,*,*,9,9\n", sites, 3, &e);
  cr_assert_not_null(t, "%s", e.msg);
  expect_value(t, 0, 1, 0, 4, 4);  /* exact */
  expect_value(t, 0, 2, 0, 2, 2);  /* a,* beats *,* */
  expect_value(t, 0, 0, 0, 2, 2);  /* '*' matches the site itself too */
  expect_value(t, 2, 1, 0, 3, 3);  /* *,b */
  expect_value(t, 1, 1, 0, 3, 3);
  expect_value(t, 2, 0, 0, 1, 1);  /* *,* */
  expect_value(t, 0, 1, 5 * S, 9, 9);  /* a later *,* overrides everything */
  trace_free(t);
}

Test(trace, src_exact_beats_dst_exact) {
  static const char *const sites[] = {"a", "b"};
  err e;
  trace *t = parse(HDR "0,*,b,3,3\n0,a,*,2,2\n0,b,a,1,1\n", sites, 2, &e);
  cr_assert_not_null(t, "%s", e.msg);
  expect_value(t, 0, 0, 0, 2, 2);
  expect_value(t, 1, 0, 0, 1, 1);
  expect_value(t, 0, 1, 0, 2, 2);
  expect_value(t, 1, 1, 0, 3, 3);
  trace_free(t);
}

Test(trace, comments_crlf_bom_blank_lines) {
  const char *text =
      "\xEF\xBB\xBF# source: skyplane grid\r\n# licence: Apache-2.0\r\n"
      "  \r\n# a free-text comment: with a colon later\r\n"
      "t_s,src,dst,latency_ms,bandwidth_gbps\r\n# synthetic_from_real: true\r\n"
      "0, Oregon , Tokyo ,96,0.523\r\n\r\n0,*,*,5,2\r\n# source: second\r\n"
      "1e1,Tokyo,Oregon,97,0.5";  /* no final newline */
  trace *t = parse_ok(text);
  cr_expect_str_eq(trace_comment(t, "source"), "skyplane grid");
  cr_expect_str_eq(trace_comment(t, "licence"), "Apache-2.0");
  cr_expect_str_eq(trace_comment(t, "synthetic_from_real"), "true");
  cr_expect_null(trace_comment(t, "a free-text comment"));
  cr_expect_null(trace_comment(t, "interpolate"));
  cr_expect_eq(trace_ncomments(t), 4);
  cr_expect_str_eq(trace_comment_value(t, 3), "second");
  cr_expect_str_eq(trace_site(t, 0), "Oregon");
  expect_value(t, 0, 1, 0, 96, 0.523);
  expect_value(t, 1, 0, 10 * S, 97, 0.5);
  trace_value lo, hi;
  trace_extremes(t, &lo, &hi);
  cr_expect_eq(lo.latency_ms, 5);
  cr_expect_eq(hi.latency_ms, 97);
  cr_expect_eq(lo.bandwidth_gbps, 0.5);
  cr_expect_eq(hi.bandwidth_gbps, 2);
  trace_free(t);
}

Test(trace, times_are_exact_nanoseconds) {
  trace *t = parse_ok(HDR "0.0,*,*,1,1\n0.000000001,a,a,2,1\n"
                      "1.0000000005,a,a,3,1\n1.5e1,a,a,4,1\n"
                      "1234567.123456789,a,a,5,1\n+2e6,a,a,6,1\n");
  int64_t want[] = {1, 1000000001, 15 * S, 1234567123456789LL, 2000000 * S};
  int64_t at = 0;
  for (int i = 0; i < 5; i++) {
    at = trace_next_change(t, 0, 0, at);
    cr_expect_eq(at, want[i], "change %d at %lld, want %lld", i,
                 (long long)at, (long long)want[i]);
  }
  expect_value(t, 0, 0, 1234567123456789LL, 5, 1);
  expect_value(t, 0, 0, 1234567123456788LL, 4, 1);
  trace_free(t);
}

Test(trace, sites_from_caller) {
  static const char *const sites[] = {"x", "y", "z"};
  err e;
  trace *t = parse(HDR "0,*,*,7,1\n0,z,x,1,2\n", sites, 3, &e);
  cr_assert_not_null(t, "%s", e.msg);
  cr_expect_eq(trace_nsites(t), 3);
  cr_expect_str_eq(trace_site(t, 1), "y");  /* never named in the file */
  expect_value(t, 2, 0, 0, 1, 2);
  expect_value(t, 1, 1, 0, 7, 1);
  trace_free(t);
}

Test(trace, scale) {
  trace *t = parse_ok("# interpolate: linear\n" HDR "0,*,*,10,1\n10,a,a,20,3\n");
  trace_scale(t, 2, 0.5);
  expect_value(t, 0, 0, 5 * S, 30, 1);
  trace_free(t);
}

Test(trace, megabyte_line_is_parsed_not_truncated) {
  size_t zeros = 2u << 20;
  char *text = mem_alloc(zeros + 200);
  int n = sprintf(text, HDR "0,a,a,0.25");
  memset(text + n, '0', zeros);
  sprintf(text + n + zeros, ",3\n");
  trace *t = parse_ok(text);
  expect_value(t, 0, 0, 0, 0.25, 3);
  trace_free(t);
  /* the same line with a bad character at its end: reported, echo cut short */
  text[n + zeros - 1] = 'q';
  err e;
  cr_expect_null(parse(text, NULL, 0, &e));
  cr_expect(strncmp(e.msg, "w.csv:2: latency_ms: '0.25000", 29) == 0, "%s", e.msg);
  cr_expect(strstr(e.msg, "...") != NULL, "%s", e.msg);
  free(text);
}

/* ---- bad input ---- */

Test(trace_bad, columns) {
  bad(HDR "0,a,a,1\n", ERR_PARSE, 2, "expected 5 columns");
  bad(HDR "0,a,a,1,1\n0,a,a,1,1,1\n", ERR_PARSE, 3, "found 6");
  bad(HDR "\n\n0,a,a,1\n", ERR_PARSE, 4, "found 4");
}

Test(trace_bad, not_numbers) {
  bad(HDR "0,a,a,abc,1\n", ERR_PARSE, 2, "latency_ms: 'abc' is not a number");
  bad(HDR "0,a,a,1,\n", ERR_PARSE, 2, "bandwidth_gbps: '' is not a number");
  bad(HDR "zero,a,a,1,1\n", ERR_PARSE, 2, "t_s: 'zero' is not a number");
  bad(HDR "0,a,a,1,0x10\n", ERR_PARSE, 2, "bandwidth_gbps");
  bad(HDR "0,a,a,1e,1\n", ERR_PARSE, 2, "latency_ms");
}

Test(trace_bad, nan_and_infinities) {
  bad(HDR "0,a,a,1,nan\n", ERR_RANGE, 2, "bandwidth_gbps: 'nan' is not a finite");
  bad(HDR "0,a,a,inf,1\n", ERR_RANGE, 2, "latency_ms: 'inf' is not a finite");
  bad(HDR "0,a,a,1,-Infinity\n", ERR_RANGE, 2, "bandwidth_gbps");
  bad(HDR "NaN,a,a,1,1\n", ERR_RANGE, 2, "t_s: 'NaN' is not a finite");
}

Test(trace_bad, overflow) {
  bad(HDR "0,a,a,1,1e999\n", ERR_RANGE, 2, "bandwidth_gbps: '1e999' is out of range");
  bad(HDR "0,a,a,1e999,1\n", ERR_RANGE, 2, "latency_ms");
  bad(HDR "0,*,*,1,1\n1e999,a,a,1,1\n", ERR_RANGE, 3,
      "t_s: 1e999 is past " SIMTIME_LIMIT_TEXT);
  /* one limit everywhere (base/simtime.h): 1e9 s is the last instant a
   * simulation covers, one nanosecond more is refused, as is a time past
   * INT64_MAX ns */
  bad(HDR "0,*,*,1,1\n9223372037,a,a,1,1\n", ERR_RANGE, 3, "t_s");
  bad(HDR "0,*,*,1,1\n1000000000.000000001,a,a,1,1\n", ERR_RANGE, 3,
      "t_s: 1000000000.000000001 is past " SIMTIME_LIMIT_TEXT);
  trace *t = parse_ok(HDR "0,*,*,1,1\n1000000000,a,a,2,1\n");
  cr_expect_eq(trace_next_change(t, 0, 0, 0), SIMTIME_LIMIT_NS);
  trace_free(t);
}

Test(trace_bad, negative_or_zero) {
  bad(HDR "0,*,*,5,2\n0,a,b,10,1\n0,b,a,10,1\n7,a,b,1,-1\n", ERR_RANGE, 5,
      "bandwidth_gbps: -1 is not > 0");
  bad(HDR "0,a,a,1,0\n", ERR_RANGE, 2, "bandwidth_gbps: 0 is not > 0");
  bad(HDR "0,a,a,1,1e-400\n", ERR_RANGE, 2, "bandwidth_gbps: 1e-400 is not > 0");
  bad(HDR "0,a,a,-0.5,1\n", ERR_RANGE, 2, "latency_ms: -0.5 is not >= 0");
  bad(HDR "-1,a,a,1,1\n", ERR_RANGE, 2, "t_s: '-1' is negative");
  trace *t = parse_ok(HDR "-0,a,a,0,1\n");  /* -0 is zero */
  trace_free(t);
}

/* Latency must convert to int64 ns and a transfer time must stay finite
 * downstream (1e300 ms used to load); 1e9 Gbit/s (free communication)
 * still does. */
Test(trace_bad, magnitudes) {
  bad(HDR "0,a,a,1e300,1\n", ERR_RANGE, 2, "latency_ms: 1e300 is above 1e+06");
  bad(HDR "0,*,*,1,1\n3,a,a,1000001,1\n", ERR_RANGE, 3, "latency_ms");
  bad(HDR "0,a,a,1,1e-300\n", ERR_RANGE, 2, "bandwidth_gbps: 1e-300 is below 1e-06");
  trace *t = parse_ok(HDR "0,a,a,1e6,1e9\n0,a,b,0,1e-6\n0,b,*,0,1\n");
  trace_value lo, hi;
  trace_extremes(t, &lo, &hi);
  cr_expect_eq(hi.latency_ms, 1e6);
  cr_expect_eq(lo.bandwidth_gbps, 1e-6);
  trace_free(t);
}

/* A trace is quadratic in its sites: TRACE_MAX_SITES, from the file or the
 * caller (70000 used to trip an assertion past 2^32 site pairs). */
Test(trace_bad, too_many_sites) {
  int n = TRACE_MAX_SITES + 1;
  char *text = malloc((size_t)n * 24 + 64);
  size_t len = (size_t)sprintf(text, HDR "0,*,*,1,1\n");
  for (int i = 0; i < n; i++) len += (size_t)sprintf(text + len, "0,s%d,s0,1,1\n", i);
  char what[64];
  snprintf(what, sizeof what, "src: site 's%d' is one more than", n - 1);
  bad(text, ERR_RANGE, n + 2, what);
  text[len - (size_t)sprintf(what, "0,s%d,s0,1,1\n", n - 1)] = '\0';
  trace *t = parse_ok(text);
  cr_assert_eq(trace_nsites(t), TRACE_MAX_SITES);
  trace_free(t);
  free(text);
  enum { BIG = 70000 };
  char (*names)[8] = malloc(sizeof(char[BIG][8]));
  const char **sites = malloc(BIG * sizeof *sites);
  for (int i = 0; i < BIG; i++) sprintf(names[i], "s%d", i), sites[i] = names[i];
  bad_sites(HDR "0,*,*,1,1\n", sites, BIG, ERR_RANGE, 1, "70000 sites");
  free(sites);
  free(names);
}

Test(trace_bad, time_order_and_duplicates) {
  bad(HDR "0,*,*,1,1\n5,a,a,1,1\n3,a,a,2,1\n", ERR_PARSE, 4,
      "t_s: 3 is before the previous row's 5");
  bad(HDR "0,*,*,1,1\n0,a,b,1,1\n0,a,b,2,1\n", ERR_DUPLICATE, 4,
      "duplicate row for a,b at t_s = 0 (first at line 3)");
  bad(HDR "0,*,*,1,1\n5,*,*,1,1\n5.0,*,*,2,1\n", ERR_DUPLICATE, 4, "*,*");
  bad(HDR "5,a,a,1,1\n", ERR_MISSING, 2, "t = 0");
}

Test(trace_bad, missing_pairs_at_zero) {
  /* certain at the first row with t > 0 */
  bad(HDR "0,a,a,1,1\n0,b,b,1,1\n0,a,b,1,1\n\n# later\n3,a,b,2,1\n",
      ERR_MISSING, 7, "no value at t = 0 for b -> a");
  /* or at the last line */
  bad(HDR "0,a,a,1,1\n0,a,b,1,1\n0,b,a,1,1\n\n", ERR_MISSING, 5,
      "site b with itself");
  static const char *const sites[] = {"a", "b"};
  bad_sites(HDR "0,a,*,1,1\n", sites, 2, ERR_MISSING, 2, "b -> a");
  /* a site first named after t = 0 cannot have a t = 0 value */
  bad(HDR "0,a,*,1,1\n0,*,a,1,1\n4,c,a,1,1\n", ERR_MISSING, 4,
      "src: site 'c' is first named after t = 0");
  trace *t = parse_ok(HDR "0,*,*,1,1\n4,c,a,2,1\n");  /* *,* covers c */
  cr_expect_eq(trace_nsites(t), 2);
  cr_expect_str_eq(trace_site(t, 0), "c");
  expect_value(t, 0, 1, 0, 1, 1);
  expect_value(t, 0, 1, 4 * S, 2, 1);
  expect_value(t, 1, 0, 4 * S, 1, 1);
  trace_free(t);
}

Test(trace_bad, sites) {
  static const char *const sites[] = {"Oregon", "Tokyo"};
  bad_sites(HDR "0,*,*,1,1\n0,Oregon,Paris,1,1\n", sites, 2, ERR_UNKNOWN, 3,
            "dst: unknown site 'Paris'");
  bad(HDR "0,*,*,1,1\n", ERR_MISSING, 2, "no site named");
  bad(HDR "0,,a,1,1\n", ERR_PARSE, 2, "src: empty site name");
}

Test(trace_bad, empty_comments_header) {
  bad("", ERR_PARSE, 1, "empty file");
  bad("\n  \n\r\n", ERR_PARSE, 3, "empty file");
  bad("# source: x\n# licence: y\n", ERR_PARSE, 2, "no header");
  bad("t_s,src,dst,latency_ms\n0,a,a,1\n", ERR_PARSE, 1, "expected the header");
  bad("# c\nt_s, src,dst,latency_ms,bandwidth_gbps\n", ERR_PARSE, 2, "header");
  bad("0,a,a,1,1\n", ERR_PARSE, 1, "expected the header");
  bad(HDR "# nothing\n", ERR_MISSING, 2, "no data rows");
}

Test(trace_bad, binary_garbage) {
  static const char nul[] = HDR "0,a,a,1,1\n0,a\0b,1,1\n";
  err e;
  err_clear(&e);
  cr_expect_null(trace_parse(nul, sizeof nul - 1, "w.csv", NULL, 0, &e));
  cr_expect_eq(e.code, ERR_PARSE);
  cr_expect(strncmp(e.msg, "w.csv:3: NUL byte", 17) == 0, "%s", e.msg);
  bad(HDR "0,a,a,1,1\xff\n", ERR_PARSE, 2, "invalid UTF-8 (byte 0xff at column 10)");
  bad("# caf\xc3\n" HDR, ERR_PARSE, 1, "invalid UTF-8");
  bad(HDR "0,\xc0\x80,a,1,1\n", ERR_PARSE, 2, "invalid UTF-8");     /* overlong */
  bad(HDR "0,\xed\xa0\x80,a,1,1\n", ERR_PARSE, 2, "invalid UTF-8"); /* surrogate */
  trace *t = parse_ok(HDR "0,*,*,1,1\n0,Z\xc3\xbcrich,Z\xc3\xbcrich,1,2\n");
  cr_expect_str_eq(trace_site(t, 0), "Z\xc3\xbcrich");
  trace_free(t);
}

Test(trace_bad, directives) {
  bad("# interpolate: cubic\n" HDR "0,a,a,1,1\n", ERR_PARSE, 1,
      "interpolate: 'cubic' is not step or linear");
  bad("# interpolate: step\n# interpolate: linear\n", ERR_DUPLICATE, 2, "interpolate");
  bad("# loop_after_s: 0\n", ERR_RANGE, 1, "loop_after_s: 0 is not > 0");
  bad("# loop_after_s: soon\n", ERR_PARSE, 1, "loop_after_s: 'soon'");
  bad("# loop_after_s: 10\n" HDR "0,*,*,1,1\n10,a,a,1,1\n", ERR_RANGE, 4,
      "t_s: 10 is not before loop_after_s");
  bad(HDR "0,*,*,1,1\n10,a,a,1,1\n# loop_after_s: 9.5\n", ERR_RANGE, 4,
      "loop_after_s: 9.5 does not exceed");
}

/* "# interpolate: linear" after the rows used to switch the whole file to
 * linear replay, the rows above it included, without a word. */
Test(trace_bad, interpolate_after_the_rows) {
  bad(HDR "0,*,*,1,1\n10,a,a,5,1\n# interpolate: linear\n", ERR_PARSE, 4,
      "interpolate: a header comment, but the data rows began at line 2");
  bad(HDR "0,*,*,1,1\n# interpolate: step\n", ERR_PARSE, 3, "interpolate");
  trace *t = parse_ok(HDR "# interpolate: linear\n0,*,*,1,1\n10,a,a,5,1\n");
  cr_expect(trace_is_linear(t));
  trace_free(t);
}

Test(trace_bad, load_io) {
  err e;
  err_clear(&e);
  cr_expect_null(trace_load("/nonexistent/w.csv", NULL, 0, &e));
  cr_expect_eq(e.code, ERR_IO);
  cr_expect_str_eq(e.msg, "/nonexistent/w.csv: cannot read the network trace: "
                   "No such file or directory");
  err_clear(&e);
  cr_expect_null(trace_load(GEODES_FIXTURES, NULL, 0, &e));
  cr_expect_eq(e.code, ERR_IO, "%s", e.msg);
  err_clear(&e);
  cr_expect_null(trace_load(GEODES_FIXTURES "/traces/bad_bandwidth.csv", NULL, 0, &e));
  cr_expect(strstr(e.msg, "bad_bandwidth.csv:6: bandwidth_gbps: -1 is not > 0"),
            "%s", e.msg);
}

/* ---- fixtures and the command line ---- */

Test(trace_files, worldwide_static) {
  err e;
  err_clear(&e);
  trace *t = trace_load(GEODES_FIXTURES "/traces/worldwide_static.csv", NULL, 0, &e);
  cr_assert_not_null(t, "%s", e.msg);
  cr_expect_eq(trace_nsites(t), 8);
  int seoul = trace_site_index(t, "Seoul"), ireland = trace_site_index(t, "Ireland");
  expect_value(t, seoul, ireland, 0, 228, 0.335);
  expect_value(t, ireland, seoul, 0, 228, 0.335);
  expect_value(t, seoul, seoul, 0, 5, 2);
  cr_expect_str_eq(trace_comment(t, "licence"), "MIT (DS3Lab/DT-FM)");
  cr_expect(trace_is_static(t));
  trace_free(t);
}

Test(trace_files, crlf_loop) {
  err e;
  err_clear(&e);
  trace *t = trace_load(GEODES_FIXTURES "/traces/crlf_loop.csv", NULL, 0, &e);
  cr_assert_not_null(t, "%s", e.msg);
  expect_value(t, 0, 1, 80 * S, 30, 0.5);
  expect_value(t, 0, 1, 100 * S, 10, 1);
  cr_expect_eq(trace_next_change(t, 0, 1, 61 * S), 80 * S);
  cr_expect_eq(trace_next_change_any(t, 90 * S), 100 * S);
  trace_free(t);
}

TestSuite(trace_cli, .init = support_dir_make, .fini = support_dir_remove);

/* Runs `geodes ARGS 2>&1`; its exit status, stdout + stderr in r->out. */
static int run_geodes(support_run *r, const char *args) {
  return support_geodes(r, "%s 2>&1", args);
}

Test(trace_cli, check_errors_and_usage) {
  support_run r = {0};
  int rc = run_geodes(
      &r, "trace check '" GEODES_FIXTURES "/traces/missing_pair.csv'");
  cr_expect_eq(rc, 1, "%s", r.out);
  cr_expect(strstr(r.out, "missing_pair.csv:7: no value at t = 0 for b -> a"),
            "%s", r.out);
  rc = run_geodes(
      &r, "trace check '" GEODES_FIXTURES "/traces/bad_bandwidth.csv' --json");
  cr_expect_eq(rc, 1, "%s", r.out);
  cr_expect(strstr(r.out, "bad_bandwidth.csv:6: bandwidth_gbps"), "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace check"), 2, "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace check a.csv --bogus"), 2, "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace check a.csv --scenario"), 2, "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace frobnicate"), 2, "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace"), 2, "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace --help"), 0, "%s", r.out);
  cr_expect(strstr(r.out, "trace check FILE"), "%s", r.out);
  cr_expect_eq(run_geodes(&r, "trace check --help"), 0, "%s", r.out);
  cr_expect(strstr(r.out, "--scenario"), "%s", r.out);
  rc = run_geodes(&r, "trace check /nonexistent.csv");
  cr_expect_eq(rc, 1, "%s", r.out);
  cr_expect(strstr(r.out, "/nonexistent.csv: cannot read the network trace"),
            "%s", r.out);
  support_run_clear(&r);
}

Test(trace_cli, check_summary_json) {
  support_run r = {0};
  int rc = run_geodes(&r, "trace check --json '" GEODES_FIXTURES
                          "/traces/worldwide_static.csv'");
  cr_assert_eq(rc, 0, "%s", r.out);
  json_error_t je;
  json_t *o = json_loads(r.out, 0, &je);
  cr_assert_not_null(o, "not one JSON object: %s\n%s", je.text, r.out);
  cr_expect_eq(json_integer_value(json_object_get(o, "rows")), 57);
  cr_expect_eq(json_array_size(json_object_get(o, "sites")), 8);
  cr_expect_float_eq(json_real_value(json_object_get(o, "latency_ms_max")), 238, 1e-9);
  cr_expect_float_eq(json_real_value(json_object_get(o, "bandwidth_gbps_min")), 0.335, 1e-9);
  cr_expect_str_eq(json_string_value(json_object_get(o, "interpolate")), "step");
  cr_expect(json_is_true(json_object_get(o, "static")));
  cr_expect_str_eq(json_string_value(json_object_get(
                       json_object_get(o, "comments"), "licence")),
                   "MIT (DS3Lab/DT-FM)");
  json_decref(o);
  rc = run_geodes(&r, "trace check '" GEODES_FIXTURES "/traces/crlf_loop.csv'");
  cr_expect_eq(rc, 0, "%s", r.out);
  cr_expect(strstr(r.out, "every 60 s"), "%s", r.out);
  cr_expect(strstr(r.out, "# source: hand-written test fixture"), "%s", r.out);
  support_run_clear(&r);
}

Test(trace_cli, check_against_scenario) {
  support_run r = {0};
  int rc = run_geodes(&r, "trace check --scenario worldwide '" GEODES_FIXTURES
                          "/traces/worldwide_static.csv'");
  cr_expect_eq(rc, 0, "%s", r.out);
  cr_expect(strstr(r.out, "worldwide"), "%s", r.out);
  rc = run_geodes(&r, "trace check --scenario regional '" GEODES_FIXTURES
                      "/traces/worldwide_static.csv'");
  cr_expect_eq(rc, 1, "%s", r.out);
  cr_expect(strstr(r.out, "worldwide_static.csv:11: dst: unknown site 'Tokyo'"),
            "%s", r.out);
  support_run_clear(&r);
}

/* ---- random traces against a naive reference ---- */

typedef struct ref_row {
  int64_t t;
  int src, dst;  /* -1: '*' */
  trace_value v;
} ref_row;

typedef struct ref {
  int nsites, nrows;
  ref_row rows[400];
  int64_t snaps[64];  /* distinct row times */
  int nsnaps;
  bool linear;
  int64_t loop;  /* 0: none */
} ref;

static uint64_t rng_state;
static uint64_t rnd(uint64_t n) {  /* xorshift64*, fixed seed: reproducible */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25,
      rng_state ^= rng_state >> 27;
  return (rng_state * 2685821657736338717ULL >> 11) % n;
}

/* The value a snapshot at time ts gives pair (a, b): the most specific row. */
static bool ref_resolve(const ref *r, int64_t ts, int a, int b, trace_value *v) {
  int best = 0;
  for (int i = 0; i < r->nrows; i++) {
    const ref_row *w = &r->rows[i];
    if (w->t != ts || (w->src >= 0 && w->src != a) || (w->dst >= 0 && w->dst != b))
      continue;
    int prec = 1 + (w->src >= 0) * 2 + (w->dst >= 0);
    if (prec > best) best = prec, *v = w->v;
  }
  return best > 0;
}

/* The pair's points: every snapshot that gives it a value, in time order. */
static int ref_points(const ref *r, int a, int b, int64_t *T, trace_value *V) {
  int m = 0;
  for (int s = 0; s < r->nsnaps; s++)
    if (ref_resolve(r, r->snaps[s], a, b, &V[m])) T[m++] = r->snaps[s];
  return m;
}

static trace_value ref_at(const ref *r, int a, int b, int64_t t) {
  int64_t T[64];
  trace_value V[64];
  int m = ref_points(r, a, b, T, V), i = 0;
  int64_t x = r->loop ? t % r->loop : t;
  for (int k = 0; k < m; k++)
    if (T[k] <= x) i = k;
  if (!r->linear || x == T[i]) return V[i];
  int64_t t1 = i + 1 < m ? T[i + 1] : r->loop;
  trace_value v1 = i + 1 < m ? V[i + 1] : V[0];
  if (i + 1 == m && (!r->loop || m == 1)) return V[i];
  double f = (double)(x - T[i]) / (double)(t1 - T[i]);
  return (trace_value){
      .latency_ms = V[i].latency_ms + f * (v1.latency_ms - V[i].latency_ms),
      .bandwidth_gbps =
          V[i].bandwidth_gbps + f * (v1.bandwidth_gbps - V[i].bandwidth_gbps)};
}

/* Step: the first candidate time c > t (a point time, or one shifted by
 * whole periods) whose value differs from the value 1 ns before it. Linear:
 * the first point time after t (periodically, plus each period start). */
static int64_t ref_next(const ref *r, int a, int b, int64_t t) {
  int64_t T[64];
  trace_value V[64];
  int m = ref_points(r, a, b, T, V);
  int64_t best = TRACE_NEVER;
  int64_t k0 = r->loop ? t / r->loop : 0, k1 = r->loop ? k0 + 2 : 0;
  for (int64_t k = k0; k <= k1; k++)
    for (int i = 0; i < m; i++) {
      int64_t c = k * r->loop + T[i];
      if (c <= t || c >= best) continue;
      if (r->linear) {
        if (m > 1) best = c;
        continue;
      }
      trace_value x = ref_at(r, a, b, c), y = ref_at(r, a, b, c - 1);
      if (x.latency_ms != y.latency_ms || x.bandwidth_gbps != y.bandwidth_gbps)
        best = c;
    }
  return best;
}

/* A random trace: sites s0.., a few snapshots of random (partly wildcard)
 * rows; values from a small set so repeats ("no change") occur. */
static char *ref_random(ref *r) {
  *r = (ref){.nsites = 1 + (int)rnd(4), .linear = rnd(3) == 0};
  int nsnaps = 1 + (int)rnd(6);
  int64_t t = 0;
  size_t cap = 1 << 16, len = 0;
  char *text = mem_alloc(cap);
  if (r->linear) len += (size_t)sprintf(text + len, "# interpolate: linear\n");
  len += (size_t)sprintf(text + len, HDR);
  for (int s = 0; s < nsnaps; s++) {
    r->snaps[r->nsnaps++] = t;
    bool used[5][5] = {{false}};
    int nrows = s == 0 && rnd(2) ? 0 : 1 + (int)rnd(6);
    if (s == 0 && nrows == 0) {  /* complete by exact rows */
      for (int a = 0; a < r->nsites; a++)
        for (int b = 0; b < r->nsites; b++) used[a + 1][b + 1] = true;
    } else if (s == 0) {
      used[0][0] = true;
    }
    for (int k = 0; k < nrows; k++) {
      int a = (int)rnd((uint64_t)r->nsites + 1), b = (int)rnd((uint64_t)r->nsites + 1);
      used[a][b] = true;
    }
    for (int a = 0; a <= r->nsites; a++)
      for (int b = 0; b <= r->nsites; b++) {
        if (!used[a][b]) continue;
        ref_row *w = &r->rows[r->nrows++];
        *w = (ref_row){t, a - 1, b - 1,
                       {.latency_ms = (double)(rnd(3) * 10),
                        .bandwidth_gbps = 0.5 + (double)rnd(2)}};
        char src[16] = "*", dst[16] = "*";
        if (a) sprintf(src, "s%d", a - 1);
        if (b) sprintf(dst, "s%d", b - 1);
        len += (size_t)sprintf(text + len, "%.9f,%s,%s,%g,%g\n", (double)t / 1e9,
                               src, dst, w->v.latency_ms, w->v.bandwidth_gbps);
      }
    t += 1 + (int64_t)rnd(3) * S + (int64_t)rnd(1000);
  }
  if (rnd(2)) {
    r->loop = r->snaps[r->nsnaps - 1] + 1 + (int64_t)rnd(2 * S);
    len += (size_t)sprintf(text + len, "# loop_after_s: %.9f\n", (double)r->loop / 1e9);
  }
  cr_assert(len < cap);
  return text;
}

Test(trace_random, against_naive_reference) {
  rng_state = 0x9E3779B97F4A7C15ULL;
  static const char *const names[] = {"s0", "s1", "s2", "s3"};
  for (int iter = 0; iter < 300; iter++) {
    ref r;
    char *text = ref_random(&r);
    err e;
    trace *t = parse(text, names, r.nsites, &e);
    cr_assert_not_null(t, "iteration %d: %s\n%s", iter, e.msg, text);
    int64_t horizon = (r.loop ? r.loop : r.snaps[r.nsnaps - 1] + 1) * 3;
    for (int q = 0; q < 60; q++) {
      int64_t at = (int64_t)rnd((uint64_t)horizon);
      if (q % 3 == 0) at = r.snaps[rnd((uint64_t)r.nsnaps)] + (int64_t)rnd(3) - 1;
      if (at < 0) at = 0;
      int64_t any = TRACE_NEVER;
      for (int a = 0; a < r.nsites; a++)
        for (int b = 0; b < r.nsites; b++) {
          trace_value got = trace_at(t, a, b, at), want = ref_at(&r, a, b, at);
          cr_assert_float_eq(got.latency_ms, want.latency_ms, 1e-9,
                             "iter %d (%d,%d) at %lld\n%s", iter, a, b, (long long)at, text);
          cr_assert_float_eq(got.bandwidth_gbps, want.bandwidth_gbps, 1e-9,
                             "iter %d (%d,%d) at %lld\n%s", iter, a, b, (long long)at, text);
          int64_t n = trace_next_change(t, a, b, at), wn = ref_next(&r, a, b, at);
          cr_assert_eq(n, wn, "iter %d (%d,%d) next after %lld: %lld, want %lld\n%s",
                       iter, a, b, (long long)at, (long long)n, (long long)wn, text);
          if (wn < any) any = wn;
        }
      cr_assert_eq(trace_next_change_any(t, at), any, "iter %d any after %lld\n%s",
                   iter, (long long)at, text);
    }
    trace_free(t);
    free(text);
  }
}

/* Random byte mutations of a valid trace never crash (run under ASan in CI)
 * and either load or fail with a code and a "w.csv:LINE: " message. */
Test(trace_random, mutations_fail_cleanly) {
  static const char base[] = "# interpolate: linear\n# loop_after_s: 100\n" HDR
                             "0,*,*,10,1\n0,a,b,20,2\n0,b,a,20,2\n5.5,a,*,30,0.5\n"
                             "7,*,b,1e1,3\n";
  static const char alphabet[] = ",*\n\r\0\xff\xc3-+.e9 #:ab";
  rng_state = 12345;
  char text[sizeof base + 8];
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(text, base, sizeof base);
    size_t len = sizeof base - 1;
    for (int k = 1 + (int)rnd(3); k > 0; k--)
      text[rnd(len)] = alphabet[rnd(sizeof alphabet - 1)];
    err e;
    err_clear(&e);
    trace *t = trace_parse(text, len, "w.csv", NULL, 0, &e);
    if (t) {
      cr_assert_eq(e.code, ERR_OK);
      for (int a = 0; a < trace_nsites(t); a++) {
        trace_value v = trace_at(t, a, 0, (int64_t)rnd(200 * S));
        cr_assert(v.bandwidth_gbps > 0 && v.latency_ms >= 0 && isfinite(v.latency_ms));
      }
      trace_free(t);
    } else {
      cr_assert_lt(e.code, 0);
      cr_assert(strncmp(e.msg, "w.csv:", 6) == 0 && e.msg[6] >= '1' && e.msg[6] <= '9',
                "iteration %d: '%s'", iter, e.msg);
    }
  }
}

/* trace_copy is the same trace (hash, every value, comments) and owns its
 * memory; trace_scale_pair changes its one ordered pair at every point. */
Test(trace, copy_and_scale_one_pair) {
  trace *t = parse_ok("# source: test\n# interpolate: linear\n" HDR
                      "0,*,*,10,1\n0,a,b,20,2\n0,b,a,30,3\n"
                      "100,a,b,40,4\n");
  trace *c = trace_copy(t);
  cr_assert_eq(trace_hash(c), trace_hash(t));
  cr_assert_str_eq(trace_comment(c, "source"), "test");
  cr_assert(trace_is_linear(c));
  trace_scale_pair(c, 0, 1, 0.5, 2);
  cr_assert_neq(trace_hash(c), trace_hash(t));
  for (int64_t ts = 0; ts <= 100 * S; ts += 25 * S) {
    trace_value u = trace_at(t, 0, 1, ts), v = trace_at(c, 0, 1, ts);
    cr_assert_eq(v.latency_ms, u.latency_ms * 0.5, "at %lld", (long long)ts);
    cr_assert_eq(v.bandwidth_gbps, u.bandwidth_gbps * 2);
    cr_assert_eq(trace_at(c, 1, 0, ts).bandwidth_gbps,
                 trace_at(t, 1, 0, ts).bandwidth_gbps, "b -> a unchanged");
    cr_assert_eq(trace_at(c, 0, 0, ts).latency_ms, 10);
  }
  trace_free(t); /* the copy outlives its source */
  cr_assert_eq(trace_at(c, 0, 1, 0).bandwidth_gbps, 4);
  trace_free(c);
}

/* trace_site_spread by hand: site a's links to b, c, d (an odd count:
 * the middle value) and, at t = 10 s, a's link to d moved; two sites (one
 * link); five (an even count: the middle two's mean); the diagonal and
 * the links towards a never count. */
Test(trace, site_spread_by_hand) {
  trace *t = parse_ok(HDR "0,*,*,5,9\n0,a,b,30,1\n0,a,c,10,4\n0,a,d,20,2\n"
                      "0,b,a,1,100\n10,a,d,40,8\n");
  trace_spread lat, bw;
  trace_site_spread(t, 0, 0, &lat, &bw);
  cr_expect(lat.min == 10 && lat.median == 20 && lat.max == 30,
            "%g %g %g", lat.min, lat.median, lat.max);
  cr_expect(bw.min == 1 && bw.median == 2 && bw.max == 4);
  trace_site_spread(t, 0, 10 * S, &lat, &bw);
  cr_expect(lat.min == 10 && lat.median == 30 && lat.max == 40);
  cr_expect(bw.min == 1 && bw.median == 4 && bw.max == 8);
  trace_site_spread(t, 1, 0, &lat, &bw); /* b -> a, c, d */
  cr_expect(lat.min == 1 && lat.median == 5 && lat.max == 5);
  cr_expect(bw.min == 9 && bw.median == 9 && bw.max == 100);
  trace_free(t);
  t = parse_ok(HDR "0,*,*,5,9\n0,a,b,30,1\n0,b,a,10,3\n");
  trace_site_spread(t, 0, 0, &lat, &bw);
  cr_expect(lat.min == 30 && lat.median == 30 && lat.max == 30);
  cr_expect(bw.min == 1 && bw.median == 1 && bw.max == 1);
  trace_free(t);
  t = parse_ok(HDR "0,*,*,5,9\n0,a,b,30,1\n0,a,c,10,4\n0,a,d,20,2\n"
               "0,a,e,50,6\n");
  trace_site_spread(t, 0, 0, &lat, &bw); /* even: the middle two's mean */
  cr_expect(lat.median == 25 && bw.median == 3, "%g %g", lat.median,
            bw.median);
  trace_free(t);
}

/* ---- path keys (issue 31) ---- */

#define HDRP "t_s,src,dst,latency_ms,bandwidth_gbps"

/* The optional columns after bandwidth_gbps, in any order, an empty cell
 * absent; a file without them keeps its hash; step and linear replay. */
Test(trace_path, columns_read_and_replay) {
  trace *t = parse_ok(HDRP ",loss,flow_gbps,window_bytes\n"
                      "0,*,*,5,2,,,\n"
                      "0,a,b,50,1,0.001,0.3,\n"
                      "10,a,b,50,1,,0.6,2e6\n");
  cr_assert(trace_has_path(t));
  trace_value v = trace_at(t, 0, 1, 0);
  cr_expect_eq(v.loss, 0.001);
  cr_expect_eq(v.flow_gbps, 0.3);
  cr_expect_eq(v.window_bytes, 0);
  v = trace_at(t, 0, 1, 10 * S);
  cr_expect_eq(v.loss, 0);
  cr_expect_eq(v.flow_gbps, 0.6);
  cr_expect_eq(v.window_bytes, 2e6);
  v = trace_at(t, 1, 0, 10 * S);
  cr_expect(v.loss == 0 && v.flow_gbps == 0 && v.window_bytes == 0);
  cr_expect_eq(trace_next_change(t, 0, 1, 0), 10 * S, "a path key's change");
  trace_value lo, hi;
  trace_extremes(t, &lo, &hi);
  cr_expect(lo.flow_gbps == 0.3 && hi.flow_gbps == 0.6);
  trace_free(t);
  /* linear: a key both ends give interpolates, loss from 0 too, a key one
   * end lacks holds the earlier point's */
  t = parse_ok("# interpolate: linear\n" HDRP ",flow_gbps,loss,window_bytes\n"
               "0,a,a,5,2,0.2,,1e6\n10,a,a,5,2,0.4,0.01,\n");
  v = trace_at(t, 0, 0, 5 * S);
  cr_expect_float_eq(v.flow_gbps, 0.3, 1e-12);
  cr_expect_float_eq(v.loss, 0.005, 1e-12);
  cr_expect_eq(v.window_bytes, 1e6);
  trace_free(t);
  /* empty cells alone: a trace without path keys, hashed as one */
  trace *a = parse_ok(HDRP ",flow_gbps\n0,a,a,5,2,\n");
  trace *b = parse_ok(HDRP "\n0,a,a,5,2\n");
  cr_expect(!trace_has_path(a));
  cr_expect_eq(trace_hash(a), trace_hash(b));
  trace *c = parse_ok(HDRP ",flow_gbps\n0,a,a,5,2,1\n");
  cr_expect_neq(trace_hash(c), trace_hash(b), "a path key moves the hash");
  trace_free(a), trace_free(b), trace_free(c);
}

/* Every bad path key or header, its message whole. */
static void bad_exact(const char *text, int code, const char *msg) {
  err e;
  trace *t = parse(text, NULL, 0, &e);
  cr_assert_null(t, "accepted: %s", text);
  cr_expect_eq(e.code, code, "%s", e.msg);
  cr_expect_str_eq(e.msg, msg);
}

Test(trace_path, bad_keys_and_headers) {
  bad_exact(HDRP ",flow_gbps\n0,*,*,5,2,-1\n", ERR_RANGE,
            "w.csv:2: flow_gbps: -1 is not >= 1e-06 Gbit/s and finite");
  bad_exact(HDRP ",flow_gbps\n0,*,*,5,2,inf\n", ERR_RANGE,
            "w.csv:2: flow_gbps: 'inf' is not a finite number");
  bad_exact(HDRP ",flow_gbps\n0,*,*,5,2,1e999\n", ERR_RANGE,
            "w.csv:2: flow_gbps: '1e999' is out of range");
  bad_exact(HDRP ",loss\n0,*,*,5,2,1\n", ERR_RANGE,
            "w.csv:2: loss: 1 is not in [0, 1)");
  bad_exact(HDRP ",loss\n0,*,*,5,2,-0.1\n", ERR_RANGE,
            "w.csv:2: loss: -0.1 is not in [0, 1)");
  bad_exact(HDRP ",window_bytes\n0,*,*,5,2,1000\n", ERR_RANGE,
            "w.csv:2: window_bytes: 1000 is not in [1448, 1099511627776] "
            "bytes (one TCP segment to 1 TiB)");
  bad_exact(HDRP ",window_bytes\n0,*,*,5,2,x\n", ERR_PARSE,
            "w.csv:2: window_bytes: 'x' is not a number");
  bad_exact(HDRP ",rtt\n0,*,*,5,2,1\n", ERR_PARSE,
            "w.csv:1: header: 'rtt' is not a column (after bandwidth_gbps: "
            "flow_gbps, loss, window_bytes)");
  bad_exact(HDRP ",loss,loss\n0,*,*,5,2,0,0\n", ERR_DUPLICATE,
            "w.csv:1: header: loss given twice");
  bad_exact(HDRP ",loss\n0,*,*,5,2\n", ERR_PARSE,
            "w.csv:2: expected 6 columns (" HDRP ",loss), found 5");
  bad_exact("t_s,src,dst,latency_ms\n0,*,*,5\n", ERR_PARSE,
            "w.csv:1: expected the header '" HDRP "' (then any of "
            "flow_gbps, loss, window_bytes), found 't_s,src,dst,latency_ms'");
}
