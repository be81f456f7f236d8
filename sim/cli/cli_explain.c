/* cli_explain: `geodes explain SCENARIO (--alloc FILE | --method NAME)
 * [--top K] [--what-if SPECS] [--json]` — why one iteration takes its
 * time: its critical path (sim/critpath.h) folded by phase and resource
 * class, the links and devices that hold it longest, and what a change of
 * each would buy, by re-simulation (sim/whatif.h). `simulate --explain`
 * prints the same report after its own.
 * Invariant: the allocation is placed once and held fixed for every
 * re-run; resources are released at the single exit of cli_explain. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"
#include "sim/critpath.h"
#include "sim/linkstats.h"
#include "sim/place.h"
#include "sim/whatif.h"
#include "traces/scenario_subset.h"

static const cli_opt_command EXPLAIN = {
    .name = "explain",
    .usage =
        "usage: geodes explain SCENARIO (--alloc FILE | --method NAME)\n"
        "                      [--top K] [--what-if SPECS] [--link-stats "
        "FILE]\n                      [--json] [OPTIONS]\n\n"
        "Why one iteration takes its time: its critical path (from the task "
        "that\nended last, back through what each task waited for), folded "
        "by phase\nand resource class; the links (site pairs) and devices "
        "longest on it,\nwith the cause of each transfer's rate (link, nic, "
        "flow-cap, window,\nloss, shared; a send takes its stream's) and its "
        "link's latency; and,\nby re-simulating under the same allocation, "
        "what each of the top K\nresources would buy: a link's bandwidth x2 "
        "and x0.5, its latency x0.5,\nand when its window or loss bound held "
        "it, the path's window at its\nbandwidth-delay product, a stream "
        "twice as fast, twice the receiving\nsite's sockets, the smaller "
        "site's window; a device's speed x2;\nranked by the time saved.\n\n"
        "What-ifs (--what-if, several joined by ';' or given one each), each\nrun alone:\n"
        "  link:A-B:SETTINGS      both directions between sites A and B\n"
        "  link:A>B:SETTINGS      the direction A -> B only; SETTINGS joined "
        "by ',':\n"
        "                         bw=F, lat=F (factors), flow=G (the link's\n"
        "                         flow_gbps: G Gbit/s), window=B (its\n"
        "                         window_bytes: B bytes)\n"
        "  site:NAME=GPU          the site's devices become that GPU type\n"
        "  site:NAME:speed=F      the site's devices compute F x faster\n"
        "  site:NAME:window=B,sockets=N  the site's tcp_window_bytes, its\n"
        "                         nccl_sockets (values; either or both)\n"
        "  device:N:speed=F       device N computes F x faster\n"
        "Factors are finite and > 0; values are within the file keys' "
        "bounds.\nA connection's window is the smaller of its two sites' "
        "unless the\nlink (or the run) states one: raising one site may gain "
        "nothing.\n\n",
    .width = 20, .args_min = 1, .args_max = 1, .missing = "which SCENARIO?"};

typedef struct explain_args {
  const char *scenario, *alloc_file, *method, *link_stats;
  const char *resolution_text; /* --resolution-s as typed, or NULL */
  cli_opt_list what_if; /* every --what-if, each of specs joined by ';' */
  int network;
  long top, steps;
  double resolution_s;
  bool json;
  bool quiet;
  cli_workload_opts wo;
} explain_args;

static int parse_args(int argc, char **argv, explain_args *p) {
  *p = (explain_args){.network = TRANSPORT_MODEL_DEFAULT, .top = 5,
                      .steps = 30, .resolution_s = 0.1};
  cli_workload_init(&p->wo);
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "alloc", "FILE", &p->alloc_file, CLI_ALLOC_HELP),
      CLI_OPT_STRING(0, "method", "NAME", &p->method, cli_method_help()),
      CLI_OPT_ENUM(0, "network-model", "M", &p->network, transport_model_names,
                   NULL, "tcp (default), netem or ideal (what-ifs)"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_INT(0, "top", "K", &p->top, 0, 1000,
                  "sensitivities of the top K resources of the\npath (5; 0: "
                  "none)"),
      CLI_OPT_LIST(0, "what-if", "SPECS", &p->what_if,
                     "what-ifs to rank beside them, joined by ';'\n"
                     "(or one --what-if each)"),
      CLI_OPT_INT(0, "steps", "N", &p->steps, 0, 1000000,
                  "steps of the path the table lists (30)"),
      CLI_OPT_STRING(0, "link-stats", "FILE", &p->link_stats,
                     "link utilisation over time as CSV"),
      CLI_OPT_REAL_KEEP(0, "resolution-s", "S", &p->resolution_s, 1e-6, 1e6,
                        &p->resolution_text,
                        "--link-stats' time step (0.1; only with it)"),
      CLI_OPT_FLAG(0, "json", &p->json, "one JSON object on stdout"),
      CLI_OPT_QUIET(&p->quiet),
      CLI_OPT_HELP(),
      CLI_WORKLOAD_OPTS(&p->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&EXPLAIN, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  p->scenario = args[0];
  if (p->resolution_text && !p->link_stats) /* issue 35, 5: was ignored */
    return cli_usage_error("explain", "--resolution-s %s is --link-stats' "
                           "step: give --link-stats FILE, or leave it out",
                           p->resolution_text);
  return cli_check_placement("explain", p->alloc_file, &p->method);
}

/* The --what-if texts (sim_whatif_parse_list) into *out (free) and *n; a
 * bad or empty one is cmd's usage error naming --what-if and its text. */
static int explain_whatifs(const char *cmd, const scenario *s,
                           const char *const *specs, int nspecs,
                           sim_whatif **out, int *n) {
  err e = {0};
  if (sim_whatif_parse_list(s, specs, nspecs, out, n, &e) == ERR_OK)
    return CLI_OK;
  return cli_usage_error(cmd, "--what-if %s", e.msg);
}

int cli_explain(int argc, char **argv) {
  explain_args p;
  int rc = parse_args(argc, argv, &p);
  if (rc) free(p.what_if.items);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  alloc *a = NULL;
  sim_whatif *w = NULL;
  int nw = 0;
  scenario *parent = scenario_load(p.scenario, &e), *view = NULL;
  if (!parent ||
      cli_workload_alloc(&p.wo, p.alloc_file, parent, &a, &view, &e) != ERR_OK)
    goto fail;
  const scenario *s = view ? view : parent; /* a file's devices work */
  if ((rc = cli_workload_usage("explain", &p.wo, parent)) ||
      (rc = explain_whatifs("explain", s, p.what_if.items,
                             (int)p.what_if.n, &w, &nw)))
    goto done;
  sim_options o = sim_options_default();
  o.transport = cli_transport(&p.wo, (transport_model)p.network);
  o.seed = s->seed;
  if (!a && !(a = sim_place_scenario(s, p.method, &o, &e))) goto fail;
  cli_explain_opts eo = {.top = (int)p.top, .steps = (int)p.steps,
                         .whatifs = w, .nwhatifs = nw, .json = p.json,
                         .link_stats = p.link_stats,
                         .resolution_s = p.resolution_s,
                         .placement = p.alloc_file ? p.alloc_file : p.method,
                         .quiet = p.quiet};
  rc = cli_explain_report("explain", s, a, &o, &eo);
  goto done;
fail:
  rc = cli_fail("explain", &e);
done:
  free(p.what_if.items);
  free(w);
  alloc_free(a);
  scenario_subset_free(view);
  scenario_free(parent);
  return rc;
}
