/* cli_progress: the one progress reporter of the front end's long commands
 * (sweep, schedule, validate, reproduce, run, calibrate, explain, simulate's
 * training runs). The libraries report through their hooks; each hook of
 * a command hands what it heard to cli_progress_update.
 *
 * On a terminal it draws a bar, redrawn in place at most every
 * CLI_PROGRESS_BAR_EVERY_S. Elsewhere (a file, a pipe, a CI log) it writes
 * one plain line every interval: "geodes sweep: 40/120 points (33 %),
 * 16 s, about 32 s left", with no escape code and no carriage return. The
 * interval is GEODES_PROGRESS_INTERVAL_S seconds in the environment
 * (default CLI_PROGRESS_INTERVAL_S). Nothing appears before the first
 * interval has passed (the bar's: the shorter of it and
 * CLI_PROGRESS_BAR_DELAY_S), so short work prints nothing; --quiet
 * (CLI_OPT_QUIET) prints nothing at all. The estimate of the time left is
 * what is left at the phase's rate since its first update (so the work
 * before it, e.g. loading or searching, does not count).
 * Invariant: it writes to stderr only, and what a command computes or
 * prints on stdout never depends on it. */
#ifndef SIM_CLI_CLI_PROGRESS_H
#define SIM_CLI_CLI_PROGRESS_H

#include <stdbool.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_opt.h"

#define CLI_PROGRESS_ENV "GEODES_PROGRESS_INTERVAL_S"
#define CLI_PROGRESS_INTERVAL_S 5     /* between plain lines, by default */
#define CLI_PROGRESS_BAR_DELAY_S 1.0  /* before a terminal's first bar */
#define CLI_PROGRESS_BAR_EVERY_S 0.1  /* between two drawings of the bar */
#define CLI_PROGRESS_MAX_INTERVAL_S 86400.0 /* the largest interval taken */

/* The --quiet (-q) entry of a long command's option table. */
#define CLI_OPT_QUIET(v)                                                   \
  {.kind = CLI_OPT_FLAG_, .short_name = 'q', .long_name = "quiet",         \
   .arg = "-q, --quiet", .value = CLI_OPT_PTR_(bool, v),                   \
   .help = "no progress on stderr (else a bar on a\nterminal, a line "      \
           "every " CLI_PROGRESS_ENV "\nseconds elsewhere, default "        \
           CLI_STR(CLI_PROGRESS_INTERVAL_S) ")"}

typedef enum cli_progress_mode {
  CLI_PROGRESS_OFF,
  CLI_PROGRESS_BAR,
  CLI_PROGRESS_LINES
} cli_progress_mode;

/* Plain data: what was heard last and what is on the screen. */
typedef struct cli_progress {
  const char *cmd;          /* "sweep": the lines' prefix */
  cli_progress_mode mode;
  double delay_s, every_s;  /* first showing after delay_s; then apart */
  double t0;                /* monotonic seconds: the start */
  double phase_t0, phase_done; /* the phase's first update: when, done */
  double shown_s;           /* when last shown */
  const char *unit;         /* the phase's unit, "points" (static) */
  double done, total;       /* last heard (total <= 0: unknown) */
  double shown_done;        /* done when last shown; < 0: never */
  char extra[64];           /* last heard: ", best 43.2 s" or "" */
  int drawn;                /* bar: characters on the line now, 0: none */
} cli_progress;

/* Seconds on a monotonic clock (an arbitrary origin). */
double cli_now_s(void);

/* The interval in the environment (CLI_PROGRESS_ENV), or the default when
 * unset. A value that is not a number of seconds in [0,
 * CLI_PROGRESS_MAX_INTERVAL_S] gives -1. */
double cli_progress_interval_s(void);

/* Starts p for command cmd (a static string): off when quiet, a bar when
 * stderr is a terminal, else plain lines. */
void cli_progress_start(cli_progress *p, const char *cmd, bool quiet);

/* What a hook heard: done of total units (total <= 0: unknown, no
 * estimate) in the phase named by unit (a static string; another unit,
 * another total or done going back starts a new phase, with its own
 * estimate); extra (NULL: none) is appended to what is shown, e.g. "best
 * 43.211 s". Shows it when it is due. */
void cli_progress_update(cli_progress *p, const char *unit, double done,
                         double total, const char *extra);

/* Before another message on stderr: ends the bar's line (the next update
 * draws it again below). */
void cli_progress_interrupt(cli_progress *p);

/* The end of the work: where something was shown, the last state heard
 * (the bar's line ended, or one more line when it moved since the last);
 * nothing otherwise. */
void cli_progress_end(cli_progress *p);

#endif
