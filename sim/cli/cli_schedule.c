/* cli_schedule: `geodes schedule SCENARIO [--method NAME] [--trials N]
 * [--population P] [-o FILE] [--convergence FILE] [--db FILE] [--json]` —
 * searches an allocation (schedule_method), then simulates it once and
 * prints which site runs which stage of which pipeline, with its DT-FM score
 * and simulated iteration time. `--method sim` judges candidates by sim_run
 * under --network: the simulation reaches schedules/ as a function pointer.
 * Invariant: resources are released at the single exit whatever failed;
 * the search's progress goes to stderr (sim/cli/cli_progress.h). */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/db.h"
#include "base/mem.h"
#include "models/alloc.h"
#include "models/alloc_file.h"
#include "models/diloco.h"
#include "models/spec.h"
#include "models/bill.h"
#include "models/cost.h"
#include "models/partition.h"
#include "analysis/costcmd_header.h"
#include "schedules/objective.h"
#include "schedules/schedule.h"
#include "schedules/schedule_request.h"
#include "models/partition.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_bill.h"
#include "sim/cli/cli_budget.h"
#include "sim/cli/cli_progress.h"
#include "sim/cli/cli_shape.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "sim/spend.h"

static const cli_opt_command SCHEDULE = {
    .name = "schedule",
    .usage =
        "usage: geodes schedule SCENARIO [--method NAME] [--trials N]\n"
        "                       [--population P] [-o FILE] [--convergence "
        "FILE]\n"
        "                       [--network-model ideal|netem|tcp] [--db FILE] "
        "[--json]\n"
        "                       [OPTIONS]\n\n"
        "Searches where each tasklet should run and prints the best "
        "allocation:\n"
        "which site runs which stage of which pipeline, its DT-FM score and "
        "its\n"
        "simulated iteration time.\n\n"
        "--shape auto also searches the shape: stages x replicas x "
        "micro-batch x\nwhich devices work (the others idle) x layer split "
        "x placement, within\nmemory; the predictor judges every "
        "configuration, the simulation decides\namong its best. --stages "
        "or --replicas then fix that part of the shape;\n--dp-algo auto "
        "adds DiLoCo and streaming DiLoCo at the scenario's H\n(geodes "
        "simulates time, not convergence).\n\n",
    .width = 20, .args_min = 1, .args_max = 1, .missing = "which SCENARIO?"};

typedef struct sched_args {
  const char *scenario, *method, *out, *convergence, *db;
  long trials, population, starts;
  int network;
  int objective; /* an objective_kind; -1: cost-cmd with --cost-cmd, else dtfm */
  bool json, quiet;
  cli_workload_opts wo;
  cli_cost_cmd_opts cc;
  int shape;                 /* 0 fixed, 1 auto */
  int goal;                  /* a shape_goal */
  long simulate;             /* --simulate-best; -1: the default */
  const char *micro_list;    /* --micro-batches */
  bool dp_auto;              /* --dp-algo auto (taken out of argv) */
  double budget;             /* --max-usd-per-hour; 0: none */
  bool objective_given;      /* --objective was on the command line */
} sched_args;

static const char *const SHAPE_MODES[] = {"fixed", "auto", NULL};
static const char HELP_SHAPE[] =
    "fixed: the scenario's D_pp x D_dp on every\n"
    "device (default); auto: search it (above)";
static const char HELP_GOAL[] =
    "\n--shape auto: the most samples/s (at the batch\n"
    "per replica kept or the scenario's; default),\n"
    "or the shortest iteration at the scenario's batch";
static const char HELP_SIM[] =
    "--shape auto: the predictor's K best simulated,\nand each shape's "
    "best (" CLI_STR(SHAPE_SIMULATE) "; 0: the predictor decides)";
