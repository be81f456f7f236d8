/* cli_run: `geodes run [SCENARIO] [--db FILE]` — the full study of one
 * scenario: the scenario, the fixed placements and the schedulers' choices
 * simulated under each network model, the validation statistics of the
 * cost model, everything stored in the results database (the placements as
 * sweep points, so a later sweep reuses them; --gpu is part of their key),
 * the convergence of each search it runs (greedy, gcma) under its method's
 * name, and the command that draws the plots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "models/cost.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "analysis/eval.h"
#include "analysis/validate.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "traces/builtin.h"
#include "traces/mem.h"

static void run_help(void) {
  printf(
      "usage: geodes run [SCENARIO] [--db FILE] [--samples N] [OPTIONS]\n\n"
      "The main job: studies one scenario (a built-in name or a JSON file;\n"
      "default worldwide). Prints the scenario; simulates the fixed\n"
      "placements (dtfm-identity, megatron, random) and the schedulers'\n"
      "choices (greedy, gcma, and sim: GCMA's best improved by moves judged\n"
      "by simulation, searched under each model) under each network model\n"
      "(ideal, netem, tcp) next to their DT-FM score and predicted time;\n"
      "validates the cost model on a sample of allocations (as `geodes\n"
      "validate --network all`); stores every point, the run and the\n"
      "convergence of each search (greedy, gcma, sim/MODEL) in the results\n"
      "database; and prints the command that draws the plots.\n\n"
      "  --db FILE                  results database (default geodes.db)\n"
      "  --samples N                validation sample size (default %d)\n"
      "  --help                     this text\n\n%s",
      VALIDATE_DEFAULT_SAMPLES, cli_workload_help);
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

static const char *const METHODS[] = {"dtfm-identity", "megatron", "random",
                                      "greedy", "gcma", "sim"};
#define NMETHODS 6

/* True for the placements that are not searches (one candidate). */
static bool is_fixed(const char *method) {
  return strcmp(method, "dtfm-identity") == 0 ||
         strcmp(method, "megatron") == 0 || strcmp(method, "random") == 0;
}

/* The sweep point of (method, network) under the options of this run, so
 * its key is the one `geodes sweep` gives the same point. */
static sweep_point run_point(const char *scenario_name,
                             const cli_workload_opts *wo, const char *method,
                             const char *network) {
  return (sweep_point){
      .scenario = scenario_name, .method = method, .network = network,
      .seed = wo->k.seed, .layers = wo->k.layers, .batch = wo->k.batch,
      .micro_batch = wo->k.micro_batch,
      .micro_batches_per_pass = wo->k.micro_batches_per_pass,
      .window_bytes = wo->window_bytes, .schedule = wo->k.schedule,
      .dp_algo = wo->k.dp_algo, .gpu = wo->k.gpu, .bandwidth_scale = 1,
      .latency_scale = 1,
      .activation_gb = wo->k.activation_gb, .gradient_gb = wo->k.gradient_gb,
      .sockets = wo->k.sockets, .runtime = wo->k.runtime,
      .iterations = -1, .checkpoint_every = -1};
}

/* The placement of method; a search's convergence goes to the database
 * under the method's name (a fixed placement has none worth a curve). `sim`
 * searches by simulation under network model net, and its curve is named
 * "sim/NET". */
static alloc *place(const scenario *s, const cost_ctx *c, const char *method,
                    transport_model net, const cli_workload_opts *wo, db *d,
                    int64_t run, err *e) {
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  sim_options so = sim_options_default();
  so.transport = cli_transport(wo, net);
  so.seed = s->seed;
  search_result *r = sim_place_search(s, c, method, &o, &so, e);
  if (!r) return NULL;
  char curve[64];
  snprintf(curve, sizeof curve, "%s%s%s", method,
           schedule_method_needs_objective(method) ? "/" : "",
           schedule_method_needs_objective(method) ? transport_model_name(net)
                                                   : "");
  int rc = ERR_OK;
  if (!is_fixed(method)) {
    rc = db_begin(d, e);
    for (long i = 0; rc == ERR_OK && i < r->candidates; i++)
      rc = db_convergence_put(d, run, curve, i + 1, r->convergence[i], e);
    if (rc == ERR_OK) rc = db_commit(d, e);
  }
  alloc *a = r->best;
  r->best = NULL;
  search_result_free(r);
  return rc == ERR_OK ? a : (alloc_free(a), NULL);
}

