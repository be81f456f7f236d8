/* measure: a user's measurements file — one measured iteration per row —
 * read, resolved into runs and simulated (`geodes reproduce --data`,
 * `geodes calibrate --data`). The format (traces/FORMATS.md,
 * "Measurements CSV"):
 *
 *   # source: where the numbers come from (provenance comments, '#')
 *   group,scenario,method,seed,network,batch,measured_s
 *   lan,cluster.json,dtfm-identity,1,tcp,64,5.97
 *
 * scenario (a built-in name, or a file relative to the CSV) and measured_s
 * (seconds of one iteration, >= MEASURE_MIN_S) are required; method (a --method name)
 * or alloc (an allocation file relative to the CSV) says where the stages
 * ran (default dtfm-identity); group labels the rows summarised together
 * (default: the scenario). Every other column is a knob, named as a sweep
 * file's key (analysis/sweep.h), singular or plural: seed, network, gpu,
 * layers, batch, micro_batch, runtime, dp_algo, window_bytes, sockets, ...
 * (one column per key: seed and seeds together are refused). An empty
 * cell is the scenario's own value.
 * Invariant: each row's scenario, placement and options are resolved once,
 * when the file is read (a method's placement under the parameters then in
 * force); measure_sim then depends on the row and models/params.h alone. */
#ifndef ANALYSIS_MEASURE_H
#define ANALYSIS_MEASURE_H

#include "base/err.h"

/* The shortest measured iteration a row may give: a microsecond. Below it
 * no iteration runs, and a relative error against it overflows (1e-320 s,
 * a subnormal, made the row's error infinite and the summary dropped it
 * without a word). */
#define MEASURE_MIN_S 1e-6

typedef struct measure_set measure_set;

/* One row as read. Strings are owned by the set. */
typedef struct measure_row {
  int line;          /* in the file */
  const char *group, *scenario, *method; /* method: alloc file if given */
  double measured_s;
} measure_row;

/* Reads and resolves the measurements file at path. NULL and e filled
 * ("PATH:LINE: ..." naming the column) on any bad row: a missing column,
 * an unknown scenario, knob or method, a bad value, a measured_s that is
 * not a number >= MEASURE_MIN_S, two columns of one key. The caller frees
 * it. */
measure_set *measure_load(const char *path, err *e);
void measure_free(measure_set *m); /* NULL ok */

int measure_count(const measure_set *m);
const measure_row *measure_row_at(const measure_set *m, int i);
const char *measure_path(const measure_set *m); /* borrowed */

/* Simulates row i's iteration under the current parameters into *sim_s.
 * ERR_OK, or the simulator's error ("PATH:LINE: ...") in e. */
int measure_sim(const measure_set *m, int i, double *sim_s, err *e);

/* Simulates every row (measure_sim) into sim[i] and its error, simulated
 * / measured - 1, into error[i], calling progress(ctx, done, total) after
 * each (NULL: none). ERR_OK, or the first failing row's error in e (its
 * error NAN, the rows after it not run). */
int measure_run(const measure_set *m, double *sim, double *error,
                void (*progress)(void *ctx, int done, int total), void *ctx,
                err *e);

/* A group's rows whose error is finite and their median and worst
 * |error| (measure_summary). */
typedef struct measure_group {
  const char *name; /* borrowed; NULL: every row */
  int rows;
  double median, worst;
} measure_group;

/* The groups of measure_groups' order, then every row (name NULL): *n of
 * them. The caller frees the array. */
measure_group *measure_group_summaries(const measure_set *m,
                                       const double *error, int *n);

/* The distinct groups in order of first appearance into groups (room for
 * measure_count entries; borrowed); returns how many. */
int measure_groups(const measure_set *m, const char **groups);

/* Median and worst |error[i]| over the rows of group (NULL: all) whose
 * error is finite; returns how many rows that is (0: NAN both). */
int measure_summary(const measure_set *m, const double *error,
                    const char *group, double *median, double *worst);

#endif
