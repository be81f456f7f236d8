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
#include "analysis/shape_rows.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/alloc.h"
#include "models/alloc_file.h"
#include "models/bill.h"
#include "models/diloco.h"
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

/* The sites c works and how many devices of each: "Berlin 7, Munich 2"
 * (issue 33: the table said "1 x 16 on 16 devices (32 idle)"). */
static void sites_text(const scenario *s, const shape_config *c, char *buf,
                       size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->nsites && at < size; k++) {
    int n = shape_config_at_site(s, c, k);
    if (n)
      at += (size_t)snprintf(buf + at, size - at, "%s%s %d", at ? ", " : "",
                             s->sites[k].name, n);
  }
}

static json_t *sites_json(const scenario *s, const shape_config *c) {
  json_t *o = json_object();
  for (int k = 0; k < s->nsites; k++) {
    int n = shape_config_at_site(s, c, k);
    if (n) json_object_set_new(o, s->sites[k].name, json_integer(n));
  }
  return o;
}

static void print_row(const scenario *s, const shape_config *c, bool price) {
  char sh[32], al[48], st[512];
  shape_text(c, sh, sizeof sh);
  algo_text(c, al, sizeof al);
  sites_text(s, c, st, sizeof st);
  printf("%-9s %-22s %7d %5d %6d %6d %10.3f %11.3f %11.3f", sh, al, c->ndev,
         s->ndevices - c->ndev, c->micro_batch, c->batch, c->samples_per_s,
         c->simulated_s, c->predicted_s);
  if (price)
    printf(" %10.4g %10.4g", 1000 * shape_usd_per_sample(c, shape_decided_s(c)),
           shape_usd_per_hour(c, shape_decided_s(c)));
  printf("  %s\n", st);
}

/* The best's dollars, and the fastest beside it when it is another. */
static void print_dollars(const scenario *s, const shape_result *r,
                          const cli_shape_args *p) {
  const shape_config *b = &r->all[r->best], *f = &r->all[r->fastest];
  if (!p->o.price) return;
  printf("cost        $%.4g per 1,000 samples, $%.4g per hour (GPUs and "
         "egress; egress $%.4g per iteration)%s\n",
         1000 * shape_usd_per_sample(b, shape_decided_s(b)),
         shape_usd_per_hour(b, shape_decided_s(b)), b->egress_usd,
         isnan(b->usd_per_s) ? ": a site not priced" : "");
  if (!bill_egress_complete(s))
    printf("note        egress between some sites is not priced: it counts "
           "as $0 here\n");
  if (p->o.max_usd_per_hour > 0)
    printf("budget      $%g per hour: %ld configurations over it\n",
           p->o.max_usd_per_hour, r->over_budget);
  if (r->fastest != r->best)
    printf("fastest     %d x %d on %d devices, %s: %.3f samples/s, $%.4g per "
           "1,000 samples, $%.4g per hour\n", f->stages, f->replicas, f->ndev,
           f->dp_algo, f->samples_per_s,
           1000 * shape_usd_per_sample(f, shape_decided_s(f)),
           shape_usd_per_hour(f, shape_decided_s(f)));
}

