/* cli_run: `geodes run [SCENARIO] [--db FILE]` — the main job: prints the
 * scenario, runs the study of analysis/study (the placements under each
 * network model, the validation of the cost model, everything stored in
 * the results database) and prints what it reports as it goes, then the
 * command that draws the plots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/study.h"
#include "analysis/validate.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"

typedef struct run_args {
  const char *scenario, *db;
  long samples;
  bool quiet;
  cli_workload_opts wo;
} run_args;

static const cli_opt_command RUN = {
    .name = "run",
    .usage =
        "usage: geodes run [SCENARIO] [--db FILE] [--samples N] [OPTIONS]\n\n"
        "The main job: studies one scenario (a built-in name or a JSON file;\n"
        "default worldwide). Prints the scenario (its site-level latency and\n"
        "bandwidth matrices; past 16 sites, each site's least, median and\n"
        "greatest link instead); simulates the fixed placements\n"
        "(dtfm-identity, megatron-order, random) and the schedulers'\n"
        "choices (greedy, gcma, and sim: GCMA's best improved by moves "
        "judged\n"
        "by simulation, searched under each model) under each network model\n"
        "(ideal, netem, tcp) next to their DT-FM score and predicted time;\n"
        "validates the cost model on a sample of allocations (as `geodes\n"
        "validate --network all`); stores every point, the run and the\n"
        "convergence of each search (greedy, gcma, sim/MODEL) in the "
        "results\n"
        "database; and prints the command that draws the plots.\n\n",
    .width = 27, .args_min = 0, .args_max = 1};

static void print_sites(const scenario *s) {
  int w = cli_site_width(s, 18);
  printf("\n%-3s %-*s %-9s %-6s %9s  %s\n", "#", w, "SITE", "DEVICES", "GPU",
         "NIC_GBPS", "NIC");
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *t = &s->sites[i];
    char range[32];
    snprintf(range, sizeof range, "%d-%d", t->first_device,
             t->first_device + t->ndevices - 1);
    printf("%-3d %-*s %-9s %-6s %9g  %s\n", i, w, t->name, range, t->gpu,
           t->nic_gbps, t->nic_shared ? "shared by the site" : "per device");
  }
}

/* One site-level matrix; column j is site j (numbered as in the table). */
static void print_matrix(const scenario *s, const char *title, bool latency) {
  int w = cli_site_width(s, 18);
  printf("\n%s\n%-*s", title, 4 + w, "");
  for (int j = 0; j < s->nsites; j++) printf(" %8d", j);
  putchar('\n');
  for (int i = 0; i < s->nsites; i++) {
    printf("%-3d %-*s", i, w, s->sites[i].name);
    for (int j = 0; j < s->nsites; j++) {
      trace_value v = trace_at(s->network, i, j, 0);
      printf(" %8.4g", latency ? v.latency_ms : v.bandwidth_gbps);
    }
    putchar('\n');
  }
}

/* Past this many sites a site-level matrix is wider than a screen: each
 * site's links to the others are summarised instead (`geodes scenarios
 * --export` writes every value). */
#define RUN_MATRIX_SITES_MAX 16

/* Each site's links to the others at t = 0: the least, median and
 * greatest one-way latency and bandwidth, beside the link inside it. */
static void print_spread(const scenario *s) {
  int w = cli_site_width(s, 18);
  printf("\nlinks to the other sites at t = 0 (%d sites: each site's least, "
         "median and greatest;\n every value: geodes scenarios --export "
         "%s)\n%-3s %-*s %9s %9s %9s %9s  %9s %9s %9s %9s\n", s->nsites,
         s->name, "#", w, "SITE", "SELF_MS", "MIN_MS", "MEDIAN_MS", "MAX_MS",
         "SELF_GB", "MIN_GB", "MEDIAN_GB", "MAX_GB");
  for (int i = 0; i < s->nsites; i++) {
    trace_value self = trace_at(s->network, i, i, 0);
    trace_spread lat, bw;
    trace_site_spread(s->network, i, 0, &lat, &bw);
    printf("%-3d %-*s %9.4g %9.4g %9.4g %9.4g  %9.4g %9.4g %9.4g %9.4g\n",
           i, w, s->sites[i].name, self.latency_ms, lat.min, lat.median,
           lat.max, self.bandwidth_gbps, bw.min, bw.median, bw.max);
  }
}

