/* bench: the clocks and the memory figure every benchmark prints. Header
 * only: each tests/bench_*.c is one translation unit. */
#ifndef TESTS_BENCH_H
#define TESTS_BENCH_H

#include <sys/resource.h>
#include <time.h>

/* Wall-clock seconds from an arbitrary origin (monotonic). */
static inline double bench_wall_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds this process has used. */
static inline double bench_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Peak resident memory so far, KiB (getrusage's ru_maxrss on Linux). */
static inline long bench_peak_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

#endif
