/* file: a whole file read into memory, the one reader behind every loader
 * (traces, scenarios, allocations, sweeps). It reports why a read failed
 * rather than wording a message: each loader keeps its own words. */
#ifndef TRACES_FILE_H
#define TRACES_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Why file_read failed: at fopen, or in a read after it (a folder opens and
 * then fails to read with EISDIR), and errno's reason for strerror. */
typedef struct file_error {
  bool opened; /* fopen succeeded and a read failed */
  int errnum;  /* errno of the failing call */
} file_error;

/* The whole file at path, followed by a NUL that *len does not count (the
 * text may hold NULs of its own). The caller frees it. On failure: NULL,
 * and why (may be NULL) says at which step and errno's reason. */
char *file_read(const char *path, size_t *len, file_error *why);

#endif