/* The workload's layers: the scenario's, else its model's depth (0 in
 * the file means the model's; issue 33: run printed "0 layers"). */
static int layers_of(const scenario *s) {
  const spec_model *m = spec_model_find(s->workload.model);
  return s->workload.layers > 0 ? s->workload.layers : m ? m->layers : 0;
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
      w->model, layers_of(s), w->batch, w->micro_batch, w->stages, w->replicas,
      w->schedule, w->dp_algo, w->recompute ? ", recompute" : "");
  transport_options t = transport_options_default();
  /* the default; the table also has the others */
  cli_print_transport(&t, s, NULL, NAN);
  cli_print_whatif(s);
  cli_print_params();
  print_sites(s);
  if (s->nsites > RUN_MATRIX_SITES_MAX) {
    print_spread(s);
  } else {
    print_matrix(s, "latency_ms (one-way, t = 0)", true);
    print_matrix(s, "bandwidth_gbps (t = 0)", false);
  }
  if (!trace_is_static(s->network))
    printf("\nThe network varies over time (trace of %g s).\n",
           trace_duration_s(s->network));
  if (s->noverrides) printf("\n%d device-pair overrides.\n", s->noverrides);
}

/* What the study's hooks share: the scenario and the progress reporter,
 * whose bar's line a table row ends first (stdout and stderr may be one
 * terminal). */
typedef struct heard {
  const scenario *s;
  cli_progress bar;
} heard;

static void progress(void *ctx, const char *phase, long done, long total) {
  cli_progress_update(&((heard *)ctx)->bar, phase, (double)done,
                      (double)total, NULL);
}

/* The table has a column per network model. */
_Static_assert(TRANSPORT_NMODELS == 3,
               "a column per network model: IDEAL_S, NETEM_S, TCP_S");

static void print_table_head(void *ctx) {
  cli_progress_interrupt(&((heard *)ctx)->bar);
  printf("\n%-14s %9s %9s %9s %11s  %9s %9s %9s %9s\n", "PLACEMENT",
         "SCORE_S", "DP_S", "PP_S", "PREDICTED_S", "IDEAL_S", "NETEM_S",
         "TCP_S", "USD/1KS");
}

/* Score and prediction: of the placement simulated under the default
 * model, tcp (for sim: the one its search under it found). */
static void print_placement(void *ctx, const char *method,
                            const db_result rows[TRANSPORT_NMODELS]) {
  cli_progress_interrupt(&((heard *)ctx)->bar);
  const db_result *shown = &rows[TRANSPORT_MODEL_DEFAULT];
  char usd[32];
  printf("%-14s %9.3f %9.3f %9.3f %11.3f  %9.3f %9.3f %9.3f %9s\n", method,
         shown->score_s, shown->dp_cost_s, shown->pp_cost_s,
         shown->predicted_iteration_s, rows[TRANSPORT_IDEAL].iteration_s,
         rows[TRANSPORT_NETEM].iteration_s, rows[TRANSPORT_TCP].iteration_s,
         isnan(shown->usd_per_1k_samples)
             ? "-" : cli_real(usd, sizeof usd, "%.4g",
                              shown->usd_per_1k_samples));
}

