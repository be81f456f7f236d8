/* test_csv: the shared CSV text layer — lines with their numbers, checks
 * and trimming; provenance comments against free text; field splitting;
 * exact nanosecond times against integer arithmetic on random decimals,
 * doubles against strtod, and each kind of bad number. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"
#include "traces/csv.h"
#include "traces/fault.h"
#include "traces/trace.h"

Test(csv, lines_numbered_trimmed_and_checked) {
  const char text[] = "\xEF\xBB\xBF a,b \r\n\n\t# c: d \nlast";
  csv_reader r;
  csv_reader_init(&r, text, sizeof text - 1, "f.csv");
  const char *s;
  size_t n;
  static const char *const want[] = {"a,b", "", "# c: d", "last"};
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(csv_next(&r, &s, &n, NULL), 1);
    cr_expect_eq(r.line, i + 1);
    cr_expect_eq(n, strlen(want[i]));
    cr_expect(memcmp(s, want[i], n) == 0, "line %d: '%.*s'", i + 1, (int)n, s);
  }
  cr_expect_eq(csv_next(&r, &s, &n, NULL), 0);
  cr_expect(r.any_text);

  const char bad[] = "ok\nx\xC3(y\n";
  err e;
  err_clear(&e);
  csv_reader_init(&r, bad, sizeof bad - 1, "g.csv");
  cr_assert_eq(csv_next(&r, &s, &n, &e), 1);
  cr_expect_eq(csv_next(&r, &s, &n, &e), ERR_PARSE);
  cr_expect_str_eq(e.msg, "g.csv:2: invalid UTF-8 (byte 0xc3 at column 2)");
  const char nul[] = "a\0b\n";
  err_clear(&e);
  csv_reader_init(&r, nul, sizeof nul - 1, "h.csv");
  cr_expect_eq(csv_next(&r, &s, &n, &e), ERR_PARSE);
  cr_expect_str_eq(e.msg, "h.csv:1: NUL byte (a binary file, not CSV text)");
  csv_reader_init(&r, "  \n\t\n", 5, "i.csv");
  while (csv_next(&r, &s, &n, NULL) > 0) {}
  cr_expect_not(r.any_text);
}

Test(csv, comments_and_fields) {
  const char *k, *v;
  size_t kn, vn;
  const char *c = "#  source :  x, y  ";
  cr_assert(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn) == false,
            "a blank before ':' makes free text");
  c = "# source.v2: x, y";
  cr_assert(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));
  cr_expect(kn == 9 && memcmp(k, "source.v2", 9) == 0);
  cr_expect(vn == 4 && memcmp(v, "x, y", 4) == 0);
  c = "# just words";
  cr_expect_not(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));
  c = "#: empty key";
  cr_expect_not(csv_comment_split(c, strlen(c), &k, &kn, &v, &vn));

  const char *f[3];
  size_t fn[3];
  const char *line = " a , ,c,d";
  csv_reader r;
  csv_reader_init(&r, "", 0, "f.csv");
  cr_assert_eq(csv_split(&r, line, strlen(line), f, fn, 3), 4);
  cr_expect(fn[0] == 1 && f[0][0] == 'a');
  cr_expect_eq(fn[1], 0);
  cr_expect(fn[2] == 1 && f[2][0] == 'c');
  cr_expect_eq(csv_split(&r, "", 0, f, fn, 3), 1);
  csv_reader_free(&r);
}

Test(csv, nanoseconds_exact_against_integers) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int i = 0; i < 2000; i++) {
    long long sec = (long long)gsl_rng_uniform_int(r, 1000000000);
    long long frac = (long long)gsl_rng_uniform_int(r, 1000000000);
    char buf[64];
    snprintf(buf, sizeof buf, "%lld.%09lld", sec, frac);
    int64_t ns;
    cr_assert_eq(csv_parse_ns(buf, strlen(buf), &ns), CSV_NUM_OK, "%s", buf);
    cr_assert_eq(ns, sec * 1000000000LL + frac, "%s", buf);
    double d;
    cr_assert_eq(csv_parse_double(buf, strlen(buf), &d), CSV_NUM_OK);
    cr_assert_eq(d, strtod(buf, NULL), "%s", buf);
  }
  gsl_rng_free(r);
  int64_t ns;
  cr_expect_eq(csv_parse_ns("1.5e-9", 6, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 2, "1.5 ns rounds to nearest");
  cr_expect_eq(csv_parse_ns("25e-1", 5, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 2500000000LL);
  cr_expect_eq(csv_parse_ns("-0", 2, &ns), CSV_NUM_OK);
  cr_expect_eq(ns, 0);
}

Test(csv, bad_numbers_say_why) {
  int64_t ns;
  double d;
  cr_expect_eq(csv_parse_ns("-1", 2, &ns), CSV_NUM_NEGATIVE);
  cr_expect_eq(csv_parse_ns("1e400", 5, &ns), CSV_NUM_OVERFLOW);
  cr_expect_eq(csv_parse_ns("NaN", 3, &ns), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_ns("inf", 3, &ns), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_ns("1x", 2, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_ns("", 0, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_ns("0x10", 4, &ns), CSV_NUM_SYNTAX);
  cr_expect_eq(csv_parse_double("-Infinity", 9, &d), CSV_NUM_NONFINITE);
  cr_expect_eq(csv_parse_double("1e999", 5, &d), CSV_NUM_OVERFLOW);
  cr_expect_eq(csv_parse_double("-2.5", 4, &d), CSV_NUM_OK);
  cr_expect_eq(d, -2.5);
  cr_expect(csv_is_inf("INF", 3));
  cr_expect(csv_is_inf("infinity", 8));
  cr_expect_not(csv_is_inf("+inf", 4));
  cr_expect_str_eq(csv_num_what(CSV_NUM_NEGATIVE), "is negative");
  cr_expect_eq(csv_num_err(CSV_NUM_SYNTAX), ERR_PARSE);
  cr_expect_eq(csv_num_err(CSV_NUM_OVERFLOW), ERR_RANGE);
}

/* Issue 24, 16: "-0" is zero, and prints as "0" (a latency of -0 was
 * shown as "-0 .. -0 ms"). */
