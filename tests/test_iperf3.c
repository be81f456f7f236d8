/* test_iperf3: the reader of iperf3's -J output — the hand-written files
 * of tests/fixtures/iperf3/ (written from iperf3's schema, src/iperf_api.c)
 * read field by field against the numbers they hold; a file of tests
 * appended one after another; the round trip's sources (the sender's
 * streams, --get-server-output, macOS's milliseconds); the two ends of one
 * test counted once; and every kind of bad input refused with its
 * "FILE:LINE: message", pinned byte for byte, leaving the set as it was. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "tests/support.h"
#include "traces/iperf3.h"

#define FIX GEODES_FIXTURES "/iperf3/"

/* A client's one-stream test in iperf3's shape, one member per line: the
 * cases below edit it. */
static const char BASE[] =
    "{\"start\": {\"connected\": [{\"socket\": 5, \"local_host\": "
    "\"10.0.0.5\", \"local_port\": 41000, \"remote_host\": \"34.65.1.2\", "
    "\"remote_port\": 5201}],\n"
    "\"system_info\": \"Linux va 6.8.0 #13 SMP x86_64\",\n"
    "\"timestamp\": {\"time\": \"Wed, 01 May 2024 12:00:00 UTC\", "
    "\"timesecs\": 1714564800},\n"
    "\"connecting_to\": {\"host\": \"zurich.example.org\", \"port\": 5201},\n"
    "\"cookie\": \"c1\", \"tcp_mss_default\": 1448,\n"
    "\"test_start\": {\"protocol\": \"TCP\", \"num_streams\": 1, "
    "\"reverse\": 0, \"bidir\": 0}},\n"
    "\"intervals\": [],\n"
    "\"end\": {\"streams\": [{\"sender\": {\"bytes\": 1158400000, "
    "\"retransmits\": 120, \"mean_rtt\": 90000, \"sender\": true}}],\n"
    "\"sum_sent\": {\"bytes\": 1158400000, \"bits_per_second\": 926720000, "
    "\"retransmits\": 120},\n"
    "\"sum_received\": {\"bytes\": 1150000000, \"bits_per_second\": "
    "920000000}}}\n";

/* BASE edited (support_edit). */
static char *edit(const char *from, const char *to) {
  return support_edit(BASE, from, to);
}

static void parse_ok(const char *text, iperf3_runs *r) {
  err e = {0};
  cr_assert_eq(iperf3_parse(text, strlen(text), "t.json", r, &e), ERR_OK,
               "%s", e.msg);
}

static void read_ok(const char *path, iperf3_runs *r) {
  err e = {0};
  cr_assert_eq(iperf3_read(path, r, &e), ERR_OK, "%s", e.msg);
}

/* text is refused with exactly msg (code), and r keeps its one test. */
static void refused(const char *text, int code, const char *msg) {
  iperf3_runs r = {0};
  parse_ok(BASE, &r);
  err e = {0};
  cr_expect_eq(iperf3_parse(text, strlen(text), "t.json", &r, &e), code,
               "%s", e.msg);
  cr_expect_str_eq(e.msg, msg);
  cr_expect_eq(r.n, 1, "nothing appended on error");
  iperf3_runs_free(&r);
}

static void near(double got, double want) {
  cr_expect(fabs(got - want) <= 1e-12 * fabs(want), "%.17g != %.17g", got,
            want);
}

Test(iperf3, one_stream_field_by_field) {
  iperf3_runs r = {0};
  read_ok(FIX "va_zu_p1.json", &r);
  cr_assert_eq(r.n, 1);
  const iperf3_run *x = &r.v[0];
  cr_expect_str_eq(x->file, FIX "va_zu_p1.json");
  cr_expect_eq(x->line, 1);
  cr_expect_str_eq(x->local, "10.0.0.5");
  cr_expect_str_eq(x->remote, "34.65.1.2");
  cr_expect_str_eq(x->peer_name, "34.65.1.2");
  cr_expect_str_eq(x->cookie, "va0zu0p1cookie0000000000000000000001");
  cr_expect(!x->server && !x->reverse && iperf3_local_sends(x));
  cr_expect_eq(x->streams, 1);
  cr_expect_eq(x->time_s, 1714564800);
  cr_expect_eq(x->received_bps, 920000000.0);
  cr_expect_eq(x->sent_bytes, 1158400000.0);
  cr_expect_eq(x->retransmits, 120.0);
  cr_expect_eq(x->mss_bytes, 1448.0);
  near(x->rtt_ms, 90);
  iperf3_runs_free(&r);
}

Test(iperf3, parallel_streams_average_their_round_trips) {
  iperf3_runs r = {0};
  read_ok(FIX "va_zu_p8.json", &r);
  cr_assert_eq(r.n, 1);
  cr_expect_eq(r.v[0].streams, 8);
  cr_expect_eq(r.v[0].received_bps, 4.8e9);
  cr_expect_eq(r.v[0].retransmits, 9000.0);
  /* 95, 96, ..., 102 ms: their mean */
  cr_expect_eq(r.v[0].rtt_ms, (95 + 96 + 97 + 98 + 99 + 100 + 101 + 102) / 8.0,
               "98.5 exactly, no digits added");
  iperf3_runs_free(&r);
}

