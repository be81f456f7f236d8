/* test_alloc: allocation and partition files, validation, and the fixed
 * placements against their definitions (DESIGN.md section 9). Each bad
 * input checks the error code and that the message names file and line. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"

#define FIX GEODES_FIXTURES "/models/"

/* Reads a fixture and expects failure with code, "FILE:LINE:" and a word. */
static void expect_bad(const char *file, int code, int line, const char *word) {
  err e;
  err_clear(&e);
  char path[512], prefix[600];
  snprintf(path, sizeof path, FIX "%s", file);
  alloc *a = alloc_read(path, 8, 8, 64, &e);
  cr_assert_null(a, "%s accepted", file);
  cr_assert_eq(e.code, code, "%s: code %d, message %s", file, e.code, e.msg);
  snprintf(prefix, sizeof prefix, "%s:%d:", path, line);
  cr_assert(strncmp(e.msg, prefix, strlen(prefix)) == 0,
            "'%s' does not start with '%s'", e.msg, prefix);
  cr_assert(strstr(e.msg, word), "'%s' does not say '%s'", e.msg, word);
}

Test(alloc, reads_identity) {
  err e;
  err_clear(&e);
  alloc *a = alloc_read(FIX "identity.json", 8, 8, 64, &e);
  cr_assert_not_null(a, "%s", e.msg);
  alloc *id = alloc_identity(8, 8);
  cr_assert_arr_eq(a->device, id->device, 64 * sizeof(int));
  alloc_free(a);
  alloc_free(id);
}

Test(alloc, bad_files) {
  expect_bad("reused.json", ERR_DUPLICATE, 4, "device 3 is used twice");
  expect_bad("out_of_range.json", ERR_RANGE, 9, "device 64 is out of range");
  expect_bad("short_row.json", ERR_CONFIG, 9, "pipeline 7");
  expect_bad("wrong_rows.json", ERR_CONFIG, 9, "7 pipelines, expected 8");
  expect_bad("not_json.json", ERR_PARSE, 5, "not JSON");
  expect_bad("unknown_key.json", ERR_PARSE, 1, "unknown key 'pipeline'");
  err e;
  err_clear(&e);
  cr_assert_null(alloc_read(FIX "no_such_file.json", 8, 8, 64, &e));
  cr_expect_eq(e.code, ERR_IO);
  cr_expect_str_eq(e.msg, FIX "no_such_file.json: cannot read the "
                   "allocation: No such file or directory");
}

Test(alloc, omitted_device_and_wrong_types) {
  err e;
  err_clear(&e);
  /* 2 x 2 on 5 devices: shape fits, device 4 never used -> config. */
  const char *t = "{\"pipelines\": [[0, 1],\n [2, 3]]}";
  cr_assert_null(alloc_parse(t, strlen(t), "x.json", 2, 2, 5, &e));
  cr_assert_eq(e.code, ERR_CONFIG);
  cr_assert(strncmp(e.msg, "x.json:", 7) == 0, "%s", e.msg);
  err_clear(&e);
  t = "{\"pipelines\": [[0, 1],\n [2, \"3\"]]}";
  cr_assert_null(alloc_parse(t, strlen(t), "y.json", 2, 2, 4, &e));
  cr_assert_eq(e.code, ERR_PARSE);
  cr_assert(strncmp(e.msg, "y.json:2:", 9) == 0, "%s", e.msg);
  err_clear(&e);
  t = "[[0, 1], [2, 3]]";
  cr_assert_null(alloc_parse(t, strlen(t), "z.json", 2, 2, 4, &e));
  cr_assert(strncmp(e.msg, "z.json:1:", 9) == 0, "%s", e.msg);
  err_clear(&e);
  t = "{}";
  cr_assert_null(alloc_parse(t, strlen(t), "w.json", 2, 2, 4, &e));
  cr_assert_eq(e.code, ERR_MISSING);
  /* A validated struct with a hole: alloc_validate reports the omission. */
  alloc *a = alloc_new(2, 2);
  memcpy(a->device, (int[]){0, 1, 2, 2}, sizeof(int[4]));
  err_clear(&e);
  cr_assert_eq(alloc_validate(a, 2, 2, 4, "mem", &e), ERR_DUPLICATE);
  a->device[3] = -1;
  err_clear(&e);
  cr_assert_eq(alloc_validate(a, 2, 2, 4, "mem", &e), ERR_RANGE);
  alloc_free(a);
}

