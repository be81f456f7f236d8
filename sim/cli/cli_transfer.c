/* cli_transfer: `geodes transfer --latency-ms L --bandwidth-gbps B --bytes N
 * [--network-model ideal|netem|tcp] [--window-bytes W] [--flow-gbps F]
 * [--loss P] [--sockets N] [--reverse-latency-ms R] [--json]` — one
 * message on one link (its path keys as options), timed by
 * the engine's network (sim/net) under each model: the quickest check of
 * what a model does (DESIGN.md section 4's ns-3 points, DT-FM's NCCL
 * point-to-point times).
 * Invariant: the message runs alone on a two-device network without NIC
 * limits. Without --sockets it is one TCP flow on a connection it opens
 * (tcp pays the one-RTT handshake, as ns-3's bulk send does); with
 * --sockets N it is one NCCL message on a connection of N sockets opened at
 * setup, before the clock starts (a fresh window, no handshake). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/simtime.h"
#include "sim/cli/cli.h"
#include "sim/transfer.h"

static void transfer_more(void) {
  printf("\nExample: geodes transfer --latency-ms 70 --bandwidth-gbps 1.1 \\\n"
         "           --bytes 4e9 --network-model tcp --window-bytes 16777216\n");
}

static const cli_opt_command TRANSFER = {
    .name = "transfer",
    .usage =
        "usage: geodes transfer --latency-ms L --bandwidth-gbps B --bytes N\n"
        "                       [--network-model ideal|netem|tcp] [--window-bytes "
        "W]\n"
        "                       [--flow-gbps F] [--loss P] [--sockets N]\n"
        "                       [--reverse-latency-ms R] [--json]\n\n"
        "Times one message of N bytes on one link (one-way delay L ms, B "
        "Gbit/s):\n"
        "until its last byte arrives. Without --network-model, every model is "
        "shown.\n"
        "tcp: RTT = L + R, window W per socket (else F x RTT with --flow-gbps,\n"
        "else the hosts' default, 3 MiB: Linux's), at most the loss bound of\n"
        "--loss P (Padhye et al. 1998), slow start from 10 x 1448 B. The\n"
        "link is alone, so the network's shaping (tc or path) does not\n"
        "matter. Without --sockets: one TCP flow on a new connection (a\n"
        "one-RTT handshake first, as ns-3's bulk send); with --sockets N: "
        "one\n"
        "NCCL message over an open connection of N sockets (NCCL opens them "
        "at\n"
        "setup; 16 on AWS), its bytes dealt over them in pieces >= 64 "
        "KiB.\n\n",
    .width = 20, .args_min = 0, .args_max = 0, .more = transfer_more};

typedef struct transfer_args {
  sim_transfer x;
  long window;  /* 0: the link's or the hosts' */
  long sockets; /* 0: one plain TCP flow */
  int model;    /* -1: every model */
  bool json;
} transfer_args;

