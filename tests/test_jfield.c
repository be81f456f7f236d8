/* test_jfield: typed JSON fields and the lines their messages cite, on a
 * small document whose lines are counted by hand: a key's own line, the
 * right occurrence inside an array, the parent's line for an absent key,
 * defaults, and each kind of failure with its code. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jfield.h"

static const char DOC[] =
    "{\n"                       /* 1 */
    "  \"a\": 1,\n"             /* 2 */
    "  \"obj\": {\n"            /* 3 */
    "    \"x\": \"s\",\n"       /* 4 */
    "    \"n\": -2,\n"          /* 5 */
    "    \"b\": 3\n"            /* 6 */
    "  },\n"                    /* 7 */
    "  \"list\": [\n"           /* 8 */
    "    {\"k\": 1},\n"         /* 9 */
    "    {\"j\": 2},\n"         /* 10 */
    "    {\"k\": \"bad\"}\n"    /* 11 */
    "  ]\n"                     /* 12 */
    "}\n";

static json_t *root;
static err e;
static jfield_doc doc;

static void setup(void) {
  json_error_t je;
  root = json_loads(DOC, 0, &je);
  cr_assert_not_null(root, "%s", je.text);
  err_clear(&e);
  doc = (jfield_doc){.file = "f.json", .text = DOC, .len = strlen(DOC), .e = &e};
}

static void teardown(void) { json_decref(root); }

TestSuite(jfield, .init = setup, .fini = teardown);

static void expect_fail(int rc, int code, const char *msg) {
  cr_expect_eq(rc, code, "rc %d, want %d (%s)", rc, code, e.msg);
  cr_expect_eq(e.code, code);
  cr_expect_str_eq(e.msg, msg);
}

Test(jfield, values_and_defaults) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "obj");
  json_t *o;
  long long a = 0, dflt = 0;
  char *x = NULL, *y = NULL;
  double n = 0, m = 0;
  bool b = false;
  int i32 = 0;
  cr_assert_eq(jfield_int(&doc, &top, root, "a", 0, 10, -1, &a), ERR_OK);
  cr_expect_eq(a, 1);
  cr_assert_eq(jfield_int(&doc, &top, root, "none", 0, 10, 7, &dflt), ERR_OK);
  cr_expect_eq(dflt, 7);
  cr_assert_eq(jfield_obj(&doc, &top, root, "obj", true, &o), ERR_OK);
  cr_assert_eq(jfield_str(&doc, &s, o, "x", NULL, &x), ERR_OK);
  cr_expect_str_eq(x, "s");
  cr_assert_eq(jfield_str(&doc, &s, o, "y", "dflt", &y), ERR_OK);
  cr_expect_str_eq(y, "dflt");
  cr_assert_eq(jfield_num(&doc, &s, o, "n",
                          &(jfield_num_spec){.lo = -5, .hi = 0,
                                             .required = true},
                          &n), ERR_OK);
  cr_expect_eq(n, -2);
  cr_assert_eq(jfield_num(&doc, &s, o, "m",
                          &(jfield_num_spec){.lo = 0, .open = true, .hi = 1,
                                             .def = NAN},
                          &m), ERR_OK);
  cr_expect(isnan(m));
  cr_assert_eq(jfield_int32(&doc, &s, o, "b", 0, -1, &i32), ERR_OK);
  cr_expect_eq(i32, 3);
  cr_assert_eq(jfield_bool(&doc, &s, o, "flag", true, &b), ERR_OK);
  cr_expect(b);
  cr_expect_eq(jfield_one_of(&doc, &s, "x", "s", (const char *const[]){"r", "s", NULL}),
               ERR_OK);
  cr_expect_eq(e.code, ERR_OK, "%s", e.msg);
  free(x);
  free(y);
}

Test(jfield, range_cites_the_key_line) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "obj");
  json_t *o;
  double n;
  cr_assert_eq(jfield_obj(&doc, &top, root, "obj", true, &o), ERR_OK);
  expect_fail(jfield_num(&doc, &s, o, "n",
                         &(jfield_num_spec){.lo = 0, .hi = 1, .required = true},
                         &n),
              ERR_RANGE, "f.json:5: obj.n: must be >= 0, not -2");
}

/* Issue 35, 15: a value and a bound are printed exactly ("must be <=
 * 1e+06, not 1e+06" for 1000001, as %g wrote both; integers as integers). */
