/* harness_cli: the relations the harness checks by running the geodes
 * binary (tests/harness.h), where they are about files and options: the
 * allocation `schedule -o` writes read back by every reader, and options a
 * runtime does not use. Each run's stdout and stderr go to files in the
 * harness's folder; --json outputs are parsed with jansson. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/mem.h"
#include "tests/harness.h"

#define HX_ARGS_MAX 40

/* A run of the binary: exit status, stdout parsed as JSON (NULL when it is
 * not), stderr's first line. */
typedef struct hx_out {
  int status;
  json_t *json;
  char err[512];
} hx_out;

static void out_clear(hx_out *x) {
  json_decref(x->json);
  *x = (hx_out){0};
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return mem_strdup("");
  size_t cap = 4096, n = 0;
  char *buf = mem_alloc(cap);
  size_t k;
  while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (cap - n < 2) buf = mem_realloc(buf, cap *= 2);
  }
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Runs bin with the NULL-terminated args (after the binary's name) in dir;
 * fills x. */
static void run(const hx_opts *o, const char *const *args, hx_out *x) {
  *x = (hx_out){.status = -1};
  char out[1024], errp[1024];
  snprintf(out, sizeof out, "%s/hx.out", o->dir);
  snprintf(errp, sizeof errp, "%s/hx.err", o->dir);
  const char *argv[HX_ARGS_MAX + 2] = {o->bin};
  int n = 1;
  for (; args[n - 1] && n <= HX_ARGS_MAX; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  fflush(stdout), fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
    if (chdir(o->dir) != 0) _exit(126);
    execv(o->bin, (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  x->status = pid < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  char *text = slurp(out), *etext = slurp(errp);
  x->json = json_loads(text, 0, NULL);
  char *nl = strchr(etext, '\n');
  if (nl) *nl = '\0';
  snprintf(x->err, sizeof x->err, "%s", etext);
  free(text), free(etext);
}

/* args as a list built by adding words. */
typedef struct words {
  const char *w[HX_ARGS_MAX + 1];
  int n;
  char store[HX_ARGS_MAX][160];
} words;

static void add(words *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(words *a, const char *fmt, ...) {
  if (a->n >= HX_ARGS_MAX) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->store[a->n], sizeof a->store[a->n], fmt, ap);
  va_end(ap);
  a->w[a->n] = a->store[a->n];
  a->w[++a->n] = NULL;
}

static double number(const json_t *o, const char *path) {
  char key[128];
  snprintf(key, sizeof key, "%s", path);
  const json_t *v = o;
  for (char *p = key, *dot; v && p; p = dot ? dot + 1 : NULL) {
    dot = strchr(p, '.');
    if (dot) *dot = '\0';
    v = json_object_get(v, p);
  }
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *describe(const hx_case *c) {
  static char buf[600];
  hx_case_describe(c, buf, sizeof buf);
  return buf;
}

/* A reader of the allocation file alloc (as the case's scenario file
 * scen): its command and the time it reports, checked against want. */
static void reader(const hx_case *c, const hx_opts *o, hx_report *r,
                   const char *scen, const char *alloc, const char *cmd,
                   const char *field, double want) {
  words a = {0};
  add(&a, "%s", cmd), add(&a, "%s", scen), add(&a, "--alloc"), add(&a, "%s", alloc);
  add(&a, "--json"), add(&a, "--network-model");
  add(&a, "%s", transport_model_name(c->net));
  if (strcmp(cmd, "explain") == 0) add(&a, "--top"), add(&a, "0");
  hx_out x;
  run(o, a.w, &x);
  char klass[96];
  double got = x.json ? number(x.json, field) : NAN;
  if (x.status != 0) {
    snprintf(klass, sizeof klass, "%s --alloc refuses the file", cmd);
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0, klass, "%s: %s", x.err,
              describe(c));
  } else if (!isnan(want) && !HX_SAME(got, want)) {
    snprintf(klass, sizeof klass, "%s --alloc gives another time", cmd);
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0, klass,
              "%s %.17g s, schedule reported %.17g s: %s", field, got, want,
              describe(c));
  } else {
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_PASS, 0, NULL, NULL);
  }
  out_clear(&x);
}

/* The measurements CSV's alloc column: reproduce --data simulates it. */
static void measured(const hx_case *c, const hx_opts *o, hx_report *r,
                     const char *scen, const char *alloc, double want) {
  char csv[1024];
  snprintf(csv, sizeof csv, "%s/hx-m.csv", o->dir);
  FILE *f = fopen(csv, "w");
  if (!f) return;
  fprintf(f, "scenario,alloc,network,measured_s\n%s,%s,%s,1\n", scen, alloc,
          transport_model_name(c->net));
  fclose(f);
  words a = {0};
  add(&a, "reproduce"), add(&a, "--data"), add(&a, "%s", csv), add(&a, "--json");
  hx_out x;
  run(o, a.w, &x);
  const json_t *rows = x.json ? json_object_get(x.json, "rows") : NULL;
  double got = number(json_array_get(rows, 0), "sim_s");
  if (x.status != 0)
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0,
              "measurements CSV refuses the file", "%s: %s", x.err,
              describe(c));
  else if (!HX_SAME(got, want))
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0,
              "measurements CSV gives another time",
              "simulated %.17g s, schedule reported %.17g s: %s", got, want,
              describe(c));
  else
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_PASS, 0, NULL, NULL);
  out_clear(&x);
}

