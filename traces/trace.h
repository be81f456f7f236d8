/* trace: latency and bandwidth between sites over time, loaded once from the
 * CSV format of DESIGN.md section 5 and replayed.
 * Invariant: for every ordered site pair (a, b), including a == b, the trace
 * holds a non-empty list of change points sorted by time with the first at
 * t = 0, so a query is a binary search (O(log n)) and never fails. */
#ifndef TRACES_TRACE_H
#define TRACES_TRACE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "traces/trace_value.h"

typedef struct trace trace;

/* One link's value at one time, the bounds and the path keys:
 * traces/trace_value.h. */

/* Bytes trace_parse needs at most for rows data rows over nsites sites
 * expanding to points change points (array growth included): the measure
 * TRACE_MAX_BYTES bounds, and what a writer (trace synth) checks so that its
 * output reads back. */
double trace_bytes(double rows, double points, int nsites);

/* Parses CSV text (len bytes, need not be NUL-terminated). name is the file
 * name used in "NAME:LINE: message" errors. The header may name path keys
 * after bandwidth_gbps (any of TRACE_PATH_MAP's, each once; an empty cell is
 * absent). Values must lie within the
 * TRACE_ bounds above, and at most TRACE_MAX_SITES sites (the caller's, or
 * the file's) are covered. Within one snapshot the most
 * specific row wins: "a,b" > "a,*" > "*,b" > "*,*" ('*' includes a itself);
 * at most TRACE_MAX_BYTES (trace_bytes) are needed, else ERR_MEMORY;
 * "# loop_after_s: X" needs X > the last t_s. sites/nsites name the sites the
 * trace must cover, in index order (a scenario's sites); sites == NULL means
 * "the sites the file names, in order of first appearance". Returns NULL and
 * fills e on any malformed input; the caller owns the result. */
trace *trace_parse(const char *text, size_t len, const char *name,
                   const char *const *sites, int nsites, err *e);

/* trace_parse on the contents of the file at path. */
trace *trace_load(const char *path, const char *const *sites, int nsites,
                  err *e);

/* Frees t; NULL is fine. */
void trace_free(trace *t);

int trace_nsites(const trace *t);
const char *trace_site(const trace *t, int i);           /* borrowed */
int trace_site_index(const trace *t, const char *name);  /* -1 if unknown */

/* The value for the ordered pair (a, b) at time t_ns >= 0 (step replay, or
 * linear interpolation between change points, with looping): O(log n). A
 * path key interpolates only where both ends give it (loss: always), else
 * the earlier point's holds. */
trace_value trace_at(const trace *t, int a, int b, int64_t t_ns);

/* The first time > t_ns at which the value of (a, b) changes (step: rows
 * repeating the value held are skipped, and with a loop the period start
 * counts only if the value there differs; linear: the next change point,
 * where the slope changes, period starts included), or TRACE_NEVER. */
int64_t trace_next_change(const trace *t, int a, int b, int64_t t_ns);

/* The first time > t_ns at which any pair changes, or TRACE_NEVER. */
int64_t trace_next_change_any(const trace *t, int64_t t_ns);

bool trace_is_static(const trace *t);        /* only t = 0 values */
bool trace_is_linear(const trace *t);        /* "# interpolate: linear" */
double trace_loop_after_s(const trace *t);   /* 0 when not looping */
double trace_duration_s(const trace *t);     /* time of the last change */
size_t trace_rows(const trace *t);           /* data rows read */

/* The value of the header comment "# key: value" (e.g. "source", "licence",
 * "synthetic_from_real"), or NULL. Borrowed. */
const char *trace_comment(const trace *t, const char *key);

/* Number of distinct t_s values among the data rows (snapshots). */
size_t trace_snapshots(const trace *t);

/* Change points kept over all pairs (step replay drops rows that repeat the
 * value already held). */
size_t trace_points(const trace *t);

/* Smallest and largest latency and bandwidth over all change points: exact
 * bounds of every trace_at value (interpolation stays between its ends);
 * the path keys over the points that give them (0 when none does). */
void trace_extremes(const trace *t, trace_value *lo, trace_value *hi);

/* How site a's links to the other sites spread at t_ns: the least, the
 * median (of an even count, the mean of the two middle values) and the
 * greatest one-way latency and bandwidth over b != a (a -> b). At least
 * two sites. */
typedef struct trace_spread {
  double min, median, max;
} trace_spread;
void trace_site_spread(const trace *t, int a, int64_t t_ns,
                       trace_spread *latency_ms, trace_spread *bandwidth_gbps);

/* Whether some change point gives a path key (TRACE_PATH_MAP). */
bool trace_has_path(const trace *t);

/* Every "# key: value" comment in file order (duplicates kept); trace_comment
 * returns the first of a key. Borrowed. */
size_t trace_ncomments(const trace *t);
const char *trace_comment_key(const trace *t, size_t i);
const char *trace_comment_value(const trace *t, size_t i);

/* A content hash of everything a replay depends on: the sites in order, every
 * pair's change points, the interpolation and the loop. Equal traces hash
 * equal however their files were written (comments, row order within a
 * snapshot, rows repeating a value under step replay). The path keys are
 * hashed only when some point gives one, so a trace without them keeps
 * the hash it had before they existed. */
uint64_t trace_hash(const trace *t);

/* Multiplies every latency by latency_scale and every bandwidth by
 * bandwidth_scale (both > 0): the knobs of a sweep (the path keys are
 * measured properties of the path and stay). The caller checks that
 * the scaled extremes (trace_extremes) stay within the TRACE_ bounds. */
void trace_scale(trace *t, double latency_scale, double bandwidth_scale);

/* Replaces the value of the ordered pair (a, b), which must hold one value
 * for the whole trace (only its t = 0 point), by v (within the TRACE_
 * bounds), path keys included. For a caller that restates one pair of a
 * loaded network. */
void trace_set_static(trace *t, int a, int b, trace_value v);

/* A deep copy of t (the caller owns it; trace_free). */
trace *trace_copy(const trace *t);

/* Multiplies the latencies and bandwidths of the ordered pair (a, b) only,
 * at every change point (both scales > 0): a what-if on one link. The
 * caller checks the TRACE_ bounds as for trace_scale. */
void trace_scale_pair(trace *t, int a, int b, double latency_scale,
                      double bandwidth_scale);

/* Sets path key k (TRACE_PATH_MAP's row) of the ordered pair (a, b) to x
 * (within the key's bounds) at every change point of the pair: a what-if
 * on one link, as a file giving that key on each of the pair's rows. */
void trace_set_pair_path(trace *t, int a, int b, int k, double x);

#endif
