/* cli_validate: `geodes validate SCENARIO` — does the DT-FM cost model rank
 * placements as the simulation does? Prints the rank statistics between
 * score and simulated time, the predictor's error and the regret, per
 * network model, and the pairs the model orders most wrongly. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/validate.h"
#include "base/mem.h"
#include "sim/cli/cli.h"
#include "traces/scenario_subset.h"
#include "sim/cli/cli_progress.h"

static const cli_opt_command VALIDATE = {
    .name = "validate",
    .usage =
        "usage: geodes validate SCENARIO [--samples N] [--alloc FILE] "
        "[--db FILE]\n"
        "                       [--json] [--network-model "
        "ideal|netem|tcp|all] [OPTIONS]\n\n"
        "Draws a sample of allocations (dtfm-identity, megatron-order, greedy, "
        "gcma, sim,\n"
        "perturbations of the best-scored one, seeded random ones), scores "
        "each\n"
        "with DT-FM's cost model and the end-to-end predictor, simulates it,\n"
        "and reports, per network model:\n"
        "  spearman  rank correlation of score and simulated time (ties "
        "share\n"
        "            the average rank); 1 = the model ranks as simulation "
        "does\n"
        "  kendall   Kendall's tau-b of the same pairs\n"
        "  mape      mean absolute error of the predicted iteration time, %\n"
        "  regret    simulated time of the best-scored allocation over the "
        "best\n"
        "            simulated time, minus 1 (0 = the model picks the best;\n"
        "            allocations tied at the best score count with their "
        "mean)\n"
        "  and the discordant pairs: the model prefers one, simulation the\n"
        "  other.\n\n",
    .width = 16, .args_min = 1, .args_max = 1,
    .missing = "wants one SCENARIO", .extra = "wants one SCENARIO"};

static json_t *model_json(const validate_model *m) {
  return json_pack("{s:o, s:o, s:o, s:o}", "spearman",
                   cli_json_number(m->spearman), "kendall",
                   cli_json_number(m->kendall), "mape", cli_json_number(m->mape),
                   "regret", cli_json_number(m->regret));
}

/* The points of verdict v (with the plugged model's value when there is
 * one). */
static json_t *points_json(const validate_report *r, int v, bool plugged) {
  json_t *points = json_array();
  for (int i = 0; i < validate_nsamples(r); i++) {
    const db_result *p = validate_row(r, v, i);
    static const char *const cols[] = {"score_s", "predicted_iteration_s",
                                       "iteration_s", NULL};
    json_t *o = json_pack("{s:s}", "kind", p->method);
    cli_result_json(o, p, cols);
    if (plugged)
      json_object_set_new(o, "cost_cmd_s",
                          cli_json_number(validate_cost_cmd_s(r, i)));
    json_array_append_new(points, o);
  }
  return points;
}

static json_t *verdict_json(const validate_report *r, int v) {
  const validate_verdict *d = validate_verdict_at(r, v);
  json_t *worst = json_array();
  for (size_t k = 0; k < d->nworst; k++) {
    const stats_pair *p = &d->worst[k];
    const db_result *a = validate_row(r, v, (int)p->i),
                    *b = validate_row(r, v, (int)p->j);
    json_array_append_new(
        worst, json_pack("{s:i, s:s, s:o, s:o, s:i, s:s, s:o, s:o, s:o}",
                         "preferred", (int)p->i, "preferred_kind", a->method,
                         "preferred_score_s", cli_json_number(a->score_s),
                         "preferred_iteration_s", cli_json_number(a->iteration_s),
                         "other", (int)p->j, "other_kind", b->method,
                         "other_score_s", cli_json_number(b->score_s),
                         "other_iteration_s", cli_json_number(b->iteration_s), "gap",
                         cli_json_number(p->gap)));
  }
  json_t *points = points_json(r, v, d->has_cost_cmd);
  json_t *o = json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
                   "network_model", transport_model_name(d->network), "samples",
                   (json_int_t)d->samples, "spearman", cli_json_number(d->spearman),
                   "kendall", cli_json_number(d->kendall), "mape", cli_json_number(d->mape), "regret",
                   cli_json_number(d->regret), "discordant", (json_int_t)d->discordant,
                   "pairs", (json_int_t)d->pairs, "worst_pairs", worst,
                   "points", points);
  if (d->has_cost_cmd) { /* beside each other, as DESIGN.md section 9 says */
    json_object_set_new(o, "predictor", model_json(&d->predictor));
    json_object_set_new(o, "cost_cmd", model_json(&d->cost_cmd));
  }
  return o;
}

