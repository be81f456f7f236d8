/* test_cli_net: `geodes net import` as a user runs it on the hand-written
 * iperf3 files of tests/fixtures/iperf3/ — the links document and the
 * trace CSV byte for byte (their numbers computed by hand in
 * test_netimport.c), the notes on stderr, the --json report, -o written
 * whole (a symbolic link kept a link), and every bad input: exit 1 with its
 * message (2 for the command line), nothing written. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support.h"

#define FIX GEODES_FIXTURES "/iperf3/"
#define HOSTS                                                              \
  "--host Virginia=10.0.0.5 --host Virginia=3.80.1.10 --host "             \
  "Zurich=34.65.1.2 --host Zurich=10.172.0.7"
#define FOUR                                                               \
  FIX "va_zu_p1.json " FIX "va_zu_p8.json " FIX "zu_va_r_client.json " FIX \
      "zu_va_r_server.json"

TestSuite(cli_net, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 60);

static const char LINKS[] =
    "{\n"
    "  \"links\": [\n"
    "    {\n"
    "      \"from\": \"Virginia\",\n"
    "      \"to\": \"Zurich\",\n"
    "      \"latency_ms\": 46.0,\n"
    "      \"bandwidth_gbps\": 4.8,\n"
    "      \"flow_gbps\": 0.92,\n"
    "      \"loss\": 0.00015\n"
    "    },\n"
    "    {\n"
    "      \"from\": \"Zurich\",\n"
    "      \"to\": \"Virginia\",\n"
    "      \"latency_ms\": 46.0,\n"
    "      \"bandwidth_gbps\": 0.7,\n"
    "      \"flow_gbps\": 0.7,\n"
    "      \"loss\": 6.25e-05\n"
    "    }\n"
    "  ]\n"
    "}\n";

static const char NOTES[] =
    "geodes net import: note: 1 test read twice (one test's two ends, or a "
    "file given twice): counted once\n"
    "geodes net import: note: Zurich -> Virginia: no multi-stream test "
    "(iperf3 -P N): the capacity was not measured; bandwidth_gbps is one "
    "stream's rate, a lower bound\n";

Test(cli_net, links_to_stdout_and_to_a_file) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "net import " FOUR " " HOSTS), 0, "%s",
               r.err);
  cr_expect_str_eq(r.out, LINKS);
  cr_expect_str_eq(r.err, NOTES);
  const char *out = support_path("links.json");
  cr_assert_eq(support_geodes(&r, "net import " FOUR " " HOSTS " -o '%s'",
                              out), 0, "%s", r.err);
  char *text = support_read_file(out, NULL);
  cr_expect_str_eq(text, LINKS);
  free(text);
  char want[512];
  snprintf(want, sizeof want, "%s: links from 3 tests in 4 files, 1 "
           "snapshot\n", out);
  cr_expect_str_eq(r.out, want);
  cr_expect_str_eq(r.err, NOTES);
  /* the same again: the same bytes, over the same file */
  cr_assert_eq(support_geodes(&r, "net import " FOUR " " HOSTS " -o '%s'",
                              out), 0);
  text = support_read_file(out, NULL);
  cr_expect_str_eq(text, LINKS);
  free(text);
  cr_expect_eq(support_count_files("links.json"), 1, "no temporary left");
  support_run_clear(&r);
}

Test(cli_net, one_way_is_between_and_sites_with_themselves) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "net import " FIX "va_zu_p8.json " HOSTS
                              " --intra-site 0.05,100"), 0, "%s", r.err);
  cr_expect_str_eq(r.out,
                   "{\n"
                   "  \"links\": [\n"
                   "    {\n"
                   "      \"from\": \"Virginia\",\n"
                   "      \"to\": \"Virginia\",\n"
                   "      \"latency_ms\": 0.05,\n"
                   "      \"bandwidth_gbps\": 100.0\n"
                   "    },\n"
                   "    {\n"
                   "      \"between\": [\n"
                   "        \"Virginia\",\n"
                   "        \"Zurich\"\n"
                   "      ],\n"
                   "      \"latency_ms\": 49.25,\n"
                   "      \"bandwidth_gbps\": 4.8\n"
                   "    },\n"
                   "    {\n"
                   "      \"from\": \"Zurich\",\n"
                   "      \"to\": \"Zurich\",\n"
                   "      \"latency_ms\": 0.05,\n"
                   "      \"bandwidth_gbps\": 100.0\n"
                   "    }\n"
                   "  ]\n"
                   "}\n");
  cr_expect_str_eq(r.err,
                   "geodes net import: note: Virginia -> Zurich: no "
                   "single-stream test: flow_gbps and loss are left out, "
                   "latency_ms is from -P tests (with the queueing they "
                   "add)\n"
                   "geodes net import: note: Zurich -> Virginia: no test "
                   "this way: both ways take Virginia -> Zurich's values "
                   "(links: \"between\")\n");
  support_run_clear(&r);
}

