/* err: see err.h. The first failure wins, so a message names the root cause
 * rather than a consequence of it. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>

void err_clear(err *e) {
  if (!e) return;
  e->code = ERR_OK;
  e->msg[0] = '\0';
}

int err_set(err *e, int code, const char *fmt, ...) {
  if (!e || e->code != ERR_OK) return code;
  e->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return code;
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