static const char HELP_TRIALS[] =
    "offspring (gcma, hybrid: " CLI_STR(SEARCH_TRIALS) "), samples\n"
    "(random-search: the population and\nthe offspring) or simulations "
    "(sim: " CLI_STR(SEARCH_SIM_TRIALS) ";\npast " CLI_STR(
        SEARCH_SIM_FULL_DEVICES) " devices " CLI_STR(SEARCH_SIM_TRIALS)
    " x " CLI_STR(SEARCH_SIM_FULL_DEVICES) " / devices)";
static const char HELP_MICRO[] =
    "--shape auto: micro-batches tried (default:\n"
    "the workload's, half and double)";

static const char HELP_OBJECTIVE[] =
    "what random-search, gcma and hybrid minimise\n"
    "(and sim starts from):\n"
    "dtfm (DT-FM's communication-only score;\n"
    "default), predicted (the end-to-end predictor,\n"
    "compute included), cost-cmd (--cost-cmd's\n"
    "model; the default when given), usd-per-sample\n"
    "or samples-per-usd (the predictor's time at the\n"
    "GPU-hours' and egress prices; with --shape auto\n"
    "its goal); a candidate that does not fit\n"
    "memory is infeasible in all";
static const char HELP_BUDGET[] =
    "a budget: no placement (shape) whose GPUs and\n"
    "egress cost more per hour; the fastest is\n"
    "reported beside (with the predictor's objectives)";

static int check_objective(sched_args *p);

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. --trials starts
 * at 1: 0 ran no search step and reported the starting guess as found. */
