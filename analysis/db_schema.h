/* db_schema: the results store's schema (private to analysis/db.c).
 * Invariant: db_schema_sql creates version DB_SCHEMA_VERSION's tables, and
 * db_schema_step has one step per version from DB_SCHEMA_MIGRATES on, each
 * with its way back: a column's step is its `since` in DB_RESULT_MAP (a
 * static assert keeps every since within DB_SCHEMA_VERSION).
 * circle: internal header of analysis/db.c (and db_schema.c): the schema is
 * written from db.h's DB_RESULT_MAP, so it includes db.h and db.c includes
 * it. */
#ifndef ANALYSIS_DB_SCHEMA_H
#define ANALYSIS_DB_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/db.h"

/* The tables, indexes and pragmas of a new file, as one SQL text. */
extern const char db_schema_sql[];

/* The columns of results that db_result_put writes, in its bind order:
 * run_id, then DB_RESULT_MAP's; and their number. */
#define DB_RESULT_COLUMN_(f, col, type, sql, absent, since, origin) ", " col
#define DB_RESULT_COLUMNS "run_id" DB_RESULT_MAP(DB_RESULT_COLUMN_)
enum { DB_RESULT_NCOLUMNS = 1 + DB_RESULT_NFIELDS };

/* The migrations, one step per version from DB_SCHEMA_MIGRATES on: the
 * step from version `from` (DB_SCHEMA_MIGRATES <= from < DB_SCHEMA_VERSION)
 * makes from + 1 by its up SQL, and its back SQL undoes it on a copy of
 * db_schema_sql, so that db_schema_sql with the backs of every step above
 * a version applied is that version's schema (for db.c's check_tables). A
 * step adds the columns of DB_RESULT_MAP whose since is from + 1 (last in
 * the table, as ALTER TABLE puts them, so a migrated file and a new one
 * have the same columns), and runs db_schema.c's SQL for other tables of
 * that version (after the columns; back: before they are dropped). The
 * SQL goes into buf (NUL-terminated); asserts that it fits. */
void db_schema_step(int from, bool up, char *buf, size_t size);

/* What the step from version `from` brings, for messages. */
const char *db_schema_step_what(int from);

#endif
