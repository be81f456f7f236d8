/* test_sweep_cli: `geodes sweep` as a user runs it — a 2-rank MPI sweep gives
 * the rows of a single-process one, a sweep SIGKILLed after some rows are
 * committed resumes to exactly one row per point, and bad input exits 1 (or
 * 2 for usage) with FILE:LINE on stderr. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) {
  strcpy(dir, "/tmp/geodes_test_sweep_cli_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(sweep_cli, .init = make_dir, .fini = remove_dir, .timeout = 300);

static const char *path_in(const char *name) {
  static char buf[4][160];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

/* Runs sh -c cmd; returns the exit status, stderr in *err_text (static). */
static int sh(const char *cmd, char **err_text) {
  static char errbuf[8192];
  char full[2048];
  snprintf(full, sizeof full, "%s 2>'%s/stderr' >'%s/stdout'", cmd, dir, dir);
  int status = system(full);
  FILE *f = fopen(path_in("stderr"), "r");
  size_t n = f ? fread(errbuf, 1, sizeof errbuf - 1, f) : 0;
  errbuf[n] = '\0';
  if (f) fclose(f);
  if (err_text) *err_text = errbuf;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static long long query(const char *db, const char *q) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long n = -1;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(h); /* a failed open still allocates the handle */
    return -1;
  }
  sqlite3_busy_timeout(h, 5000);
  if (sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/* Every column that describes a point or its outcome, ordered by key. */
static char *dump(const char *db) {
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "sqlite3 '%s' 'SELECT point_key, scenario, method, network_model, "
           "seed, layers, batch, schedule, dp_algo, bandwidth_scale, "
           "score_s, dp_cost_s, pp_cost_s, predicted_iteration_s, "
           "iteration_s, compute_s, bubble_s, comm_s, dp_sync_s, events, "
           "alloc FROM results ORDER BY point_key'",
           db);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t cap = 1 << 16, len = 0, got;
  char *out = malloc(cap);
  while ((got = fread(out + len, 1, cap - len - 1, p)) > 0)
    if ((len += got) + 1 == cap) out = realloc(out, cap *= 2);
  out[len] = '\0';
  pclose(p);
  return out;
}

static const char SMALL[] =
    "{\"scenarios\": [\"worldwide\"],\n"
    " \"methods\": [\"dtfm-identity\", \"megatron\", \"random\"],\n"
    " \"networks\": [\"ideal\", \"tcp\"], \"layers\": 8}\n";

Test(sweep_cli, mpi_two_ranks_equal_one_process) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0)
    cr_skip_test("mpirun is not installed");
  const char *sw = path_in("s.json"), *one = path_in("one.db"),
             *two = path_in("two.db");
  write_file(sw, SMALL);
  char cmd[1024], *err;
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s' --db '%s'", GEODES_BIN, sw, one);
  cr_assert_eq(sh(cmd, &err), 0, "%s", err);
  snprintf(cmd, sizeof cmd,
           "OMPI_MCA_btl_vader_single_copy_mechanism=none "
           "ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root "
           "--oversubscribe -n 2 '%s' sweep '%s' --db '%s' --json",
           GEODES_BIN, sw, two);
  cr_assert_eq(sh(cmd, &err), 0, "%s", err);
  char *a = dump(one), *b = dump(two);
  cr_expect_eq(query(two, "SELECT count(*) FROM results"), 6);
  cr_expect_str_eq(a, b, "MPI rows differ from single-process rows");
  free(a), free(b);
  FILE *f = fopen(path_in("stdout"), "r");
  char line[512] = "";
  cr_assert_not_null(fgets(line, sizeof line, f));
  fclose(f);
  cr_expect_not_null(strstr(line, "\"ranks\":2"), "%s", line);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&t, NULL);
}