static int parse_args(int argc, char **argv, sched_args *p) {
  *p = (sched_args){.method = schedule_method_name(SCHEDULE_GCMA),
                    .trials = -1, .population = -1, .starts = -1,
                    .network = TRANSPORT_MODEL_DEFAULT, .objective = -1,
                    .simulate = -1, .dp_auto = p->dp_auto};
  cli_workload_init(&p->wo);
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "method", "NAME", &p->method,
                     "gcma (default; DT-FM's scheduler), hybrid (GCMA\n"
                     "with the cut-based gain), random-search, greedy,\n"
                     "sim (cost-model candidates improved by local moves\n"
                     "judged by simulation), dtfm-identity,\n"
                     "megatron-order (formerly megatron), random"),
      CLI_OPT_INT(0, "trials", "N", &p->trials, 1, 100000000,
                  HELP_TRIALS),
      CLI_OPT_INT(0, "population", "P", &p->population, 2, 1000000,
                  "GCMA population (" CLI_STR(SEARCH_POPULATION) ")"),
      CLI_OPT_INT(0, "starts", "K", &p->starts, 1, 1000,
                  "sim: best cost-model candidates to start from "
                  "(" CLI_STR(SEARCH_SIM_STARTS) "),\n"
                  "plus the greedy pipelines"),
      CLI_OPT_ENUM(0, "network-model", "M", &p->network, transport_model_names,
                   NULL, "tcp (default), netem or ideal: the simulation"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_ENUM(0, "objective", "NAME", &p->objective, objective_kind_names,
                   NULL, HELP_OBJECTIVE),
      CLI_OPT_REAL(0, "max-usd-per-hour", "USD", &p->budget, 1e-9, 1e12,
                   HELP_BUDGET),
      CLI_OPT_STRING('o', "output", "-o FILE", &p->out,
                     "write the allocation: its shape, its layer\nsplit and its pipelines (traces/FORMATS.md)"),
      CLI_OPT_STRING(0, "convergence", "FILE", &p->convergence,
                     "CSV candidate,best_score_s"),
      CLI_OPT_STRING(0, "db", "FILE", &p->db,
                     "record the run and its convergence, under the\n"
                     "method's name (SQLite)"),
      CLI_OPT_FLAG(0, "json", &p->json, "one JSON object on stdout"),
      CLI_OPT_QUIET(&p->quiet),
      CLI_OPT_ENUM(0, "shape", NULL, &p->shape, SHAPE_MODES, NULL, HELP_SHAPE),
      CLI_OPT_ENUM(0, "shape-objective", NULL, &p->goal, shape_goal_names,
                   NULL, HELP_GOAL),
      CLI_OPT_INT(0, "simulate-best", "K", &p->simulate, 0, 100000, HELP_SIM),
      CLI_OPT_STRING(0, "micro-batches", "m,m,...", &p->micro_list, HELP_MICRO),
      CLI_OPT_HELP(),
      CLI_COST_CMD_OPTS(&p->cc),
      CLI_WORKLOAD_OPTS(&p->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SCHEDULE, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  p->scenario = args[0];
  return check_objective(p);
}

/* The request p makes of schedules/ (schedule_request.h): what it gives. */
static schedule_request request_of(const sched_args *p) {
  return (schedule_request){
      .shape = p->shape, .method = p->method, .objective = p->objective,
      .goal = p->goal, .budget = p->budget,
      .given = {[SCHEDULE_OPT_DP_AUTO] = p->dp_auto,
                [SCHEDULE_OPT_GOAL] = p->goal,
                [SCHEDULE_OPT_SIMULATE] = p->simulate >= 0,
                [SCHEDULE_OPT_MICRO] = p->micro_list,
                [SCHEDULE_OPT_METHOD] =
                    p->method != schedule_method_name(SCHEDULE_GCMA),
                [SCHEDULE_OPT_OBJECTIVE] = p->objective_given,
                [SCHEDULE_OPT_TRIALS] = p->trials >= 0,
                [SCHEDULE_OPT_POPULATION] = p->population >= 0,
                [SCHEDULE_OPT_STARTS] = p->starts >= 0,
                [SCHEDULE_OPT_COST_CMD] = p->cc.cmd,
                [SCHEDULE_OPT_CONVERGENCE] = p->convergence}};
}

/* --objective against --cost-cmd, --method and the dollars. */
static int check_objective(sched_args *p) {
  p->objective_given = p->objective >= 0;
  if (p->objective < 0)
    p->objective = p->cc.cmd ? OBJECTIVE_COST_CMD
                   : p->budget > 0 ? OBJECTIVE_PREDICTED : OBJECTIVE_DTFM;
  if (p->objective == OBJECTIVE_COST_CMD && !p->cc.cmd)
    return cli_usage_error("schedule", "--objective cost-cmd needs --cost-cmd");
  if (p->cc.cmd && p->objective != OBJECTIVE_COST_CMD)
    return cli_usage_error("schedule", "--cost-cmd is the objective: give no "
                           "other --objective");
  int rc = cli_check_method("schedule", &p->method);
  err e = {0};
  schedule_request r = request_of(p);
  if (!rc && schedule_request_dollars(&r, &e))
    return cli_usage_error("schedule", "%s", e.msg);
  p->goal = r.goal; /* a dollar objective is --shape auto's goal */
  return rc;
}

/* The search's objective under p (its environment in *ob, a cost model's
 * session in *cc; the caller frees both). */
static int make_objective(const sched_args *p, const scenario *s,
                          const cost_ctx *c, const sim_options *so,
                          objective **ob, costcmd **cc, search_objective *obj,
                          err *e) {
  if (!(*ob = objective_new(s, c, &so->transport, false, e))) return e->code;
  if (p->objective != OBJECTIVE_COST_CMD)
    return objective_of_kind(*ob, (objective_kind)p->objective, p->budget,
                             obj, e);
  *cc = costcmd_open(s, c, p->cc.cmd, so->transport.model, p->cc.timeout_s, e);
  if (!*cc) return e->code;
  *obj = objective_custom_stream(*ob, "cost-cmd", costcmd_judge,
                                 costcmd_judge_submit, costcmd_judge_collect,
                                 *cc);
  return ERR_OK;
}

/* The search's hook: candidates judged, to the front end's reporter. */
static void progress(void *ctx, long done, long total, double best) {
  char extra[40];
  snprintf(extra, sizeof extra, "best %.3f s", best);
  cli_progress_update(ctx, "candidates", (double)done, (double)total, extra);
}

/* The objective's line: sim's start, or the objective's value (none for
 * DT-FM's score, which the score line shows). */
static void print_objective(const scenario *s, const search_result *r,
                            objective_kind k) {
  const char *name = objective_kind_names[k];
  if (k == OBJECTIVE_DTFM) return;
  if (strcmp(r->method, schedule_method_name(SCHEDULE_SIM)) == 0)
    printf("start       GCMA under %s, then moves judged by simulation\n",
           name);
  else
    printf("objective   %s: %.6g %s%s\n", name,
           objective_kind_value(k, r->objective_s), objective_kind_unit(k),
           objective_kind_dollars(k) && !bill_egress_complete(s)
               ? " (egress between some sites not priced: $0 there)" : "");
}

static void print_table(const scenario *s, const search_result *r,
                        double iter_s, const char *net, objective_kind k,
                        const transport_options *t) {
  const alloc *a = r->best;
  printf("scenario    %s, %d devices: %d stages x %d replicas\n", s->name,
         s->ndevices, a->stages, a->replicas);
  printf("method      %s (%ld candidates)\n", r->method, r->candidates);
  printf("score       %.3f s  (data-parallel %.3f + pipeline %.3f)\n",
         r->parts.score_s, r->parts.dp_s, r->parts.pp_s);
  printf("simulated   %.3f s per iteration (%s)\n", iter_s, net);
  cli_print_setup(t, s, a, iter_s);
  print_objective(s, r, k);
  if (!isnan(r->start_s) && r->objective_s < r->start_s)
    printf("vs cost     the cost model's choice simulates to %.3f s: beaten by "
           "%.3f s (%.1f %%)\n", r->start_s, r->start_s - r->objective_s,
           100 * (r->start_s - r->objective_s) / r->start_s);
  else if (!isnan(r->start_s))
    printf("vs cost     the cost model's choice simulates to %.3f s: no move "
           "beat it, kept\n", r->start_s);
  /* Columns as wide as the widest SITE#device (at most CELL_MAX); a longer
   * site name is cut, never the device number. */
  enum { CELL_MAX = 24 };
  int width = 8;
  for (int d = 0; d < s->ndevices; d++) {
    char cell[CELL_MAX * 4];
    int n = snprintf(cell, sizeof cell, "%s#%d",
                     s->sites[s->device_site[d]].name, d);
    width = n > width ? (n < CELL_MAX ? n : CELL_MAX) : width;
  }
  printf("\n%-9s", "PIPELINE");
  for (int st = 0; st < a->stages; st++) {
    char head[32];
    snprintf(head, sizeof head, "stage %d", st);
    printf(" %-*s", width, head);
  }
  printf("\n");
  for (int rep = 0; rep < a->replicas; rep++) {
    printf("%-9d", rep);
    for (int st = 0; st < a->stages; st++) {
      int d = alloc_at(a, rep, st);
      char num[16];
      int nd = snprintf(num, sizeof num, "#%d", d);
      printf(" %.*s%-*s", width - nd, s->sites[s->device_site[d]].name,
             width - (int)fmin(strlen(s->sites[s->device_site[d]].name),
                               (double)(width - nd)),
             num);
    }
    printf("\n");
  }
  printf("\n(cells: SITE#device; row r is pipeline r, column s its stage s)\n");
}

static void print_json(const scenario *s, const search_result *r,
                       double iter_s, const char *net, objective_kind k,
                       const transport_options *t, const bill *b,
                       const cli_beside *f, double budget) {
  json_t *o = json_object();
  json_object_set_new(o, "cost", cli_bill_json(s, b));
  json_object_set_new(o, "max_usd_per_hour",
                      budget > 0 ? json_real(budget) : json_null());
  json_object_set_new(o, "fastest", f->on ? cli_beside_json(f) : json_null());
  json_object_set_new(o, "scenario", json_string(s->name));
  json_object_set_new(o, "method", json_string(r->method));
  json_object_set_new(o, "score_s", cli_json_number(r->parts.score_s));
  json_object_set_new(o, "dp_cost_s", cli_json_number(r->parts.dp_s));
  json_object_set_new(o, "pp_cost_s", cli_json_number(r->parts.pp_s));
  json_object_set_new(o, "candidates", json_integer(r->candidates));
  json_object_set_new(o, "iteration_s", cli_json_number(iter_s));
  json_object_set_new(o, "network_model", json_string(net));
  cli_json_setup(o, t, s, r->best, iter_s);
  json_object_set_new(o, "objective_s", cli_json_number(r->objective_s));
  json_object_set_new(o, "objective_value",
                      cli_json_number(objective_kind_value(k, r->objective_s)));
  json_object_set_new(o, "objective", json_string(objective_kind_names[k]));
  json_object_set_new(o, "start_iteration_s", cli_json_number(r->start_s));
  json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
  json_object_set_new(o, "alloc", alloc_json(r->best));
  cli_print_json(o, CLI_JSON);
}

/* -o: the best allocation with its shape and the layer split it ran with
 * (explicit, balanced for it, or even), so simulate --alloc reads back the
 * same time; --convergence: the best score after each candidate. Both are
 * written before either is put in place. CLI_OK or the error printed. */
static int write_outputs(const sched_args *p, const scenario *s,
                         const search_result *r) {
  err e = {0};
  int rc = cli_out_not_db("schedule", p->out, p->db);
  if (!rc) rc = cli_out_not_db("schedule", p->convergence, p->db);
  if (rc) return rc;
  int *split = mem_alloc((size_t)r->best->stages * sizeof *split);
  rc = p->out && partition_of(s, r->best, split, &e)
           ? cli_fail("schedule", &e) : CLI_OK;
  cli_out a = {0}, c = {0};
  if (!rc && p->out && !(rc = cli_out_open(&a, p->out, "the allocation")))
    alloc_file_write(r->best, NULL, split, s, NULL, a.f);
  if (!rc && p->convergence &&
      !(rc = cli_out_open(&c, p->convergence, "the convergence")))
    search_convergence_write(r, c.f); /* a failed write: cli_out_close */
  if (c.f) rc = cli_out_close(&c, rc);
  if (a.f) rc = cli_out_close(&a, rc);
  free(split);
  return rc;
}

/* The search's convergence as rows of run (cli_db_rows; ctx: sched_ctx). */
typedef struct sched_ctx {
  const sched_args *p;
  const search_result *r;
} sched_ctx;

static int convergence_rows(db *d, int64_t run, const void *ctx, err *e) {
  const sched_ctx *c = ctx;
  int rc = ERR_OK;
  for (long i = 0; rc == ERR_OK && i < c->r->candidates; i++)
    rc = db_convergence_put(d, run, c->p->method, i + 1,
                            c->r->convergence[i], e);
  return rc;
}

static int record_db(const sched_args *p, const scenario *s,
                     const search_result *r, int argc, char **argv, err *e) {
  if (!p->db) return ERR_OK;
  sched_ctx c = {p, r};
  return cli_db_record(p->db, argc, argv, s, convergence_rows, &c, e);
}

/* argv without --dp-algo auto (a copy the caller frees, *n entries); *found
 * counts its uses: the shared option's names are the algorithms alone, and
 * auto is the shape search's. */
static char **take_dp_auto(int argc, char **argv, int *n, int *found) {
  char **v = mem_alloc(((size_t)argc + 1) * sizeof *v);
  *n = 0, *found = 0;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--dp-algo=auto") == 0) {
      ++*found;
      continue;
    }
    if (strcmp(argv[i], "--dp-algo") == 0 && i + 1 < argc &&
        strcmp(argv[i + 1], "auto") == 0) {
      ++*found, i++;
      continue;
    }
    v[(*n)++] = argv[i];
  }
  v[*n] = NULL;
  return v;
}