/* validate --alloc: the file's allocation is the sample's first point. */
static void validated(const hx_case *c, const hx_opts *o, hx_report *r,
                      const char *scen, const char *alloc, double want) {
  words a = {0};
  add(&a, "validate"), add(&a, "%s", scen), add(&a, "--alloc");
  add(&a, "%s", alloc), add(&a, "--samples"), add(&a, "2"), add(&a, "--json");
  add(&a, "--quiet"), add(&a, "--network-model");
  add(&a, "%s", transport_model_name(c->net));
  hx_out x;
  run(o, a.w, &x);
  const json_t *p0 = json_array_get(json_object_get(x.json, "points"), 0);
  double got = number(p0, "iteration_s");
  const char *kind = json_string_value(json_object_get(p0, "kind"));
  if (x.status != 0)
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0,
              "validate --alloc refuses the file", "%s: %s", x.err,
              describe(c));
  else if (!kind || strcmp(kind, "alloc") || !HX_SAME(got, want))
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0,
              "validate --alloc gives another time",
              "%s %.17g s, schedule reported %.17g s: %s", kind ? kind : "?",
              got, want, describe(c));
  else
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_PASS, 0, NULL, NULL);
  out_clear(&x);
}

/* schedule -o by the case's method (or --shape auto), then every reader. */
static void check_alloc_file(const hx_case *c, const hx_opts *o,
                             hx_report *r, const char *scen, bool shape) {
  words a = {0};
  char split[64], alloc[1024];
  hx_case_split_arg(c, split, sizeof split);
  snprintf(alloc, sizeof alloc, "%s/hx-alloc.json", o->dir);
  add(&a, "schedule"), add(&a, "%s", scen), add(&a, "-o"), add(&a, "%s", alloc);
  add(&a, "--json"), add(&a, "--quiet"), add(&a, "--network-model");
  add(&a, "%s", transport_model_name(c->net));
  if (shape) {
    add(&a, "--shape"), add(&a, "auto"), add(&a, "--simulate-best"), add(&a, "2");
    add(&a, "--micro-batches"), add(&a, "%d", c->micro_batch);
  } else { /* any method: the case's placement, or a search by the seed */
    static const char *const searches[][3] = {
        {"random-search", NULL, NULL}, {"gcma", "--population", "10"},
        {"hybrid", "--population", "10"}, {"sim", "--starts", "1"}};
    const char *const *m = searches[c->seed / 3 % 4];
    bool search = c->seed % 3 == 0;
    add(&a, "--method"), add(&a, "%s", search ? m[0] : c->method);
    add(&a, "--trials"), add(&a, "8");
    if (search && m[1]) add(&a, "%s", m[1]), add(&a, "%s", m[2]);
    if (split[0]) add(&a, "--layers-per-stage"), add(&a, "%s", split);
  }
  hx_out x;
  run(o, a.w, &x);
  if (x.status != 0) {
    hx_record(r, c, HX_REL_ALLOC_FILE, HX_FAIL, 0,
              shape ? "schedule --shape auto refused" : "schedule refused",
              "%s: %s", x.err, describe(c));
    out_clear(&x);
    return;
  }
  double sim_t = number(x.json, shape ? "best.simulated_s" : "iteration_s");
  double pred_t = shape ? number(x.json, "best.predicted_s") : NAN;
  out_clear(&x);
  reader(c, o, r, scen, alloc, "simulate", "iteration_s", sim_t);
  reader(c, o, r, scen, alloc, "predict", "predicted_iteration_s", pred_t);
  reader(c, o, r, scen, alloc, "explain", "iteration_s", sim_t);
  measured(c, o, r, scen, alloc, sim_t);
  validated(c, o, r, scen, alloc, sim_t);
}

