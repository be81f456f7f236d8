/* test_sweep_cli: `geodes sweep` as a user runs it — a 2-rank MPI sweep gives
 * the rows of a single-process one, a sweep SIGKILLed after some rows are
 * committed resumes to exactly one row per point, a sweep over GPUs stores
 * one row per GPU with the GPU simulated (faster compute on an A100, by the
 * ratio of the spec table), and bad input exits 1 (or 2 for usage) with
 * FILE:LINE on stderr; a database of the older schema is refused as is. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/spec.h"
#include "tests/support.h"

#define THREE_SITES GEODES_FIXTURES "/analysis/three-sites"

TestSuite(sweep_cli, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

/* Every column that describes a point or its outcome, ordered by key. */
static char *dump(const char *db) {
  return support_sql_text(
      db, "SELECT point_key, scenario, method, network_model, seed, layers, "
          "batch, schedule, dp_algo, gpu, bandwidth_scale, score_s, "
          "dp_cost_s, pp_cost_s, predicted_iteration_s, iteration_s, "
          "compute_s, bubble_s, comm_s, dp_sync_s, events, alloc FROM results "
          "ORDER BY point_key");
}

/* The first line of what the command printed on stdout (in place). */
static const char *first_line(support_run *r) {
  cr_assert_gt(r->out_len, 0, "nothing on stdout");
  r->out[strcspn(r->out, "\n")] = '\0';
  return r->out;
}

static const char SMALL[] =
    "{\"scenarios\": [\"worldwide\"],\n"
    " \"methods\": [\"dtfm-identity\", \"megatron\", \"random\"],\n"
    " \"networks\": [\"ideal\", \"tcp\"], \"layers\": 8,\n"
    " \"gpus\": [\"V100\", \"a100\"]}\n";

Test(sweep_cli, mpi_two_ranks_equal_one_process) {
  if (!support_has_mpirun())
    cr_skip_test("mpirun is not installed");
  const char *sw = support_path("s.json"), *one = support_path("one.db"),
             *two = support_path("two.db");
  support_write_file(sw, SMALL);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, one), 0, "%s",
               r.err);
  cr_assert_eq(
      support_geodes_mpi(&r, "sweep '%s' --db '%s' --json", sw, two), 0,
      "%s", r.err);
  char *a = dump(one), *b = dump(two);
  cr_expect_eq(support_sql_int(two, "SELECT count(*) FROM results"), 12);
  cr_expect_eq(support_sql_int(two, "SELECT count(*) FROM results WHERE "
                                    "gpu = 'A100'"),
               6);
  cr_expect_str_eq(a, b, "MPI rows differ from single-process rows");
  free(a), free(b);
  const char *line = first_line(&r);
  cr_expect_not_null(strstr(line, "\"ranks\":2"), "%s", line);
  support_run_clear(&r);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&t, NULL);
}

Test(sweep_cli, sigkill_then_resume) {
  const char *sw = support_path("k.json"), *db = support_path("k.db");
  support_write_file(sw,
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
    rows = support_sql_int(db, "SELECT count(*) FROM results");
  }
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  cr_assert(WIFSIGNALED(status), "the sweep ended before the kill");
  long long kept = support_sql_int(db, "SELECT count(*) FROM results");
  cr_assert(kept >= 2 && kept < 16, "%lld rows kept", kept);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, db), 0,
               "%s", r.err);
  const char *line = first_line(&r);
  char want[64];
  snprintf(want, sizeof want, "\"computed\":%lld", 16 - kept);
  cr_expect_not_null(strstr(line, want), "%s in %s", want, line);
  support_run_clear(&r);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results"), 16);
  cr_expect_eq(
      support_sql_int(db, "SELECT count(DISTINCT point_key) FROM results"), 16);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM runs"), 2);
}

/* geodes sweep with this file content exits with status; stderr holds
 * "s.json:LINE:" and needle. */
static void bad_file(const char *text, int line, const char *needle) {
  const char *sw = support_write_file(support_path("bad.json"), text);
  support_run r = {0};
  char where[200];
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("bad.db")),
               1, "%s", text);
  snprintf(where, sizeof where, "%s:%d: ", sw, line);
  cr_expect_not_null(strstr(r.err, where), "'%s' in '%s'", where, r.err);
  cr_expect_not_null(strstr(r.err, needle), "'%s' in '%s'", needle, r.err);
  support_run_clear(&r);
}