Test(cli_net, a_trace_over_an_hour) {
  support_run r = {0};
  const char *out = support_path("hour.csv");
  cr_assert_eq(support_geodes(&r, "net import " FIX "va_zu_logfile.json "
                              HOSTS " --trace --intra-site 0.05,100 -o '%s'",
                              out), 0, "%s", r.err);
  char *text = support_read_file(out, NULL);
  char *gen = strstr(text, "# generated_by: geodes net import ");
  cr_assert_not_null(gen, "%s", text);
  char *after = strchr(gen, '\n');
  cr_assert_not_null(after);
  *gen = '\0';
  cr_expect_str_eq(text, "# source: iperf3 -J, 2 tests in " FIX
                   "va_zu_logfile.json\n");
  cr_expect_str_eq(after + 1,
                   "# t0: 2024-05-01T12:00:00Z (the first test's "
                   "start.timestamp; t_s counts from it)\n"
                   "# group_s: 600 (a snapshot holds the tests within it of "
                   "its first)\n"
                   "# interpolate: step\n"
                   "t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss\n"
                   "0,Virginia,Virginia,0.05,100.0,,\n"
                   "0,Virginia,Zurich,45.0,0.92,0.92,0.00015\n"
                   "0,Zurich,Virginia,45.0,0.92,0.92,0.00015\n"
                   "0,Zurich,Zurich,0.05,100.0,,\n"
                   "3600,Virginia,Zurich,60.0,0.5,0.5,0.0008\n"
                   "3600,Zurich,Virginia,60.0,0.5,0.5,0.0008\n");
  free(text);
  char want[512];
  snprintf(want, sizeof want, "%s: trace from 2 tests in 1 file, 2 "
           "snapshots\n", out);
  cr_expect_str_eq(r.out, want);
  support_run_clear(&r);
}

Test(cli_net, the_json_report) {
  const char *out = support_path("report.json");
  json_t *o = support_geodes_json("net import " FOUR " " HOSTS " -o '%s' "
                                  "--json", out);
  cr_expect_str_eq(json_string_value(json_object_get(o, "format")), "links");
  cr_expect_eq(json_integer_value(json_object_get(o, "files")), 4);
  cr_expect_eq(json_integer_value(json_object_get(o, "tests_read")), 4);
  cr_expect_eq(json_integer_value(json_object_get(o, "tests")), 3);
  cr_expect_eq(json_integer_value(json_object_get(o, "snapshots")), 1);
  cr_expect_eq(json_integer_value(json_object_get(o, "t0_s")), 1714564800);
  json_t *pairs = json_object_get(o, "pairs");
  cr_assert_eq(json_array_size(pairs), 2);
  json_t *zv = json_array_get(pairs, 1);
  cr_expect_str_eq(json_string_value(json_object_get(zv, "source")),
                   "measured");
  cr_expect(json_is_true(json_object_get(zv, "capacity_lower_bound")));
  cr_expect_eq(json_integer_value(json_object_get(zv, "single_tests")), 1);
  cr_expect_eq(json_real_value(json_object_get(zv, "bandwidth_gbps")), 0.7);
  cr_expect_eq(json_array_size(json_object_get(o, "notes")), 2);
  json_decref(o);
}

/* geodes ARGS fails with status and exactly msg on stderr; out (when not
 * NULL) holds what it held before. */