/* What the rows of one study share: they are a sweep's, with its keys and
 * identities (content: the scenario's hash as loaded, before the knobs). */
typedef struct study_rows {
  const char *name;
  const scenario *s;
  const cli_workload_opts *wo;
  const cost_ctx *c;
  db *d;
  int64_t run;
  uint64_t content, data;
} study_rows;

/* Simulates a under net into row and stores it as the sweep point (name,
 * knobs, method, net) would: the same key, the same identity. */
static int store_row(const study_rows *st, const alloc *a, const char *method,
                     transport_model net, db_result *row, err *e) {
  char key[1024], identity[17];
  const char *name = transport_model_name(net);
  int rc = db_begin(st->d, e);
  if (rc == ERR_OK)
  {
    transport_options t = cli_transport(st->wo, net);
    rc = eval_alloc(st->s, st->c, a, &t, row, e);
  }
  sweep_point p = run_point(st->name, st->wo, method, name);
  p.scenario_hash = st->content, p.data_hash = st->data;
  sweep_point_key(&p, key, sizeof key);
  sweep_point_identity(&p, key, identity);
  row->key = key, row->identity = identity;
  row->study = "sweep", row->scenario = st->name;
  row->method = method, row->network_model = name;
  if (rc == ERR_OK && db_result_put(st->d, st->run, row, e) < 0) rc = e->code;
  if (rc == ERR_OK) rc = db_commit(st->d, e);
  row->key = row->identity = NULL; /* borrowed from this frame */
  return rc;
}

/* Placements x network models: simulated, printed, stored. */
static int study_placements(const char *name, const scenario *s,
                            const cli_workload_opts *wo, db *d, int64_t run,
                            err *e) {
  scenario *raw = scenario_load(name, e);
  if (!raw) return e->code;
  study_rows st = {.name = name, .s = s, .wo = wo, .d = d, .run = run,
                   .content = scenario_hash(raw), .data = builtin_hash()};
  scenario_free(raw);
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  if (!(st.c = c)) return e->code;
  printf("\n%-14s %9s %9s %9s %11s  %9s %9s %9s\n", "PLACEMENT", "SCORE_S",
         "DP_S", "PP_S", "PREDICTED_S", "IDEAL_S", "NETEM_S", "TCP_S");
  int rc = ERR_OK;
  for (int m = 0; m < NMETHODS && rc == ERR_OK; m++) {
    /* A search judged by simulation places once per network model (the
     * sweep point (sim, NET) means exactly that); the others once. */
    bool per_net = schedule_method_needs_objective(METHODS[m]);
    alloc *a = NULL;
    db_result row[VALIDATE_NETWORKS];
    for (int n = 0; n < VALIDATE_NETWORKS; n++) db_result_init(&row[n]);
    for (int n = 0; n < VALIDATE_NETWORKS && rc == ERR_OK; n++) {
      if (!a || per_net) {
        alloc_free(a);
        if (!(a = place(s, c, METHODS[m], (transport_model)n, wo, d, run, e))) {
          rc = e->code;
          break;
        }
      }
      rc = store_row(&st, a, METHODS[m], (transport_model)n, &row[n], e);
    }
    /* Score and prediction: of the placement simulated under netem (for
     * sim: the one its netem search found). */
    const db_result *shown = &row[TRANSPORT_NETEM];
    if (rc == ERR_OK)
      printf("%-14s %9.3f %9.3f %9.3f %11.3f  %9.3f %9.3f %9.3f\n",
             METHODS[m], shown->score_s, shown->dp_cost_s, shown->pp_cost_s,
             shown->predicted_iteration_s, row[0].iteration_s,
             row[1].iteration_s, row[2].iteration_s);
    for (int n = 0; n < VALIDATE_NETWORKS; n++) db_result_clear(&row[n]);
    alloc_free(a);
  }
  cost_ctx_free(c);
  if (rc == ERR_OK)
    printf("(score: DT-FM's cost model, communication only, s; predicted: "
           "closed-form\n iteration time under netem; simulated: one "
           "iteration per network model;\n random drawn with seed %llu; "
           "gcma: DT-FM's scheduler, 5000 candidates; sim: GCMA's\n best "
           "improved by moves judged by simulation under each model, score "
           "and\n prediction of its netem search)\n",
           (unsigned long long)s->seed);
  return rc;
}

