/* db: the SQLite results store.
 * Invariant: a db handle exists only for a writable file whose
 * application_id, user_version and tables are ours and that passes
 * quick_check (or that was empty and has just been given our schema, by
 * whichever process took the write lock first); the checks run before
 * anything is written, so a foreign, damaged or wrong file is never
 * modified. Every statement is prepared once, in
 * db_open, and reset after each use. */
#include "analysis/db.h"

#include <assert.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/db_schema.h"
#include "base/file.h"
#include "base/mem.h"

/* How long a connection waits for another's lock (SQLite's busy timeout,
 * and the retries of set_wal), ms. */
#define DB_BUSY_MS 10000

/* Room for one migration step's SQL (db_schema_step asserts it fits). */
#define DB_STEP_MAX 4096

struct db {
  sqlite3 *h;
  char *path;
  int64_t version; /* the file's schema version (DB_SCHEMA_MIGRATES or ours) */
  sqlite3_stmt *put, *has, *count, *conv, *run, *run_end, *begin, *commit;
  sqlite3_stmt *row_id, *it_clear, *mk_clear, *it_put, *mk_put;
};


/* A column's absent value (db_result_init), by kind: a fixed buffer is
 * already "" (zeroed). */
#define ABSENT_REF(x, v) (x) = (v)
#define ABSENT_OWNED(x, v) (x) = (v)
#define ABSENT_CHARS16(x, v) (void)(v)
#define ABSENT_CHARS24(x, v) (void)(v)
#define ABSENT_CHARS48(x, v) (void)(v)
#define ABSENT_INT(x, v) (x) = (v)
#define ABSENT_REAL(x, v) (x) = (v)

void db_result_init(db_result *r) {
  *r = (db_result){0};
#define X(f, col, type, sql, absent, since, origin) ABSENT_##type(r->f, absent);
  DB_RESULT_MAP(X)
#undef X
}

void db_result_clear(db_result *r) {
  free(r->alloc);
  free(r->it);
  free(r->marks);
  db_result_init(r);
}

static int fail(db *d, err *e, const char *what) {
  return err_set(e, ERR_DB, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->h));
}

/* The application id, the schema version and the number of schema entries,
 * read in one statement, so in one snapshot: read apart, another process
 * creating the schema between the reads made a new file look foreign. */
static int read_marks(db *d, int64_t marks[3], err *e) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      d->h,
      "SELECT (SELECT application_id FROM pragma_application_id), (SELECT "
      "user_version FROM pragma_user_version), (SELECT count(*) FROM "
      "sqlite_master)",
      -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  int code = ERR_OK;
  if (rc != SQLITE_ROW)
    code = err_set(e, ERR_DB,
                   "%s: not a readable SQLite database (%s); geodes leaves it "
                   "untouched",
                   d->path, sqlite3_errmsg(d->h));
  for (int i = 0; i < 3 && !code; i++) marks[i] = sqlite3_column_int64(st, i);
  sqlite3_finalize(st);
  return code;
}

/* Refuses anything but an empty database or one with our id and a version
 * this build reads (its own, or DB_SCHEMA_MIGRATES to migrate); sets *fresh
 * when the schema must be created and d->version. Reads only. */
static int check_schema(db *d, bool *fresh, err *e) {
  int64_t m[3] = {0, 0, 0};
  int rc = read_marks(d, m, e);
  if (rc) return rc;
  int64_t app = m[0], version = m[1], tables = m[2];
  *fresh = app == 0 && version == 0 && tables == 0;
  d->version = *fresh ? DB_SCHEMA_VERSION : version;
  if (*fresh) return ERR_OK;
  if (app != DB_APPLICATION_ID)
    return err_set(e, ERR_DB,
                   "%s: a database of another application (application_id "
                   "%lld, %lld tables), not a geodes results store; geodes "
                   "will not write to it",
                   d->path, (long long)app, (long long)tables);
  if (version < DB_SCHEMA_MIGRATES || version > DB_SCHEMA_VERSION)
    return err_set(e, ERR_DB,
                   "%s: geodes results store of schema version %lld, written "
                   "by %s geodes; this geodes reads version %d (and migrates "
                   "%d on: %s) and leaves the file untouched: keep it with "
                   "the geodes that wrote it, or give --db a new file",
                   d->path, (long long)version,
                   version < DB_SCHEMA_VERSION ? "an older" : "a newer",
                   DB_SCHEMA_VERSION, DB_SCHEMA_MIGRATES,
                   "version 2 added results.gpu, GPU in the keys and "
                   "convergence.method");
  return ERR_OK;
}

