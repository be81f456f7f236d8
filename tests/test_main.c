/* test_main: the front end's exit contract around every subcommand — output
 * that cannot be written (stdout on /dev/full) is exit status 1 and one
 * message, `geodes: stdout: No space left on device`, for a JSON object, a
 * table, a large listing and --help alike; the same commands to /dev/null
 * succeed. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support.h"

TestSuite(main, .init = support_dir_make, .fini = support_dir_remove);

/* The tests redirect to /dev/full and /dev/null: where either is missing
 * (or not a device) they skip, since a shell redirection would create a
 * regular file in /dev. */
static void need_devices(void) {
  struct stat st;
  if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode) ||
      stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode))
    cr_skip_test("/dev/full or /dev/null is not a character device here");
}

static const char *const commands[] = {
    "simulate worldwide --method dtfm-identity --json",
    "predict worldwide --method dtfm-identity",
    "scenarios",
    "trace check " GEODES_FIXTURES "/traces/worldwide_static.csv",
    "transfer --latency-ms 10 --bandwidth-gbps 1 --bytes 1e6",
    "simulate --help",
    "--help",
};

/* Before the check these all exited 0 with their output gone. */
Test(main, a_full_stdout_is_an_error) {
  need_devices();
  support_run r = {0};
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
    cr_expect_eq(support_geodes(&r, "%s >/dev/full", commands[i]), 1, "%s",
                 commands[i]);
    cr_expect_str_eq(r.err, "geodes: stdout: No space left on device\n", "%s",
                     commands[i]);
    cr_expect_eq(support_geodes(&r, "%s >/dev/null", commands[i]), 0, "%s: %s",
                 commands[i], r.err);
  }
  support_run_clear(&r);
}

/* Output larger than stdio's buffer fails while it is written, not at the
 * final flush: still exit 1, with the same words. */
Test(main, a_large_output_to_a_full_stdout_is_an_error) {
  need_devices();
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "scenarios --json"), 0);
  cr_assert_gt(r.out_len, 4096, "not larger than a stdio buffer");
  cr_expect_eq(support_geodes(&r, "scenarios --json >/dev/full"), 1);
  cr_expect_str_eq(r.err, "geodes: stdout: No space left on device\n");
  /* trace synth checks its own output and names it */
  cr_expect_eq(support_geodes(&r, "trace synth --duration-s 600 --step-s 1 "
                              "--seed 1 -o - >/dev/full"), 1);
  cr_expect(strstr(r.err, "geodes: -: synth: cannot write the trace: No space "
                   "left on device"), "%s", r.err);
  support_run_clear(&r);
}

/* An error's own exit status stands: a usage error stays 2. */
Test(main, an_earlier_error_keeps_its_status) {
  need_devices();
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate worldwide --bogus >/dev/full"), 2);
  support_run_clear(&r);
}
