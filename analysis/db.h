/* db: the SQLite results store of DESIGN.md section 7 — `runs` (one row per
 * invocation, with provenance), `results` (one row per simulated point, UNIQUE
 * on the point's canonical key) and `convergence` (a scheduler's best score
 * per candidate, keyed by run, method and candidate, so several searches of
 * one run coexist). One writer per process; WAL, so readers (plots) never
 * block it and a killed writer loses nothing committed. */
#ifndef ANALYSIS_DB_H
#define ANALYSIS_DB_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* The schema this build reads and writes (PRAGMA user_version), and the
 * PRAGMA application_id that marks a file as geodes's ("geod"). Version 2
 * added results.gpu (and the gpu in point keys) and convergence.method;
 * version 3 results.identity (what a sweep row was computed from, beyond its
 * key: sweep_point_identity), results.sockets and runtime (and both in the
 * point keys), with the transport of NCCL sockets; version 4 a training
 * run's columns of results (iterations, faults, recovery,
 * checkpoint_every, total_s, samples_per_s, lost_s) and the tables
 * iterations (one row per kept iteration) and marks (faults and trace
 * changes during a run); version 5 results.compute_utilisation, pp_bytes,
 * dp_bytes, wan_bytes, outer_step_s and DiLoCo's knobs and widths (and
 * samples_per_s for a single iteration's row too); version 6
 * results.cost_cmd_s (a user's cost model's prediction of the point:
 * sweep --cost-cmd). Files from DB_SCHEMA_MIGRATES on are migrated step by
 * step (a version-2 file's rows, with no identity, are stale: a sweep
 * recomputes them; later versions' rows stay current); a version-1 file is
 * refused, never modified: its keys lack the GPU. */
#define DB_SCHEMA_VERSION 6
#define DB_SCHEMA_MIGRATES 2
#define DB_APPLICATION_ID 0x67656f64

typedef struct db db;

/* Provenance of one invocation: a row of `runs`. Strings are borrowed. */
typedef struct db_run {
  const char *command;   /* the command line, space-joined */
  const char *scenario;  /* may be NULL (a sweep over several) */
  int64_t seed;          /* < 0: none */
  const char *version;   /* geodes version */
  const char *git;       /* git revision the binary was built from */
} db_run;

/* One row of `iterations`: a kept iteration of a training run. */
#define DB_LOST_N 5 /* causes of lost time: sim/training.h's SIM_LOST_N */
typedef struct db_iteration {
  int64_t index, replicas;
  double start_s, iteration_s, lost_s, samples;
  double lost_by[DB_LOST_N]; /* redone, checkpoint, waiting, reloading,
                                migration (SIM_LOST_MAP's order) */
} db_iteration;

/* One row of `marks`: an instant of a run worth showing (a fault's start,
 * a change of the network trace). */
typedef struct db_mark {
  double t_s;
  char kind[16];  /* a fault event name, or "trace" */
  char what[64];  /* its target ("12", "Tokyo:Seoul"), or "" */
} db_mark;

/* One row of `results`. Integers < 0, NAN doubles and "" are stored as NULL.
 * key, study, scenario, method and network_model are borrowed; alloc is
 * owned (db_result_clear frees it). gpu is the GPU type simulated: one
 * name ("A100") when every site has it, else the distinct names in site
 * order joined by commas ("V100,A100"); "mixed" only if that overflows. */
typedef struct db_result {
  const char *key;            /* canonical point key: UNIQUE */
  const char *study;          /* "sweep", "validate", "run" */
  const char *scenario, *method, *network_model;
  int64_t seed, layers, batch, micro_batch, micro_batches_per_pass;
  int64_t window_bytes;
  char schedule[16], dp_algo[24];  /* "gpipe", "central-ps", ... or "" */
  char gpu[48];                    /* "V100", "V100,A100", ... or "" */
  double bandwidth_scale, latency_scale, activation_gb, gradient_gb;
  char *alloc;                /* {"pipelines": ...} JSON, or NULL */
  double score_s, dp_cost_s, pp_cost_s, predicted_iteration_s;
  double iteration_s, compute_s, bubble_s, comm_s, dp_sync_s;
  int64_t events;
  int64_t sockets;            /* every site's nccl_sockets; -1: mixed */
  char runtime[16];           /* "dtfm", "megatron" or "" */
  const char *identity;       /* borrowed: sweep_point_identity, or NULL */
  /* A training run (NULL / -1 / NAN for a single iteration's row):
   * iterations kept, the fault trace and recovery (borrowed), the
   * checkpoint period, the run's length, goodput and time lost; its
   * iterations and marks (owned), stored in their tables. */
  int64_t iterations, checkpoint_every;
  const char *faults, *recovery;
  double total_s, samples_per_s, lost_s;
  db_iteration *it;
  size_t nit;
  db_mark *marks;
  size_t nmarks;
  /* schema 5: the simulation's utilisation (compute busy over
   * wall, all devices), bytes per iteration (pipeline, data-parallel,
   * between sites), DiLoCo's outer step (NAN otherwise) and the knobs
   * (-1: not DiLoCo). */
  double compute_utilisation, pp_bytes, dp_bytes, wan_bytes, outer_step_s;
  int64_t inner_steps, fragments, overlap_steps, grad_bits, activation_bits;
  double cost_cmd_s; /* schema 6: a user's cost model's prediction of the
                        point (sweep --cost-cmd), NAN: none */
} db_result;

/* Sets every field of r to "absent" (NULL, -1 or NAN; scales 1). */
void db_result_init(db_result *r);
/* Frees r->alloc, r->it and r->marks and re-initialises r. */
void db_result_clear(db_result *r);

/* Opens or creates the store at path. A file that is not a SQLite database,
 * fails quick_check, is read-only, or holds another schema (another version
 * of this one, or tables other than this version's) is refused with ERR_DB,
 * untouched. Several processes may open one new file at once: one creates
 * the schema, the others find it. NULL and e filled on failure. */
db *db_open(const char *path, err *e);

/* Closes d (committing nothing still open: call db_commit first); NULL ok. */
void db_close(db *d);

/* The path d was opened with (borrowed). */
const char *db_path(const db *d);

/* Inserts a `runs` row stamped with the current UTC time; returns its id
 * (> 0), or a negative error code with e filled. */
int64_t db_run_begin(db *d, const db_run *r, err *e);

/* Stamps run id as finished with the given status text ("ok", "error"). */
int db_run_end(db *d, int64_t run, const char *status, err *e);

/* Transactions around a batch of writes (a sweep commits every batch, so a
 * kill loses at most the batch in progress). */
int db_begin(db *d, err *e);
int db_commit(db *d, err *e);

/* Inserts r under run id unless a row with r->key exists; that row is
 * replaced when r has an identity and the row another or none (it is
 * stale). With the row go r's iterations and marks (replacing the old
 * row's). Returns 1 when a row was inserted or replaced, 0 when it was
 * already there, < 0 on error. */
int db_result_put(db *d, int64_t run, const db_result *r, err *e);

/* Whether a row with this key exists: DB_RESULT_ABSENT, DB_RESULT_CURRENT
 * (with this identity, or any when identity is NULL) or DB_RESULT_STALE
 * (another identity, or none); < 0 on error. */
enum { DB_RESULT_ABSENT = 0, DB_RESULT_CURRENT = 1, DB_RESULT_STALE = 2 };
int db_result_has(db *d, const char *key, const char *identity, err *e);

/* Number of rows of `results`, or < 0 on error. */
int64_t db_result_count(db *d, err *e);

/* Records that after `candidate` candidates of method's search (a borrowed
 * name, e.g. "gcma") the best score was best_s; a second put of the same
 * (run, method, candidate) replaces the first. */
int db_convergence_put(db *d, int64_t run, const char *method,
                       int64_t candidate, double best_s, err *e);

#endif
