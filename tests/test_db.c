/* test_db: the results store — rows survive a reopen, a point key is stored
 * once, absent values become NULL, the GPU label is a column, convergence
 * rows of two methods of one run coexist, and a foreign, corrupt, damaged
 * (quick_check), wrongly tabled, older-schema or other-version file is
 * refused without a byte of it changing; a read-only one is called so. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/db.h"
#include "tests/support.h"

TestSuite(db, .init = support_dir_make, .fini = support_dir_remove);

static void sql(const char *path, const char *stmt) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, stmt, NULL, NULL, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(h));
  sqlite3_close(h);
}

static double sql_real(const char *path, const char *q, int *is_null) {
  sqlite3 *h;
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK, "%s", q);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", q);
  *is_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
  double v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static db_result sample(const char *key, double iteration_s) {
  db_result r;
  db_result_init(&r);
  r.key = key, r.study = "sweep", r.scenario = "worldwide";
  r.method = "gcma", r.network_model = "netem", r.seed = 3, r.layers = 24;
  r.score_s = 58.666, r.iteration_s = iteration_s;
  strcpy(r.gpu, "A100");
  r.alloc = strdup("{\"pipelines\": [[0, 1]]}");
  return r;
}

/* Reads column col of the row of key in the store at path into the
 * column's field of out (the kinds of DB_RESULT_MAP; NULL stays absent). */
static void read_column(sqlite3 *h, const char *key, const char *col,
                        db_result *out) {
  char q[128];
  snprintf(q, sizeof q, "SELECT %s FROM results WHERE point_key = ?", col);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK, "%s", q);
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", q);
  bool null = sqlite3_column_type(st, 0) == SQLITE_NULL;
  const char *text = (const char *)sqlite3_column_text(st, 0);
  static char refs[DB_RESULT_NFIELDS][64];
  int k = 0;
#define TEXT_OF(dst) snprintf(dst, sizeof dst, "%s", text ? text : "")
#define READ_REF(f) (TEXT_OF(refs[k]), out->f = null ? NULL : refs[k])
#define READ_OWNED(f) (out->f = null ? NULL : strdup(text))
#define READ_CHARS16(f) TEXT_OF(out->f)
#define READ_CHARS24(f) TEXT_OF(out->f)
#define READ_CHARS48(f) TEXT_OF(out->f)
#define READ_INT(f) (out->f = null ? -1 : sqlite3_column_int64(st, 0))
#define READ_REAL(f) (out->f = null ? NAN : sqlite3_column_double(st, 0))
#define X(f, c, type, sql, absent, since, origin) \
  if (strcmp(col, c) == 0) READ_##type(f);        \
  k++;
  DB_RESULT_MAP(X)
#undef X
  sqlite3_finalize(st);
}

/* Every column is stored where its name says, with its own value: a row
 * whose columns all differ comes back column by column (a swap of two
 * binds fails here). */
Test(db, every_column_round_trips) {
  const char *path = support_path("cols.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"t", NULL, -1, "0", "x"}, &e);
  db_result r, back;
  db_result_init(&r);
  db_result_init(&back);
  support_result_distinct(&r);
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  db_close(d);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
#define X(f, col, type, sql, absent, since, origin)                  \
  read_column(h, r.key, col, &back);                                  \
  cr_expect(support_result_same(&r, &back, col), "column %s", col);
  DB_RESULT_MAP(X)
#undef X
  sqlite3_close(h);
  db_result_clear(&back);
  db_result_clear(&r);
}

Test(db, store_reopen_and_unique_key) {
  const char *path = support_path("r.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(
      d, &(db_run){"geodes sweep x.json", NULL, -1, "0.1", "abc"}, &e);
  cr_assert_gt(run, 0, "%s", e.msg);
  db_result a = sample("k1", 12.5), b = sample("k1", 99), c = sample("k2", 7);
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(db_result_put(d, run, &a, &e), 1);
  cr_expect_eq(db_result_put(d, run, &b, &e), 0, "a key is stored once");
  cr_expect_eq(db_result_put(d, run, &c, &e), 1);
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(db_convergence_put(d, run, "gcma", 100, 60.5, &e), ERR_OK);
  cr_expect_eq(db_run_end(d, run, "ok", &e), ERR_OK);
  db_close(d);
  db_result_clear(&a), db_result_clear(&b), db_result_clear(&c);
  cr_expect_null(a.alloc);

  d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  cr_expect_eq(db_result_count(d, &e), 2);
  cr_expect_eq(db_result_has(d, "k1", NULL, &e), DB_RESULT_CURRENT);
  cr_expect_eq(db_result_has(d, "k3", NULL, &e), DB_RESULT_ABSENT);
  db_close(d);
  int null;
  cr_expect_float_eq(
      sql_real(path, "SELECT iteration_s FROM results WHERE point_key='k1'",
               &null), 12.5, 0);
  sql_real(path, "SELECT dp_sync_s FROM results WHERE point_key='k1'", &null);
  cr_expect(null, "NAN is stored as NULL");
  sql_real(path, "SELECT batch FROM results WHERE point_key='k1'", &null);
  cr_expect(null, "-1 is stored as NULL");
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results WHERE "
                                     "gpu = 'A100'"),
               2);
  cr_expect_float_eq(
      sql_real(path, "SELECT best_score_s FROM convergence", &null), 60.5, 0);
  sql_real(path, "SELECT finished_at FROM runs", &null);
  cr_expect(!null);
  cr_expect_float_eq(sql_real(path, "PRAGMA user_version", &null),
                     DB_SCHEMA_VERSION, 0);
}

