/* workload: the name lists, generated from the maps of workload.h, and the
 * look-ups of WORKLOAD_MAP's rows and the one wording of a row's range (the
 * table of the rows, with their offsets into the scenario's types:
 * workload_rows.c). */
#include "traces/workload.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/names.h"

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
