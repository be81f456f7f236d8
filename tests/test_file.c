/* test_file: file_read against a plain fwrite of the same bytes (sizes
 * around the buffer's growth steps, NUL bytes included), its failure steps
 * (a missing path fails at open; a folder, /dev/zero, a FIFO without a
 * writer and a file over FILE_MAX_BYTES after it, at once and with the
 * reason), and each loader built on it keeping its own wording for both. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sweep.h"
#include "base/file.h"
#include "models/alloc.h"
#include "tests/support.h"
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
  cr_expect(strstr(e.msg, "cannot read: larger than the 16 MiB geodes reads "
                   "for it"), "%s", e.msg);
  cr_assert_eq(truncate(big, 0), 0);
}

/* Every input of the command line, given /dev/zero or a FIFO: exit 1 at
 * once with the path and the reason, never a hang or an abort. */
Test(file, commands_refuse_endless_inputs) {
  const char *fifo = support_path("cli.fifo");
  cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
  const char *paths[] = {"/dev/zero", fifo};
  const char *reasons[] = {"a character device, not a regular file",
                           "a FIFO (named pipe), not a regular file"};
  const char *cmds[] = {"simulate '%s' --method dtfm-identity",
                        "trace check '%s'",
                        "simulate worldwide --alloc '%s'",
                        "sweep '%s' --db /nonexistent/x.db"};
  support_run r = {0};
  for (size_t p = 0; p < 2; p++)
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
      char args[512];
      snprintf(args, sizeof args, cmds[c], paths[p]);
      cr_expect_eq(support_geodes(&r, "%s", args), 1, "%s: %s", args, r.err);
      cr_expect(strstr(r.err, paths[p]) && strstr(r.err, reasons[p]),
                "%s: %s", args, r.err);
    }
  support_run_clear(&r);
}

/* The message each loader gives for path, checked whole. */
static void expect_msg(const char *who, const err *e, const char *want) {
  cr_expect_eq(e->code, ERR_IO, "%s: code %d (%s)", who, e->code, e->msg);
  cr_expect_str_eq(e->msg, want, "%s", who);
}

static void loader_messages(const char *path, bool folder) {
  char want[1024];
  const char *why = folder ? "a folder, not a regular file"
                           : "No such file or directory";
  err e;
  err_clear(&e);
  cr_expect_null(trace_load(path, NULL, 0, &e));
  snprintf(want, sizeof want, "%s: cannot %s: %s", path,
           folder ? "read" : "open", why);
  expect_msg("trace_load", &e, want);
  err_clear(&e);
  cr_expect_null(scenario_load(path, &e));
  if (folder) snprintf(want, sizeof want, "%s: cannot read: %s", path, why);
  else
    snprintf(want, sizeof want, "%s: not a built-in scenario (see 'geodes "
             "scenarios') and cannot be read: %s", path, why);
  expect_msg("scenario_load", &e, want);
  err_clear(&e);
  cr_expect_null(alloc_read(path, 2, 2, 4, &e));
  snprintf(want, sizeof want, "%s:0: cannot %s: %s", path,
           folder ? "read" : "open", why);
  expect_msg("alloc_read", &e, want);
  err_clear(&e);
  cr_expect_null(alloc_partition_read(path, 2, 2, 4, &e));
  expect_msg("alloc_partition_read", &e, want);
  err_clear(&e);
  cr_expect_null(sweep_load(path, &e));
  snprintf(want, sizeof want, "%s: cannot read: %s", path, why);
  expect_msg("sweep_load", &e, want);
}

Test(file, loaders_word_a_missing_file) {
  loader_messages(support_path("missing.json"), false);
}

Test(file, loaders_word_a_folder) { loader_messages(support_dir(), true); }

Test(file, sweep_command_words_both) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", support_dir(),
                              support_path("x.db")), 1);
  cr_expect(strstr(r.err, "cannot read the sweep file: a folder, not a regular "
                   "file"), "%s",
            r.err);
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'",
                              support_path("none.json"), support_path("x.db")),
               1);
  cr_expect(strstr(r.err, "none.json: cannot read the sweep file: No such "
                   "file or directory"), "%s", r.err);
  support_run_clear(&r);
}