/* A nested array or object in place of a row or an entry was cited at the
 * key's line (or a later row's): rows and entries are now counted as
 * values, each at the line where it starts. */
Test(alloc, nested_values_cite_their_own_line) {
  static const struct {
    const char *text;
    int line;
    const char *what;
  } cases[] = {
      {"{\"pipelines\": [\n  [0, 1, 2],\n  [3, [4],\n   5]\n]}", 3,
       "pipeline 1 stage 1 is not"},
      {"{\"pipelines\": [\n  7,\n  [3, 4, 5]\n]}", 2, "pipeline 0 must"},
      {"{\"pipelines\": [\n  [[0, 1], [2, 3], 4],\n  [5, 0, 1]\n]}", 2,
       "pipeline 0 stage 0 is not"},
      {"{\"pipelines\": [\n  [0, 1, 2],\n  [{\"a\": [1], \"b\": 2},\n   3, 4]\n"
       "]}", 3, "pipeline 1 stage 0 is not"},
      {"{\"pipelines\": [\n  [0, 1, 2],\n  {\"a\": 1, \"b\": [2, 3]}\n]}", 3,
       "pipeline 1 must"},
      {"{\"pipelines\": [\n  [0, 1, 2],\n  [3,\n   \"x,[\",\n 5]\n]}", 4,
       "pipeline 1 stage 1 is not"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    err e = {0};
    alloc *a = alloc_parse(cases[i].text, strlen(cases[i].text), "n.json", 2,
                           3, 6, &e);
    cr_expect_null(a, "%s", cases[i].text);
    alloc_free(a);
    char want[64];
    snprintf(want, sizeof want, "n.json:%d: %s", cases[i].line, cases[i].what);
    cr_expect(strncmp(e.msg, want, strlen(want)) == 0, "'%s', want '%s'",
              e.msg, want);
  }
}

/* alloc_copy owns its devices; alloc_equal tells shape and devices apart
 * (a 2 x 3 and a 3 x 2 over the same array are not equal). */
Test(alloc, copy_and_equal) {
  alloc *a = alloc_megatron(3, 2), *b = alloc_copy(a);
  cr_assert(b->device != a->device);
  cr_assert(alloc_equal(a, b) && alloc_equal(b, a));
  b->device[5] = a->device[5] + 100;
  cr_expect(!alloc_equal(a, b));
  alloc *c = alloc_new(2, 3);
  memcpy(c->device, a->device, 6 * sizeof *c->device);
  cr_expect(!alloc_equal(a, c), "the same array in another shape");
  int kept = a->device[5];
  alloc_free(a);
  cr_expect_eq(b->device[5], kept + 100); /* b outlives a */
  alloc_free(b);
  alloc_free(c);
}

Test(alloc, partitions) {
  err e;
  err_clear(&e);
  alloc_partition *p = alloc_partition_read(FIX "groups_megatron.json", 8, 8, 64, &e);
  cr_assert_not_null(p, "%s", e.msg);
  alloc *m = alloc_megatron(8, 8);
  alloc_partition *q = alloc_to_partition(m);
  cr_assert_arr_eq(p->device, q->device, 64 * sizeof(int));
  alloc_partition_free(p);
  alloc_partition_free(q);
  alloc_free(m);
  err_clear(&e);
  cr_assert_null(alloc_partition_read(FIX "groups_reused.json", 8, 8, 64, &e));
  cr_assert_eq(e.code, ERR_DUPLICATE);
  cr_assert(strstr(e.msg, "groups_reused.json:3: device 0 is used twice"), "%s",
            e.msg);
}

Test(alloc, fixed_placements) {
  alloc *id = alloc_fixed("dtfm-identity", 4, 3, 0);
  alloc *mg = alloc_fixed("megatron", 4, 3, 0);
  for (int r = 0; r < 4; r++)
    for (int s = 0; s < 3; s++) {
      cr_assert_eq(alloc_at(id, r, s), 3 * r + s);
      cr_assert_eq(alloc_at(mg, r, s), 4 * s + r);
    }
  cr_assert_null(alloc_fixed("gcma", 4, 3, 0));
  alloc *r1 = alloc_fixed("random", 8, 8, 7), *r2 = alloc_random(8, 8, 7);
  alloc *r3 = alloc_random(8, 8, 8);
  cr_assert_eq(alloc_validate(r1, 8, 8, 64, "random", NULL), ERR_OK);
  cr_assert_arr_eq(r1->device, r2->device, 64 * sizeof(int), "seeded");
  cr_assert_arr_neq(r1->device, r3->device, 64 * sizeof(int));
  alloc_free(id), alloc_free(mg), alloc_free(r1), alloc_free(r2), alloc_free(r3);
}

Test(alloc, write_then_read_round_trip) {
  alloc *a = alloc_random(4, 6, 3);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  alloc_write(a, f);
  fclose(f);
  err e;
  err_clear(&e);
  alloc *b = alloc_parse(buf, len, "mem", 4, 6, 24, &e);
  cr_assert_not_null(b, "%s", e.msg);
  cr_assert_arr_eq(a->device, b->device, 24 * sizeof(int));
  free(buf);
  alloc_partition *p = alloc_to_partition(a);
  f = open_memstream(&buf, &len);
  alloc_partition_write(p, f);
  fclose(f);
  alloc_partition *q = alloc_partition_parse(buf, len, "mem", 6, 4, 24, &e);
  cr_assert_not_null(q, "%s", e.msg);
  cr_assert_arr_eq(p->device, q->device, 24 * sizeof(int));
  free(buf);
  alloc_free(a), alloc_free(b), alloc_partition_free(p), alloc_partition_free(q);
  alloc_free(NULL), alloc_partition_free(NULL);
}

/* The three forms of one writer: the file (a row per line), the store's
 * one-line text and the JSON value, against the literal texts. */
Test(alloc, the_writer_forms) {
  alloc *a = alloc_identity(2, 3);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  alloc_write(a, f);
  fclose(f);
  cr_expect_str_eq(buf, "{\"pipelines\": [\n  [0, 1, 2],\n  [3, 4, 5]\n]}\n");
  char *text = alloc_text(a);
  cr_expect_str_eq(text, "{\"pipelines\": [[0, 1, 2], [3, 4, 5]]}");
  json_t *j = alloc_json(a);
  char *compact = json_dumps(j, JSON_COMPACT);
  cr_expect_str_eq(compact, "[[0,1,2],[3,4,5]]");
  free(buf), free(text), free(compact);
  json_decref(j);
  alloc_free(a);
}

/* A 256 x 256 allocation (65,536 devices, 450 kB): the parser located the
 * line of every entry by rescanning the text and compared each entry with
 * all before it — O(N^2), minutes here; now O(N). The timeout only guards
 * against that quadratic return, it measures nothing. */
Test(alloc, large_file_is_linear, .timeout = 20) {
  enum { K = 256, N = K * K };
  alloc *a = alloc_random(K, K, 11);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  alloc_write(a, f);
  fclose(f);
  err e;
  err_clear(&e);
  alloc *b = alloc_parse(buf, len, "big.json", K, K, N, &e);
  cr_assert_not_null(b, "%s", e.msg);
  cr_assert_arr_eq(a->device, b->device, N * sizeof(int));
  /* the last entry repeats the first: found, with its line (row K + 1) */
  char *last = strrchr(buf, ',') + 2;
  int first = a->device[0];
  int n = sprintf(last, "%d]]}\n", first);
  err_clear(&e);
  cr_assert_null(alloc_parse(buf, (size_t)(last - buf) + (size_t)n, "big.json",
                             K, K, N, &e));
  cr_assert_eq(e.code, ERR_DUPLICATE, "%s", e.msg);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "big.json:%d: device %d is used twice", K + 1,
           first);
  cr_assert(strncmp(e.msg, prefix, strlen(prefix)) == 0, "%s", e.msg);
  free(buf);
  alloc_free(a), alloc_free(b);
}

