/* test_place: a placement method's name to an allocation (sim/place.c) —
 * sim_place_scenario gives what sim_place gives under a cost context made
 * by hand, for two fixed placements and a seeded search, and an unknown
 * name's error. */
#include <criterion/criterion.h>

#include "sim/place.h"
#include "tests/support.h"

Test(place, scenario_context_places_as_a_hand_made_one) {
  const char *const methods[] = {"dtfm-identity", "megatron", "random"};
  scenario *s = support_scenario("regional");
  sim_options o = sim_options_default();
  for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
    err e = {0};
    cost_ctx *c = cost_ctx_from_scenario(s, &e);
    cr_assert_not_null(c, "%s", e.msg);
    alloc *want = sim_place(s, c, methods[i], &o, &e);
    cr_assert_not_null(want, "%s", e.msg);
    alloc *got = sim_place_scenario(s, methods[i], &o, &e);
    cr_assert_not_null(got, "%s", e.msg);
    cr_assert_eq(got->replicas, want->replicas);
    cr_assert_eq(got->stages, want->stages);
    for (int k = 0; k < want->replicas * want->stages; k++)
      cr_assert_eq(got->device[k], want->device[k], "%s, slot %d",
                   methods[i], k);
    alloc_free(got);
    alloc_free(want);
    cost_ctx_free(c);
  }
  err e = {0};
  cr_assert_null(sim_place_scenario(s, "no-such-method", &o, &e));
  cr_assert_eq(e.code, ERR_UNKNOWN);
  scenario_free(s);
}
