/* test_readme: the README and its pages as a contract. Every generated
 * table of a page (between "<!-- geodes ARGS -->" and "<!-- end -->")
 * equals the output of geodes ARGS byte for byte; the command reference
 * sim/cli/COMMANDS.md equals `geodes help --markdown`; the README's first
 * screen gives the two commands, then how to model one's own cluster; the
 * install step it gives puts a geodes that runs in PREFIX/bin. (That every
 * link of a page resolves is tests/check_source.py pages.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(readme, .init = support_dir_make, .fini = support_dir_remove);

#define SOURCE(rel) GEODES_SOURCE_DIR "/" rel
#define COMMANDS_PAGE "sim/cli/COMMANDS.md"

static char *readme(void) { return support_read_file(SOURCE("README.md"), NULL); }

/* Checks the generated blocks of the page at rel; returns how many. */
static int check_blocks(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GEODES_SOURCE_DIR, rel);
  char *text = support_read_file(path, NULL);
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
    cr_assert_not_null(stop, "%s: %s: no %s", rel, args, end);
    support_run r = {0};
    cr_assert_eq(support_geodes(&r, "%s", args), 0, "%s: %s", args, r.err);
    cr_expect(strlen(r.out) == (size_t)(stop - body) &&
                  memcmp(r.out, body, strlen(r.out)) == 0,
              "%s's table of 'geodes %s' differs from its output: run it "
              "and paste the output between the markers", rel, args);
    support_run_clear(&r);
    blocks++;
  }
  free(text);
  return blocks;
}

Test(readme, generated_tables_equal_the_commands) {
  support_run pages = {0};
  cr_assert_eq(support_sh(&pages,
                          "cd '%s' && find README.md traces models schedules "
                          "sim analysis tests -name '*.md' | sort",
                          GEODES_SOURCE_DIR),
               0, "%s", pages.err);
  int blocks = 0;
  for (char *line = strtok(pages.out, "\n"); line; line = strtok(NULL, "\n"))
    blocks += check_blocks(line);
  cr_expect_eq(blocks, 3, "models, gpus and scenarios: %d blocks", blocks);
  support_run_clear(&pages);
}

Test(readme, the_command_reference_equals_help_markdown) {
  size_t len;
  char *page = support_read_file(SOURCE(COMMANDS_PAGE), &len);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "help --markdown"), 0, "%s", r.err);
  cr_expect(r.out_len == len && memcmp(r.out, page, len) == 0,
            COMMANDS_PAGE " differs from 'geodes help --markdown': run "
            "build/geodes help --markdown > " COMMANDS_PAGE);
  support_run_clear(&r);
  free(page);
}

/* `geodes help CMD [ACTION]` prints `geodes CMD [ACTION] --help`. */
static void expect_same_help(const char *help, const char *direct) {
  support_run a = {0}, b = {0};
  cr_assert_eq(support_geodes(&a, "%s", help), 0, "%s: %s", help, a.err);
  cr_assert_eq(support_geodes(&b, "%s", direct), 0, "%s: %s", direct, b.err);
  cr_expect(a.out_len == b.out_len && memcmp(a.out, b.out, a.out_len) == 0,
            "'%s' differs from '%s'", help, direct);
  support_run_clear(&a);
  support_run_clear(&b);
}

Test(readme, help_prints_a_subcommands_help) {
  expect_same_help("help", "--help");
  expect_same_help("help simulate", "simulate --help");
  expect_same_help("help trace", "trace --help");
  expect_same_help("help trace synth", "trace synth --help");
  expect_same_help("help faults check", "faults check --help");
  const char *bad[] = {"help bogus", "help simulate check", "help trace bogus",
                       "help trace check extra", "help --bogus"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    support_run r = {0};
    cr_expect_eq(support_geodes(&r, "%s", bad[i]), 2, "%s", bad[i]);
    cr_expect(strstr(r.err, "Try 'geodes help --help'"), "%s: %s", bad[i],
              r.err);
    cr_expect_eq(r.out_len, 0, "%s", bad[i]);
    support_run_clear(&r);
  }
}

/* One command's section of the reference: its heading, its actions', each
 * usage fenced, and the option tables with the ranges of the table. */
Test(readme, help_markdown_of_one_subcommand) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "help --markdown trace"), 0, "%s", r.err);
  const char *want[] = {
      "\n## geodes trace\n\nCheck or synthesise a network trace.\n\n```text\n",
      "\n### geodes trace check\n\n```text\nusage: geodes trace check",
      "| `--json` |  | print one JSON object",
      "\n### geodes trace synth\n\n```text\nusage: geodes trace synth",
      "| `--seed S` | 0 to 2147483647 | seed of the generator |"};
  const char *prev = r.out;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char *at = strstr(r.out, want[i]);
    cr_expect(at && at >= prev, "'%s' missing or out of order:\n%s", want[i],
              r.out);
    if (at) prev = at;
  }
  cr_expect_null(strstr(r.out, "## geodes simulate"));
  support_run_clear(&r);
  cr_assert_eq(support_geodes(&r, "help --markdown simulate"), 0);
  cr_expect(strstr(r.out, "| `--schedule gpipe\\|1f1b` | `gpipe` or `1f1b` |"),
            "%s", r.out);
  cr_expect(strstr(r.out, "| `--network` | `ideal`, `netem` or `tcp` | "
                          "`--network-model`'s former name |"),
            "%s", r.out);
  support_run_clear(&r);
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
      "## Contents", "## What it answers", "## How far to trust the simulator",
      "## Building and testing", "## Layout"};
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