Test(jfield, range_values_are_printed_exactly) {
  static const struct { const char *text; double lo, hi; const char *msg; }
      c[] = {{"{\"n\": 1000001}", 0, 1e6,
              "g.json:1: n: must be <= 1000000, not 1000001"},
             {"{\"n\": 0.30000000000000004}", 0, 0.3,
              "g.json:1: n: must be <= 0.3, not 0.30000000000000004"},
             {"{\"n\": 1447.5}", 1448, 2e12,
              "g.json:1: n: must be >= 1448, not 1447.5"},
             {"{\"n\": 1e-320}", 1e-6, 1,
              "g.json:1: n: must be >= 1e-06, not 1e-320"},
             {"{\"n\": 1099511627777}", 0, 1099511627776.0,
              "g.json:1: n: must be <= 1099511627776, not 1099511627777"}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    err_clear(&e);
    json_t *r = json_loads(c[i].text, 0, NULL);
    cr_assert_not_null(r);
    jfield_doc d = {.file = "g.json", .text = c[i].text,
                    .len = strlen(c[i].text), .e = &e};
    jfield_scope top = jfield_top();
    double n;
    expect_fail(jfield_num(&d, &top, r, "n",
                           &(jfield_num_spec){.lo = c[i].lo, .hi = c[i].hi},
                           &n),
                ERR_RANGE, c[i].msg);
    json_decref(r);
  }
  char buf[ERR_NUM_MAX];
  cr_expect_str_eq(err_num(0.1, buf), "0.1");
  cr_expect_str_eq(err_num(-2, buf), "-2");
  cr_expect_str_eq(err_num(-20, buf), "-20");
  cr_expect_str_eq(err_num(1e15, buf), "1e+15");
  cr_expect_str_eq(err_num(-0.0, buf), "0");
  cr_expect_str_eq(err_num(1.0 / 3, buf), "0.3333333333333333");
}

Test(jfield, absent_key_cites_the_parent) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "obj");
  json_t *o;
  char *z = NULL;
  cr_assert_eq(jfield_obj(&doc, &top, root, "obj", true, &o), ERR_OK);
  expect_fail(jfield_str(&doc, &s, o, "zz", NULL, &z), ERR_MISSING,
              "f.json:3: obj.zz: missing (a string)");
  cr_expect_null(z);
}

Test(jfield, array_element_finds_its_occurrence) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "list");
  json_t *list = json_object_get(root, "list");
  jfield_scope el = jfield_elem(&s, list, 2);
  long long k;
  cr_expect_str_eq(el.label, "list[2]");
  /* Element 1 has no "k": element 2's is the second "k" of the text. */
  expect_fail(jfield_int(&doc, &el, json_array_get(list, 2), "k", 0, 9, -1, &k),
              ERR_PARSE, "f.json:11: list[2].k: must be an integer");
}

Test(jfield, unknown_key_and_value) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "obj");
  json_t *o;
  cr_assert_eq(jfield_obj(&doc, &top, root, "obj", true, &o), ERR_OK);
  expect_fail(jfield_known(&doc, &s, o, (const char *const[]){"x", "n", NULL}),
              ERR_UNKNOWN, "f.json:6: obj.b: unknown key (known: x, n)");
}

Test(jfield, unknown_value) {
  jfield_scope top = jfield_top(), s = jfield_child(&top, "obj");
  expect_fail(jfield_one_of(&doc, &s, "x", "s", (const char *const[]){"r", NULL}),
              ERR_UNKNOWN, "f.json:4: obj.x: unknown value 's'");
}

Test(jfield, wrong_types) {
  jfield_scope top = jfield_top();
  json_t *o;
  bool b;
  expect_fail(jfield_obj(&doc, &top, root, "a", true, &o), ERR_PARSE,
              "f.json:2: a: must be an object");
  err_clear(&e);
  expect_fail(jfield_bool(&doc, &top, root, "a", false, &b), ERR_PARSE,
              "f.json:2: a: must be true or false");
  err_clear(&e);
  expect_fail(jfield_obj(&doc, &top, root, "gone", true, &o), ERR_MISSING,
              "f.json:1: gone: missing (an object)");
}

Test(jfield, int32_bounds) {
  jfield_scope top = jfield_top();
  int v;
  expect_fail(jfield_int32(&doc, &top, root, "a", 2, 5, &v), ERR_RANGE,
              "f.json:2: a: must be in [2, 2147483647], not 1");
}

/* Issue 24, 16: a failure of the document itself (its root) has no field
 * to name: no empty label before the message. */
Test(jfield, the_root_has_no_label) {
  jfield_scope top = jfield_top();
  expect_fail(jfield_fail(&doc, &top, NULL, ERR_PARSE, "a scenario is a JSON "
                          "object"), ERR_PARSE,
              "f.json:1: a scenario is a JSON object");
}

/* Issue 33: an integer written as a real that is one exactly (16e6) is
 * that integer, as on the command line and in a sweep file; 2.5 and a real
 * past 2^53 (where doubles skip integers) are not. */
Test(jfield, an_exact_real_is_an_integer) {
  json_t *o = json_loads("{\"w\": 16e6, \"h\": 2.5, \"big\": 1e300, "
                         "\"top\": 9007199254740992.0}", 0, NULL);
  long long x = 0;
  cr_expect(jfield_as_int(json_object_get(o, "w"), &x) && x == 16000000);
  cr_expect(!jfield_as_int(json_object_get(o, "h"), &x));
  cr_expect(!jfield_as_int(json_object_get(o, "big"), &x));
  cr_expect(jfield_as_int(json_object_get(o, "top"), &x) &&
            x == 9007199254740992LL);
  jfield_scope top = jfield_top();
  cr_expect_eq(jfield_int(&doc, &top, o, "w", 0, 20000000, -1, &x), ERR_OK);
  cr_expect_eq(x, 16000000);
  expect_fail(jfield_int(&doc, &top, o, "h", 0, 9, -1, &x), ERR_PARSE,
              "f.json:1: h: must be an integer");
  json_decref(o);
}
