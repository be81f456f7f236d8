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