/* db_open must fail with ERR_DB, name the file, and leave it byte-identical
 * with no journal beside it. */
static void expect_refused(const char *path, const char *why) {
  size_t before_len, after_len;
  char *before = support_read_file(path, &before_len);
  err e = {0};
  db *d = db_open(path, &e);
  cr_expect_null(d);
  db_close(d);
  cr_expect_eq(e.code, ERR_DB);
  cr_expect_not_null(strstr(e.msg, path), "message names the file: %s", e.msg);
  cr_expect_not_null(strstr(e.msg, why), "'%s' in: %s", why, e.msg);
  char *after = support_read_file(path, &after_len);
  cr_expect(before_len == after_len && !memcmp(before, after, before_len),
            "the file is untouched");
  char wal[160];
  snprintf(wal, sizeof wal, "%s-wal", path);
  cr_expect_neq(access(wal, F_OK), 0, "no WAL was created");
  free(before), free(after);
}

Test(db, foreign_schema_is_refused) {
  const char *path = support_path("foreign.db");
  sql(path, "CREATE TABLE users(name TEXT); INSERT INTO users VALUES('ann')");
  expect_refused(path, "another application");
}

Test(db, corrupt_file_is_refused) {
  const char *path = support_path("corrupt.db");
  FILE *f = fopen(path, "wb");
  for (int i = 0; i < 4096; i++) fputc("geodes results?"[i % 15], f);
  fclose(f);
  expect_refused(path, "not a readable SQLite database");
}

Test(db, other_schema_version_is_refused) {
  const char *path = support_path("old.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  db_close(d);
  sql(path, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99");
  expect_refused(path, "schema version 99");
}

/* Two searches of one run (as `geodes run` does greedy and gcma) keep their
 * own curves; a repeated (run, method, candidate) replaces its value. */
Test(db, convergence_of_two_methods_coexists) {
  const char *path = support_path("conv.db");
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"geodes run", "w", 1, "0", "x"}, &e);
  cr_assert_gt(run, 0, "%s", e.msg);
  for (int c = 1; c <= 30; c++) {
    cr_assert_eq(db_convergence_put(d, run, "greedy", c, 90.0 - c, &e), ERR_OK,
                 "%s", e.msg);
    cr_assert_eq(db_convergence_put(d, run, "gcma", c, 80.0 - c, &e), ERR_OK,
                 "%s", e.msg);
  }
  cr_assert_eq(db_convergence_put(d, run, "gcma", 30, 1.5, &e), ERR_OK);
  db_close(d);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM convergence"), 60);
  cr_expect_eq(support_sql_int(path, "SELECT count(DISTINCT method) FROM "
                                     "convergence WHERE run_id = 1"),
               2);
  int null;
  cr_expect_float_eq(
      sql_real(path, "SELECT best_score_s FROM convergence WHERE method = "
                     "'greedy' AND candidate = 30", &null), 60.0, 0);
  cr_expect_float_eq(
      sql_real(path, "SELECT best_score_s FROM convergence WHERE method = "
                     "'gcma' AND candidate = 30", &null), 1.5, 0);
}

