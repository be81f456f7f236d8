/* cli_training: the options of a training run shared by simulate and sweep
 * (DESIGN.md sections 9 and 10) — --iterations, --duration-s, --faults,
 * --recovery, --checkpoint-every, --storage-gbps, --replan-on-change,
 * --replan-method — their checks (a usage error, exit 2, for a count or a
 * duration out of range) and how a run's result is printed: a table of
 * iterations and losses, or the JSON fields of section 9. */
#include "sim/cli/cli_training.h"

#include <stdio.h>

#include "models/spec.h"
#include "models/spec_workload.h"


void cli_training_init(cli_training_opts *t) {
  *t = (cli_training_opts){.o = sim_training_opts_default(), .recovery = -1};
}

int cli_training_check(const char *cmd, cli_training_opts *t,
                       const char *method) {
  if (t->iterations > 0 && t->duration_s > 0)
    return cli_usage_error(cmd, "give --iterations or --duration-s, not both");
  sim_training_opts *o = &t->o;
  if (t->iterations > 0) o->iterations = (int)t->iterations;
  if (t->duration_s > 0) o->iterations = 0, o->duration_s = t->duration_s;
  if (t->recovery >= 0) o->recovery = (sim_recovery)t->recovery;
  if (t->checkpoint_every > 0) o->checkpoint_every = (int)t->checkpoint_every;
  if (t->storage_gbps > 0) o->storage_gbps = t->storage_gbps;
  o->replan_on_change = t->replan_on_change;
  o->method = t->replan_method ? t->replan_method : method;
  t->active = t->iterations > 0 || t->duration_s > 0 || t->faults_file ||
              t->recovery >= 0 || t->checkpoint_every > 0 ||
              t->storage_gbps > 0 || t->replan_on_change || t->replan_method;
  return CLI_OK;
}

int cli_training_usage(const char *cmd, const cli_training_opts *t,
                       const scenario *s) {
  spec_workload w;
  if (!t->active || spec_workload_resolve(s, &w, NULL) || !spec_is_diloco(&w))
    return CLI_OK;
  int H = w.given.inner_steps;
  if (t->o.iterations % H)
    return cli_usage_error(cmd, "--iterations %d is not a multiple of "
                           "--inner-steps %d: a run of --dp-algo %s counts "
                           "inner steps and keeps whole outer steps",
                           t->o.iterations, H, spec_dp_algo_name(w.dp_algo));
  if (t->o.checkpoint_every % H)
    return cli_usage_error(cmd, "--checkpoint-every %d is not a multiple of "
                           "--inner-steps %d: a checkpoint of --dp-algo %s "
                           "follows an outer step", t->o.checkpoint_every, H,
                           spec_dp_algo_name(w.dp_algo));
  return CLI_OK;
}

int cli_training_load(cli_training_opts *t, const scenario *s, err *e) {
  if (!t->faults_file) return ERR_OK;
  t->faults = fault_load(t->faults_file, s, e);
  t->o.faults = t->faults;
  return t->faults ? ERR_OK : e->code;
}

static void iterations_done(void *ctx, double done, double total) {
  cli_progress_update(ctx, "iterations", done, total, NULL);
}

static void seconds_done(void *ctx, double done, double total) {
  cli_progress_update(ctx, "simulated s", done, total, NULL);
}

void cli_training_progress(cli_training_opts *t, const char *cmd,
                           cli_progress *bar) {
  cli_progress_start(bar, cmd, t->quiet);
  t->o.progress = t->o.iterations > 0 ? iterations_done : seconds_done;
  t->o.progress_ctx = bar;
}

void cli_training_free(cli_training_opts *t) {
  fault_free(t->faults);
  t->faults = NULL;
}

static json_t *iteration(const void *ctx, size_t k) {
  const sim_training_result *r = ctx;
  const sim_iteration *x = &r->it[k];
  return json_pack("{s:i,s:o,s:o,s:o,s:i,s:o,s:o}", "index", x->index,
                   "start_s", cli_json_number(x->start_s), "iteration_s",
                   cli_json_number(x->iteration_s), "lost_s",
                   cli_json_number(x->lost_s), "replicas", x->replicas,
                   "samples", cli_json_number(x->samples), "samples_per_s",
                   cli_json_number(x->samples_per_s));
}

cli_json_stream cli_training_iterations(const sim_training_result *r) {
  return (cli_json_stream){.key = "iterations", .n = r->n, .item = iteration,
                           .ctx = r};
}