Test(csv, minus_zero_is_zero) {
  double d = 1;
  cr_assert_eq(csv_parse_double("-0", 2, &d), CSV_NUM_OK);
  cr_expect(d == 0 && !signbit(d), "signbit %d", signbit(d) != 0);
  cr_assert_eq(csv_parse_double("-0.0e3", 6, &d), CSV_NUM_OK);
  cr_expect(!signbit(d));
  char buf[16];
  snprintf(buf, sizeof buf, "%g", d);
  cr_expect_str_eq(buf, "0");
}

/* ---- quoting (issue 35, 6) ---- */

/* The fields of every record of text, each record's fields joined by '|'
 * and records by ';' (malloc'ed), or the error's message. */
static char *read_all(const char *text, err *e) {
  csv_reader r;
  csv_reader_init(&r, text, strlen(text), "q.csv");
  char *out = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&out, &n);
  const char *s, *f[8];
  size_t len, fn[8];
  int rc;
  while ((rc = csv_next(&r, &s, &len, e)) > 0) {
    int k = csv_split(&r, s, len, f, fn, 8);
    fprintf(m, "%d:", r.line);
    for (int i = 0; i < k && i < 8; i++)
      fprintf(m, "%s%.*s", i ? "|" : "", (int)fn[i], f[i]);
    fputc(';', m);
  }
  fclose(m);
  csv_reader_free(&r);
  if (rc < 0) {
    free(out);
    return NULL;
  }
  return out;
}

Test(csv, quoted_fields_as_rfc_4180_says) {
  err e;
  err_clear(&e);
  char *got = read_all("a, \"b,c\" ,\"d\"\"e\",\"two\nlines\",\" f \"\n"
                       "# a comment's \"quote\" is text\r\n"
                       "\"\",\"\"\"\",x\n", &e);
  cr_assert_not_null(got, "%s", e.msg);
  cr_expect_str_eq(got, "1:a|b,c|d\"e|two\nlines| f ;"
                        "3:# a comment's \"quote\" is text;"
                        "4:|\"|x;");
  free(got);
  /* CRLF inside and after a quoted field */
  got = read_all("\"a\r\nb\",c\r\nd\r\n", &e);
  cr_assert_not_null(got, "%s", e.msg);
  cr_expect_str_eq(got, "1:a\r\nb|c;3:d;");
  free(got);
  err_clear(&e);
  cr_expect_null(read_all("ok\n1,\"never\nclosed\n", &e));
  cr_expect_str_eq(e.msg, "q.csv:2: a quoted field is not closed (a quote "
                   "inside a quoted field is written twice: \"\")");
  err_clear(&e);
  cr_expect_null(read_all("1,\"a\nb\"c,2\n", &e));
  cr_expect_str_eq(e.msg, "q.csv:2: text after the closing quote of a field "
                   "(a quote inside a quoted field is written twice: \"\")");
}