/* The schema of version 1 (before results.gpu and convergence.method),
 * as a geodes of that version created it, with one row. */
static const char SCHEMA_V1[] =
    "PRAGMA application_id = 1734700900; PRAGMA user_version = 1;"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT NOT NULL,"
    " finished_at TEXT, status TEXT, version TEXT, git TEXT, command TEXT,"
    " scenario TEXT, seed INTEGER);"
    "CREATE TABLE results(id INTEGER PRIMARY KEY, run_id INTEGER,"
    " point_key TEXT NOT NULL UNIQUE, study TEXT NOT NULL,"
    " scenario TEXT NOT NULL, method TEXT NOT NULL,"
    " network_model TEXT NOT NULL, seed INTEGER, iteration_s REAL);"
    "CREATE TABLE convergence(run_id INTEGER NOT NULL,"
    " candidate INTEGER NOT NULL, best_score_s REAL NOT NULL,"
    " PRIMARY KEY(run_id, candidate));"
    "INSERT INTO runs(started_at) VALUES('2024-01-01');"
    "INSERT INTO results(run_id, point_key, study, scenario, method,"
    " network_model, iteration_s) VALUES(1, 'sweep scenario=worldwide', "
    "'sweep', 'worldwide', 'gcma', 'netem', 9.5);"
    "INSERT INTO convergence VALUES(1, 1, 70.0);";

Test(db, older_schema_is_refused_untouched) {
  cr_assert_eq(DB_APPLICATION_ID, 1734700900);
  const char *path = support_path("v1.db");
  sql(path, SCHEMA_V1);
  expect_refused(path, "schema version 1, written by an older geodes");
  err e = {0};
  cr_expect_null(db_open(path, &e));
  char want[64];
  snprintf(want, sizeof want, "reads version %d (and migrates %d on",
           DB_SCHEMA_VERSION, DB_SCHEMA_MIGRATES);
  cr_expect_not_null(strstr(e.msg, want), "%s", e.msg);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results"), 1);
}

Test(db, missing_folder_is_an_error) {
  err e = {0};
  cr_expect_null(db_open("/nonexistent/folder/x.db", &e));
  cr_expect_eq(e.code, ERR_DB);
  cr_expect_not_null(strstr(e.msg, "/nonexistent/folder/x.db"));
}

/* --db naming a folder: said so, not SQLite's "unable to open". */
Test(db, folder_is_an_error) {
  err e = {0};
  cr_expect_null(db_open(support_dir(), &e));
  cr_expect_eq(e.code, ERR_DB);
  cr_expect_not_null(strstr(e.msg, support_dir()), "%s", e.msg);
  cr_expect_not_null(strstr(e.msg, ": cannot open the results store: a "
                            "folder, not a regular file"), "%s", e.msg);
}

/* Issue 24, 12: --db naming a device or a pipe is refused before SQLite
 * opens it (it left /dev/null-journal beside the device). */
Test(db, a_special_file_is_an_error) {
  const char *fifo = support_path("pipe.db");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  err e = {0};
  cr_expect_null(db_open(fifo, &e));
  cr_expect_eq(e.code, ERR_DB);
  char want[512];
  snprintf(want, sizeof want, "%s: cannot open the results store: a FIFO "
           "(named pipe), not a regular file", fifo);
  cr_expect_str_eq(e.msg, want);
  cr_expect(access(support_path("pipe.db-journal"), F_OK) != 0);
  cr_expect(access(support_path("pipe.db-wal"), F_OK) != 0);
  struct stat st;
  if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode)) {
    bool had = access("/dev/null-journal", F_OK) == 0;
    err_clear(&e);
    cr_expect_null(db_open("/dev/null", &e));
    cr_expect(strstr(e.msg, "/dev/null: cannot open the results store: a "
                     "character device, not a regular file") != NULL, "%s",
              e.msg);
    cr_expect(had || access("/dev/null-journal", F_OK) != 0, "nothing in /dev");
  }
}

/* A store with rows over several leaf pages, in rollback mode so the bytes
 * of the file are all there is; returns the first leaf page of results. */