Test(iperf3, reverse_client_has_no_round_trip_its_server_has) {
  iperf3_runs r = {0};
  read_ok(FIX "zu_va_r_client.json", &r);
  read_ok(FIX "zu_va_r_server.json", &r);
  cr_assert_eq(r.n, 2);
  const iperf3_run *c = &r.v[0], *s = &r.v[1];
  cr_expect(!c->server && c->reverse && !iperf3_local_sends(c));
  cr_expect(isnan(c->rtt_ms), "the receiving client measures no round trip");
  cr_expect_eq(c->retransmits, 38.0, "the server's, as the client reports");
  cr_expect(s->server && s->reverse && iperf3_local_sends(s));
  cr_expect_null(s->peer_name);
  cr_expect_str_eq(s->local, "10.172.0.7");
  cr_expect_str_eq(s->remote, "3.80.1.10");
  near(s->rtt_ms, 94);
  iperf3_runs_merge(&r);
  cr_assert_eq(r.n, 1, "one test, two ends");
  cr_expect(!r.v[0].server, "the first read is kept");
  near(r.v[0].rtt_ms, 94);
  read_ok(FIX "va_zu_p1.json", &r);
  read_ok(FIX "va_zu_p1.json", &r);
  iperf3_runs_merge(&r);
  cr_expect_eq(r.n, 2, "a file given twice counts once");
  iperf3_runs_free(&r);
}

Test(iperf3, appended_tests_and_their_lines) {
  iperf3_runs r = {0};
  read_ok(FIX "va_zu_logfile.json", &r);
  cr_assert_eq(r.n, 2);
  cr_expect_eq(r.v[0].line, 1);
  cr_expect_eq(r.v[1].line, 135, "the line of the second test's '{'");
  cr_expect_eq(r.v[1].time_s - r.v[0].time_s, 3600);
  near(r.v[1].rtt_ms, 120);
  char *two = mem_alloc(2 * sizeof BASE + 8);
  snprintf(two, 2 * sizeof BASE + 8, "\n%s  \n%s", BASE, BASE);
  iperf3_runs_free(&r);
  parse_ok(two, &r);
  cr_expect(r.n == 2 && r.v[0].line == 2 && r.v[1].line == 13);
  iperf3_runs_free(&r);
  /* the second test's error is cited at its line in the whole file */
  char *bad = edit("\"protocol\": \"TCP\"", "\"protocol\": \"TCP\" \"x\"");
  snprintf(two, 2 * sizeof BASE + 8, "%s%s", BASE, bad);
  refused(two, ERR_PARSE,
          "t.json:16: not iperf3's JSON output (iperf3 -J): '}' expected "
          "near '\"x\"'");
  free(bad);
  free(two);
}

Test(iperf3, round_trip_sources) {
  iperf3_runs r = {0};
  /* macOS: tcpi_srtt in milliseconds */
  char *mac = edit("Linux va 6.8.0 #13 SMP x86_64", "Darwin mac 23.4.0");
  char *ms = edit("\"mean_rtt\": 90000", "\"mean_rtt\": 0");
  parse_ok(mac, &r);
  parse_ok(ms, &r);
  free(mac);
  free(ms);
  cr_assert_eq(r.n, 2);
  near(r.v[0].rtt_ms, 90000);
  cr_expect(isnan(r.v[1].rtt_ms), "mean_rtt 0: no sample");
  iperf3_runs_free(&r);
  /* a -R client with --get-server-output: the server's sender streams */
  char *srv = edit("\"intervals\": [],",
                   "\"server_output_json\": {\"start\": {\"system_info\": "
                   "\"Linux zu\"}, \"end\": {\"streams\": [{\"sender\": "
                   "{\"mean_rtt\": 94000}}]}},\n\"intervals\": [],");
  char *rev = support_edit(srv, "\"mean_rtt\": 90000", "\"mean_rtt\": 0");
  parse_ok(rev, &r);
  cr_assert_eq(r.n, 1);
  near(r.v[0].rtt_ms, 94);
  free(srv);
  free(rev);
  iperf3_runs_free(&r);
}

Test(iperf3, segment_size_and_retransmits) {
  iperf3_runs r = {0};
  char *mss = edit("\"tcp_mss_default\": 1448", "\"tcp_mss\": 8949, "
                   "\"tcp_mss_default\": 1448");
  char *none = edit("\"tcp_mss_default\": 1448", "\"tcp_mss_default\": 0");
  char *neg = edit("\"retransmits\": 120}", "\"retransmits\": -1}");
  char *gone = edit("926720000, \"retransmits\": 120}", "926720000}");
  parse_ok(mss, &r);
  parse_ok(none, &r);
  parse_ok(neg, &r);
  parse_ok(BASE, &r);
  parse_ok(gone, &r);
  cr_assert_eq(r.n, 5);
  cr_expect_eq(r.v[0].mss_bytes, 8949.0, "-M's MSS first");
  cr_expect(isnan(r.v[1].mss_bytes));
  cr_expect(isnan(r.v[2].retransmits), "-1: not counted");
  cr_expect_eq(r.v[3].retransmits, 120.0);
  cr_expect(isnan(r.v[4].retransmits), "absent: not counted");
  free(mss);
  free(none);
  free(neg);
  free(gone);
  iperf3_runs_free(&r);
}