/* The options of --shape auto, checked (usage errors) once s is loaded
 * with the other knobs: --stages and --replicas within the devices and the
 * layers. */
static int shape_args(const sched_args *p, const scenario *s,
                      cli_shape_args *a) {
  *a = (cli_shape_args){.out = p->out, .db = p->db, .json = p->json,
                        .quiet = p->quiet, .scenario = p->scenario};
  shape_opts *o = &a->o;
  shape_opts_default(o);
  o->goal = (shape_goal)p->goal, o->diloco = p->dp_auto;
  o->max_usd_per_hour = p->budget, o->price = bill_any_price(s);
  if (p->simulate >= 0) o->simulate = (int)p->simulate;
  long st = p->wo.k.stages, rep = p->wo.k.replicas;
  if (p->dp_auto) o->plan = diloco_plan_of_knobs(&p->wo.k);
  err e = {0};
  if (shape_check_given(s, st, rep, p->dp_auto ? &o->plan : NULL, &e))
    return cli_usage_error("schedule", "%s", e.msg);
  o->stages = (int)(st > 0 ? st : 0), o->replicas = (int)(rep > 0 ? rep : 0);
  long batch = p->wo.k.batch > 0 ? p->wo.k.batch : s->workload.batch;
  if (p->micro_list && schedule_request_micro(p->micro_list, batch, o->micro,
                                              &o->nmicro, &e))
    return cli_usage_error("schedule", "--micro-batches %s", e.msg);
  return CLI_OK;
}

