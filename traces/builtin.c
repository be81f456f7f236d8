/* builtin: lookup in the generated table (a handful of files: linear scan). */
#include "traces/builtin.h"

#include <string.h>

const builtin_file *builtin_find(const char *name) {
  for (const builtin_file *f = builtin_files; f->name; f++)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}
