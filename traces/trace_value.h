/* trace_value: one link's value at one time, the bounds a trace (and a
 * scenario) accepts and the path keys' table — what the CSV reader
 * (trace_csv.c) and the replay (trace.c) share, below both.
 * Invariant: TRACE_PATH_MAP is the one list of path keys; a value a trace
 * holds lies within the bounds below. */
#ifndef TRACES_TRACE_VALUE_H
#define TRACES_TRACE_VALUE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One link's value at one time: its delay and rate, and what a path
 * carries as its users measure it (the path keys, TRACE_PATH_MAP; each 0
 * when absent). Under "tc" shaping bandwidth_gbps is each sender's shaper
 * rate, under "path" the capacity of the path between two sites
 * (traces/FORMATS.md). */
typedef struct trace_value {
  double latency_ms;      /* one-way delay, ms, >= 0 */
  double bandwidth_gbps;  /* Gbit/s, > 0 */
  double flow_gbps;       /* a measured single-stream rate, Gbit/s */
  double loss;            /* packet loss rate in [0, 1) */
  double window_bytes;    /* TCP window per socket on the path, bytes */
} trace_value;

#define TRACE_NEVER INT64_MAX  /* "no further change" */
#define TRACE_NS_PER_S 1000000000LL

/* Bounds of what a trace (and a scenario) accepts. Quadratic structures
 * (per site pair here, per device pair elsewhere) must fit in memory, and a
 * latency or a transfer time must convert to int64 nanoseconds with room to
 * spare: 1e6 ms is 1000 s, 1e-6 Gbit/s moves 1 GB in 93 days. Bandwidth has
 * no upper bound but finiteness (1e9 Gbit/s stands for free communication). */
#define TRACE_MAX_SITES 1024
#define TRACE_MAX_LATENCY_MS 1e6
#define TRACE_MIN_BANDWIDTH_GBPS 1e-6
/* A path's window: from one TCP segment of 1448 payload bytes (1500-byte
 * MTU with timestamps: models/transport.h's TRANSPORT_TCP_SEGMENT_BYTES,
 * which a static assertion ties to this) to 1 TiB. A loss rate is below 1:
 * a path that loses every packet carries nothing. */
#define TRACE_WINDOW_MIN_BYTES 1448
#define TRACE_WINDOW_MAX_BYTES (1LL << 40)
#define TRACE_LOSS_MAX 1.0

/* The path keys, declared once: the trace CSV's optional columns, the
 * scenario's link keys (network.links[] and the network-level default),
 * the export, the hash and the format's reference walk this table. A row
 *   X(field, lo, hi, hi_open, what)
 * names a field of trace_value (and the key), its bounds (lo <= x, x <= hi
 * or x < hi when hi_open; finite) and how a message states them ("... is
 * not WHAT"). 0 means absent for each (loss 0: none). */
#define TRACE_PATH_MAP(X)                                                  \
  X(flow_gbps, TRACE_MIN_BANDWIDTH_GBPS, HUGE_VAL, false,                 \
    ">= 1e-06 Gbit/s and finite")                                          \
  X(loss, 0.0, TRACE_LOSS_MAX, true, "in [0, 1)")                          \
  X(window_bytes, (double)TRACE_WINDOW_MIN_BYTES,                          \
    (double)TRACE_WINDOW_MAX_BYTES, false,                                 \
    "in [1448, 1099511627776] bytes (one TCP segment to 1 TiB)")

/* One path key: its name, where it sits in a trace_value, its bounds. */
typedef struct trace_path_key {
  const char *name;
  size_t offset;
  double lo, hi;
  bool hi_open;
  const char *what;
} trace_path_key;

#define TRACE_PATH_ONE_(f, lo, hi, open, what) +1
enum { TRACE_NPATH_KEYS = 0 TRACE_PATH_MAP(TRACE_PATH_ONE_) };
/* A row's index by its key: TRACE_PATH_flow_gbps, ... */
#define TRACE_PATH_ENUM_(f, lo, hi, open, what) TRACE_PATH_##f,
enum { TRACE_PATH_MAP(TRACE_PATH_ENUM_) };

/* TRACE_PATH_MAP's rows, in its order. */
extern const trace_path_key trace_path_keys[TRACE_NPATH_KEYS];

/* Key k's value in v. */
double trace_value_path(const trace_value *v, int k);

/* Whether x is within key k's bounds. */
bool trace_path_ok(int k, double x);

/* Whether v gives any path key (a non-zero one). Inline: the engine asks
 * on every read of a varying link. */
static inline bool trace_value_has_path(const trace_value *v) {
  return v->flow_gbps != 0 || v->loss != 0 || v->window_bytes != 0;
}

/* What one trace may hold in memory while it is read and built: its data
 * rows and the change points its snapshots expand to. A '*' row stands for
 * every site, so 30 KB of "*,*" snapshots over 1,024 sites are a billion
 * points; trace_parse refuses such a text with its estimate, at the line
 * where the bound is passed, before allocating it. */
#define TRACE_MAX_BYTES (4ULL << 30)

#endif