static int study_validation(const scenario *s, long samples,
                            const cli_workload_opts *wo, db *d, int64_t run,
                            err *e) {
  validate_opts o = {.samples = (int)samples, .networks = 7u,
                     .transport = cli_transport(wo, TRANSPORT_NETEM)};
  validate_report *r = validate_run(s, &o, e);
  if (!r) return e->code;
  printf("\nCan the cost model be trusted? %d allocations (fixed, scheduled, "
         "perturbed,\nrandom), DT-FM score vs simulated time:\n\n",
         validate_nsamples(r));
  cli_validate_verdicts(r);
  printf("(spearman, kendall: 1 = the score ranks as simulation does; mape: "
         "error of\n the predicted iteration time; regret: how much slower "
         "the best-scored\n allocation is than the best simulated one)\n");
  int rc = validate_store(d, run, r, e);
  validate_report_free(r);
  return rc;
}

static char *command_line(int argc, char **argv) {
  size_t len = 16;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *cmd = mem_alloc(len);
  strcpy(cmd, "geodes");
  for (int i = 0; i < argc; i++) strcat(strcat(cmd, " "), argv[i]);
  return cmd;
}

static int study(const char *name, const scenario *s,
                 const cli_workload_opts *wo, const char *db_path,
                 long samples, int argc, char **argv, err *e) {
  db *d = db_open(db_path, e);
  if (!d) return e->code;
  char *cmd = command_line(argc, argv);
  int64_t run = db_run_begin(
      d, &(db_run){cmd, s->name, (int64_t)s->seed, GEODES_VERSION, GEODES_GIT},
      e);
  free(cmd);
  int rc = run < 0 ? (int)run : study_placements(name, s, wo, d, run, e);
  if (rc == ERR_OK)
    rc = study_validation(s, samples, wo, d, run, e);
  if (run > 0) db_run_end(d, run, rc ? "error" : "ok", NULL);
  db_close(d);
  if (rc == ERR_OK)
    printf("\nStored in %s. Plots: " GEODES_PLOT " %s --out plots\n",
           db_path, db_path);
  return rc;
}

/* An unknown GPU (--gpu or the scenario's) fails here, before the database
 * is opened and a run row written. */
static bool gpus_known(const scenario *s, err *e) {
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  bool ok = spec_device_gpus(s, gpu, e) == ERR_OK;
  free(gpu);
  return ok;
}

int cli_run(int argc, char **argv) {
  static const struct option own[] = {
      {"db", required_argument, NULL, 'd'},
      {"samples", required_argument, NULL, 'n'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  struct option *opts = cli_workload_options(own);
  cli_workload_opts wo;
  cli_workload_init(&wo);
  const char *db_path = "geodes.db";
  long samples = VALIDATE_DEFAULT_SAMPLES;
  int c, rc = CLI_OK;
  optind = 1;
  while (rc == CLI_OK &&
         (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    int handled = cli_workload_parse("run", c, optarg, &wo);
    if (handled < 0) {
      rc = CLI_USAGE;
    } else if (handled) {
      continue;
    } else if (c == 'h') {
      run_help();
      free(opts);
      return CLI_OK;
    } else if (c == 'd') {
      db_path = optarg;
    } else if (c == 'n') {
      if (!cli_parse_int("run", "--samples", optarg, 2, 100000, &samples))
        rc = CLI_USAGE;
    } else if (c == ':') {
      rc = cli_usage_error("run", "%s needs an argument", argv[optind - 1]);
    } else {
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
  if (!s || cli_workload_apply(&wo, s, &e) != ERR_OK || !gpus_known(s, &e)) {
    scenario_free(s);
    return cli_error("%s", e.msg);
  }
  print_scenario(s);
  fflush(stdout);
  rc = study(name, s, &wo, db_path, samples, argc, argv, &e) == ERR_OK
           ? CLI_OK
           : cli_error("%s", e.msg);
  scenario_free(s);
  return rc;
}