void cli_training_json(json_t *o, const sim_training_result *r,
                       const cli_training_opts *t) {
  json_t *lost = json_object(), *st = json_object();
  for (int c = 0; c < SIM_LOST_N; c++)
    json_object_set_new(lost, sim_lost_name(c), cli_json_number(r->lost_s[c]));
  json_object_set_new(lost, "total", cli_json_number(r->lost_total_s));
  json_object_set_new(st, "mean_s", cli_json_number(r->mean_s));
  json_object_set_new(st, "p50_s", cli_json_number(r->p50_s));
  json_object_set_new(st, "p95_s", cli_json_number(r->p95_s));
  json_object_set_new(st, "min_s", cli_json_number(r->min_s));
  json_object_set_new(st, "max_s", cli_json_number(r->max_s));
  /* streamed by the printer: cli_training_iterations */
  json_object_set_new(o, "iterations", json_null());
  json_object_set_new(o, "iteration_summary", st);
  json_object_set_new(o, "total_s", cli_json_number(r->total_s));
  json_object_set_new(o, "duration_s", t->o.duration_s > 0
                                           ? cli_json_number(t->o.duration_s)
                                           : json_null());
  json_object_set_new(o, "last_start_s",
                      r->n ? cli_json_number(r->it[r->n - 1].start_s)
                           : json_null());
  json_object_set_new(o, "samples", cli_json_number(r->samples));
  json_object_set_new(o, "samples_per_s", cli_json_number(r->samples_per_s));
  json_object_set_new(o, "lost_s", lost);
  json_object_set_new(o, "recovery",
                      json_string(sim_recovery_name(t->o.recovery)));
  json_object_set_new(o, "faults", t->faults_file ? json_string(t->faults_file)
                                                  : json_null());
  json_object_set_new(o, "faults_seen", json_integer(r->faults_seen));
  json_object_set_new(o, "replans", json_integer(r->replans));
  json_object_set_new(o, "migrations", json_integer(r->migrations));
  const sim_training_counts *c = &r->c;
  json_object_set_new(o, "goodput_samples_per_s", cli_json_number(r->samples_per_s));
  json_object_set_new(o, "plans_computed", json_integer(c->plans));
  json_object_set_new(o, "plans_adopted", json_integer(c->adopted));
  json_object_set_new(o, "migrations_on_change", json_integer(c->on_change));
  json_object_set_new(o, "migration_s", cli_json_number(c->migration_s));
  json_object_set_new(o, "dropped_replicas", json_integer(c->dropped_replicas));
  json_object_set_new(o, "dropped_inner_steps", json_integer(c->dropped_steps));
  json_object_set_new(o, "dropped_samples", cli_json_number(c->dropped_samples));
}

void cli_training_table(const sim_training_result *r,
                        const cli_training_opts *t) {
  const char *row = r->inner_steps ? "OUTER" : "ITER";
  printf("\n%-6s %12s %12s %10s %8s %10s %10s\n", row, "START_S",
         "ITERATION_S", "LOST_S", "REPLICAS", "SAMPLES", "SAMPLES/S");
  for (size_t k = 0; k < r->n; k++)
    printf("%-6d %12.3f %12.4f %10.3f %8d %10.0f %10.3f\n", r->it[k].index,
           r->it[k].start_s, r->it[k].iteration_s, r->it[k].lost_s,
           r->it[k].replicas, r->it[k].samples, r->it[k].samples_per_s);
  printf("\nrun         %.3f s, %zu %s, %.0f samples: goodput %.3f "
         "samples/s\n", r->total_s, r->n,
         r->inner_steps ? "outer steps" : "iterations", r->samples,
         r->samples_per_s);
  if (t->o.duration_s > 0 && r->total_s > t->o.duration_s && r->n)
    printf("ends        %.3f s after --duration-s %g: the last %s started at "
           "%.3f s, before it, and ran to its end (a run starts %ss while "
           "the clock is before the duration, and never cuts one)\n",
           r->total_s - t->o.duration_s, t->o.duration_s,
           r->inner_steps ? "outer step" : "iteration",
           r->it[r->n - 1].start_s,
           r->inner_steps ? "outer step" : "iteration");
  printf("%-11s mean %.4f  p50 %.4f  p95 %.4f  min %.4f  max %.4f s\n",
         r->inner_steps ? "outer step" : "iteration", r->mean_s, r->p50_s,
         r->p95_s, r->min_s, r->max_s);
  printf("lost        %.3f s:", r->lost_total_s);
  for (int c = 0; c < SIM_LOST_N; c++)
    printf(" %s %.3f", sim_lost_name(c), r->lost_s[c]);
  const sim_training_counts *c = &r->c;
  printf("\nrecovery    %s, %d losses, %d plans computed, %d adopted, %d "
         "migrations (%d on change) taking %.3f s%s%s\n",
         sim_recovery_name(t->o.recovery), c->faults_seen, c->plans,
         c->adopted, c->migrations, c->on_change, c->migration_s,
         t->faults_file ? ", faults " : "",
         t->faults_file ? t->faults_file : "");
  if (r->inner_steps)
    printf("dropped     %d replicas left an outer step's sync, losing %lld "
           "inner steps (%.0f samples) since their last sync\n",
           c->dropped_replicas, c->dropped_steps, c->dropped_samples);
}

const char *cli_replan_help(void) {
  static char help[128];
  if (!help[0])
    snprintf(help, sizeof help,
             "the placement method replan and\n--replan-on-change use "
             "(default: --method, or\n%s)",
             schedule_method_name(SCHEDULE_DTFM_IDENTITY));
  return help;
}