/* "gpus": two rows per point that differ in key and gpu; the A100 computes
 * faster by the ratio of sustained FLOP/s of spec.h (the rest of an
 * iteration is the same network), so its iteration is shorter; absent gpus
 * store the scenario's own GPU. */
Test(sweep_cli, gpus_give_a_row_per_gpu) {
  const char *sw = support_path("g.json"), *db = support_path("g.db");
  support_write_file(sw, "{\"scenarios\": \"" THREE_SITES ".json\",\n"
                         " \"networks\": [\"ideal\", \"tcp\"],\n"
                         " \"gpus\": [\"V100\", \"A100\"]}\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(DISTINCT point_key) FROM "
                                   "results"),
               4);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "point_key LIKE '% gpu=A100 %' AND gpu = "
                                   "'A100'"),
               2);
  /* The A100's forward and backward take at least the smaller of its peak
   * and bandwidth ratios to the V100's (each roofline operation scales by
   * one of them); the optimizer step (DT-FM's, on the host) does not
   * shrink: between. */
  const spec_gpu *v = spec_gpu_find("V100"), *a = spec_gpu_find("A100");
  double ratio = fmin(v->peak_flops / a->peak_flops,
                      v->mem_bw_bytes_s / a->mem_bw_bytes_s);
  char q[512];
  snprintf(q, sizeof q,
           "SELECT count(*) FROM results a JOIN results v ON a.network_model "
           "= v.network_model AND a.gpu = 'A100' AND v.gpu = 'V100' WHERE "
           "a.iteration_s < v.iteration_s AND a.events = v.events AND "
           "a.compute_s / v.compute_s > %.17g AND a.compute_s < v.compute_s",
           ratio);
  cr_expect_eq(support_sql_int(db, q), 2, "%s", q);
  /* Absent gpus: the scenario's own, named in the row, not in the key. */
  support_write_file(sw, "{\"scenarios\": \"" THREE_SITES ".json\"}\n");
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, db), 0,
               "%s", r.err);
  cr_expect_not_null(strstr(r.out, "\"computed\":1"), "%s", r.out);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "point_key LIKE '% gpu=- %' AND gpu = "
                                   "'V100'"),
               1);
  support_run_clear(&r);
}

/* Sites of different GPUs: the row names each, in site order. */
Test(sweep_cli, mixed_sites_are_labelled) {
  char *text = support_read_file(THREE_SITES ".json", NULL);
  const char *site = "{\"name\": \"c\", \"devices\": 2, \"gpu\": \"V100\"";
  char *c = strstr(text, site), *csv = strstr(text, "\"three-sites.csv\"");
  cr_assert(c && csv, "the fixture changed");
  memcpy(strstr(c, "V100"), "A100", 4);
  *csv = '\0';
  char mixed[4096];
  snprintf(mixed, sizeof mixed, "%s\"%s.csv\"%s", text, THREE_SITES,
           csv + strlen("\"three-sites.csv\""));
  free(text);
  const char *sc = support_write_file(support_path("mixed.json"), mixed);
  const char *sw = support_path("m.json"), *db = support_path("m.db");
  char body[512];
  snprintf(body, sizeof body, "{\"scenarios\": \"%s\", \"gpus\": "
           "[\"h100\"], \"networks\": \"ideal\"}", sc);
  support_write_file(sw, body);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  snprintf(body, sizeof body, "{\"scenarios\": \"%s\", \"networks\": "
           "\"ideal\"}", sc);
  support_write_file(sw, body);
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "gpu = 'V100,A100'"),
               1);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
                                   "gpu = 'H100'"),
               1);
  support_run_clear(&r);
}

/* A results store of schema version 1 (no gpu column; keys without the
 * GPU): refused with exit 1, naming the file, and left byte-identical. */
