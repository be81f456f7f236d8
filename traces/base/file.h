/* file: a whole file read into memory, the one reader behind every loader
 * (traces, scenarios, allocations, sweeps). It reads regular files only, up
 * to FILE_MAX_BYTES, so /dev/zero or a FIFO without a writer is refused
 * at once instead of growing memory or hanging. It reports why a read failed
 * rather than wording a message: each loader keeps its own words. */
#ifndef BASE_FILE_H
#define BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The largest inputs geodes reads: a trace up to 1 GiB (its rows are then
 * bounded in memory by trace.h, and trace synth writes within both), a JSON
 * file (scenario, allocation, sweep) up to 16 MiB, since jansson's tree takes
 * some twenty times its text: far beyond any such file geodes can use (an
 * allocation of 8192 devices is 50 KB, a million sweep seeds 8 MB). */
#define FILE_MAX_BYTES (1ULL << 30)
#define FILE_MAX_JSON_BYTES (16ULL << 20)

/* Why file_read failed: at open (opened false), or after it (opened true:
 * not a regular file, larger than the limit asked, or a failing read), with
 * errno's number where there was one (0 otherwise) and the reason in words
 * ("No such file or directory", "a folder, not a regular file", ...). */
typedef struct file_error {
  bool opened;
  int errnum;
  char reason[96];
} file_error;

/* The whole file at path, at most max bytes, followed by a NUL that *len
 * does not count (the text may hold NULs of its own). The caller frees it.
 * On failure: NULL, and why (may be NULL) says at which step and why. */
char *file_read(const char *path, size_t max, size_t *len, file_error *why);

/* A path written inside the file at `file`, resolved as every format of
 * geodes resolves it: relative to that file's folder (name itself when
 * absolute, or when file has no folder: the working directory is then the
 * file's). Malloc'ed; the caller frees it. */
char *file_beside(const char *file, const char *name);

#endif
