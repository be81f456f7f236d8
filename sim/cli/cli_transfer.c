/* cli_transfer: `geodes transfer --latency-ms L --bandwidth-gbps B --bytes N
 * [--network ideal|netem|tcp] [--window-bytes W] [--json]` — one flow on one
 * link, timed by the engine's network (sim/net) under each model: the
 * quickest check of what a model does (DESIGN.md section 4's ns-3 points).
 * Invariant: the flow runs alone on a two-device network without NIC limits,
 * on a new connection (tcp pays its one-RTT handshake). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/net.h"

static void transfer_help(void) {
  printf(
      "usage: geodes transfer --latency-ms L --bandwidth-gbps B --bytes N\n"
      "                       [--network ideal|netem|tcp] [--window-bytes W]\n"
      "                       [--json]\n\n"
      "Times one flow of N bytes on one link (one-way delay L ms, B Gbit/s):\n"
      "until its last byte arrives. Without --network, every model is shown.\n"
      "tcp: RTT = 2 L, window W (4 MiB), slow start from 10 x 1448 B after a\n"
      "one-RTT handshake.\n\n"
      "  --latency-ms L      one-way delay, ms (>= 0)\n"
      "  --bandwidth-gbps B  link bandwidth, Gbit/s (> 0)\n"
      "  --bytes N           bytes to send (1e9 and 1000000000 both work)\n"
      "  --network MODEL     ideal, netem or tcp: only that model (and its\n"
      "                      time_s in --json); default: all three\n"
      "  --window-bytes W    tcp: window, bytes (default 4194304 = 4 MiB)\n"
      "  --json              one JSON object: time_s (of --network, default\n"
      "                      netem) and by_network\n"
      "  --help              this text\n\n"
      "Example: geodes transfer --latency-ms 70 --bandwidth-gbps 1.1 \\\n"
      "           --bytes 4e9 --network tcp --window-bytes 16777216\n");
}

typedef struct link1 {
  double lat_ms, gbps;
} link1;

static trace_value one_link(const void *ctx, int a, int b, int64_t t) {
  (void)a, (void)b, (void)t;
  const link1 *l = ctx;
  return (trace_value){l->lat_ms, l->gbps};
}

static void arrived(void *ctx, uint32_t tag, int64_t t) {
  (void)tag;
  *(int64_t *)ctx = t;
}

static double time_one(const link1 *l, transport_model m, double bytes,
                       double window) {
  sim_net_topo topo = {2, l, one_link, NULL, NULL, NULL, 0};
  sim_queue *q = sim_queue_new();
  int64_t done = -1;
  sim_net *n = sim_net_new(&topo, m, window, q, 0,
                           (sim_net_hooks){&done, NULL, arrived});
  sim_net_set_handshake(n, true);
  sim_net_start(n, 0, 0, 1, bytes, 0);
  sim_queue_item it;
  while (sim_queue_pop(q, &it)) sim_net_handle(n, &it);
  bool overflow = sim_net_overflowed(n);
  sim_net_free(n);
  sim_queue_free(q);
  return overflow ? NAN : (double)done * 1e-9;
}

typedef struct transfer_args {
  link1 l;
  double bytes;
  long window; /* 0: the engine's default */
  int model;   /* -1: every model */
  bool json;
} transfer_args;