Test(sweep_cli, older_database_is_refused_untouched) {
  const char *db = support_path("v1.db"), *sw = support_path("v.json");
  support_write_file(sw, "{\"scenarios\": \"" THREE_SITES ".json\"}\n");
  cr_assert_eq(
      support_sh(NULL,
                 "sqlite3 '%s' 'PRAGMA application_id = %d; PRAGMA "
                 "user_version = 1; CREATE TABLE runs(id INTEGER PRIMARY KEY,"
                 " started_at TEXT); CREATE TABLE results(id INTEGER PRIMARY "
                 "KEY, point_key TEXT UNIQUE, iteration_s REAL); INSERT INTO "
                 "results VALUES(1, \"sweep scenario=x\", 2.5)'",
                 db, 0x67656f64),
      0);
  size_t before_len, after_len;
  char *before = support_read_file(db, &before_len);
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 1);
  char want[300];
  snprintf(want, sizeof want, "%s: geodes results store of schema version 1",
           db);
  cr_expect_not_null(strstr(r.err, want), "'%s' in '%s'", want, r.err);
  char *after = support_read_file(db, &after_len);
  cr_expect(before_len == after_len && !memcmp(before, after, before_len),
            "the older database was modified");
  free(before), free(after);
  support_run_clear(&r);
}

Test(sweep_cli, bad_files_name_file_and_line) {
  bad_file("{\"layers\": [24],\n \"bandwith_scale\": [1]}", 2,
           "bandwith_scale");
  bad_file("{\"scenarios\": [\"worldwide\",\n\"atlantis\"]}", 1, "atlantis");
  bad_file("{\n\"seeds\": [1, -2]}", 2, "seeds");
  bad_file("{\"layers\": 24,\n}", 2, "");
  bad_file("{\"layers\": 8,\n \"gpus\": [\"V100\",\n \"B200\"]}", 2,
           "unknown GPU 'B200'");
  /* A knob that failed only when each point was built: now at its line,
   * before any point runs. */
  bad_file("{\n\"batch\": 1000}", 2, "batch: worldwide: workload.batch: "
           "1000 is not a multiple of D_dp * m * K = 8 * 1 * 64");
  bad_file("{\"layers\": 8,\n\"micro_batch\": [1, 3]}", 2,
           "micro_batch: worldwide: workload.batch: 1024 is not a multiple");
  bad_file("{\n\n\"layers\": [24, 4]}", 3,
           "layers: worldwide: workload.layers: 4 is fewer than the 8 stages");
  bad_file("{\"batch\": [1024,\n 25165824]}", 1,
           "batch: worldwide: workload.batch: 25165824 sequences over 8 x 8 "
           "devices under central-ps need up to");
  bad_file("{\"scenarios\": [\"worldwide\"],\n\"bandwidth_scale\": [1, "
           "1e-9]}", 2, "bandwidth_scale: worldwide: latency scale 1 and "
           "bandwidth scale 1e-09");
}

Test(sweep_cli, usage_and_database_errors) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "sweep"), 2);
  cr_expect_eq(support_geodes(&r, "sweep x.json --jobs 0"), 2);
  cr_expect_not_null(strstr(r.err, "--jobs"));
  cr_expect_eq(support_geodes(&r, "sweep x.json --frobnicate"), 2);
  cr_expect_eq(support_geodes(&r, "sweep --help"), 0);
  cr_expect_eq(support_geodes(&r, "sweep '%s'", support_path("missing.json")),
               1);
  cr_expect_not_null(strstr(r.err, "missing.json"), "%s", r.err);
  const char *sw = support_path("ok.json"), *foreign = support_path("notes.db");
  support_write_file(sw, "{\"layers\": 8}");
  support_write_file(foreign, "my notes, not a database\n");
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, foreign), 1);
  cr_expect_not_null(strstr(r.err, foreign), "%s", r.err);
  support_run_clear(&r);
}

/* Starts `geodes sweep` on 160 points in a child (stderr to a file), sends
 * sig once some rows are committed, and returns the child's wait status;
 * *kept gets the rows in the database after it ended. */