static void print_table_notes(void *ctx) {
  const scenario *s = ((heard *)ctx)->s;
  cli_progress_interrupt(&((heard *)ctx)->bar);
  printf("(score: DT-FM's cost model, communication only, s; predicted: "
         "closed-form\n iteration time under tcp; simulated: one "
         "iteration per network model;\n random drawn with seed %llu; "
         "gcma: DT-FM's scheduler, 5000 candidates; sim: GCMA's\n best "
         "improved by moves judged by simulation under each model, score "
         "and\n prediction of its tcp search; USD/1KS: dollars per 1,000 "
         "samples under tcp,\n - where the scenario does not price every "
         "part: traces/FORMATS.md)\n",
         (unsigned long long)s->seed);
}

static void print_validation(void *ctx, const validate_report *r) {
  cli_progress_interrupt(&((heard *)ctx)->bar);
  printf("\nCan the cost model be trusted? %d allocations (fixed, scheduled, "
         "perturbed,\nrandom), DT-FM score vs simulated time:\n\n",
         validate_nsamples(r));
  cli_validate_verdicts(r);
  printf("(spearman, kendall: 1 = the score ranks as simulation does; mape: "
         "error of\n the predicted iteration time; regret: how much slower "
         "the best-scored\n allocation is than the best simulated one)\n");
}

static int study(const char *name, const scenario *s, const run_args *a,
                 int argc, char **argv, err *e) {
  const cli_workload_opts *wo = &a->wo;
  const char *db_path = a->db;
  char *cmd;
  heard h = {.s = s};
  cli_progress_start(&h.bar, "run", a->quiet);
  study_opts o = {
      .name = name, .s = s, .knobs = &wo->k,
      .transport = cli_transport(wo, TRANSPORT_MODEL_DEFAULT),
      .samples = (int)a->samples, .db_path = db_path,
      .run = cli_run_row(argc, argv, s, &cmd),
      .hooks = {.ctx = &h, .table = print_table_head,
                .placement = print_placement, .table_done = print_table_notes,
                .validated = print_validation, .progress = progress}};
  int rc = study_run(&o, e);
  cli_progress_end(&h.bar);
  free(cmd);
  if (rc == ERR_OK)
    printf("\nStored in %s. Plots: " GEODES_PLOT " %s --out plots\n",
           db_path, db_path);
  return rc;
}



/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, run_args *a) {
  *a = (run_args){.scenario = SCENARIO_DEFAULT_NAME, .db = "geodes.db"};
  /* samples 0: validate_default_samples */
  cli_workload_init(&a->wo);
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "db", "FILE", &a->db,
                     "results database (default geodes.db)"),
      CLI_OPT_INT(0, "samples", "N", &a->samples, 2, 100000,
                  "validation sample size (default " CLI_STR(
                      VALIDATE_DEFAULT_SAMPLES) "; past\n" CLI_STR(
                      VALIDATE_FULL_DEVICES) " devices " CLI_STR(
                      VALIDATE_DEFAULT_SAMPLES) " x " CLI_STR(
                      VALIDATE_FULL_DEVICES) " / devices)"),
      CLI_OPT_QUIET(&a->quiet),
      CLI_OPT_HELP(),
      CLI_WORKLOAD_OPTS(&a->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&RUN, opts, argc, argv, &args, &nargs);
  if (rc == CLI_OK && nargs) a->scenario = args[0];
  if (rc == CLI_OK && a->wo.layers_per_stage)
    return cli_usage_error("run", "--layers-per-stage is for simulate, "
                           "predict, schedule and validate: run's rows are "
                           "sweep points, whose keys hold no layer split");
  return rc;
}

int cli_run(int argc, char **argv) {
  run_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  scenario *s = scenario_load(a.scenario, &e);
  if (!s || cli_workload_apply(&a.wo, s, &e) != ERR_OK ||
      study_check(s, &e) != ERR_OK) {
    scenario_free(s);
    return cli_fail("run", &e);
  }
  print_scenario(s);
  fflush(stdout);
  rc = study(a.scenario, s, &a, argc, argv, &e) == ERR_OK
           ? CLI_OK
           : cli_fail("run", &e);
  scenario_free(s);
  return rc;
}