/* schedule --shape auto: the knobs but the shape applied, then the search. */
static int run_shape(sched_args *p, int argc, char **argv) {
  err e = {0};
  cli_workload_opts wo = p->wo;
  wo.k.stages = wo.k.replicas = -1;
  if (p->dp_auto) /* DiLoCo's knobs go to its candidates, not the workload */
    diloco_knobs_clear(&wo.k);
  scenario *s = scenario_load(p->scenario, &e);
  int rc;
  if (!s || cli_workload_apply(&wo, s, &e) != ERR_OK) {
    rc = cli_fail("schedule", &e);
  } else if (!(rc = cli_workload_usage("schedule", &wo, s))) {
    cli_shape_args a;
    sim_options so = sim_options_default();
    so.transport = cli_transport(&wo, (transport_model)p->network);
    so.seed = s->seed;
    double usd_per_s;
    bool cost = objective_kind_dollars((objective_kind)p->objective);
    if (!(rc = shape_args(p, s, &a)) &&
        !(rc = cli_budget_check(s, cost, objective_kind_names[p->objective],
                                p->budget, false, &usd_per_s)))
      rc = cli_schedule_shape(&a, s, &so, argc, argv);
  }
  scenario_free(s);
  return rc;
}

/* The search's options under p. */
static search_opts options_of(const sched_args *p, const scenario *s) {
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  o.trials = (int)p->trials;
  if (p->population > 0) o.population = (int)p->population;
  if (p->starts > 0) o.starts = (int)p->starts;
  return o;
}