static int signal_mid_sweep(const char *sw, const char *db, const char *jobs,
                            int sig, long long *kept) {
  const char *errs = support_path("sig.err"); /* the child's would differ */
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    freopen(errs, "w", stderr);
    freopen("/dev/null", "w", stdout);
    signal(SIGINT, SIG_DFL); /* whatever this test process was given */
    execl(GEODES_BIN, "geodes", "sweep", sw, "--db", db, "--batch", "1",
          "--jobs", jobs, (char *)NULL);
    _exit(127);
  }
  long long rows = 0;
  for (int i = 0; i < 30000 && rows < 2; i++) { /* poll, <= 60 s */
    sleep_ms(2);
    rows = support_sql_int(db, "SELECT count(*) FROM results");
  }
  kill(pid, sig);
  int status;
  waitpid(pid, &status, 0);
  *kept = support_sql_int(db, "SELECT count(*) FROM results");
  return status;
}

/* SIGINT (^C) or SIGTERM: the sweep commits what it has, marks its run
 * "interrupted", says how to resume and exits 128 + the signal; the same
 * command then computes exactly the missing points. Inline and forked. */
static void interrupt_then_resume(const char *jobs, int sig) {
  const char *sw = support_path("i.json"), *db = support_path("i%s.db", jobs);
  support_write_file(sw,
                     "{\"methods\": [\"dtfm-identity\", \"megatron\"],\n"
                     " \"networks\": [\"netem\", \"tcp\"], \"layers\": 8,\n"
                     " \"seeds\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                     "13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, "
                     "26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, "
                     "39, 40]}\n");
  long long kept;
  int status = signal_mid_sweep(sw, db, jobs, sig, &kept);
  char *msg = support_read_file(support_path("sig.err"), NULL);
  cr_assert(WIFEXITED(status), "killed by signal %d instead of stopping: %s",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0, msg);
  cr_expect_eq(WEXITSTATUS(status), 128 + sig, "%s", msg);
  cr_expect(kept >= 2 && kept < 160, "%lld rows kept", kept);
  char want[128];
  snprintf(want, sizeof want, "%lld of 160 points are in", kept);
  cr_expect(strstr(msg, "interrupted") && strstr(msg, want), "%s", msg);
  free(msg);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM runs WHERE status "
                                   "= 'interrupted' AND finished_at IS NOT "
                                   "NULL"),
               1);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, db), 0,
               "%s", r.err);
  snprintf(want, sizeof want, "\"computed\":%lld", 160 - kept);
  cr_expect_not_null(strstr(r.out, want), "%s in %s", want, r.out);
  cr_expect_eq(
      support_sql_int(db, "SELECT count(DISTINCT point_key) FROM results"),
      160);
  /* issue 35, 6: the resumed store holds the rows of one uninterrupted
   * sweep, value for value */
  const char *ref = support_path("ref%s.db", jobs);
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, ref), 0, "%s",
               r.err);
  char *a = dump(db), *b = dump(ref);
  cr_expect_str_eq(a, b, "the resumed rows differ from an uninterrupted "
                   "sweep's");
  free(a), free(b);
  support_run_clear(&r);
}

Test(sweep_cli, sigint_stops_cleanly_inline) {
  interrupt_then_resume("1", SIGINT);
}
Test(sweep_cli, sigterm_stops_cleanly_jobs) {
  interrupt_then_resume("2", SIGTERM);
}

/* A folder as the sweep file: fopen took it and fread failed; the length
 * was then (size_t)-1 and the parser read past the buffer. Now a clean
 * error naming what the path is. */
Test(sweep_cli, folder_as_sweep_file) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", support_dir(),
                              support_path("f.db")),
               1);
  cr_expect(strstr(r.err, support_dir()) && strstr(r.err, "a folder, not a regular file"),
            "%s", r.err);
  support_run_clear(&r);
}

static const char CHEAP_MPI[] = "{\"networks\": \"ideal\", \"layers\": 8}";

/* A bad sweep under mpirun: rank 0 says why once and every rank exits 1,
 * without MPI_Abort's banner (rank 1 used to abort the job). */
