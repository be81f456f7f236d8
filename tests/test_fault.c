/* test_fault: the fault trace — a hand-written file read field by field;
 * the replay (up, speed, link factor, next change, end of an outage)
 * against a brute-force scan of the events on random traces; rows written
 * by fault_write_row read back the same; and every kind of bad input
 * refused with its "FILE:LINE: message". */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/simtime.h"
#include "traces/fault.h"
#include "traces/scenario.h"

#define HDR FAULT_HEADER "\n"

/* Sites a (devices 0, 1), b (2, 3) and "c:d" (4): a name holding ':'. */
static scenario *sc;

static void setup(void) {
  const char *json =
      "{\"name\": \"three\", \"sites\": ["
      "{\"name\": \"a\", \"devices\": 2, \"gpu\": \"V100\", \"nic_gbps\": 10},"
      "{\"name\": \"b\", \"devices\": 2, \"gpu\": \"V100\", \"nic_gbps\": 10},"
      "{\"name\": \"c:d\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 10}],"
      "\"network\": {\"latency_ms\": 1, \"bandwidth_gbps\": 1},"
      "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 5, \"batch\": 5,"
      " \"micro_batch\": 1, \"stages\": 5, \"replicas\": 1}}";
  err e;
  err_clear(&e);
  sc = scenario_parse(json, strlen(json), "three.json", &e);
  cr_assert_not_null(sc, "%s", e.msg);
}

static void teardown(void) { scenario_free(sc); }

TestSuite(fault, .init = setup, .fini = teardown, .timeout = 60);

static fault_trace *parse_ok(const char *text) {
  err e;
  err_clear(&e);
  fault_trace *f = fault_parse(text, strlen(text), "f.csv", sc, &e);
  cr_assert_not_null(f, "%s", e.msg);
  cr_assert_eq(e.code, ERR_OK);
  return f;
}

Test(fault, hand_written_file) {
  fault_trace *f = parse_ok("# source: hand\n# seed: 3\n" HDR
                            "0,device_down,1,10,\n"
                            "2.5, site_down , b ,inf,\n"
                            "2.5,link_slow,c:d:a,1,0.25\n"
                            "7,device_slow,4,INF,0.5\n"
                            "9,link_down,a:a,0.000000001,\n");
  cr_assert_eq(fault_count(f), 5);
  const fault_event *e = fault_event_at(f, 0);
  cr_expect(e->kind == FAULT_DEVICE_DOWN && e->a == 1 && e->t_ns == 0 &&
            e->dur_ns == 10000000000LL && e->factor == 1 && e->line == 4);
  e = fault_event_at(f, 1);
  cr_expect(e->kind == FAULT_SITE_DOWN && e->a == 1 && e->dur_ns == FAULT_FOREVER);
  e = fault_event_at(f, 2);
  cr_expect(e->kind == FAULT_LINK_SLOW && e->a == 2 && e->b == 0 &&
            e->factor == 0.25, "the site 'c:d' is split off at its own ':'");
  e = fault_event_at(f, 3);
  cr_expect(e->kind == FAULT_DEVICE_SLOW && e->a == 4 && e->factor == 0.5 &&
            e->dur_ns == FAULT_FOREVER);
  e = fault_event_at(f, 4);
  cr_expect(e->kind == FAULT_LINK_DOWN && e->a == 0 && e->b == 0 &&
            e->dur_ns == 1);
  cr_expect_str_eq(fault_comment(f, "source"), "hand");
  cr_expect_str_eq(fault_comment(f, "seed"), "3");
  cr_expect_null(fault_comment(f, "licence"));

  cr_expect_not(fault_device_up(f, 1, 0));
  cr_expect_not(fault_device_up(f, 1, 9999999999LL));
  cr_expect(fault_device_up(f, 1, 10000000000LL), "[t, t + d): up at the end");
  cr_expect_eq(fault_device_up_again(f, 1, 5), 10000000000LL);
  cr_expect(fault_device_up(f, 2, 2499999999LL));
  cr_expect_not(fault_device_up(f, 3, 2500000000LL));
  cr_expect_eq(fault_device_up_again(f, 3, 2500000000LL), FAULT_FOREVER);
  cr_expect(fault_device_up(f, 0, 1));
  cr_expect_eq(fault_device_up_again(f, 0, 7), 7);
  cr_expect_eq(fault_device_speed(f, 4, 6999999999LL), 1);
  cr_expect_eq(fault_device_speed(f, 4, 7000000000LL), 0.5);
  cr_expect_eq(fault_link_factor(f, 0, 2, 3000000000LL), 0.25);
  cr_expect_eq(fault_link_factor(f, 2, 0, 3500000000LL), 1);
  cr_expect_eq(fault_link_factor(f, 0, 1, 3000000000LL), 1);
  cr_expect_eq(fault_link_factor(f, 0, 0, 9000000000LL), 0);
  cr_expect_eq(fault_link_factor(f, 0, 0, 9000000001LL), 1);
  cr_expect_eq(fault_next_change(f, 0), 2500000000LL);
  cr_expect_eq(fault_next_change(f, 9000000000LL), 9000000001LL);
  cr_expect_eq(fault_next_change(f, 10000000000LL), FAULT_FOREVER);
  cr_expect_eq(fault_device_next(f, 1, 0), 10000000000LL);
  cr_expect_eq(fault_device_next(f, 0, 0), FAULT_FOREVER);
  fault_free(f);

  f = parse_ok("# nothing happens\n" HDR);
  cr_expect_eq(fault_count(f), 0);
  cr_expect(fault_device_up(f, 3, 123));
  cr_expect_eq(fault_next_change(f, 0), FAULT_FOREVER);
  fault_free(f);
}

