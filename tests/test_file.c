/* test_file: file_read against a plain fwrite of the same bytes (sizes
 * around the buffer's growth steps, NUL bytes included), its failure steps
 * (a missing path fails at open; a folder, /dev/zero, a FIFO without a
 * writer and a file over FILE_MAX_BYTES after it, at once and with the
 * reason), and every reader of geodes — each loader, each file option of
 * the command line, the results store — answering a missing file, a
 * folder, a device, a FIFO and an empty name in one wording. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/measure.h"
#include "analysis/params_file.h"
#include "analysis/sweep.h"
#include "base/file.h"
#include "models/alloc.h"
#include "tests/support.h"
#include "traces/fault.h"
#include "traces/scenario.h"
#include "traces/trace.h"

/* The timeout fails a reader that hangs on a FIFO (one per suite: two
 * tests with their own timeouts running at once leak in Criterion). */
TestSuite(file, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 120);

/* Writes n bytes of a fixed pseudo-random pattern (NULs included). */
static const char *write_bytes(const char *name, size_t n, unsigned char *ref) {
  unsigned x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    ref[i] = (unsigned char)(x >> 16);
  }
  const char *path = support_path("%s", name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  cr_assert_eq(fwrite(ref, 1, n, f), n);
  cr_assert_eq(fclose(f), 0);
  return path;
}

Test(file, reads_every_byte_and_a_nul) {
  static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 8191, 100003};
  unsigned char *ref = malloc(100003);
  cr_assert_not_null(ref);
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t n = sizes[k], len = (size_t)-1;
    const char *path = write_bytes("bytes.bin", n, ref);
    file_error why = {true, -1, ""};
    char *text = file_read(path, FILE_MAX_BYTES, &len, &why);
    cr_assert_not_null(text, "size %zu: %s", n, strerror(why.errnum));
    cr_expect_eq(len, n, "size %zu read as %zu", n, len);
    cr_expect(n == 0 || memcmp(text, ref, n) == 0, "size %zu differs", n);
    cr_expect_eq(text[n], '\0', "size %zu: no NUL after the text", n);
    free(text);
  }
  free(ref);
}

Test(file, missing_path_fails_at_open) {
  size_t len = 7;
  file_error why = {true, 0, ""};
  const char *none = support_path("no/such.csv");
  cr_expect_null(file_read(none, FILE_MAX_BYTES, &len, &why));
  cr_expect_not(why.opened);
  cr_expect_eq(why.errnum, ENOENT, "%s", strerror(why.errnum));
  cr_expect_eq(len, 7, "len changed on failure");
  cr_expect_null(file_read(none, FILE_MAX_BYTES, &len, NULL));
}

Test(file, folder_fails_after_open_with_the_reason) {
  size_t len = 7;
  file_error why = {false, -1, ""};
  cr_expect_null(file_read(support_dir(), FILE_MAX_BYTES, &len, &why));
  cr_expect(why.opened, "a folder should open, then be refused");
  cr_expect_str_eq(why.reason, "a folder, not a regular file");
}

/* Before file_read read regular files only, /dev/zero grew memory until
 * the program aborted and a FIFO without a writer blocked in open. */
Test(file, endless_inputs_are_refused_at_once) {
  size_t len = 7;
  file_error why = {false, -1, ""};
  cr_expect_null(file_read("/dev/zero", FILE_MAX_BYTES, &len, &why));
  cr_expect(why.opened);
  cr_expect_str_eq(why.reason, "a character device, not a regular file");
  const char *fifo = support_path("fifo.csv");
  cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
  cr_expect_null(file_read(fifo, FILE_MAX_BYTES, &len, &why));
  cr_expect_str_eq(why.reason, "a FIFO (named pipe), not a regular file");
  cr_expect_eq(len, 7, "len changed on failure");
}

/* A sparse file one byte over the cap: refused from its size, unread. */
Test(file, a_file_over_the_cap_is_refused) {
  const char *big = support_path("big.csv");
  support_write_file(big, "");
  cr_assert_eq(truncate(big, (off_t)FILE_MAX_BYTES + 1), 0, "truncate: %s",
               strerror(errno));
  size_t len = 7;
  file_error why = {false, -1, ""};
  cr_expect_null(file_read(big, FILE_MAX_BYTES, &len, &why));
  cr_expect(why.opened);
  cr_expect_str_eq(why.reason, "larger than the 1024 MiB geodes reads for it");
  cr_expect(FILE_MAX_BYTES == 1ULL << 30, "the words above say 1024 MiB");
  /* a JSON input over its own cap, through a loader */
  cr_assert_eq(truncate(big, (off_t)FILE_MAX_JSON_BYTES + 1), 0);
  err e;
  err_clear(&e);
  cr_expect_null(scenario_load(big, &e));
  cr_expect(strstr(e.msg, "cannot read the scenario: larger than the 16 MiB "
                   "geodes reads for it"), "%s", e.msg);
  cr_assert_eq(truncate(big, 0), 0);
}

