/* bench_harness: the consistency harness (tests/harness.h) over many
 * random cases: seeds FIRST .. FIRST + N - 1 (argv[1] N, default 10^4;
 * argv[2] FIRST, default 1, and argv[3] a folder that keeps each case's
 * files as seed-K.json, to look at one seed again) through the library
 * relations, every HX_BENCH_CLI_EVERY-th through the binary's as well
 * (and every HX_BENCH_SHAPE_EVERY-th through schedule --shape auto's
 * file). Prints what it checked and found: the counts per relation, each
 * failure class with its count and first seed, cases per second. Not a
 * test: it exits 0 whatever it finds (tests/test_harness.c asserts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench.h"
#include "tests/harness.h"

#define HX_BENCH_CASES 10000
#define HX_BENCH_CLI_EVERY 20
#define HX_BENCH_SHAPE_EVERY 200

int main(int argc, char **argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : HX_BENCH_CASES;
  long first = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
  char dir[] = "/tmp/geodes-bench-harness-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  static hx_report r;
  hx_report_init(&r);
  double t0 = bench_wall_s(), lib_s = 0, cli_s = 0;
  long ncli = 0;
  for (long k = first; k < first + n; k++) {
    hx_case c;
    int tries;
    hx_case_gen((uint64_t)k, &c, &tries);
    r.draws += tries;
    if (argc > 3) {
      char name[32];
      snprintf(name, sizeof name, "seed-%ld", k);
      free(hx_case_write(&c, argv[3], name));
    }
    hx_opts o = {.lib = true, .dir = dir, .bin = GEODES_BIN};
    double a = bench_wall_s();
    hx_check_case(&c, &o, &r);
    lib_s += bench_wall_s() - a;
    if (k % HX_BENCH_CLI_EVERY == 0) {
      hx_opts b = {.cli = true, .dir = dir, .bin = GEODES_BIN,
                   .shape = k % HX_BENCH_SHAPE_EVERY == 0};
      a = bench_wall_s();
      hx_check_cli(&c, &b, &r);
      cli_s += bench_wall_s() - a;
      ncli++;
    }
  }
  r.wall_s = bench_wall_s() - t0;
  printf("bench_harness: seeds %ld .. %ld; the binary's relations on %ld of "
         "them\n", first, first + n - 1, ncli);
  hx_report_write(&r, stdout);
  printf("library relations: %.1f cases/s (%.1f s); binary relations: %.2f "
         "cases/s (%.1f s); wall %.1f s, peak RSS %ld KiB\n",
         lib_s > 0 ? n / lib_s : 0, lib_s, cli_s > 0 ? ncli / cli_s : 0,
         cli_s, r.wall_s, bench_peak_rss_kib());
  char cmd[sizeof dir + 16];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : 0;
}
