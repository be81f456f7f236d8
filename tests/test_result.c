/* test_result: what the front end reads off a run's result — the
 * utilisation range of a stage's devices against the naive reference (the
 * least and the most of the devices that have one, listed by hand). */
#include <criterion/criterion.h>
#include <math.h>

#include "sim/result.h"

Test(result, stage_range_of_the_devices_that_have_one) {
  /* 3 replicas x 2 stages; device 5 beyond the 5 utilisations known */
  double util[] = {0.5, 0.9, 0.2, 0.7, NAN};
  sim_result r = {.ndevices = 5, .utilisation = util};
  alloc *a = alloc_new(3, 2);
  int dev[] = {0, 1, 2, 3, 4, 5}; /* stage 0: 0, 2, 4; stage 1: 1, 3, 5 */
  for (int i = 0; i < 6; i++) a->device[i] = dev[i];
  double lo, hi;
  sim_result_stage_range(&r, a, 0, &lo, &hi); /* 0.5, 0.2, NAN */
  cr_assert(alloc_at(a, 2, 0) == 4 && alloc_at(a, 2, 1) == 5);
  cr_assert_eq(lo, 0.2);
  cr_assert_eq(hi, 0.5);
  sim_result_stage_range(&r, a, 1, &lo, &hi); /* 0.9, 0.7, beyond */
  cr_assert_eq(lo, 0.7);
  cr_assert_eq(hi, 0.9);
  r.utilisation = NULL; /* none known: the empty range */
  sim_result_stage_range(&r, a, 1, &lo, &hi);
  cr_assert(lo == 1 && hi == 0);
  alloc_free(a);
}
