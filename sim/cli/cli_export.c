/* cli_export: `geodes scenarios --export NAME [-o FILE]` — a built-in or a
 * scenario file as an editable scenario file, every key with its value and
 * the network matrix inline (traces/scenario_export.h) — and `geodes
 * scenarios --show NAME`: every key with its effective value, those the
 * file leaves to their default marked. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "traces/scenario_export.h"

/* The text of a file of s (path; for a built-in scenario, the embedded
 * copy of name), what it is for the message: NULL and e filled when it
 * cannot be read (a built-in's missing copy: NULL alone). Caller frees. */
static char *source_text(const scenario *s, const char *name,
                         const char *path, const char *what, size_t *len,
                         err *e) {
  if (strcmp(s->origin, "built-in") == 0) {
    const builtin_file *b = builtin_find(name);
    *len = b ? b->size : 0;
    return b ? mem_strndup(b->data, b->size) : NULL;
  }
  return file_load(path, what, FILE_MAX_BYTES, len, e);
}

/* out with its extension replaced by ".csv": where a varying network's
 * trace goes beside an export. Caller frees. */
static char *trace_beside(const char *out) {
  size_t n = strlen(out);
  const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
  if (dot && (!slash || dot > slash)) n = (size_t)(dot - out);
  char *p = mem_alloc(n + 5);
  memcpy(p, out, n);
  strcpy(p + n, ".csv");
  return p;
}

/* A network that varies in time stays a trace: its CSV is copied beside
 * out, into *o (opened, written, not closed: the scenario and its trace
 * are put in place together), and *name is its file name relative to
 * out. */
static int copy_trace(const scenario *s, const char *out, cli_out *o,
                      char **name) {
  if (strcmp(out, "-") == 0)
    return cli_error("%s: its network varies in time (network.trace %s): "
                     "give -o FILE, and its trace is written beside it",
                     s->name, s->trace_file);
  char *path = trace_beside(out);
  if (strcmp(path, out) == 0) {
    free(path);
    return cli_error("%s: its trace would be written to the same file (a "
                     "varying network's trace goes beside the scenario, as "
                     "NAME.csv): give -o a name that does not end in .csv",
                     out);
  }
  err e = {0};
  size_t len = 0;
  char *text = source_text(s, s->trace_file, s->trace_file,
                           "the scenario's trace", &len, &e);
  int rc = text ? cli_out_open(o, path, "the scenario's trace")
                : cli_error("%s", e.msg);
  if (text && rc == CLI_OK && fwrite(text, 1, len, o->f) != len)
    rc = cli_out_close(o, cli_error("%s: cannot write the scenario's trace",
                                    path));
  free(text);
  const char *slash = strrchr(path, '/');
  *name = rc == CLI_OK ? mem_strdup(slash ? slash + 1 : path) : NULL;
  free(path);
  return rc;
}

int cli_scenarios_export(const char *name, const char *out) {
  err e = {0};
  scenario *s = scenario_load(name, &e);
  if (!s) return cli_error("%s", e.msg);
  char *trace_name = NULL;
  cli_out t = {0}, o;
  int rc = trace_is_static(s->network) ? CLI_OK
                                       : copy_trace(s, out, &t, &trace_name);
  bool opened = rc == CLI_OK &&
                (rc = cli_out_open(&o, out, "the scenario")) == CLI_OK;
  if (opened) {
    json_t *j = scenario_export(s, trace_name);
    scenario_export_write(j, o.f);
    json_decref(j);
  }
  if (t.f) rc = cli_out_close(&t, rc); /* first: the scenario names it */
  if (opened) rc = cli_out_close(&o, rc);
  free(trace_name);
  scenario_free(s);
  return rc;
}

/* ---- --show ---- */

/* The file's value at key of its object src (NULL: absent). */
static const json_t *source_at(const json_t *src, const char *key) {
  return src && json_is_object(src) ? json_object_get(src, key) : NULL;
}

static void show_line(const char *path, const json_t *v, bool given) {
  char *text = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&text, &n);
  scenario_export_value(v, m);
  fclose(m);
  printf("%-34s %s%s\n", path, text, given ? "" : "   (default)");
  free(text);
}

