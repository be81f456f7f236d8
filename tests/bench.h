/* bench: the clocks and the memory figure every benchmark prints. Header
 * only: each tests/bench_*.c is one translation unit. */
#ifndef TESTS_BENCH_H
#define TESTS_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "traces/scenario.h"

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

/* The scenario name (a built-in or a file), or its error on stderr and
 * exit 1: a bench has nothing to measure without it. */
static inline scenario *bench_scenario(const char *name) {
  err e = {0};
  scenario *s = scenario_load(name, &e);
  if (!s) {
    fprintf(stderr, "%s\n", e.msg);
    exit(1);
  }
  return s;
}

#endif
