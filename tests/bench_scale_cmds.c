/* bench_scale_cmds: every command a user runs on volunteer-10k (10^4 GPUs
 * in 69 cities), each a whole process of geodes: CPU seconds (user +
 * system, wait4's rusage) and peak RSS of each (issue 37's targets in
 * brackets; simulate, which has none, for reference). With GEODES_BENCH_BASE=/path/to/an/older/geodes each command
 * also runs under that binary, beside it, stopped after
 * GEODES_BENCH_BASE_CPU_S CPU-seconds (default 60; RLIMIT_CPU): the row
 * then says "> 60". `run` writes its database in a folder of its own,
 * removed after it. Figures, not tests (tests/PERFORMANCE.md, internet
 * scale). */
#define _DEFAULT_SOURCE /* wait4: one child's own rusage */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/bench.h"

#define DB "@db" /* an argument that stands for db_path */

/* One command: its label, its target (CPU-s, 0: none; MB, 0: none), its
 * arguments after the binary (NULL-terminated). */
typedef struct cmd {
  const char *label;
  double target_s, target_mb;
  const char *argv[12];
} cmd;

static const cmd CMDS[] = {
    {"simulate (dtfm-identity)", 0, 0,
     {"simulate", "volunteer-10k", "--method", "dtfm-identity", NULL}},
    {"predict (dtfm-identity)", 10, 0,
     {"predict", "volunteer-10k", "--method", "dtfm-identity", NULL}},
    {"schedule --method greedy", 10, 0,
     {"schedule", "volunteer-10k", "--method", "greedy", NULL}},
    {"schedule --method gcma (4900 trials)", 60, 0,
     {"schedule", "volunteer-10k", "--method", "gcma", NULL}},
    {"schedule --shape auto", 60, 0,
     {"schedule", "volunteer-10k", "--shape", "auto", NULL}},
    {"explain --top 5", 10, 500,
     {"explain", "volunteer-10k", "--method", "dtfm-identity", "--top", "5",
      NULL}},
    {"validate --samples 2", 60, 0,
     {"validate", "volunteer-10k", "--samples", "2", NULL}},
    {"run (the study, its default sample)", 60, 0,
     {"run", "volunteer-10k", "--db", DB, NULL}},
};

/* The database `run` writes (DB in its arguments): a file in a folder
 * main makes, removed after each process. */
static char db_path[64];

/* db_path and the journal files SQLite leaves beside it when its process
 * is stopped by the CPU limit, so that the folder can go. */
static void remove_db(void) {
  static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
    char path[80];
    snprintf(path, sizeof path, "%s%s", db_path, ext[i]);
    unlink(path);
  }
}

/* What one process took. */
typedef struct took {
  bool ok, stopped; /* exit 0; stopped by the CPU limit */
  double cpu_s, mb;
} took;

/* bin with c's arguments, stdout and stderr to /dev/null, at most
 * limit_s CPU-seconds (0: none). */
static took run(const char *bin, const cmd *c, double limit_s) {
  const char *argv[16] = {bin};
  int n = 1;
  for (const char *const *a = c->argv; *a; a++)
    argv[n++] = strcmp(*a, DB) ? *a : db_path;
  argv[n] = NULL;
  took t = {0};
  pid_t pid = fork();
  if (pid < 0) return t;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
    if (limit_s > 0) {
      struct rlimit l = {(rlim_t)limit_s, (rlim_t)limit_s + 1};
      setrlimit(RLIMIT_CPU, &l);
    }
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) return t;
  t.cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
            (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
  t.mb = (double)ru.ru_maxrss / 1024.0;
  t.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  t.stopped = WIFSIGNALED(status) &&
              (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL);
  remove_db();
  return t;
}

static void print_took(const took *t, double limit_s) {
  if (t->stopped) printf("   > %5.0f CPU-s (stopped)       ", limit_s);
  else if (!t->ok) printf("   failed                       ");
  else printf("%8.2f CPU-s %8.1f MB      ", t->cpu_s, t->mb);
}

int main(void) {
  const char *base = getenv("GEODES_BENCH_BASE");
  const char *lim = getenv("GEODES_BENCH_BASE_CPU_S");
  double limit_s = lim ? atof(lim) : 60;
  char dir[] = "/tmp/bench_scale_cmds_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(db_path, sizeof db_path, "%s/run.db", dir);
  printf("volunteer-10k, each command a whole process (CPU-s: user + system)"
         "%s%s\n", base ? "; before: " : "", base ? base : "");
  for (size_t i = 0; i < sizeof CMDS / sizeof *CMDS; i++) {
    const cmd *c = &CMDS[i];
    took now = run(GEODES_BIN, c, 0);
    printf("%-38s ", c->label);
    print_took(&now, 0);
    if (base) {
      took before = run(base, c, limit_s);
      printf("before ");
      print_took(&before, limit_s);
    }
    if (c->target_s > 0) printf("[target <= %g CPU-s", c->target_s);
    if (c->target_mb > 0) printf(", <= %g MB", c->target_mb);
    printf("%s\n", c->target_s > 0 ? "]" : "");
    fflush(stdout);
  }
  rmdir(dir);
  return 0;
}
