/* cli_simulate: `geodes simulate SCENARIO (--alloc FILE | --method NAME)
 * [--network-model ideal|netem|tcp] [--timeline FILE] [--json]` — one training
 * iteration simulated event by event (sim_run) and its breakdown: per-device
 * means, per stage, and the busiest link classes.
 * Invariant: exactly one placement source; resources are released at the
 * single exit of cli_simulate whatever failed. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "models/spec.h"
#include "schedules/objective.h"
#include "schedules/schedule.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_bill.h"
#include "sim/cli/cli_shape.h"
#include "traces/scenario_subset.h"
#include "sim/cli/cli_training.h"
#include "sim/netbound.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "sim/spend.h"
#include "sim/training.h"

static const cli_opt_command SIMULATE = {
    .name = "simulate",
    .usage =
        "usage: geodes simulate SCENARIO (--alloc FILE | --method NAME)\n"
        "                       [--network-model ideal|netem|tcp] [--timeline FILE]\n"
        "                       [--json] [OPTIONS]\n\n"
        "Simulates one training iteration event by event: per device a\n"
        "compute, a send and a receive stream; flows share links max-min "
        "fairly.\nWith --iterations or --duration-s, a "
        "training\nrun: iterations one after another on one clock, with "
        "faults and\nrecovery (fault files: traces/FORMATS.md).\n\n",
    .width = 20, .args_min = 1, .args_max = 1, .missing = "which SCENARIO?"};

typedef struct sim_args {
  const char *scenario, *alloc_file, *method, *timeline, *timeline_its;
  int network, objective;
  bool json, explain;
  cli_workload_opts wo;
  cli_training_opts to;
  /* one iteration under netem or tcp: what held its transfers back, from
   * the rate log a timeline keeps, else summed as the run goes */
  sim_netbound_watch held;
} sim_args;

/* --timeline-iterations A:B into the training options: from A to B
 * included, either end open. */
static int parse_iterations(sim_args *p) {
  const char *t = p->timeline_its;
  if (!t) return CLI_OK;
  if (!p->timeline || !p->to.active)
    return cli_usage_error("simulate", "--timeline-iterations needs "
                           "--timeline and a training run (--iterations "
                           "or --duration-s)");
  const char *colon = strchr(t, ':');
  char *end;
  long a = 0, b = -1;
  bool ok = colon != NULL;
  if (ok && colon > t) a = strtol(t, &end, 10), ok = end == colon && a >= 0;
  if (ok && colon[1]) b = strtol(colon + 1, &end, 10), ok = !*end && b >= a;
  if (!ok || a > INT_MAX - 1 || b > INT_MAX - 1)
    return cli_usage_error("simulate", "--timeline-iterations '%s': A:B with "
                           "0 <= A <= B (either may be left out)", t);
  if (p->to.iterations > 0 && a >= p->to.iterations)
    return cli_usage_error("simulate", "--timeline-iterations '%s': the run "
                           "has %ld iterations (0 to %ld), so the timeline "
                           "would hold none", t, p->to.iterations,
                           p->to.iterations - 1);
  p->to.o.timeline_from = (int)a;
  p->to.o.timeline_to = b < 0 ? 0 : (int)b + 1;
  return CLI_OK;
}

/* Re-planning starts from the user: with --alloc and no --replan-method,
 * replan keeps the allocation's placement (sim/recovery.h); --objective
 * steers a search method's re-planning. */
