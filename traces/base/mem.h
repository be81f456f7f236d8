/* mem: allocation that never returns NULL. Out of memory aborts here, in one
 * place (Redis's zmalloc), so no caller tests for NULL. */
#ifndef BASE_MEM_H
#define BASE_MEM_H

#include <stddef.h>

void *mem_alloc(size_t size);               /* malloc or abort */
void *mem_calloc(size_t n, size_t size);    /* calloc or abort (checks n*size) */
void *mem_realloc(void *p, size_t size);    /* realloc or abort */
char *mem_strdup(const char *s);            /* strdup or abort */
char *mem_strndup(const char *s, size_t n); /* at most n bytes, NUL-terminated */

/* mem_alloc for a large array read at random (a task graph's run-time
 * records): from 4 MiB on, aligned to 2 MiB and, where the system offers
 * it (Linux's transparent huge pages in madvise mode), backed by huge
 * pages, so its random reads miss the TLB far less. Freed by free(). */
void *mem_alloc_random(size_t size);

/* Grows *items (of *cap elements of size bytes) so that it holds at least
 * need elements, doubling; the usual dynamic-array step. */
void mem_grow(void **items, size_t *cap, size_t need, size_t size);

/* The bytes this process may hold: the least of the physical memory, the
 * address-space limit (ulimit -v) and the data limit (ulimit -d), read
 * now; what a run's size check compares its estimate with. */
double mem_limit_bytes(void);

#endif
