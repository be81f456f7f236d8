/* test_trace_csv: the rows, sites, comments and settings the CSV reader
 * hands to the replay builder — a hand-written file checked field by field,
 * random files against the rows they were printed from, and a failure that
 * leaves the result empty with its code and "FILE:LINE:" message. The
 * replay built from these rows is test_trace's. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "traces/trace_csv.h"

#define HDR "t_s,src,dst,latency_ms,bandwidth_gbps\n"

static void expect_row(const trace_csv *c, size_t i, long long t, int src,
                       int dst, int line, double lat, double bw) {
  cr_assert_lt(i, c->nrows);
  const trace_csv_row *r = &c->rows[i];
  cr_expect_eq(r->t, t, "row %zu: t %lld, want %lld", i, (long long)r->t, t);
  cr_expect_eq(r->src, src, "row %zu: src %d, want %d", i, r->src, src);
  cr_expect_eq(r->dst, dst, "row %zu: dst %d, want %d", i, r->dst, dst);
  cr_expect_eq(r->line, line, "row %zu: line %d, want %d", i, r->line, line);
  cr_expect_eq(r->v.latency_ms, lat, "row %zu: latency %g", i, r->v.latency_ms);
  cr_expect_eq(r->v.bandwidth_gbps, bw, "row %zu: bw %g", i,
               r->v.bandwidth_gbps);
}

Test(trace_csv, hand_written_file) {
  const char *text = "# source: hand\n"
                     "# interpolate: linear\n"
                     "\n" HDR
                     "0,*,*,5,1\n"
                     " 0 , b , a , 7 , 2 \n"
                     "# loop_after_s: 9.5\n"
                     "2.25,a,*,3,0.5\r\n"
                     "# source: again\n";
  trace_csv c;
  err e;
  err_clear(&e);
  cr_assert_eq(trace_csv_parse(text, strlen(text), "w.csv", NULL, 0, &c, &e),
               ERR_OK, "%s", e.msg);
  cr_expect_eq(e.code, ERR_OK);
  cr_assert_eq(c.nsites, 2);
  cr_expect_str_eq(c.sites[0], "b");  /* order of first appearance */
  cr_expect_str_eq(c.sites[1], "a");
  cr_assert_eq(c.nrows, 3);
  expect_row(&c, 0, 0, -1, -1, 5, 5, 1);
  expect_row(&c, 1, 0, 0, 1, 6, 7, 2);
  expect_row(&c, 2, 2250000000LL, 1, -1, 8, 3, 0.5);
  cr_expect(c.linear);
  cr_expect_eq(c.loop_ns, 9500000000LL);
  cr_expect_eq(c.loop_s, 9.5);
  cr_assert_eq(c.ncomments, 4);
  static const char *const kv[][2] = {{"source", "hand"},
                                      {"interpolate", "linear"},
                                      {"loop_after_s", "9.5"},
                                      {"source", "again"}};
  for (size_t i = 0; i < 4; i++) {
    cr_expect_str_eq(c.comments[i].key, kv[i][0]);
    cr_expect_str_eq(c.comments[i].value, kv[i][1]);
  }
  trace_csv_free(&c);
  cr_expect_null(c.sites);
  cr_expect_eq(c.nrows, 0);
  trace_csv_free(&c);  /* an emptied result frees again harmlessly */
}

Test(trace_csv, caller_sites_keep_their_order) {
  const char *const sites[] = {"x", "y", "z"};
  const char *text = HDR "0,*,*,1,1\n0,z,x,2,2\n";
  trace_csv c;
  cr_assert_eq(trace_csv_parse(text, strlen(text), "w.csv", sites, 3, &c,
                               NULL), ERR_OK);
  cr_assert_eq(c.nsites, 3);
  for (int i = 0; i < 3; i++) cr_expect_str_eq(c.sites[i], sites[i]);
  expect_row(&c, 1, 0, 2, 0, 3, 2, 2);
  cr_expect_not(c.linear);
  cr_expect_eq(c.loop_ns, 0);
  trace_csv_free(&c);
}

Test(trace_csv, failure_leaves_it_empty) {
  const char *text = HDR "0,*,*,1,1\n1,a,b,2,-3\n";
  trace_csv c;
  err e;
  err_clear(&e);
  int rc = trace_csv_parse(text, strlen(text), "w.csv", NULL, 0, &c, &e);
  cr_expect_eq(rc, ERR_RANGE);
  cr_expect_eq(e.code, ERR_RANGE);
  cr_expect_str_eq(e.msg, "w.csv:3: bandwidth_gbps: -3 is not > 0");
  cr_expect_null(c.rows);
  cr_expect_null(c.sites);
  cr_expect_eq(c.nrows, 0);
  trace_csv_free(&c);
}

/* Random files printed from random rows read back as those rows. */
Test(trace_csv, random_files_against_their_rows) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 7);
  const char *const sites[] = {"s0", "s1", "s2", "s3"};
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + gsl_rng_uniform_int(rng, 40), len = 0, cap = 0;
    trace_csv_row *want = mem_alloc(n * sizeof *want);
    char *text = NULL;
    mem_grow((void **)&text, &cap, 64, 1);
    len = (size_t)sprintf(text, HDR);
    long long t = 0;
    for (size_t i = 0; i < n; i++) {
      /* Row 0 is "*,*" at 0; later rows move time on, so no pattern
       * repeats within a snapshot. */
      if (i > 0) t += 1 + (long long)gsl_rng_uniform_int(rng, 3000000000UL);
      int src = i ? (int)gsl_rng_uniform_int(rng, 5) - 1 : -1;
      int dst = i ? (int)gsl_rng_uniform_int(rng, 5) - 1 : -1;
      double lat = gsl_rng_uniform(rng) * 500, bw = 0.01 + gsl_rng_uniform(rng);
      want[i] = (trace_csv_row){t, src, dst, (int)i + 2, {lat, bw}};
      mem_grow((void **)&text, &cap, len + 128, 1);
      len += (size_t)snprintf(text + len, cap - len,
                              "%lld.%09lld,%s,%s,%.17g,%.17g\n", t / 1000000000,
                              t % 1000000000, src < 0 ? "*" : sites[src],
                              dst < 0 ? "*" : sites[dst], lat, bw);
    }
    trace_csv c;
    err e;
    err_clear(&e);
    cr_assert_eq(trace_csv_parse(text, len, "r.csv", sites, 4, &c, &e), ERR_OK,
                 "round %d: %s", round, e.msg);
    cr_assert_eq(c.nrows, n, "round %d", round);
    for (size_t i = 0; i < n; i++)
      expect_row(&c, i, want[i].t, want[i].src, want[i].dst, want[i].line,
                 want[i].v.latency_ms, want[i].v.bandwidth_gbps);
    trace_csv_free(&c);
    free(want);
    free(text);
  }
  gsl_rng_free(rng);
}