static long store_with_pages(const char *path) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"x", NULL, -1, "0", "0"}, &e);
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  for (int i = 0; i < 200; i++) {
    char key[32];
    snprintf(key, sizeof key, "k%03d", i);
    db_result r = sample(key, i);
    cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
    db_result_clear(&r);
  }
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  db_close(d);
  sql(path, "PRAGMA journal_mode = DELETE");
  long page = support_sql_int(path, "SELECT min(pageno) FROM dbstat WHERE "
                                    "name = 'results' AND pagetype = 'leaf'");
  if (page < 0) cr_skip_test("this SQLite has no dbstat table");
  return page;
}

/* A damaged leaf that lookups by key never read (they use the key's index
 * and new rows go to the last leaf): before quick_check the file was
 * accepted and written to. */
Test(db, damaged_page_is_refused_untouched) {
  const char *path = support_path("damaged.db");
  long page = store_with_pages(path);
  FILE *f = fopen(path, "r+b");
  cr_assert_not_null(f);
  fseek(f, (page - 1) * 4096, SEEK_SET);
  fputc(0xff, f); /* not a page type */
  fclose(f);
  expect_refused(path, "damaged: SQLite's quick_check says '*** in database "
                       "main *** Page");
}

/* Our id and version over other tables: refused before the WAL switch
 * rewrote bytes 18 and 19 of the header. */
Test(db, wrong_tables_are_refused_untouched) {
  char marks[96];
  snprintf(marks, sizeof marks,
           "PRAGMA application_id = %d; PRAGMA user_version = %d;",
           DB_APPLICATION_ID, DB_SCHEMA_VERSION);
  const char *path = support_path("tables.db");
  sql(path, "CREATE TABLE runs(id INTEGER PRIMARY KEY);"
            "CREATE TABLE results(id INTEGER PRIMARY KEY, point_key TEXT);");
  sql(path, marks);
  expect_refused(path, "but its tables are not that schema's (it has no "
                       "convergence.run_id INTEGER)");
  const char *other = support_path("other.db");
  err e = {0};
  db_close(db_open(other, &e));
  sql(other, "PRAGMA journal_mode = DELETE;"
             "ALTER TABLE results RENAME COLUMN gpu TO gpus");
  expect_refused(other, "it has results.gpus TEXT where results.gpu TEXT is "
                        "expected");
  sql(other, "ALTER TABLE results RENAME COLUMN gpus TO gpu;"
             "CREATE TABLE extra(x)");
  expect_refused(other, "it has a table extra that it should not have");
  sql(other, "DROP TABLE extra; ANALYZE"); /* sqlite_stat1 is SQLite's */
  db_close(db_open(other, &e));
  cr_expect_eq(e.code, ERR_OK, "%s", e.msg);
  /* a missing column at the end of a table is found too */
  const char *short_path = support_path("short.db");
  db_close(db_open(short_path, &e));
  sql(short_path, "PRAGMA journal_mode = DELETE;"
                  "ALTER TABLE convergence DROP COLUMN best_score_s");
  expect_refused(short_path, "it has no convergence.best_score_s REAL");
}

/* Version 2's schema as that geodes wrote it (no results.identity). */
static const char SCHEMA_V2[] =
    "PRAGMA application_id = 1734700900; PRAGMA user_version = 2;"
    "CREATE TABLE runs( id INTEGER PRIMARY KEY, started_at TEXT NOT NULL,"
    " finished_at TEXT, status TEXT, version TEXT, git TEXT, command TEXT,"
    " scenario TEXT, seed INTEGER);"
    "CREATE TABLE results( id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES"
    " runs(id), point_key TEXT NOT NULL UNIQUE, study TEXT NOT NULL,"
    " scenario TEXT NOT NULL, method TEXT NOT NULL, network_model TEXT NOT"
    " NULL, seed INTEGER, layers INTEGER, batch INTEGER, micro_batch INTEGER,"
    " micro_batches_per_pass INTEGER, window_bytes INTEGER, schedule TEXT,"
    " dp_algo TEXT, gpu TEXT, bandwidth_scale REAL, latency_scale REAL,"
    " activation_gb REAL, gradient_gb REAL, alloc TEXT, score_s REAL,"
    " dp_cost_s REAL, pp_cost_s REAL, predicted_iteration_s REAL,"
    " iteration_s REAL, compute_s REAL, bubble_s REAL, comm_s REAL,"
    " dp_sync_s REAL, events INTEGER);"
    "CREATE INDEX results_by_scenario ON results(scenario, network_model);"
    "CREATE TABLE convergence( run_id INTEGER NOT NULL REFERENCES runs(id),"
    " method TEXT NOT NULL, candidate INTEGER NOT NULL, best_score_s REAL NOT"
    " NULL, PRIMARY KEY(run_id, method, candidate));"
    "INSERT INTO runs(id, started_at) VALUES(1, 'then');"
    "INSERT INTO results(run_id, point_key, study, scenario, method,"
    " network_model, iteration_s) VALUES(1, 'k1', 'sweep', 'worldwide',"
    " 'gcma', 'netem', 30.12);";

