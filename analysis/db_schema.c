/* db_schema: the results store's tables, as a new file gets them, and the
 * migrations that bring an older file there (see db_schema.h). */
#include "analysis/db_schema.h"

#include "analysis/db.h"

/* The tables of version 4 beside results: iterations (its lost_*_s
 * columns one per cause of sim/training.h, in SIM_LOST_MAP's order) and
 * marks. */
#define ITERATIONS_TABLES                                                   \
  "CREATE TABLE iterations("                                                \
  " result_id INTEGER NOT NULL REFERENCES results(id),"                     \
  " idx INTEGER NOT NULL, start_s REAL NOT NULL, iteration_s REAL NOT NULL," \
  " lost_s REAL NOT NULL, lost_redone_s REAL, lost_checkpoint_s REAL,"      \
  " lost_waiting_s REAL, lost_reloading_s REAL, lost_migration_s REAL,"     \
  " replicas INTEGER, samples REAL, PRIMARY KEY(result_id, idx));"          \
  "CREATE TABLE marks("                                                     \
  " result_id INTEGER NOT NULL REFERENCES results(id),"                     \
  " t_s REAL NOT NULL, kind TEXT NOT NULL, what TEXT);"                     \
  "CREATE INDEX marks_by_result ON marks(result_id, t_s);"

const char db_schema_sql[] =
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY,"
    " started_at TEXT NOT NULL, finished_at TEXT, status TEXT,"
    " version TEXT, git TEXT, command TEXT, scenario TEXT, seed INTEGER);"
    "CREATE TABLE results("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER REFERENCES runs(id),"
    " point_key TEXT NOT NULL UNIQUE,"
    " study TEXT NOT NULL, scenario TEXT NOT NULL, method TEXT NOT NULL,"
    " network_model TEXT NOT NULL, seed INTEGER,"
    " layers INTEGER, batch INTEGER, micro_batch INTEGER,"
    " micro_batches_per_pass INTEGER, window_bytes INTEGER,"
    " schedule TEXT, dp_algo TEXT, gpu TEXT,"
    " bandwidth_scale REAL, latency_scale REAL,"
    " activation_gb REAL, gradient_gb REAL, alloc TEXT,"
    " score_s REAL, dp_cost_s REAL, pp_cost_s REAL,"
    " predicted_iteration_s REAL, iteration_s REAL,"
    " compute_s REAL, bubble_s REAL, comm_s REAL, dp_sync_s REAL,"
    " events INTEGER, identity TEXT, sockets INTEGER, runtime TEXT,"
    " iterations INTEGER, faults TEXT, recovery TEXT, checkpoint_every INTEGER,"
    " total_s REAL, samples_per_s REAL, lost_s REAL, compute_utilisation REAL,"
    " pp_bytes REAL, dp_bytes REAL, wan_bytes REAL, outer_step_s REAL,"
    " inner_steps INTEGER, fragments INTEGER, overlap_steps INTEGER,"
    " grad_bits INTEGER, activation_bits INTEGER, cost_cmd_s REAL);"
    "CREATE INDEX results_by_scenario ON results(scenario, network_model);"
    ITERATIONS_TABLES
    "CREATE TABLE convergence("
    " run_id INTEGER NOT NULL REFERENCES runs(id),"
    " method TEXT NOT NULL,"
    " candidate INTEGER NOT NULL, best_score_s REAL NOT NULL,"
    " PRIMARY KEY(run_id, method, candidate));";




const db_migration db_migrations[] = {
    {2,
     "ALTER TABLE results ADD COLUMN identity TEXT;"
     "ALTER TABLE results ADD COLUMN sockets INTEGER;"
     "ALTER TABLE results ADD COLUMN runtime TEXT",
     "ALTER TABLE results DROP COLUMN runtime;"
     "ALTER TABLE results DROP COLUMN sockets;"
     "ALTER TABLE results DROP COLUMN identity",
     "results.identity, sockets and runtime"},
    {3,
     "ALTER TABLE results ADD COLUMN iterations INTEGER;"
     "ALTER TABLE results ADD COLUMN faults TEXT;"
     "ALTER TABLE results ADD COLUMN recovery TEXT;"
     "ALTER TABLE results ADD COLUMN checkpoint_every INTEGER;"
     "ALTER TABLE results ADD COLUMN total_s REAL;"
     "ALTER TABLE results ADD COLUMN samples_per_s REAL;"
     "ALTER TABLE results ADD COLUMN lost_s REAL;" ITERATIONS_TABLES,
     "DROP TABLE marks; DROP TABLE iterations;"
     "ALTER TABLE results DROP COLUMN lost_s;"
     "ALTER TABLE results DROP COLUMN samples_per_s;"
     "ALTER TABLE results DROP COLUMN total_s;"
     "ALTER TABLE results DROP COLUMN checkpoint_every;"
     "ALTER TABLE results DROP COLUMN recovery;"
     "ALTER TABLE results DROP COLUMN faults;"
     "ALTER TABLE results DROP COLUMN iterations",
     "a training run's columns, the iterations and marks tables"},
#define ADD_ "ALTER TABLE results ADD COLUMN "
    {4, /* issue 12 */
     ADD_ "compute_utilisation REAL;" ADD_ "pp_bytes REAL;" ADD_
     "dp_bytes REAL;" ADD_ "wan_bytes REAL;" ADD_ "outer_step_s REAL;" ADD_
     "inner_steps INTEGER;" ADD_ "fragments INTEGER;" ADD_
     "overlap_steps INTEGER;" ADD_ "grad_bits INTEGER;" ADD_
     "activation_bits INTEGER",
#define DROP_ "ALTER TABLE results DROP COLUMN "
     DROP_ "activation_bits;" DROP_ "grad_bits;" DROP_ "overlap_steps;" DROP_
     "fragments;" DROP_ "inner_steps;" DROP_ "outer_step_s;" DROP_
     "wan_bytes;" DROP_ "dp_bytes;" DROP_ "pp_bytes;" DROP_
     "compute_utilisation", "utilisation, bytes and DiLoCo's columns"},
    {5, "ALTER TABLE results ADD COLUMN cost_cmd_s REAL",
     "ALTER TABLE results DROP COLUMN cost_cmd_s",
     "results.cost_cmd_s, a user's cost model's prediction"},
};
#define NMIGRATIONS (sizeof db_migrations / sizeof *db_migrations)
const size_t db_nmigrations = NMIGRATIONS;
_Static_assert(DB_SCHEMA_MIGRATES + NMIGRATIONS == DB_SCHEMA_VERSION,
               "one migration a version from DB_SCHEMA_MIGRATES on");
