/* test_alloc: allocation and partition files, validation, and the fixed
 * placements against their definitions (DESIGN.md section 9). Each bad
 * input checks the error code and that the message names file and line. */
#include <criterion/criterion.h>
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
  expect_bad("no_such_file.json", ERR_IO, 0, "cannot open");
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