/* Options into a; CLI_OK, CLI_USAGE (message printed) or -1 after --help. */
static int parse_args(int argc, char **argv, transfer_args *a) {
  enum { OPT_LAT = 1, OPT_BW, OPT_BYTES, OPT_NET, OPT_WIN, OPT_JSON };
  static const struct option opts[] = {
      {"help", no_argument, NULL, 'h'},
      {"latency-ms", required_argument, NULL, OPT_LAT},
      {"bandwidth-gbps", required_argument, NULL, OPT_BW},
      {"bytes", required_argument, NULL, OPT_BYTES},
      {"network", required_argument, NULL, OPT_NET},
      {"window-bytes", required_argument, NULL, OPT_WIN},
      {"json", no_argument, NULL, OPT_JSON},
      {NULL, 0, NULL, 0}};
  *a = (transfer_args){{-1, -1}, -1, 0, -1, false};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    bool ok = true;
    switch (c) {
      case 'h': transfer_help(); return -1;
      case OPT_LAT:
        ok = cli_parse_double("transfer", "--latency-ms", optarg, 0, 1e7,
                              &a->l.lat_ms);
        break;
      case OPT_BW:
        ok = cli_parse_double("transfer", "--bandwidth-gbps", optarg, 1e-9,
                              1e9, &a->l.gbps);
        break;
      case OPT_BYTES:
        ok = cli_parse_double("transfer", "--bytes", optarg, 0, 1e18,
                              &a->bytes);
        break;
      case OPT_WIN:
        ok = cli_parse_int("transfer", "--window-bytes", optarg, 1448,
                           1L << 40, &a->window);
        break;
      case OPT_NET:
        if ((a->model = transport_model_parse(optarg)) < 0)
          return cli_usage_error("transfer",
                                 "--network is ideal, netem or tcp, not '%s'",
                                 optarg);
        break;
      case OPT_JSON: a->json = true; break;
      case ':':
        return cli_usage_error("transfer", "%s needs an argument",
                               argv[optind - 1]);
      default:
        return cli_usage_error("transfer", "unknown option '%s'",
                               argv[optind - 1]);
    }
    if (!ok) return CLI_USAGE;
  }
  if (optind < argc)
    return cli_usage_error("transfer", "unexpected argument '%s'", argv[optind]);
  if (a->l.lat_ms < 0 || a->l.gbps < 0 || a->bytes < 0)
    return cli_usage_error("transfer", "--latency-ms, --bandwidth-gbps and "
                           "--bytes are required");
  return CLI_OK;
}

static void print_json(const transfer_args *a, const double t[3], int shown) {
  json_t *o = json_object(), *by = json_object();
  json_object_set_new(o, "time_s", cli_json_number(t[shown]));
  json_object_set_new(o, "network_model",
                      json_string(transport_model_name((transport_model)shown)));
  for (int m = 0; m < 3; m++)
    json_object_set_new(by, transport_model_name((transport_model)m),
                        cli_json_number(t[m]));
  json_object_set_new(o, "by_network", by);
  json_object_set_new(o, "bytes", json_real(a->bytes));
  json_object_set_new(o, "latency_ms", json_real(a->l.lat_ms));
  json_object_set_new(o, "bandwidth_gbps", json_real(a->l.gbps));
  json_object_set_new(o, "window_bytes",
                      json_real(a->window > 0 ? (double)a->window
                                              : TRANSPORT_DEFAULT_WINDOW));
  char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
  puts(text);
  free(text);
  json_decref(o);
}

int cli_transfer(int argc, char **argv) {
  transfer_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  /* Simulated time is int64 ns (292 years); the engine stops at a quarter
   * of that (SIM_NET_HORIZON_NS), so a flow that long has no time: refuse it
   * here when even the ideal time is too long, after the run otherwise
   * (tcp's window can make it far slower than ideal). */
  double ideal_s = a.bytes * 8 / (a.l.gbps * 1e9) + a.l.lat_ms * 1e-3;
  if (ideal_s > 1e9)
    return cli_error("transfer: %g bytes at %g Gbit/s take %.3g s, beyond "
                     "the 1e9 s (31 years) that simulated time covers",
                     a.bytes, a.l.gbps, ideal_s);
  double t[3];
  for (int m = 0; m < 3; m++) {
    t[m] = time_one(&a.l, (transport_model)m, a.bytes, (double)a.window);
    if (isnan(t[m]))
      return cli_error("transfer: %g bytes take longer under %s than the "
                       "%.3g s (73 years) that simulated time covers",
                       a.bytes, transport_model_name((transport_model)m),
                       (double)SIM_NET_HORIZON_NS * 1e-9);
  }
  if (a.json) {
    print_json(&a, t, a.model < 0 ? TRANSPORT_NETEM : a.model);
    return CLI_OK;
  }
  printf("one flow of %.0f bytes, %g ms one-way, %g Gbit/s\n", a.bytes,
         a.l.lat_ms, a.l.gbps);
  for (int m = 0; m < 3; m++)
    if (a.model < 0 || a.model == m)
      printf("  %-6s %12.6f s\n", transport_model_name((transport_model)m), t[m]);
  return CLI_OK;
}
