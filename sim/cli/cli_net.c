/* cli_net: `geodes net import FILE... --host SITE=ADDRESS ... [-o FILE]
 * [--trace] [--json]` — iperf3's JSON output (traces/iperf3.h) made into a
 * scenario's network.links, or a trace CSV over time, by
 * traces/netimport.h; what the tests could not measure is said on stderr.
 * Invariant: the output is written whole or not at all (cli_out), once
 * every file is read, every test placed and every pair valued; resources
 * are released at the single exit of cli_net_import whatever failed. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/transport.h"
#include "sim/cli/cli.h"
#include "traces/iperf3.h"
#include "traces/netimport.h"

#define NET_CMD "net import"
#define NET_GROUP_S 600 /* default --group-s: a campaign's round of tests */

static const char net_usage[] =
    "usage: geodes net import FILE... --host SITE=ADDRESS [--host ...] "
    "[-o FILE]\n"
    "                         [--trace] [--intra-site LAT_MS,GBPS] "
    "[--json]\n\n"
    "import  read iperf3 -J output and write the scenario's network.links\n"
    "        (or, with --trace, a trace CSV): latency, capacity, one\n"
    "        stream's rate and loss per pair of sites ('geodes net import\n"
    "        --help'; traces/FORMATS.md, \"net import\").\n";

static const cli_opt_command IMPORT = {
    .name = NET_CMD,
    .usage =
        "usage: geodes net import FILE... --host SITE=ADDRESS [--host ...] "
        "[-o FILE]\n"
        "                         [--trace [--group-s S]] [--intra-site "
        "LAT_MS,GBPS]\n"
        "                         [--json]\n\n"
        "Reads iperf3's JSON output (iperf3 -J; a file may hold several "
        "tests one\nafter another, as --logfile appends them) and writes "
        "{\"links\": [...]},\nthe entries of a scenario's network.links, "
        "per ordered pair of sites\n(sender -> receiver):\n"
        "  latency_ms      round trip / 2 (mean_rtt; single-stream tests "
        "first)\n"
        "  bandwidth_gbps  the best rate of a multi-stream test (-P N): the\n"
        "                  path's capacity (else one stream's: a lower "
        "bound)\n"
        "  flow_gbps       the median rate of the single-stream tests\n"
        "  loss            their retransmits over the segments sent\n"
        "A pair measured one way only is written as \"between\" (both "
        "ways equal).\nUse them under \"shaping\": \"path\". What could "
        "not be measured is said on\nstderr. traces/FORMATS.md, \"net "
        "import\", has every rule.\n\n",
    .width = 26, .args_min = 1, .args_max = INT_MAX,
    .missing = "which FILE? (the output of iperf3 -J)"};

typedef struct import_args {
  cli_opt_list hosts;
  const char *out, *intra;
  bool trace, json;
  double group_s;
  netimport_value intra_v;
  char **files;
  int nfiles;
} import_args;