Test(sweep_cli, sigkill_then_resume) {
  const char *sw = path_in("k.json"), *db = path_in("k.db");
  write_file(sw,
             "{\"methods\": [\"dtfm-identity\", \"megatron\"],\n"
             " \"networks\": [\"netem\", \"tcp\"], \"layers\": 8,\n"
             " \"bandwidth_scale\": [0.5, 1, 2, 4]}\n");
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    execl(GEODES_BIN, "geodes", "sweep", sw, "--db", db, "--batch", "1",
          (char *)NULL);
    _exit(127);
  }
  long long rows = 0;
  for (int i = 0; i < 30000 && rows < 2; i++) { /* poll, <= 60 s */
    sleep_ms(2);
    rows = query(db, "SELECT count(*) FROM results");
  }
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  cr_assert(WIFSIGNALED(status), "the sweep ended before the kill");
  long long kept = query(db, "SELECT count(*) FROM results");
  cr_assert(kept >= 2 && kept < 16, "%lld rows kept", kept);
  char cmd[512], *err;
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s' --db '%s' --json", GEODES_BIN,
           sw, db);
  cr_assert_eq(sh(cmd, &err), 0, "%s", err);
  FILE *f = fopen(path_in("stdout"), "r");
  char line[512] = "", want[64];
  cr_assert_not_null(fgets(line, sizeof line, f));
  fclose(f);
  snprintf(want, sizeof want, "\"computed\":%lld", 16 - kept);
  cr_expect_not_null(strstr(line, want), "%s in %s", want, line);
  cr_expect_eq(query(db, "SELECT count(*) FROM results"), 16);
  cr_expect_eq(query(db, "SELECT count(DISTINCT point_key) FROM results"), 16);
  cr_expect_eq(query(db, "SELECT count(*) FROM runs"), 2);
}

/* geodes sweep with this file content exits with status; stderr holds
 * "s.json:LINE:" and needle. */
static void bad_file(const char *text, int line, const char *needle) {
  /* line 0: an error found when the point is built; it names the scenario
   * and the field instead (the point's key follows). */
  const char *sw = path_in("bad.json");
  write_file(sw, text);
  char cmd[512], *err, where[200];
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s' --db '%s'", GEODES_BIN, sw,
           path_in("bad.db"));
  cr_expect_eq(sh(cmd, &err), 1, "%s", text);
  if (line) snprintf(where, sizeof where, "%s:%d: ", sw, line);
  else snprintf(where, sizeof where, "worldwide: workload.");
  cr_expect_not_null(strstr(err, where), "'%s' in '%s'", where, err);
  cr_expect_not_null(strstr(err, needle), "'%s' in '%s'", needle, err);
}

Test(sweep_cli, bad_files_name_file_and_line) {
  bad_file("{\"layers\": [24],\n \"bandwith_scale\": [1]}", 2,
           "bandwith_scale");
  bad_file("{\"scenarios\": [\"worldwide\",\n\"atlantis\"]}", 1, "atlantis");
  bad_file("{\n\"seeds\": [1, -2]}", 2, "seeds");
  bad_file("{\"layers\": 24,\n}", 2, "");
  /* A knob that only fails when the point is built: reported, exit 1. */
  bad_file("{\n\"batch\": 1000}", 0, "batch=1000");
}

Test(sweep_cli, usage_and_database_errors) {
  char cmd[512], *err;
  snprintf(cmd, sizeof cmd, "'%s' sweep", GEODES_BIN);
  cr_expect_eq(sh(cmd, &err), 2);
  snprintf(cmd, sizeof cmd, "'%s' sweep x.json --jobs 0", GEODES_BIN);
  cr_expect_eq(sh(cmd, &err), 2);
  cr_expect_not_null(strstr(err, "--jobs"));
  snprintf(cmd, sizeof cmd, "'%s' sweep x.json --frobnicate", GEODES_BIN);
  cr_expect_eq(sh(cmd, &err), 2);
  snprintf(cmd, sizeof cmd, "'%s' sweep --help", GEODES_BIN);
  cr_expect_eq(sh(cmd, &err), 0);
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s'", GEODES_BIN,
           path_in("missing.json"));
  cr_expect_eq(sh(cmd, &err), 1);
  cr_expect_not_null(strstr(err, "missing.json"), "%s", err);
  const char *sw = path_in("ok.json"), *foreign = path_in("notes.db");
  write_file(sw, "{\"layers\": 8}");
  write_file(foreign, "my notes, not a database\n");
  snprintf(cmd, sizeof cmd, "'%s' sweep '%s' --db '%s'", GEODES_BIN, sw,
           foreign);
  cr_expect_eq(sh(cmd, &err), 1);
  cr_expect_not_null(strstr(err, foreign), "%s", err);
}