/* One field as the writer puts it. */
static char *written_field(const char *s) {
  char *out = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&out, &n);
  cr_assert_eq(csv_write_field(m, s), 0);
  fclose(m);
  return out;
}

Test(csv, the_writer_quotes_what_needs_it) {
  struct {
    const char *in, *out;
  } cases[] = {{"plain", "plain"},        {"", ""},
               {"a,b", "\"a,b\""},        {"say \"hi\"", "\"say \"\"hi\"\"\""},
               {"two\nlines", "\"two\nlines\""}, {"cr\r", "\"cr\r\""},
               {" pad", "\" pad\""},      {"pad\t", "\"pad\t\""},
               {"#hash", "\"#hash\""},    {"in#side", "in#side"},
               {"Zürich", "Zürich"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *w = written_field(cases[i].in);
    cr_expect_str_eq(w, cases[i].out, "'%s'", cases[i].in);
    free(w);
  }
  char *out = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&out, &n);
  csv_write_comment(m, "scenario", "two\nlines\r\n");
  fclose(m);
  cr_expect_str_eq(out, "# scenario: two lines  \n");
  free(out);
}

/* Random fields from an alphabet of every character that matters, written
 * as records, read back equal to the fields themselves. */
Test(csv, random_fields_read_back_as_written) {
  static const char *const alphabet[] = {"a", "b", ",", "\"", "\n", "\r",
                                         " ", "\t", "#", "é", "1", ":"};
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 35);
  for (int t = 0; t < 500; t++) {
    char field[2][4][32] = {{{0}}};
    int k = 2 + (int)gsl_rng_uniform_int(g, 3);
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    for (int rec = 0; rec < 2; rec++) {
      for (int i = 0; i < k; i++) {
        int len = (int)gsl_rng_uniform_int(g, 6);
        for (int c = 0; c < len; c++)
          strcat(field[rec][i], alphabet[gsl_rng_uniform_int(g, 12)]);
        if (i) fputc(',', m);
        cr_assert_eq(csv_write_field(m, field[rec][i]), 0);
      }
      fputc('\n', m);
    }
    fclose(m);
    csv_reader r;
    csv_reader_init(&r, text, n, "r.csv");
    const char *s, *f[4];
    size_t len, fn[4];
    err e;
    err_clear(&e);
    for (int rec = 0; rec < 2; rec++) {
      cr_assert_eq(csv_next(&r, &s, &len, &e), 1, "%s in %s", e.msg, text);
      cr_assert_eq(csv_split(&r, s, len, f, fn, 4), k, "%s", text);
      for (int i = 0; i < k; i++)
        cr_expect(fn[i] == strlen(field[rec][i]) &&
                      memcmp(f[i], field[rec][i], fn[i]) == 0,
                  "field %d: '%.*s', wrote '%s' in:\n%s", i, (int)fn[i], f[i],
                  field[rec][i], text);
    }
    cr_expect_eq(csv_next(&r, &s, &len, &e), 0);
    csv_reader_free(&r);
    free(text);
  }
  gsl_rng_free(g);
}

/* ---- the files geodes writes, read back, with hostile site names ---- */

/* Five one-device sites named with a comma, quotes, a line break, blanks
 * at both ends and a leading '#' with a ':' (a link target "A:B"). */
static const char *const HOSTILE[] = {"a,b", "say \"hi\"", "two\nlines",
                                      " pad ", "#x:y"};
#define NHOSTILE 5