static void print_json(const validate_report *r, const scenario *s,
                       bool all, const transport_options *t) {
  const char *name = s->name;
  json_t *o;
  if (all) {
    json_t *by = json_object();
    for (int v = 0; v < validate_nverdicts(r); v++)
      json_object_set_new(
          by, transport_model_name(validate_verdict_at(r, v)->network),
          verdict_json(r, v));
    o = json_pack("{s:s, s:i, s:o}", "scenario", name, "samples",
                  validate_nsamples(r), "by_network", by);
  } else {
    o = verdict_json(r, 0);
    json_object_set_new(o, "scenario", json_string(name));
  }
  /* the window, sockets and runtime; the model: the one verdict's, or
   * (all) the default's, the others' being under by_network */
  transport_options shown = *t;
  if (!all) shown.model = validate_verdict_at(r, 0)->network;
  if (all) json_object_set_new(o, "network_model", json_string("all"));
  cli_json_setup(o, &shown, s, NULL, NAN);
  cli_print_json(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}

void cli_validate_verdicts(const struct validate_report *r) {
  printf("%-8s %9s %9s %9s %9s %15s\n", "NETWORK", "SPEARMAN", "KENDALL",
         "MAPE_%", "REGRET", "DISCORDANT");
  for (int v = 0; v < validate_nverdicts(r); v++) {
    const validate_verdict *d = validate_verdict_at(r, v);
    char b[4][32];
    printf("%-8s %9s %9s %9s %9s %7zu / %-6zu\n",
           transport_model_name(d->network),
           cli_real(b[0], sizeof b[0], "%.3f", d->spearman),
           cli_real(b[1], sizeof b[1], "%.3f", d->kendall),
           cli_real(b[2], sizeof b[2], "%.1f", d->mape),
           cli_real(b[3], sizeof b[3], "%.3f", d->regret), d->discordant,
           d->pairs);
  }
}

/* Each model beside the others, per network: DT-FM's score, the
 * predictor, and the plugged cost model. */
static void print_models(const validate_report *r, const char *cmd) {
  printf("\n%-8s %-10s %9s %9s %9s %9s\n", "NETWORK", "MODEL", "SPEARMAN",
         "KENDALL", "MAPE_%", "REGRET");
  for (int v = 0; v < validate_nverdicts(r); v++) {
    const validate_verdict *d = validate_verdict_at(r, v);
    const validate_model *m[] = {&d->score_model, &d->predictor, &d->cost_cmd};
    const char *names[] = {"dtfm-score", "predictor", "cost-cmd"};
    for (int k = 0; k < (d->has_cost_cmd ? 3 : 2); k++) {
      char mape[16] = "-";  /* a score is no time: no error to report */
      if (k) cli_real(mape, sizeof mape, "%.1f", m[k]->mape);
      char b[3][32];
      printf("%-8s %-10s %9s %9s %9s %9s\n",
             transport_model_name(d->network), names[k],
             cli_real(b[0], sizeof b[0], "%.3f", m[k]->spearman),
             cli_real(b[1], sizeof b[1], "%.3f", m[k]->kendall), mape,
             cli_real(b[2], sizeof b[2], "%.3f", m[k]->regret));
    }
  }
  if (cmd) printf("(cost-cmd: %s)\n", cmd);
}

static void print_table(const validate_report *r, const char *name,
                        const char *cmd) {
  printf("validation of the DT-FM cost model on %s: %d allocations\n\n",
         name, validate_nsamples(r));
  cli_validate_verdicts(r);
  if (cmd) print_models(r, cmd);
  for (int v = 0; v < validate_nverdicts(r); v++) {
    const validate_verdict *d = validate_verdict_at(r, v);
    if (!d->nworst) continue;
    printf("\nworst-ordered pairs under %s (the model prefers the first):\n",
           transport_model_name(d->network));
    for (size_t k = 0; k < d->nworst; k++) {
      const db_result *a = validate_row(r, v, (int)d->worst[k].i),
                      *b = validate_row(r, v, (int)d->worst[k].j);
      printf("  #%-3zu %-14s score %8.3f s, simulated %8.3f s  vs  #%-3zu "
             "%-14s score %8.3f s, simulated %8.3f s  (+%.1f%%)\n",
             d->worst[k].i, a->method, a->score_s, a->iteration_s,
             d->worst[k].j, b->method, b->score_s, b->iteration_s,
             100 * d->worst[k].gap);
    }
  }
}

/* The validation's hooks: simulations done, and the draw's searches'
 * candidates, to the reporter. */
static void progress(void *ctx, int done, int total) {
  cli_progress_update(ctx, "simulations", done, total, NULL);
}

static void searching(void *ctx, long done, long total, double best_s) {
  (void)best_s;
  cli_progress_update(ctx, "search candidates", (double)done, (double)total,
                      NULL);
}

typedef struct validate_args {
  const char *scenario, *db, *alloc_file;
  int network; /* a transport_model, or TRANSPORT_NMODELS: all */
  long samples;
  bool json, quiet;
  cli_workload_opts wo;
  cli_cost_cmd_opts cc;
} validate_args;

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, validate_args *a) {
  *a = (validate_args){.network = TRANSPORT_MODEL_DEFAULT}; /* samples 0:
                                          validate_default_samples */
  cli_workload_init(&a->wo);
  const cli_opt opts[] = {
      CLI_OPT_INT(0, "samples", "N", &a->samples, 2, 100000,
                  "allocations in the sample (default " CLI_STR(
                      VALIDATE_DEFAULT_SAMPLES) "; past " CLI_STR(
                      VALIDATE_FULL_DEVICES) "\ndevices " CLI_STR(
                      VALIDATE_DEFAULT_SAMPLES) " x " CLI_STR(
                      VALIDATE_FULL_DEVICES) " / devices)"),
      CLI_OPT_ENUM(0, "network-model", "M", &a->network, transport_model_names,
                   "all", "network model, or all (default tcp)"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_STRING(0, "alloc", "FILE", &a->alloc_file,
                     "an allocation file the sample starts with\n"
                     "(kind alloc; its workload, shape and split\n"
                     "are the sample's: traces/FORMATS.md)"),
      CLI_OPT_STRING(0, "db", "FILE", &a->db,
                     "also store every simulated point in FILE"),
      CLI_OPT_FLAG(0, "json", &a->json, "print one JSON object"),
      CLI_OPT_QUIET(&a->quiet),
      CLI_OPT_HELP(),
      CLI_COST_CMD_OPTS(&a->cc),
      CLI_WORKLOAD_OPTS(&a->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&VALIDATE, opts, argc, argv, &args, &nargs);
  if (rc == CLI_OK) a->scenario = args[0];
  return rc;
}

int cli_validate(int argc, char **argv) {
  validate_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  scenario *parent = scenario_load(a.scenario, &e), *view = NULL;
  alloc *mine = NULL;
  if (parent)
    cli_workload_alloc(&a.wo, a.alloc_file, parent, &mine, &view, &e);
  const scenario *s = view ? view : parent; /* a file's devices work */
  bool all = a.network == TRANSPORT_NMODELS;
  cli_progress bar;
  validate_opts o = {
      .samples = (int)a.samples,
      .networks = all ? VALIDATE_ALL_NETWORKS : 1u << a.network,
      .transport = cli_transport(&a.wo, TRANSPORT_MODEL_DEFAULT),
      .cost_cmd = a.cc.cmd, .cost_timeout_s = a.cc.timeout_s,
      .include = mine, .progress = progress, .searching = searching,
      .progress_ctx = &bar};
  cli_progress_start(&bar, "validate", a.quiet);
  validate_report *r = e.code ? NULL : validate_run(s, &o, &e);
  cli_progress_end(&bar);
  if (r && a.db)
    cli_db_record(a.db, argc, argv, s, validate_store_rows, r, &e);
  if (e.code) {
    rc = cli_fail("validate", &e);
  } else {
    if (a.json) print_json(r, s, all, &o.transport);
    else {
      cli_print_setup(&o.transport, s, NULL, NAN);
      print_table(r, s->name, a.cc.cmd);
    }
  }
  validate_report_free(r);
  alloc_free(mine);
  scenario_subset_free(view);
  scenario_free(parent);
  return rc;
}
