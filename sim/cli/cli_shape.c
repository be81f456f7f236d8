/* cli_shape: `geodes schedule SCENARIO --shape auto` — the search of the
 * parallel shape, the micro-batch and the devices that work, not only the
 * placement (schedules/shape.h): the predictor judges, the simulation
 * under --network decides among the predictor's best; prints the best,
 * the best of each shape, the devices left idle and why, and the counts;
 * writes the allocation (-o) and every configuration (--db).
 * Invariant: resources are released at the single exit whatever failed. */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/db.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/alloc.h"
#include "models/predict.h"
#include "models/spec.h"
#include "schedules/shape.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"
#include "sim/cli/cli_shape.h"
#include "sim/sim.h"
#include "traces/scenario_subset.h"

#define NOT_CONVERGENCE                                                     \
  "geodes simulates time, not convergence: DiLoCo's samples/s say nothing " \
  "of the loss its H inner steps reach"

/* The simulation as the search's decider. */
static double simulate(void *ctx, const scenario *view, const alloc *a,
                       err *e) {
  const sim_options *so = ctx;
  sim_result sr = {0};
  double t = sim_run(view, a, so, &sr, e) == ERR_OK ? sr.iteration_s : NAN;
  sim_result_free(&sr);
  return t;
}

/* "8 x 3" */
static void shape_text(const shape_config *c, char *buf, size_t size) {
  snprintf(buf, size, "%d x %d", c->stages, c->replicas);
}

static void algo_text(const shape_config *c, char *buf, size_t size) {
  if (c->fragments) snprintf(buf, size, "%s F=%d", c->dp_algo, c->fragments);
  else snprintf(buf, size, "%s", c->dp_algo);
}

static void print_row(const scenario *s, const shape_config *c) {
  char sh[32], al[48];
  shape_text(c, sh, sizeof sh);
  algo_text(c, al, sizeof al);
  printf("%-9s %-22s %7d %5d %6d %6d %10.3f %11.3f %11.3f\n", sh, al, c->ndev,
         s->ndevices - c->ndev, c->micro_batch, c->batch, c->samples_per_s,
         c->simulated_s, c->predicted_s);
}

/* The idle devices of the best, site by site, and what using them gives. */
static void print_idle(const scenario *s, const shape_result *r) {
  const shape_config *b = &r->all[r->best];
  double mine = b->batch / b->predicted_s;
  bool any = false;
  for (int k = 0; k < s->nsites; k++) {
    int used = 0;
    for (int i = 0; i < b->ndev; i++) used += s->device_site[b->keep[i]] == k;
    int idle = s->sites[k].ndevices - used;
    if (!idle) continue;
    if (!any) printf("\nidle devices (predicted samples/s of the best "
                     "configuration that works more of them):\n");
    any = true;
    long a = shape_idle_alternative(s, r, k);
    printf("  %-12s %d of %d %-8s ", s->sites[k].name, idle,
           s->sites[k].ndevices, s->sites[k].gpu);
    if (a < 0) {
      printf("no configuration using more of them fits in memory\n");
      continue;
    }
    const shape_config *c = &r->all[a];
    double theirs = c->batch / c->predicted_s;
    printf("using them: at best %.3f samples/s (%d x %d), %.1f %% below "
           "%.3f: slower than the pipelines they would join\n",
           theirs, c->stages, c->replicas, 100 * (mine - theirs) / mine, mine);
  }
  if (!any) printf("\nidle devices: none\n");
}

static void print_pipelines(const scenario *s, const shape_config *c) {
  printf("\n");
  for (int rep = 0; rep < c->replicas; rep++) {
    printf("pipeline %-3d", rep);
    for (int st = 0; st < c->stages; st++) {
      int d = alloc_at(c->a, rep, st);
      printf(" %s#%d", s->sites[s->device_site[d]].name, d);
    }
    printf("\n");
  }
}

/* The command that simulates the best again from -o's file, into buf
 * ("" without a file): an allocation of some devices carries its shape
 * (simulate leaves the others idle), one of every device takes it from
 * --stages and --replicas. */