/* The idle devices of the best, site by site, and what using them gives. */
static void print_idle(const scenario *s, const shape_result *r) {
  const shape_config *b = &r->all[r->best];
  double mine = b->batch / b->predicted_s;
  bool any = false;
  for (int k = 0; k < s->nsites; k++) {
    int idle = s->sites[k].ndevices - shape_config_at_site(s, b, k);
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

/* Room for the reproduce command: two paths of PATH_MAX, quoted. */
#define CLI_SHAPE_CMD_MAX (4 * 4096 + 256)

/* The command that simulates the best again from -o's file, into buf
 * ("" without a file): the file carries the shape, the devices, the split
 * and the workload values (models/alloc_file.h); the network model is the
 * command's. */
static void reproduce(const cli_shape_args *p, const char *net, char *buf,
                      size_t size) {
  buf[0] = '\0';
  if (!p->out) return;
  char *sc = cli_shell_word(p->scenario), *out = cli_shell_word(p->out);
  snprintf(buf, size, "geodes simulate %s --alloc %s --network-model %s", sc,
           out, net);
  free(sc);
  free(out);
}

/* What goal maximises, for the text report. */
static const char *goal_text(shape_goal goal) {
  switch (goal) {
    case SHAPE_THROUGHPUT:
      return "throughput: samples/s, at the batch per replica kept or the "
             "scenario's";
    case SHAPE_ITERATION:
      return "iteration: seconds per iteration at the scenario's batch";
    case SHAPE_USD_PER_SAMPLE:
      return "usd-per-sample: dollars per sample (GPU-hours and egress), the "
             "batch per replica kept";
    case SHAPE_SAMPLES_PER_USD:
      return "samples-per-usd: samples per dollar (GPU-hours and egress), the "
             "batch per replica kept";
  }
  assert(!"unknown shape goal");
  return "";
}

/* The best's runtime as the outputs state it (cli_runtime_text, or with
 * json cli_json_runtime): on its view, its allocation there, its deciding
 * time. */
static json_t *best_runtime(const scenario *s, const shape_opts *o,
                            const shape_config *b, bool json, char *buf,
                            size_t size) {
  scenario *v = shape_config_view(s, o, b);
  alloc *a = shape_config_alloc(b);
  double t = shape_decided_s(b);
  json_t *j = NULL;
  if (json) j = cli_json_runtime(v, a, t);
  else cli_runtime_text(v, a, t, buf, size);
  alloc_free(a);
  scenario_subset_free(v);
  return j;
}

static void print_text(const scenario *s, const shape_opts *o,
                       const shape_result *r, const cli_shape_args *p,
                       const char *net, double wall_s) {
  const shape_config *b = &r->all[r->best];
  char sh[32], al[48];
  shape_text(b, sh, sizeof sh);
  algo_text(b, al, sizeof al);
  printf("scenario    %s, %d devices\n", s->name, s->ndevices);
  printf("objective   %s\n", goal_text(p->o.goal));
  cli_print_params();
  char where[512];
  sites_text(s, b, where, sizeof where);
  printf("best        %s on %d devices (%s; %d idle), micro-batch %d, batch "
         "%d, %s: %.3f samples/s\n", sh, b->ndev, where, s->ndevices - b->ndev,
         b->micro_batch, b->batch, al, b->samples_per_s);
  printf("iteration   %.3f s simulated (%s), %.3f s predicted\n",
         b->simulated_s, net, b->predicted_s);
  char rt[160];
  best_runtime(s, o, b, false, rt, sizeof rt);
  printf("runtime     %s%s%s%s\n", s->workload.runtime, rt[0] ? " (" : "", rt,
         rt[0] ? ")" : "");
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
  if (p->o.diloco) printf("note        %s\n", NOT_CONVERGENCE);
  char cmd[CLI_SHAPE_CMD_MAX];
  reproduce(p, net, cmd, sizeof cmd);
  if (cmd[0]) printf("reproduce   %s\n", cmd);
  print_dollars(s, r, p);
  printf("\n%-9s %-22s %7s %5s %6s %6s %10s %11s %11s%s  %s\n", "SHAPE", "DP",
         "DEVICES", "IDLE", "MICRO", "BATCH", "SAMPLES/S", "SIMULATED_S",
         "PREDICTED_S", p->o.price ? "    USD/1KS      USD/H" : "", "SITES");
  for (int g = 0; g < r->nshapes; g++)
    print_row(s, &r->all[r->per_shape[g]], p->o.price);
  print_idle(s, r);
  print_pipelines(s, b);
}

static json_t *config_json(const scenario *s, const shape_config *c,
                           bool price) {
  json_t *o = json_object();
  double t = shape_decided_s(c);
  json_object_set_new(o, "usd_per_1k_samples", price ? cli_json_number(
      1000 * shape_usd_per_sample(c, t)) : json_null());
  json_object_set_new(o, "usd_per_hour", price ? cli_json_number(
      shape_usd_per_hour(c, t)) : json_null());
  json_object_set_new(o, "egress_usd", price ? cli_json_number(c->egress_usd)
                                             : json_null());
  json_object_set_new(o, "stages", json_integer(c->stages));
  json_object_set_new(o, "replicas", json_integer(c->replicas));
  json_object_set_new(o, "micro_batch", json_integer(c->micro_batch));
  json_object_set_new(o, "batch", json_integer(c->batch));
  json_object_set_new(o, "dp_algo", json_string(c->dp_algo));
  json_object_set_new(o, "fragments", c->fragments ? json_integer(c->fragments)
                                                   : json_null());
  json_object_set_new(o, "devices", json_integer(c->ndev));
  json_object_set_new(o, "sites", sites_json(s, c));
  json_object_set_new(o, "idle", json_integer(s->ndevices - c->ndev));
  json_object_set_new(o, "samples_per_s", cli_json_number(c->samples_per_s));
  json_object_set_new(o, "simulated_s", cli_json_number(c->simulated_s));
  json_object_set_new(o, "predicted_s", cli_json_number(c->predicted_s));
  json_object_set_new(o, "layers_per_stage",
                      cli_json_ints(c->layers, c->layers ? c->stages : 0));
  json_object_set_new(o, "alloc", alloc_json(c->a));
  return o;
}

static void print_json(const scenario *s, const shape_opts *o,
                       const shape_result *r, const cli_shape_args *p,
                       const char *net) {
  json_t *j = json_object();
  json_object_set_new(j, "scenario", json_string(s->name));
  json_object_set_new(j, "objective", json_string(shape_goal_names[p->o.goal]));
  json_object_set_new(j, "network_model", json_string(net));
  json_object_set_new(j, "params", cli_json_params());
  json_object_set_new(j, "best", config_json(s, &r->all[r->best], p->o.price));
  json_object_set_new(j, "runtime",
                      best_runtime(s, o, &r->all[r->best], true, NULL, 0));
  json_object_set_new(j, "fastest",
                      config_json(s, &r->all[r->fastest], p->o.price));
  json_object_set_new(j, "max_usd_per_hour", p->o.max_usd_per_hour > 0
                                                 ? json_real(p->o.max_usd_per_hour)
                                                 : json_null());
  json_object_set_new(j, "over_budget", json_integer(r->over_budget));
  json_object_set_new(j, "egress_priced", json_boolean(bill_egress_complete(s)));
  json_t *a = json_array();
  for (int g = 0; g < r->nshapes; g++)
    json_array_append_new(a, config_json(s, &r->all[r->per_shape[g]],
                                         p->o.price));
  json_object_set_new(j, "shapes", a);
  int *idle = mem_alloc((size_t)s->ndevices * sizeof *idle + 1);
  int nidle = shape_config_idle(s, &r->all[r->best], idle);
  json_object_set_new(j, "idle_devices", cli_json_ints(idle, nidle));
  free(idle);
  json_object_set_new(j, "subsets", json_integer(r->nsubsets));
  json_object_set_new(j, "every_subset", json_boolean(r->all_subsets));
  json_object_set_new(j, "placements_judged", json_integer(r->considered));
  json_object_set_new(j, "configurations", json_integer(r->nall));
  json_object_set_new(j, "pruned_memory", json_integer(r->pruned_memory));
  json_object_set_new(j, "pruned_predictor", json_integer(r->pruned_predictor));
  json_object_set_new(j, "simulated", json_integer(r->simulated));
  json_object_set_new(j, "simulated_inexact",
                      json_integer(r->simulated_inexact));
  if (p->o.diloco) json_object_set_new(j, "note", json_string(NOT_CONVERGENCE));
  char cmd[CLI_SHAPE_CMD_MAX];
  reproduce(p, net, cmd, sizeof cmd);
  json_object_set_new(j, "reproduce", cmd[0] ? json_string(cmd) : json_null());
  cli_print_json(j, CLI_JSON);
}

/* What shape_rows stores (cli_db_rows' ctx). */
typedef struct shape_ctx {
  const scenario *s;
  const shape_result *r;
  const char *net;
  bool price;
} shape_ctx;

/* Every configuration that fits as a results row of run
 * (analysis/shape_rows.h). */
static int shape_rows(db *d, int64_t run, const void *ctx, err *e) {
  const shape_ctx *k = ctx;
  return shape_rows_put(d, run, k->s, k->r, k->net, k->price, e);
}

/* -o: the best configuration as an allocation file that reproduces it:
 * its devices, shape, split and workload (its view's); CLI_OK or the error
 * printed. */
static int write_alloc(const char *path, const scenario *s,
                       const shape_opts *o, const shape_config *b) {
  cli_out out;
  int rc = cli_out_open(&out, path, "the allocation");
  if (rc == CLI_OK) {
    scenario *v = shape_config_view(s, o, b);
    alloc_file_write(b->a, NULL, b->layers, v, s, out.f);
    scenario_subset_free(v);
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
  shape_opts o = p->o;
  o.t = so->transport;
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
  if (rc == ERR_OK && p->out && !out)
    out = write_alloc(p->out, s, &o, &r.all[r.best]);
  if (out) {
    shape_result_free(&r);
    return out; /* said */
  }
  shape_ctx rows = {s, &r, net, p->o.price};
  if (rc == ERR_OK && p->db)
    rc = cli_db_record(p->db, argc, argv, s, shape_rows, &rows, &e);
  if (rc != ERR_OK) {
    shape_result_free(&r);
    if (err_field(&e) == WORKLOAD_batch && (p->o.stages || p->o.replicas))
      /* no shape divides the batch: the fixed part is the cause */
      return cli_usage_error("schedule", "--stages/--replicas %d x %d (0: "
                             "searched): %s", p->o.stages, p->o.replicas, e.msg);
    return cli_error("%s", e.msg);
  }
  if (p->json) print_json(s, &o, &r, p, net);
  else print_text(s, &o, &r, p, net, wall);
  shape_result_free(&r);
  return CLI_OK;
}
