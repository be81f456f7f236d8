/* test_netimport: iperf3 tests made into links — the hand-written files of
 * tests/fixtures/iperf3/ imported against the links computed by hand
 * (one stream, -P 8, -R and its server's file, an appended log over an
 * hour); the sites by address (IPv4, IPv6 spellings, names, several
 * addresses per site); the snapshot rule and the values held between
 * snapshots; random sets of tests against a naive per-pair computation;
 * and every bad input with its message pinned. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_out.h"
#include "base/mem.h"
#include "traces/iperf3.h"
#include "traces/netimport.h"

#define FIX GEODES_FIXTURES "/iperf3/"
#define MSS 1448.0 /* the segment size of tests that report none */

static void near(double got, double want, const char *what) {
  cr_expect(fabs(got - want) <= 1e-12 * fabs(want) || (isnan(got) && isnan(want)),
            "%s: %.17g != %.17g", what, got, want);
}

static netimport_hosts *hosts(const char *const *specs) {
  netimport_hosts *h = netimport_hosts_new();
  err e = {0};
  for (; *specs; specs++)
    cr_assert_eq(netimport_hosts_add(h, *specs, &e), ERR_OK, "%s", e.msg);
  return h;
}

static const char *const VA_ZU[] = {"Virginia=10.0.0.5", "Virginia=3.80.1.10",
                                    "Zurich=34.65.1.2", "Zurich=10.172.0.7",
                                    NULL};

/* The tests of files, merged, placed by h, and their links under o. */
static netimport *import(const char *const *files, const netimport_hosts *h,
                         const netimport_opts *o, iperf3_runs *r) {
  err e = {0};
  for (; *files; files++)
    cr_assert_eq(iperf3_read(*files, r, &e), ERR_OK, "%s", e.msg);
  iperf3_runs_merge(r);
  int *ends = mem_alloc(2 * r->n * sizeof *ends);
  cr_assert_eq(netimport_assign(h, r->v, r->n, ends, ends + r->n, &e), ERR_OK,
               "%s", e.msg);
  netimport *m = netimport_links(h, r->v, ends, ends + r->n, r->n, o, &e);
  cr_assert_not_null(m, "%s", e.msg);
  free(ends);
  return m;
}

/* The four hand-written files: Virginia <-> Zurich, one and eight
 * streams, and a -R test's two ends. */
static const char *const files4[] = {
    FIX "va_zu_p1.json", FIX "va_zu_p8.json", FIX "zu_va_r_client.json",
    FIX "zu_va_r_server.json", NULL};

static netimport_opts links_opts(void) {
  return (netimport_opts){.group_s = INFINITY, .mss_bytes = MSS,
                          .intra = {NAN, NAN, NAN, NAN}};
}

static void expect_value(const netimport *m, size_t k, int a, int b,
                         netimport_value want) {
  const netimport_value *v = netimport_at(m, k, a, b);
  near(v->latency_ms, want.latency_ms, "latency_ms");
  near(v->bandwidth_gbps, want.bandwidth_gbps, "bandwidth_gbps");
  near(v->flow_gbps, want.flow_gbps, "flow_gbps");
  near(v->loss, want.loss, "loss");
}