/* The naive reference: every event scanned at time t. */
static void naive(const fault_trace *f, int d, int la, int lb, int64_t t,
                  bool *up, double *speed, double *link) {
  *up = true, *speed = 1, *link = 1;
  bool down = false;
  for (size_t i = 0; i < fault_count(f); i++) {
    const fault_event *e = fault_event_at(f, i);
    int64_t end = e->dur_ns == FAULT_FOREVER ? INT64_MAX : e->t_ns + e->dur_ns;
    if (!(e->t_ns <= t && t < end)) continue;
    int site = sc->device_site[d];
    if ((e->kind == FAULT_DEVICE_DOWN && e->a == d) ||
        (e->kind == FAULT_SITE_DOWN && e->a == site))
      *up = false;
    if (e->kind == FAULT_DEVICE_SLOW && e->a == d) *speed *= e->factor;
    bool pair = (e->a == la && e->b == lb) || (e->a == lb && e->b == la);
    if (e->kind == FAULT_LINK_SLOW && pair) *link *= e->factor;
    if (e->kind == FAULT_LINK_DOWN && pair) down = true;
  }
  if (down) *link = 0;
}

Test(fault, replay_against_a_scan_of_the_events) {
  static const char *const links[] = {"a:a", "a:b", "b:a", "a:c:d", "c:d:b"};
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  for (unsigned seed = 1; seed <= 40; seed++) {
    gsl_rng_set(r, seed);
    size_t cap = 1 << 14, len = 0;
    char *text = mem_alloc(cap);
    len += (size_t)snprintf(text, cap, HDR);
    int rows = 1 + (int)gsl_rng_uniform_int(r, 40);
    int t = 0;
    for (int i = 0; i < rows; i++) {
      t += (int)gsl_rng_uniform_int(r, 4);
      int k = (int)gsl_rng_uniform_int(r, FAULT_NKINDS);
      char target[16], dur[16], factor[16] = "";
      if (fault_kind_target(k) == FAULT_TARGET_DEVICE)
        snprintf(target, sizeof target, "%lu", gsl_rng_uniform_int(r, 5));
      else if (fault_kind_target(k) == FAULT_TARGET_SITE)
        snprintf(target, sizeof target, "%s",
                 gsl_rng_uniform_int(r, 2) ? "b" : "c:d");
      else
        snprintf(target, sizeof target, "%s", links[gsl_rng_uniform_int(r, 5)]);
      if (gsl_rng_uniform_int(r, 8) == 0) snprintf(dur, sizeof dur, "inf");
      else snprintf(dur, sizeof dur, "%lu", 1 + gsl_rng_uniform_int(r, 9));
      if (fault_kind_has_factor(k))
        snprintf(factor, sizeof factor, "%g", 0.25 * (1 + gsl_rng_uniform_int(r, 7)));
      len += (size_t)snprintf(text + len, cap - len, "%d,%s,%s,%s,%s\n", t,
                              fault_kind_name(k), target, dur, factor);
    }
    fault_trace *f = parse_ok(text);
    for (int64_t q = 0; q <= (t + 12) * 2; q++) {
      int64_t tq = q * 500000000LL;
      for (int d = 0; d < 5; d++) {
        int la = (int)((q + d) % 3), lb = d % 3;
        bool up;
        double speed, link;
        naive(f, d, la, lb, tq, &up, &speed, &link);
        cr_assert_eq(fault_device_up(f, d, tq), up, "seed %u d %d t %lld", seed,
                     d, (long long)tq);
        cr_assert_eq(fault_device_speed(f, d, tq), speed, "seed %u", seed);
        cr_assert_eq(fault_link_factor(f, la, lb, tq), link, "seed %u", seed);
        int64_t again = fault_device_up_again(f, d, tq);
        cr_assert(again >= tq);
        if (again != FAULT_FOREVER) cr_assert(fault_device_up(f, d, again));
        for (int64_t u = tq; u < again && u < tq + 20000000000LL; u += 500000000LL)
          cr_assert_not(fault_device_up(f, d, u), "down until it is up again");
      }
      /* next change: nothing changes strictly before it, something at it */
      int64_t nx = fault_next_change(f, tq);
      cr_assert(nx > tq);
      if (nx != FAULT_FOREVER) {
        int changed = 0;
        for (int d = 0; d < 5; d++)
          for (int la = 0; la < 3; la++)
            for (int lb = 0; lb < 3; lb++) {
              bool u0, u1, u2;
              double s0, s1, s2, l0, l1, l2;
              naive(f, d, la, lb, tq, &u0, &s0, &l0);
              naive(f, d, la, lb, nx - 1, &u1, &s1, &l1);
              naive(f, d, la, lb, nx, &u2, &s2, &l2);
              cr_assert(u0 == u1 && s0 == s1 && l0 == l1,
                        "seed %u: a change before the next change", seed);
              changed += !(u1 == u2 && s1 == s2 && l1 == l2);
            }
        cr_assert_gt(changed, 0, "seed %u: nothing changes at %lld", seed,
                     (long long)nx);
      }
    }
    fault_free(f);
    free(text);
  }
  gsl_rng_free(r);
}