static void reproduce(const scenario *s, const shape_config *b,
                      const cli_shape_args *p, char *buf, size_t size) {
  buf[0] = '\0';
  if (!p->out) return;
  size_t at = (size_t)snprintf(buf, size, "geodes simulate %s --alloc %s ",
                               p->scenario, p->out);
  if (b->ndev == s->ndevices && at < size)
    at += (size_t)snprintf(buf + at, size - at, "--stages %d --replicas %d ",
                           b->stages, b->replicas);
  if (at < size)
    at += (size_t)snprintf(buf + at, size - at, "--micro-batch %d --batch %d "
                           "--dp-algo %s ", b->micro_batch, b->batch,
                           b->dp_algo);
  if (b->fragments && at < size)
    at += (size_t)snprintf(buf + at, size - at, "--fragments %d ",
                           b->fragments);
  int algo = spec_dp_algo_parse(b->dp_algo);
  bool diloco = algo >= 0 && spec_dp_algo_outer((spec_dp_algo)algo);
  if (diloco && p->plan.inner_steps && at < size)
    at += (size_t)snprintf(buf + at, size - at, "--inner-steps %d ",
                           p->plan.inner_steps);
  if (b->fragments && p->plan.overlap && at < size)
    at += (size_t)snprintf(buf + at, size - at, "--overlap-steps %d ",
                           p->plan.overlap);
  if (at < size) at += (size_t)snprintf(buf + at, size - at,
                                        "--layers-per-stage ");
  for (int st = 0; st < b->stages && at < size; st++)
    at += (size_t)snprintf(buf + at, size - at, "%s%d", st ? "," : "",
                           b->layers[st]);
}

/* What goal maximises, for the text report. */
static const char *goal_text(shape_goal goal) {
  switch (goal) {
    case SHAPE_THROUGHPUT:
      return "throughput: samples/s, the batch per replica kept";
    case SHAPE_ITERATION:
      return "iteration: seconds per iteration at the scenario's batch";
  }
  assert(!"unknown shape goal");
  return "";
}

static void print_text(const scenario *s, const shape_result *r,
                       const cli_shape_args *p, const char *net,
                       double wall_s) {
  const shape_config *b = &r->all[r->best];
  char sh[32], al[48];
  shape_text(b, sh, sizeof sh);
  algo_text(b, al, sizeof al);
  printf("scenario    %s, %d devices\n", s->name, s->ndevices);
  printf("objective   %s\n", goal_text(p->goal));
  printf("best        %s on %d devices (%d idle), micro-batch %d, batch %d, "
         "%s: %.3f samples/s\n", sh, b->ndev, s->ndevices - b->ndev,
         b->micro_batch, b->batch, al, b->samples_per_s);
  printf("iteration   %.3f s simulated (%s), %.3f s predicted\n",
         b->simulated_s, net, b->predicted_s);
  printf("layers      ");
  for (int st = 0; st < b->stages; st++)
    printf("%s%d", st ? "," : "", b->layers[st]);
  printf("\nsearched    %d subsets (%s), %ld placements judged, %ld of "
         "them not fitting in memory;\n            of the %ld configurations "
         "that fit, %ld pruned by the predictor, %ld simulated; %.2f s\n",
         r->nsubsets, r->all_subsets ? "every count per site" : "the family",
         r->considered, r->pruned_memory, r->nall, r->pruned_predictor,
         r->simulated, wall_s);
  if (r->simulated_inexact)
    printf("            %ld of them simulated because the predictor leaves "
           "out more than %.0f %% there\n            (geodes predict names "
           "what) and its bound could not rule them out\n",
           r->simulated_inexact, 100 * PREDICT_TOLERANCE);
  if (p->diloco) printf("note        %s\n", NOT_CONVERGENCE);
  char cmd[1024];
  reproduce(s, b, p, cmd, sizeof cmd);
  if (cmd[0]) printf("reproduce   %s\n", cmd);
  printf("\n%-9s %-22s %7s %5s %6s %6s %10s %11s %11s\n", "SHAPE", "DP",
         "DEVICES", "IDLE", "MICRO", "BATCH", "SAMPLES/S", "SIMULATED_S",
         "PREDICTED_S");
  for (int g = 0; g < r->nshapes; g++) print_row(s, &r->all[r->per_shape[g]]);
  print_idle(s, r);
  print_pipelines(s, b);
}

static json_t *config_json(const scenario *s, const shape_config *c) {
  json_t *o = json_object();
  json_object_set_new(o, "stages", json_integer(c->stages));
  json_object_set_new(o, "replicas", json_integer(c->replicas));
  json_object_set_new(o, "micro_batch", json_integer(c->micro_batch));
  json_object_set_new(o, "batch", json_integer(c->batch));
  json_object_set_new(o, "dp_algo", json_string(c->dp_algo));
  json_object_set_new(o, "fragments", c->fragments ? json_integer(c->fragments)
                                                   : json_null());
  json_object_set_new(o, "devices", json_integer(c->ndev));
  json_object_set_new(o, "idle", json_integer(s->ndevices - c->ndev));
  json_object_set_new(o, "samples_per_s", cli_json_number(c->samples_per_s));
  json_object_set_new(o, "simulated_s", cli_json_number(c->simulated_s));
  json_object_set_new(o, "predicted_s", cli_json_number(c->predicted_s));
  json_t *l = json_array();
  for (int st = 0; c->layers && st < c->stages; st++)
    json_array_append_new(l, json_integer(c->layers[st]));
  json_object_set_new(o, "layers_per_stage", l);
  json_object_set_new(o, "alloc", alloc_json(c->a));
  return o;
}

