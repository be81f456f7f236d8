/* test_json_out: the JSON writer (traces/base/json_out.c). Every real
 * reads back as the same double, in the fewest digits (a naive reference: the least %.*g
 * precision that reads back), 0.2 and not 0.20000000000000001; documents
 * without reals are laid out byte for byte as jansson's json_dumps lays
 * them out under the same flags. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"

TestSuite(json_out);

Test(json_out, chosen_spellings) {
  const struct { double x; const char *s; } cases[] = {
      {0.2, "0.2"},           {1, "1.0"},         {1450000, "1450000.0"},
      {1e16, "1e+16"},        {1e-5, "1e-05"},    {0.0001, "0.0001"},
      {-0.0, "-0.0"},         {0.1 + 0.2, "0.30000000000000004"},
      {123.456, "123.456"},   {-2.5e-300, "-2.5e-300"},
      {1e15 + 0.5, "1000000000000000.5"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char buf[40];
    json_out_real(cases[i].x, buf, sizeof buf);
    cr_expect_str_eq(buf, cases[i].s);
  }
}

/* The significant digits of a spelling ("1450000.0" -> 7: trailing zeros
 * of an integer part count as placeholders, not digits). */
static int digits(const char *s) {
  char m[40];
  size_t n = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') m[n++] = *s;
  m[n] = '\0';
  size_t a = 0;
  while (a < n && m[a] == '0') a++;
  while (n > a && m[n - 1] == '0') n--;
  return n > a ? (int)(n - a) : 1;
}

Test(json_out, random_doubles_read_back_in_fewest_digits) {
  uint64_t state = 88172645463325252ULL;
  for (int i = 0; i < 200000; i++) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    double x;
    uint64_t bits = state;
    memcpy(&x, &bits, sizeof x);
    if (!isfinite(x)) continue;
    if (i % 2) x = (double)(state % 1000000) / 1000; /* short decimals too */
    char buf[40], ref[40];
    json_out_real(x, buf, sizeof buf);
    cr_assert_eq(strtod(buf, NULL), x, "%s", buf);
    int p = 1;
    for (; p <= 17; p++) {
      snprintf(ref, sizeof ref, "%.*g", p, x);
      if (strtod(ref, NULL) == x) break;
    }
    cr_assert_eq(digits(buf), digits(ref), "%s vs %s", buf, ref);
  }
}

Test(json_out, layout_is_janssons) {
  json_t *o = json_pack("{s:s,s:i,s:[i,s,b,n],s:{},s:[],s:{s:{s:i}}}", "a",
                        "x\"y\n", "b", -3, "c", 1, "u\u00e9", 1, "d", "e",
                        "f", "g", "h", 7);
  size_t flags[] = {JSON_COMPACT, JSON_INDENT(2), 0,
                    JSON_INDENT(2) | JSON_COMPACT, JSON_INDENT(4)};
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
    char *want = json_dumps(o, flags[i] | JSON_PRESERVE_ORDER);
    char *got = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&got, &n);
    cr_assert_eq(json_out_write(o, f, flags[i]), 0);
    fclose(f);
    cr_expect_str_eq(got, want, "flags %zx", flags[i]);
    free(want), free(got);
  }
  json_decref(o);
}