Test(iperf3, bad_files_are_refused_with_their_line) {
  struct { const char *path; int code; const char *msg; } cases[] = {
      {FIX "error.json", ERR_CONFIG,
       FIX "error.json:12: error: iperf3 reported \"unable to connect to "
           "server - server may have stopped running or use a different "
           "port, firewall issue, etc.: Connection refused\": the test "
           "measured nothing (remove it from the file)"},
      {FIX "udp.json", ERR_CONFIG,
       FIX "udp.json:30: start.test_start.protocol: UDP: net import reads "
           "TCP tests (a UDP test measures no TCP window, round trip or "
           "loss: run iperf3 without -u or --sctp)"},
      {FIX "not_iperf3.json", ERR_PARSE,
       FIX "not_iperf3.json:1: not iperf3's JSON output (iperf3 -J writes "
           "an object with \"start\", \"intervals\" and \"end\")"},
      {FIX "text_output.txt", ERR_PARSE,
       FIX "text_output.txt:1: not iperf3's JSON output (iperf3 -J): '[' or "
           "'{' expected near 'Connecting'"},
      {FIX "absent.json", ERR_IO,
       FIX "absent.json: cannot read the iperf3 output: No such file or "
           "directory"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    iperf3_runs r = {0};
    err e = {0};
    cr_expect_eq(iperf3_read(cases[i].path, &r, &e), cases[i].code, "%s",
                 e.msg);
    cr_expect_str_eq(e.msg, cases[i].msg);
    cr_expect_eq(r.n, 0);
    iperf3_runs_free(&r);
  }
}

Test(iperf3, bad_tests_are_refused_with_their_field) {
  struct { const char *from, *to; int code; const char *msg; } cases[] = {
      {"\"bidir\": 0", "\"bidir\": 1", ERR_CONFIG,
       "t.json:6: start.test_start.bidir: --bidir sends both ways at once: "
       "measure each direction in a test of its own (-R for the other)"},
      {"\"num_streams\": 1", "\"num_streams\": 0", ERR_RANGE,
       "t.json:6: start.test_start.num_streams: must be >= 1, not 0"},
      {"\"num_streams\": 1", "\"num_streams\": 1.5", ERR_RANGE,
       "t.json:6: start.test_start.num_streams: must be a whole number of "
       "streams up to 1e+06, not 1.5"},
      {"\"bits_per_second\": 920000000", "\"bits_per_second\": 0",
       ERR_RANGE, "t.json:10: end.sum_received.bits_per_second: must be > 0, "
       "not 0"},
      {"\"sum_received\"", "\"sum_receivd\"", ERR_MISSING,
       "t.json:8: end.sum_received: missing (an object)"},
      {"\"timesecs\": 1714564800", "\"timesecs\": \"noon\"", ERR_PARSE,
       "t.json:3: start.timestamp.timesecs: must be a number"},
      {"\"connecting_to\"", "\"connecting_tx\"", ERR_PARSE,
       "t.json:1: start: neither connecting_to (a client's file) nor "
       "accepted_connection (a server's): no test ran"},
      {"[{\"socket\": 5, \"local_host\"", "[{\"socket\": 5, \"local_hast\"",
       ERR_MISSING, "t.json:1: start.connected[0].local_host: missing (a "
       "string)"},
      {"\"connected\": [{", "\"connected\": [], \"x\": [{", ERR_PARSE,
       "t.json:1: start.connected: no connection listed (iperf3 lists each "
       "stream's ends there)"},
      {"{\"start\"", "{\"event\": \"start\", \"data\": {}, \"start\"",
       ERR_PARSE, "t.json:1: event: an iperf3 --json-stream line: give the "
       "output of iperf3 -J (one object per test)"},
      {"{\"start\"", "[{\"start\"", ERR_PARSE,
       "t.json:1: not iperf3's JSON output (iperf3 -J writes one object per "
       "test)"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text = edit(cases[i].from, cases[i].to);
    if (cases[i].to[0] == '[') { /* close the array the edit opened */
      text = mem_realloc(text, strlen(text) + 2);
      strcpy(strrchr(text, '}') + 1, "]");
    }
    refused(text, cases[i].code, cases[i].msg);
    free(text);
  }
  refused("", ERR_PARSE, "t.json:1: no iperf3 test in the file (iperf3 -J "
          "writes one JSON object per test)");
  refused(" \n\n", ERR_PARSE, "t.json:3: no iperf3 test in the file (iperf3 "
          "-J writes one JSON object per test)");
}