/* A version-2 store is migrated: its rows stay, without an identity, so
 * they are stale to a sweep, which replaces them; a row stored with an
 * identity is current for it and kept. */
Test(db, version_2_is_migrated_and_its_rows_are_stale) {
  const char *path = support_path("v2.db");
  sql(path, SCHEMA_V2);
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  cr_expect_eq(db_result_has(d, "k1", NULL, &e), DB_RESULT_CURRENT);
  cr_expect_eq(db_result_has(d, "k1", "00000000000000aa", &e),
               DB_RESULT_STALE);
  int64_t run = db_run_begin(d, &(db_run){"x", NULL, -1, "0", "0"}, &e);
  db_result r = sample("k1", 269.95);
  r.identity = "00000000000000aa";
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(db_result_put(d, run, &r, &e), 1, "a stale row is replaced");
  cr_expect_eq(db_result_put(d, run, &r, &e), 0, "a current one is kept");
  r.identity = NULL;
  cr_expect_eq(db_result_put(d, run, &r, &e), 0, "no identity: kept");
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(db_result_has(d, "k1", "00000000000000aa", &e),
               DB_RESULT_CURRENT);
  db_close(d);
  db_result_clear(&r);
  int null;
  cr_expect_float_eq(sql_real(path, "SELECT iteration_s FROM results", &null),
                     269.95, 0);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM results"), 1);
  cr_expect_eq(support_sql_int(path, "PRAGMA user_version"),
               DB_SCHEMA_VERSION);
  /* a migrated file has exactly a new file's tables: it opens again */
  d = db_open(path, &e);
  cr_expect_not_null(d, "%s", e.msg);
  db_close(d);
}

/* Takes the new file at path back to schema version v's results table:
 * every column of DB_RESULT_MAP that arrived after v dropped, and the
 * version marked (other tables are the caller's). */
static void back_to(const char *path, int v) {
  char buf[4096];
  size_t at = (size_t)snprintf(buf, sizeof buf,
                               "PRAGMA journal_mode = DELETE;"
                               "PRAGMA user_version = %d;", v);
#define X(f, col, type, decl, absent, since, origin)                     \
  if ((since) > v)                                                        \
    at += (size_t)snprintf(buf + at, sizeof buf - at,                     \
                           "ALTER TABLE results DROP COLUMN %s;", col);
  DB_RESULT_MAP(X)
#undef X
  cr_assert_lt(at, sizeof buf);
  sql(path, buf);
}

/* A store at path holding one row (key, its iteration_s, identity) put in
 * a run, then taken back to schema version v (back_to); returns the run's
 * id, which the migrated file keeps. */
static int64_t one_row_back_to(const char *path, const char *key,
                               double iteration_s, const char *identity,
                               int v) {
  err e = {0};
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"x", NULL, -1, "0", "0"}, &e);
  db_result r = sample(key, iteration_s);
  r.identity = identity;
  cr_assert_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  db_close(d);
  db_result_clear(&r);
  back_to(path, v);
  return run;
}

/* Version 3's tables beside results as that geodes wrote them (no
 * iterations or marks tables). */
#define DROP_V4_TABLES "DROP TABLE marks; DROP TABLE iterations;"

/* A version-3 store is migrated in one step: its rows keep their identity
 * (current for a sweep), and a training row then stores its iterations and
 * marks, which a replacing row replaces. */
