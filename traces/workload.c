/* workload: the name lists, generated from the maps of workload.h. */
#include "traces/workload.h"

#include <stddef.h>
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
      case RUNTIME_DTFM: break;
      case RUNTIME_MEGATRON: return 1;
    }
  return kpp > 0 ? kpp : 1;
}

const char *const workload_grad_bits[] = {"16", "8", "4", NULL};
const char *const workload_act_bits[] = {"16", "8", "4", "2", NULL};

bool workload_bits_ok(const char *const *list, long bits) {
  for (; *list; list++)
    if (strtol(*list, NULL, 10) == bits) return true;
  return false;
}
