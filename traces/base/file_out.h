/* file_out: the one way geodes writes a file, whole or not at all.
 *
 *   what is there            what file_out does
 *   nothing, a regular file  writes a temporary beside it, renamed over it
 *                            at close: a reader sees the old file or the
 *                            new one, never half of it
 *   a symbolic link          the same for the file it leads to (dangling
 *                            or not); the link stays a link
 *   a device, a pipe         written through (never replaced), as is a
 *                            descriptor's name (/dev/stdout, /dev/fd/N)
 *   a folder                 refused
 *   an input of this run     refused (file_use_of: read, or written once
 *                            already by this run)
 *
 * Invariant: while a temporary exists it is listed, so that a signal
 * handler (file_out_abandon) removes it: an interrupted command leaves
 * every output complete or absent. */
#ifndef BASE_FILE_OUT_H
#define BASE_FILE_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"

typedef struct file_out {
  FILE *f;          /* where to write */
  const char *path; /* as given (borrowed) */
  const char *what; /* "the timeline", for messages (borrowed) */
  char *target;     /* the file the temporary replaces; NULL: through */
  char *tmp;        /* the temporary; NULL when written through */
  int slot;         /* its place in the list of temporaries; -1: none */
} file_out;

/* Opens o to write path, named in messages as what ("the allocation").
 * ERR_OK, or ERR_IO with "PATH: cannot write WHAT: REASON" in e (an empty
 * path: "an empty file name for WHAT"); nothing is created then. */
int file_out_open(file_out *o, const char *path, const char *what, err *e);

/* Ends o. With keep and no write error, the temporary is renamed over its
 * target (unless that became an input of this run meanwhile), which is
 * noted FILE_USE_WRITTEN; else the temporary is removed and the old file
 * stays. Returns ERR_OK or ERR_IO (e filled; e NULL: no message). */
int file_out_close(file_out *o, bool keep, err *e);

/* Removes every temporary of this process that is still open; for a
 * signal handler (async-signal-safe: unlink and getpid only). */
void file_out_abandon(void);

#endif
