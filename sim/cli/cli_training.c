/* cli_training: the options of a training run shared by simulate and sweep
 * (DESIGN.md sections 9 and 10) — --iterations, --duration-s, --faults,
 * --recovery, --checkpoint-every, --storage-gbps, --replan-on-change,
 * --replan-method — their checks (a usage error, exit 2, for a count or a
 * duration out of range) and how a run's result is printed: a table of
 * iterations and losses, or the JSON fields of section 9. */
#include "sim/cli/cli_training.h"

#include <stdlib.h>
#include <string.h>

#include "schedules/schedule.h"
#include "traces/mem.h"

enum {
  OPT_ITER = CLI_OPT_BASE + 100,
  OPT_DURATION,
  OPT_FAULTS,
  OPT_RECOVERY,
  OPT_CKPT,
  OPT_STORAGE,
  OPT_ON_CHANGE,
  OPT_REPLAN_METHOD,
};

static const struct option training_options[] = {
    {"iterations", required_argument, NULL, OPT_ITER},
    {"duration-s", required_argument, NULL, OPT_DURATION},
    {"faults", required_argument, NULL, OPT_FAULTS},
    {"recovery", required_argument, NULL, OPT_RECOVERY},
    {"checkpoint-every", required_argument, NULL, OPT_CKPT},
    {"storage-gbps", required_argument, NULL, OPT_STORAGE},
    {"replan-on-change", no_argument, NULL, OPT_ON_CHANGE},
    {"replan-method", required_argument, NULL, OPT_REPLAN_METHOD},
    {NULL, 0, NULL, 0},
};

const char cli_training_help[] =
    "Training run options (many iterations on one clock):\n"
    "  --iterations N         run N consecutive iterations (default 1)\n"
    "  --duration-s T         start iterations until simulated time T\n"
    "  --faults FILE          a fault trace (geodes faults --help)\n"
    "  --recovery POLICY      what a lost device does: restart (from the\n"
    "                         last checkpoint, after it is back), reroute\n"
    "                         (the surviving replicas go on), replan (the\n"
    "                         placement method runs on the devices left)\n"
    "  --checkpoint-every K   a checkpoint after every K iterations (none\n"
    "                         by default: a restart goes back to the start)\n"
    "  --storage-gbps X       checkpoint storage per device (1.5: the EBS\n"
    "                         bandwidth of a p3.2xlarge)\n"
    "  --replan-on-change     migrate when the moving network makes another\n"
    "                         placement faster by more than the move costs\n"
    "  --replan-method NAME   the placement method replan and\n"
    "                         --replan-on-change use (default: --method, or\n"
    "                         dtfm-identity)\n";

void cli_training_init(cli_training_opts *t) {
  memset(t, 0, sizeof *t);
  t->o = sim_training_opts_default();
}

struct option *cli_training_options(const struct option *own) {
  size_t n = 0, m = sizeof training_options / sizeof *training_options;
  while (own[n].name) n++;
  struct option *v = mem_alloc((n + m) * sizeof *v);
  memcpy(v, own, n * sizeof *v);
  memcpy(v + n, training_options, m * sizeof *v);
  return v;
}

int cli_training_parse(const char *cmd, int c, const char *arg,
                       cli_training_opts *t) {
  long v;
  switch (c) {
    case OPT_ITER:
      if (!cli_parse_int(cmd, "--iterations", arg, 1,
                         SIM_TRAINING_MAX_ITERATIONS, &v))
        return -1;
      t->o.iterations = (int)v;
      t->iterations_given = true;
      break;
    case OPT_DURATION:
      if (!cli_parse_double(cmd, "--duration-s", arg, 1e-9,
                            SIM_TRAINING_MAX_S, &t->o.duration_s))
        return -1;
      break;
    case OPT_FAULTS: t->faults_file = arg; break;
    case OPT_RECOVERY: {
      int r = sim_recovery_parse(arg);
      if (r < 0) {
        cli_usage_error(cmd, "--recovery is restart, reroute or replan, not "
                        "'%s'", arg);
        return -1;
      }
      t->o.recovery = (sim_recovery)r;
      break;
    }
    case OPT_CKPT:
      if (!cli_parse_int(cmd, "--checkpoint-every", arg, 1,
                         SIM_TRAINING_MAX_ITERATIONS, &v))
        return -1;
      t->o.checkpoint_every = (int)v;
      break;
    case OPT_STORAGE:
      if (!cli_parse_double(cmd, "--storage-gbps", arg, 1e-6, 1e9,
                            &t->o.storage_gbps))
        return -1;
      break;
    case OPT_ON_CHANGE: t->o.replan_on_change = true; break;
    case OPT_REPLAN_METHOD:
      if (cli_check_method(cmd, arg)) return -1;
      t->o.method = arg;
      break;
    default: return 0;
  }
  t->active = true;
  return 1;
}

