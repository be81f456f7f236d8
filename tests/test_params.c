/* test_params: --fit's list of parameter names (params_parse_list) against
 * params_find name by name: the ids in order, an unknown name, a repeated
 * one and an empty list refused with their codes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "models/params.h"

Test(params, a_list_is_its_names_found_one_by_one) {
  char list[1024] = "";
  int want[PARAMS_N], ids[PARAMS_N], n = -1;
  for (int p = PARAMS_N - 1; p >= 0; p--) { /* every name, reversed */
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
             list[0] ? "," : "", params_table[p].name);
    want[PARAMS_N - 1 - p] = params_find(params_table[p].name);
  }
  cr_assert_lt(strlen(list), 511);
  cr_assert_eq(params_parse_list(list, ids, &n, NULL), ERR_OK);
  cr_assert_eq(n, PARAMS_N);
  cr_assert_arr_eq(ids, want, sizeof want);
}

Test(params, unknown_repeated_and_empty_lists_are_refused) {
  int ids[PARAMS_N], n;
  char twice[256];
  snprintf(twice, sizeof twice, "%s,%s", params_table[0].name,
           params_table[0].name);
  err e = {0};
  cr_assert_eq(params_parse_list("no_such_thing", ids, &n, &e), ERR_MISSING);
  cr_assert_str_eq(e.msg, "unknown parameter 'no_such_thing'");
  err_clear(&e);
  cr_assert_eq(params_parse_list(twice, ids, &n, &e), ERR_CONFIG);
  char msg[300];
  snprintf(msg, sizeof msg, "'%s' given twice", params_table[0].name);
  cr_assert_str_eq(e.msg, msg);
  err_clear(&e);
  cr_assert_eq(params_parse_list(",,", ids, &n, &e), ERR_CONFIG);
  cr_assert_str_eq(e.msg, "no parameter");
}
