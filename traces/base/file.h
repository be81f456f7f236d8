/* file: a whole file read into memory, the one reader behind every loader
 * (traces, scenarios, allocations, sweeps, faults, measurements, params).
 * It reads regular files only, up to a limit, so /dev/zero, a folder or a
 * FIFO without a writer is refused at once, in the same words for every
 * input, instead of growing memory or hanging. It also keeps the registry
 * of the files this process read or wrote whole, which file_out consults so
 * that no output replaces an input of the same run. */
#ifndef BASE_FILE_H
#define BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"

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
 * On failure: NULL, and why (may be NULL) says at which step and why. A
 * file read is noted in the registry below (FILE_USE_READ). */
char *file_read(const char *path, size_t max, size_t *len, file_error *why);

/* file_read with the message every input of geodes gives, in e (ERR_IO):
 * "PATH: cannot read WHAT: REASON" (what: "the fault trace", ...), or
 * "an empty file name for WHAT" when path is "". NULL then. */
char *file_load(const char *path, const char *what, size_t max, size_t *len,
                err *e);

/* Why a file of mode m is no input (the words of file_read's reasons: "a
 * folder, not a regular file", "a FIFO (named pipe), not a regular file",
 * ...); NULL for a regular file. For the readers that open a file
 * themselves (the results store). */
const char *file_not_regular(mode_t m);

/* A path written inside the file at `file`, resolved as every format of
 * geodes resolves it: relative to that file's folder (name itself when
 * absolute, or when file has no folder: the working directory is then the
 * file's). Malloc'ed; the caller frees it. */
char *file_beside(const char *file, const char *name);

/* ---- the files this run used ---- */

/* How this process used a file (by device and inode, so every name of it
 * counts): an input read (file_read, a database opened), or an output
 * written whole (file_out). A later use of another kind keeps the first. */
typedef enum file_use { FILE_USE_NONE, FILE_USE_READ, FILE_USE_WRITTEN } file_use;

/* Notes the file at path (symbolic links followed) as used; a path that
 * does not exist, or is not a regular file, is not noted. */
void file_use_note(const char *path, file_use use);

/* How the file of st was used so far (FILE_USE_NONE: not at all). */
file_use file_use_of(const struct stat *st);

#endif
