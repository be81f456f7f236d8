/* test_readme: the README as a contract. Its generated tables (between
 * "<!-- geodes ARGS -->" and "<!-- end -->") equal the output of geodes
 * ARGS byte for byte; its first screen gives the two commands, then how to
 * model one's own cluster; the install step it gives puts a geodes that
 * runs in PREFIX/bin. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(readme, .init = support_dir_make, .fini = support_dir_remove);

static char *readme(void) {
  return support_read_file(GEODES_SOURCE_DIR "/README.md", NULL);
}

Test(readme, generated_tables_equal_the_commands) {
  char *text = readme();
  const char *open = "<!-- geodes ", *end = "<!-- end -->";
  int blocks = 0;
  for (char *at = strstr(text, open); at; at = strstr(at + 1, open)) {
    char *args_end = strstr(at, " -->\n");
    cr_assert_not_null(args_end);
    char args[128];
    snprintf(args, sizeof args, "%.*s", (int)(args_end - at - strlen(open)),
             at + strlen(open));
    char *body = args_end + strlen(" -->\n");
    char *stop = strstr(body, end);
    cr_assert_not_null(stop, "%s: no %s", args, end);
    support_run r = {0};
    cr_assert_eq(support_geodes(&r, "%s", args), 0, "%s: %s", args, r.err);
    cr_expect(strlen(r.out) == (size_t)(stop - body) &&
                  memcmp(r.out, body, strlen(r.out)) == 0,
              "README's table of 'geodes %s' differs from its output: run it "
              "and paste the output between the markers", args);
    support_run_clear(&r);
    blocks++;
  }
  cr_expect_eq(blocks, 3);
  free(text);
}

Test(readme, first_screen) {
  char *text = readme();
  const char *want[] = {
      "bash .ci/build && build/geodes run",
      "bash .ci/build && ctest --test-dir build --output-on-failure -j2",
      "cmake --install build --prefix ~/.local",
      "geodes scenarios --export worldwide -o my.json",
      "geodes schedule my.json --method gcma -o alloc.json",
      "geodes simulate my.json --alloc alloc.json",
      "## What it answers", "## How far to trust the simulator"};
  const char *prev = text;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char *at = strstr(text, want[i]);
    cr_expect(at && at >= prev, "'%s' missing or out of order", want[i]);
    if (at) prev = at;
  }
  free(text);
}

Test(readme, the_install_step_installs_a_geodes_that_runs) {
  char build[1024];
  snprintf(build, sizeof build, "%s", GEODES_BIN);
  char *slash = strrchr(build, '/');
  cr_assert_not_null(slash);
  *slash = '\0';
  const char *prefix = support_path("prefix");
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "cmake --install '%s' --prefix '%s' >/dev/null "
                          "&& cd / && '%s/bin/geodes' models", build, prefix,
                          prefix), 0, "%s", r.err);
  cr_expect(strstr(r.out, "gpt3-xl"), "%s", r.out);
  support_run_clear(&r);
}

Test(readme, the_listing_commands_refuse_bad_usage) {
  const char *cmds[] = {"models --bogus", "gpus extra", "scenarios --markdwn"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    support_run r = {0};
    cr_expect_eq(support_geodes(&r, "%s", cmds[i]), 2, "%s", cmds[i]);
    cr_expect(strstr(r.err, "Try 'geodes "), "%s", r.err);
    support_run_clear(&r);
  }
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "gpus"), 0);
  cr_expect(strstr(r.out, "NAME ") == r.out && strstr(r.out, "\nA100 "), "%s",
            r.out);
  support_run_clear(&r);
}
