/* test_scenario_bounds: the scenario loader's limits against the command
 * line's (seed, layers), a valid scenario at a path long enough to have
 * overflowed the synthetic uniform trace, and the lines that checks made
 * after loading cite. test_scenario.c holds the format itself. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support.h"
#include "traces/scenario.h"

TestSuite(scenario_bounds, .init = support_dir_make,
          .fini = support_dir_remove);

static const char uniform[] =
    "{\"name\": \"u\",\n"
    " \"sites\": [{\"name\": \"a\", \"devices\": 4}],\n"
    " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n"
    " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": 8,\n"
    "              \"micro_batch\": 1, \"stages\": 2, \"replicas\": 2}}\n";

/* A folder path of about n characters under the test folder. */
static const char *long_folder(size_t n) {
  char name[64];
  const char *dir = support_dir();
  size_t len = strlen(dir);
  char *path = malloc(len + n + 64);
  strcpy(path, dir);
  for (int i = 0; strlen(path) < len + n; i++) {
    snprintf(name, sizeof name, "/%040d", i);
    strcat(path, name);
    mkdir(path, 0700);
  }
  const char *out = support_path("%s", path + len + 1);
  free(path);
  return out;
}

/* Before the fix a path of ~177 characters or more overflowed the 256-byte
 * buffer of the synthetic "*,*" trace: ASan's stack-buffer-overflow, or in
 * Release a valid file rejected as binary. */
Test(scenario_bounds, a_long_path_loads) {
  for (size_t n = 150; n <= 900; n += 250) {
    char file[2048];
    snprintf(file, sizeof file, "%s/scenario.json", long_folder(n));
    support_write_file(file, uniform);
    err e = {ERR_OK, ""};
    scenario *s = scenario_load(file, &e);
    cr_assert_not_null(s, "%zu characters: %s", strlen(file), e.msg);
    const char *src = trace_comment(s->network, "source");
    cr_expect(src && strstr(src, file), "source '%s'", src ? src : "");
    trace_value v = scenario_link(s, 0, 3, 0);
    cr_expect_eq(v.latency_ms, 10);
    cr_expect_eq(v.bandwidth_gbps, 1);
    scenario_free(s);
  }
}
