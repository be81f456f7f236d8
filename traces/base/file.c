/* file: see file.h. Invariant: the buffer always keeps one byte free past
 * the bytes read, so the terminating NUL needs no second allocation; it
 * doubles when full, so a file of n bytes costs O(n) copies in all, and the
 * loop stops once more than the limit came (a file that grows while it
 * is read). The file is opened non-blocking, so a FIFO without a writer
 * opens at once and fstat refuses it before any read could block. The
 * registry of used files holds each (device, inode) once; a run uses a few
 * files (a sweep some hundreds), so a linear search is enough. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/mem.h"

/* ---- the files this run used ---- */

typedef struct used {
  dev_t dev;
  ino_t ino;
  file_use use;
} used;

static used *uses;
static size_t nuses, uses_cap;

static void note(const struct stat *st, file_use use) {
  if (!S_ISREG(st->st_mode) || use == FILE_USE_NONE) return;
  if (file_use_of(st) != FILE_USE_NONE) return; /* the first use stays */
  mem_grow((void **)&uses, &uses_cap, nuses + 1, sizeof *uses);
  uses[nuses++] = (used){st->st_dev, st->st_ino, use};
}

file_use file_use_of(const struct stat *st) {
  for (size_t i = 0; i < nuses; i++)
    if (uses[i].dev == st->st_dev && uses[i].ino == st->st_ino)
      return uses[i].use;
  return FILE_USE_NONE;
}

void file_use_note(const char *path, file_use use) {
  struct stat st;
  if (stat(path, &st) == 0) note(&st, use);
}

/* ---- reading ---- */

static char *fail(file_error *why, bool opened, int errnum, const char *what) {
  why->opened = opened;
  why->errnum = errnum;
  snprintf(why->reason, sizeof why->reason, "%s",
           what ? what : strerror(errnum));
  return NULL;
}

const char *file_not_regular(mode_t m) {
  if (S_ISREG(m)) return NULL;
  if (S_ISDIR(m)) return "a folder, not a regular file";
  if (S_ISCHR(m)) return "a character device, not a regular file";
  if (S_ISBLK(m)) return "a block device, not a regular file";
  if (S_ISFIFO(m)) return "a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(m)) return "a socket, not a regular file";
  return "not a regular file";
}

static char *too_big(file_error *why, size_t max) {
  char what[96];
  snprintf(what, sizeof what, "larger than the %zu MiB geodes reads for it",
           max >> 20);
  return fail(why, true, 0, what);
}

char *file_read(const char *path, size_t max, size_t *len, file_error *why) {
  file_error local;
  if (!why) why = &local;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(why, false, errno, NULL);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int reason = errno;
    close(fd);
    return fail(why, true, reason, NULL);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(why, true, 0, file_not_regular(st.st_mode));
  }
  if ((unsigned long long)st.st_size > max) {
    close(fd);
    return too_big(why, max);
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int reason = errno;
    close(fd);
    return fail(why, true, reason, NULL);
  }
  size_t cap = 4096, n = 0, got;
  char *buf = mem_alloc(cap);
  while (n <= max &&
         (got = fread(buf + n, 1, cap - n - 1, f)) > 0)
    if ((n += got) + 1 == cap) buf = mem_realloc(buf, cap *= 2);
  int reason = errno; /* fread's, when it failed */
  bool bad = ferror(f);
  fclose(f);
  if (bad || n > max) {
    free(buf);
    return n > max ? too_big(why, max) : fail(why, true, reason, NULL);
  }
  buf[n] = '\0';
  *len = n;
  note(&st, FILE_USE_READ);
  return buf;
}

char *file_load(const char *path, const char *what, size_t max, size_t *len,
                err *e) {
  if (!path[0]) {
    err_set(e, ERR_IO, "an empty file name for %s", what);
    return NULL;
  }
  file_error why;
  char *text = file_read(path, max, len, &why);
  if (!text) err_set(e, ERR_IO, "%s: cannot read %s: %s", path, what, why.reason);
  return text;
}

char *file_beside(const char *file, const char *name) {
  const char *slash = strrchr(file, '/');
  size_t dir = name[0] == '/' || !slash ? 0 : (size_t)(slash - file) + 1;
  char *path = mem_alloc(dir + strlen(name) + 1);
  memcpy(path, file, dir);
  strcpy(path + dir, name);
  return path;
}