/* sql (short what for the message: the statement itself may be kilobytes,
 * and err's message would end before SQLite's reason). */
static int exec(db *d, const char *sql, const char *what, err *e) {
  if (sqlite3_exec(d->h, sql, NULL, NULL, NULL) != SQLITE_OK)
    return fail(d, e, what);
  return ERR_OK;
}

#define COL(st, c) ((const char *)sqlite3_column_text(st, c))

/* Steps want (db_schema_sql's tables and columns) and have (the file's) in
 * lockstep, both ordered by table and column; false at the first
 * difference, described in why. */
static bool same_rows(sqlite3_stmt *want, sqlite3_stmt *have, char *why,
                      size_t size) {
  for (;;) {
    bool a = sqlite3_step(want) == SQLITE_ROW;
    bool b = sqlite3_step(have) == SQLITE_ROW;
    if (!a && !b) return true;
    int t = a && b ? strcmp(COL(want, 0), COL(have, 0)) : 0;
    bool same = a == b && t == 0;
    for (int c = 1; same && c < 5; c++)
      same = strcmp(COL(want, c), COL(have, c)) == 0;
    if (same) continue;
    if (!b || t < 0)
      snprintf(why, size, "no %s.%s %s", COL(want, 0), COL(want, 1),
               COL(want, 2));
    else if (!a || t > 0)
      snprintf(why, size, "a table %s that it should not have", COL(have, 0));
    else
      snprintf(why, size, "%s.%s %s where %s.%s %s is expected", COL(have, 0),
               COL(have, 1), COL(have, 2), COL(want, 0), COL(want, 1),
               COL(want, 2));
    return false;
  }
}

/* The file's tables are exactly db_schema_sql's, column by column (name,
 * type, NOT NULL, key), as db_schema_sql creates them in a scratch
 * in-memory database: one home for the schema, and a file of ours with
 * other tables is refused before anything is written. SQLite's own tables (sqlite_stat1 after an
 * ANALYZE) are not ours to judge. Reads only. */
static int check_tables(db *d, err *e) {
  static const char q[] =
      "SELECT m.name, p.name, p.type, p.\"notnull\", p.pk FROM sqlite_master "
      "m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT "
      "LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY m.name, p.cid";
  sqlite3 *ref = NULL;
  sqlite3_stmt *want = NULL, *have = NULL;
  int rc = ERR_OK;
  bool built = sqlite3_open(":memory:", &ref) == SQLITE_OK &&
               sqlite3_exec(ref, db_schema_sql, NULL, NULL, NULL) == SQLITE_OK;
  char step[DB_STEP_MAX];
  /* newest step first */
  for (int from = DB_SCHEMA_VERSION - 1; built && from >= d->version; from--) {
    db_schema_step(from, false, step, sizeof step);
    built = sqlite3_exec(ref, step, NULL, NULL, NULL) == SQLITE_OK;
  }
  if (!built || sqlite3_prepare_v2(ref, q, -1, &want, NULL) != SQLITE_OK) {
    rc = err_set(e, ERR_DB, "%s: cannot build the reference schema: %s",
                 d->path, sqlite3_errmsg(ref));
  } else if (sqlite3_prepare_v2(d->h, q, -1, &have, NULL) != SQLITE_OK) {
    rc = fail(d, e, "cannot read the tables");
  } else {
    char why[256];
    if (!same_rows(want, have, why, sizeof why))
      rc = err_set(e, ERR_DB,
                   "%s: marked a geodes results store of schema version "
                   "%lld, but its tables are not that schema's (it has %s); "
                   "geodes leaves it untouched",
                   d->path, (long long)d->version, why);
  }
  sqlite3_finalize(want);
  sqlite3_finalize(have);
  sqlite3_close(ref);
  return rc;
}

/* SQLite's quick_check (every page and b-tree, not the index contents):
 * lookups that miss a damaged page would let a write go through. */
