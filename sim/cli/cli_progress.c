/* cli_progress: see cli_progress.h.
 * Invariant: a bar's line holds p->drawn characters and no newline; a
 * plain line always ends with one, so a line never carries a '\r'. */
#include "sim/cli/cli_progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BAR_WIDTH 30

double cli_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double cli_progress_interval_s(void) {
  const char *v = getenv(CLI_PROGRESS_ENV);
  if (!v) return CLI_PROGRESS_INTERVAL_S;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x >= 0 && x <= CLI_PROGRESS_MAX_INTERVAL_S))
    return -1;
  return x;
}

void cli_progress_start(cli_progress *p, const char *cmd, bool quiet) {
  double every = cli_progress_interval_s();
  if (every < 0) every = CLI_PROGRESS_INTERVAL_S; /* main refused it */
  bool bar = cli_stderr_is_tty();
  double now = cli_now_s();
  *p = (cli_progress){
      .cmd = cmd,
      .mode = quiet ? CLI_PROGRESS_OFF
                    : bar ? CLI_PROGRESS_BAR : CLI_PROGRESS_LINES,
      .delay_s = bar ? fmin(every, CLI_PROGRESS_BAR_DELAY_S) : every,
      .every_s = bar ? CLI_PROGRESS_BAR_EVERY_S : every,
      .t0 = now, .shown_s = -INFINITY, .unit = "",
      .shown_done = -1};
}

/* A duration as people read it: "4.2 s", "42 s", "3 min 05 s",
 * "2 h 07 min". */
static void duration(char *buf, size_t size, double s) {
  long n = lround(fmax(s, 0));
  if (s < 9.95) snprintf(buf, size, "%.1f s", fmax(s, 0));
  else if (n < 60) snprintf(buf, size, "%ld s", n);
  else if (n < 3600) snprintf(buf, size, "%ld min %02ld s", n / 60, n % 60);
  else snprintf(buf, size, "%ld h %02ld min", n / 3600, n / 60 % 60);
}

/* "40/120 points (33 %), 16 s, about 32 s left, best ..." into buf. */
static void state(const cli_progress *p, double now, char *buf,
                  size_t size) {
  char so_far[32], left[32];
  duration(so_far, sizeof so_far, now - p->t0);
  int n;
  if (p->total > 0) {
    n = snprintf(buf, size, "%.0f/%.0f %s (%.0f %%), %s", p->done, p->total,
                 p->unit, floor(100 * p->done / p->total), so_far);
    double moved = p->done - p->phase_done;
    if (moved > 0 && p->done < p->total && n > 0 && (size_t)n < size) {
      double rest = (now - p->phase_t0) * (p->total - p->done) / moved;
      duration(left, sizeof left, rest);
      n += snprintf(buf + n, size - (size_t)n, ", about %s left", left);
    }
  } else {
    n = snprintf(buf, size, "%.0f %s, %s", p->done, p->unit, so_far);
  }
  if (p->extra[0] && n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, ", %s", p->extra);
}

/* The bar, in place: "\r[####    ] STATE" padded over the last one. */
static void draw_bar(cli_progress *p, double now) {
  char text[256];
  state(p, now, text, sizeof text);
  int fill = p->total > 0 ? (int)(BAR_WIDTH * fmin(p->done / p->total, 1))
                          : 0;
  int n = fprintf(stderr, "\r[%.*s%*s] %s", fill,
                  "##############################", BAR_WIDTH - fill, "",
                  text);
  if (n > 0 && n - 1 < p->drawn) fprintf(stderr, "%*s", p->drawn - n + 1, "");
  p->drawn = n > 1 ? n - 1 : 1;
  fflush(stderr);
}

static void show(cli_progress *p, double now) {
  if (p->mode == CLI_PROGRESS_BAR) {
    draw_bar(p, now);
  } else {
    char text[256];
    state(p, now, text, sizeof text);
    fprintf(stderr, "geodes %s: %s\n", p->cmd, text);
    fflush(stderr);
  }
  p->shown_s = now;
  p->shown_done = p->done;
}

void cli_progress_update(cli_progress *p, const char *unit, double done,
                         double total, const char *extra) {
  if (p->mode == CLI_PROGRESS_OFF) return;
  double now = cli_now_s();
  if (strcmp(unit, p->unit) != 0 || done < p->done || total != p->total)
    p->unit = unit, p->phase_t0 = now, p->phase_done = done;
  p->done = done, p->total = total;
  snprintf(p->extra, sizeof p->extra, "%s", extra ? extra : "");
  if (now - p->t0 >= p->delay_s && now - p->shown_s >= p->every_s)
    show(p, now);
}

void cli_progress_interrupt(cli_progress *p) {
  if (p->mode != CLI_PROGRESS_BAR || !p->drawn) return;
  fputc('\n', stderr);
  p->drawn = 0;
}

void cli_progress_end(cli_progress *p) {
  if (p->mode == CLI_PROGRESS_OFF || p->shown_done < 0) return;
  double now = cli_now_s();
  if (p->mode == CLI_PROGRESS_BAR) {
    draw_bar(p, now);
    fputc('\n', stderr);
    p->drawn = 0;
  } else if (p->done != p->shown_done) {
    show(p, now);
  }
  p->mode = CLI_PROGRESS_OFF;
}