int cli_training_check(const char *cmd, cli_training_opts *t,
                       const char *method) {
  if (t->iterations_given && t->o.duration_s > 0)
    return cli_usage_error(cmd, "give --iterations or --duration-s, not both");
  if (t->o.duration_s > 0) t->o.iterations = 0;
  if (!t->o.method) t->o.method = method;
  return CLI_OK;
}

int cli_training_load(cli_training_opts *t, const scenario *s, err *e) {
  if (!t->faults_file) return ERR_OK;
  t->faults = fault_load(t->faults_file, s, e);
  t->o.faults = t->faults;
  return t->faults ? ERR_OK : e->code;
}

void cli_training_free(cli_training_opts *t) {
  fault_free(t->faults);
  t->faults = NULL;
}

void cli_training_json(json_t *o, const sim_training_result *r,
                       const cli_training_opts *t) {
  json_t *it = json_array(), *lost = json_object(), *st = json_object();
  for (size_t k = 0; k < r->n; k++) {
    const sim_iteration *x = &r->it[k];
    json_array_append_new(
        it, json_pack("{s:i,s:o,s:o,s:o,s:i,s:o}", "index", x->index,
                      "start_s", cli_json_number(x->start_s), "iteration_s",
                      cli_json_number(x->iteration_s), "lost_s",
                      cli_json_number(x->lost_s), "replicas", x->replicas,
                      "samples", cli_json_number(x->samples)));
  }
  for (int c = 0; c < SIM_LOST_N; c++)
    json_object_set_new(lost, sim_lost_name(c), cli_json_number(r->lost_s[c]));
  json_object_set_new(lost, "total", cli_json_number(r->lost_total_s));
  json_object_set_new(st, "mean_s", cli_json_number(r->mean_s));
  json_object_set_new(st, "p50_s", cli_json_number(r->p50_s));
  json_object_set_new(st, "p95_s", cli_json_number(r->p95_s));
  json_object_set_new(st, "min_s", cli_json_number(r->min_s));
  json_object_set_new(st, "max_s", cli_json_number(r->max_s));
  json_object_set_new(o, "iterations", it);
  json_object_set_new(o, "iteration_summary", st);
  json_object_set_new(o, "total_s", cli_json_number(r->total_s));
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
}

void cli_training_table(const sim_training_result *r,
                        const cli_training_opts *t) {
  printf("\n%-6s %12s %12s %10s %8s\n", "ITER", "START_S", "ITERATION_S",
         "LOST_S", "REPLICAS");
  for (size_t k = 0; k < r->n; k++)
    printf("%-6d %12.3f %12.4f %10.3f %8d\n", r->it[k].index, r->it[k].start_s,
           r->it[k].iteration_s, r->it[k].lost_s, r->it[k].replicas);
  printf("\nrun         %.3f s, %zu iterations, %.0f samples: %.3f samples/s\n",
         r->total_s, r->n, r->samples, r->samples_per_s);
  printf("iteration   mean %.4f  p50 %.4f  p95 %.4f  min %.4f  max %.4f s\n",
         r->mean_s, r->p50_s, r->p95_s, r->min_s, r->max_s);
  printf("lost        %.3f s:", r->lost_total_s);
  for (int c = 0; c < SIM_LOST_N; c++)
    printf(" %s %.3f", sim_lost_name(c), r->lost_s[c]);
  printf("\nrecovery    %s, %d losses, %d new plans (%d migrations)%s%s\n",
         sim_recovery_name(t->o.recovery), r->faults_seen, r->replans,
         r->migrations, t->faults_file ? ", faults " : "",
         t->faults_file ? t->faults_file : "");
}