/* The search's best simulated and billed, and with a dollar objective or a
 * budget the fastest beside it. */
static int judge_best(const sched_args *p, const scenario *s, const cost_ctx *c,
                      const sim_options *so, const search_opts *o,
                      const search_result *r, sim_result *sr, bill *b,
                      cli_beside *f, err *e) {
  if (sim_run(s, r->best, so, sr, e) != ERR_OK ||
      sim_spend_iteration(s, sr, b, e) != ERR_OK)
    return e->code;
  if (objective_kind_dollars((objective_kind)p->objective) || p->budget > 0)
    return cli_beside_search(s, c, p->method, so, o, f, e);
  return ERR_OK;
}

static void report(const sched_args *p, const scenario *s,
                   const search_result *r, const sim_result *sr,
                   const sim_options *so, const bill *b,
                   const cli_beside *f) {
  const char *net = transport_model_name(so->transport.model);
  objective_kind k = (objective_kind)p->objective;
  if (p->json) {
    print_json(s, r, sr->iteration_s, net, k, &so->transport, b, f,
               p->budget);
    return;
  }
  print_table(s, r, sr->iteration_s, net, k, &so->transport);
  printf("\n");
  cli_bill_print(s, b, "per iteration");
  cli_beside_print(sr, b, f, p->budget);
}