static int check_integrity(db *d, err *e) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(d->h, "PRAGMA quick_check(1)", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  const char *said = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0)
                                      : sqlite3_errmsg(d->h);
  char what[256];
  snprintf(what, sizeof what, "%s", said ? said : "nothing");
  for (char *c = what; *c; c++)
    if (*c == '\n') *c = ' '; /* one line of message */
  int code = ERR_OK;
  if (rc != SQLITE_ROW || strcmp(what, "ok") != 0)
    code = err_set(e, ERR_DB,
                   "%s: damaged: SQLite's quick_check says '%s'; geodes "
                   "leaves it untouched (use a copy from before the damage, "
                   "or give --db a new file)",
                   d->path, what);
  sqlite3_finalize(st);
  return code;
}

/* WAL mode, retried while another connection holds a lock: journal_mode
 * does not wait under the busy timeout (two processes opening one new file
 * at once got SQLITE_BUSY at once). */
static int set_wal(db *d, err *e) {
  for (int waited = 0;; waited += 10) {
    int rc = sqlite3_exec(d->h, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK) break;
    if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
        waited >= DB_BUSY_MS)
      return fail(d, e, "cannot switch to WAL mode");
    sqlite3_sleep(10);
  }
  return exec(d, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
              "cannot set its pragmas", e);
}

/* Creates the schema under the write lock, unless another process created
 * it since check_schema looked (two sweeps starting on one new file): then
 * its tables are checked instead. */
static int create_schema(db *d, err *e) {
  char pragmas[128];
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA application_id = %d; PRAGMA user_version = %d;",
           DB_APPLICATION_ID, DB_SCHEMA_VERSION);
  bool fresh = false;
  int rc;
  if ((rc = exec(d, "BEGIN IMMEDIATE", "cannot begin the schema", e)))
    return rc;
  if ((rc = check_schema(d, &fresh, e)) ||
      (fresh && ((rc = exec(d, db_schema_sql, "cannot create the tables", e)) ||
                 (rc = exec(d, pragmas, "cannot mark the schema", e))))) {
    sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
  }
  if ((rc = exec(d, "COMMIT", "cannot commit the schema", e))) return rc;
  return fresh ? ERR_OK : check_tables(d, e);
}

/* A store of an older version is brought to ours, step by step in one
 * transaction under the write lock, unless another process did it first
 * (the version is read again under the lock). Version 2's rows have no
 * identity: they count as stale, so a sweep recomputes them. */
static int migrate(db *d, err *e) {
  if (d->version == DB_SCHEMA_VERSION) return ERR_OK;
  int64_t m[3];
  int rc;
  if ((rc = exec(d, "BEGIN IMMEDIATE", "cannot begin the migration", e)))
    return rc;
  if ((rc = read_marks(d, m, e))) goto fail;
  for (int from = (int)m[1]; from < DB_SCHEMA_VERSION; from++) {
    char what[160], mark[64], step[DB_STEP_MAX];
    db_schema_step(from, true, step, sizeof step);
    snprintf(what, sizeof what, "cannot migrate to version %d (%s)",
             from + 1, db_schema_step_what(from));
    snprintf(mark, sizeof mark, "PRAGMA user_version = %d", from + 1);
    if ((rc = exec(d, step, what, e)) ||
        (rc = exec(d, mark, "cannot mark the migration", e)))
      goto fail;
  }
  d->version = DB_SCHEMA_VERSION;
  return exec(d, "COMMIT", "cannot commit the migration", e);
fail:
  sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static int prepare(db *d, sqlite3_stmt **st, const char *sql, err *e) {
  if (sqlite3_prepare_v3(d->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) !=
      SQLITE_OK)
    return fail(d, e, "cannot prepare a statement");
  return ERR_OK;
}

/* The insert of a result: a new key is inserted; a key already there is
 * replaced only by a row with an identity that differs from its own (it is
 * stale), else kept. */
static void put_sql(char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size,
                              "INSERT INTO results(" DB_RESULT_COLUMNS ") VALUES(?");
  for (int i = 1; i < DB_RESULT_NCOLUMNS; i++)
    n += (size_t)snprintf(buf + n, size - n, ",?");
  n += (size_t)snprintf(buf + n, size - n,
                        ") ON CONFLICT(point_key) DO UPDATE SET ");
  const char *c = DB_RESULT_COLUMNS;
  for (bool first = true; *c; first = false) {
    size_t len = strcspn(c, ",");
    if (!(len == 9 && memcmp(c, "point_key", 9) == 0))
      n += (size_t)snprintf(buf + n, size - n, "%s%.*s = excluded.%.*s",
                            first ? "" : ", ", (int)len, c, (int)len, c);
    c += len;
    c += strspn(c, ", ");
  }
  snprintf(buf + n, size - n,
           " WHERE excluded.identity IS NOT NULL AND"
           " results.identity IS NOT excluded.identity");
  assert(n + 64 < size);
}