/* Every leaf of v (the export) under path; src is the file's object at the
 * same place (NULL: absent), whose keys say what was given. */
static void show_tree(const char *path, const json_t *v, const json_t *src) {
  const char *k;
  json_t *x;
  char sub[512];
  json_object_foreach((json_t *)v, k, x) {
    snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
    const json_t *sx = source_at(src, k);
    bool objects = json_is_array(x) && json_array_size(x) &&
                   json_is_object(json_array_get(x, 0));
    if (json_is_object(x) && json_is_string(sx)) { /* hf:PATH's dimensions */
      show_line(sub, sx, true);
      show_tree(sub, x, x);
    } else if (json_is_object(x)) {
      show_tree(sub, x, sx);
    } else if (objects && strcmp(k, "links") != 0) {
      for (size_t i = 0; i < json_array_size(x); i++) {
        char el[560];
        snprintf(el, sizeof el, "%s[%zu]", sub, i);
        show_tree(el, json_array_get(x, i),
                  json_is_array(sx) ? json_array_get(sx, i) : NULL);
      }
    } else if (objects) {
      printf("%-34s %zu links%s\n", sub, json_array_size(x),
             sx ? "" : "   (derived: a uniform value or a trace)");
    } else {
      show_line(sub, x, sx != NULL);
    }
  }
}

/* Each site's GPU-hour that its key does not give: its instance's price,
 * or none. */
static void show_prices(const scenario *s) {
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *st = &s->sites[i];
    char key[64];
    snprintf(key, sizeof key, "sites[%d].usd_per_gpu_hour", i);
    if (!st->price_from)
      printf("%-34s none   (not priced: no usd_per_gpu_hour, no instance of "
             "%s)\n", key, s->prices_file);
    else if (strncmp(st->price_from, "sites[", 6)) {
      json_t *v = json_real(st->usd_per_gpu_hour);
      show_line(key, v, true);
      json_decref(v);
      printf("%-34s   (its instance's: %s)\n", "", st->price_from);
    }
  }
}

int cli_scenarios_show(const char *name) {
  err e = {0};
  scenario *s = scenario_load(name, &e);
  if (!s) return cli_error("%s", e.msg);
  size_t len = 0;
  err e2 = {0}; /* a file that cannot be read: every key marked default */
  char *text = source_text(s, s->file, s->origin, "the scenario", &len, &e2);
  json_t *src = text ? json_loadb(text, len, 0, NULL) : NULL;
  free(text);
  const char *slash = s->trace_file ? strrchr(s->trace_file, '/') : NULL;
  json_t *j = scenario_export(
      s, s->trace_file ? (slash ? slash + 1 : s->trace_file) : NULL);
  printf("scenario %s (%s); keys the file leaves out are marked (default)\n\n",
         s->name, s->origin);
  json_t *sites = json_object_get(j, "sites");
  for (int i = 0; i < s->nsites; i++) /* a price from the table: below */
    if (s->sites[i].price_from && strncmp(s->sites[i].price_from, "sites[", 6))
      json_object_del(json_array_get(sites, (size_t)i), "usd_per_gpu_hour");
  show_tree("", j, src);
  show_prices(s);
  if (!json_object_get(json_object_get(j, "workload"), "layers")) {
    const spec_model *m = spec_scenario_model(s);
    printf("%-34s %d (the model's depth)   (default)\n", "workload.layers",
           m ? m->layers : 0);
  }
  for (int i = 0; i < s->nsites; i++) {
    char key[64];
    snprintf(key, sizeof key, "sites[%d].instance", i);
    if (!s->sites[i].instance)
      printf("%-34s none   (default: faults synth needs --monthly-frac)\n",
             key);
    const spec_gpu *g = spec_gpu_find(s->sites[i].gpu);
    snprintf(key, sizeof key, "sites[%d].gpu_memory_gb", i);
    if (!(s->sites[i].gpu_memory_gb > 0) && g)
      printf("%-34s %g (the %s's)   (default)\n", key, g->memory_bytes / 1e9,
             g->name);
  }
  json_decref(j);
  json_decref(src);
  scenario_free(s);
  return CLI_OK;
}