static const char *hostile_scenario(void) {
  return support_write_file(support_path("hostile.json"),
      "{\"name\": \"hostile\", \"sites\": [\n"
      " {\"name\": \"a,b\", \"devices\": 1, \"gpu\": \"V100\"},\n"
      " {\"name\": \"say \\\"hi\\\"\", \"devices\": 1, \"gpu\": \"V100\"},\n"
      " {\"name\": \"two\\nlines\", \"devices\": 1, \"gpu\": \"V100\"},\n"
      " {\"name\": \" pad \", \"devices\": 1, \"gpu\": \"V100\"},\n"
      " {\"name\": \"#x:y\", \"devices\": 1, \"gpu\": \"V100\"}],\n"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},\n"
      " \"workload\": {\"model\": \"gpt3-xl\", \"layers\": 5, \"batch\": 5,\n"
      "  \"micro_batch\": 1, \"stages\": 5, \"replicas\": 1}}\n");
}

static int hostile_index(const char *s, size_t n) {
  for (int i = 0; i < NHOSTILE; i++)
    if (strlen(HOSTILE[i]) == n && memcmp(HOSTILE[i], s, n) == 0) return i;
  return -1;
}

/* faults synth wrote site names bare: "a,b" split the row, and faults
 * check refused what faults synth had just written. Now every row reads
 * back, and writing the events read gives the file's rows again. */
Test(csv, faults_synth_then_check_with_hostile_names) {
  const char *sc = hostile_scenario(), *out = support_path("hostile.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "faults synth '%s' --duration-s 10000000 "
                              "--seed 1 --monthly-frac 0.9 --link-outages -o "
                              "'%s'", sc, out), 0, "%s", r.err);
  cr_expect_eq(support_geodes(&r, "faults check '%s' --scenario '%s'", out,
                              sc), 0, "%s", r.err);
  support_run_clear(&r);
  scenario *s = support_scenario(sc);
  err e;
  err_clear(&e);
  fault_trace *f = fault_load(out, s, &e);
  cr_assert_not_null(f, "%s", e.msg);
  cr_assert_gt(fault_count(f), 10);
  char *rows = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&rows, &n);
  fprintf(m, "%s\n", FAULT_HEADER);
  bool sites[NHOSTILE] = {false};
  for (size_t i = 0; i < fault_count(f); i++) {
    const fault_event *ev = fault_event_at(f, i);
    cr_assert_eq(fault_write_row(m, "mem", s, ev, &e), ERR_OK);
    if (fault_kind_target(ev->kind) != FAULT_TARGET_DEVICE) sites[ev->a] = true;
  }
  fclose(m);
  for (int i = 0; i < NHOSTILE; i++)
    cr_expect(sites[i], "no event names site %d", i);
  char *file = support_read_file(out, NULL);
  const char *data = strstr(file, FAULT_HEADER "\n");
  cr_assert_not_null(data);
  cr_expect_str_eq(data, rows, "the rows read and written again differ");
  free(file), free(rows);
  fault_free(f);
  scenario_free(s);
}

/* --link-stats wrote site names bare in resource, src and dst. Every row
 * now has the header's 9 fields, read by this reader and by Python's csv
 * module, and src and dst are the sites' names. */
Test(csv, link_stats_read_by_two_csv_readers) {
  const char *sc = hostile_scenario(), *out = support_path("links.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "explain '%s' --method dtfm-identity "
                              "--link-stats '%s'", sc, out), 0, "%s", r.err);
  size_t len;
  char *text = support_read_file(out, &len);
  csv_reader rd;
  csv_reader_init(&rd, text, len, out);
  const char *s, *f[10];
  size_t n, fn[10];
  err e;
  err_clear(&e);
  int rows = 0, rc;
  bool seen[NHOSTILE] = {false};
  while ((rc = csv_next(&rd, &s, &n, &e)) > 0) {
    cr_assert_eq(csv_split(&rd, s, n, f, fn, 10), 9, "line %d", rd.line);
    if (rows++ == 0) continue; /* the header */
    int src = hostile_index(f[3], fn[3]);
    cr_expect_geq(src, 0, "line %d: src '%.*s'", rd.line, (int)fn[3], f[3]);
    if (src >= 0) seen[src] = true;
    cr_expect(fn[4] == 0 || hostile_index(f[4], fn[4]) >= 0, "line %d: dst",
              rd.line);
  }
  cr_assert_eq(rc, 0, "%s", e.msg);
  csv_reader_free(&rd);
  free(text);
  cr_assert_gt(rows, 1);
  for (int i = 0; i < NHOSTILE; i++) cr_expect(seen[i], "site %d: no row", i);
  if (support_sh(NULL, "python3 -c 'import csv' 2>/dev/null") != 0) {
    support_run_clear(&r);
    return; /* no Python: this reader only */
  }
  cr_assert_eq(support_sh(&r, "python3 -c 'import csv, sys\n"
                          "rows = list(csv.reader(open(sys.argv[1], "
                          "newline=\"\")))\n"
                          "print(len(rows), sorted(set(len(r) for r in rows)), "
                          "len(set(r[3] for r in rows[1:])))' '%s'", out),
               0, "%s", r.err);
  char want[64];
  snprintf(want, sizeof want, "%d [9] %d\n", rows, NHOSTILE);
  cr_expect_str_eq(r.out, want);
  support_run_clear(&r);
}

