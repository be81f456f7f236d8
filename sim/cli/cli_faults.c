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

#include "sim/cli/cli.h"
#include "traces/fault.h"
#include "traces/fault_synth.h"
#include "traces/mem.h"

static const char faults_usage[] =
    "usage: geodes faults synth SCENARIO --duration-s T --seed S -o FILE\n"
    "                    [--rate-scale X] [--replace-s R] [--monthly-frac F]\n"
    "                    [--link-outages]\n"
    "       geodes faults check FILE --scenario S [--json]\n\n"
    "A fault trace is CSV (DESIGN.md section 10): '#' provenance comments,\n"
    "then t_s,event,target,duration_s,factor; events device_down, site_down,\n"
    "link_down, link_slow, device_slow; targets a device index, a site or\n"
    "A:B; durations in seconds or inf.\n\n"
    "synth  spot interruptions of the scenario's instances at the rate of\n"
    "       their AWS Spot Instance Advisor band, each lasting a replacement's\n"
    "       boot (traces/data/fault_params.csv says what is measured):\n"
    "  --duration-s T    interruptions start in [0, T) (seconds)\n"
    "  --seed S          seed of the generator\n"
    "  -o, --output F    the file to write ('-': standard output)\n"
    "  --rate-scale X    multiply every rate (1: as measured; a lower bound)\n"
    "  --replace-s R     how long an interrupted instance is gone (40 s)\n"
    "  --monthly-frac F  every site's monthly interruption fraction, in\n"
    "                    (0, 1), instead of the table's (needed for sites\n"
    "                    the table does not know)\n"
    "  --link-outages    also outages of the links between sites (research\n"
    "                    WAN statistics; off by default)\n"
    "check  read FILE against scenario S and summarise it:\n"
    "  --scenario S      a built-in name or a path (required)\n"
    "  --json            one JSON object instead of the table\n"
    "  --help            this text\n";

typedef struct faults_args {
  const char *scenario, *duration, *seed, *out, *scale, *replace, *frac;
  const char *file;
  bool links, json;
  fault_synth_opts o;
} faults_args;

static int parse_args(const char *cmd, int argc, char **argv, faults_args *a) {
  enum { O_DUR = 1, O_SEED, O_SCALE, O_REPL, O_FRAC, O_LINKS, O_SCEN, O_JSON };
  static const struct option opts[] = {
      {"duration-s", required_argument, NULL, O_DUR},
      {"seed", required_argument, NULL, O_SEED},
      {"output", required_argument, NULL, 'o'},
      {"rate-scale", required_argument, NULL, O_SCALE},
      {"replace-s", required_argument, NULL, O_REPL},
      {"monthly-frac", required_argument, NULL, O_FRAC},
      {"link-outages", no_argument, NULL, O_LINKS},
      {"scenario", required_argument, NULL, O_SCEN},
      {"json", no_argument, NULL, O_JSON},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
      case O_DUR: a->duration = optarg; break;
      case O_SEED: a->seed = optarg; break;
      case 'o': a->out = optarg; break;
      case O_SCALE: a->scale = optarg; break;
      case O_REPL: a->replace = optarg; break;
      case O_FRAC: a->frac = optarg; break;
      case O_LINKS: a->links = true; break;
      case O_SCEN: a->scenario = optarg; break;
      case O_JSON: a->json = true; break;
      case 'h': fputs(faults_usage, stdout); return -1;
      case ':':
        return cli_usage_error(cmd, "%s needs an argument", argv[optind - 1]);
      default:
        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return cli_usage_error(cmd, "which %s?",
                                             strcmp(cmd, "faults check") == 0
                                                 ? "FILE" : "SCENARIO");
  if (argc - optind > 1)
    return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
  a->file = argv[optind];
  return CLI_OK;
}

static int synth_opts(const char *cmd, faults_args *a) {
  if (!a->duration) return cli_usage_error(cmd, "--duration-s is missing");
  if (!a->seed) return cli_usage_error(cmd, "--seed is missing");
  if (!a->out) return cli_usage_error(cmd, "-o FILE is missing");
  long seed;
  a->o = fault_synth_opts_default();
  if (!cli_parse_double(cmd, "--duration-s", a->duration, 1e-9, 1e9,
                        &a->o.duration_s) ||
      !cli_parse_int(cmd, "--seed", a->seed, 0, 0x7fffffffL, &seed) ||
      (a->scale && !cli_parse_double(cmd, "--rate-scale", a->scale, 1e-12,
                                     1e12, &a->o.rate_scale)) ||
      (a->replace && !cli_parse_double(cmd, "--replace-s", a->replace, 1e-9,
                                       1e9, &a->o.replace_s)) ||
      (a->frac && !cli_parse_double(cmd, "--monthly-frac", a->frac, 1e-12,
                                    1 - 1e-12, &a->o.monthly_frac)))
    return CLI_USAGE;
  a->o.seed = (uint64_t)seed;
  a->o.link_outages = a->links;
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
  const char *cmd = "faults synth";
  faults_args a = {0};
  int rc = parse_args(cmd, argc, argv, &a);
  if (rc < 0) return CLI_OK;
  if (rc || (rc = synth_opts(cmd, &a))) return rc;
  err e = {ERR_OK, ""};
  scenario *s = scenario_load(a.file, &e);
  fault_params *p = s ? fault_params_builtin(&e) : NULL;
  if (!p) {
    scenario_free(s);
    return cli_error("%s", e.msg);
  }
  char *line = command_line(&a);
  a.o.command = line;
  bool to_stdout = strcmp(a.out, "-") == 0;
  FILE *out = to_stdout ? stdout : fopen(a.out, "w");
  if (!out) {
    rc = cli_error("%s:0: cannot write: %s", a.out, strerror(errno));
  } else {
    if (fault_synth_write(out, a.out, s, p, &a.o, &e) != ERR_OK)
      rc = cli_error("%s", e.msg);
    if (!to_stdout && fclose(out) != 0 && rc == CLI_OK)
      rc = cli_error("%s:0: cannot write: %s", a.out, strerror(errno));
    if (!to_stdout && rc != CLI_OK) remove(a.out); /* nothing half-written */
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
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    puts(text);
    free(text);
    json_decref(o);
    return;
  }
  printf("file        %s\nscenario    %s (%d devices, %d sites)\nevents      "
         "%zu, the last starting at %.3f s\n", a->file, s->name, s->ndevices,
         s->nsites, fault_count(f), last);
  for (int i = 0; i < FAULT_NKINDS; i++)
    printf("  %-12s %zu\n", fault_kind_name(i), count[i]);
}

static int faults_check(int argc, char **argv) {
  const char *cmd = "faults check";
  faults_args a = {0};
  int rc = parse_args(cmd, argc, argv, &a);
  if (rc < 0) return CLI_OK;
  if (rc) return rc;
  if (!a.scenario) return cli_usage_error(cmd, "--scenario S is missing");
  err e = {ERR_OK, ""};
  scenario *s = scenario_load(a.scenario, &e);
  fault_trace *f = s ? fault_load(a.file, s, &e) : NULL;
  if (!f) rc = cli_error("%s", e.msg);
  else check_print(f, &a, s);
  fault_free(f);
  scenario_free(s);
  return rc;
}

int cli_faults(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(faults_usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (strcmp(argv[1], "synth") == 0) return faults_synth(argc - 1, argv + 1);
  if (strcmp(argv[1], "check") == 0) return faults_check(argc - 1, argv + 1);
  return cli_usage_error("faults", "unknown action '%s' (synth or check)",
                         argv[1]);
}
