/* test_cli_progress: the front end's one progress reporter
 * (sim/cli/cli_progress.h), end to end. With stderr to a file, every long
 * command writes plain lines — "geodes CMD: DONE/TOTAL UNIT (P %), T s,
 * about T s left" — no escape code, no carriage return, done never going
 * back, the last one complete; nothing on work shorter than the interval;
 * nothing under --quiet; on a terminal (script(1)'s pseudo-terminal), a
 * bar redrawn in place. GEODES_PROGRESS_INTERVAL_S makes the interval
 * short, so the runs stay short; a bad value is refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/support.h"

TestSuite(cli_progress, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

#define THREE GEODES_FIXTURES "/analysis/three-sites.json"

/* Each long command, short here, with the phrase its lines carry (its
 * phases' phrases between '|'). */
typedef struct command {
  const char *name, *args, *units;
} command;

static const command COMMANDS[] = {
    {"simulate", "simulate worldwide-varying --method dtfm-identity "
                 "--iterations 20", "iterations"},
    {"simulate", "simulate worldwide --method dtfm-identity --duration-s 200",
     "simulated s"},
    {"schedule", "schedule " THREE " --method random-search --trials 40",
     "candidates"},
    {"schedule", "schedule " THREE " --shape auto",
     "configurations simulated"},
    {"validate", "validate " THREE " --samples 4",
     "search candidates|simulations"},
    {"reproduce", "reproduce --data " GEODES_FIXTURES "/dtfm_geo_measured.csv",
     "rows"},
    {"run", "run " THREE " --db '%s' --samples 4",
     "placements|search candidates|validation simulations"},
    {"calibrate", "calibrate --data builtin:p2p --fit window_bytes --folds 0",
     "simulations"},
    {"sweep", "sweep '%s' --db '%s'", "points"},
    {"explain", "explain worldwide --method dtfm-identity --top 3", "re-runs"},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof *COMMANDS)

/* Runs command c (its database and sweep file in the test's folder, each
 * run a fresh one), extra appended; returns its exit status. */
static int run(support_run *r, const command *c, const char *extra) {
  static int n;
  const char *db = support_path("p%d.db", n++);
  char args[512];
  if (strcmp(c->name, "sweep") == 0) {
    const char *sw = support_write_file(
        support_path("sw.json"),
        "{\"scenario\": [\"worldwide\"], \"method\": [\"dtfm-identity\", "
        "\"random\"], \"seed\": [1, 2, 3]}\n");
    snprintf(args, sizeof args, c->args, sw, db);
  } else {
    snprintf(args, sizeof args, c->args, db);
  }
  return support_geodes(r, "%s %s >/dev/null", args, extra);
}

/* done and total of line (after its "geodes CMD: " prefix), or false. */
static bool counts(const char *line, double *done, double *total) {
  const char *colon = strstr(line, ": ");
  return colon && sscanf(colon + 2, "%lf/%lf", done, total) == 2;
}

/* The index of the phrase of units ("a|b") that line names, or -1. */
static int phase_of(const char *line, const char *units) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", units);
  int k = 0;
  for (char *save, *u = strtok_r(buf, "|", &save); u;
       u = strtok_r(NULL, "|", &save), k++)
    if (strstr(line, u)) return k;
  return -1;
}

/* Every line of text is a plain progress line of c; done never goes back
 * within a phase; the last is complete; returns the lines. */
static int expect_lines(const char *text, const command *c) {
  cr_expect(!strchr(text, '\r'), "%s: a carriage return", c->args);
  cr_expect(!strchr(text, '\033'), "%s: an escape code", c->args);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "geodes %s: ", c->name);
  int lines = 0;
  bool estimated = false;
  double last = -1, done = 0, total = 0;
  int last_phase = -1;
  for (const char *at = text; *at;) {
    const char *nl = strchr(at, '\n');
    cr_assert(nl, "%s: an unfinished line: %s", c->args, at);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(nl - at), at);
    cr_expect(strncmp(line, prefix, strlen(prefix)) == 0, "%s: %s", c->args,
              line);
    int phase = phase_of(line, c->units);
    cr_expect_geq(phase, 0, "%s: %s", c->args, line);
    estimated |= strstr(line, ", about ") && strstr(line, " left");
    double was = total;
    if (counts(line, &done, &total)) { /* a phase: a unit, a total */
      if (phase != last_phase || total != was || last == was) last = -1;
      cr_expect_geq(done, last, "%s: %s", c->args, line);
      last = done, last_phase = phase;
    }
    lines++;
    at = nl + 1;
  }
  cr_expect_gt(lines, 0, "%s: no progress line", c->args);
  if (strcmp(c->name, "calibrate") != 0) { /* its total is unknown */
    cr_expect_eq(done, total, "%s: the last line is not complete", c->args);
    cr_expect(estimated, "%s: no estimate of the time left", c->args);
  }
  return lines;
}

