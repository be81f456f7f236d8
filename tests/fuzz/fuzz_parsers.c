/* fuzz_parsers: a libFuzzer target for the parsers of the files a user
 * writes or brings: scenarios (JSON), network traces (CSV), fault traces
 * (CSV, read against a small scenario), params.json, iperf3's -J output
 * and a model's Hugging Face config.json, what-if specs (--what-if, read
 * against sites whose names hold '-', '>', ':' and '='); and the CSV
 * layer's promise that any fields csv_write_field writes read back the same
 * (the fields are the input cut at NUL bytes; an abort when they do not).
 * The input's first byte picks the case (its value mod 9), the rest is the
 * file. Every input must end in a trace or scenario that is
 * freed, or in an error with a message: never a crash, a leak, undefined
 * behaviour or an unbounded allocation (sanitizers and libFuzzer's -rss_limit
 * watch those). Built with clang (-fsanitize=fuzzer) by CMakeLists.txt when
 * clang is installed; tests/fuzz/run.sh runs it for a fixed time. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/params_file.h"
#include "sim/whatif.h"
#include "traces/csv.h"
#include "traces/fault.h"
#include "traces/iperf3.h"
#include "traces/model_hf.h"
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

/* Sites whose names hold the what-if grammar's separators. */
static const char NAMED[] =
    "{\"name\": \"named\", \"sites\": [{\"name\": \"a\", \"devices\": 1},"
    " {\"name\": \"a-b\", \"devices\": 1}, {\"name\": \"b-c\", \"devices\": 1},"
    " {\"name\": \"c\", \"devices\": 1}, {\"name\": \"x:y\", \"devices\": 1},"
    " {\"name\": \"g=h\", \"devices\": 1}, {\"name\": \"p>q\", \"devices\": 1}],"
    " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},"
    " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 7, \"batch\": 7,"
    " \"micro_batch\": 1, \"stages\": 7, \"replicas\": 1}}";

/* text[0 .. len) as a what-if spec (up to its first NUL): parsed, or
 * refused with a message; a parse names its sites and devices in range. */
static void whatif(const scenario *s, const char *text, size_t len) {
  char *spec = strndup(text, len);
  sim_whatif w;
  err e;
  err_clear(&e);
  if (sim_whatif_parse(s, spec, &w, &e) == ERR_OK) {
    if (w.a < 0 || w.b < 0 || (w.kind != SIM_WHATIF_SPEED &&
                               (w.a >= s->nsites || w.b >= s->nsites)) ||
        (w.kind == SIM_WHATIF_SPEED && w.b > s->ndevices))
      abort();
  } else if (!e.msg[0]) {
    abort();
  }
  free(spec);
}

/* The fields of text[0 .. len) (cut at NULs, at most 8), written as one
 * record by csv_write_field, must read back as themselves, unless the
 * reader refuses the text (invalid UTF-8 is the writer's input, not its
 * fault). */
static void csv_round_trip(const char *text, size_t len) {
  enum { MAX = 8 };
  char *field[MAX];
  int k = 0;
  for (const char *p = text, *end = text + len; k < MAX; k++) {
    const char *nul = memchr(p, '\0', (size_t)(end - p));
    field[k] = strndup(p, (size_t)((nul ? nul : end) - p));
    if (!nul) {
      k++;
      break;
    }
    p = nul + 1;
  }
  char *rec = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&rec, &n);
  for (int i = 0; i < k; i++) {
    if (i) fputc(',', m);
    csv_write_field(m, field[i]);
  }
  fputc('\n', m);
  fclose(m);
  csv_reader r;
  csv_reader_init(&r, rec, n, "fuzz.csv");
  const char *s, *f[MAX];
  size_t len_s, fn[MAX];
  err e;
  err_clear(&e);
  if (csv_next(&r, &s, &len_s, &e) == 1) {
    if (csv_split(&r, s, len_s, f, fn, MAX) != k) abort();
    for (int i = 0; i < k; i++)
      if (fn[i] != strlen(field[i]) || memcmp(f[i], field[i], fn[i]) != 0)
        abort();
    if (csv_next(&r, &s, &len_s, &e) != 0) abort();
  }
  csv_reader_free(&r);
  free(rec);
  for (int i = 0; i < k; i++) free(field[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static scenario *three, *named;
  err e = {0};
  if (!three) three = scenario_parse(SCENARIO, sizeof SCENARIO - 1, "three.json", &e);
  if (!named) named = scenario_parse(NAMED, sizeof NAMED - 1, "named.json", &e);
  if (!three || !named || size == 0) return 0;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  static const char *const sites[] = {"a", "b", "c"};
  err_clear(&e);
  iperf3_runs runs = {0};
  model_dims *model = NULL;
  switch (data[0] % 9) {
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
    case 4:
      csv_round_trip(text, len);
      break;
    case 5:
      params_file_apply_text(text, len, "fuzz.json", &e);
      break;
    case 7:
      model_hf_parse(text, len, "config.json", &model, &e);
      model_free(model);
      break;
    case 8:
      whatif(named, text, len);
      break;
    default:
      iperf3_parse(text, len, "fuzz.json", &runs, &e);
      iperf3_runs_merge(&runs);
      iperf3_runs_free(&runs);
      break;
  }
  return 0;
}
