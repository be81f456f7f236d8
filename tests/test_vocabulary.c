/* test_vocabulary: one name per concept, the former names still read. A
 * sweep written with the former keys (scenarios, methods, networks, seeds,
 * gpus) and the placement's former name (megatron) stores, field by field,
 * the rows of the same sweep written with the current names (scenario,
 * method, network_model, seed, gpu; megatron-order); --network gives what
 * --network-model gives; --method megatron what --method megatron-order
 * gives. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(vocabulary, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 300);

static char *swept(const char *name, const char *body) {
  const char *file = support_write_file(support_path("%s.json", name), body);
  const char *db = support_path("%s.db", name);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s'", file, db), 0, "%s",
               r.err);
  support_run_clear(&r);
  return support_dump_results(db);
}

Test(vocabulary, former_sweep_keys_store_the_same_rows) {
  char *old = swept("old", "{\"scenarios\": [\"regional\"], \"methods\": "
                    "[\"megatron\", \"dtfm-identity\"], \"networks\": "
                    "[\"netem\", \"ideal\"], \"seeds\": [1, 2], \"gpus\": "
                    "[\"A100\"]}");
  char *now = swept("now", "{\"scenario\": [\"regional\"], \"method\": "
                    "[\"megatron-order\", \"dtfm-identity\"], "
                    "\"network_model\": [\"netem\", \"ideal\"], \"seed\": "
                    "[1, 2], \"gpu\": [\"A100\"]}");
  cr_expect(strlen(now) > 100, "%s", now);
  cr_expect_str_eq(old, now);
  cr_expect(strstr(now, "megatron-order"), "%s", now);
  free(old), free(now);
}

/* geodes ARGS with stdout captured. */
static char *out_of(const char *args) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "%s", args), 0, "%s: %s", args, r.err);
  char *o = r.out;
  r.out = NULL;
  support_run_clear(&r);
  return o;
}

Test(vocabulary, former_option_and_method_names) {
  const char *pairs[][2] = {
      {"simulate regional --method random --network netem --json",
       "simulate regional --method random --network-model netem --json"},
      {"predict regional --method random --network ideal --json",
       "predict regional --method random --network-model ideal --json"},
      {"transfer --latency-ms 5 --bandwidth-gbps 1 --bytes 1e6 --network tcp",
       "transfer --latency-ms 5 --bandwidth-gbps 1 --bytes 1e6 "
       "--network-model tcp"},
      {"schedule regional --method megatron --json",
       "schedule regional --method megatron-order --json"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
    char *a = out_of(pairs[i][0]), *b = out_of(pairs[i][1]);
    /* schedule names the method as typed: compare past it */
    const char *x = strstr(a, "\"score_s\""), *y = strstr(b, "\"score_s\"");
    cr_expect_str_eq(x ? x : a, y ? y : b, "%s", pairs[i][0]);
    free(a), free(b);
  }
}

Test(vocabulary, help_lists_the_former_names) {
  char *h = out_of("simulate --help");
  cr_expect(strstr(h, "  --network           --network-model's former name\n"),
            "%s", h);
  cr_expect(strstr(h, "megatron: megatron-order's former name"), "%s", h);
  free(h);
  h = out_of("sweep --help");
  cr_expect(strstr(h, "Former names, still read: scenarios methods networks "
                      "seeds gpus"), "%s", h);
  free(h);
}