Test(sweep_cli, mpi_bad_file_fails_once) {
  if (!support_has_mpirun())
    cr_skip_test("mpirun is not installed");
  const char *sw = support_write_file(
      support_path("bad-mpi.json"), "{\"scenarios\": [\"atlantis\"]}\n");
  support_run r = {0};
  cr_expect_neq(support_geodes_mpi(&r, "sweep '%s' --db '%s'", sw,
                                   support_path("bad-mpi.db")),
                0);
  char want[300];
  snprintf(want, sizeof want, "%s:1: scenarios: atlantis", sw);
  const char *first = strstr(r.err, want);
  cr_expect(first && !strstr(first + 1, want), "once: %s", r.err);
  cr_expect_null(strstr(r.err, "MPI_ABORT"), "%s", r.err);
  support_run_clear(&r);
}

/* geodes itself is not linked with Open MPI (its start-up loads none of
 * MPI's libraries); under mpirun, `geodes sweep` execs geodes-mpi from its
 * folder (mpi_two_ranks_equal_one_process shows the ranks at work), and
 * when that is missing it says so and exits 1. */
Test(sweep_cli, geodes_without_mpi_execs_geodes_mpi) {
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "ldd '%s'", GEODES_BIN), 0, "%s", r.err);
  cr_expect_null(strstr(r.out, "libmpi"), "%s", r.out);
  cr_expect_null(strstr(r.out, "libopen-pal"), "%s", r.out);
  const char *alone = support_path("alone");
  cr_assert_eq(support_sh(&r, "mkdir '%s' && cp '%s' '%s/geodes'", alone,
                          GEODES_BIN, alone),
               0, "%s", r.err);
  const char *sw = support_write_file(support_path("m.json"), CHEAP_MPI);
  cr_expect_eq(support_sh(&r, "OMPI_COMM_WORLD_SIZE=1 '%s/geodes' sweep '%s' "
                              "--db '%s'",
                          alone, sw, support_path("m.db")),
               1);
  cr_expect(strstr(r.err, "geodes-mpi is not beside this geodes"), "%s",
            r.err);
  support_run_clear(&r);
}

static const char CHEAP_A[] =
    "{\"networks\": \"ideal\", \"layers\": 8, \"seeds\": [1, 2, 3]}";
static const char CHEAP_B[] =
    "{\"networks\": \"ideal\", \"layers\": 8, \"seeds\": [4, 5, 6, 7]}";

/* Two sweeps started at one moment on a new database: one of them always
 * failed (journal_mode without the busy timeout, or both creating the
 * schema), with a message of 1,024 characters of CREATE TABLE. Several
 * rounds, since the race is a race; all must succeed. */
Test(sweep_cli, two_sweeps_start_on_one_new_database) {
  const char *a = support_write_file(support_path("a.json"), CHEAP_A);
  const char *b = support_write_file(support_path("b.json"), CHEAP_B);
  support_run r = {0};
  for (int round = 0; round < 6; round++) {
    const char *db = support_path("race%d.db", round);
    cr_assert_eq(support_sh(&r,
                            "( '%s' sweep '%s' --db '%s' >/dev/null; echo a=$? "
                            ") & ( '%s' sweep '%s' --db '%s' >/dev/null; echo "
                            "b=$? ) & wait",
                            GEODES_BIN, a, db, GEODES_BIN, b, db),
                 0);
    cr_expect(strstr(r.out, "a=0") && strstr(r.out, "b=0"),
              "round %d: %s\n%s", round, r.out, r.err);
    cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results"), 7,
                 "round %d", round);
    cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM runs WHERE "
                                     "status = 'ok'"), 2, "round %d", round);
  }
  support_run_clear(&r);
}

/* A write-protected database was "not a readable SQLite database". Root
 * writes anything, so there the command runs as nobody (setpriv). */
