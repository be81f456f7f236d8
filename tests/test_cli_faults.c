/* test_cli_faults: `geodes faults synth` and `geodes faults check` as a user
 * runs them — the same command writes the same bytes and records itself,
 * the file checks against its scenario, and bad input exits 1 with
 * FILE:LINE (2 for usage errors), leaving no half-written file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"

TestSuite(cli_faults, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

Test(cli_faults, synth_is_reproducible_and_checks) {
  const char *a = support_path("a.csv"), *b = support_path("b.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "faults synth spot --duration-s 604800 "
                                  "--seed 9 --rate-scale 20 --link-outages -o "
                                  "'%s'", a), 0, "%s", r.err);
  cr_assert_eq(support_geodes(&r, "faults synth spot --duration-s 604800 "
                                  "--seed 9 --rate-scale 20 --link-outages -o "
                                  "'%s'", b), 0, "%s", r.err);
  char *x = support_read_file(a, NULL), *y = support_read_file(b, NULL);
  char *nl = strstr(x, "-o "), *nl2 = strstr(y, "-o ");
  cr_assert(nl && nl2);
  cr_expect_str_eq(strchr(nl, '\n'), strchr(nl2, '\n'), "same rows");
  cr_expect(strstr(x, "# generated_by: geodes faults synth spot --duration-s "
                      "604800 --seed 9 --rate-scale 20 --link-outages -o ") != NULL,
            "%s", x);
  cr_expect(strstr(x, ",site_down,spot_instance_") != NULL, "p3.8xlarge: whole");
  free(x), free(y);
  cr_assert_eq(support_geodes(&r, "faults check '%s' --scenario spot --json",
                              a), 0, "%s", r.err);
  cr_expect(strstr(r.out, "\"scenario\":\"spot\"") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "\"seed\":\"9\"") != NULL, "%s", r.out);
  support_run_clear(&r);
}

Test(cli_faults, bad_input) {
  support_run r = {0};
  const char *out = support_path("never.csv");
  cr_expect_eq(support_geodes(&r, "faults synth worldwide --seed 1 -o '%s'",
                              out), 2, "no --duration-s");
  cr_expect_eq(support_geodes(&r, "faults synth worldwide --duration-s 0 "
                                  "--seed 1 -o '%s'", out), 2);
  cr_expect_eq(support_geodes(&r, "faults synth worldwide --duration-s 10 "
                                  "--seed 1 --monthly-frac 1 -o '%s'", out), 2);
  cr_expect_eq(support_geodes(&r, "faults check '%s'", out), 2, "no --scenario");
  cr_expect_eq(support_geodes(&r, "faults explode"), 2);
  const char *user = support_write_file(
      support_path("mine.json"),
      "{\"name\": \"mine\", \"sites\": [{\"name\": \"lab\", \"devices\": 2, "
      "\"gpu\": \"V100\", \"nic_gbps\": 10}], \"network\": {\"latency_ms\": 1, "
      "\"bandwidth_gbps\": 1}, \"workload\": {\"model\": \"gpt3-xl\", "
      "\"layers\": 2, \"batch\": 2, \"micro_batch\": 1, \"stages\": 2, "
      "\"replicas\": 1}}");
  cr_expect_eq(support_geodes(&r, "faults synth '%s' --duration-s 100 --seed 1 "
                                  "-o '%s'", user, out), 1);
  cr_expect(strstr(r.err, "site 'lab' is not in fault_params.csv") != NULL,
            "%s", r.err);
  cr_expect(access(out, F_OK) != 0, "no half-written file");
  /* a failed synth leaves the user's file as it was (it was deleted) */
  const char *keep = support_write_file(support_path("keep.csv"), "precious\n");
  cr_expect_eq(support_geodes(&r, "faults synth worldwide --duration-s 1e9 "
                                  "--seed 1 --rate-scale 1e12 -o '%s'", keep), 1);
  cr_expect_eq(support_geodes(&r, "trace synth --duration-s 9e7 --step-s 1 "
                                  "--seed 1 -o '%s'", keep), 1);
  char *kept = support_read_file(keep, NULL);
  cr_expect_str_eq(kept ? kept : "(gone)", "precious\n");
  free(kept);
  cr_expect(access(support_path("keep.csv.tmp"), F_OK) != 0, "no leftover");
  cr_expect_eq(support_geodes(&r, "faults synth '%s' --duration-s 86400 "
                                  "--seed 1 --monthly-frac 0.5 --rate-scale "
                                  "1000 -o -", user), 0, "%s", r.err);
  cr_expect(strstr(r.out, ",device_down,") != NULL, "%s", r.out);
  const char *bad = support_write_file(support_path("bad.csv"),
                                       "# x\nt_s,event,target,duration_s,factor"
                                       "\n1,device_down,lab,5,\n");
  cr_expect_eq(support_geodes(&r, "faults check '%s' --scenario '%s'", bad,
                              user), 1);
  char want[256];
  snprintf(want, sizeof want, "geodes: %s:3: target: 'lab' is not a device "
           "index", bad);
  cr_expect(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
  support_run_clear(&r);
}