/* argv into p: --dp-algo auto taken out (once: with it, --dp-algo may not
 * be given again), the table's options, the --shape auto ones. */
static int schedule_args(int argc, char **argv, sched_args *p) {
  int n, autos;
  char **args = take_dp_auto(argc, argv, &n, &autos);
  p->dp_auto = autos > 0;
  int rc = parse_args(n, args, p);
  if (!rc && (autos > 1 || (autos && p->wo.k.dp_algo)))
    rc = cli_usage_error("schedule", "--dp-algo given twice");
  err e = {0};
  schedule_request r = request_of(p);
  if (!rc && schedule_request_uses(&r, &e)) /* one search's options */
    rc = cli_usage_error("schedule", "%s", e.msg);
  free(args);
  return rc;
}

int cli_schedule(int argc, char **argv) {
  sched_args p;
  int rc = schedule_args(argc, argv, &p);
  if (!rc && p.shape) rc = run_shape(&p, argc, argv);
  if (rc || p.shape) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  cost_ctx *c = NULL;
  search_result *r = NULL;
  sim_result sr = {0};
  objective *ob = NULL;
  costcmd *cc = NULL;
  bill b = {0};
  cli_beside f = {0};
  double usd_per_s;
  scenario *s = scenario_load(p.scenario, &e);
  if (!s || cli_workload_apply(&p.wo, s, &e) != ERR_OK) goto fail;
  if ((rc = cli_workload_usage("schedule", &p.wo, s)) ||
      (rc = cli_budget_check(
           s, objective_kind_dollars((objective_kind)p.objective),
           objective_kind_names[p.objective], p.budget, true, &usd_per_s)))
    goto done;
  if (!(c = cost_ctx_from_scenario(s, &e))) goto fail;
  sim_options so = sim_options_default();
  so.transport = cli_transport(&p.wo, (transport_model)p.network);
  so.seed = s->seed;
  search_opts o = options_of(&p, s);
  cli_progress bar;
  cli_progress_start(&bar, "schedule", p.quiet);
  o.progress = progress, o.progress_ctx = &bar;
  search_objective obj;
  bool found = make_objective(&p, s, c, &so, &ob, &cc, &obj, &e) == ERR_OK &&
               (r = sim_place_search_with(s, c, p.method, &o, &so, &obj, &e));
  cli_progress_end(&bar);
  if (!found || (cc && costcmd_close(cc, &e)) ||
      objective_within_budget(ob, r->objective_s, p.method, &e) ||
      judge_best(&p, s, c, &so, &o, r, &sr, &b, &f, &e))
    goto fail;
  if ((rc = write_outputs(&p, s, r))) goto done;
  if (record_db(&p, s, r, argc, argv, &e) != ERR_OK) goto fail;
  report(&p, s, r, &sr, &so, &b, &f);
  rc = CLI_OK;
  goto done;
fail:
  rc = cli_fail("schedule", &e);
done:
  cli_beside_free(&f);
  bill_free(&b);
  sim_result_free(&sr);
  search_result_free(r);
  costcmd_free(cc);
  objective_free(ob);
  cost_ctx_free(c);
  scenario_free(s);
  return rc;
}