Test(sweep_cli, read_only_database_is_called_so) {
  const char *as = "";
  if (geteuid() == 0) {
    if (support_sh(NULL, "command -v setpriv") != 0)
      cr_skip_test("running as root without setpriv");
    as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    cr_assert_eq(support_sh(NULL, "chmod 0711 '%s'", support_dir()), 0);
  }
  const char *open_dir = support_path("open"), *shut = support_path("shut");
  cr_assert_eq(support_sh(NULL, "mkdir -m 0777 '%s' && mkdir -m 0755 '%s'",
                          open_dir, shut), 0);
  const char *sw = support_write_file(support_path("open/s.json"), CHEAP_A);
  const char *ro = support_path("open/ro.db"), *fixed = support_path("shut/f.db");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, ro), 0, "%s",
               r.err);
  cr_assert_eq(support_sh(NULL, "cp '%s' '%s' && chmod 0444 '%s' && chmod "
                          "0666 '%s' && chmod 0644 '%s'",
                          ro, fixed, ro, fixed, sw), 0);
  cr_expect_eq(support_sh(&r, "%s'%s' sweep '%s' --db '%s'", as, GEODES_BIN,
                          sw, ro), 1, "%s", r.err);
  cr_expect(strstr(r.err, "ro.db: read-only (no permission to write it)"),
            "%s", r.err);
  cr_expect_eq(support_sh(&r, "%s'%s' sweep '%s' --db '%s'", as, GEODES_BIN,
                          sw, fixed), 1, "%s", r.err);
  cr_expect(strstr(r.err, "f.db: its folder") &&
                strstr(r.err, "shut is not writable"),
            "%s", r.err);
  support_run_clear(&r);
}

/* iteration_s of the one row of db. */
static double only_iteration(const char *db) {
  support_run r = {0};
  support_sh(&r, "sqlite3 '%s' 'SELECT iteration_s FROM results'", db);
  double v = atof(r.out);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results"), 1);
  support_run_clear(&r);
  return v;
}

/* iteration_s of `geodes simulate SCENARIO --method dtfm-identity`. */
static double simulated(const char *path) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--json", path), 0, "%s", r.err);
  const char *at = strstr(r.out, "\"iteration_s\":");
  cr_assert_not_null(at, "%s", r.out);
  double v = atof(at + strlen("\"iteration_s\":"));
  support_run_clear(&r);
  return v;
}

/* Sweeps the one-point file sw into db; expects status 0 and want in the
 * summary line. */
static void sweep_once(const char *sw, const char *db, const char *want) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_expect(strstr(r.out, want), "'%s' in '%s'", want, r.out);
  support_run_clear(&r);
}

/* The point's key held the scenario's path, not its content: after the file
 * was edited (bandwidth 1 -> 0.1) a re-run said "1 already in db" and kept
 * the old time. Now the row is stale, recomputed and replaced. */
Test(sweep_cli, an_edited_scenario_is_recomputed) {
  const char *sc = support_path("edit.json"), *db = support_path("edit.db");
  const char *sw = support_path("edit_sweep.json");
  static const char fmt[] =
      "{\"name\": \"edit\", \"sites\": [{\"name\": \"a\", \"devices\": 4}],\n"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": %s},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8,\n"
      "  \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}\n";
  char text[600];
  snprintf(text, sizeof text, fmt, "1");
  support_write_file(sc, text);
  char body[600];
  snprintf(body, sizeof body, "{\"scenarios\": [\"%s\"]}", sc);
  support_write_file(sw, body);
  sweep_once(sw, db, "0 already in");
  double before = only_iteration(db);
  cr_expect_float_eq(before, simulated(sc), 1e-9 * before);
  sweep_once(sw, db, "1 already in"); /* unchanged: nothing to do */
  snprintf(text, sizeof text, fmt, "0.1");
  support_write_file(sc, text);
  sweep_once(sw, db, "0 already in");
  double after = only_iteration(db);
  cr_expect_gt(after, 1.5 * before, "%g s, then %g s", before, after);
  cr_expect_float_eq(after, simulated(sc), 1e-9 * after);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, db), 0);
  cr_expect(strstr(r.out, "\"present\":1,\"stale\":0,\"computed\":0"), "%s",
            r.out);
  support_run_clear(&r);
}