Test(db, version_3_is_migrated_and_runs_keep_their_iterations) {
  const char *path = support_path("v3.db");
  int64_t run = one_row_back_to(path, "k3", 40.5, "00000000000000bb", 3);
  err e = {0};
  db *d;
  sql(path, DROP_V4_TABLES);
  cr_assert_eq(support_sql_int(path, "PRAGMA user_version"), 3);
  d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  cr_expect_eq(support_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
  cr_expect_eq(db_result_has(d, "k3", "00000000000000bb", &e),
               DB_RESULT_CURRENT, "a version-3 row stays current");
  db_result t = sample("k4", 41);
  t.identity = "00000000000000cc";
  t.iterations = 3, t.recovery = "reroute", t.faults = "f.csv";
  t.total_s = 130, t.samples_per_s = 23.6, t.lost_s = 7;
  t.nit = 3;
  t.it = calloc(3, sizeof *t.it);
  for (int k = 0; k < 3; k++)
    t.it[k] = (db_iteration){.index = k, .replicas = 8, .start_s = 41.0 * k,
                             .iteration_s = 41, .samples = 1024,
                             .lost_s = k == 2 ? 7 : 0};
  t.it[2].lost_by[0] = 7;
  t.nmarks = 1;
  t.marks = calloc(1, sizeof *t.marks);
  t.marks[0] = (db_mark){.t_s = 80.5, .kind = "device_down", .what = "5"};
  cr_assert_eq(db_result_put(d, run, &t, &e), 1, "%s", e.msg);
  db_close(d);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM iterations"), 3);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM marks WHERE "
                                     "kind = 'device_down' AND what = '5'"), 1);
  int null;
  cr_expect_float_eq(sql_real(path, "SELECT lost_redone_s FROM iterations "
                                    "WHERE idx = 2", &null), 7, 0);
  cr_expect_float_eq(sql_real(path, "SELECT samples_per_s FROM results WHERE "
                                    "point_key = 'k4'", &null), 23.6, 0);
  /* a stale row's replacement replaces its iterations and marks */
  d = db_open(path, &e);
  t.identity = "00000000000000dd";
  t.nit = 1, t.nmarks = 0;
  cr_assert_eq(db_result_put(d, run, &t, &e), 1, "%s", e.msg);
  db_close(d);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM iterations"), 1);
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM marks"), 0);
  db_result_clear(&t);
  /* a migrated file has exactly a new file's tables: it opens again */
  d = db_open(path, &e);
  cr_expect_not_null(d, "%s", e.msg);
  db_close(d);
}

/* A version-4 store gets the utilisation, bytes and DiLoCo columns: its
 * rows stay, the new columns NULL in them, and the file then has exactly
 * a new file's tables. */
