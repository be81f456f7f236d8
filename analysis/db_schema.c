/* db_schema: the results store's tables, as a new file gets them, and the
 * migrations that bring an older file there (see db_schema.h). */
#include "analysis/db_schema.h"

#include <assert.h>
#include <stdio.h>

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

/* A column of results as CREATE declares it. */
#define CREATE_COLUMN(f, col, type, sql, absent, since, origin) ", " col " " sql

const char db_schema_sql[] =
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY,"
    " started_at TEXT NOT NULL, finished_at TEXT, status TEXT,"
    " version TEXT, git TEXT, command TEXT, scenario TEXT, seed INTEGER);"
    "CREATE TABLE results("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER REFERENCES runs(id)" DB_RESULT_MAP(CREATE_COLUMN) ");"
    "CREATE INDEX results_by_scenario ON results(scenario, network_model);"
    ITERATIONS_TABLES
    "CREATE TABLE convergence("
    " run_id INTEGER NOT NULL REFERENCES runs(id),"
    " method TEXT NOT NULL,"
    " candidate INTEGER NOT NULL, best_score_s REAL NOT NULL,"
    " PRIMARY KEY(run_id, method, candidate));";




/* The steps that do more than add DB_RESULT_MAP's columns, or that name
 * what they bring: other tables (up after the columns, back before), and
 * the step's description for messages. */
static const struct step {
  int from;
  const char *tables_up, *tables_back, *what;
} STEPS[] = {
    {2, "", "", "results.identity, sockets and runtime"},
    {3, ITERATIONS_TABLES, "DROP TABLE marks; DROP TABLE iterations;",
     "a training run's columns, the iterations and marks tables"},
    {4, "", "", "utilisation, bytes and DiLoCo's columns"},
    {5, "", "", "results.cost_cmd_s, a user's cost model's prediction"},
    {7, "", "", "results.shaping, the network's shaping (tc or path)"},
    {8, "", "", "results.zero and optimizer_s, the runtime's ZeRO stage and "
                "optimizer step"},
    {9, "", "", "the bill's columns (usd .. gco2)"},
};
#define NSTEPS (sizeof STEPS / sizeof *STEPS)

#define SINCE_TOO_NEW_(f, col, type, sql, absent, since, origin) \
  || (since) > DB_SCHEMA_VERSION || (since) < 1
_Static_assert(!(0 DB_RESULT_MAP(SINCE_TOO_NEW_)),
               "every column's version is one this build writes");

/* STEPS's entry for the step from version from, or NULL. */
static const struct step *step_of(int from) {
  for (size_t k = 0; k < NSTEPS; k++)
    if (STEPS[k].from == from) return &STEPS[k];
  return NULL;
}

const char *db_schema_step_what(int from) {
  const struct step *st = step_of(from);
  return st ? st->what : "new columns of results";
}

/* results' columns with their schema version, in the table's order. */
static const struct column {
  const char *name, *sql;
  int since;
} COLUMNS[] = {
#define COLUMN_(f, col, type, sql, absent, since, origin) {col, sql, since},
    DB_RESULT_MAP(COLUMN_)
#undef COLUMN_
};
#define NCOLUMNS (sizeof COLUMNS / sizeof *COLUMNS)

/* snprintf at buf + *at, asserting that it fits. */
static void append(char *buf, size_t size, size_t *at, const char *a,
                   const char *b, const char *c) {
  int n = snprintf(buf + *at, size - *at, "%s%s%s", a, b, c);
  assert(n >= 0 && (size_t)n < size - *at && "the step's SQL fits");
  *at += (size_t)n;
}

void db_schema_step(int from, bool up, char *buf, size_t size) {
  assert(from >= DB_SCHEMA_MIGRATES && from < DB_SCHEMA_VERSION);
  const struct step *st = step_of(from);
  size_t at = 0;
  buf[0] = '\0';
  if (!up && st) append(buf, size, &at, st->tables_back, "", "");
  for (size_t k = 0; k < NCOLUMNS; k++) {
    /* columns after the oldest schema's arrive in version order, so ALTER
     * TABLE's order is the table's (back drops them newest first) */
    assert(k == 0 || COLUMNS[k].since <= DB_SCHEMA_MIGRATES ||
           COLUMNS[k - 1].since <= COLUMNS[k].since);
    const struct column *c = &COLUMNS[up ? k : NCOLUMNS - 1 - k];
    if (c->since != from + 1) continue;
    if (up)
      append(buf, size, &at, "ALTER TABLE results ADD COLUMN ", c->name, " ");
    else
      append(buf, size, &at, "ALTER TABLE results DROP COLUMN ", c->name, "");
    append(buf, size, &at, up ? c->sql : "", ";", "");
  }
  if (up && st) append(buf, size, &at, st->tables_up, "", "");
  assert(at > 0 && "every version's step changes something");
}
