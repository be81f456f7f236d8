/* workload: the name lists, generated from the maps of workload.h. */
#include "traces/workload.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define WORKLOAD_NAME(id, name) name,
const char *const workload_schedules[] = {
    WORKLOAD_SCHEDULE_MAP(WORKLOAD_NAME) NULL};
const char *const workload_dp_algos[] = {
    WORKLOAD_DP_ALGO_MAP(WORKLOAD_NAME) NULL};
const char *const workload_runtimes[] = {
    WORKLOAD_RUNTIME_MAP(WORKLOAD_NAME) NULL};
#undef WORKLOAD_NAME

long long workload_batch_k(const char *runtime, long long kpp) {
  if (runtime && strcmp(runtime, "megatron") == 0) return 1;
  return kpp > 0 ? kpp : 1;
}

const char *const workload_grad_bits[] = {"16", "8", "4", NULL};
const char *const workload_act_bits[] = {"16", "8", "4", "2", NULL};

bool workload_bits_ok(const char *const *list, long bits) {
  for (; *list; list++)
    if (strtol(*list, NULL, 10) == bits) return true;
  return false;
}