/* ---- one answer for every reader (issue 35, 2) ---- */

/* One loader of the libraries, called on path; NULL for a failure. */
typedef struct loader {
  const char *what; /* the words its message names the input by */
  bool (*load)(const char *path, err *e);
} loader;

static bool ld_trace(const char *p, err *e) {
  trace *t = trace_load(p, NULL, 0, e);
  trace_free(t);
  return t;
}
static bool ld_scenario(const char *p, err *e) {
  scenario *s = scenario_load(p, e);
  scenario_free(s);
  return s;
}
static bool ld_alloc(const char *p, err *e) {
  alloc *a = alloc_read(p, 2, 2, 4, e);
  alloc_free(a);
  return a;
}
static bool ld_partition(const char *p, err *e) {
  alloc_partition *a = alloc_partition_read(p, 2, 2, 4, e);
  alloc_partition_free(a);
  return a;
}
static bool ld_sweep(const char *p, err *e) {
  sweep *s = sweep_load(p, e);
  sweep_free(s);
  return s;
}
static bool ld_faults(const char *p, err *e) {
  scenario *s = support_scenario("multi-dc");
  fault_trace *f = fault_load(p, s, e);
  fault_free(f);
  scenario_free(s);
  return f;
}
static bool ld_measure(const char *p, err *e) {
  measure_set *m = measure_load(p, e);
  measure_free(m);
  return m;
}
static bool ld_params(const char *p, err *e) {
  return params_file_apply(p, e) == ERR_OK;
}

static const loader loaders[] = {
    {"the network trace", ld_trace},   {"the scenario", ld_scenario},
    {"the allocation", ld_alloc},      {"the allocation", ld_partition},
    {"the sweep file", ld_sweep},      {"the fault trace", ld_faults},
    {"the measurements", ld_measure},  {"the parameters", ld_params}};
#define NLOADERS (sizeof loaders / sizeof *loaders)

/* What is not an input, and the reason every loader gives for it. */
typedef struct bad_input {
  const char *path, *reason;
} bad_input;

static void bad_inputs(bad_input out[5]) {
  const char *fifo = support_path("in.fifo");
  if (access(fifo, F_OK) != 0)
    cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
  out[0] = (bad_input){support_path("missing.json"), "No such file or directory"};
  out[1] = (bad_input){support_dir(), "a folder, not a regular file"};
  out[2] = (bad_input){"/dev/null", "a character device, not a regular file"};
  out[3] = (bad_input){fifo, "a FIFO (named pipe), not a regular file"};
  out[4] = (bad_input){"", NULL};
}

/* Every loader, given each of them: ERR_IO and one wording, whole. Before,
 * each had its own ("PATH:0: cannot open", "PATH:1: cannot read the fault
 * trace", jansson's "PATH:0: unable to open" for params, which blocked on
 * a FIFO and read a folder or /dev/null as empty JSON: PATH:1: '[' or '{'
 * expected), and an empty name gave ":0: ...". */
Test(file, every_loader_words_a_bad_input_alike) {
  bad_input in[5];
  bad_inputs(in);
  char want[1024];
  for (size_t l = 0; l < NLOADERS; l++)
    for (int k = 0; k < 5; k++) {
      err e;
      err_clear(&e);
      cr_expect_not(loaders[l].load(in[k].path, &e), "%s: '%s' loaded",
                    loaders[l].what, in[k].path);
      cr_expect_eq(e.code, ERR_IO, "%s: code %d (%s)", loaders[l].what,
                   e.code, e.msg);
      if (!in[k].reason)
        snprintf(want, sizeof want, "an empty file name for %s",
                 loaders[l].what);
      else if (k == 0 && loaders[l].load == ld_scenario)
        snprintf(want, sizeof want, "%s: cannot read the scenario (no "
                 "built-in one has this name: see 'geodes scenarios'): %s",
                 in[k].path, in[k].reason);
      else
        snprintf(want, sizeof want, "%s: cannot read %s: %s", in[k].path,
                 loaders[l].what, in[k].reason);
      cr_expect_str_eq(e.msg, want);
    }
}