static void print_json(const scenario *s, const shape_result *r,
                       const cli_shape_args *p, const char *net) {
  json_t *o = json_object();
  json_object_set_new(o, "scenario", json_string(s->name));
  json_object_set_new(o, "objective", json_string(shape_goal_names[p->goal]));
  json_object_set_new(o, "network_model", json_string(net));
  json_object_set_new(o, "best", config_json(s, &r->all[r->best]));
  json_t *a = json_array();
  for (int g = 0; g < r->nshapes; g++)
    json_array_append_new(a, config_json(s, &r->all[r->per_shape[g]]));
  json_object_set_new(o, "shapes", a);
  json_t *idle = json_array();
  const shape_config *b = &r->all[r->best];
  for (int d = 0, i = 0; d < s->ndevices; d++) {
    while (i < b->ndev && b->keep[i] < d) i++;
    if (i >= b->ndev || b->keep[i] != d) json_array_append_new(idle, json_integer(d));
  }
  json_object_set_new(o, "idle_devices", idle);
  json_object_set_new(o, "subsets", json_integer(r->nsubsets));
  json_object_set_new(o, "every_subset", json_boolean(r->all_subsets));
  json_object_set_new(o, "placements_judged", json_integer(r->considered));
  json_object_set_new(o, "configurations", json_integer(r->nall));
  json_object_set_new(o, "pruned_memory", json_integer(r->pruned_memory));
  json_object_set_new(o, "pruned_predictor", json_integer(r->pruned_predictor));
  json_object_set_new(o, "simulated", json_integer(r->simulated));
  json_object_set_new(o, "simulated_inexact",
                      json_integer(r->simulated_inexact));
  if (p->diloco) json_object_set_new(o, "note", json_string(NOT_CONVERGENCE));
  char cmd[1024];
  reproduce(s, &r->all[r->best], p, cmd, sizeof cmd);
  json_object_set_new(o, "reproduce", cmd[0] ? json_string(cmd) : json_null());
  cli_print_json(o, CLI_JSON);
}

/* What shape_rows stores (cli_db_rows' ctx). */
typedef struct shape_ctx {
  const scenario *s;
  const shape_result *r;
  const char *net;
} shape_ctx;

/* Every configuration that fits as a results row of run. */
static int shape_rows(db *d, int64_t run, const void *ctx, err *e) {
  const shape_ctx *k = ctx;
  const scenario *s = k->s;
  int rc = ERR_OK;
  for (long i = 0; rc == ERR_OK && i < k->r->nall; i++) {
    const shape_config *c = &k->r->all[i];
    char key[96];
    snprintf(key, sizeof key, "shape run=%lld config=%ld", (long long)run, i);
    db_result x;
    db_result_init(&x);
    x.key = key, x.study = "shape", x.scenario = s->name, x.method = "shape";
    x.network_model = k->net, x.seed = (int64_t)s->seed;
    x.layers = s->workload.layers > 0 ? s->workload.layers : -1;
    x.batch = c->batch;
    x.micro_batch = c->micro_batch;
    snprintf(x.dp_algo, sizeof x.dp_algo, "%s", c->dp_algo);
    x.alloc = alloc_text(c->a);
    x.predicted_iteration_s = c->predicted_s;
    x.iteration_s = c->simulated_s;
    x.samples_per_s = c->samples_per_s;
    if (c->fragments) x.fragments = c->fragments;
    if (db_result_put(d, run, &x, e) < 0) rc = e->code ? e->code : ERR_DB;
    db_result_clear(&x);
  }
  return rc;
}

/* -o: the best allocation; CLI_OK or the error printed. */
static int write_alloc(const char *path, const alloc *a) {
  cli_out out;
  int rc = cli_out_open(&out, path, "the allocation");
  if (rc == CLI_OK) {
    alloc_write(a, out.f);
    rc = cli_out_close(&out, rc);
  }
  return rc;
}

/* The search's hook: configurations simulated, to the reporter. */
static void progress(void *ctx, long done, long total) {
  cli_progress_update(ctx, "configurations simulated", (double)done,
                      (double)total, NULL);
}