/* The same for the trace file a scenario names: its content counts. */
Test(sweep_cli, an_edited_trace_is_recomputed) {
  const char *dir = support_path("three");
  cr_assert_eq(support_sh(NULL, "mkdir '%s' && cp '%s.json' '%s.csv' '%s'",
                          dir, THREE_SITES, THREE_SITES, dir), 0);
  const char *sw = support_path("three_sweep.json");
  const char *db = support_path("three.db");
  char body[600];
  snprintf(body, sizeof body, "{\"scenarios\": [\"%s/three-sites.json\"]}",
           dir);
  support_write_file(sw, body);
  sweep_once(sw, db, "0 already in");
  double before = only_iteration(db);
  /* a comment changes nothing the simulation reads */
  cr_assert_eq(support_sh(NULL, "sed -i '1i # edited' '%s/three-sites.csv'",
                          dir), 0);
  sweep_once(sw, db, "1 already in");
  cr_assert_eq(support_sh(NULL, "sed -i 's/,10$/,1/' '%s/three-sites.csv'",
                          dir), 0);
  sweep_once(sw, db, "1 stale there");
  cr_expect_neq(only_iteration(db), before);
}

/* The rows of a training sweep: results' run columns, every iteration and
 * every mark, by key. */
static char *dump_runs(const char *db) {
  return support_sql_text(
      db, "SELECT point_key, identity, iterations, faults, recovery, "
          "checkpoint_every, total_s, samples_per_s, lost_s, iteration_s, "
          "events FROM results ORDER BY point_key; SELECT r.point_key, i.idx, "
          "i.start_s, i.iteration_s, i.lost_s, i.lost_redone_s, "
          "i.lost_checkpoint_s, i.lost_waiting_s, i.lost_reloading_s, "
          "i.lost_migration_s, i.replicas, i.samples FROM iterations i JOIN "
          "results r ON r.id = i.result_id ORDER BY r.point_key, i.idx; "
          "SELECT r.point_key, m.t_s, m.kind, m.what FROM marks m JOIN "
          "results r ON r.id = m.result_id ORDER BY r.point_key, m.t_s, "
          "m.kind");
}

/* A sweep of training runs with faults: one process, two forked jobs and
 * two MPI ranks store the same rows, iterations and marks; a re-run
 * computes nothing; a sweep without the training keys keeps its keys. */
Test(sweep_cli, runs_with_faults_are_deterministic_across_jobs_and_mpi) {
  const char *f = support_path("f.csv"), *sw = support_path("t.json");
  support_write_file(f, "# source: test\nt_s,event,target,duration_s,factor\n"
                        "50,device_down,5,60,\n70,link_slow,Tokyo:Seoul,40,"
                        "0.25\n90,device_slow,9,30,0.5\n");
  char text[512];
  snprintf(text, sizeof text,
           "{\"scenarios\": [\"worldwide-varying\"], \"methods\": "
           "[\"dtfm-identity\"], \"networks\": [\"netem\", \"tcp\"], "
           "\"iterations\": 4, \"faults\": [\"%s\"], \"recovery\": "
           "[\"restart\", \"reroute\", \"replan\"], \"checkpoint_every\": 2}\n",
           f);
  support_write_file(sw, text);
  const char *one = support_path("r1.db"), *jobs = support_path("r2.db"),
             *mpi = support_path("r3.db");
  support_sweep_three_ways(sw, "", one, jobs, mpi, dump_runs);
  support_run r = {0};
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM results"), 6);
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM iterations"), 24);
  cr_expect_gt(support_sql_int(one, "SELECT count(*) FROM marks WHERE kind = "
                                    "'trace'"), 0);
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM marks WHERE kind = "
                                    "'device_down' AND what = '5'"), 6);
  cr_expect_gt(support_sql_int(one, "SELECT count(*) FROM results WHERE "
                                    "lost_s > 0"), 0);
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --json", sw, one), 0,
               "%s", r.err);
  cr_expect_not_null(strstr(first_line(&r), "\"computed\":0"), "%s", r.out);
  /* a bad fault file fails at the faults key, naming its own line */
  support_write_file(f, "t_s,event,target,duration_s,factor\n"
                        "5,device_down,64,10,\n");
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("bad.db")), 1);
  char want[256];
  snprintf(want, sizeof want, "%s:1: faults: %s:2: target: device 64 is not "
           "in scenario worldwide-varying", sw, f);
  cr_expect_not_null(strstr(r.err, want), "%s", r.err);
  support_run_clear(&r);
}

/* Issue 18: a row states the transport that ran (schema 7): NCCL's sockets
 * to a peer, least and most over the sites (volunteer-mix mixes volunteers'
 * one socket with AWS's 16), the default model and window, no restart. */