/* Every input of the command line, given a FIFO, a folder, a device or an
 * empty name: exit 1 at once with the one wording, never a hang (timeout
 * 20 s gives 124); an option's empty value is a usage error naming the
 * option (exit 2; was "geodes: :0:" before the one reader). --params blocked for ever on a FIFO in simulate,
 * explain, schedule, reproduce, sweep and calibrate. */
Test(file, every_reader_of_the_command_line_answers_alike) {
  const char *sw = support_write_file(support_path("sw.json"),
                                      "{\"layers\": 8}");
  const char *store = support_path("x.db");
  struct {
    const char *args, *what;
  } cmds[] = { /* an option's empty value is the option table's refusal */
      {"simulate '%s' --method dtfm-identity", "the scenario"},
      {"simulate multi-dc --method dtfm-identity --params '%s'", "the parameters"},
      {"explain multi-dc --method dtfm-identity --params '%s'", "the parameters"},
      {"schedule multi-dc --method random-search --trials 2 --params '%s'",
       "the parameters"},
      {"reproduce --params '%s'", "the parameters"},
      {"calibrate --data builtin:dtfm --fit site_compute_efficiency --params "
       "'%s'", "the parameters"},
      {"sweep '%2$s' --db '%3$s' --params '%1$s'", "the parameters"},
      {"simulate multi-dc --alloc '%s'", "the allocation"},
      {"predict multi-dc --alloc '%s'", "the allocation"},
      {"explain multi-dc --alloc '%s'", "the allocation"},
      {"simulate multi-dc --method dtfm-identity --iterations 2 --faults '%s'",
       "the fault trace"},
      {"faults check '%s' --scenario multi-dc", "the fault trace"},
      {"faults synth '%s' --duration-s 10 --seed 1 -o -", "the scenario"},
      {"trace check '%s'", "the network trace"},
      {"trace synth --duration-s 10 --step-s 10 --seed 1 --base '%s' -o -", "the network trace"},
      {"sweep '%1$s' --db '%3$s'%2$.0s", "the sweep file"},
      {"calibrate --data '%s' --fit site_compute_efficiency", "the measurements"},
      {"reproduce --data '%s'", "the measurements"}};
  bad_input in[5];
  bad_inputs(in);
  support_run r = {0};
  for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++)
    for (int k = 1; k < 5; k++) {
      char args[1024], full[1200], want[512];
      snprintf(args, sizeof args, cmds[c].args, in[k].path, sw, store);
      snprintf(full, sizeof full, "timeout 20 '%s' %s", GEODES_BIN, args);
      /* the option whose value the file is, or none (an argument) */
      const char *at = strstr(cmds[c].args, " '%s'"), *opt;
      if (!at) at = strstr(cmds[c].args, " '%1$s'");
      opt = at;
      while (opt && opt > cmds[c].args && opt[-1] != ' ') opt--;
      bool option = opt && opt[0] == '-' && opt < at;
      if (!in[k].reason && option) { /* issue 35, 11 and 15 */
        snprintf(want, sizeof want, "%.*s: an empty value\n",
                 (int)(at - opt), opt);
        cr_expect_eq(support_sh(&r, "%s", full), 2, "%s: %s", full, r.err);
        cr_expect(strstr(r.err, want) != NULL, "%s:\n%s\nwanted: %s", full,
                  r.err, want);
        continue;
      }
      cr_expect_eq(support_sh(&r, "%s", full), 1, "%s: %s", full, r.err);
      if (in[k].reason)
        snprintf(want, sizeof want, "geodes: %s: cannot read %s: %s\n",
                 in[k].path, cmds[c].what, in[k].reason);
      else
        snprintf(want, sizeof want, "geodes: an empty file name for %s\n",
                 cmds[c].what);
      cr_expect(strstr(r.err, want) != NULL, "%s:\n%s\nwanted: %s", full,
                r.err, want);
    }
  support_run_clear(&r);
}

/* The results store gives the same reasons (it opens the file itself). */
Test(file, the_results_store_answers_alike) {
  bad_input in[5];
  bad_inputs(in);
  support_run r = {0};
  for (int k = 1; k < 5; k++) {
    cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'",
                                support_write_file(support_path("s.json"),
                                                   "{\"layers\": 8}"),
                                in[k].path), in[k].reason ? 1 : 2);
    char want[512];
    if (in[k].reason)
      snprintf(want, sizeof want, "geodes: %s: cannot open the results "
               "store: %s\n", in[k].path, in[k].reason);
    else /* the option table's refusal (issue 35, 11) */
      snprintf(want, sizeof want, "geodes sweep: --db: an empty value\n");
    cr_expect(strstr(r.err, want), "%s\nwanted: %s", r.err, want);
  }
  support_run_clear(&r);
}