/* ---- fuzz: mutated allocation and partition files ---- */

static uint64_t fz_state;
static uint64_t fz(uint64_t n) {  /* xorshift64*, fixed seed per test */
  fz_state ^= fz_state >> 12, fz_state ^= fz_state << 25;
  fz_state ^= fz_state >> 27;
  return (fz_state * 0x2545F4914F6CDD1DULL) % n;
}

/* One mutation of text into out (cap bytes): bytes flipped to JSON-ish
 * characters, or a number replaced by a nasty value (floats, negatives,
 * huge integers, nested garbage, other types). Returns the length. */
static size_t fz_mutate(const char *text, char *out, size_t cap) {
  static const char alphabet[] = "{}[]\":,-+.eE0159 \n\\tfnu\0";
  static const char *const values[] = {
      "-1", "-0", "0.0", "1.5", "1e2", "5e-1", "2147483648", "-2147483649",
      "9223372036854775807", "9223372036854775808", "1e999", "\"3\"",
      "null", "true", "[]", "[0]", "[[0]]", "{}", "{\"a\": [1]}", "6", "5"};
  size_t n = strlen(text);
  memcpy(out, text, n + 1);
  if (fz(2)) {
    for (int k = 1 + (int)fz(3); k > 0; k--)
      out[fz(n)] = alphabet[fz(sizeof alphabet - 1)];
    return n;
  }
  size_t at = fz(n), cut = 0;
  while (at < n && !(out[at] >= '0' && out[at] <= '9')) at++;
  while (at + cut < n && out[at + cut] >= '0' && out[at + cut] <= '9') cut++;
  const char *v = values[fz(sizeof values / sizeof *values)];
  size_t m = strlen(v);
  cr_assert_lt(n - cut + m, cap);
  memmove(out + at + m, out + at + cut, n - at - cut + 1);
  memcpy(out + at, v, m);
  return n - cut + m;
}

