/* sweep: the sweep file of DESIGN.md section 9 and its execution. A sweep is
 * the cross product of its array values (scalars are fixed); each point is
 * one row of `results`, found by its canonical key, so a re-run computes only
 * the points that are missing (resume) and never writes one twice. Points are
 * evaluated by a caller-supplied function, in this process, in --jobs forked
 * workers, or over MPI ranks (sweep_mpi.h). */
#ifndef ANALYSIS_SWEEP_H
#define ANALYSIS_SWEEP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/db.h"
#include "base/err.h"
#include "traces/scenario.h"

typedef struct sweep sweep;

/* One point. Strings are borrowed from the sweep; an absent knob is < 0,
 * NULL or NAN and means "the scenario's default". knobs is the record of
 * the run's knobs that scenario_apply takes (traces/scenario.h: scales
 * default to 1; gpu is a canonical name of models/spec.h, "A100", the GPU
 * of every device, or NULL: each site keeps its own; window_bytes the
 * transport's, which scenario_apply leaves); the other fields are a
 * sweep's own keys and what sweep_resolve adds. */
typedef struct sweep_point {
  const char *scenario, *method, *network;
  scenario_knobs knobs;
  int64_t iterations, checkpoint_every; /* a training run; -1: absent */
  const char *faults, *recovery;        /* a fault file, a policy; NULL */
  uint64_t faults_hash;   /* fault_hash of faults read against the point's
                             scenario (sweep_resolve); 0 without faults */
  uint64_t scenario_hash; /* scenario_hash of the scenario as loaded, before
                             the knobs (sweep_resolve); 0 before */
  uint64_t data_hash;     /* builtin_hash (sweep_resolve); 0 before */
  uint64_t prices_hash;   /* scenario_prices_hash of the scenario as loaded
                             (sweep_resolve); 0: nothing priced, or before */
  const char *cost_cmd;   /* a user's cost model that also predicts the
                             point (sweep_set_cost_cmd), or NULL */
  double cost_timeout_s;  /* its per-candidate timeout (<= 0: default) */
} sweep_point;

/* The most points one sweep may have: its list of missing points and the
 * lookup of each key must fit in memory and time (80 MB, minutes). */
#define SWEEP_MAX_POINTS 10000000

/* Parses sweep JSON (len bytes; name is used in "NAME:LINE: message"). Unknown
 * keys, wrong types, unknown names (a GPU not in models/spec.h included),
 * out-of-range or repeated values and empty arrays are errors naming the
 * line of the key, as is a product over SWEEP_MAX_POINTS. Absent scenarios,
 * methods and networks default to worldwide, dtfm-identity and the default
 * network model (TRANSPORT_MODEL_DEFAULT, tcp). NULL
 * and e on failure. */
sweep *sweep_parse(const char *text, size_t len, const char *name, err *e);

/* sweep_parse on the file at path, then sweep_files_beside. */
sweep *sweep_load(const char *path, err *e);

/* The scenario files, fault files and model configs ("hf:PATH") s names,
 * made relative to the sweep file at path (file_beside: its folder, not
 * the working directory); a name that is a built-in, absolute, or found
 * only from the working directory (the former rule, kept for scripts
 * written for it) stays as written. Call before sweep_resolve. */
void sweep_files_beside(sweep *s, const char *path);

void sweep_free(sweep *s);  /* NULL ok */

/* Loads every scenario of s once, so a bad one fails before any point runs
 * ("NAME:LINE: scenarios: ..."), reads every fault file against every
 * scenario ("NAME:LINE: faults: FILE:LINE: ..."), checks every combination
 * of its workload
 * values and scales with each as sim_run will ("NAME:LINE: batch: ...": a
 * batch that cannot work fails here, not per point), and keeps each
 * scenario's content hash and the built-in data's hash for the points'
 * identities. sweep_run needs it. */
int sweep_resolve(sweep *s, err *e);

