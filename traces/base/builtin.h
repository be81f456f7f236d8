/* builtin: the files of traces/data, compiled into the library by
 * traces/embed.cmake, so built-in scenarios load from any working directory
 * and nothing reads ../shared at run time. */
#ifndef BASE_BUILTIN_H
#define BASE_BUILTIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct builtin_file {
  const char *name;  /* file name inside traces/data, e.g. "worldwide.json" */
  const char *data;  /* contents, NUL-terminated (size excludes the NUL) */
  size_t size;
} builtin_file;

/* The table, ending with a {NULL, NULL, 0} entry (generated). */
extern const builtin_file builtin_files[];

/* The built-in file called name, or NULL. */
const builtin_file *builtin_find(const char *name);

/* A content hash of every built-in file (names and bytes): a sweep row
 * records it, so rows made with other built-in data are recomputed. */
uint64_t builtin_hash(void);

#endif
