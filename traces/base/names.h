/* names: NULL-terminated lists of names — the vocabularies the command
 * line, the scenario and sweep files and the results store spell (network
 * models, schedules, methods, ...). Each list lives once, in the module
 * that owns the concept; these are the lookups and the joined lists that
 * messages and help cite.
 * Invariant: pure functions of their arguments; nothing is kept. */
#ifndef BASE_NAMES_H
#define BASE_NAMES_H

#include <stddef.h>

/* +1 for a row of an X-map, whatever its columns: enum { N = 0
 * SOME_MAP(NAMES_COUNT_ROW) } counts the map's rows outside the enumeration
 * it makes, so that a switch over that enumeration names its rows and
 * nothing else (-Werror=switch). */
#define NAMES_COUNT_ROW(...) +1

/* The index of name in names, or -1 (exact, case-sensitive). */
int names_find(const char *const *names, const char *name);

/* The number of names before the NULL. */
int names_count(const char *const *names);

/* names joined into buf (always NUL-terminated): sep between them and last
 * before the last one — (", ", " or ") gives "a, b or c", (", ", ", ")
 * "a, b, c" and ("|", "|") "a|b|c". */
void names_join(const char *const *names, const char *sep, const char *last,
                char *buf, size_t size);

#endif
