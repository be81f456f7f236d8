/* workload_rows: the table of WORKLOAD_MAP's rows (workload.h), apart from
 * workload.c because its offsets point into the types that the map
 * generates (traces/scenario_types.h, which includes workload.h).
 * Invariant: workload_rows[WORKLOAD_f] is row f (designated by its enum),
 * and its offsets are those of the field f in scenario_knobs and in its
 * target, whose C type the asserts below pin. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/scenario_types.h"
#include "traces/workload.h"

/* Where a row's value lives in its target. */
#define AT_WORKLOAD(f) offsetof(scenario, workload.f)
#define AT_COST(f) offsetof(scenario, f)
#define AT_TOP(f) offsetof(scenario, f)
#define AT_SITES(f) offsetof(scenario_site, f)
#define AT_LINKS(f) offsetof(scenario, f)
#define AT_TRANSPORT(f) 0
#define GIVEN_ONLY_KEY false
#define GIVEN_ONLY_GIVEN true

#define ROW_(a, f, K, T, S, ...)                                            \
  [WORKLOAD_##f] = {.field = #f, .kind = WORKLOAD_##K,                     \
                    .target = WORKLOAD_IN_##T, .given_only = GIVEN_ONLY_##S, \
                    .at = AT_##T(f),                                       \
                    .knob_at = offsetof(scenario_knobs, f), __VA_ARGS__},
const workload_row workload_rows[WORKLOAD_NFIELDS] = {WORKLOAD_MAP(ROW_, )};
#undef ROW_

/* The C type of each (target, kind) a row may have, which the generic
 * code of scenario_knobs.c reads and writes through the offsets: a row of
 * another pair, or a hand-declared field of another type, fails here. */
#define TYPE_WORKLOAD_INT int
#define TYPE_WORKLOAD_BITS int
#define TYPE_WORKLOAD_BOOL bool
#define TYPE_WORKLOAD_NAME char *
#define TYPE_WORKLOAD_REAL double
#define TYPE_COST_REAL double
#define TYPE_TOP_INT uint64_t
#define TYPE_SITES_INT int
#define TYPE_SITES_NAME char *
#define TYPE_LINKS_REAL double
#define FIELD_WORKLOAD(f) ((scenario *)0)->workload.f
#define FIELD_COST(f) ((scenario *)0)->f
#define FIELD_TOP(f) ((scenario *)0)->f
#define FIELD_SITES(f) ((scenario_site *)0)->f
#define FIELD_LINKS(f) ((scenario *)0)->f
#define TYPED_(a, f, K, T, ...) TYPED_##T(f, K)
#define TYPED_WORKLOAD(f, kind) TYPED_IN(WORKLOAD, f, kind)
#define TYPED_COST(f, kind) TYPED_IN(COST, f, kind)
#define TYPED_TOP(f, kind) TYPED_IN(TOP, f, kind)
#define TYPED_SITES(f, kind) TYPED_IN(SITES, f, kind)
#define TYPED_LINKS(f, kind) TYPED_IN(LINKS, f, kind)
#define TYPED_TRANSPORT(f, kind)
#define TYPED_IN(target, f, kind)                                          \
  _Static_assert(_Generic(FIELD_##target(f), TYPE_##target##_##kind: 1,    \
                          default: 0),                                     \
                 #f ": its target's field has its kind's type");
WORKLOAD_MAP(TYPED_, )
#undef TYPED_
