/* test_trace_bounds: what a trace may hold in memory (trace.h's
 * TRACE_MAX_BYTES). A few KB of "*,*" snapshots over 1,024 sites expand to
 * gigabytes of change points: trace_parse refuses them, with the estimate
 * and the line where the bound is passed, before allocating; a trace under
 * the bound still loads and replays. test_trace.c holds the format. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "tests/support.h"
#include "traces/trace.h"

TestSuite(trace_bounds, .init = support_dir_make, .fini = support_dir_remove);

#define HDR "t_s,src,dst,latency_ms,bandwidth_gbps\n"

/* n site names s0 .. s(n-1), NULL-terminated (caller frees each and the
 * array). */
static char **site_names(int n) {
  char **v = mem_calloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) {
    char b[16];
    snprintf(b, sizeof b, "s%d", i);
    v[i] = mem_strdup(b);
  }
  return v;
}

static void free_names(char **v) {
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

/* A t = 0 snapshot naming every site (its own row each, under "*,*"), then
 * snaps "*,*" snapshots alternating between two values, so step replay
 * keeps every one of them. */
static char *star_snapshots(int nsites, int snaps) {
  size_t cap = 64 + (size_t)nsites * 24 + (size_t)snaps * 24, len = 0;
  char *t = mem_alloc(cap);
  len += (size_t)snprintf(t, cap, HDR "0,*,*,1,1\n");
  for (int i = 0; i < nsites; i++)
    len += (size_t)snprintf(t + len, cap - len, "0,s%d,s%d,0,10\n", i, i);
  for (int k = 1; k <= snaps; k++)
    len += (size_t)snprintf(t + len, cap - len, "%d,*,*,%d,1\n", k, 1 + k % 2);
  return t;
}

/* The line of the first snapshot at which the naive count (every "*,*"
 * snapshot adds n^2 points, the first also the n self rows, at most n^2
 * per snapshot) passes the bound; 0 if none. */
static int crossing_line(int nsites, int snaps) {
  double n = nsites, rows = 1 + n + snaps, points = n * n;
  if (trace_bytes(rows, points, nsites) > (double)TRACE_MAX_BYTES) return 2;
  for (int k = 1; k <= snaps; k++) {
    points += n * n;
    if (trace_bytes(rows, points, nsites) > (double)TRACE_MAX_BYTES)
      return 2 + nsites + k;
  }
  return 0;
}

/* Before the bound the 1,024-site file below (about 30 KB) allocated tens
 * of GB and aborted in mem_alloc. */
Test(trace_bounds, star_snapshots_over_many_sites_are_refused) {
  const int n = 1024, snaps = 300;
  char **names = site_names(n);
  char *text = star_snapshots(n, snaps);
  cr_expect_lt(strlen(text), 40000);
  int line = crossing_line(n, snaps);
  cr_assert_gt(line, 2, "the file should pass the bound after t = 0");
  err e;
  err_clear(&e);
  trace *t = trace_parse(text, strlen(text), "w.csv",
                         (const char *const *)names, n, &e);
  cr_assert_null(t, "a %zu-byte file of * snapshots loaded", strlen(text));
  char want[64];
  snprintf(want, sizeof want, "w.csv:%d: the snapshots up to this one", line);
  cr_expect_eq(e.code, ERR_MEMORY, "%s", e.msg);
  cr_expect(strncmp(e.msg, want, strlen(want)) == 0, "'%s', want '%s'", e.msg,
            want);
  cr_expect(strstr(e.msg, "GB a trace may hold"), "%s", e.msg);
  /* the command line says the same, with exit status 1 */
  const char *path = support_write_file(support_path("star.csv"), text);
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "trace check '%s'", path), 1, "%s", r.err);
  cr_expect(strstr(r.err, "GB a trace may hold"), "%s", r.err);
  support_run_clear(&r);
  free(text);
  free_names(names);
}

/* Under the bound the same shape loads, with every snapshot kept. */
Test(trace_bounds, star_snapshots_under_the_bound_load) {
  const int n = 64, snaps = 20;
  char **names = site_names(n);
  char *text = star_snapshots(n, snaps);
  cr_assert_eq(crossing_line(n, snaps), 0);
  err e;
  err_clear(&e);
  trace *t = trace_parse(text, strlen(text), "w.csv",
                         (const char *const *)names, n, &e);
  cr_assert_not_null(t, "%s", e.msg);
  cr_expect_eq(trace_points(t), (size_t)(snaps + 1) * n * n);
  cr_expect_eq(trace_at(t, 3, 5, 7 * TRACE_NS_PER_S).latency_ms, 2);
  cr_expect_eq(trace_at(t, 3, 3, 0).bandwidth_gbps, 10);
  trace_free(t);
  free(text);
  free_names(names);
}

/* trace_bytes grows with each of its terms. */
Test(trace_bounds, bytes_grow_with_rows_points_and_sites) {
  double b = trace_bytes(10, 10, 4);
  cr_expect_gt(trace_bytes(11, 10, 4), b);
  cr_expect_gt(trace_bytes(10, 11, 4), b);
  cr_expect_gt(trace_bytes(10, 10, 5), b);
  cr_expect_lt(trace_bytes(1e6, 1e6, 64), (double)TRACE_MAX_BYTES);
}
