/* err: error codes for bad input and the message that goes with them.
 * Invariant: an err holds the first failure reported to it; its message
 * already names the file and line ("FILE:LINE: message") where one applies,
 * and the command line prints it once, unchanged. Its field says which
 * field of a record the failure is about (for a run's knobs, a row of
 * traces/workload.h's WORKLOAD_MAP), so that a caller can name it its own
 * way (an option, a sweep key and its line) without reading the message. */
#ifndef BASE_ERR_H
#define BASE_ERR_H

#include <stddef.h>

/* X(name, value, what) — one table for every module (libuv's UV_ERRNO_MAP). */
#define ERR_MAP(X)                                                   \
  X(OK, 0, "no error")                                               \
  X(IO, -1, "cannot read or write a file")                           \
  X(PARSE, -2, "malformed input")                                    \
  X(RANGE, -3, "value out of range")                                 \
  X(UNKNOWN, -4, "unknown name")                                     \
  X(DUPLICATE, -5, "duplicate entry")                                \
  X(MISSING, -6, "missing entry")                                    \
  X(CONFIG, -7, "inconsistent configuration")                        \
  X(DB, -8, "database error")                                        \
  X(MEMORY, -9, "does not fit in memory")

enum {
#define ERR_ENUM(name, value, what) ERR_##name = (value),
  ERR_MAP(ERR_ENUM)
#undef ERR_ENUM
};

#define ERR_MSG_MAX 1024

typedef struct err {
  int code;               /* ERR_OK or one of ERR_MAP's negative codes */
  char msg[ERR_MSG_MAX];  /* "FILE:LINE: message", or "" when code is OK */
  int field;              /* the field the failure is about, -1 when none
                             (meaningful only when code is not OK) */
} err;

/* Resets e to "no error". e may be NULL. */
void err_clear(err *e);

/* Records a failure in e (if e holds none yet; its field -1) and returns
 * code, so callers write `return err_set(e, ERR_PARSE, "%s:%d: bad x",
 * file, line);`. e may be NULL: the code is still returned. */
int err_set(err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* err_set naming field as the failure's. */
int err_set_field(err *e, int field, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Names field as the cause of the failure e holds, which its caller has
 * just recorded (e may be NULL or hold none: nothing happens); returns
 * code, for `return err_blame(e, row, rc);`. */
int err_blame(err *e, int field, int code);

/* The field of e's failure, -1 when none (or no failure). */
int err_field(const err *e);

/* x in a message, exactly: an integer below ERR_NUM_INTEGERS as one
 * ("1000001", where %g wrote "1e+06" and a range message read "must be
 * <= 1e+06, not 1e+06"; "-20"), else the shortest "%g" text that reads
 * back as x ("0.1", "1e-320", "0.30000000000000004"), into buf of
 * ERR_NUM_MAX bytes. Returns buf. */
#define ERR_NUM_MAX 32
#define ERR_NUM_INTEGERS 1e15
const char *err_num(double x, char *buf);

/* The short description of a code ("malformed input"). */
const char *err_what(int code);

#endif