/* --intra-site LAT_MS,GBPS into a->intra_v; CLI_OK or CLI_USAGE. */
static int parse_intra(import_args *a) {
  a->intra_v = (netimport_value){NAN, NAN, NAN, NAN};
  if (!a->intra) return CLI_OK;
  const char *comma = strchr(a->intra, ',');
  char lat[64];
  if (!comma || (size_t)(comma - a->intra) >= sizeof lat)
    return cli_usage_error(NET_CMD, "--intra-site wants LAT_MS,GBPS, not "
                           "'%s'", a->intra);
  snprintf(lat, sizeof lat, "%.*s", (int)(comma - a->intra), a->intra);
  return cli_parse_double(NET_CMD, "--intra-site's latency", lat, 0, 1e6,
                          &a->intra_v.latency_ms) &&
                 cli_parse_double(NET_CMD, "--intra-site's bandwidth",
                                  comma + 1, 1e-6, 1e9,
                                  &a->intra_v.bandwidth_gbps)
             ? CLI_OK
             : CLI_USAGE;
}

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, import_args *a) {
  *a = (import_args){.out = "-", .group_s = NET_GROUP_S};
  const cli_opt opts[] = {
      CLI_OPT_LIST(0, "host", "SITE=ADDRESS", &a->hosts,
                   "a host of site SITE, by the address or name\n"
                   "iperf3 writes (connected's local_host or\n"
                   "remote_host, connecting_to's host); repeat it\n"
                   "for every host (a site may have several)"),
      CLI_OPT_STRING('o', "output", "-o, --output FILE", &a->out,
                     "write there ('-': standard output, the default)"),
      CLI_OPT_FLAG(0, "trace", &a->trace,
                   "write a trace CSV (t_s,src,dst,...): a snapshot\n"
                   "per round of tests, from the first test's time"),
      CLI_OPT_REAL(0, "group-s", "S", &a->group_s, 0, 1e9,
                   "--trace: a snapshot holds the tests that start\n"
                   "within S seconds of its first (default "
                   CLI_STR(NET_GROUP_S) ")"),
      CLI_OPT_STRING(0, "intra-site", "LAT_MS,GBPS", &a->intra,
                     "the link between two devices of a site not\n"
                     "measured with itself (--trace needs it then;\n"
                     "links: written as from = to)"),
      CLI_OPT_FLAG(0, "json", &a->json,
                   "report the tests and pairs as one JSON object on\n"
                   "stdout (with -o FILE)"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  int rc = cli_opt_parse(&IMPORT, opts, argc, argv, &a->files, &a->nfiles);
  if (rc) return rc;
  if (a->hosts.n == 0)
    return cli_usage_error(NET_CMD, "--host SITE=ADDRESS is missing: which "
                           "site is each host of the tests?");
  if (a->json && strcmp(a->out, "-") == 0)
    return cli_usage_error(NET_CMD, "--json reports on stdout: write the "
                           "links with -o FILE");
  return parse_intra(a);
}

/* The hosts of the --host options; NULL and the usage error printed. */
static netimport_hosts *hosts_of(const import_args *a) {
  netimport_hosts *h = netimport_hosts_new();
  err e = {0};
  for (size_t i = 0; i < a->hosts.n; i++)
    if (netimport_hosts_add(h, a->hosts.items[i], &e) != ERR_OK) {
      cli_usage_error(NET_CMD, "--host %s", e.msg);
      netimport_hosts_free(h);
      return NULL;
    }
  return h;
}

/* ---- what the import says about itself ---- */

/* One note of netimport_notes, appended to ctx (a JSON array). */
static void add_note(void *ctx, const char *text) {
  json_array_append_new(ctx, json_string(text));
}

static const char *source_name(netimport_source s) {
  switch (s) {
    case NETIMPORT_NONE: return "none";
    case NETIMPORT_MEASURED: return "measured";
    case NETIMPORT_MIRRORED: return "mirrored";
    case NETIMPORT_INTRA: return "intra-site";
  }
  return "?";
}

/* --json: the tests, the pairs at t = 0 and the notes, one line. */
static void report_json(const import_args *a, const netimport *m,
                        const netimport_hosts *h, size_t tests, size_t read,
                        json_t *notes) {
  json_t *o = json_object(), *sites = json_array(), *pairs = json_array();
  for (int s = 0; s < m->nsites; s++)
    json_array_append_new(sites, json_string(netimport_hosts_site(h, s)));
  for (int x = 0; x < m->nsites; x++)
    for (int y = 0; y < m->nsites; y++) {
      const netimport_pair *p = netimport_pair_of(m, x, y);
      if (p->source == NETIMPORT_NONE) continue;
      json_t *l = json_object();
      json_object_set_new(l, "from", json_string(netimport_hosts_site(h, x)));
      json_object_set_new(l, "to", json_string(netimport_hosts_site(h, y)));
      json_object_set_new(l, "source", json_string(source_name(p->source)));
      json_object_set_new(l, "single_tests", json_integer(p->single));
      json_object_set_new(l, "multi_tests", json_integer(p->multi));
      json_object_set_new(l, "capacity_lower_bound",
                          json_boolean(p->capacity_bound));
      const netimport_value *v = netimport_at(m, 0, x, y);
      json_object_set_new(l, "latency_ms", cli_json_number(v->latency_ms));
      json_object_set_new(l, "bandwidth_gbps",
                          cli_json_number(v->bandwidth_gbps));
      json_object_set_new(l, "flow_gbps", cli_json_number(v->flow_gbps));
      json_object_set_new(l, "loss", cli_json_number(v->loss));
      json_array_append_new(pairs, l);
    }
  json_object_set_new(o, "output", json_string(a->out));
  json_object_set_new(o, "format", json_string(a->trace ? "trace" : "links"));
  json_object_set_new(o, "files", json_integer(a->nfiles));
  json_object_set_new(o, "tests_read", json_integer((json_int_t)read));
  json_object_set_new(o, "tests", json_integer((json_int_t)tests));
  json_object_set_new(o, "snapshots", json_integer((json_int_t)m->nsnaps));
  json_object_set_new(o, "t0_s", json_integer(m->t0_s));
  json_object_set_new(o, "sites", sites);
  json_object_set_new(o, "pairs", pairs);
  json_object_set_new(o, "notes", json_incref(notes));
  cli_print_json(o, CLI_JSON);
}

/* ---- the two outputs ---- */

/* The trace CSV with its provenance: the files and this command. */
static void write_trace(FILE *f, const import_args *a, int argc, char **argv,
                        const netimport *m, const netimport_hosts *h,
                        size_t tests) {
  char *source = NULL, *command = NULL;
  size_t n = 0;
  FILE *t = open_memstream(&source, &n);
  fprintf(t, "iperf3 -J, %zu tests in", tests);
  for (int i = 0; i < a->nfiles; i++) fprintf(t, " %s", a->files[i]);
  fclose(t);
  t = open_memstream(&command, &n);
  fprintf(t, "geodes net");
  for (int i = 0; i < argc; i++) fprintf(t, " %s", argv[i]);
  fclose(t);
  netimport_trace_write(f, m, h, source, command, a->group_s);
  free(source);
  free(command);
}

/* A trace's t = 0 gives every ordered pair: a usage error for a site
 * without a link to itself, an error for a pair no test measured. */
static int check_trace(const netimport *m, const netimport_hosts *h) {
  int a, b;
  if (!netimport_untested(m, &a, &b)) return CLI_OK;
  const char *x = netimport_hosts_site(h, a), *y = netimport_hosts_site(h, b);
  if (a == b)
    return cli_usage_error(NET_CMD, "--trace: no test of %s with itself: "
                           "give --intra-site LAT_MS,GBPS (the link "
                           "between two of its devices)", x);
  return cli_error("%s: no test between %s and %s either way: a trace "
                   "gives every pair a value at t = 0 (measure it, or "
                   "write links and give the scenario a default)",
                   NET_CMD, x, y);
}

/* Writes the links or the trace to a->out, whole or not at all. */
static int write_output(const import_args *a, int argc, char **argv,
                        const netimport *m, const netimport_hosts *h,
                        size_t tests) {
  int rc = a->trace ? check_trace(m, h) : CLI_OK;
  cli_out out;
  if (rc || (rc = cli_out_open(&out, a->out, "the network"))) return rc;
  if (a->trace) {
    write_trace(out.f, a, argc, argv, m, h, tests);
  } else {
    json_t *doc = netimport_links_json(m, h);
    json_out_write(doc, out.f, JSON_INDENT(2));
    fputc('\n', out.f);
    json_decref(doc);
  }
  /* a write that failed before the close (more than a buffer) says why
   * here; stdout's is main's to report */
  if (out.f != stdout && (fflush(out.f) != 0 || ferror(out.f)))
    rc = cli_error("%s: cannot write: %s", a->out, strerror(errno));
  return cli_out_close(&out, rc);
}

/* Reads every file into runs (merged); CLI_OK or the error printed. */
static int read_files(const import_args *a, iperf3_runs *runs, size_t *read) {
  err e = {0};
  for (int i = 0; i < a->nfiles; i++)
    if (iperf3_read(a->files[i], runs, &e) != ERR_OK)
      return cli_error("%s", e.msg);
  *read = runs->n;
  iperf3_runs_merge(runs);
  return CLI_OK;
}

static int cli_net_import(int argc, char **argv) {
  import_args a;
  iperf3_runs runs = {0};
  netimport_hosts *h = NULL;
  netimport *m = NULL;
  int *ends = NULL;
  size_t read = 0;
  json_t *notes = json_array();
  err e = {0};
  int rc = parse_args(argc, argv, &a);
  if (rc) goto done;
  if (!(h = hosts_of(&a))) rc = CLI_USAGE;
  if (rc || (rc = read_files(&a, &runs, &read))) goto done;
  ends = mem_calloc(2 * runs.n + 1, sizeof *ends);
  netimport_opts o = {.group_s = a.trace ? a.group_s : INFINITY,
                      .mss_bytes = TRANSPORT_TCP_SEGMENT, .intra = a.intra_v};
  if (netimport_assign(h, runs.v, runs.n, ends, ends + runs.n, &e) ||
      !(m = netimport_links(h, runs.v, ends, ends + runs.n, runs.n, &o, &e))) {
    rc = cli_error("%s", e.msg);
    goto done;
  }
  if ((rc = write_output(&a, argc, argv, m, h, runs.n))) goto done;
  if (read > runs.n)
    json_array_append_new(notes, json_sprintf("%zu test%s read twice (one "
                          "test's two ends, or a file given twice): counted "
                          "once", read - runs.n, read - runs.n > 1 ? "s" : ""));
  netimport_notes(m, h, add_note, notes);
  for (size_t i = 0; i < json_array_size(notes); i++)
    fprintf(stderr, "geodes %s: note: %s\n", NET_CMD,
            json_string_value(json_array_get(notes, i)));
  if (a.json) report_json(&a, m, h, runs.n, read, notes);
  else if (strcmp(a.out, "-") != 0)
    printf("%s: %s from %zu test%s in %d file%s, %zu snapshot%s\n", a.out,
           a.trace ? "trace" : "links", runs.n, runs.n == 1 ? "" : "s",
           a.nfiles, a.nfiles == 1 ? "" : "s", m->nsnaps,
           m->nsnaps == 1 ? "" : "s");
done:
  json_decref(notes);
  free(ends);
  netimport_free(m);
  netimport_hosts_free(h);
  iperf3_runs_free(&runs);
  free(a.hosts.items);
  return rc == CLI_OPT_HELPED ? CLI_OK : rc;
}

int cli_net(int argc, char **argv) {
  static const cli_action actions[] = {{"import", cli_net_import}};
  return cli_actions("net", net_usage, actions, 1, argc, argv);
}