Test(sweep_cli, rows_state_their_transport) {
  const char *sw = support_write_file(support_path("t.json"),
      "{\"scenarios\": [\"worldwide\", \"volunteer-mix\"]}");
  const char *db = support_path("t.db");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 0, "%s",
               r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
               "scenario = 'worldwide' AND network_model = 'tcp' AND "
               "p2p_sockets_min = 16 AND p2p_sockets_max = 16 AND "
               "collective_sockets_min >= 16 AND idle_restart = 0 AND "
               "window_bytes = 1450000"), 1);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM results WHERE "
               "scenario = 'volunteer-mix' AND p2p_sockets_min = 1 AND "
               "p2p_sockets_max = 16 AND collective_sockets_min <= "
               "collective_sockets_max"), 1);
  support_run_clear(&r);
}

/* Issue 24, 11: a row is identical field by field however it was computed
 * (one process, --jobs, MPI), for rows of every kind: one iteration, a
 * training run, DiLoCo, and a user's cost model (--cost-cmd). Every column
 * of DB_RESULT_MAP is compared (support_dump_results). */
Test(sweep_cli, every_kind_of_row_is_identical_across_jobs_and_mpi) {
  const char *kinds[] = {
      "{\"scenarios\": [\"regional\"], \"networks\": [\"netem\", \"tcp\"]}",
      "{\"scenarios\": [\"regional\"], \"iterations\": 3}",
      "{\"scenarios\": [\"regional\"], \"dp_algo\": \"diloco\", "
      "\"inner_steps\": [10, 20]}",
  };
  for (int k = 0; k < 4; k++) {
    const char *sw = support_write_file(support_path("k%d.json", k),
                                        kinds[k < 3 ? k : 0]);
    char cmd[256] = "";
    if (k == 3)
      snprintf(cmd, sizeof cmd, "--cost-cmd 'python3 %s/analysis/"
               "cost_alphabeta.py'", GEODES_SOURCE_DIR);
    const char *one = support_path("one%d.db", k), *jobs = support_path(
                                                       "jobs%d.db", k),
               *mpi = support_path("mpi%d.db", k);
    support_sweep_three_ways(sw, cmd, one, jobs, mpi, support_dump_results);
    /* every kind fills the figures simulate --json reports (a training
     * run's row had no utilisation nor bytes) */
    cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM results WHERE "
                 "compute_utilisation IS NULL OR pp_bytes IS NULL OR "
                 "samples_per_s IS NULL OR sockets IS NULL OR runtime IS "
                 "NULL"), 0, "kind %d", k);
  }
}

/* Issue 24, 14: values that no point can run are refused before the first
 * point and before the store is opened, at the sweep file's key. */
Test(sweep_cli, impossible_values_fail_before_any_point) {
  struct { const char *body, *where; } bad[] = {
      {"\"grad_bits\": [16, 5]", ":2: grad_bits: "},
      {"\"activation_bits\": [3]", ":2: activation_bits: "},
      {"\"inner_steps\": [50]", ":2: inner_steps: "},
      {"\"dp_algo\": \"diloco\",\n \"fragments\": [2]", ":3: fragments: "},
      {"\"dp_algo\": \"streaming-diloco\", \"fragments\": [4],\n "
       "\"overlap_steps\": [30]", ":3: overlap_steps: "},
      {"\"dp_algo\": \"diloco\", \"iterations\": 2", ":2: dp_algo: "}};
  support_run r = {0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[256];
    snprintf(text, sizeof text, "{\"scenarios\": [\"worldwide\"],\n %s}\n",
             bad[i].body);
    const char *sw = support_write_file(support_path("bad.json"), text);
    const char *db = support_path("bad%zu.db", i);
    cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw, db), 1, "%s",
                 bad[i].body);
    char want[512];
    snprintf(want, sizeof want, "geodes: %s%s", sw, bad[i].where);
    cr_expect(strncmp(r.err, want, strlen(want)) == 0, "want '%s' in %s",
              want, r.err);
    cr_expect(access(db, F_OK) != 0, "no store opened for %s", bad[i].body);
  }
  support_run_clear(&r);
}