Test(fault, rows_written_read_back) {
  fault_event evs[] = {
      {.t_ns = 0, .dur_ns = 1, .kind = FAULT_DEVICE_DOWN, .a = 4, .factor = 1},
      {.t_ns = 1500000000, .dur_ns = FAULT_FOREVER, .kind = FAULT_SITE_DOWN,
       .a = 2, .factor = 1},
      {.t_ns = 123456789012LL, .dur_ns = 60000000000LL,
       .kind = FAULT_LINK_SLOW, .a = 2, .b = 1, .factor = 0.1},
      {.t_ns = 123456789012LL, .dur_ns = 7, .kind = FAULT_DEVICE_SLOW, .a = 0,
       .factor = 1.0 / 3}};
  char *buf = NULL;
  size_t size = 0;
  FILE *m = open_memstream(&buf, &size);
  fprintf(m, HDR);
  for (size_t i = 0; i < 4; i++)
    cr_assert_eq(fault_write_row(m, "mem", sc, &evs[i], NULL), ERR_OK);
  fclose(m);
  fault_trace *f = parse_ok(buf);
  cr_assert_eq(fault_count(f), 4);
  for (size_t i = 0; i < 4; i++) {
    const fault_event *e = fault_event_at(f, i);
    cr_expect(e->t_ns == evs[i].t_ns && e->dur_ns == evs[i].dur_ns &&
              e->kind == evs[i].kind && e->a == evs[i].a &&
              e->factor == evs[i].factor, "row %zu: %s", i, buf);
    if (fault_kind_target(e->kind) == FAULT_TARGET_LINK)
      cr_expect_eq(e->b, evs[i].b);
  }
  cr_expect(strstr(buf, "1.5,site_down,c:d,inf,\n") != NULL, "%s", buf);
  cr_expect(strstr(buf, "123.456789012,link_slow,c:d:b,60,0.1") != NULL);
  fault_free(f);
  free(buf);
  char s[32];
  fault_format_s(s, sizeof s, 3000000001LL);
  cr_expect_str_eq(s, "3.000000001");
  fault_format_s(s, sizeof s, 0);
  cr_expect_str_eq(s, "0");
}

