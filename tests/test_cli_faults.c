/* test_cli_faults: `geodes faults synth` and `geodes faults check` as a user
 * runs them — the same command writes the same bytes and records itself,
 * the file checks against its scenario, and bad input exits 1 with
 * FILE:LINE (2 for usage errors), leaving no half-written file. */
#include <criterion/criterion.h>
#include <sys/stat.h>
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
  cr_expect(strstr(r.err, "('lab') names no instance type") != NULL &&
                strstr(r.err, "--monthly-frac") != NULL,
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
  cr_expect_eq(support_count_files("keep.csv"), 1, "no leftover temporary");
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

/* Issue 24, 12: -o writes through to what is not a regular file and never
 * replaces it; a symbolic link stays a link, its target written; a file
 * named PATH.tmp is the user's, untouched; a directory is refused by
 * name. */
Test(cli_faults, synth_output_respects_what_is_there) {
  support_run r = {0};
  const char *args = "faults synth worldwide --duration-s 1000 --seed 1";
  const char *target = support_write_file(support_path("target.csv"), "old\n");
  const char *mine = support_write_file(support_path("target.csv.tmp"),
                                        "mine\n");
  const char *link = support_path("link.csv");
  cr_assert_eq(symlink("target.csv", link), 0);
  cr_assert_eq(support_geodes(&r, "%s -o '%s'", args, link), 0, "%s", r.err);
  struct stat st;
  cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "still a link");
  char *t = support_read_file(target, NULL), *m = support_read_file(mine, NULL);
  cr_expect(t && strstr(t, "\nt_s,event,target,duration_s,factor\n") != NULL,
            "target written: %s", t);
  cr_expect_str_eq(m ? m : "(gone)", "mine\n");
  free(t), free(m);
  cr_expect_eq(support_count_files("target.csv"), 2, "no temporary left");
  const char *fifo = support_path("pipe");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(support_sh(&r, "cat '%s' > '%s' & '%s' %s -o '%s'; wait", fifo,
                          support_path("drained"), GEODES_BIN, args, fifo), 0,
               "%s", r.err);
  cr_expect(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "still a pipe");
  char *d = support_read_file(support_path("drained"), NULL);
  cr_expect(d && strstr(d, "\nt_s,event,target,duration_s,factor\n") != NULL,
            "written through: %s", d);
  free(d);
  cr_expect_eq(support_geodes(&r, "%s -o '%s'", args, support_dir()), 1);
  cr_expect(strstr(r.err, ": cannot write the fault trace: a folder (name a "
                   "file to write)") != NULL, "%s", r.err);
  if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
    cr_expect_eq(support_geodes(&r, "%s -o /dev/full", args), 1);
    cr_expect(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode),
              "/dev/full is still a device");
  }
  support_run_clear(&r);
}
