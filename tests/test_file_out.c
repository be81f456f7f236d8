/* test_file_out: the one writer of geodes's files (base/file_out.h), case
 * by case of what is at the path — nothing, a regular file (its mode kept),
 * a symbolic link to a file, a dangling link or a chain of them, a loop of
 * links, a folder, a device, a FIFO, an input of the same run, a file the
 * run wrote, another output open on the same file, an empty name, a full
 * device — then every writer of the command line walked through the same
 * cases, and a signal during a write, a training run and a search: every
 * file is left complete or absent, no temporary stays. */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/file_out.h"
#include "tests/support.h"

TestSuite(file_out, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

/* How many temporaries of target (target.XXXXXX) exist. */
static size_t temporaries(const char *target) {
  char pattern[1100];
  snprintf(pattern, sizeof pattern, "%.1024s.??????", target);
  glob_t g;
  size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
  globfree(&g);
  return n;
}

/* Writes text to path through file_out, keeping it; the status. */
static int put(const char *path, const char *text, err *e) {
  file_out o;
  int rc = file_out_open(&o, path, "the test file", e);
  if (rc) return rc;
  fputs(text, o.f);
  return file_out_close(&o, true, e);
}

static bool is_link(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static void expect_text(const char *path, const char *want) {
  char *got = support_read_file(path, NULL);
  cr_expect_str_eq(got, want, "%s", path);
  free(got);
}

Test(file_out, a_new_file_and_a_replaced_one_keep_their_modes) {
  err e = {0};
  const char *p = support_path("new.txt");
  mode_t um = umask(022);
  cr_assert_eq(put(p, "one\n", &e), ERR_OK, "%s", e.msg);
  umask(um);
  struct stat st;
  cr_assert_eq(stat(p, &st), 0);
  cr_expect_eq(st.st_mode & 07777, 0644, "a new file: 0666 less the umask");
  expect_text(p, "one\n");
  const char *q = support_write_file(support_path("old.txt"), "old\n");
  cr_assert_eq(chmod(q, 0640), 0);
  cr_assert_eq(put(q, "two\n", &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(stat(q, &st), 0);
  cr_expect_eq(st.st_mode & 07777, 0640, "the replaced file's mode");
  expect_text(q, "two\n");
  cr_expect_eq(temporaries(p) + temporaries(q), 0);
}

/* Issue 35, 7: a dangling link was replaced by a regular file. */
Test(file_out, links_stay_links_dangling_or_not) {
  err e = {0};
  const char *target = support_write_file(support_path("target"), "old\n");
  const char *link = support_path("link");
  cr_assert_eq(symlink("target", link), 0);
  cr_assert_eq(put(link, "via link\n", &e), ERR_OK, "%s", e.msg);
  cr_expect(is_link(link));
  expect_text(target, "via link\n");
  const char *dangling = support_path("dangling");
  cr_assert_eq(mkdir(support_path("sub"), 0700), 0);
  cr_assert_eq(symlink("sub/made", dangling), 0);
  cr_assert_eq(put(dangling, "made\n", &e), ERR_OK, "%s", e.msg);
  cr_expect(is_link(dangling), "the dangling link stays a link");
  expect_text(support_path("sub/made"), "made\n");
  /* a chain: first -> second -> ../chained (relative to each link) */
  cr_assert_eq(symlink("sub/second", support_path("first")), 0);
  cr_assert_eq(symlink("../chained", support_path("sub/second")), 0);
  cr_assert_eq(put(support_path("first"), "chain\n", &e), ERR_OK, "%s", e.msg);
  cr_expect(is_link(support_path("first")) &&
            is_link(support_path("sub/second")));
  expect_text(support_path("chained"), "chain\n");
  cr_expect_eq(temporaries(support_path("sub/made")) +
                   temporaries(support_path("chained")), 0);
  /* a loop: refused with the kernel's reason */
  cr_assert_eq(symlink("loop_b", support_path("loop_a")), 0);
  cr_assert_eq(symlink("loop_a", support_path("loop_b")), 0);
  err_clear(&e);
  cr_expect_eq(put(support_path("loop_a"), "x", &e), ERR_IO);
  cr_expect(strstr(e.msg, "Too many levels of symbolic links"), "%s", e.msg);
}

Test(file_out, folders_refused_devices_and_pipes_written_through) {
  err e = {0};
  char want[1024];
  cr_expect_eq(put(support_dir(), "x", &e), ERR_IO);
  snprintf(want, sizeof want, "%s: cannot write the test file: a folder "
           "(name a file to write)", support_dir());
  cr_expect_str_eq(e.msg, want);
  err_clear(&e);
  cr_expect_eq(put("/dev/null", "x", &e), ERR_OK, "%s", e.msg);
  struct stat st;
  cr_expect(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
    cr_expect_eq(put("/dev/full", "x", &e), ERR_IO);
    cr_expect_str_eq(e.msg, "/dev/full: cannot write the test file: No space "
                     "left on device");
  }
  err_clear(&e);
  cr_expect_eq(put("", "x", &e), ERR_IO);
  cr_expect_str_eq(e.msg, "an empty file name for the test file");
  /* a descriptor's name (a shell's redirection of stdout): through, the
   * file it has open stays the one written */
  const char *redirected = support_write_file(support_path("fd.txt"), "");
  FILE *held = fopen(redirected, "r");
  cr_assert_not_null(held);
  struct stat before, after;
  cr_assert_eq(fstat(fileno(held), &before), 0);
  char fdname[64];
  snprintf(fdname, sizeof fdname, "/dev/fd/%d", fileno(held));
  err_clear(&e);
  cr_expect_eq(put(fdname, "via fd\n", &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(stat(redirected, &after), 0);
  cr_expect_eq(before.st_ino, after.st_ino, "the same file, not a new one");
  fclose(held);
  expect_text(redirected, "via fd\n");
  const char *fifo = support_path("pipe"), *drained = support_path("drained");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "cat \"$0\" > \"$1\"", fifo, drained,
          (char *)NULL);
    _exit(127);
  }
  err_clear(&e);
  cr_expect_eq(put(fifo, "through\n", &e), ERR_OK, "%s", e.msg);
  int status;
  waitpid(pid, &status, 0);
  expect_text(drained, "through\n");
  cr_expect(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "still a FIFO");
}

/* An input of the run, a file the run wrote, or a file another open output
 * will replace is never overwritten: by its name, a link's or its own. */
Test(file_out, the_runs_own_files_are_refused) {
  err e = {0};
  const char *in = support_write_file(support_path("in.json"), "{}\n");
  size_t len;
  free(file_read(in, FILE_MAX_BYTES, &len, NULL));
  const char *alias = support_path("alias.json");
  cr_assert_eq(symlink(in, alias), 0);
  char want[1024];
  const char *paths[] = {in, alias};
  for (int k = 0; k < 2; k++) {
    err_clear(&e);
    cr_expect_eq(put(paths[k], "over\n", &e), ERR_IO);
    snprintf(want, sizeof want, "%s: cannot write the test file: it is an "
             "input of this command (name another file)", paths[k]);
    cr_expect_str_eq(e.msg, want);
  }
  expect_text(in, "{}\n");
  const char *out = support_path("out.txt");
  err_clear(&e);
  cr_assert_eq(put(out, "first\n", &e), ERR_OK, "%s", e.msg);
  cr_expect_eq(put(out, "second\n", &e), ERR_IO);
  snprintf(want, sizeof want, "%s: cannot write the test file: this command "
           "wrote it already (name another file)", out);
  cr_expect_str_eq(e.msg, want);
  expect_text(out, "first\n");
  /* two open outputs on one new file, one by a path with a "./" in it */
  file_out a, b;
  err_clear(&e);
  cr_assert_eq(file_out_open(&a, support_path("both.txt"), "the first", &e),
               ERR_OK, "%s", e.msg);
  const char *other = support_path("./both.txt");
  cr_expect_eq(file_out_open(&b, other, "the second", &e), ERR_IO);
  snprintf(want, sizeof want, "%s: cannot write the second: another output "
           "of this command goes there (name another file)", other);
  cr_expect_str_eq(e.msg, want);
  cr_expect_eq(file_out_close(&a, false, NULL), ERR_OK);
  cr_expect(access(support_path("both.txt"), F_OK) != 0, "discarded");
  cr_expect_eq(temporaries(support_path("both.txt")), 0);
}

/* What a signal handler calls: the open temporary goes, the old file
 * stays; the output can still be closed after. */
Test(file_out, abandon_removes_the_temporary) {
  const char *p = support_write_file(support_path("kept.txt"), "old\n");
  file_out o;
  err e = {0};
  cr_assert_eq(file_out_open(&o, p, "the test file", &e), ERR_OK);
  fputs("half", o.f);
  fflush(o.f);
  cr_expect_eq(temporaries(p), 1);
  file_out_abandon();
  cr_expect_eq(temporaries(p), 0);
  expect_text(p, "old\n");
  file_out_close(&o, false, NULL);
  expect_text(p, "old\n");
}

/* ---- every writer of the command line ---- */

/* A command that writes one file: %1$s its input (a file it reads), %2$s
 * the output; what its messages call the output. */
typedef struct writer {
  const char *args, *what;
  const char *input; /* "scenario", "trace" or "rows": which input file */
} writer;

static const writer writers[] = {
    {"scenarios --export '%1$s' -o '%2$s'", "the scenario", "scenario"},
    {"faults synth '%1$s' --duration-s 1000 --seed 1 -o '%2$s'",
     "the fault trace", "scenario"},
    {"trace synth --base '%1$s' --duration-s 60 --step-s 10 --seed 1 -o "
     "'%2$s'", "the network trace", "trace"},
    {"calibrate --data '%1$s' --fit site_compute_efficiency --folds 0 -o "
     "'%2$s'", "the parameters", "rows"},
    {"schedule '%1$s' --method random-search --trials 2 -o '%2$s'",
     "the allocation", "scenario"},
    {"schedule '%1$s' --method random-search --trials 2 --convergence '%2$s'",
     "the convergence", "scenario"},
    {"schedule '%1$s' --shape auto --stages 4 --replicas 2 -o '%2$s'",
     "the allocation", "scenario"},
    {"simulate '%1$s' --method dtfm-identity --layers 8 --timeline '%2$s'",
     "the timeline", "scenario"},
    {"simulate '%1$s' --method dtfm-identity --layers 8 --iterations 2 "
     "--timeline '%2$s'", "the timeline", "scenario"},
    {"explain '%1$s' --method dtfm-identity --layers 8 --link-stats '%2$s'",
     "the link statistics", "scenario"}};

/* The inputs in folder dir: a scenario, a network trace, measurements. */
static const char *make_input(const char *dir, const char *kind) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/in.%s", dir, kind);
  support_run r = {0};
  if (strcmp(kind, "scenario") == 0)
    cr_assert_eq(support_geodes(&r, "scenarios --export multi-dc -o '%s'",
                                path), 0, "%s", r.err);
  else if (strcmp(kind, "trace") == 0)
    cr_assert_eq(support_geodes(&r, "trace synth --duration-s 20 --step-s 10 "
                                "--seed 2 -o '%s'", path), 0, "%s", r.err);
  else
    support_write_file(path, "scenario,network,layers,batch,measured_s\n"
                       "multi-dc,netem,8,512,8\nmulti-dc,netem,16,512,12\n");
  support_run_clear(&r);
  return path;
}

/* Runs writer w with input in and output out; the exit status. */
static int run_writer(support_run *r, const writer *w, const char *in,
                      const char *out) {
  char args[2048];
  snprintf(args, sizeof args, w->args, in, out);
  return support_geodes(r, "%s", args);
}

static bool written(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* One writer through every case: a new file, a regular file replaced (its
 * mode kept), a link to a file, a dangling link, a folder, a device, an
 * empty name, its own input. No temporary stays behind. */
static void walk(int k) {
  const writer *w = &writers[k];
  const char *dir = support_path("w%d", k);
  cr_assert_eq(mkdir(dir, 0700), 0);
  char in[1024], out[1024], want[1200];
  snprintf(in, sizeof in, "%s", make_input(dir, w->input));
  char *in_text = support_read_file(in, NULL);
  support_run r = {0};
  snprintf(out, sizeof out, "%s/out", dir);
  cr_expect_eq(run_writer(&r, w, in, out), 0, "%s: %s", w->args, r.err);
  cr_expect(written(out), "%s: a new file", w->args);
  support_write_file(out, "old\n");
  cr_assert_eq(chmod(out, 0640), 0);
  cr_expect_eq(run_writer(&r, w, in, out), 0, "%s: %s", w->args, r.err);
  struct stat st;
  cr_expect(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640 &&
                st.st_size > 4, "%s: replaced, mode kept", w->args);
  snprintf(out, sizeof out, "%s/link", dir);
  cr_assert_eq(symlink("target", out), 0);
  support_write_file(support_path("w%d/target", k), "old\n");
  cr_expect_eq(run_writer(&r, w, in, out), 0, "%s: %s", w->args, r.err);
  char *t = support_read_file(out, NULL);
  cr_expect(is_link(out) && strcmp(t, "old\n") != 0 && t[0],
            "%s: through the link", w->args);
  free(t);
  snprintf(out, sizeof out, "%s/dangling", dir);
  cr_assert_eq(symlink("made", out), 0);
  cr_expect_eq(run_writer(&r, w, in, out), 0, "%s: %s", w->args, r.err);
  cr_expect(is_link(out) && written(support_path("w%d/made", k)),
            "%s: a dangling link stays a link, its target made", w->args);
  cr_expect_eq(run_writer(&r, w, in, dir), 1, "%s", w->args);
  snprintf(want, sizeof want, "geodes: %s: cannot write %s: a folder (name a "
           "file to write)\n", dir, w->what);
  cr_expect(strstr(r.err, want), "%s: %s", w->args, r.err);
  cr_expect_eq(run_writer(&r, w, in, "/dev/null"), 0, "%s: %s", w->args,
               r.err);
  cr_expect(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  /* an empty name is the option table's refusal, naming the option (it
   * was "geodes: :0:", then "an empty file name for ...") */
  const char *at = strstr(w->args, " '%2$s'"), *opt = at;
  while (opt && opt > w->args && opt[-1] != ' ') opt--;
  cr_assert(opt && *opt == '-', "%s: the output is an option's", w->args);
  cr_expect_eq(run_writer(&r, w, in, ""), 2, "%s", w->args);
  snprintf(want, sizeof want, "%.*s", (int)(at - opt), opt);
  cr_expect(strstr(r.err, want) && strstr(r.err, ": an empty value\n"),
            "%s: %s", w->args, r.err); /* -o is named -o/--output */
  cr_expect_eq(run_writer(&r, w, in, in), 1, "%s: overwrote its input",
               w->args);
  snprintf(want, sizeof want, "geodes: %s: cannot write %s: it is an input of "
           "this command (name another file)\n", in, w->what);
  cr_expect(strstr(r.err, want), "%s: %s", w->args, r.err);
  expect_text(in, in_text);
  free(in_text);
  const char *names[] = {"out", "target", "made", "in.scenario", "in.trace",
                         "in.rows"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    cr_expect_eq(temporaries(support_path("w%d/%s", k, names[i])), 0,
                 "%s: a temporary of %s left", w->args, names[i]);
  support_run_clear(&r);
}

Test(file_out, export_writes_whole) { walk(0); }
Test(file_out, faults_synth_writes_whole) { walk(1); }
Test(file_out, trace_synth_writes_whole) { walk(2); }
Test(file_out, calibrate_writes_whole) { walk(3); }
Test(file_out, schedule_alloc_writes_whole) { walk(4); }
Test(file_out, schedule_convergence_writes_whole) { walk(5); }
Test(file_out, schedule_shape_writes_whole) { walk(6); }
Test(file_out, simulate_timeline_writes_whole) { walk(7); }
Test(file_out, training_timeline_writes_whole) { walk(8); }
Test(file_out, explain_link_stats_writes_whole) { walk(9); }

/* Issue 35, 7: a varying network's export onto NAME.csv wrote the trace,
 * then the scenario over it, and exited 0. Now refused, nothing written;
 * two outputs of schedule on one file are refused the same way. */
Test(file_out, a_command_never_writes_one_file_twice) {
  support_run r = {0};
  const char *v = support_path("v.csv");
  cr_expect_eq(support_geodes(&r, "scenarios --export worldwide-varying -o "
                              "'%s'", v), 1);
  cr_expect(strstr(r.err, "its trace would be written to the same file"),
            "%s", r.err);
  cr_expect(access(v, F_OK) != 0, "nothing written");
  const char *j = support_path("v.json");
  cr_expect_eq(support_geodes(&r, "scenarios --export worldwide-varying -o "
                              "'%s'", j), 0, "%s", r.err);
  cr_expect(written(j) && written(v), "the scenario and its trace");
  cr_expect_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--layers 8", j), 0, "%s", r.err);
  const char *a = support_path("a.json");
  cr_expect_eq(support_geodes(&r, "schedule multi-dc --method random-search "
                              "--trials 2 -o '%s' --convergence '%s'", a, a),
               1);
  cr_expect(strstr(r.err, "another output of this command goes there"), "%s",
            r.err);
  cr_expect(access(a, F_OK) != 0, "nothing written");
  /* the results store is an input too: -o onto it, by its name or a link */
  const char *db = support_path("r.db"), *alias = support_path("alias.db");
  cr_expect_eq(support_geodes(&r, "schedule multi-dc --method random-search "
                              "--trials 2 -o '%s' --db '%s'", db, db), 2);
  cr_expect(access(db, F_OK) != 0, "nothing written");
  cr_assert_eq(support_geodes(&r, "schedule multi-dc --method random-search "
                              "--trials 2 --db '%s'", db), 0, "%s", r.err);
  cr_assert_eq(symlink(db, alias), 0);
  cr_expect_eq(support_geodes(&r, "schedule multi-dc --shape auto --stages 4 "
                              "--replicas 2 -o '%s' --db '%s'", alias, db), 1);
  cr_expect(strstr(r.err, "it is an input of this command"), "%s", r.err);
  cr_expect_eq(support_sql_int(db, "SELECT count(*) FROM runs"), 1,
               "the store is intact");
  support_run_clear(&r);
}

/* ---- signals ---- */

static void sleep_ms(long ms) {
  nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Starts geodes with args (a NULL-terminated list) in dir, its SIGINT at
 * the default as a terminal's foreground job has it. */
static pid_t start(const char *dir, const char *const *args) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(127);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    signal(SIGINT, SIG_DFL);
    execv(GEODES_BIN, (char *const *)args);
    _exit(127);
  }
  return pid;
}

/* Sends SIGINT once path's temporary exists (or after wait_ms when
 * wait_ms > 0), and expects geodes to end by it, with nothing at path nor
 * any temporary of it. */
static void interrupt(const char *dir, const char *const *args,
                      const char *const *outs, long wait_ms) {
  pid_t pid = start(dir, args);
  char first[1024];
  snprintf(first, sizeof first, "%s/%s", dir, outs[0]);
  if (wait_ms > 0) sleep_ms(wait_ms);
  for (int i = 0; i < 30000 && wait_ms <= 0 && !temporaries(first); i++)
    sleep_ms(2); /* <= 60 s */
  kill(pid, SIGINT);
  int status;
  waitpid(pid, &status, 0);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT,
            "%s: ended by SIGINT (status %d: it finished first?)", args[1],
            status);
  for (int k = 0; outs[k]; k++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, outs[k]);
    cr_expect(access(p, F_OK) != 0, "%s: %s was written", args[1], outs[k]);
    cr_expect_eq(temporaries(p), 0, "%s: a temporary of %s was left",
                 args[1], outs[k]);
  }
}

/* Before, a SIGINT left the temporary of a file being written beside it,
 * and a timeline (written by fopen as the run went) half-written. */
Test(file_out, sigint_during_a_write_leaves_nothing) {
  const char *dir = support_path("sig_write");
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *args[] = {"geodes", "trace", "synth", "--duration-s",
                        "200000", "--step-s", "1", "--seed", "1", "-o",
                        "big.csv", NULL};
  const char *outs[] = {"big.csv", NULL};
  interrupt(dir, args, outs, 0);
}

Test(file_out, sigint_during_a_training_run_leaves_nothing) {
  const char *dir = support_path("sig_train");
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *args[] = {"geodes", "simulate", "multi-dc", "--method",
                        "dtfm-identity", "--iterations", "100000",
                        "--timeline", "tl.json", NULL};
  const char *outs[] = {"tl.json", NULL};
  interrupt(dir, args, outs, 0);
}

Test(file_out, sigint_during_a_search_leaves_nothing) {
  const char *dir = support_path("sig_search");
  cr_assert_eq(mkdir(dir, 0700), 0);
  const char *args[] = {"geodes", "schedule", "worldwide", "--method", "gcma",
                        "--trials", "1000000", "-o", "best.json",
                        "--convergence", "conv.csv", "--db", "s.db", NULL};
  const char *outs[] = {"best.json", "conv.csv", "s.db", NULL};
  interrupt(dir, args, outs, 500);
}