Test(cli_progress, plain_lines_when_stderr_is_a_file) {
  setenv("GEODES_PROGRESS_INTERVAL_S", "0", 1);
  support_run r = {0};
  for (size_t i = 0; i < NCOMMANDS; i++) {
    cr_assert_eq(run(&r, &COMMANDS[i], ""), 0, "%s: %s", COMMANDS[i].args,
                 r.err);
    expect_lines(r.err, &COMMANDS[i]);
  }
  support_run_clear(&r);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Lines come an interval apart: at most one per interval of the run's
 * time (and the last), not one per iteration (60 of them, a few ms each
 * here). */
Test(cli_progress, one_line_per_interval) {
  setenv("GEODES_PROGRESS_INTERVAL_S", "0.1", 1);
  support_run r = {0};
  double t0 = now_s();
  /* COMMANDS[0] with 60 iterations (an option is given once) */
  const command sixty = {"simulate", "simulate worldwide-varying --method "
                         "dtfm-identity --iterations 60", "iterations"};
  cr_assert_eq(run(&r, &sixty, ""), 0, "%s", r.err);
  double took = now_s() - t0;
  int lines = expect_lines(r.err, &sixty);
  cr_expect_leq(lines, (int)(took / 0.1) + 1, "%d lines in %.2f s: %s", lines,
                took, r.err);
  support_run_clear(&r);
}

/* Work shorter than the interval (the default, 5 s, or one given) prints
 * nothing; so does --quiet (and -q) at any interval. */
Test(cli_progress, nothing_on_short_work_nor_under_quiet) {
  support_run r = {0};
  unsetenv("GEODES_PROGRESS_INTERVAL_S");
  for (size_t i = 0; i < NCOMMANDS; i++) {
    cr_assert_eq(run(&r, &COMMANDS[i], ""), 0, "%s: %s", COMMANDS[i].args,
                 r.err);
    cr_expect_str_eq(r.err, "", "%s", COMMANDS[i].args);
  }
  setenv("GEODES_PROGRESS_INTERVAL_S", "60", 1);
  cr_assert_eq(run(&r, &COMMANDS[0], ""), 0);
  cr_expect_str_eq(r.err, "");
  setenv("GEODES_PROGRESS_INTERVAL_S", "0", 1);
  for (size_t i = 0; i < NCOMMANDS; i++) {
    cr_assert_eq(run(&r, &COMMANDS[i], i % 2 ? "--quiet" : "-q"), 0, "%s: %s",
                 COMMANDS[i].args, r.err);
    cr_expect_str_eq(r.err, "", "%s --quiet", COMMANDS[i].args);
  }
  support_run_clear(&r);
}

/* On a terminal: a bar, redrawn in place ('\r'), its line ended once. */
Test(cli_progress, a_bar_on_a_terminal) {
  if (support_sh(NULL, "command -v script") != 0)
    cr_skip_test("no script(1) to give geodes a terminal");
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "GEODES_PROGRESS_INTERVAL_S=0 script -qec "
                              "\"'%s' simulate worldwide-varying --method "
                              "dtfm-identity --iterations 20 >/dev/null\" "
                              "/dev/null",
                          GEODES_BIN),
               0, "%s", r.err);
  cr_expect(strstr(r.out, "\r[") != NULL, "%s", r.out);
  cr_expect(strstr(r.out, "] 20/20 iterations (100 %)") != NULL, "%s", r.out);
  support_run_clear(&r);
}

Test(cli_progress, a_bad_interval_is_refused) {
  support_run r = {0};
  static const char *const bad[] = {"abc", "-1", "1e9", "5s", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("GEODES_PROGRESS_INTERVAL_S", bad[i], 1);
    cr_expect_eq(support_geodes(&r, "simulate worldwide"), 2, "'%s'", bad[i]);
    char want[128];
    snprintf(want, sizeof want, "geodes: GEODES_PROGRESS_INTERVAL_S='%s': a "
             "number of seconds from 0 to 86400 expected\n", bad[i]);
    cr_expect_str_eq(r.err, want);
    cr_expect_str_eq(r.out, "");
  }
  unsetenv("GEODES_PROGRESS_INTERVAL_S");
  support_run_clear(&r);
}
