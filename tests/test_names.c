/* test_names: name lists — lookup, count and the joined forms messages cite
 * — and the agreement of the vocabularies that live in one layer and are
 * read in another: the workload names of traces/ and the enums models/spec
 * generates from them, the network models of models/transport. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/names.h"
#include "models/spec.h"
#include "models/transport.h"
#include "schedules/schedule.h"
#include "traces/workload.h"

static const char *const ABC[] = {"a", "b", "c", NULL};

Test(names, find_and_count) {
  cr_expect_eq(names_find(ABC, "a"), 0);
  cr_expect_eq(names_find(ABC, "c"), 2);
  cr_expect_eq(names_find(ABC, "C"), -1, "case-sensitive");
  cr_expect_eq(names_find(ABC, ""), -1);
  cr_expect_eq(names_count(ABC), 3);
  cr_expect_eq(names_count((const char *const[]){NULL}), 0);
}

Test(names, join) {
  char buf[64];
  names_join(ABC, ", ", " or ", buf, sizeof buf);
  cr_expect_str_eq(buf, "a, b or c");
  names_join(ABC, ", ", ", ", buf, sizeof buf);
  cr_expect_str_eq(buf, "a, b, c");
  names_join((const char *const[]){"x", NULL}, ", ", " or ", buf,
             sizeof buf);
  cr_expect_str_eq(buf, "x");
  names_join((const char *const[]){"x", "y", NULL}, ", ", " or ", buf,
             sizeof buf);
  cr_expect_str_eq(buf, "x or y");
  names_join(ABC, ", ", " or ", buf, 4); /* cut, still terminated */
  cr_expect_str_eq(buf, "a, ");
  names_join(ABC, "|", "|", buf, sizeof buf);
  cr_expect_str_eq(buf, "a|b|c");
}

/* Each workload enum value names itself, and parse inverts name. */
Test(names, workload_enums_agree_with_the_lists) {
  cr_expect_eq(names_count(workload_schedules), SPEC_1F1B + 1);
  cr_expect_eq(names_count(workload_dp_algos), SPEC_HIVEMIND + 1);
  cr_expect_eq(names_count(workload_runtimes), SPEC_RUNTIME_MEGATRON + 1);
  cr_expect_str_eq(spec_schedule_name(SPEC_GPIPE), "gpipe");
  cr_expect_str_eq(spec_schedule_name(SPEC_1F1B), "1f1b");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_CENTRAL_PS), "central-ps");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_RING), "ring");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_SHARDED_PS), "sharded-ps");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_DILOCO), "diloco");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_STREAMING_DILOCO), "streaming-diloco");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_HIER_RING), "hier-ring");
  cr_expect_str_eq(spec_dp_algo_name(SPEC_HIVEMIND), "hivemind");
  cr_expect_str_eq(spec_runtime_name(SPEC_RUNTIME_DTFM), "dtfm");
  cr_expect_str_eq(spec_runtime_name(SPEC_RUNTIME_MEGATRON), "megatron");
  for (int i = 0; workload_schedules[i]; i++)
    cr_expect_eq(spec_schedule_parse(workload_schedules[i]), i);
  for (int i = 0; workload_dp_algos[i]; i++)
    cr_expect_eq(spec_dp_algo_parse(workload_dp_algos[i]), i);
  for (int i = 0; workload_runtimes[i]; i++)
    cr_expect_eq(spec_runtime_parse(workload_runtimes[i]), i);
  cr_expect_eq(spec_schedule_parse(NULL), 0, "the default is the first");
  cr_expect_eq(spec_dp_algo_parse("nope"), -1);
}

Test(names, network_models) {
  cr_expect_eq(names_count(transport_model_names), TRANSPORT_NMODELS);
  for (int m = 0; m < TRANSPORT_NMODELS; m++)
    cr_expect_eq(transport_model_parse(transport_model_name((transport_model)m)),
                 m);
  cr_expect_eq(transport_model_parse("Tcp"), -1);
}

/* One method table: models/alloc's fixed placements first, every name
 * found back, only the fixed ones fixed, only sim simulated. */
Test(names, methods) {
  const char *const *m = schedule_method_names();
  cr_expect_eq(names_count(m), SCHEDULE_NMETHODS);
  for (int i = 0; i < ALLOC_NFIXED; i++)
    cr_expect_str_eq(m[i], alloc_fixed_names[i]);
  for (int i = 0; i < SCHEDULE_NMETHODS; i++) {
    cr_expect_str_eq(schedule_method_name((schedule_method_id)i), m[i]);
    cr_expect_eq(schedule_method_find(m[i]), i);
    cr_expect_eq(schedule_method_is_fixed(m[i]), i < ALLOC_NFIXED, "%s", m[i]);
    cr_expect_eq(schedule_method_needs_objective(m[i]), i == SCHEDULE_SIM);
  }
  cr_expect_str_eq(schedule_method_name(SCHEDULE_GCMA), "gcma");
  cr_expect_eq(schedule_method_find("best"), -1);
  cr_expect(!schedule_method_is_fixed("best"));
}
