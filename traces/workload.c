/* workload: the name lists, generated from the maps of workload.h, and the
 * table of WORKLOAD_MAP's rows with its look-ups and the one wording of a
 * row's range.
 * Invariant: workload_rows[WORKLOAD_f] is row f (designated by its enum),
 * and its offsets are those of the field f in scenario_knobs and in its
 * target, whose C type the asserts below pin. */
#include "traces/workload.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/names.h"

#include "base/names.h"
#include "traces/scenario.h"

#define WORKLOAD_NAME(id, name) name,
const char *const workload_schedules[] = {
    WORKLOAD_SCHEDULE_MAP(WORKLOAD_NAME) NULL};
const char *const workload_dp_algos[] = {
    WORKLOAD_DP_ALGO_MAP(WORKLOAD_NAME) NULL};
const char *const workload_runtimes[] = {
    WORKLOAD_RUNTIME_MAP(WORKLOAD_NAME) NULL};
#undef WORKLOAD_NAME

/* The runtimes as an enumeration, for the switch below (models/spec.h
 * makes its spec_runtime from the same map). */
#define WORKLOAD_RUNTIME_ID(id, name) RUNTIME_##id,
typedef enum runtime_id { WORKLOAD_RUNTIME_MAP(WORKLOAD_RUNTIME_ID) } runtime_id;
#undef WORKLOAD_RUNTIME_ID

long long workload_batch_k(const char *runtime, long long kpp) {
  int rt = runtime ? names_find(workload_runtimes, runtime) : 0;
  if (rt >= 0)
    switch ((runtime_id)rt) {
      case RUNTIME_MODERN:
      case RUNTIME_DTFM: break;
      case RUNTIME_MEGATRON: return 1;
    }
  return kpp > 0 ? kpp : 1;
}

bool workload_bits_ok(const char *const *list, long bits) {
  for (; *list; list++)
    if (strtol(*list, NULL, 10) == bits) return true;
  return false;
}

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

void workload_range_text(const workload_row *r, char *buf, size_t size) {
  switch (r->kind) {
    case WORKLOAD_INT:
      snprintf(buf, size, "[%lld, %lld]", (long long)r->lo, (long long)r->hi);
      return;
    case WORKLOAD_REAL:
      snprintf(buf, size, "%s%g, %g]", r->open ? "(" : "[", r->lo, r->hi);
      return;
    case WORKLOAD_NAME:
    case WORKLOAD_BITS:
      if (r->names) names_join(r->names, ", ", " or ", buf, size);
      else snprintf(buf, size, "a name");
      return;
    case WORKLOAD_BOOL:
      snprintf(buf, size, "true or false");
      return;
  }
}

/* A width is a small integer: anything wider is no width (and would not
 * fit a long). */
#define WORKLOAD_BITS_MAX 1e9

bool workload_number_ok(const workload_row *r, double x) {
  switch (r->kind) {
    case WORKLOAD_INT:
      return x == floor(x) && x >= r->lo && x <= r->hi;
    case WORKLOAD_REAL:
      return isfinite(x) && (r->open ? x > r->lo : x >= r->lo) && x <= r->hi;
    case WORKLOAD_BITS:
      return x == floor(x) && fabs(x) < WORKLOAD_BITS_MAX &&
             workload_bits_ok(r->names, (long)x);
    case WORKLOAD_BOOL:
      return x == 0 || x == 1;
    case WORKLOAD_NAME:
      return false;
  }
  return false;
}

bool workload_name_ok(const workload_row *r, const char *name) {
  return r->names ? names_find(r->names, name) >= 0 : name[0] != '\0';
}

void workload_path(const workload_row *r, char *buf, size_t size) {
  switch (r->target) {
    case WORKLOAD_IN_WORKLOAD:
      snprintf(buf, size, "workload.%s", r->key);
      return;
    case WORKLOAD_IN_COST:
      snprintf(buf, size, "cost.%s", r->key);
      return;
    case WORKLOAD_IN_TOP:
      snprintf(buf, size, "%s", r->key);
      return;
    case WORKLOAD_IN_SITES:
    case WORKLOAD_IN_LINKS:
    case WORKLOAD_IN_TRANSPORT:
      snprintf(buf, size, "%s", r->sweep);
      return;
  }
}
