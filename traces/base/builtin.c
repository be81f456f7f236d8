/* builtin: lookup in the generated table (a handful of files: linear scan)
 * and its hash (O(bytes): a caller that needs it often keeps it). */
#include "base/builtin.h"

#include <string.h>

#include "base/hash.h"

uint64_t builtin_hash(void) {
  uint64_t h = HASH_INIT;
  for (const builtin_file *f = builtin_files; f->name; f++)
    h = hash_bytes(hash_str(h, f->name), f->data, f->size);
  return h;
}

const builtin_file *builtin_find(const char *name) {
  for (const builtin_file *f = builtin_files; f->name; f++)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}
