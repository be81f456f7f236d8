/* test_place: a placement method's name to an allocation (sim/place.c) —
 * sim_place_scenario gives what sim_place gives under a cost context made
 * by hand, for two fixed placements and a seeded search, and an unknown
 * name's error; `sim` takes the iterations it is told it knows. */
#include <criterion/criterion.h>

#include "schedules/baseline.h"
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

/* `sim` on regional with a small budget, with and without known values:
 * the true ones (sim_run's of greedy's pipelines, one of its starts) give
 * the same search, candidate for candidate; a false one is taken as given
 * (the search does not simulate a known allocation). */
Test(place, sim_takes_known_iterations) {
  scenario *s = support_scenario("regional");
  sim_options so = sim_options_default();
  so.seed = s->seed;
  err e = {0};
  cost_ctx *c = cost_ctx_from_scenario(s, &e);
  cr_assert_not_null(c, "%s", e.msg);
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  o.trials = 8;
  search_result *alone = sim_place_search(s, c, "sim", &o, &so, &e);
  cr_assert_not_null(alone, "%s", e.msg);
  alloc *greedy = baseline_greedy_pipelines(c);
  sim_result r;
  cr_assert_eq(sim_run(s, greedy, &so, &r, &e), ERR_OK, "%s", e.msg);
  sim_place_known known = {.a = greedy, .iteration_s = r.iteration_s};
  sim_result_free(&r);
  search_result *got = sim_place_search_known(s, c, "sim", &o, &so, &known,
                                              1, &e);
  cr_assert_not_null(got, "%s", e.msg);
  cr_expect(alloc_equal(got->best, alone->best));
  cr_assert_eq(got->candidates, alone->candidates);
  for (long i = 0; i < got->candidates; i++)
    cr_expect_eq(got->convergence[i], alone->convergence[i], "candidate %ld",
                 i);
  known.iteration_s = 1e-3; /* below every real one: the search's best */
  search_result *taken = sim_place_search_known(s, c, "sim", &o, &so, &known,
                                                1, &e);
  cr_assert_not_null(taken, "%s", e.msg);
  cr_expect_eq(taken->objective_s, 1e-3);
  cr_expect(alloc_equal(taken->best, greedy));
  search_result_free(taken);
  search_result_free(got);
  search_result_free(alone);
  alloc_free(greedy);
  cost_ctx_free(c);
  scenario_free(s);
}
