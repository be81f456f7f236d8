/* fuzz_parsers: a libFuzzer target for the parsers of the files a user
 * writes or brings: scenarios (JSON), network traces (CSV), fault traces
 * (CSV, read against a small scenario) and iperf3's -J output. The input's first byte picks the parser,
 * the rest is the file. Every input must end in a trace or scenario that is
 * freed, or in an error with a message: never a crash, a leak, undefined
 * behaviour or an unbounded allocation (sanitizers and libFuzzer's -rss_limit
 * watch those). Built with clang (-fsanitize=fuzzer) by CMakeLists.txt when
 * clang is installed; tests/fuzz/run.sh runs it for a fixed time. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "traces/fault.h"
#include "traces/iperf3.h"
#include "traces/scenario.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Three sites, five devices: what the fault and trace inputs name. */
static const char SCENARIO[] =
    "{\"name\": \"three\", \"sites\": [{\"name\": \"a\", \"devices\": 2, "
    "\"gpu\": \"V100\"}, {\"name\": \"b\", \"devices\": 2, \"gpu\": "
    "\"A100\"}, {\"name\": \"c\", \"devices\": 1, \"gpu\": \"H100\"}], "
    "\"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1}, "
    "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 5, \"batch\": 5, "
    "\"micro_batch\": 1, \"stages\": 5, \"replicas\": 1}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static scenario *three;
  err e = {0};
  if (!three) three = scenario_parse(SCENARIO, sizeof SCENARIO - 1, "three.json", &e);
  if (!three || size == 0) return 0;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  static const char *const sites[] = {"a", "b", "c"};
  err_clear(&e);
  iperf3_runs runs = {0};
  switch (data[0] % 5) {
    case 0:
      scenario_free(scenario_parse(text, len, "fuzz.json", &e));
      break;
    case 1:
      trace_free(trace_parse(text, len, "fuzz.csv", NULL, 0, &e));
      break;
    case 2:
      trace_free(trace_parse(text, len, "fuzz.csv", sites, 3, &e));
      break;
    case 3:
      fault_free(fault_parse(text, len, "fuzz.csv", three, &e));
      break;
    default:
      iperf3_parse(text, len, "fuzz.json", &runs, &e);
      iperf3_runs_merge(&runs);
      iperf3_runs_free(&runs);
      break;
  }
  return 0;
}