/* The identity of p's row beyond its key (p's, from sweep_point_key): a
 * hash of the resolved scenario (its content as loaded, p->scenario_hash,
 * with the knobs of key applied: the two determine it), of the built-in
 * data (p->data_hash) and of SIM_RESULTS_VERSION, as 16 hex digits and a
 * NUL in buf. A row of p's key with another identity was computed from
 * other inputs: it is stale, and recomputed. */
void sweep_point_identity(const sweep_point *p, const char *key,
                          char buf[17]);

/* Every point of s also gets cmd's prediction (`--cost-cmd`: one session
 * per point, as the header describes the point's scenario), with timeout_s
 * per candidate; cmd is borrowed, NULL: none. The command is in the
 * points' keys, so its rows are apart from a sweep's without one. */
void sweep_set_cost_cmd(sweep *s, const char *cmd, double timeout_s);

/* The number of points (the product of the array lengths). */
size_t sweep_count(const sweep *s);

/* Point i (0 <= i < sweep_count) in a fixed order: the keys of sweep.c's
 * table in its order, the first (scenarios) varying slowest. */
void sweep_point_at(const sweep *s, size_t i, sweep_point *p);

/* The name of sweep key i in a file ("scenario", "layers", ...), in the
 * table's order (sweep_point_at's and the point key's); NULL once i is
 * past the last: the one list of them, for help and messages. A key is
 * named as the results column it fills. */
const char *sweep_key_name(size_t i);

/* The former name of key i, still accepted ("scenarios" for "scenario",
 * "networks" for "network_model"), or NULL. Giving both is an error. */
const char *sweep_key_alias(size_t i);

/* The distinct scenario names of the sweep and the line each was given on,
 * so a front end can check them with "NAME:LINE:" errors. */
size_t sweep_scenarios(const sweep *s, const char *const **names);
int sweep_line(const sweep *s, const char *key);  /* 0 when absent; key
                                                     or its alias */
const char *sweep_name(const sweep *s);           /* borrowed */

/* Writes the canonical key of p into buf (always NUL-terminated); returns
 * the length it needs. The keys of sweep.c's table in its order (a stored
 * format: rows in existing databases are found by it), numbers in %.17g,
 * GPU names as models/spec.h spells them, so equal points have equal keys
 * whatever the file's spelling; a key the table marks "only when given"
 * appears only when present (else every key appears, "-" when absent), so
 * rows of sweeps without it keep their keys. A point with faults has their
 * content in its identity. */
size_t sweep_point_key(const sweep_point *p, char *buf, size_t size);

/* The names of a row of `results` beyond the values an evaluation fills
 * (borrowed by the row): its study ("sweep", "validate"), scenario, method,
 * network model, key, identity (NULL: none), scales, and a training run's
 * fault file and recovery policy (NULL: none). */
typedef struct sweep_label {
  const char *study, *scenario, *method, *network_model, *key, *identity;
  double bandwidth_scale, latency_scale;
  const char *faults, *recovery;
} sweep_label;

/* Puts l's names on r: the one builder of a row's names, for sweep points,
 * `geodes run`'s points (analysis/study) and validation samples. */
void sweep_label_row(db_result *r, const sweep_label *l);

/* A point's key and identity, in buffers kept from point to point:
 * zero-initialise it, free key after the last. */
typedef struct sweep_key {
  char *key;
  size_t cap;
  char identity[17];
} sweep_key;

/* The label of point p's row (p resolved: it has its hashes): study
 * "sweep", p's names and scales, its key and identity computed into k. */
sweep_label sweep_point_label(const sweep_point *p, sweep_key *k);

/* Evaluates one point into out (already initialised with db_result_init):
 * the effective workload values, the scores, the times and the allocation.
 * Returns ERR_OK or a negative code with e filled. */
typedef int (*sweep_eval_fn)(void *ctx, const sweep_point *p, db_result *out,
                             err *e);

/* Where a sweep stands, for a progress hook: points stored and failed so
 * far of the todo this run computes, seconds since it started, and whether
 * this is the last call (every point done, or the run stopped). */
typedef struct sweep_progress {
  size_t done, failed, todo;
  double elapsed_s;
  bool last;
  bool checking; /* before the first point: done of todo points looked up
                    in the store (a sweep of millions takes seconds) */
} sweep_progress;

