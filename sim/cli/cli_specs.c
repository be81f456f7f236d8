/* cli_specs: `geodes models` and `geodes gpus` — the tables of models/spec
 * (the transformer shapes a workload names, the GPU types a site names),
 * as a plain table, or with --markdown as the Markdown table the pages
 * hold (models/MODELS.md; a test keeps their copy equal to this output);
 * and the Markdown table of the built-in scenarios (`geodes scenarios
 * --markdown`, traces/SCENARIOS.md).
 * Invariant: every row comes from the static tables or the built-in
 * scenarios themselves; nothing here is a second list of them. */
#include <stdio.h>
#include <string.h>

#include "models/spec.h"
#include "sim/cli/cli.h"

static const cli_opt_command MODELS = {
    .name = "models",
    .usage = "usage: geodes models [--markdown]\n\n"
             "Lists the models a scenario's workload.model or --model names:"
             "\ntheir depth, width, heads, sequence length and vocabulary, "
             "and\nwhere the shape comes from.\n\n",
    .width = 12};

static const cli_opt_command GPUS = {
    .name = "gpus",
    .usage = "usage: geodes gpus [--markdown]\n\n"
             "Lists the GPU types a site's gpu or --gpu names: dense fp16 "
             "tensor\nrate (mixed precision), memory and memory bandwidth, "
             "and the\ndatasheet.\n\n",
    .width = 12};

/* Parses a command that takes only --markdown. CLI_OK, CLI_USAGE or
 * CLI_OPT_HELPED. */
static int parse_markdown(const cli_opt_command *c, int argc, char **argv,
                          bool *markdown) {
  const cli_opt opts[] = {
      CLI_OPT_FLAG(0, "markdown", markdown,
                   "a Markdown table (models/MODELS.md's)"),
      CLI_OPT_HELP(), CLI_OPT_END()};
  char **args;
  int nargs;
  return cli_opt_parse(c, opts, argc, argv, &args, &nargs);
}

/* s with '|' escaped for a Markdown cell, into buf. */
static const char *cell(const char *s, char *buf, size_t size) {
  size_t at = 0;
  for (; *s && at + 3 < size; s++) {
    if (*s == '|') buf[at++] = '\\';
    buf[at++] = *s == '\n' ? ' ' : *s;
  }
  buf[at] = '\0';
  return buf;
}

int cli_models(int argc, char **argv) {
  bool md = false;
  int rc = parse_markdown(&MODELS, argc, argv, &md);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  int n;
  const spec_model *m = spec_models(&n);
  if (md)
    printf("| model | layers | hidden | heads | sequence | vocabulary | "
           "architecture | source |\n|---|---|---|---|---|---|---|---|\n");
  else
    printf("%-14s %6s %6s %5s %5s %6s %-5s  %s\n", "NAME", "LAYERS", "HIDDEN",
           "HEADS", "SEQ", "VOCAB", "ARCH", "SOURCE");
  for (int i = 0; i < n; i++) {
    char src[512];
    const char *arch = spec_arch_names[m[i].arch];
    if (md)
      printf("| `%s` | %d | %d | %d | %d | %d | %s | %s |\n", m[i].name,
             m[i].layers, m[i].hidden, m[i].heads, m[i].seq, m[i].vocab, arch,
             cell(m[i].source, src, sizeof src));
    else
      printf("%-14s %6d %6d %5d %5d %6d %-5s  %s\n", m[i].name, m[i].layers,
             m[i].hidden, m[i].heads, m[i].seq, m[i].vocab, arch, m[i].source);
  }
  return CLI_OK;
}

int cli_gpus(int argc, char **argv) {
  bool md = false;
  int rc = parse_markdown(&GPUS, argc, argv, &md);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  int n;
  const spec_gpu *g = spec_gpus(&n);
  if (md)
    printf("| GPU | fp16 TFLOP/s | memory GB | memory GB/s | board W | "
           "source |\n|---|---|---|---|---|---|\n");
  else
    printf("%-9s %12s %9s %11s %7s  %s\n", "NAME", "FP16_TFLOPS",
           "MEMORY_GB", "MEM_BW_GB_S", "BOARD_W", "SOURCE");
  for (int i = 0; i < n; i++) {
    char src[1024], both[1024], w[16] = "-";
    if (g[i].board_w > 0) snprintf(w, sizeof w, "%g", g[i].board_w);
    snprintf(both, sizeof both, "%s; power: %s", g[i].source,
             g[i].power_source ? g[i].power_source : "not stated");
    if (md)
      printf("| `%s` | %g | %g | %g | %s | %s |\n", g[i].name,
             g[i].peak_flops / 1e12, g[i].memory_bytes / 1e9,
             g[i].mem_bw_bytes_s / 1e9, w, cell(both, src, sizeof src));
    else
      printf("%-9s %12g %9g %11g %7s  %s\n", g[i].name,
             g[i].peak_flops / 1e12, g[i].memory_bytes / 1e9,
             g[i].mem_bw_bytes_s / 1e9, w, both);
  }
  return CLI_OK;
}

/* Cuts text after its first sentence: at the first ". " outside
 * parentheses, so that "(Jaghouar et al. 2024)" or "(e.g. ...)" stays. */
static void first_sentence(char *text) {
  int depth = 0;
  for (char *p = text; *p; p++) {
    depth += (*p == '(') - (*p == ')');
    if (depth == 0 && p[0] == '.' && p[1] == ' ') {
      p[1] = '\0';
      return;
    }
  }
}

void cli_scenarios_markdown(scenario *const *all, int n) {
  printf("| scenario | devices | sites | GPUs | description |\n"
         "|---|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    const scenario *s = all[i];
    char gpus[256] = "", desc[2048];
    for (int k = 0; k < s->nsites; k++) {
      const char *gname = s->sites[k].gpu;
      bool seen = false;
      for (int j = 0; j < k; j++) seen |= strcmp(s->sites[j].gpu, gname) == 0;
      if (!seen)
        snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%s",
                 gpus[0] ? ", " : "", gname);
    }
    cell(s->description, desc, sizeof desc);
    first_sentence(desc);
    printf("| `%s` | %d | %d | %s | %s |\n", s->name, s->ndevices, s->nsites,
           gpus, desc);
  }
}
