/* cli_run: `geodes run [SCENARIO]` — for now, the scenario itself: its
 * sites and the site-level latency and bandwidth matrices at t = 0, after the
 * shared workload options are applied. It will grow into the full study. */
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "models/cost.h"
#include "sim/cli/cli.h"
#include "sim/sim.h"

static void run_help(void) {
  printf(
      "usage: geodes run [SCENARIO] [OPTIONS]\n\n"
      "Studies one scenario (a built-in name or a JSON file; default\n"
      "worldwide): its sites, the site-level latency (ms, one-way) and\n"
      "bandwidth (Gbit/s) matrices at t = 0, then the megatron, random and\n"
      "dtfm-identity placements side by side: DT-FM's score and one\n"
      "simulated iteration under the netem network model.\n\n"
      "  --help                     this text\n\n%s",
      cli_workload_help);
}

static void print_sites(const scenario *s) {
  printf("\n%-3s %-18s %-9s %-6s %9s  %s\n", "#", "SITE", "DEVICES", "GPU",
         "NIC_GBPS", "NIC");
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *t = &s->sites[i];
    char range[32];
    snprintf(range, sizeof range, "%d-%d", t->first_device,
             t->first_device + t->ndevices - 1);
    printf("%-3d %-18s %-9s %-6s %9g  %s\n", i, t->name, range, t->gpu,
           t->nic_gbps, t->nic_shared ? "shared by the site" : "per device");
  }
}

/* One site-level matrix; column j is site j (numbered as in the table). */
static void print_matrix(const scenario *s, const char *title, bool latency) {
  printf("\n%s\n%-22s", title, "");
  for (int j = 0; j < s->nsites; j++) printf(" %8d", j);
  putchar('\n');
  for (int i = 0; i < s->nsites; i++) {
    printf("%-3d %-18.18s", i, s->sites[i].name);
    for (int j = 0; j < s->nsites; j++) {
      trace_value v = trace_at(s->network, i, j, 0);
      printf(" %8.4g", latency ? v.latency_ms : v.bandwidth_gbps);
    }
    putchar('\n');
  }
}

static void print_scenario(const scenario *s) {
  const scenario_workload *w = &s->workload;
  printf("scenario  %s (%s)\n", s->name, s->origin);
  if (s->description[0]) printf("          %s\n", s->description);
  printf("devices   %d in %d sites\n", s->ndevices, s->nsites);
  printf("latency   %s\n", s->latency_convention);
  printf(
      "workload  %s, %d layers, batch %d, micro-batch %d, %d stages x %d "
      "replicas, %s, %s%s\n",
      w->model, w->layers, w->batch, w->micro_batch, w->stages, w->replicas,
      w->schedule, w->dp_algo, w->recompute ? ", recompute" : "");
  print_sites(s);
  print_matrix(s, "latency_ms (one-way, t = 0)", true);
  print_matrix(s, "bandwidth_gbps (t = 0)", false);
  if (!trace_is_static(s->network))
    printf("\nThe network varies over time (trace of %g s).\n",
           trace_duration_s(s->network));
  if (s->noverrides) printf("\n%d device-pair overrides.\n", s->noverrides);
}

/* The fixed placements side by side: DT-FM score and simulated time. */
static int print_placements(const scenario *s, err *e) {
  static const char *const names[] = {"megatron", "random", "dtfm-identity"};
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  if (!c) return e->code;
  printf("\n%-14s %9s %9s %9s %13s %9s %9s %9s %9s\n", "PLACEMENT", "SCORE_S",
         "DP_S", "PP_S", "ITERATION_S", "COMPUTE_S", "BUBBLE_S", "COMM_S",
         "DP_SYNC_S");
  int rc = ERR_OK;
  for (int i = 0; i < 3 && rc == ERR_OK; i++) {
    alloc *a = alloc_fixed(names[i], s->workload.replicas, s->workload.stages,
                           s->seed);
    cost_parts parts;
    cost_alloc(c, a, &parts);
    sim_options o = sim_options_default();
    o.seed = s->seed;
    sim_result r;
    rc = sim_run(s, a, &o, &r, e);
    if (rc == ERR_OK)
      printf("%-14s %9.3f %9.3f %9.3f %13.3f %9.3f %9.3f %9.3f %9.3f\n",
             names[i], parts.score_s, parts.dp_s, parts.pp_s, r.iteration_s,
             r.mean.compute_s, r.mean.bubble_s, r.mean.comm_s,
             r.mean.dp_sync_s);
    sim_result_free(&r);
    alloc_free(a);
  }
  printf("(score: DT-FM's cost model, communication only; iteration: one "
         "simulated\n iteration, netem network, per-device means; random "
         "drawn with seed %llu)\n",
         (unsigned long long)s->seed);
  cost_ctx_free(c);
  return rc;
}

int cli_run(int argc, char **argv) {
  static const struct option own[] = {{"help", no_argument, NULL, 'h'},
                                      {NULL, 0, NULL, 0}};
  struct option *opts = cli_workload_options(own);
  cli_workload_opts wo;
  cli_workload_init(&wo);
  int c, rc = CLI_OK;
  optind = 1;
  while (rc == CLI_OK &&
         (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    int handled = cli_workload_parse("run", c, optarg, &wo);
    if (handled < 0) {
      rc = CLI_USAGE;
    } else if (handled == 0 && c == 'h') {
      run_help();
      free(opts);
      return CLI_OK;
    } else if (handled == 0 && c == ':') {
      rc = cli_usage_error("run", "%s needs an argument", argv[optind - 1]);
    } else if (handled == 0) {
      rc = cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
    }
  }
  free(opts);
  if (rc != CLI_OK) return rc;
  if (argc - optind > 1)
    return cli_usage_error("run", "unexpected argument '%s'", argv[optind + 1]);
  const char *name = optind < argc ? argv[optind] : "worldwide";
  err e = {ERR_OK, ""};
  scenario *s = scenario_load(name, &e);
  if (!s || cli_workload_apply(&wo, s, &e) != ERR_OK) {
    scenario_free(s);
    return cli_error("%s", e.msg);
  }
  print_scenario(s);
  rc = print_placements(s, &e) == ERR_OK ? CLI_OK : cli_error("%s", e.msg);
  scenario_free(s);
  return rc;
}