typedef struct sweep_opts {
  sweep_eval_fn eval;
  void *ctx;
  int jobs;              /* worker processes; <= 1: evaluate in-process */
  int64_t run;           /* the `runs` row the results belong to */
  int batch_rows;        /* commit after this many rows (default 64) */
  double batch_seconds;  /* ... or this many seconds (default 1) */
  /* Hooks (NULL: silent), with hook_ctx: progress after every point and
   * once at the end; failed for a point whose evaluation failed (its key
   * and the message; the point is counted, not stored). The sweep itself
   * prints nothing. */
  void (*progress)(void *hook_ctx, const sweep_progress *p);
  void (*failed)(void *hook_ctx, const char *key, const char *msg);
  void *hook_ctx;
  /* When *stop becomes nonzero (a signal handler's flag; NULL: never), no
   * new point starts, points in flight are dropped (workers are ended) and
   * what was stored is committed: the next run resumes from there. */
  volatile sig_atomic_t *stop;
} sweep_opts;

typedef struct sweep_stats {
  size_t total;     /* points in the sweep */
  size_t present;   /* already in the database before this run, current */
  size_t stale;     /* in the database from other inputs (an edited
                       scenario, other built-in data, an older model):
                       recomputed, their rows replaced */
  size_t computed;  /* evaluated and stored by this run */
  size_t failed;    /* evaluation failed (not stored; a re-run retries) */
  double seconds;   /* wall time of the evaluation */
  bool interrupted; /* *stop ended the run before every point was done */
} sweep_stats;

/* Evaluates every point of s (resolved) whose key is not in d, or is there
 * with another identity (stale), and stores each result, committing in
 * batches. A failing point is counted and handed to o->failed; the others
 * go on. Returns ERR_OK, or a database error (or a failed pipe, fork or
 * poll of the --jobs workers: ERR_IO) with e filled. */
int sweep_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
              err *e);

/* --- pieces shared with sweep_mpi.c --- */

/* Indices of the points of s missing from d or stale there, ascending; *n
 * gets their number, *stale how many of them are stale. The caller frees
 * the array. NULL and e on a database error. o (NULL: none) gets progress
 * (checking) every SWEEP_CHECK_EVERY points. */
#define SWEEP_CHECK_EVERY 65536
size_t *sweep_missing(const sweep *s, db *d, const sweep_opts *o, size_t *n,
                      size_t *stale,
                      err *e);

/* The wire form of an evaluation: status, error or result (the fields an
 * evaluator fills: effective knobs, gpu, times, alloc). The buffer is
 * malloc'ed; *len gets its size. */
char *sweep_pack(int status, const err *e, const db_result *r, size_t *len);
/* Decodes a buffer of sweep_pack into status, e and r (r->alloc owned).
 * False if the buffer is malformed. */
bool sweep_unpack(const char *buf, size_t len, int *status, err *e,
                  db_result *r);

/* The writer: stores finished points in batched transactions and reports
 * progress and failures to the hooks of its options. */
typedef struct sweep_writer sweep_writer;
sweep_writer *sweep_writer_new(const sweep *s, db *d, const sweep_opts *o,
                               size_t total, size_t todo);
/* Stores the outcome of point i (status != ERR_OK: hands e to the failed
 * hook, counts a failure). Returns ERR_OK or a database error in
 * err_out. */
int sweep_writer_put(sweep_writer *w, size_t i, int status, const err *e,
                     db_result *r, err *err_out);
/* Commits what is pending: called before anything that waits (an
 * evaluation, a blocking read of a worker's answer), so no transaction is
 * held while a point is computed and another writer of the file (a second
 * sweep, `schedule --db`) never waits for one. Rows arriving back to back
 * still share a transaction, up to batch_rows or batch_seconds. */
int sweep_writer_idle(sweep_writer *w, err *e);
/* Commits what is pending, fills st, frees w; NULL ok. */
int sweep_writer_finish(sweep_writer *w, sweep_stats *st, err *e);

#endif
