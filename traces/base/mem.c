/* mem: see mem.h. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE beside POSIX 2008 */
#include "base/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* No physical size known: no bound but the limits. */
#define HUGE_VAL_BYTES 1e300

static void mem_oom(size_t size) {
  fprintf(stderr, "geodes: out of memory allocating %zu bytes\n", size);
  abort();
}

void *mem_alloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) mem_oom(size);
  return p;
}

/* Huge pages' size (x86-64, arm64 with 4 KiB pages), and the least array
 * worth aligning to them (below it the rounding would cost a fifth). */
#define MEM_HUGE_PAGE ((size_t)2 << 20)
#define MEM_HUGE_MIN (2 * MEM_HUGE_PAGE)

void *mem_alloc_random(size_t size) {
#if defined(MADV_HUGEPAGE)
  if (size >= MEM_HUGE_MIN) {
    void *p;
    if (posix_memalign(&p, MEM_HUGE_PAGE, size)) mem_oom(size);
    (void)madvise(p, size & ~(MEM_HUGE_PAGE - 1), MADV_HUGEPAGE); /* a hint */
    return p;
  }
#endif
  return mem_alloc(size);
}

void *mem_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) mem_oom(SIZE_MAX);
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) mem_oom(n * size);
  return p;
}

void *mem_realloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) mem_oom(size);
  return q;
}

char *mem_strdup(const char *s) { return mem_strndup(s, strlen(s)); }

char *mem_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = mem_alloc(len + 1);
  memcpy(d, s, len);
  d[len] = '\0';
  return d;
}

void mem_grow(void **items, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return;
  size_t c = *cap ? *cap : 8;
  while (c < need) {
    if (c > SIZE_MAX / 2 / size) mem_oom(SIZE_MAX);
    c *= 2;
  }
  *items = mem_realloc(*items, c * size);
  *cap = c;
}

double mem_limit_bytes(void) {
  double most = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
  if (most <= 0) most = HUGE_VAL_BYTES;
  static const int which[] = {RLIMIT_AS, RLIMIT_DATA};
  for (size_t i = 0; i < sizeof which / sizeof *which; i++) {
    struct rlimit r;
    if (getrlimit(which[i], &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
        (double)r.rlim_cur < most)
      most = (double)r.rlim_cur;
  }
  return most;
}