static int prepare_all(db *d, err *e) {
  char put[4096];
  put_sql(put, sizeof put);
  int rc;
  if ((rc = prepare(d, &d->put, put, e)) ||
      (rc = prepare(d, &d->has,
                    "SELECT identity FROM results WHERE point_key = ?", e)) ||
      (rc = prepare(d, &d->count, "SELECT count(*) FROM results", e)) ||
      (rc = prepare(d, &d->conv,
                    "INSERT OR REPLACE INTO convergence(run_id, method, "
                    "candidate, best_score_s) VALUES(?, ?, ?, ?)",
                    e)) ||
      (rc = prepare(d, &d->run,
                    "INSERT INTO runs(started_at, version, git, command, "
                    "scenario, seed) VALUES(strftime('%Y-%m-%dT%H:%M:%fZ', "
                    "'now'), ?, ?, ?, ?, ?)",
                    e)) ||
      (rc = prepare(d, &d->run_end,
                    "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:"
                    "%fZ', 'now'), status = ? WHERE id = ?",
                    e)) ||
      (rc = prepare(d, &d->begin, "BEGIN IMMEDIATE", e)) ||
      (rc = prepare(d, &d->commit, "COMMIT", e)) ||
      (rc = prepare(d, &d->row_id,
                    "SELECT id FROM results WHERE point_key = ?", e)) ||
      (rc = prepare(d, &d->it_clear,
                    "DELETE FROM iterations WHERE result_id = ?", e)) ||
      (rc = prepare(d, &d->mk_clear, "DELETE FROM marks WHERE result_id = ?",
                    e)) ||
      (rc = prepare(d, &d->it_put,
                    "INSERT INTO iterations(result_id, idx, start_s, "
                    "iteration_s, lost_s, lost_redone_s, lost_checkpoint_s, "
                    "lost_waiting_s, lost_reloading_s, lost_migration_s, "
                    "replicas, samples) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", e)) ||
      (rc = prepare(d, &d->mk_put,
                    "INSERT INTO marks(result_id, t_s, kind, what) "
                    "VALUES(?,?,?,?)", e)))
    return rc;
  return ERR_OK;
}

/* The folder of path ("." when it has none), malloc'ed. */
static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return mem_strdup(".");
  return mem_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* Opens d->h on path for writing, or says why it cannot be written: a
 * folder, a read-only file, a folder where WAL's -wal and -shm files cannot
 * be made. SQLite opens a write-protected file read-only without a word and
 * fails later, misleadingly, at the first read of a WAL file. */
static int open_file(db *d, err *e) {
  if (!d->path[0]) /* SQLite would open a temporary store, lost at exit */
    return err_set(e, ERR_DB, "an empty file name for the results store");
  struct stat sb;
  bool exists = stat(d->path, &sb) == 0;
  /* a folder: SQLite only says "unable to open"; a device or a pipe: it
   * would put its journal beside it (in /dev) */
  if (exists && !S_ISREG(sb.st_mode))
    return err_set(e, ERR_DB, "%s: cannot open the results store: %s",
                   d->path, file_not_regular(sb.st_mode));
  char *dir = folder_of(d->path);
  bool dir_ok = access(dir, W_OK | X_OK) == 0;
  int rc = ERR_OK;
  if (exists && !dir_ok)
    rc = err_set(e, ERR_DB, "%s: its folder %s is not writable, and SQLite "
                 "keeps the -wal and -shm files of a results store beside it",
                 d->path, dir);
  free(dir);
  if (rc) return rc;
  int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(d->path, &d->h, flags, NULL) != SQLITE_OK)
    return err_set(e, ERR_DB, "%s: cannot open: %s", d->path,
                   d->h ? sqlite3_errmsg(d->h) : "out of memory");
  if (sqlite3_db_readonly(d->h, "main") == 1)
    return err_set(e, ERR_DB, "%s: read-only (no permission to write it), "
                   "and geodes writes its results there; give --db a "
                   "writable file", d->path);
  sqlite3_busy_timeout(d->h, DB_BUSY_MS);
  return ERR_OK;
}