static int check_replan(sim_args *p) {
  sim_training_opts *o = &p->to.o;
  o->replan_from_alloc = p->alloc_file && !p->to.replan_method;
  if (o->replan_from_alloc && o->replan_on_change)
    return cli_usage_error("simulate", "--replan-on-change places the work "
                           "again by a method: give --replan-method (the run "
                           "starts from --alloc)");
  if (p->objective < 0) return CLI_OK;
  switch ((objective_kind)p->objective) {
    case OBJECTIVE_DTFM:
    case OBJECTIVE_PREDICTED: break;
    case OBJECTIVE_COST_CMD:
    case OBJECTIVE_USD_PER_SAMPLE:
    case OBJECTIVE_SAMPLES_PER_USD:
      return cli_usage_error("simulate", "--objective %s is schedule's: "
                             "simulate's re-planner minimises dtfm or "
                             "predicted", objective_kind_names[p->objective]);
  }
  if (!o->method || (schedule_method_known(o->method) &&
                     !schedule_method_searches(o->method)))
    return cli_usage_error("simulate", "--objective %s needs a search method "
                           "to steer: give --replan-method gcma, hybrid, "
                           "random-search or sim (re-planning by %s searches "
                           "nothing)", objective_kind_names[p->objective],
                           o->method ? o->method : "the --alloc placement");
  o->objective = p->objective;
  return CLI_OK;
}

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, sim_args *p) {
  *p = (sim_args){.network = TRANSPORT_MODEL_DEFAULT, .objective = -1};
  cli_workload_init(&p->wo);
  cli_training_init(&p->to);
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "alloc", "FILE", &p->alloc_file, CLI_ALLOC_HELP),
      CLI_OPT_STRING(0, "method", "NAME", &p->method, cli_method_help()),
      CLI_OPT_ENUM(0, "network-model", "M", &p->network, transport_model_names,
                   NULL, "tcp (default), netem or ideal (what-ifs)"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_STRING(0, "timeline", "FILE", &p->timeline,
                     "Chrome Trace Event JSON (Perfetto) of the run"),
      CLI_OPT_STRING(0, "timeline-iterations", "A:B", &p->timeline_its,
                     "a training run's timeline keeps iterations A\n"
                     "to B (from 0; A: or :B leave an end open)"),
      CLI_OPT_FLAG(0, "explain", &p->explain,
                   "then the critical path and sensitivities\n"
                   "(geodes explain --help)"),
      CLI_OPT_FLAG(0, "json", &p->json, "one JSON object on stdout"),
      CLI_OPT_HELP(),
      CLI_TRAINING_OPTS(&p->to),
      CLI_OPT_ENUM(0, "objective", "NAME", &p->objective, objective_kind_names,
                   NULL,
                   "what replan's and --replan-on-change's search\n"
                   "minimises: dtfm (DT-FM's score; default) or\n"
                   "predicted (the end-to-end predictor); needs\n"
                   "a search method (--replan-method gcma, hybrid,\n"
                   "random-search or sim)"),
      CLI_WORKLOAD_OPTS(&p->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SIMULATE, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  p->scenario = args[0];
  if ((rc = cli_check_placement("simulate", p->alloc_file, &p->method)))
    return rc;
  if ((rc = cli_training_check("simulate", &p->to, p->method))) return rc;
  if ((rc = parse_iterations(p))) return rc;
  if ((rc = check_replan(p))) return rc;
  if (p->explain && (p->to.active || p->json))
    return cli_usage_error("simulate", "--explain explains one iteration, "
                           "as a table (geodes explain --json for JSON)");
  return CLI_OK;
}

/* The bytes of the link classes: per iteration (over n completed ones). */
static double class_gb(const sim_link_class *c, size_t n) {
  return c->bytes * 1e-9 / (double)(n ? n : 1);
}

/* What held the transfers below their links' rates (netem, tcp). */
static void print_held(const sim_netbound *nb) {
  if (!nb->held_total) {
    printf("held back   no transfer ran below its link's rate (no NIC, flow "
           "cap, TCP window or\n            shared link slowed one): ideal, "
           "netem and tcp give this run's times\n");
    return;
  }
  printf("held back   %llu of %llu transfers ran below their link's rate:",
         (unsigned long long)nb->held_total,
         (unsigned long long)nb->transfers);
  const char *sep = " ";
  for (int c = 0; c < SIM_CP_NCAUSES; c++)
    if (nb->held[c]) {
      printf("%s%llu %s", sep, (unsigned long long)nb->held[c],
             sim_cp_cause_names[c]);
      sep = ", ";
    }
  printf("\n");
}

static json_t *json_held(const sim_netbound *nb) {
  json_t *o = json_object();
  json_object_set_new(o, "transfers", json_integer((json_int_t)nb->transfers));
  json_object_set_new(o, "held_back", json_integer((json_int_t)nb->held_total));
  for (int c = 0; c < SIM_CP_NCAUSES; c++)
    if (c != SIM_CP_CAUSE_LINK && c != SIM_CP_CAUSE_SEND)
      json_object_set_new(o, sim_cp_cause_names[c],
                          json_integer((json_int_t)nb->held[c]));
  json_object_set_new(o, "network_models_agree",
                      json_boolean(nb->held_total == 0));
  return o;
}

static void print_table(const scenario *s, const char *placement,
                        const sim_result *r, const transport_options *t,
                        const alloc *a, size_t n, const sim_netbound *nb) {
  printf("scenario    %s, %d devices: %d stages x %d replicas, %s\n", s->name,
         s->ndevices, s->workload.stages, s->workload.replicas, placement);
  printf("network     %s\n", transport_model_name(r->network));
  cli_print_setup(t, s, a, r->iteration_s);
  printf("iteration   %.4f s  (%llu events, %llu flows, %llu tasks)\n",
         r->iteration_s, (unsigned long long)r->events,
         (unsigned long long)r->flows, (unsigned long long)r->tasks);
  if (r->inner_steps)
    printf("diloco      outer step %.4f s = %d inner steps of %.4f s and the "
           "exchanges (%d inner steps in the graph)\n", r->outer_step_s,
           r->inner_steps, r->inner_step_s, r->explicit_steps);
  printf("throughput  %.2f samples/s, compute utilisation %.1f %%\n",
         r->samples_per_s, 100 * r->compute_utilisation);
  printf("bytes       %.3f GB pipeline, %.3f GB data-parallel per iteration"
         " (%.3f GB between sites)\n", r->pp_bytes * 1e-9,
         r->dp_bytes * 1e-9, r->wan_bytes * 1e-9);
  if (nb) print_held(nb);
  printf("\n");
  printf("%-8s %10s %10s %10s %10s %17s\n", "STAGE", "COMPUTE_S", "BUBBLE_S",
         "COMM_S", "DP_SYNC_S", "UTIL_MIN..MAX_%");
  for (int st = 0; st < r->stages; st++) {
    const sim_breakdown *b = &r->stage[st];
    double lo, hi;
    sim_result_stage_range(r, a, st, &lo, &hi);
    char util[40];
    snprintf(util, sizeof util, "%.1f..%.1f", 100 * lo, 100 * hi);
    printf("%-8d %10.3f %10.3f %10.3f %10.3f %17s\n", st, b->compute_s,
           b->bubble_s, b->comm_s, b->dp_sync_s, util);
  }
  printf("%-8s %10.3f %10.3f %10.3f %10.3f\n", "mean", r->mean.compute_s,
         r->mean.bubble_s, r->mean.comm_s, r->mean.dp_sync_s);
  printf("\n(means over each stage's devices; compute: compute stream busy;"
         "\n bubble: idle before the last backward; comm: send or receive "
         "stream busy;\n dp sync: last backward -> gradients synchronised; "
         "util: the least and\n the most busy device of the stage, compute "
         "over wall time)\n");
  if (n > 1)
    printf("\nbusiest link classes (site -> site), per iteration (mean of %zu;"
           " flows: run totals)\n", n);
  else
    printf("\nbusiest link classes (site -> site), per iteration\n");
  int w = cli_site_width(s, 14);
  for (int i = 0; i < r->nclasses && i < 8; i++) {
    const sim_link_class *c = &r->classes[i];
    printf("  %-*s -> %-*s %10.3f GB in %llu flows\n",
           w, s->sites[c->src_site].name, w, s->sites[c->dst_site].name,
           class_gb(c, n), (unsigned long long)c->flows);
  }
}

/* DiLoCo's own fields (sim.h). */
static void print_json_diloco(json_t *o, const sim_result *r) {
  json_object_set_new(o, "inner_steps", json_integer(r->inner_steps));
  json_object_set_new(o, "explicit_steps", json_integer(r->explicit_steps));
  json_object_set_new(o, "inner_step_s", cli_json_number(r->inner_step_s));
  json_object_set_new(o, "outer_step_s", cli_json_number(r->outer_step_s));
}

/* The per-stage breakdown and the link classes of r (n iterations: bytes
 * and flows are totals over them; pp_bytes, dp_bytes, wan_bytes and
 * bytes_per_iteration per iteration). */
static void json_stages(json_t *o, const scenario *s, const sim_result *r,
                        const alloc *a, size_t n) {
  json_t *st = json_array(), *cl = json_array();
  for (int i = 0; i < r->stages; i++) {
    const sim_breakdown *b = &r->stage[i];
    double lo, hi;
    sim_result_stage_range(r, a, i, &lo, &hi);
    json_t *x = json_pack("{s:i,s:f,s:f,s:f,s:f}", "stage", i, "compute_s",
                          b->compute_s, "bubble_s", b->bubble_s, "comm_s",
                          b->comm_s, "dp_sync_s", b->dp_sync_s);
    json_object_set_new(x, "utilisation_min", cli_json_number(lo));
    json_object_set_new(x, "utilisation_max", cli_json_number(hi));
    json_array_append_new(st, x);
  }
  json_object_set_new(o, "stages", st);
  for (int i = 0; i < r->nclasses; i++) {
    const sim_link_class *c = &r->classes[i];
    json_array_append_new(
        cl, json_pack("{s:s,s:s,s:f,s:I,s:f}", "src_site",
                      s->sites[c->src_site].name, "dst_site",
                      s->sites[c->dst_site].name, "bytes", c->bytes, "flows",
                      (json_int_t)c->flows, "bytes_per_iteration",
                      c->bytes / (double)n));
  }
  json_object_set_new(o, "link_classes_iterations", json_integer((json_int_t)n));
  json_object_set_new(o, "link_classes", cl);
}

static int print_json(const scenario *s, const char *placement,
                       const sim_result *r, const sim_training_result *tr,
                       const cli_training_opts *to, const transport_options *t,
                       const alloc *a, const sim_netbound *nb,
                       const bill *b) {
  size_t n = tr && tr->n ? tr->n : 1;
  json_t *o = json_object();
  json_object_set_new(o, "cost", cli_bill_json(s, b));
  json_object_set_new(o, "scenario", json_string(s->name));
  json_object_set_new(o, "placement", json_string(placement));
  json_object_set_new(o, "network_model", json_string(transport_model_name(r->network)));
  cli_json_setup(o, t, s, a, r->iteration_s);
  json_object_set_new(o, "iteration_s", cli_json_number(r->iteration_s));
  json_object_set_new(o, "compute_s", cli_json_number(r->mean.compute_s));
  json_object_set_new(o, "bubble_s", cli_json_number(r->mean.bubble_s));
  json_object_set_new(o, "comm_s", cli_json_number(r->mean.comm_s));
  json_object_set_new(o, "dp_sync_s", cli_json_number(r->mean.dp_sync_s));
  json_object_set_new(o, "events", json_integer((json_int_t)r->events));
  json_object_set_new(o, "flows", json_integer((json_int_t)r->flows));
  json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
  json_object_set_new(o, "compute_utilisation",
                      cli_json_number(r->compute_utilisation));
  json_t *u = json_array();
  for (int d = 0; d < r->ndevices; d++)
    json_array_append_new(u, cli_json_number(r->utilisation[d]));
  json_object_set_new(o, "utilisation", u);
  json_object_set_new(o, "samples_per_s", cli_json_number(r->samples_per_s));
  json_object_set_new(o, "pp_bytes", cli_json_number(r->pp_bytes));
  json_object_set_new(o, "dp_bytes", cli_json_number(r->dp_bytes));
  json_object_set_new(o, "wan_bytes", cli_json_number(r->wan_bytes));
  json_object_set_new(o, "transfers", nb ? json_held(nb) : json_null());
  if (r->inner_steps) print_json_diloco(o, r);
  json_stages(o, s, r, a, n);
  if (!tr) {
    cli_print_json(o, CLI_JSON);
    return CLI_OK;
  }
  cli_training_json(o, tr, to);
  json_object_set_new(o, "iteration_s", cli_json_number(tr->mean_s));
  cli_json_stream its = cli_training_iterations(tr);
  return cli_print_json_stream(o, CLI_JSON, &its);
}

/* --explain: explain's report with its defaults, after the table. */
static int explain(const scenario *s, const alloc *a, sim_options *o,
                   const char *placement, bool quiet) {
  cli_explain_opts eo = {.top = 5, .steps = 30, .placement = placement,
                         .resolution_s = 0.1, .quiet = quiet};
  o->timeline_path = NULL;
  printf("\n");
  return cli_explain_report("simulate", s, a, o, &eo);
}

/* The run's table (or --json) and --explain's report; s_run is s, or the
 * view of the devices sub names (the others idle). */
static int report(sim_args *p, const scenario *s, const scenario *s_run,
                  const alloc *a, sim_result *r,
                  sim_training_result *tr, sim_options *o) {
  const char *placement = p->alloc_file ? p->alloc_file : p->method;
  bill b;
  err e = {0};
  int rc = p->to.active ? sim_spend_training(s_run, tr, r, &b, &e)
                        : sim_spend_iteration(s_run, r, &b, &e);
  if (rc) return cli_fail("simulate", &e);
  if (p->json) {
    rc = print_json(s_run, placement, r, p->to.active ? tr : NULL, &p->to,
                    &o->transport, a, p->held.done ? &p->held.nb : NULL, &b);
  } else {
    if (s_run != s)
      printf("idle        %d of the scenario's %d devices (not in %s)\n",
             s->ndevices - s_run->ndevices, s->ndevices, p->alloc_file);
    print_table(s_run, placement, r, &o->transport, a,
                p->to.active ? tr->n : 1, p->held.done ? &p->held.nb : NULL);
    if (p->to.active) cli_training_table(tr, &p->to);
    printf("\n");
    cli_bill_print(s_run, &b, p->to.active ? "for the run" : "per iteration");
  }
  bill_free(&b);
  if (p->explain && rc == CLI_OK) rc = explain(s_run, a, o, placement, p->to.quiet);
  return rc;
}

int cli_simulate(int argc, char **argv) {
  sim_args p;
  int rc = parse_args(argc, argv, &p);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  alloc *a = NULL;
  sim_result r = {0};
  scenario *s = scenario_load(p.scenario, &e), *view = NULL;
  if (!s || cli_workload_alloc(&p.wo, p.alloc_file, s, &a, &view, &e)) goto fail;
  if ((rc = cli_workload_usage("simulate", &p.wo, s)) ||
      (rc = cli_training_usage("simulate", &p.to, s)))
    goto done;
  if (view && p.to.active) {
    rc = cli_usage_error("simulate", "%s leaves devices idle: training runs "
                         "(--iterations) take an allocation of every device",
                         p.alloc_file);
    goto done;
  }
  /* the fault file is read before a placement search, not after it */
  if (p.to.active && cli_training_load(&p.to, s, &e)) goto fail;
  const scenario *s_run = s;
  sim_options o = sim_options_default();
  o.transport = cli_transport(&p.wo, (transport_model)p.network);
  o.seed = s->seed;
  /* --method's placement, after the engine's own estimate of the run */
  if (!a && (sim_check_size(s, &e) ||
             !(a = sim_place_scenario(s, p.method, &o, &e))))
    goto fail;
  if (view) s_run = view;
  sim_training_result tr = {0};
  if (p.to.active) {
    p.to.o.sim = o;
    p.to.o.timeline = p.timeline;
    cli_progress bar;
    cli_training_progress(&p.to, "simulate", &bar);
    int trc = sim_training_run(s_run, a, &p.to.o, &tr, &e);
    cli_progress_end(&bar);
    if (trc != ERR_OK) goto fail;
    r = tr.agg;
    tr.agg = (sim_result){0};
  } else {
    o.timeline_path = p.timeline;
    if (transport_is_shared(o.transport.model)) /* ideal holds nothing */
      sim_netbound_watch_start(&p.held, s_run, &o, !o.timeline_path);
    if (sim_run(s_run, a, &o, &r, &e) != ERR_OK) goto fail;
  }
  rc = report(&p, s, s_run, a, &r, &tr, &o);
  sim_training_result_free(&tr);
  goto done;
fail:
  rc = cli_fail("simulate", &e);
done:
  cli_training_free(&p.to);
  sim_netbound_watch_free(&p.held);
  sim_result_free(&r);
  alloc_free(a);
  scenario_subset_free(view);
  scenario_free(s);
  return rc;
}