static void fails(const char *args, int status, const char *msg,
                  const char *out) {
  support_run r = {0};
  char *before = out ? support_read_file(out, NULL) : NULL;
  cr_expect_eq(support_geodes(&r, "net import %s", args), status, "%s: %s",
               args, r.err);
  cr_expect_str_eq(r.err, msg, "%s", args);
  cr_expect_str_eq(r.out, "", "%s", args);
  if (out) {
    char *after = support_read_file(out, NULL);
    cr_expect_str_eq(after, before, "%s changed", out);
    free(after);
  }
  free(before);
  support_run_clear(&r);
}

Test(cli_net, bad_input_exits_1_and_writes_nothing) {
  const char *out = support_write_file(support_path("keep.json"), "mine\n");
  char args[1024];
  struct { const char *files, *hosts, *msg; } cases[] = {
      {FIX "error.json", HOSTS,
       "geodes: " FIX "error.json:12: error: iperf3 reported \"unable to "
       "connect to server - server may have stopped running or use a "
       "different port, firewall issue, etc.: Connection refused\": the "
       "test measured nothing (remove it from the file)\n"},
      {FIX "va_zu_p1.json " FIX "udp.json", HOSTS,
       "geodes: " FIX "udp.json:30: start.test_start.protocol: UDP: net "
       "import reads TCP tests (a UDP test measures no TCP window, round "
       "trip or loss: run iperf3 without -u or --sctp)\n"},
      {FIX "not_iperf3.json", HOSTS,
       "geodes: " FIX "not_iperf3.json:1: not iperf3's JSON output (iperf3 "
       "-J writes an object with \"start\", \"intervals\" and \"end\")\n"},
      {FIX "text_output.txt", HOSTS,
       "geodes: " FIX "text_output.txt:1: not iperf3's JSON output (iperf3 "
       "-J): '[' or '{' expected near 'Connecting'\n"},
      {FIX "va_zu_p1.json", "--host Zurich=34.65.1.2",
       "geodes: " FIX "va_zu_p1.json:1: host 10.0.0.5 "
       "(start.connected[0].local_host) maps to no site: give --host "
       "SITE=10.0.0.5\n"},
      {FIX "zu_va_r_client.json", HOSTS,
       "geodes: " FIX "zu_va_r_client.json:1: Zurich -> Virginia: no round "
       "trip in any test between the two sites: iperf3 reports mean_rtt "
       "from the sending host (a -R client's file has none: give the "
       "server's file too, or run the client with --get-server-output)\n"},
      {FIX "va_zu_p1.json", HOSTS " --host Tokyo=10.9.9.9 --trace "
       "--intra-site 0.05,100",
       "geodes: net import: no test between Virginia and Tokyo either way: "
       "a trace gives every pair a value at t = 0 (measure it, or write "
       "links and give the scenario a default)\n"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(args, sizeof args, "%s %s -o '%s'", cases[i].files,
             cases[i].hosts, out);
    fails(args, 1, cases[i].msg, out);
  }
  cr_expect_eq(support_count_files("keep.json"), 1, "no temporary left");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "net import " FIX "error.json " HOSTS
                              " -o '%s'", support_path("new.json")), 1);
  cr_expect_eq(access(support_path("new.json"), F_OK), -1, "not created");
  support_run_clear(&r);
}

#define TRY "\nTry 'geodes net import --help'.\n"

