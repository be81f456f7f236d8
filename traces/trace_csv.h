/* trace_csv: reads the CSV trace format of DESIGN.md section 5 into plain
 * rows; traces/trace.c resolves them into per-pair change points.
 * Invariant of a parsed result: rows are in file order with non-decreasing
 * times, the first at t = 0 and every one before loop_ns when it loops;
 * within one t_s no (src, dst) pattern repeats; values lie within trace.h's
 * bounds; the rows at t = 0 give every ordered pair of the sites a value
 * (some row matches it, '*' matching any site); the path keys are within
 * TRACE_PATH_MAP's bounds (0: absent); and sites holds at least one
 * and at most TRACE_MAX_SITES names, all distinct. */
#ifndef TRACES_TRACE_CSV_H
#define TRACES_TRACE_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "traces/csv.h"
#include "traces/trace_value.h"

/* A value's latency and bandwidth, and its path keys apart: a trace whose
 * header names no path key stores none (its rows and change points keep
 * the size they had before path keys existed). */
typedef struct trace_base {
  double latency_ms, bandwidth_gbps;
} trace_base;
typedef struct trace_path {
  double flow_gbps, loss, window_bytes;
} trace_path;
_Static_assert(sizeof(trace_path) == TRACE_NPATH_KEYS * sizeof(double),
               "one double per path key");

/* The two parts as one trace_value, and back. */
static inline trace_value trace_value_of(trace_base b, const trace_path *p) {
  trace_value v = {.latency_ms = b.latency_ms,
                   .bandwidth_gbps = b.bandwidth_gbps};
  if (p) v.flow_gbps = p->flow_gbps, v.loss = p->loss,
         v.window_bytes = p->window_bytes;
  return v;
}
static inline trace_base trace_base_of(trace_value v) {
  return (trace_base){v.latency_ms, v.bandwidth_gbps};
}
static inline trace_path trace_path_of(trace_value v) {
  return (trace_path){v.flow_gbps, v.loss, v.window_bytes};
}

typedef struct trace_csv_row {
  int64_t t;     /* t_s in integer nanoseconds */
  int src, dst;  /* site index, -1 for '*' */
  int line;      /* line of the file, for messages */
  trace_base v;
} trace_csv_row;

typedef csv_comment trace_csv_comment; /* "# key: value" */

typedef struct trace_csv {
  int nsites;
  char **sites;                 /* owned; the caller's, then first named */
  trace_csv_row *rows;
  size_t nrows;
  trace_path *paths;            /* owned, one per row when the header names
                                   a path key, else NULL */
  trace_csv_comment *comments;  /* owned, in file order, duplicates kept */
  size_t ncomments;
  bool linear;                  /* "# interpolate: linear" */
  int64_t loop_ns;              /* "# loop_after_s", ns; 0: no loop */
  double loop_s;                /* the same, in seconds */
} trace_csv;

/* Parses CSV text (len bytes, need not be NUL-terminated) into out, naming
 * name in "NAME:LINE: message" errors; sites/nsites as for trace_parse.
 * Returns ERR_OK, or an error code with e filled and out left empty. Either
 * way the caller calls trace_csv_free(out). */
int trace_csv_parse(const char *text, size_t len, const char *name,
                    const char *const *sites, int nsites, trace_csv *out,
                    err *e);

/* A cheap look at CSV text (len bytes) for a listing that must not parse
 * it: true when no "# loop_after_s" comment comes before the first data
 * row at a t_s other than 0 and there is no such row (rows are sorted, so
 * the scan stops there). It checks nothing: text trace_csv_parse refuses
 * gets an answer too. For a valid trace true implies trace_is_static, and
 * a row at t_s > 0 that repeats the t = 0 values makes it answer false
 * where trace_is_static is true (test_scenario checks that the built-ins
 * agree). */
bool trace_csv_all_at_zero(const char *text, size_t len);

/* One change point trace.c emits from a row before sorting by pair (its
 * size enters trace_bytes_with). */
typedef struct trace_csv_emit {
  uint32_t pair;
  size_t row;
} trace_csv_emit;

/* trace_bytes (trace.h), with the path keys' arrays when paths. */
double trace_bytes_with(double rows, double points, int nsites, bool paths);

/* Frees what c owns and empties it; an emptied or zeroed c is fine. Fields
 * set to NULL (after taking them over) are skipped. */
void trace_csv_free(trace_csv *c);

#endif
