/* simtime: the span of simulated time that every part of geodes covers, in
 * one place. Times are int64 nanoseconds (INT64_MAX is 9.2e9 s); keeping
 * every instant a run reports at or below SIMTIME_LIMIT_S leaves room for
 * the sum of a few such times without overflow. An input or a result past
 * it is refused with simtime_past's one message, wherever it is found.
 * Invariant: SIMTIME_LIMIT_NS * 9 < INT64_MAX (asserted below). */
#ifndef BASE_SIMTIME_H
#define BASE_SIMTIME_H

#include <stdint.h>

#define SIMTIME_LIMIT_S 1e9 /* 31.7 years */
#define SIMTIME_LIMIT_NS 1000000000000000000LL
_Static_assert(SIMTIME_LIMIT_NS / 1000000000LL == (long long)SIMTIME_LIMIT_S,
               "the limit in seconds and in nanoseconds agree");
_Static_assert(SIMTIME_LIMIT_NS < INT64_MAX / 9,
               "a sum of a few times inside the limit stays inside int64");

/* The one wording of the limit, for messages: "... past the 1e+09 s (31.7
 * years) that a simulation covers". */
#define SIMTIME_LIMIT_TEXT "the 1e+09 s (31.7 years) that a simulation covers"

#endif
