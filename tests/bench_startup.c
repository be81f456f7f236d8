/* bench_startup: what a script that calls geodes per point pays -- whole
 * processes of `geodes --help`, `geodes scenarios` (brief loads: no trace
 * CSV parsed), `geodes scenarios --show worldwide-varying` (one full load,
 * its 720 KB trace parsed: what the listing paid per such built-in before)
 * and `geodes simulate worldwide --method dtfm-identity` (88,262 events),
 * each run REPS times:
 * CPU per process (the children's user + system time), events per CPU-s
 * for the simulation, and the children's peak RSS. geodes is not linked
 * with Open MPI (geodes-mpi is, for sweeps under mpirun), so none of its
 * libraries load here. Figures, not tests. GEODES_BENCH_REPS overrides 20;
 * GEODES_BENCH_BIN another geodes (an older build, for a before/after). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/bench.h"

/* The children's CPU seconds so far (reaped ones). */
static double children_cpu_s(long *peak_kib) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  *peak_kib = ru.ru_maxrss;
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* Runs argv (stdout to /dev/null) once; 0 when it exits with status 0. */
static int run_once(char *const argv[]) {
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int row(const char *what, char *const argv[], int reps, double events) {
  long peak;
  double c0 = children_cpu_s(&peak), w0 = bench_wall_s();
  for (int i = 0; i < reps; i++)
    if (run_once(argv)) {
      fprintf(stderr, "bench_startup: %s failed\n", what);
      return 1;
    }
  double cpu = (children_cpu_s(&peak) - c0) / reps;
  double wall = (bench_wall_s() - w0) / reps;
  printf("%-46s %7.2f ms CPU %7.2f ms wall per process", what, cpu * 1e3,
         wall * 1e3);
  if (events > 0) printf("  %5.2f M events/CPU-s", events / cpu * 1e-6);
  printf("  peak RSS %5.1f MiB\n", peak / 1024.0);
  return 0;
}

int main(void) {
  const char *env = getenv("GEODES_BENCH_REPS");
  int reps = env ? atoi(env) : 20;
  if (reps < 1) reps = 20;
  char *bin = getenv("GEODES_BENCH_BIN");
  if (!bin) bin = GEODES_BIN;
  printf("bench_startup: whole processes of %s, %d each\n", bin, reps);
  char *help[] = {bin, "--help", NULL};
  char *list[] = {bin, "scenarios", NULL};
  char *show[] = {bin, "scenarios", "--show", "worldwide-varying", NULL};
  char *sim[] = {bin, "simulate", "worldwide", "--method", "dtfm-identity",
                 NULL};
  return row("geodes --help", help, reps, 0) ||
         row("geodes scenarios", list, reps, 0) ||
         row("geodes scenarios --show worldwide-varying", show, reps, 0) ||
         row("geodes simulate worldwide --method dtfm-identity", sim, reps,
             88262);
}