Test(cli_net, command_line_errors_exit_2) {
  struct { const char *args, *msg; } cases[] = {
      {FIX "va_zu_p1.json",
       "geodes net import: --host SITE=ADDRESS is missing: which site is "
       "each host of the tests?" TRY},
      {FIX "va_zu_p1.json --host Virginia",
       "geodes net import: --host 'Virginia': not SITE=ADDRESS" TRY},
      {FIX "va_zu_p1.json --host A=10.0.0.5 --host B=10.0.0.5",
       "geodes net import: --host 'B=10.0.0.5': 10.0.0.5 is site A's "
       "already (one address, one site)" TRY},
      {FIX "va_zu_p1.json " HOSTS " --json",
       "geodes net import: --json reports on stdout: write the links with "
       "-o FILE" TRY},
      {FIX "va_zu_p1.json " HOSTS " --trace",
       "geodes net import: --trace: no test of Virginia with itself: give "
       "--intra-site LAT_MS,GBPS (the link between two of its devices)" TRY},
      {FIX "va_zu_p1.json " HOSTS " --intra-site 5",
       "geodes net import: --intra-site wants LAT_MS,GBPS, not '5'" TRY},
      {FIX "va_zu_p1.json " HOSTS " --intra-site 5,0",
       "geodes net import: --intra-site's bandwidth wants a number in "
       "[1e-06, 1e+09], not '0'" TRY},
      {HOSTS, "geodes net import: which FILE? (the output of iperf3 -J)" TRY},
      {FIX "va_zu_p1.json " HOSTS " --group-s -1",
       "geodes net import: --group-s wants a number in [0, 1e+09], not "
       "'-1'" TRY}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    fails(cases[i].args, 2, cases[i].msg, NULL);
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "net"), 2);
  cr_expect_str_eq(r.err, "geodes net: missing the action: import\nTry "
                   "'geodes net --help'.\n");
  cr_expect_eq(support_geodes(&r, "net export"), 2);
  cr_expect_str_eq(r.err, "geodes net: unknown action 'export' (import)\n"
                   "Try 'geodes net --help'.\n");
  cr_expect_eq(support_geodes(&r, "net --help"), 0);
  cr_expect(strstr(r.out, "usage: geodes net import FILE..."), "%s", r.out);
  cr_expect_eq(support_geodes(&r, "net import --help"), 0);
  cr_expect(strstr(r.out, "--intra-site LAT_MS,GBPS"), "%s", r.out);
  cr_expect(strstr(r.out, "\"shaping\": \"path\""), "%s", r.out);
  support_run_clear(&r);
}

Test(cli_net, formats_documents_every_option_and_key) {
  char *all = support_read_file(GEODES_SOURCE_DIR "/traces/FORMATS.md", NULL);
  char *s = strstr(all, "\n## net import\n");
  cr_assert_not_null(s, "FORMATS.md has a section \"net import\"");
  char *end = strstr(s + 1, "\n## ");
  if (end) *end = '\0';
  static const char *const words[] = {
      "--host SITE=ADDRESS", "-o FILE", "--trace", "--group-s S",
      "--intra-site LAT_MS,GBPS", "--json", "`latency_ms`",
      "`bandwidth_gbps`", "`flow_gbps`", "`loss`", "`between`",
      "t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss", NULL};
  for (const char *const *w = words; *w; w++)
    cr_expect(strstr(s, *w), "the net import section names %s", *w);
  free(all);
}

Test(cli_net, a_full_device_is_an_error) {
  struct stat st;
  if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
    cr_skip_test("/dev/full is not a character device here");
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "net import " FOUR " " HOSTS " >/dev/full"),
               1);
  cr_expect(strstr(r.err, "geodes: stdout: No space left on device\n"), "%s",
            r.err);
  cr_expect_eq(support_geodes(&r, "net import " FOUR " " HOSTS
                              " -o /dev/full"), 1);
  cr_expect_str_eq(r.err, "geodes: /dev/full: cannot write: No space left on "
                   "device\n");
  support_run_clear(&r);
}

Test(cli_net, output_through_a_link_keeps_the_link) {
  const char *target = support_write_file(support_path("real.json"), "old\n");
  const char *link = support_path("link.json");
  cr_assert_eq(symlink(target, link), 0);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "net import " FOUR " " HOSTS " -o '%s'",
                              link), 0, "%s", r.err);
  struct stat st;
  cr_assert_eq(lstat(link, &st), 0);
  cr_expect(S_ISLNK(st.st_mode), "still a link");
  char *text = support_read_file(target, NULL);
  cr_expect_str_eq(text, LINKS);
  free(text);
  cr_expect_eq(support_geodes(&r, "net import " FOUR " " HOSTS " -o '%s'",
                              support_dir()), 1);
  cr_expect(strstr(r.err, "cannot write the network: a folder"), "%s", r.err);
  support_run_clear(&r);
}
