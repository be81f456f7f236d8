/* bench_sweep: sweep throughput with the real evaluator (worldwide, 64
 * GPUs: fixed placements x network models x bandwidth scales), in points
 * per second, in-process and with 2 forked jobs. The 2-rank MPI figure is
 * measured with the geodes binary:
 *   mpirun --allow-run-as-root --oversubscribe -n 2 build/geodes sweep F */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/eval.h"
#include "analysis/sweep.h"

static const char SWEEP[] =
    "{\"scenarios\": \"worldwide\",\n"
    " \"methods\": [\"dtfm-identity\", \"megatron\", \"random\"],\n"
    " \"networks\": [\"ideal\", \"netem\", \"tcp\"],\n"
    " \"bandwidth_scale\": [0.5, 1, 2, 4]}\n";

static int bench(int jobs) {
  char path[] = "/tmp/geodes_bench_sweep_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  unlink(path);
  err e = {0};
  sweep *s = sweep_parse(SWEEP, strlen(SWEEP), "bench.json", &e);
  if (s && sweep_resolve(s, &e)) sweep_free(s), s = NULL;
  db *d = s ? db_open(path, &e) : NULL;
  if (!d) {
    fprintf(stderr, "bench_sweep: %s\n", e.msg);
    sweep_free(s);
    return 1;
  }
  int64_t run = db_run_begin(d, &(db_run){"bench", NULL, -1, "", ""}, &e);
  sweep_opts o = {.eval = eval_point, .jobs = jobs, .run = run};
  sweep_stats st;
  int rc = sweep_run(s, d, &o, &st, &e);
  if (rc) fprintf(stderr, "bench_sweep: %s\n", e.msg);
  else
    printf("sweep  %zu points, %d job%s: %.2f s, %.1f points/s\n",
           st.computed, jobs, jobs > 1 ? "s" : "", st.seconds,
           (double)st.computed / st.seconds);
  db_close(d);
  sweep_free(s);
  char wal[64];
  unlink(path);
  snprintf(wal, sizeof wal, "%s-wal", path), unlink(wal);
  snprintf(wal, sizeof wal, "%s-shm", path), unlink(wal);
  return rc != 0;
}

int main(void) {
  return bench(1) | bench(2);
}