/* The checks of an existing file, in one read transaction: the version and
 * the tables it is compared with come from one state of the file, even
 * while another process migrates it (that process's write waits for the
 * read, or the read sees the state before it: WAL's snapshot). A read
 * transaction changes nothing in the file. */
static int check_all(db *d, bool *fresh, err *e) {
  int rc = exec(d, "BEGIN", "cannot begin reading", e);
  if (rc) return rc;
  rc = check_schema(d, fresh, e);
  if (!rc && !*fresh && !(rc = check_tables(d, e))) rc = check_integrity(d, e);
  sqlite3_exec(d->h, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
  return rc;
}

db *db_open(const char *path, err *e) {
  db *d = mem_calloc(1, sizeof *d);
  d->path = mem_strdup(path);
  bool fresh = false;
  /* Reads only, until every check has passed: only then may the file change
   * (WAL, then the schema of a new file; migrate re-reads the version under
   * its write lock, so two processes migrate a file once). */
  if (open_file(d, e) || check_all(d, &fresh, e) || set_wal(d, e) ||
      (fresh && create_schema(d, e)) || migrate(d, e) || prepare_all(d, e)) {
    db_close(d);
    return NULL;
  }
  file_use_note(path, FILE_USE_READ); /* no output of this run replaces it */
  return d;
}

void db_close(db *d) {
  if (!d) return;
  sqlite3_stmt *all[] = {d->put,    d->has,      d->count,    d->conv,
                         d->run,    d->run_end,  d->begin,    d->commit,
                         d->row_id, d->it_clear, d->mk_clear, d->it_put,
                         d->mk_put};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) sqlite3_finalize(all[i]);
  sqlite3_close(d->h);
  free(d->path);
  free(d);
}

const char *db_path(const db *d) { return d->path; }

