/* test_schedule_method: the method table's lists (schedule_method_join)
 * against a naive walk of schedule_method_names: each method in exactly
 * one of the two lists, in the table's order. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "schedules/schedule_method.h"

Test(schedule_method, the_two_lists_split_the_table) {
  for (int fixed = 0; fixed < 2; fixed++) {
    char got[256], want[256] = "";
    schedule_method_join(fixed, got, sizeof got);
    for (const char *const *m = schedule_method_names(); *m; m++)
      if (schedule_method_is_fixed(*m) == (bool)fixed)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                 want[0] ? ", " : "", *m);
    cr_assert_str_eq(got, want);
  }
  char fixed[256];
  schedule_method_join(true, fixed, sizeof fixed);
  cr_assert(strncmp(fixed, "dtfm-identity, megatron-order", 29) == 0, "%s",
            fixed);
}
