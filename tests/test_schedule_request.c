/* test_schedule_request: the checks every front door of a schedule shares
 * (schedules/schedule_request.h): each option given alone under each
 * search against a naive reading of the map (refused iff the other search
 * alone uses it, named in the message); the dollar objectives against the
 * method and the shape search; --micro-batches against the batch. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "schedules/objective.h"
#include "schedules/schedule_method.h"
#include "schedules/schedule_request.h"
#include "schedules/shape.h"

/* The naive reference: the options only the shape search uses. */
static bool shape_only(int opt) {
  return opt == SCHEDULE_OPT_DP_AUTO || opt == SCHEDULE_OPT_GOAL ||
         opt == SCHEDULE_OPT_SIMULATE || opt == SCHEDULE_OPT_MICRO;
}

static schedule_request plain(bool shape) {
  return (schedule_request){.shape = shape,
                            .method = schedule_method_name(SCHEDULE_GCMA),
                            .objective = OBJECTIVE_DTFM};
}

Test(schedule_request, each_option_alone_under_each_search) {
  static const char *const names[] = {
      "--dp-algo auto", "--shape-objective", "--simulate-best",
      "--micro-batches", "--method", "--objective", "--trials",
      "--population", "--starts", "--cost-cmd", "--convergence"};
  cr_assert_eq(sizeof names / sizeof *names, SCHEDULE_NOPTIONS);
  for (int shape = 0; shape < 2; shape++)
    for (int opt = 0; opt < SCHEDULE_NOPTIONS; opt++) {
      schedule_request r = plain(shape);
      r.given[opt] = true;
      if (opt == SCHEDULE_OPT_GOAL) r.goal = SHAPE_ITERATION;
      err e = {0};
      int rc = schedule_request_uses(&r, &e);
      bool want = shape_only(opt) != (bool)shape;
      cr_assert_eq(rc != ERR_OK, want, "option %d, shape %d", opt, shape);
      if (want) cr_assert(strstr(e.msg, names[opt]), "%s", e.msg);
      if (want && !shape) cr_assert(strstr(e.msg, "needs --shape auto"));
    }
}

Test(schedule_request, the_first_option_in_the_maps_order_is_named) {
  schedule_request r = plain(true);
  r.given[SCHEDULE_OPT_CONVERGENCE] = r.given[SCHEDULE_OPT_TRIALS] = true;
  err e = {0};
  cr_assert_eq(schedule_request_uses(&r, &e), ERR_CONFIG);
  cr_assert(strncmp(e.msg, "--trials is a placement search's", 31) == 0,
            "%s", e.msg);
}

Test(schedule_request, a_dollar_objective_is_the_shape_searchs_goal) {
  schedule_request r = plain(true);
  r.objective = OBJECTIVE_SAMPLES_PER_USD;
  r.given[SCHEDULE_OPT_OBJECTIVE] = true;
  cr_assert_eq(schedule_request_dollars(&r, NULL), ERR_OK);
  cr_assert_eq(r.goal, SHAPE_SAMPLES_PER_USD);
  cr_assert_eq(schedule_request_uses(&r, NULL), ERR_OK);
  r.goal = SHAPE_ITERATION; /* another goal given too */
  err e = {0};
  cr_assert_eq(schedule_request_dollars(&r, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "--objective samples-per-usd and --shape-objective "
                          "iteration: give one");
}

Test(schedule_request, dollars_need_a_search_an_objective_steers) {
  const struct { schedule_method_id m; bool ok; } cases[] = {
      {SCHEDULE_GCMA, true}, {SCHEDULE_HYBRID, true},
      {SCHEDULE_RANDOM_SEARCH, true}, {SCHEDULE_GREEDY, false},
      {SCHEDULE_SIM, false}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    schedule_request r = plain(false);
    r.method = schedule_method_name(cases[i].m);
    r.objective = OBJECTIVE_USD_PER_SAMPLE;
    err e = {0};
    cr_assert_eq(schedule_request_dollars(&r, &e) == ERR_OK, cases[i].ok,
                 "%s", r.method);
    if (!cases[i].ok) cr_assert(strstr(e.msg, r.method), "%s", e.msg);
  }
  schedule_request r = plain(false); /* a budget on DT-FM's score */
  r.budget = 10;
  err e = {0};
  cr_assert_eq(schedule_request_dollars(&r, &e), ERR_CONFIG);
  cr_assert(strstr(e.msg, "--max-usd-per-hour constrains"), "%s", e.msg);
  r.objective = OBJECTIVE_PREDICTED;
  cr_assert_eq(schedule_request_dollars(&r, NULL), ERR_OK);
}

Test(schedule_request, micro_batches_against_the_batch) {
  int micro[SHAPE_MAX_MICRO], n = 0;
  cr_assert_eq(schedule_request_micro("1,4,2", 8, micro, &n, NULL), ERR_OK);
  cr_assert_eq(n, 3);
  cr_assert(micro[0] == 1 && micro[1] == 4 && micro[2] == 2);
  err e = {0};
  cr_assert_eq(schedule_request_micro("2,16", 8, micro, &n, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "2,16: 16 is more than the batch of 8 sequences");
  const char *bad[] = {"0", "x", "", "1,,2", "1,2,3,4,5,6,7,8,9"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_eq(schedule_request_micro(bad[i], 64, micro, &n, NULL),
                 ERR_PARSE, "'%s'", bad[i]);
}
