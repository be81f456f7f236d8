/* cli_parse: see cli_parse.h. */
#include "sim/cli/cli_parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jfield.h"

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "geodes %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nTry 'geodes %s --help'.\n", cmd);
  va_end(ap);
  return CLI_USAGE;
}

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("geodes: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_ERROR;
}

/* s as an exact integer written as a real (16e6, 1.5e3): true and *v when
 * it is one within 2^53 (every double there is exact), as strtod reads it
 * whole. */
static bool exact_real(const char *s, long *v) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end || errno || strpbrk(s, "xXpP") || !isfinite(x) ||
      x != floor(x) || !(fabs(x) <= JFIELD_EXACT_MAX))
    return false;
  *v = (long)x;
  return true;
}

bool cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                   long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if ((end == s || *end) && !errno && exact_real(s, &v)) end = (char *)"";
  if (end == s || *end || errno || v < lo || v > hi) {
    cli_usage_error(cmd, "%s wants an integer in [%ld, %ld], not '%s'", opt,
                    lo, hi, s);
    return false;
  }
  *out = v;
  return true;
}

bool cli_parse_real(const char *cmd, const char *opt, const char *s,
                    double lo, double hi, bool open, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi ||
      (open && v == lo)) {
    cli_usage_error(cmd, "%s wants a number in %s%g, %g], not '%s'", opt,
                    open ? "(" : "[", lo, hi, s);
    return false;
  }
  *out = v + 0.0; /* -0 is 0: printed as 0 */
  return true;
}

bool cli_parse_double(const char *cmd, const char *opt, const char *s,
                      double lo, double hi, double *out) {
  return cli_parse_real(cmd, opt, s, lo, hi, false, out);
}