Test(db, version_4_gets_the_utilisation_columns) {
  const char *path = support_path("v4.db");
  err e = {0};
  db_close(db_open(path, &e));
  back_to(path, 4);
  sql(path, "INSERT INTO runs(id, started_at) VALUES(1, 'then');"
            "INSERT INTO results(run_id, point_key, study, scenario, method,"
            " network_model, iteration_s) VALUES(1, 'k3', 'sweep', "
            "'worldwide', 'gcma', 'netem', 43.4);");
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){"x", NULL, -1, "0", "0"}, &e);
  db_result r = sample("k4", 13.9);
  r.compute_utilisation = 0.54, r.inner_steps = 100, r.grad_bits = 8;
  cr_assert_eq(db_begin(d, &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(db_result_put(d, run, &r, &e), 1, "%s", e.msg);
  cr_assert_eq(db_commit(d, &e), ERR_OK, "%s", e.msg);
  db_close(d);
  db_result_clear(&r);
  int null;
  sql_real(path, "SELECT compute_utilisation FROM results WHERE "
                 "point_key = 'k3'", &null);
  cr_expect(null, "an older row has no utilisation");
  cr_expect_float_eq(sql_real(path, "SELECT compute_utilisation FROM results "
                                    "WHERE point_key = 'k4'", &null),
                     0.54, 0);
  cr_expect_eq(support_sql_int(path, "SELECT inner_steps * grad_bits FROM "
                                     "results WHERE point_key = 'k4'"), 800);
  cr_expect_eq(support_sql_int(path, "PRAGMA user_version"),
               DB_SCHEMA_VERSION);
  d = db_open(path, &e);
  cr_expect_not_null(d, "%s", e.msg);
  db_close(d);
}

/* A version-5 store is migrated to 6 in one step: its rows keep their
 * identity and values, and results gets cost_cmd_s, NULL for them. */
Test(db, version_5_is_migrated_and_gets_the_cost_cmd_column) {
  const char *path = support_path("v5.db");
  int64_t run = one_row_back_to(path, "k5old", 40.5, "00000000000000bb", 5);
  err e = {0};
  db *d;
  d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  cr_expect_eq(support_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
  cr_expect_eq(db_result_has(d, "k5old", "00000000000000bb", &e),
               DB_RESULT_CURRENT, "a version-5 row stays current");
  db_result t = sample("k5", 41);
  t.cost_cmd_s = 38.25;
  cr_assert_eq(db_result_put(d, run, &t, &e), 1, "%s", e.msg);
  db_close(d);
  db_result_clear(&t);
  int null;
  cr_expect_float_eq(sql_real(path, "SELECT cost_cmd_s FROM results WHERE "
                                    "point_key = 'k5'", &null), 38.25, 0);
  sql_real(path, "SELECT cost_cmd_s FROM results WHERE point_key = 'k5old'", &null);
  cr_expect(null, "a migrated row has no prediction");
  cr_expect_float_eq(sql_real(path, "SELECT iteration_s FROM results WHERE "
                                    "point_key = 'k5old'", &null), 40.5, 0);
  d = db_open(path, &e); /* the migrated file has a new file's tables */
  cr_expect_not_null(d, "%s", e.msg);
  db_close(d);
}

/* Issue 24, 13: two processes opening one old store at once: one failed
 * with "marked ... schema version 4, but its tables are not that
 * schema's", having read the version before the other migrated the
 * tables. Now both open it (the checks read one state of the file) and it
 * is migrated once. Twenty rounds of two openers started together. */
Test(db, two_processes_migrate_one_old_store) {
  for (int round = 0; round < 20; round++) {
    const char *path = support_path("race%d.db", round);
    err e = {0};
    db_close(db_open(path, &e));
    back_to(path, 4);
    pid_t kid[2];
    for (int k = 0; k < 2; k++) {
      kid[k] = fork();
      cr_assert_geq(kid[k], 0);
      if (kid[k] == 0) {
        err ce = {0};
        db *d = db_open(path, &ce);
        if (!d) fprintf(stderr, "round %d: %s\n", round, ce.msg);
        db_close(d);
        _exit(d ? 0 : 1);
      }
    }
    for (int k = 0; k < 2; k++) {
      int st;
      cr_assert_eq(waitpid(kid[k], &st, 0), kid[k]);
      cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: opener %d "
                "failed", round, k);
    }
    cr_expect_eq(support_sql_int(path, "PRAGMA user_version"),
                 DB_SCHEMA_VERSION);
  }
}

/* Issue 36: a version-8 store is migrated step by step to the current
 * version: its rows keep their identity and values, results gets the
 * bill's columns (version 10; NULL for them), and a new row stores its
 * dollars, energy and carbon. */
Test(db, version_8_is_migrated_and_gets_the_bill_columns) {
  const char *path = support_path("v8.db");
  int64_t run = one_row_back_to(path, "k8old", 43.25, "00000000000000cc", 8);
  err e = {0};
  db *d;
  cr_expect_eq(support_sql_int(path, "SELECT count(*) FROM pragma_table_info"
                                     "('results') WHERE name = 'usd'"), 0);
  d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  cr_expect_eq(support_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
  cr_expect_eq(db_result_has(d, "k8old", "00000000000000cc", &e),
               DB_RESULT_CURRENT, "a version-8 row stays current");
  db_result t = sample("k9", 41);
  t.usd = 2.5, t.usd_per_1k_samples = 2.44, t.kwh = 0.75, t.gco2 = 300;
  cr_assert_eq(db_result_put(d, run, &t, &e), 1, "%s", e.msg);
  db_close(d);
  db_result_clear(&t);
  int null;
  cr_expect_float_eq(sql_real(path, "SELECT usd FROM results WHERE "
                                    "point_key = 'k9'", &null), 2.5, 0);
  cr_expect_float_eq(sql_real(path, "SELECT gco2 FROM results WHERE "
                                    "point_key = 'k9'", &null), 300, 0);
  sql_real(path, "SELECT usd_per_hour FROM results WHERE point_key = 'k9'",
           &null);
  cr_expect(null, "not given: NULL");
  sql_real(path, "SELECT usd FROM results WHERE point_key = 'k8old'", &null);
  cr_expect(null, "a migrated row has no bill");
  cr_expect_float_eq(sql_real(path, "SELECT iteration_s FROM results WHERE "
                                    "point_key = 'k8old'", &null), 43.25, 0);
}