/* A base trace whose quoted names hold commas, quotes and line breaks:
 * trace synth writes them quoted, and its output reads back with them. */
Test(csv, trace_synth_keeps_hostile_names) {
  const char *base = support_write_file(support_path("base.csv"),
      "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,10,1\n"
      "0,\"a,b\",\"say \"\"hi\"\"\",20,2\n0,\"two\nlines\",\" pad \",30,3\n");
  const char *out = support_path("syn.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "trace synth --base '%s' --duration-s 100 "
                              "--step-s 10 --seed 1 -o '%s'", base, out), 0,
               "%s", r.err);
  cr_expect_eq(support_geodes(&r, "trace check '%s'", out), 0, "%s", r.err);
  support_run_clear(&r);
  err e;
  err_clear(&e);
  trace *t = trace_load(out, NULL, 0, &e);
  cr_assert_not_null(t, "%s", e.msg);
  cr_assert_eq(trace_nsites(t), 4);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(hostile_index(trace_site(t, i), strlen(trace_site(t, i))),
                 i, "site %d: '%s'", i, trace_site(t, i));
  trace_free(t);
}

/* The resource column of --link-stats was cut at 255 bytes: a long name
 * lost its end, inside a UTF-8 character, and the file no longer read. */
Test(csv, link_stats_keep_long_names_whole) {
  char a[420] = "", b[420] = "";
  for (int i = 0; i < 200; i++) strcat(a, "é"), strcat(b, "ü");
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"long\", \"sites\": [{\"name\": \"%s\", \"devices\": "
           "1, \"gpu\": \"V100\"}, {\"name\": \"%s\", \"devices\": 1, "
           "\"gpu\": \"V100\"}], \"network\": {\"latency_ms\": 10, "
           "\"bandwidth_gbps\": 1}, \"workload\": {\"model\": \"gpt3-xl\", "
           "\"layers\": 2, \"batch\": 2, \"micro_batch\": 1, \"stages\": 2, "
           "\"replicas\": 1}}", a, b);
  const char *sc = support_write_file(support_path("long.json"), json);
  const char *out = support_path("long.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "explain '%s' --method dtfm-identity "
                              "--link-stats '%s'", sc, out), 0, "%s", r.err);
  support_run_clear(&r);
  size_t len;
  char *text = support_read_file(out, &len);
  csv_reader rd;
  csv_reader_init(&rd, text, len, out);
  const char *s, *f[10];
  size_t n, fn[10];
  err e;
  err_clear(&e);
  char want[1000];
  snprintf(want, sizeof want, "%s>%s", a, b);
  int links = 0, rc;
  while ((rc = csv_next(&rd, &s, &n, &e)) > 0) {
    cr_assert_eq(csv_split(&rd, s, n, f, fn, 10), 9, "line %d", rd.line);
    if (fn[1] == 4 && memcmp(f[1], "link", 4) == 0 && fn[3] == strlen(a))
      links += fn[2] == strlen(want) && memcmp(f[2], want, fn[2]) == 0;
  }
  cr_expect_eq(rc, 0, "%s", e.msg);
  cr_expect_gt(links, 0, "no row of the link %s", want);
  csv_reader_free(&rd);
  free(text);
}
