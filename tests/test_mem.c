/* test_mem: base/mem's allocation for arrays read at random. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* mem_alloc_random's huge-page alignment, from its least size on. */
#define HUGE_PAGE ((size_t)2 << 20)

Test(mem, random_arrays_hold_every_byte_asked) {
  size_t sizes[] = {1, 4096, 2 * HUGE_PAGE - 1, 2 * HUGE_PAGE,
                    5 * HUGE_PAGE + 3};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    unsigned char *p = mem_alloc_random(sizes[k]);
    memset(p, 0xa5, sizes[k]); /* every byte writable */
    cr_assert_eq(p[0], 0xa5);
    cr_assert_eq(p[sizes[k] - 1], 0xa5);
    free(p); /* plain free() takes it back */
  }
}

Test(mem, large_random_arrays_start_on_a_huge_page) {
#if defined(__linux__)
  void *p = mem_alloc_random(2 * HUGE_PAGE);
  cr_assert_eq((uintptr_t)p % HUGE_PAGE, 0);
  free(p);
#endif
}

/* mem_grow_aligned: each growth starts on the boundary and keeps every
 * item written before it, in place, as mem_grow's doubling does. */
Test(mem, aligned_arrays_grow_keeping_their_items) {
  uint64_t *a = NULL;
  size_t cap = 0;
  for (uint64_t i = 0; i < 5000; i++) {
    size_t before = cap;
    mem_grow_aligned((void **)&a, &cap, i + 1, sizeof *a, 64);
    cr_assert_geq(cap, i + 1);
    if (before >= i + 1) cr_assert_eq(cap, before); /* no growth asked */
    cr_assert_eq((uintptr_t)a % 64, 0, "item %llu", (unsigned long long)i);
    a[i] = i * 2654435761u;
    for (uint64_t k = 0; k <= i; k += 97)
      cr_assert_eq(a[k], k * 2654435761u, "item %llu after growth",
                   (unsigned long long)k);
  }
  cr_assert_eq(cap, 8192); /* doubled from 8 */
  free(a);
}