static void expect_bad(const char *text, int code, const char *msg) {
  err e;
  err_clear(&e);
  fault_trace *f = fault_parse(text, strlen(text), "bad.csv", sc, &e);
  cr_expect_null(f, "accepted: %s", text);
  fault_free(f);
  cr_expect_eq(e.code, code, "code %d for %s (%s)", e.code, text, e.msg);
  cr_expect_str_eq(e.msg, msg);
}

Test(fault, bad_input_names_its_line) {
  expect_bad("", ERR_PARSE, "bad.csv:1: empty file (expected the header "
             "'" FAULT_HEADER "')");
  expect_bad("# only\n", ERR_PARSE, "bad.csv:1: no header line '" FAULT_HEADER
             "' (only comments)");
  expect_bad("t_s,event,target,duration_s\n", ERR_PARSE, "bad.csv:1: expected "
             "the header '" FAULT_HEADER "', found 't_s,event,target,duration_s'");
  expect_bad(HDR "0,device_down,1,1\n", ERR_PARSE, "bad.csv:2: expected 5 "
             "columns (" FAULT_HEADER "), found 4");
  expect_bad(HDR "0,device_crash,1,1,\n", ERR_UNKNOWN, "bad.csv:2: event: "
             "unknown 'device_crash' (device_down, site_down, link_down, "
             "link_slow or device_slow)");
  expect_bad(HDR "0,device_down,5,1,\n", ERR_UNKNOWN, "bad.csv:2: target: "
             "device 5 is not in scenario three, whose devices are 0..4");
  expect_bad(HDR "0,device_down,x1,1,\n", ERR_PARSE, "bad.csv:2: target: 'x1' "
             "is not a device index (an integer 0..4)");
  expect_bad(HDR "0,device_slow,-1,1,0.5\n", ERR_PARSE, "bad.csv:2: target: "
             "'-1' is not a device index (an integer 0..4)");
  expect_bad(HDR "0,site_down,z,1,\n", ERR_UNKNOWN, "bad.csv:2: target: "
             "unknown site 'z' (scenario three has 3 sites, the first a)");
  expect_bad(HDR "0,link_down,a,1,\n", ERR_PARSE, "bad.csv:2: target: 'a' is "
             "not two site names 'A:B'");
  expect_bad(HDR "0,link_down,a:q,1,\n", ERR_UNKNOWN, "bad.csv:2: target: "
             "unknown site 'q' (scenario three has 3 sites, the first a)");
  expect_bad(HDR "-1,device_down,1,1,\n", ERR_RANGE, "bad.csv:2: t_s: '-1' "
             "is negative");
  expect_bad(HDR "nan,device_down,1,1,\n", ERR_RANGE, "bad.csv:2: t_s: 'nan' "
             "is not a finite number");
  expect_bad(HDR "soon,device_down,1,1,\n", ERR_PARSE, "bad.csv:2: t_s: "
             "'soon' is not a number");
  expect_bad(HDR "5,device_down,1,1,\n# x\n4,device_down,0,1,\n", ERR_PARSE,
             "bad.csv:4: t_s: 4 is before the previous row's 5 (rows must be "
             "sorted by time)");
  expect_bad(HDR "0,device_down,1,long,\n", ERR_PARSE, "bad.csv:2: "
             "duration_s: 'long' is not a number or inf");
  expect_bad(HDR "0,device_down,1,NaN,\n", ERR_PARSE, "bad.csv:2: "
             "duration_s: 'NaN' is not a number or inf");
  expect_bad(HDR "0,device_down,1,,\n", ERR_PARSE, "bad.csv:2: "
             "duration_s: '' is not a number or inf");
  expect_bad(HDR "0,device_down,1,-3,\n", ERR_RANGE, "bad.csv:2: "
             "duration_s: -3 is not > 0");
  expect_bad(HDR "0,device_down,1,0,\n", ERR_RANGE, "bad.csv:2: "
             "duration_s: 0 is not > 0");
  /* issue 24, 1: a device back just before INT64_MAX ns hung restart; an
   * end past the simulated span is refused, at any magnitude */
  expect_bad(HDR "0,device_down,0,9223372035,\n", ERR_RANGE, "bad.csv:2: "
             "duration_s: 9223372035 ends the fault past " SIMTIME_LIMIT_TEXT
             " (write inf for a fault that never ends)");
  expect_bad(HDR "1,device_down,0,999999999.5,\n", ERR_RANGE, "bad.csv:2: "
             "duration_s: 999999999.5 ends the fault past " SIMTIME_LIMIT_TEXT
             " (write inf for a fault that never ends)");
  expect_bad(HDR "0,device_down,0,1e30,\n", ERR_RANGE, "bad.csv:2: "
             "duration_s: 1e30 ends the fault past " SIMTIME_LIMIT_TEXT
             " (write inf for a fault that never ends)");
  expect_bad(HDR "0,link_slow,a:b,1,nan\n", ERR_RANGE, "bad.csv:2: factor: "
             "'nan' is not a finite number");
  expect_bad(HDR "0,link_slow,a:b,1,0\n", ERR_RANGE, "bad.csv:2: factor: 0 is "
             "not > 0");
  expect_bad(HDR "0,device_slow,0,1,-0.5\n", ERR_RANGE, "bad.csv:2: factor: "
             "-0.5 is not > 0");
  expect_bad(HDR "0,device_slow,0,1,\n", ERR_MISSING, "bad.csv:2: factor: "
             "empty, but device_slow needs its compute-speed multiplier");
  expect_bad(HDR "0,link_slow,a:b,1,half\n", ERR_PARSE, "bad.csv:2: factor: "
             "'half' is not a number");
  expect_bad(HDR "0,device_down,1,1,0.5\n", ERR_PARSE, "bad.csv:2: factor: "
             "'0.5' given for device_down, which takes none (leave it empty)");
  expect_bad("# ok\n" HDR "0,device_down,1,1,\n1,device_down,\xff,1,\n",
             ERR_PARSE, "bad.csv:4: invalid UTF-8 (byte 0xff at column 15)");
  err e;
  err_clear(&e);
  cr_expect_null(fault_load("/nonexistent/f.csv", sc, &e));
  cr_expect_eq(e.code, ERR_IO);
  cr_expect_str_eq(e.msg, "/nonexistent/f.csv: cannot read the fault trace: No "
                   "such file or directory");
}
