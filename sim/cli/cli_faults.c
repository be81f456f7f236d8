/* cli_faults: `geodes faults synth SCENARIO --duration-s T --seed S -o FILE
 * [--rate-scale X] [--replace-s R] [--monthly-frac F] [--link-outages]`
 * writes a fault trace from real statistics (traces/fault_synth.c);
 * `geodes faults check FILE --scenario S [--json]` reads one against a
 * scenario and summarises it, or reports its first error as
 * "FILE:LINE: message", exit status 1. The command line recorded in a
 * synthesised file is canonical, so running it again rewrites the same
 * bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/cli/cli.h"
#include "traces/fault.h"
#include "traces/fault_synth.h"

static const char faults_usage[] =
    "usage: geodes faults synth SCENARIO --duration-s T --seed S -o FILE\n"
    "                    [--rate-scale X] [--replace-s R] [--monthly-frac F]\n"
    "                    [--link-outages]\n"
    "       geodes faults check FILE --scenario S [--json]\n\n"
    "A fault trace is CSV (traces/FORMATS.md): '#' provenance comments,\n"
    "then t_s,event,target,duration_s,factor; events device_down, site_down,\n"
    "link_down, link_slow, device_slow; targets a device index, a site or\n"
    "A:B; durations in seconds or inf.\n\n"
    "synth  a fault trace from real statistics ('geodes faults synth "
    "--help')\n"
    "check  read FILE against a scenario and summarise it ('geodes faults "
    "check\n"
    "       --help')\n";

static const cli_opt_command SYNTH = {
    .name = "faults synth",
    .usage =
        "usage: geodes faults synth SCENARIO --duration-s T --seed S -o FILE\n"
        "                    [--rate-scale X] [--replace-s R] "
        "[--monthly-frac F]\n"
        "                    [--link-outages]\n\n"
        "Spot interruptions of the scenario's instances at the rate of their\n"
        "AWS Spot Instance Advisor band, each lasting a replacement's boot:\n"
        "each site's \"instance\" key names its EC2 type, looked up in\n"
        "traces/data/fault_params.csv (which says what is measured); written\n"
        "as a fault trace (traces/FORMATS.md). Deterministic for a seed; the\n"
        "header records the command.\n\n",
    .width = 17, .args_min = 1, .args_max = 1, .missing = "which SCENARIO?"};

static const cli_opt_command CHECK = {
    .name = "faults check",
    .usage =
        "usage: geodes faults check FILE --scenario S [--json]\n\n"
        "Reads the fault trace FILE against scenario S and summarises it;\n"
        "exit status 1 and FILE:LINE: message on the first problem.\n\n",
    .width = 17, .args_min = 1, .args_max = 1, .missing = "which FILE?"};

/* The arguments as typed (the header records synth's) and their values. */
typedef struct faults_args {
  const char *scenario, *duration, *seed, *out, *scale, *replace, *frac;
  const char *file;
  bool links, json;
  long seed_v;
  fault_synth_opts o;
} faults_args;