int cli_schedule_shape(const cli_shape_args *p, scenario *s,
                       const sim_options *so, int argc, char **argv) {
  shape_opts o;
  shape_opts_default(&o);
  o.goal = p->goal;
  o.stages = p->stages, o.replicas = p->replicas;
  o.diloco = p->diloco;
  o.plan = p->plan;
  o.t = so->transport;
  o.nmicro = p->nmicro;
  for (int i = 0; i < p->nmicro; i++) o.micro[i] = p->micro[i];
  if (p->simulate >= 0) o.simulate = p->simulate;
  o.sim = simulate, o.sim_ctx = (void *)so;
  cli_progress bar;
  cli_progress_start(&bar, "schedule", p->quiet);
  o.progress = progress, o.progress_ctx = &bar;
  shape_result r = {.best = -1};
  err e = {0};
  double t0 = cli_now_s();
  const char *net = transport_model_name(so->transport.model);
  int rc = shape_search(s, &o, &r, &e);
  double wall = cli_now_s() - t0;
  cli_progress_end(&bar);
  int out = rc == ERR_OK && p->out ? cli_out_not_db("schedule", p->out, p->db)
                                    : CLI_OK;
  if (rc == ERR_OK && p->out && !out) out = write_alloc(p->out, r.all[r.best].a);
  if (out) {
    shape_result_free(&r);
    return out; /* said */
  }
  shape_ctx rows = {s, &r, net};
  if (rc == ERR_OK && p->db)
    rc = cli_db_record(p->db, argc, argv, s, shape_rows, &rows, &e);
  if (rc != ERR_OK) {
    shape_result_free(&r);
    if (err_field(&e) == WORKLOAD_batch && (p->stages || p->replicas))
      /* no shape divides the batch: the fixed part is the cause */
      return cli_usage_error("schedule", "--stages/--replicas %d x %d (0: "
                             "searched): %s", p->stages, p->replicas, e.msg);
    return cli_error("%s", e.msg);
  }
  if (p->json) print_json(s, &r, p, net);
  else print_text(s, &r, p, net, wall);
  shape_result_free(&r);
  return CLI_OK;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* sub from the pipelines of o (rectangular rows of device numbers of s,
 * each once); false when they are not that or name every device. */
static bool subset_of(const json_t *o, const scenario *s, cli_subset *sub) {
  const json_t *rows = json_object_get(o, "pipelines");
  size_t R = json_array_size(rows);
  size_t S = R ? json_array_size(json_array_get(rows, 0)) : 0;
  if (!R || !S || R * S >= (size_t)s->ndevices) return false;
  *sub = (cli_subset){.replicas = (int)R, .stages = (int)S, .n = (int)(R * S)};
  sub->dev = mem_alloc(R * S * sizeof *sub->dev);
  sub->keep = mem_alloc(R * S * sizeof *sub->keep);
  for (size_t r = 0; r < R; r++) {
    const json_t *row = json_array_get(rows, r);
    for (size_t k = 0; k < S; k++) {
      const json_t *d = json_array_get(row, k);
      json_int_t v = json_is_integer(d) ? json_integer_value(d) : -1;
      if (json_array_size(row) != S || v < 0 || v >= s->ndevices) {
        cli_subset_free(sub);
        return false;
      }
      sub->dev[r * S + k] = sub->keep[r * S + k] = (int)v;
    }
  }
  qsort(sub->keep, R * S, sizeof *sub->keep, cmp_int);
  for (size_t i = 1; i < R * S; i++)
    if (sub->keep[i] == sub->keep[i - 1]) {
      cli_subset_free(sub);
      return false;
    }
  return true;
}

bool cli_subset_peek(const char *path, scenario *s, cli_subset *sub) {
  *sub = (cli_subset){0};
  size_t len; /* file_read: regular files only (a FIFO would block) */
  char *text = file_read(path, FILE_MAX_JSON_BYTES, &len, NULL);
  json_t *o = text ? json_loadb(text, len, 0, NULL) : NULL;
  free(text);
  bool yes = o && subset_of(o, s, sub);
  json_decref(o);
  if (yes) s->workload.stages = sub->stages, s->workload.replicas = sub->replicas;
  return yes;
}

scenario *cli_subset_view(const scenario *s, const cli_subset *sub,
                          const char *path, alloc **a, err *e) {
  *a = alloc_new(sub->replicas, sub->stages);
  for (int i = 0; i < sub->n; i++) {
    const int *at = bsearch(&sub->dev[i], sub->keep, (size_t)sub->n,
                            sizeof *sub->keep, cmp_int);
    (*a)->device[i] = (int)(at - sub->keep);
  }
  if (alloc_validate(*a, sub->replicas, sub->stages, sub->n, path, e)) {
    alloc_free(*a);
    *a = NULL;
    return NULL;
  }
  return scenario_subset(s, sub->keep, sub->n, sub->replicas);
}

void cli_subset_free(cli_subset *sub) {
  free(sub->dev);
  free(sub->keep);
  *sub = (cli_subset){0};
}
