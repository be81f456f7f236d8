/* workload: the name lists, generated from the maps of workload.h. */
#include "traces/workload.h"

#include <stddef.h>

#define WORKLOAD_NAME(id, name) name,
const char *const workload_schedules[] = {
    WORKLOAD_SCHEDULE_MAP(WORKLOAD_NAME) NULL};
const char *const workload_dp_algos[] = {
    WORKLOAD_DP_ALGO_MAP(WORKLOAD_NAME) NULL};
const char *const workload_runtimes[] = {
    WORKLOAD_RUNTIME_MAP(WORKLOAD_NAME) NULL};
#undef WORKLOAD_NAME
