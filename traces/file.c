/* file: see file.h. Invariant: the buffer always keeps one byte free past
 * the bytes read, so the terminating NUL needs no second allocation; it
 * doubles when full, so a file of n bytes costs O(n) copies in all. */
#include "traces/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "traces/mem.h"

char *file_read(const char *path, size_t *len, file_error *why) {
  file_error local;
  if (!why) why = &local;
  FILE *f = fopen(path, "rb");
  if (!f) {
    *why = (file_error){false, errno};
    return NULL;
  }
  size_t cap = 4096, n = 0, got;
  char *buf = mem_alloc(cap);
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
    if ((n += got) + 1 == cap) buf = mem_realloc(buf, cap *= 2);
  int reason = errno; /* fread's, when it failed */
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    *why = (file_error){true, reason};
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}
