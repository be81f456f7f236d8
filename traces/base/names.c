/* names: see names.h. Lists are short (a handful of names): linear scans. */
#include "base/names.h"

#include <stdio.h>
#include <string.h>

int names_find(const char *const *names, const char *name) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int names_count(const char *const *names) {
  int n = 0;
  while (names[n]) n++;
  return n;
}

void names_join(const char *const *names, const char *sep, const char *last,
                char *buf, size_t size) {
  size_t at = 0;
  int n = names_count(names);
  if (size) buf[0] = '\0';
  for (int i = 0; i < n && at < size; i++) {
    const char *before = i == 0 ? "" : i == n - 1 ? last : sep;
    int k = snprintf(buf + at, size - at, "%s%s", before, names[i]);
    if (k < 0) break;
    at += (size_t)k;
  }
}
