/* db_schema: the results store's schema (private to analysis/db.c).
 * Invariant: db_schema_sql creates version DB_SCHEMA_VERSION's tables, and
 * db_migrations holds one step per version from DB_SCHEMA_MIGRATES on, in
 * order, each with its way back (a static assert counts them). */
#ifndef ANALYSIS_DB_SCHEMA_H
#define ANALYSIS_DB_SCHEMA_H

#include <stddef.h>

/* The tables, indexes and pragmas of a new file, as one SQL text. */
extern const char db_schema_sql[];

/* The columns of results that db_result_put writes, in its bind order. */
#define DB_RESULT_COLUMNS                                                    \
  "run_id, point_key, study, scenario, method, network_model, seed, layers," \
  " batch, micro_batch, micro_batches_per_pass, window_bytes, schedule,"     \
  " dp_algo, gpu, bandwidth_scale, latency_scale, activation_gb,"           \
  " gradient_gb, alloc, score_s, dp_cost_s, pp_cost_s,"                     \
  " predicted_iteration_s, iteration_s, compute_s, bubble_s, comm_s,"       \
  " dp_sync_s, events, identity, sockets, runtime, iterations, faults,"    \
  " recovery, checkpoint_every, total_s, samples_per_s, lost_s,"          \
  " compute_utilisation, pp_bytes, dp_bytes, wan_bytes, outer_step_s,"     \
  " inner_steps, fragments, overlap_steps, grad_bits, activation_bits,"   \
  " cost_cmd_s"
#define DB_RESULT_NCOLUMNS 51

/* The migrations, one step each: version `from` becomes from + 1 by up;
 * back undoes it on a copy of db_schema_sql, so that db_schema_sql with the
 * backs of every step above a version applied is that version's schema (for
 * db.c's check_tables). Added columns go last in their table, as ALTER TABLE
 * puts them, so a migrated file and a new one have the same columns. */
typedef struct db_migration {
  int from;
  const char *up, *back, *what;
} db_migration;
extern const db_migration db_migrations[];
extern const size_t db_nmigrations;

#endif
