/* db: the SQLite results store of DESIGN.md section 7 — `runs` (one row per
 * invocation, with provenance), `results` (one row per simulated point, UNIQUE
 * on the point's canonical key) and `convergence` (a scheduler's best score
 * per candidate, keyed by run, method and candidate, so several searches of
 * one run coexist). One writer per process; WAL, so readers (plots) never
 * block it and a killed writer loses nothing committed. */
#ifndef ANALYSIS_DB_H
#define ANALYSIS_DB_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
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
 * sweep --cost-cmd); version 7 the transport that ran (transport_describe:
 * NCCL's sockets to a peer for point-to-point and collective traffic,
 * least and most over the run's sites, and the idle restart); version 8
 * results.shaping (the network's: tc or path); version 9 results.zero
 * (the ZeRO stage) and optimizer_s (the runtime's longest optimizer step
 * of a device, models/runtime.h); version 10 the bill of the run (usd,
 * usd_per_hour, usd_per_1k_samples, egress_usd, lost_usd, kwh, gco2: NULL
 * where not priced). Files from DB_SCHEMA_MIGRATES on are migrated step by
 * step (a version-2 file's rows, with no identity, are stale: a sweep
 * recomputes them; later versions' rows stay current); a version-1 file is
 * refused, never modified: its keys lack the GPU. */
#define DB_SCHEMA_VERSION 10
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

/* The columns of `results` after id and run_id, declared once: to add a
 * column, add a row here (last, with the next schema version: ALTER TABLE
 * puts a new column last) and a field is in db_result, its default in
 * db_result_init, its column in CREATE, in the migration of its version and
 * in db_result_put's bind loop, and (EVAL) on sweep_pack's wire. A row is
 *   X(field, column, type, sql, absent, since, origin)
 * field: db_result's member; column: its name in the table; type: REF (a
 * borrowed string), OWNED (a malloc'ed one), CHARS16/24/48 (a fixed
 * buffer, "" stored as NULL), INT (int64_t, < 0 stored as NULL) or REAL
 * (double, NAN stored as NULL); sql: the column's declaration; absent: the
 * value db_result_init gives; since: the schema version that added it;
 * origin: EVAL (an evaluation fills it, so it crosses the --jobs wire),
 * KNOB (as EVAL, and the evaluation copies it from the scenario_workload
 * field of the same name: the knob's effective value), DILOCO (as KNOB,
 * for a DiLoCo run only) or LABEL (sweep_label_row puts it on, from the
 * point).
 * gpu is the GPU type simulated: one name ("A100") when every site has it,
 * else the distinct names in site order joined by commas ("V100,A100");
 * "mixed" only if that overflows. sockets is every site's nccl_sockets, -1
 * when they differ. window_bytes is, under tcp, the least per-socket TCP
 * window of the run's connections (transport_describe's window_min over
 * every ordered site pair: --window-bytes when the run sets one, else
 * each connection's own from its link's keys and its sites'
 * tcp_window_bytes), NULL under netem and ideal; shaping is the
 * network's ("tc" or "path"). A training run's columns (iterations .. lost_s) are
 * NULL for a single iteration's row; DiLoCo's outer_step_s and knobs
 * (inner_steps .. overlap_steps) NULL when not DiLoCo; cost_cmd_s is a user's
 * cost model's prediction of the point (sweep --cost-cmd); optimizer_s
 * the longest optimizer step of a device under the point's runtime
 * (runtime_step_max_s). The bill's columns (usd .. gco2) are the run's,
 * one iteration's or a training run's whole, each NULL unless every part
 * of it is priced (models/bill.h). */
#define DB_RESULT_MAP(X)                                                    \
  X(key, "point_key", REF, "TEXT NOT NULL UNIQUE", NULL, 1, LABEL)          \
  X(study, "study", REF, "TEXT NOT NULL", NULL, 1, LABEL)                   \
  X(scenario, "scenario", REF, "TEXT NOT NULL", NULL, 1, LABEL)             \
  X(method, "method", REF, "TEXT NOT NULL", NULL, 1, LABEL)                 \
  X(network_model, "network_model", REF, "TEXT NOT NULL", NULL, 1, LABEL)   \
  X(seed, "seed", INT, "INTEGER", -1, 1, EVAL)                              \
  X(layers, "layers", INT, "INTEGER", -1, 1, KNOB)                          \
  X(batch, "batch", INT, "INTEGER", -1, 1, KNOB)                            \
  X(micro_batch, "micro_batch", INT, "INTEGER", -1, 1, KNOB)                \
  X(micro_batches_per_pass, "micro_batches_per_pass", INT, "INTEGER", -1,   \
    1, KNOB)                                                                \
  X(window_bytes, "window_bytes", INT, "INTEGER", -1, 1, EVAL)              \
  X(schedule, "schedule", CHARS16, "TEXT", "", 1, EVAL)                     \
  X(dp_algo, "dp_algo", CHARS24, "TEXT", "", 1, EVAL)                       \
  X(gpu, "gpu", CHARS48, "TEXT", "", 2, EVAL)                               \
  X(bandwidth_scale, "bandwidth_scale", REAL, "REAL", 1, 1, LABEL)          \
  X(latency_scale, "latency_scale", REAL, "REAL", 1, 1, LABEL)              \
  X(activation_gb, "activation_gb", REAL, "REAL", NAN, 1, EVAL)             \
  X(gradient_gb, "gradient_gb", REAL, "REAL", NAN, 1, EVAL)                 \
  X(alloc, "alloc", OWNED, "TEXT", NULL, 1, EVAL)                           \
  X(score_s, "score_s", REAL, "REAL", NAN, 1, EVAL)                         \
  X(dp_cost_s, "dp_cost_s", REAL, "REAL", NAN, 1, EVAL)                     \
  X(pp_cost_s, "pp_cost_s", REAL, "REAL", NAN, 1, EVAL)                     \
  X(predicted_iteration_s, "predicted_iteration_s", REAL, "REAL", NAN, 1,   \
    EVAL)                                                                   \
  X(iteration_s, "iteration_s", REAL, "REAL", NAN, 1, EVAL)                 \
  X(compute_s, "compute_s", REAL, "REAL", NAN, 1, EVAL)                     \
  X(bubble_s, "bubble_s", REAL, "REAL", NAN, 1, EVAL)                       \
  X(comm_s, "comm_s", REAL, "REAL", NAN, 1, EVAL)                           \
  X(dp_sync_s, "dp_sync_s", REAL, "REAL", NAN, 1, EVAL)                     \
  X(events, "events", INT, "INTEGER", -1, 1, EVAL)                          \
  X(identity, "identity", REF, "TEXT", NULL, 3, LABEL)                      \
  X(sockets, "sockets", INT, "INTEGER", -1, 3, EVAL)                        \
  X(runtime, "runtime", CHARS16, "TEXT", "", 3, EVAL)                       \
  X(iterations, "iterations", INT, "INTEGER", -1, 4, EVAL)                  \
  X(faults, "faults", REF, "TEXT", NULL, 4, LABEL)                          \
  X(recovery, "recovery", REF, "TEXT", NULL, 4, LABEL)                      \
  X(checkpoint_every, "checkpoint_every", INT, "INTEGER", -1, 4, EVAL)      \
  X(total_s, "total_s", REAL, "REAL", NAN, 4, EVAL)                         \
  X(samples_per_s, "samples_per_s", REAL, "REAL", NAN, 4, EVAL)             \
  X(lost_s, "lost_s", REAL, "REAL", NAN, 4, EVAL)                           \
  X(compute_utilisation, "compute_utilisation", REAL, "REAL", NAN, 5, EVAL) \
  X(pp_bytes, "pp_bytes", REAL, "REAL", NAN, 5, EVAL)                       \
  X(dp_bytes, "dp_bytes", REAL, "REAL", NAN, 5, EVAL)                       \
  X(wan_bytes, "wan_bytes", REAL, "REAL", NAN, 5, EVAL)                     \
  X(outer_step_s, "outer_step_s", REAL, "REAL", NAN, 5, EVAL)               \
  X(inner_steps, "inner_steps", INT, "INTEGER", -1, 5, DILOCO)              \
  X(fragments, "fragments", INT, "INTEGER", -1, 5, DILOCO)                  \
  X(overlap_steps, "overlap_steps", INT, "INTEGER", -1, 5, DILOCO)          \
  X(grad_bits, "grad_bits", INT, "INTEGER", -1, 5, KNOB)                    \
  X(activation_bits, "activation_bits", INT, "INTEGER", -1, 5, KNOB)        \
  X(cost_cmd_s, "cost_cmd_s", REAL, "REAL", NAN, 6, EVAL)                   \
  X(p2p_sockets_min, "p2p_sockets_min", INT, "INTEGER", -1, 7, EVAL)        \
  X(p2p_sockets_max, "p2p_sockets_max", INT, "INTEGER", -1, 7, EVAL)        \
  X(collective_sockets_min, "collective_sockets_min", INT, "INTEGER", -1, 7, \
    EVAL)                                                                   \
  X(collective_sockets_max, "collective_sockets_max", INT, "INTEGER", -1, 7, \
    EVAL)                                                                   \
  X(idle_restart, "idle_restart", INT, "INTEGER", -1, 7, EVAL)              \
  X(shaping, "shaping", CHARS16, "TEXT", "", 8, EVAL)                       \
  X(zero, "zero", INT, "INTEGER", -1, 9, KNOB)                              \
  X(optimizer_s, "optimizer_s", REAL, "REAL", NAN, 9, EVAL)                \
  X(usd, "usd", REAL, "REAL", NAN, 10, EVAL)                                \
  X(usd_per_hour, "usd_per_hour", REAL, "REAL", NAN, 10, EVAL)              \
  X(usd_per_1k_samples, "usd_per_1k_samples", REAL, "REAL", NAN, 10, EVAL)  \
  X(egress_usd, "egress_usd", REAL, "REAL", NAN, 10, EVAL)                  \
  X(lost_usd, "lost_usd", REAL, "REAL", NAN, 10, EVAL)                      \
  X(kwh, "kwh", REAL, "REAL", NAN, 10, EVAL)                                \
  X(gco2, "gco2", REAL, "REAL", NAN, 10, EVAL)

/* The C type of each kind of column. */
#define DB_FIELD_REF(f) const char *f
#define DB_FIELD_OWNED(f) char *f
#define DB_FIELD_CHARS16(f) char f[16]
#define DB_FIELD_CHARS24(f) char f[24]
#define DB_FIELD_CHARS48(f) char f[48]
#define DB_FIELD_INT(f) int64_t f
#define DB_FIELD_REAL(f) double f

/* The number of DB_RESULT_MAP's columns. */
#define DB_RESULT_ONE_(f, col, type, sql, absent, since, origin) +1
enum { DB_RESULT_NFIELDS = 0 DB_RESULT_MAP(DB_RESULT_ONE_) };

/* One row of `results`: DB_RESULT_MAP's fields (absent values are stored
 * as NULL), then a training run's iterations and marks (owned), stored in
 * their tables. Strings of kind REF are borrowed; alloc is owned
 * (db_result_clear frees it). */
typedef struct db_result {
#define DB_FIELD_(f, col, type, sql, absent, since, origin) DB_FIELD_##type(f);
  DB_RESULT_MAP(DB_FIELD_)
#undef DB_FIELD_
  db_iteration *it;
  size_t nit;
  db_mark *marks;
  size_t nmarks;
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