/* Runs a prepared statement that returns no row, then resets it. */
static int step_done(db *d, sqlite3_stmt *st, err *e, const char *what) {
  int rc = sqlite3_step(st);
  int code = rc == SQLITE_DONE ? ERR_OK : fail(d, e, what);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return code;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

static void bind_int(sqlite3_stmt *st, int i, int64_t v) {
  if (v >= 0) sqlite3_bind_int64(st, i, v);
  else sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v) {
  if (isfinite(v)) sqlite3_bind_double(st, i, v);
  else sqlite3_bind_null(st, i);
}

/* The bind of a column of DB_RESULT_MAP, by kind: "" and absent are NULL. */
#define BIND_REF(st, i, v) bind_text(st, i, v)
#define BIND_OWNED(st, i, v) bind_text(st, i, v)
#define BIND_CHARS(st, i, v) bind_text(st, i, (v)[0] ? (v) : NULL)
#define BIND_CHARS16 BIND_CHARS
#define BIND_CHARS24 BIND_CHARS
#define BIND_CHARS48 BIND_CHARS
#define BIND_INT(st, i, v) bind_int(st, i, v)
#define BIND_REAL(st, i, v) bind_real(st, i, v)

int64_t db_run_begin(db *d, const db_run *r, err *e) {
  bind_text(d->run, 1, r->version);
  bind_text(d->run, 2, r->git);
  bind_text(d->run, 3, r->command);
  bind_text(d->run, 4, r->scenario);
  bind_int(d->run, 5, r->seed);
  int rc = step_done(d, d->run, e, "cannot record the run");
  return rc ? rc : sqlite3_last_insert_rowid(d->h);
}

int db_run_end(db *d, int64_t run, const char *status, err *e) {
  bind_text(d->run_end, 1, status);
  sqlite3_bind_int64(d->run_end, 2, run);
  return step_done(d, d->run_end, e, "cannot finish the run");
}

int db_begin(db *d, err *e) {
  return step_done(d, d->begin, e, "cannot begin a transaction");
}

int db_commit(db *d, err *e) {
  return step_done(d, d->commit, e, "cannot commit");
}

/* The iterations and marks of the row of r->key, replacing any it had. */
static int put_run_rows(db *d, const db_result *r, err *e) {
  bind_text(d->row_id, 1, r->key);
  int rc = sqlite3_step(d->row_id);
  int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(d->row_id, 0) : -1;
  sqlite3_reset(d->row_id);
  sqlite3_clear_bindings(d->row_id);
  if (id < 0) return fail(d, e, "cannot find the result just stored");
  sqlite3_bind_int64(d->it_clear, 1, id);
  sqlite3_bind_int64(d->mk_clear, 1, id);
  if ((rc = step_done(d, d->it_clear, e, "cannot replace iterations")) ||
      (rc = step_done(d, d->mk_clear, e, "cannot replace marks")))
    return rc;
  for (size_t k = 0; k < r->nit && !rc; k++) {
    const db_iteration *x = &r->it[k];
    sqlite3_stmt *st = d->it_put;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, x->index);
    const double v[] = {x->start_s, x->iteration_s, x->lost_s, x->lost_by[0],
                        x->lost_by[1], x->lost_by[2], x->lost_by[3],
                        x->lost_by[4]};
    for (int j = 0; j < 8; j++) bind_real(st, 3 + j, v[j]);
    bind_int(st, 11, x->replicas);
    bind_real(st, 12, x->samples);
    rc = step_done(d, st, e, "cannot store an iteration");
  }
  for (size_t k = 0; k < r->nmarks && !rc; k++) {
    const db_mark *m = &r->marks[k];
    sqlite3_bind_int64(d->mk_put, 1, id);
    bind_real(d->mk_put, 2, m->t_s);
    bind_text(d->mk_put, 3, m->kind);
    bind_text(d->mk_put, 4, m->what[0] ? m->what : NULL);
    rc = step_done(d, d->mk_put, e, "cannot store a mark");
  }
  return rc;
}

int db_result_put(db *d, int64_t run, const db_result *r, err *e) {
  sqlite3_stmt *st = d->put;
  int i = 1;
  sqlite3_bind_int64(st, i++, run);
#define X(f, col, type, sql, absent, since, origin) BIND_##type(st, i++, r->f);
  DB_RESULT_MAP(X)
#undef X
  assert(i == DB_RESULT_NCOLUMNS + 1 && "a bind for every column");
  int rc = step_done(d, st, e, "cannot store a result");
  if (rc) return rc;
  int changed = sqlite3_changes(d->h);
  /* Only a training run has iterations and marks; its key says so (the
   * iterations key), so a row without one never replaces one with them. */
  bool run_rows = r->iterations >= 0 || r->nit || r->nmarks;
  if (changed && run_rows && (rc = put_run_rows(d, r, e))) return rc;
  return changed;
}

int db_result_has(db *d, const char *key, const char *identity, err *e) {
  bind_text(d->has, 1, key);
  int rc = sqlite3_step(d->has), out;
  if (rc == SQLITE_ROW) {
    const char *have = (const char *)sqlite3_column_text(d->has, 0);
    out = !identity || (have && strcmp(have, identity) == 0) ? DB_RESULT_CURRENT
                                                             : DB_RESULT_STALE;
  } else {
    out = rc == SQLITE_DONE ? DB_RESULT_ABSENT
                            : fail(d, e, "cannot look up a result");
  }
  sqlite3_reset(d->has);
  sqlite3_clear_bindings(d->has);
  return out;
}

int64_t db_result_count(db *d, err *e) {
  int rc = sqlite3_step(d->count);
  int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(d->count, 0)
                               : fail(d, e, "cannot count results");
  sqlite3_reset(d->count);
  return n;
}

int db_convergence_put(db *d, int64_t run, const char *method,
                       int64_t candidate, double best_s, err *e) {
  sqlite3_bind_int64(d->conv, 1, run);
  bind_text(d->conv, 2, method);
  sqlite3_bind_int64(d->conv, 3, candidate);
  sqlite3_bind_double(d->conv, 4, best_s);
  return step_done(d, d->conv, e, "cannot store convergence");
}