/* simulate of the case by its method with extra options (NULL-ended),
 * into x. */
static void simulate_with(const hx_case *c, const hx_opts *o,
                          const char *scen, hx_out *x, ...) {
  words a = {0};
  char split[64];
  hx_case_split_arg(c, split, sizeof split);
  add(&a, "simulate"), add(&a, "%s", scen), add(&a, "--method");
  add(&a, "%s", c->method), add(&a, "--json"), add(&a, "--network-model");
  add(&a, "%s", transport_model_name(c->net));
  if (split[0]) add(&a, "--layers-per-stage"), add(&a, "%s", split);
  va_list ap;
  va_start(ap, x);
  for (const char *w; (w = va_arg(ap, const char *));) add(&a, "%s", w);
  va_end(ap);
  run(o, a.w, x);
}

/* Whether x's JSON states key unused. */
static bool said_unused(const hx_out *x, const char *key) {
  return x->json && json_object_get(json_object_get(x->json, "unused"), key);
}

/* Options the run does not use: refused naming the runtime (megatron's
 * dp algorithms and GPipe), or stated with the same time (a dp algorithm
 * of one replica). */
static void check_options(const hx_case *c, const hx_opts *o, hx_report *r,
                          const char *scen) {
  hx_out x, y;
  if (c->nwork < c->ndevices || c->inner_steps) return;
  if (strcmp(c->runtime, "megatron") == 0) {
    simulate_with(c, o, scen, &x, "--dp-algo", "sharded-ps", NULL);
    simulate_with(c, o, scen, &y, "--schedule", "gpipe", NULL);
    bool ok = x.status == 2 && strstr(x.err, "runtime megatron") &&
              y.status == 2 && strstr(y.err, "runtime megatron");
    hx_record(r, c, HX_REL_OPTION, ok ? HX_PASS : HX_FAIL, 0,
              ok ? NULL : "megatron takes a dp algo or schedule it ignores",
              "exit %d: %s; exit %d: %s: %s", x.status, x.err, y.status,
              y.err, describe(c));
    out_clear(&x), out_clear(&y);
    return;
  }
  if (c->replicas == 1) {
    simulate_with(c, o, scen, &x, "--dp-algo", "ring", NULL);
    simulate_with(c, o, scen, &y, "--dp-algo", "sharded-ps", NULL);
    double a = number(x.json, "iteration_s"), b = number(y.json, "iteration_s");
    bool ok = x.status == 0 && y.status == 0 && HX_SAME(a, b) &&
              said_unused(&x, "dp_algo") && said_unused(&y, "dp_algo");
    hx_record(r, c, HX_REL_OPTION, ok ? HX_PASS : HX_FAIL, 0,
              ok ? NULL : "a dp algo of one replica, unstated",
              "%.17g s, %.17g s: %s %s: %s", a, b, x.err, y.err, describe(c));
    out_clear(&x), out_clear(&y);
  }
}

void hx_check_cli(const hx_case *c, const hx_opts *o, hx_report *r) {
  char *scen = hx_case_write(c, o->dir, "hx-case");
  if (!scen) return;
  if (c->nwork == c->ndevices) check_alloc_file(c, o, r, scen, false);
  check_options(c, o, r, scen);
  if (o->shape) check_alloc_file(c, o, r, scen, true);
  free(scen);
}
