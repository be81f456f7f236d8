/* test_support: the test helpers themselves — output of any size captured
 * whole and each stream apart, exit statuses (signals as 128 + N), the line's
 * own redirections, one folder per process (a forked child gets its own),
 * removal, file round trips and the one-number SQL query. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support.h"

TestSuite(support, .init = support_dir_make, .fini = support_dir_remove);

Test(support, output_of_any_size_is_captured_whole) {
  support_run r = {0};
  size_t big = 3u << 20; /* past the 1 MiB the old helpers kept */
  cr_assert_eq(support_sh(&r, "head -c %zu /dev/zero | tr '\\0' x; "
                              "printf 'e1\\ne2' >&2; exit 3",
                          big),
               3);
  cr_assert_eq(r.out_len, big);
  cr_assert_eq(strlen(r.out), big);
  size_t xs = 0;
  for (size_t i = 0; i < r.out_len; i++) xs += r.out[i] == 'x';
  cr_assert_eq(xs, big);
  cr_assert_str_eq(r.err, "e1\ne2");
  cr_assert_eq(r.err_len, 5);
  cr_assert_eq(support_sh(&r, "true"), 0, "a run replaces the last one");
  cr_assert_eq(r.out_len + r.err_len, 0);
  cr_assert_str_eq(r.out, "");
  support_run_clear(&r);
  cr_assert_null(r.out);
  support_run_clear(&r);
}

Test(support, signals_and_redirections) {
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "kill -KILL $$"), 128 + SIGKILL);
  cr_assert_eq(support_sh(&r, "sh -c 'kill -TERM $$'"), 128 + SIGTERM);
  cr_assert_eq(support_sh(NULL, "exit 7"), 7);
  /* geodes with no subcommand: usage on stderr, status 2. */
  cr_assert_eq(support_geodes(&r, "%s", ""), 2);
  cr_assert_eq(r.out_len, 0);
  cr_assert_not_null(strstr(r.err, "usage: geodes"), "%s", r.err);
  cr_assert_eq(support_geodes(&r, "2>&1"), 2);
  cr_assert_eq(r.err_len, 0);
  cr_assert_not_null(strstr(r.out, "usage: geodes"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "--help"), 0);
  cr_assert_not_null(strstr(r.out, "usage: geodes"), "%s", r.out);
  support_run_clear(&r);
}

Test(support, paths_and_files) {
  const char *dir = support_dir();
  cr_assert_eq(access(dir, W_OK), 0);
  cr_assert_str_eq(support_dir(), dir, "one folder per process");
  const char *a = support_path("a.txt"), *b = support_path("%s-%d", "b", 7);
  char want[512];
  snprintf(want, sizeof want, "%s/b-7", dir);
  cr_assert_str_eq(b, want);
  cr_assert_eq(support_write_file(a, "line 1\nline 2"), a);
  size_t n;
  char *text = support_read_file(a, &n);
  cr_assert_str_eq(text, "line 1\nline 2");
  cr_assert_eq(n, 13);
  free(text);
  support_write_file(a, "");
  text = support_read_file(a, NULL);
  cr_assert_str_eq(text, "", "writing replaces");
  free(text);
  /* The shell runs in the current folder, not the temporary one. */
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "pwd"), 0);
  char cwd[512];
  cr_assert_not_null(getcwd(cwd, sizeof cwd));
  cr_assert_eq(strncmp(r.out, cwd, strlen(cwd)), 0, "%s vs %s", r.out, cwd);
  support_run_clear(&r);
}

Test(support, a_forked_child_gets_its_own_folder) {
  char mine[512];
  snprintf(mine, sizeof mine, "%s", support_dir());
  support_write_file(support_path("parent.txt"), "p");
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    const char *child = support_dir();
    int ok = strcmp(child, mine) != 0 && access(child, W_OK) == 0;
    support_dir_remove();
    ok &= access(child, F_OK) != 0;
    _exit(ok ? 0 : 1);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  cr_assert_eq(access(support_path("parent.txt"), F_OK), 0,
               "the child left the parent's folder alone");
}

Test(support, remove_then_a_fresh_folder) {
  char first[512];
  snprintf(first, sizeof first, "%s", support_dir());
  support_write_file(support_path("x"), "x");
  cr_assert_eq(mkdir(support_path("sub"), 0700), 0);
  support_write_file(support_path("sub/y"), "y");
  support_dir_remove();
  cr_assert_neq(access(first, F_OK), 0, "removed with its contents");
  support_dir_remove(); /* no folder: nothing to do */
  cr_assert_str_neq(support_dir(), first);
  cr_assert_eq(access(support_dir(), W_OK), 0);
}

Test(support, sql_int_and_scenario) {
  const char *path = support_path("t.db");
  cr_assert_eq(support_sql_int(path, "SELECT 1"), -1, "no such file");
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h,
                            "CREATE TABLE t(x); INSERT INTO t VALUES (4), (5),"
                            " (6)",
                            NULL, NULL, NULL),
               SQLITE_OK);
  sqlite3_close(h);
  cr_assert_eq(support_sql_int(path, "SELECT count(*) FROM t"), 3);
  cr_assert_eq(support_sql_int(path, "SELECT sum(x) FROM t"), 15);
  cr_assert_eq(support_sql_int(path, "SELECT x FROM t WHERE x > 9"), -1);
  cr_assert_eq(support_sql_int(path, "SELECT nope FROM t"), -1);
  scenario *s = support_scenario("worldwide");
  cr_assert_eq(s->ndevices, 64);
  scenario_free(s);
}