/* Parses synth's argv into a; CLI_OK, CLI_USAGE or CLI_OPT_HELPED. */
static int synth_args(int argc, char **argv, faults_args *a) {
  *a = (faults_args){.o = fault_synth_opts_default()};
  fault_synth_opts *o = &a->o;
  const cli_opt opts[] = {
      CLI_OPT_REAL_KEEP(0, "duration-s", "T", &o->duration_s, 1e-9, 1e9,
                        &a->duration, "interruptions start in [0, T) (seconds)"),
      CLI_OPT_INT_KEEP(0, "seed", "S", &a->seed_v, 0, 0x7fffffffL, &a->seed,
                       "seed of the generator"),
      CLI_OPT_STRING('o', "output", "-o, --output F", &a->out,
                     "the file to write ('-': standard output)"),
      CLI_OPT_REAL_KEEP(0, "rate-scale", "X", &o->rate_scale, 1e-12, 1e12,
                        &a->scale,
                        "multiply every rate (1: as measured; a lower bound)"),
      CLI_OPT_REAL_KEEP(0, "replace-s", "R", &o->replace_s, 1e-9, 1e9,
                        &a->replace,
                        "how long an interrupted instance is gone (40 s)"),
      CLI_OPT_REAL_KEEP(0, "monthly-frac", "F", &o->monthly_frac, 1e-12,
                        1 - 1e-12, &a->frac,
                        "every site's monthly interruption fraction, in\n"
                        "(0, 1), instead of the table's (needed for sites\n"
                        "whose \"instance\" type is absent or unknown)"),
      CLI_OPT_FLAG(0, "link-outages", &o->link_outages,
                   "also outages of the links between sites (research\n"
                   "WAN statistics; off by default)"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SYNTH, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  a->file = args[0];
  a->links = o->link_outages;
  o->seed = (uint64_t)a->seed_v;
  const char *cmd = SYNTH.name;
  if (!a->duration) return cli_usage_error(cmd, "--duration-s is missing");
  if (!a->seed) return cli_usage_error(cmd, "--seed is missing");
  if (!a->out) return cli_usage_error(cmd, "-o FILE is missing");
  return CLI_OK;
}

/* The canonical command line, for "# generated_by:". Caller frees. */
static char *command_line(const faults_args *a) {
  const char *parts[][2] = {{"--duration-s", a->duration}, {"--seed", a->seed},
                            {"--rate-scale", a->scale},
                            {"--replace-s", a->replace},
                            {"--monthly-frac", a->frac}};
  size_t n = 64 + strlen(a->file) + strlen(a->out);
  for (size_t i = 0; i < 5; i++) n += parts[i][1] ? strlen(parts[i][1]) + 20 : 0;
  char *s = mem_alloc(n);
  int k = snprintf(s, n, "geodes faults synth %s", a->file);
  for (size_t i = 0; i < 5; i++)
    if (parts[i][1])
      k += snprintf(s + k, n - (size_t)k, " %s %s", parts[i][0], parts[i][1]);
  if (a->links) k += snprintf(s + k, n - (size_t)k, " --link-outages");
  snprintf(s + k, n - (size_t)k, " -o %s", a->out);
  return s;
}

static int faults_synth(int argc, char **argv) {
  faults_args a;
  int rc = synth_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  scenario *s = scenario_load(a.file, &e);
  fault_params *p = s ? fault_params_builtin(&e) : NULL;
  if (!p) {
    scenario_free(s);
    return cli_error("%s", e.msg);
  }
  char *line = command_line(&a);
  a.o.command = line;
  cli_out out;
  if ((rc = cli_out_open(&out, a.out, "the fault trace")) == CLI_OK) {
    if (fault_synth_write(out.f, a.out, s, p, &a.o, &e) != ERR_OK)
      rc = cli_error("%s", e.msg);
    rc = cli_out_close(&out, rc);
  }
  free(line);
  fault_params_free(p);
  scenario_free(s);
  return rc;
}

static void check_print(const fault_trace *f, const faults_args *a,
                        const scenario *s) {
  size_t count[FAULT_NKINDS] = {0};
  double last = 0;
  for (size_t i = 0; i < fault_count(f); i++) {
    const fault_event *ev = fault_event_at(f, i);
    count[ev->kind]++;
    last = (double)ev->t_ns * 1e-9;
  }
  if (a->json) {
    json_t *o = json_object(), *k = json_object();
    json_object_set_new(o, "file", json_string(a->file));
    json_object_set_new(o, "scenario", json_string(s->name));
    json_object_set_new(o, "events", json_integer((json_int_t)fault_count(f)));
    for (int i = 0; i < FAULT_NKINDS; i++)
      json_object_set_new(k, fault_kind_name(i), json_integer((json_int_t)count[i]));
    json_object_set_new(o, "by_event", k);
    json_object_set_new(o, "last_start_s", json_real(last));
    const char *seed = fault_comment(f, "seed");
    json_object_set_new(o, "seed", seed ? json_string(seed) : json_null());
    cli_print_json(o, CLI_JSON);
    return;
  }
  printf("file        %s\nscenario    %s (%d devices, %d sites)\nevents      "
         "%zu, the last starting at %.3f s\n", a->file, s->name, s->ndevices,
         s->nsites, fault_count(f), last);
  for (int i = 0; i < FAULT_NKINDS; i++)
    printf("  %-12s %zu\n", fault_kind_name(i), count[i]);
}

static int faults_check(int argc, char **argv) {
  faults_args a = {0};
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "scenario", "S", &a.scenario,
                     "a built-in name or a path (required)"),
      CLI_OPT_FLAG(0, "json", &a.json, "one JSON object instead of the table"),
      CLI_OPT_HELP(),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&CHECK, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  a.file = args[0];
  if (!a.scenario)
    return cli_usage_error(CHECK.name, "--scenario S is missing");
  err e = {0};
  scenario *s = scenario_load(a.scenario, &e);
  fault_trace *f = s ? fault_load(a.file, s, &e) : NULL;
  if (!f) rc = cli_error("%s", e.msg);
  else check_print(f, &a, s);
  fault_free(f);
  scenario_free(s);
  return rc;
}

int cli_faults(int argc, char **argv) {
  static const cli_action actions[] = {{"synth", faults_synth},
                                       {"check", faults_check}};
  return cli_actions("faults", faults_usage, actions, 2, argc, argv);
}
