/* cli_scenarios: `geodes scenarios [--json]` — the built-in scenarios with
 * their size and latency convention. Every listed scenario is loaded and
 * checked, so a built-in that does not load is reported here (exit 1), not
 * later; the listing loads them brief (scenario_load_brief: no trace CSV
 * parsed, network NULL), --show and --export in full. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "sim/cli/cli.h"

static const cli_opt_command SCENARIOS = {
    .name = "scenarios",
    .usage =
        "usage: geodes scenarios [--json]\n"
        "       geodes scenarios --export NAME|FILE [-o FILE]\n"
        "       geodes scenarios --show NAME|FILE\n\n"
        "Lists the built-in scenarios: devices, sites, the latency "
        "convention\n"
        "(how latency_ms was derived: DT-FM's table value used as one-way "
        "delay,\n"
        "or measured RTT/2) and a description. --export writes one as an\n"
        "editable scenario file (every key, the network matrix inline as\n"
        "network.links); --show lists every key with its effective value.\n"
        "The format: traces/FORMATS.md.\n\n",
    .width = 9};

/* Prints text wrapped at width columns, each line indented by indent. */
static void print_wrapped(const char *text, int indent, int width) {
  const char *p = text;
  while (*p) {
    while (*p == ' ') p++;
    int n = (int)strlen(p);
    if (n > width) {
      n = width;
      while (n > 0 && p[n] != ' ') n--;
      if (n == 0) n = width;
    }
    printf("%*s%.*s\n", indent, "", n, p);
    p += n;
  }
}

static void print_table(scenario *const *all, int n) {
  printf("%-20s %7s %5s  %s\n", "NAME", "DEVICES", "SITES",
         "LATENCY CONVENTION");
  for (int i = 0; i < n; i++) {
    const scenario *s = all[i];
    printf("%-20s %7d %5d  %s\n", s->name, s->ndevices, s->nsites,
           s->latency_convention);
    print_wrapped(s->description, 4, 74);
  }
}

static json_t *scenario_json(const scenario *s) {
  json_t *sites = json_array();
  for (int i = 0; i < s->nsites; i++)
    json_array_append_new(sites, json_string(s->sites[i].name));
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(s->name));
  json_object_set_new(o, "devices", json_integer(s->ndevices));
  json_object_set_new(o, "sites", json_integer(s->nsites));
  json_object_set_new(o, "site_names", sites);
  json_object_set_new(o, "latency_convention",
                      json_string(s->latency_convention));
  json_object_set_new(o, "description", json_string(s->description));
  json_object_set_new(o, "static", json_boolean(s->network_static));
  return o;
}

static int print_json(scenario *const *all, int n) {
  json_t *list = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(list, scenario_json(all[i]));
  json_t *root = json_object();
  json_object_set_new(root, "scenarios", list);
  cli_print_json(root, JSON_INDENT(2));
  return CLI_OK;
}

int cli_scenarios(int argc, char **argv) {
  bool as_json = false, markdown = false;
  const char *export = NULL, *show = NULL, *out = NULL;
  const cli_opt opts[] = {
      CLI_OPT_FLAG(0, "json", &as_json,
                   "print one JSON object {\"scenarios\": [...]}"),
      CLI_OPT_FLAG(0, "markdown", &markdown, "a Markdown table (traces/SCENARIOS.md's)"),
      CLI_OPT_STRING(0, "export", "NAME", &export,
                     "write a built-in (or a scenario file) as an\n"
                     "editable scenario file"),
      CLI_OPT_STRING('o', "output", "-o FILE", &out,
                     "--export: the file to write (default stdout; a\n"
                     "network that varies in time needs it: its trace\n"
                     "goes beside it, FILE's name with .csv)"),
      CLI_OPT_STRING(0, "show", "NAME", &show,
                     "every key of a scenario with its effective\n"
                     "value, defaults marked"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SCENARIOS, opts, argc, argv, &args, &nargs);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  if (!!export + !!show + as_json > 1)
    return cli_usage_error("scenarios", "give one of --export, --show, "
                           "--json");
  if (out && !export)
    return cli_usage_error("scenarios", "-o FILE goes with --export");
  if (export) return cli_scenarios_export(export, out ? out : "-");
  if (show) return cli_scenarios_show(show);
  const char *const *names = scenario_builtin_names();
  int n = 0;
  while (names[n]) n++;
  scenario **all = mem_calloc((size_t)n + 1, sizeof *all);
  err e = {0};
  for (int i = 0; i < n && rc == CLI_OK; i++)
    if (!(all[i] = scenario_load_brief(names[i], &e)))
      rc = cli_error("%s", e.msg);
  if (rc == CLI_OK) {
    if (as_json)
      rc = print_json(all, n);
    else if (markdown)
      cli_scenarios_markdown(all, n);
    else
      print_table(all, n);
  }
  for (int i = 0; i < n; i++) scenario_free(all[i]);
  free(all);
  return rc;
}