/* Every result is a permutation of 0..5 or a clean "a.json:LINE:" error. */
static void fz_check(const int *dev, const err *e, int iter, const char *t) {
  if (dev) {
    int seen[6] = {0};
    for (int i = 0; i < 6; i++) {
      cr_assert(dev[i] >= 0 && dev[i] < 6 && !seen[dev[i]]++,
                "iteration %d accepted %s", iter, t);
    }
    return;
  }
  cr_assert_lt(e->code, 0, "iteration %d", iter);
  cr_assert(strncmp(e->msg, "a.json:", 7) == 0 && e->msg[7] >= '1' &&
                e->msg[7] <= '9',
            "iteration %d: '%s' for %s", iter, e->msg, t);
}

Test(alloc, fuzz_mutations_fail_cleanly) {
  static const char pipelines[] = "{\"pipelines\": [\n  [0, 1, 2],\n  [3, 4, 5]\n]}\n";
  static const char groups[] = "{\"groups\": [[5, 1],\n [0, 2], [4, 3]]}";
  char t[256];
  fz_state = 0xA110CA7E5EEDULL;
  int loaded = 0;
  for (int iter = 0; iter < 4000; iter++) {
    err e;
    err_clear(&e);
    if (iter % 2 == 0) {
      size_t len = fz_mutate(pipelines, t, sizeof t);
      alloc *a = alloc_parse(t, len, "a.json", 2, 3, 6, &e);
      fz_check(a ? a->device : NULL, &e, iter, t);
      loaded += a != NULL;
      alloc_free(a);
    } else {
      size_t len = fz_mutate(groups, t, sizeof t);
      alloc_partition *p = alloc_partition_parse(t, len, "a.json", 3, 2, 6, &e);
      fz_check(p ? p->device : NULL, &e, iter, t);
      loaded += p != NULL;
      alloc_partition_free(p);
    }
  }
  cr_assert_gt(loaded, 40, "the mutations should leave some loadable "
               "(%d did)", loaded);
}