/* Options into a; CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, transfer_args *a) {
  *a = (transfer_args){.x = {.latency_ms = -1, .back_ms = -1,
                             .bandwidth_gbps = -1, .bytes = -1},
                       .model = -1};
  const cli_opt opts[] = {
      CLI_OPT_REAL(0, "latency-ms", "L", &a->x.latency_ms, 0, 1e7,
                   "one-way delay, ms (>= 0)"),
      CLI_OPT_REAL(0, "bandwidth-gbps", "B", &a->x.bandwidth_gbps, 1e-9, 1e9,
                   "link bandwidth, Gbit/s (> 0)"),
      CLI_OPT_REAL(0, "bytes", "N", &a->x.bytes, 0, 1e18,
                   "bytes to send (1e9 and 1000000000 both work)"),
      CLI_OPT_ENUM(0, "network-model", "M", &a->model, transport_model_names,
                   NULL,
                   "ideal, netem or tcp: only that model (and its\n"
                   "time_s in --json); default: all three"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_INT(0, "window-bytes", "W", &a->window,
                  TRANSPORT_WINDOW_MIN_BYTES, TRANSPORT_WINDOW_MAX_BYTES,
                  "tcp: window per socket, bytes (default F x RTT\n"
                  "with --flow-gbps, else 3145728)"),
      CLI_OPT_REAL(0, "flow-gbps", "F", &a->x.path_flow_gbps,
                   TRACE_MIN_BANDWIDTH_GBPS, 1e9,
                   "tcp: a measured single stream's rate on the\n"
                   "link, Gbit/s: its window is F x RTT"),
      CLI_OPT_REAL(0, "loss", "P", &a->x.loss, 0, TRACE_LOSS_MAX,
                   "tcp: packet loss rate in [0, 1): each socket at\n"
                   "most Padhye et al.'s rate at P and the RTT"),
      CLI_OPT_INT(0, "sockets", "N", &a->sockets, 1, TRANSPORT_SOCKETS_MAX,
                  "NCCL connection of N TCP sockets (1..64)"),
      CLI_OPT_REAL(0, "reverse-latency-ms", "R", &a->x.back_ms, 0, 1e7,
                   "one-way delay of the return path (ACKs),\n"
                   "ms (default L; DT-FM's tc delayed one direction)"),
      CLI_OPT_FLAG(0, "json", &a->json,
                   "one JSON object: time_s (of --network-model, default\n"
                   "netem), sockets and by_network"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&TRANSFER, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  if (a->x.latency_ms < 0 || a->x.bandwidth_gbps < 0 || a->x.bytes < 0)
    return cli_usage_error("transfer", "--latency-ms, --bandwidth-gbps and "
                           "--bytes are required");
  if (a->x.loss >= TRACE_LOSS_MAX)
    return cli_usage_error("transfer", "--loss wants a rate in [0, 1), "
                           "not %g", a->x.loss);
  if (a->x.back_ms < 0) a->x.back_ms = a->x.latency_ms;
  a->x.sockets = (int)a->sockets;
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
  json_object_set_new(o, "bytes", json_real(a->x.bytes));
  json_object_set_new(o, "latency_ms", json_real(a->x.latency_ms));
  json_object_set_new(o, "bandwidth_gbps", json_real(a->x.bandwidth_gbps));
  json_object_set_new(o, "reverse_latency_ms", json_real(a->x.back_ms));
  json_object_set_new(o, "sockets", json_integer(a->sockets > 0 ? a->sockets : 1));
  sim_transfer x = a->x;
  x.transport.window_bytes = (double)a->window;
  transport_path p = sim_transfer_path(&x);
  json_object_set_new(o, "window_bytes", json_real(p.window));
  json_object_set_new(o, "flow_gbps", json_real(a->x.path_flow_gbps));
  json_object_set_new(o, "loss", json_real(a->x.loss));
  json_object_set_new(o, "loss_gbps", cli_json_number(p.loss_bps * 8e-9));
  cli_print_json(o, CLI_JSON);
}

int cli_transfer(int argc, char **argv) {
  transfer_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  /* A flow past the span a simulation covers has no time: refuse it here
   * when even the ideal time is too long, after the run otherwise (tcp's
   * window can make it far slower than ideal). */
  double ideal_s = a.x.bytes * 8 / (a.x.bandwidth_gbps * 1e9) + a.x.latency_ms * 1e-3;
  if (ideal_s > SIMTIME_LIMIT_S)
    return cli_error("transfer: %g bytes at %g Gbit/s take %.3g s, past "
                     SIMTIME_LIMIT_TEXT, a.x.bytes, a.x.bandwidth_gbps, ideal_s);
  double t[3];
  for (int m = 0; m < 3; m++) {
    sim_transfer x = a.x;
    x.transport = transport_options_default();
    x.transport.model = (transport_model)m;
    x.transport.window_bytes = (double)a.window;
    t[m] = sim_transfer_s(&x);
    if (isnan(t[m]))
      return cli_error("transfer: %g bytes under %s arrive past "
                       SIMTIME_LIMIT_TEXT, a.x.bytes,
                       transport_model_name((transport_model)m));
  }
  if (a.json) {
    print_json(&a, t, a.model < 0 ? TRANSPORT_MODEL_DEFAULT : a.model);
    return CLI_OK;
  }
  if (a.sockets > 0)
    printf("one NCCL message of %.0f bytes over %ld socket%s, %g ms one-way "
           "(%g ms back), %g Gbit/s\n", a.x.bytes, a.sockets,
           a.sockets == 1 ? "" : "s", a.x.latency_ms, a.x.back_ms,
           a.x.bandwidth_gbps);
  else
    printf("one flow of %.0f bytes, %g ms one-way (%g ms back), %g Gbit/s\n",
           a.x.bytes, a.x.latency_ms, a.x.back_ms, a.x.bandwidth_gbps);
  for (int m = 0; m < 3; m++)
    if (a.model < 0 || a.model == m)
      printf("  %-6s %12.6f s\n", transport_model_name((transport_model)m), t[m]);
  return CLI_OK;
}