Test(netimport, four_files_by_hand) {
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  iperf3_runs r = {0};
  netimport *m = import(files4, h, &o, &r);
  cr_assert_eq(r.n, 3, "the -R test's two ends are one test");
  cr_assert_eq(m->nsnaps, 1);
  /* the round trip of the pair's single-stream tests, both ways: 90 ms
   * (Virginia's client) and 94 ms (Zurich's server, sending for -R); the
   * -P 8 test's 95..102 ms are left out */
  double lat = (90 + 94) / 2.0 / 2;
  /* Virginia -> Zurich: -P 8's 4.8 Gbit/s; one stream 0.92; 120
   * retransmits of 1158400000 / 1448 = 800000 segments */
  expect_value(m, 0, 0, 1, (netimport_value){lat, 4.8, 0.92, 120 / 800000.0});
  /* Zurich -> Virginia: one stream only, 0.7 Gbit/s (a lower bound of the
   * capacity); 38 of 880384000 / 1448 = 608000 */
  expect_value(m, 0, 1, 0, (netimport_value){lat, 0.7, 0.7, 38 / 608000.0});
  const netimport_pair *ab = netimport_pair_of(m, 0, 1),
                       *ba = netimport_pair_of(m, 1, 0);
  cr_expect(ab->source == NETIMPORT_MEASURED && ab->single == 1 &&
            ab->multi == 1 && !ab->capacity_bound);
  cr_expect(ba->source == NETIMPORT_MEASURED && ba->single == 1 &&
            ba->multi == 0 && ba->capacity_bound);
  cr_expect(netimport_pair_of(m, 0, 0)->source == NETIMPORT_NONE);
  cr_expect(!netimport_written(m, 0, 0, 0) && netimport_written(m, 0, 0, 1));
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

/* The -P 8 test alone (Virginia -> Zurich), 0.05 ms and 100 Gbit/s inside
 * a site (o's intra value). */
static netimport *one_way(const netimport_hosts *h, netimport_opts *o,
                          iperf3_runs *r) {
  static const char *const files[] = {FIX "va_zu_p8.json", NULL};
  o->intra = (netimport_value){0.05, 100, NAN, NAN};
  return import(files, h, o, r);
}

Test(netimport, one_way_is_mirrored_and_a_site_with_itself_is_given) {
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  iperf3_runs r = {0};
  netimport *m = one_way(h, &o, &r);
  /* -P 8 alone: its mean round trip, no flow_gbps, no loss */
  double lat = (95 + 96 + 97 + 98 + 99 + 100 + 101 + 102) / 8.0 / 2;
  netimport_value want = {lat, 4.8, NAN, NAN};
  expect_value(m, 0, 0, 1, want);
  expect_value(m, 0, 1, 0, want);
  expect_value(m, 0, 0, 0, o.intra);
  expect_value(m, 0, 1, 1, o.intra);
  cr_expect(netimport_pair_of(m, 1, 0)->source == NETIMPORT_MIRRORED);
  cr_expect(netimport_pair_of(m, 1, 1)->source == NETIMPORT_INTRA);
  cr_expect(netimport_pair_of(m, 0, 1)->single == 0);
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

/* The notes of netimport_notes, appended to ctx (a char[4096]), one a
 * line. */
static void collect(void *ctx, const char *text) {
  char *all = ctx;
  size_t n = strlen(all);
  snprintf(all + n, 4096 - n, "%s\n", text);
}

/* What the tests could not measure, pair by pair: the -R file's two ends
 * miss a multi-stream test one way (Zurich -> Virginia); -P 8 alone misses
 * the single-stream test and is mirrored the other way. And a site with
 * no test of itself is the first pair untested. */
Test(netimport, notes_name_what_the_tests_could_not_measure) {
  static const char *const four[] = {
      FIX "va_zu_p1.json", FIX "va_zu_p8.json", FIX "zu_va_r_client.json",
      FIX "zu_va_r_server.json", NULL};
  static const char *const one[] = {FIX "va_zu_p8.json", NULL};
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  iperf3_runs r = {0};
  netimport *m = import(four, h, &o, &r);
  char all[4096] = "";
  netimport_notes(m, h, collect, all);
  cr_expect_str_eq(all, "Zurich -> Virginia: no multi-stream test (iperf3 -P "
                   "N): the capacity was not measured; bandwidth_gbps is one "
                   "stream's rate, a lower bound\n");
  int a = -1, b = -1;
  cr_expect(netimport_untested(m, &a, &b));
  cr_expect(a == 0 && b == 0, "%d %d", a, b);
  netimport_free(m);
  iperf3_runs_free(&r);
  r = (iperf3_runs){0};
  o.intra = (netimport_value){0.05, 100, NAN, NAN};
  m = import(one, h, &o, &r);
  all[0] = 0;
  netimport_notes(m, h, collect, all);
  cr_expect_str_eq(all, "Virginia -> Zurich: no single-stream test: "
                   "flow_gbps and loss are left out, latency_ms is from -P "
                   "tests (with the queueing they add)\nZurich -> Virginia: "
                   "no test this way: both ways take Virginia -> Zurich's "
                   "values (links: \"between\")\n");
  cr_expect(!netimport_untested(m, &a, &b), "the intra value gives a site "
            "with itself");
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

Test(netimport, an_hour_of_tests_in_snapshots) {
  static const char *const files[] = {FIX "va_zu_logfile.json", NULL};
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  o.group_s = 600;
  iperf3_runs r = {0};
  netimport *m = import(files, h, &o, &r);
  cr_assert_eq(m->nsnaps, 2);
  cr_expect(m->t0_s == 1714564800 && m->t_s[0] == 0 && m->t_s[1] == 3600);
  netimport_value first = {45, 0.92, 0.92, 120 / 800000.0},
                  second = {60, 0.5, 0.5, 400 / (724000000 / 1448.0)};
  expect_value(m, 0, 0, 1, first);
  expect_value(m, 1, 0, 1, second);
  expect_value(m, 1, 1, 0, second);
  cr_expect(netimport_written(m, 1, 1, 0), "the mirror follows");
  netimport_free(m);
  iperf3_runs_free(&r);
  /* within 3600 s of the first: one snapshot, the median of two rates */
  o.group_s = 3600;
  m = import(files, h, &o, &r);
  cr_assert_eq(m->nsnaps, 1);
  expect_value(m, 0, 0, 1, (netimport_value){(90 + 120) / 2.0 / 2,
                                             (0.92 + 0.5) / 2, (0.92 + 0.5) / 2,
                                             (120 + 400) / (800000 + 500000.0)});
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

/* A test of `streams` streams from site a to b at t with a rate, a round
 * trip (NAN: none), retransmits (NAN: none), for the random sets. */
static iperf3_run fake(int a, int b, int64_t t, int streams, double bps,
                       double rtt, double retr, double mss) {
  char host[2][32];
  snprintf(host[0], sizeof host[0], "10.0.0.%d", a + 1);
  snprintf(host[1], sizeof host[1], "10.0.0.%d", b + 1);
  return (iperf3_run){.file = mem_strdup("r.json"), .line = 1,
                      .local = mem_strdup(host[0]),
                      .remote = mem_strdup(host[1]), .cookie = mem_strdup(""),
                      .streams = streams, .time_s = t, .received_bps = bps,
                      .sent_bytes = bps * 10 / 8, .retransmits = retr,
                      .mss_bytes = mss, .rtt_ms = rtt};
}

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The naive value of a -> b over all of r's tests (one snapshot). */
static netimport_value naive(const iperf3_runs *r, int a, int b) {
  double rates[256], rtt1 = 0, rtt = 0, best = NAN, retr = 0, segs = 0;
  int n = 0, n1 = 0, nr = 0, counted = 0;
  for (size_t i = 0; i < r->n; i++) {
    const iperf3_run *x = &r->v[i];
    int s = x->local[7] - '1', d = x->remote[7] - '1';
    bool pair = (s == a && d == b) || (s == b && d == a);
    if (pair && !isnan(x->rtt_ms)) {
      rtt += x->rtt_ms, nr++;
      if (x->streams == 1) rtt1 += x->rtt_ms, n1++;
    }
    if (s != a || d != b) continue;
    if (x->streams > 1) {
      best = isnan(best) || x->received_bps > best ? x->received_bps : best;
      continue;
    }
    rates[n++] = x->received_bps;
    if (!isnan(x->retransmits)) {
      retr += x->retransmits, counted++;
      segs += x->sent_bytes / (isnan(x->mss_bytes) ? MSS : x->mss_bytes);
    }
  }
  qsort(rates, (size_t)n, sizeof *rates, by_double);
  double flow = n ? (rates[(n - 1) / 2] + rates[n / 2]) / 2 / 1e9 : NAN;
  return (netimport_value){
      .latency_ms = (n1 ? rtt1 / n1 : rtt / nr) / 2,
      .bandwidth_gbps = isnan(best) ? flow : best / 1e9,
      .flow_gbps = flow, .loss = counted ? retr / segs : NAN};
}

Test(netimport, random_tests_against_a_naive_reference) {
  static const char *const three[] = {"a=10.0.0.1", "b=10.0.0.2", "c=10.0.0.3",
                                      NULL};
  netimport_hosts *h = hosts(three);
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  int pairs = 0;
  for (int trial = 0; trial < 200; trial++) {
    gsl_rng_set(g, (unsigned long)trial + 1);
    iperf3_runs r = {0};
    int n = 1 + (int)gsl_rng_uniform_int(g, 30);
    for (int i = 0; i < n; i++) {
      int a = (int)gsl_rng_uniform_int(g, 3), b = (int)gsl_rng_uniform_int(g, 3);
      mem_grow((void **)&r.v, &r.cap, r.n + 1, sizeof *r.v);
      r.v[r.n++] = fake(
          a, b, (int64_t)gsl_rng_uniform_int(g, 100000),
          gsl_rng_uniform(g) < 0.5 ? 1 : 2 + (int)gsl_rng_uniform_int(g, 63),
          1e8 * (1 + (double)gsl_rng_uniform_int(g, 50)),
          gsl_rng_uniform(g) < 0.8 ? 0.5 * (1 + gsl_rng_uniform_int(g, 400)) : NAN,
          gsl_rng_uniform(g) < 0.7 ? (double)gsl_rng_uniform_int(g, 1000) : NAN,
          gsl_rng_uniform(g) < 0.5 ? 1448 : NAN);
    }
    int *ends = mem_alloc(2 * r.n * sizeof *ends);
    err e = {0};
    cr_assert_eq(netimport_assign(h, r.v, r.n, ends, ends + r.n, &e), ERR_OK);
    netimport_opts o = links_opts();
    netimport *m = netimport_links(h, r.v, ends, ends + r.n, r.n, &o, &e);
    for (int a = 0; a < 3 && m; a++)
      for (int b = 0; b < 3; b++) {
        const netimport_pair *p = netimport_pair_of(m, a, b);
        if (p->source == NETIMPORT_NONE) continue;
        bool mirror = p->source == NETIMPORT_MIRRORED;
        netimport_value want = naive(&r, mirror ? b : a, mirror ? a : b);
        expect_value(m, 0, a, b, want);
        pairs++;
      }
    if (!m) /* only when a measured pair has no round trip at all */
      cr_expect_eq(e.code, ERR_MISSING, "%s", e.msg);
    netimport_free(m);
    free(ends);
    iperf3_runs_free(&r);
  }
  cr_expect_gt(pairs, 1000, "the sets are compared, not refused");
  gsl_rng_free(g);
  netimport_hosts_free(h);
}

Test(netimport, values_hold_between_snapshots) {
  static const char *const two[] = {"a=10.0.0.1", "b=10.0.0.2", NULL};
  netimport_hosts *h = hosts(two);
  iperf3_runs r = {0};
  mem_grow((void **)&r.v, &r.cap, 4, sizeof *r.v);
  /* t 0: a -> b, -P 4 only; t 1000: b -> a one stream; t 2000: a -> b
   * one stream without a round trip (a -R client's view) */
  r.v[r.n++] = fake(0, 1, 0, 4, 4e9, 50, 10, NAN);
  r.v[r.n++] = fake(1, 0, 1000, 1, 1e9, 60, 5, NAN);
  r.v[r.n++] = fake(0, 1, 2000, 1, 2e9, NAN, NAN, NAN);
  int ends[6];
  err e = {0};
  cr_assert_eq(netimport_assign(h, r.v, r.n, ends, ends + 3, &e), ERR_OK);
  netimport_opts o = links_opts();
  o.group_s = 10;
  netimport *m = netimport_links(h, r.v, ends, ends + 3, 3, &o, &e);
  cr_assert_not_null(m, "%s", e.msg);
  cr_assert_eq(m->nsnaps, 3);
  double segs = 1e9 * 10 / 8 / MSS;
  /* a -> b: the capacity from t 0 on; flow first measured at 2000, taken
   * back to t 0; the round trip 50 ms (-P 4) until b -> a's single stream
   * gives 60 ms at 1000, held at 2000 */
  expect_value(m, 0, 0, 1, (netimport_value){25, 4, 2, NAN});
  expect_value(m, 1, 0, 1, (netimport_value){30, 4, 2, NAN});
  expect_value(m, 2, 0, 1, (netimport_value){30, 4, 2, NAN});
  /* b -> a: measured at 1000 only: its values everywhere, the capacity a
   * lower bound (its one stream) */
  expect_value(m, 0, 1, 0, (netimport_value){25, 1, 1, 5 / segs});
  expect_value(m, 1, 1, 0, (netimport_value){30, 1, 1, 5 / segs});
  cr_expect(netimport_pair_of(m, 1, 0)->capacity_bound);
  cr_expect(!netimport_pair_of(m, 0, 1)->capacity_bound);
  cr_expect(netimport_pair_of(m, 0, 1)->loss_unknown);
  for (size_t k = 0; k < 3; k++)
    cr_expect(netimport_written(m, k, 0, 1) && netimport_written(m, k, 1, 0),
              "every snapshot measures the pair one way or the other");
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

Test(netimport, sites_by_address) {
  static const char *const specs[] = {
      "Oregon=10.0.0.1", "Tokyo=2001:db8::7", "Oregon=oregon.example.org",
      "Tokyo=10.0.0.2", "Oregon=10.0.0.1", NULL};
  netimport_hosts *h = hosts(specs);
  cr_expect_eq(netimport_hosts_nsites(h), 2);
  cr_expect_str_eq(netimport_hosts_site(h, 0), "Oregon");
  cr_expect_str_eq(netimport_hosts_site(h, 1), "Tokyo");
  cr_expect_eq(netimport_hosts_find(h, "::ffff:10.0.0.1"), 0);
  cr_expect_eq(netimport_hosts_find(h, "2001:0db8:0:0::0007"), 1);
  cr_expect_eq(netimport_hosts_find(h, "Oregon.Example.ORG"), 0);
  cr_expect_eq(netimport_hosts_find(h, "10.0.0.3"), -1);
  cr_expect_eq(netimport_hosts_find(h, "10.0.0.10"), -1);
  struct { const char *spec; int code; const char *msg; } bad[] = {
      {"Oregon", ERR_PARSE, "'Oregon': not SITE=ADDRESS"},
      {"=10.0.0.9", ERR_PARSE, "'=10.0.0.9': an empty site name"},
      {"*=10.0.0.9", ERR_PARSE,
       "'*=10.0.0.9': '*' stands for every site in a trace"},
      {"a,b=10.0.0.9", ERR_PARSE, "'a,b=10.0.0.9': a comma, a quote or a "
       "control character in the site name"},
      {" a=10.0.0.9", ERR_PARSE,
       "' a=10.0.0.9': white space at an end of the site name"},
      {"a=", ERR_PARSE, "'a=': an empty address"},
      {"a=10.0.0.9 x", ERR_PARSE, "'a=10.0.0.9 x': white space, a control "
       "character or '=' in the address"},
      {"Tokyo=::ffff:10.0.0.1", ERR_DUPLICATE, "'Tokyo=::ffff:10.0.0.1': "
       "::ffff:10.0.0.1 is site Oregon's already (one address, one site)"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err e = {0};
    cr_expect_eq(netimport_hosts_add(h, bad[i].spec, &e), bad[i].code);
    cr_expect_str_eq(e.msg, bad[i].msg);
  }
  cr_expect_eq(netimport_hosts_nsites(h), 2, "no site added on error");
  netimport_hosts_free(h);
}

Test(netimport, bad_imports_name_the_test) {
  static const char *const only_zurich[] = {"Zurich=34.65.1.2", NULL},
                           *const clash[] = {"Virginia=10.0.0.5",
                                             "Zurich=34.65.1.2",
                                             "Tokyo=zurich.example.org", NULL};
  iperf3_runs r = {0};
  err e = {0};
  cr_assert_eq(iperf3_read(FIX "va_zu_p1.json", &r, &e), ERR_OK);
  int ends[2];
  netimport_hosts *h = hosts(only_zurich);
  cr_expect_eq(netimport_assign(h, r.v, 1, ends, ends + 1, &e), ERR_UNKNOWN);
  cr_expect_str_eq(e.msg, FIX "va_zu_p1.json:1: host 10.0.0.5 "
                   "(start.connected[0].local_host) maps to no site: give "
                   "--host SITE=10.0.0.5");
  netimport_hosts_free(h);
  free(r.v[0].peer_name);
  r.v[0].peer_name = mem_strdup("zurich.example.org");
  h = hosts(clash);
  err_clear(&e);
  cr_expect_eq(netimport_assign(h, r.v, 1, ends, ends + 1, &e), ERR_CONFIG);
  cr_expect_str_eq(e.msg, FIX "va_zu_p1.json:1: start.connected[0]."
                   "remote_host 34.65.1.2 is site Zurich but "
                   "start.connecting_to.host zurich.example.org is site Tokyo");
  netimport_hosts_free(h);
  iperf3_runs_free(&r);
  /* a -R client's file alone: no round trip between the two sites */
  cr_assert_eq(iperf3_read(FIX "zu_va_r_client.json", &r, &e), ERR_OK);
  h = hosts(VA_ZU);
  cr_assert_eq(netimport_assign(h, r.v, 1, ends, ends + 1, &e), ERR_OK);
  netimport_opts o = links_opts();
  err_clear(&e);
  cr_expect_null(netimport_links(h, r.v, ends, ends + 1, 1, &o, &e));
  cr_expect_eq(e.code, ERR_MISSING);
  cr_expect_str_eq(e.msg, FIX "zu_va_r_client.json:1: Zurich -> Virginia: "
                   "no round trip in any test between the two sites: iperf3 "
                   "reports mean_rtt from the sending host (a -R client's "
                   "file has none: give the server's file too, or run the "
                   "client with --get-server-output)");
  /* retransmits beyond the segments sent */
  r.v[0].rtt_ms = 100;
  r.v[0].retransmits = 608000;
  err_clear(&e);
  cr_expect_null(netimport_links(h, r.v, ends, ends + 1, 1, &o, &e));
  cr_expect_str_eq(e.msg, FIX "zu_va_r_client.json:1: Zurich -> Virginia: "
                   "loss 1 (retransmits over the segments sent) is not "
                   "below 1");
  netimport_hosts_free(h);
  iperf3_runs_free(&r);
}

/* The links file: the pair tested one way only as "between", a site with
 * itself from the intra value as from = to, values as netimport_at says
 * (no flow_gbps, no loss where no single-stream test gave them). */
Test(netimport, links_file_of_a_one_way_test) {
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  iperf3_runs r = {0};
  netimport *m = one_way(h, &o, &r);
  json_t *doc = netimport_links_json(m, h);
  json_t *l = json_object_get(doc, "links");
  cr_assert_eq(json_array_size(l), 3); /* Virginia, the pair, Zurich */
  json_t *self = json_array_get(l, 0), *pair = json_array_get(l, 1);
  cr_expect_str_eq(json_string_value(json_object_get(self, "from")),
                   "Virginia");
  cr_expect_str_eq(json_string_value(json_object_get(self, "to")),
                   "Virginia");
  cr_expect_eq(json_real_value(json_object_get(self, "latency_ms")), 0.05);
  cr_expect_eq(json_real_value(json_object_get(self, "bandwidth_gbps")), 100);
  json_t *between = json_object_get(pair, "between");
  cr_expect_str_eq(json_string_value(json_array_get(between, 0)), "Virginia");
  cr_expect_str_eq(json_string_value(json_array_get(between, 1)), "Zurich");
  cr_expect_eq(json_real_value(json_object_get(pair, "latency_ms")),
               netimport_at(m, 0, 0, 1)->latency_ms);
  cr_expect_eq(json_real_value(json_object_get(pair, "bandwidth_gbps")), 4.8);
  cr_expect(!json_object_get(pair, "flow_gbps") &&
            !json_object_get(pair, "loss") && !json_object_get(pair, "from"));
  cr_expect_str_eq(json_string_value(json_object_get(json_array_get(l, 2),
                                                     "to")), "Zurich");
  json_decref(doc);
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}

/* The trace CSV: the provenance given, the header, and a row per pair
 * written, its reals in json_out_real's digits, unknown ones empty. */
Test(netimport, trace_csv_rows_as_the_values) {
  netimport_hosts *h = hosts(VA_ZU);
  netimport_opts o = links_opts();
  iperf3_runs r = {0};
  netimport *m = import(files4, h, &o, &r);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  netimport_trace_write(f, m, h, "SRC", "CMD", 600);
  fclose(f);
  cr_expect_eq(strncmp(text, "# source: SRC\n# generated_by: CMD\n# t0: ", 40),
               0, "%s", text);
  cr_expect_not_null(strstr(text, "# group_s: 600 (a snapshot"));
  const char *rows = strstr(text, "t_s,src,dst,latency_ms,bandwidth_gbps,"
                                  "flow_gbps,loss\n");
  cr_assert_not_null(rows);
  char want[1024] = "t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss\n";
  const char *site[] = {"Virginia", "Zurich"};
  for (int x = 0; x < 2; x++) /* the naive rows: every pair written */
    for (int y = 0; y < 2; y++) {
      if (!netimport_written(m, 0, x, y)) continue;
      const netimport_value *v = netimport_at(m, 0, x, y);
      double vals[] = {v->latency_ms, v->bandwidth_gbps, v->flow_gbps,
                       v->loss};
      snprintf(want + strlen(want), sizeof want - strlen(want), "0,%s,%s",
               site[x], site[y]);
      for (int k = 0; k < 4; k++) {
        char b[40] = "";
        if (!isnan(vals[k])) json_out_real(vals[k], b, sizeof b);
        snprintf(want + strlen(want), sizeof want - strlen(want), ",%s", b);
      }
      strcat(want, "\n");
    }
  cr_expect_str_eq(rows, want);
  free(text);
  netimport_free(m);
  iperf3_runs_free(&r);
  netimport_hosts_free(h);
}
