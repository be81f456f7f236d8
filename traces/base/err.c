/* err: see err.h. The first failure wins, so a message names the root cause
 * rather than a consequence of it. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

void err_clear(err *e) {
  if (!e) return;
  e->code = ERR_OK;
  e->msg[0] = '\0';
  e->field = -1;
}

__attribute__((format(printf, 4, 0)))
static int record(err *e, int field, int code, const char *fmt, va_list ap) {
  if (!e || e->code != ERR_OK) return code;
  e->code = code;
  e->field = field;
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  return code;
}

int err_set(err *e, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(e, -1, code, fmt, ap);
  va_end(ap);
  return code;
}

int err_set_field(err *e, int field, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(e, field, code, fmt, ap);
  va_end(ap);
  return code;
}

int err_blame(err *e, int field, int code) {
  if (e && e->code != ERR_OK) e->field = field;
  return code;
}

int err_field(const err *e) {
  return e && e->code != ERR_OK ? e->field : -1;
}

const char *err_what(int code) {
  switch (code) {
#define ERR_CASE(name, value, what) \
  case ERR_##name:                  \
    return what;
    ERR_MAP(ERR_CASE)
#undef ERR_CASE
  }
  return "unknown error";
}

const char *err_num(double x, char *buf) {
  if (x == floor(x) && fabs(x) < ERR_NUM_INTEGERS) {
    snprintf(buf, ERR_NUM_MAX, "%.0f", x + 0.0); /* -0 is 0 */
    return buf;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, ERR_NUM_MAX, "%.*g", p, x);
    if (strtod(buf, NULL) == x) break;
  }
  return buf;
}
