/* eval: end-to-end evaluation of one point.
 * Invariant: every resource a point needs (scenario, cost context, search,
 * allocation, simulation) is created and freed inside one call, so points
 * are independent: any order, any process, the same row. */
#include "analysis/eval.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/costcmd_header.h"
#include "base/mem.h"
#include "models/alloc_file.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/place.h"
#include "sim/spend.h"
#include "sim/training.h"
#include "traces/fault.h"
#include "traces/scenario_subset.h"

/* p's scenario loaded, its content checked against p's identity. */
static scenario *load(const sweep_point *p, err *e) {
  scenario *s = scenario_load(p->scenario, e);
  if (!s) return NULL;
  /* The row's identity holds the content sweep_resolve saw: refuse to store
   * another's results under it (a file edited while the sweep runs). */
  if ((p->scenario_hash && scenario_hash(s) != p->scenario_hash) ||
      (p->prices_hash && scenario_prices_hash(s) != p->prices_hash)) {
    err_set(e, ERR_CONFIG, "%s: changed while the sweep ran (its content is "
            "not what the sweep loaded at its start): run the sweep again",
            p->scenario);
    scenario_free(s);
    return NULL;
  }
  return s;
}

/* k applied to s and its workload resolved; s freed on failure. */
static scenario *applied(scenario *s, const scenario_knobs *k, err *e) {
  spec_workload sw;
  if (scenario_apply(s, k, e) != ERR_OK ||
      spec_workload_resolve(s, &sw, e) != ERR_OK) {
    scenario_free(s);
    return NULL;
  }
  return s;
}

scenario *eval_scenario(const sweep_point *p, err *e) {
  scenario *s = load(p, e);
  return s ? applied(s, &p->knobs, e) : NULL;
}

scenario *eval_scenario_alloc(const sweep_point *p, const char *path,
                              alloc **a, scenario **view, err *e) {
  *a = NULL, *view = NULL;
  scenario *s = load(p, e);
  alloc_file f = {0};
  scenario_knobs k = p->knobs;
  if (s && (alloc_file_read(path, s->ndevices, &f, e) ||
            alloc_file_knobs(&f, s, &k, e) ||
            alloc_file_check_split(&f, s, &k, e))) {
    scenario_free(s);
    s = NULL;
  }
  if (s && f.split.layers_per_stage && !k.layers_per_stage &&
      !k.balanced_layers)
    k.layers_per_stage = f.split.layers_per_stage,
    k.nlayers_per_stage = f.a->stages;
  if (s && (scenario_apply(s, &k, e) ||
            !(*a = alloc_file_alloc(&f, s, view, e)))) {
    scenario_free(s);
    s = NULL;
  }
  alloc_file_free(&f);
  spec_workload sw;
  if (s && spec_workload_resolve(*view ? *view : s, &sw, e)) {
    alloc_free(*a);
    scenario_subset_free(*view);
    scenario_free(s);
    *a = NULL, *view = NULL, s = NULL;
  }
  return s;
}

static int predict(const scenario *s, const alloc *a,
                   const transport_options *t, double *out, err *e) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  predict_result pr;
  int *layers = mem_alloc((size_t)a->stages * sizeof *layers);
  int rc = spec_workload_resolve(s, &w, e);
  if (!rc) rc = spec_device_gpus(s, gpu, e);
  if (!rc) rc = partition_apply(&w, s, gpu, a, layers, e);
  if (!rc) rc = predict_iteration_with(&w, s, gpu, a, t, &pr);
  if (!rc) *out = pr.iteration_s;
  else err_set(e, rc, "%s: the predictor failed (%s)", s->name, err_what(rc));
  free(layers);
  free(gpu);
  return rc;
}

void eval_gpu_label(const scenario *s, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->nsites; i++) {
    const spec_gpu *g = spec_gpu_find(s->sites[i].gpu);
    const char *name = g ? g->name : s->sites[i].gpu;
    bool seen = false;
    for (int j = 0; j < i && !seen; j++) {
      const spec_gpu *h = spec_gpu_find(s->sites[j].gpu);
      seen = strcmp(h ? h->name : s->sites[j].gpu, name) == 0;
    }
    if (seen) continue;
    int n = snprintf(buf + at, size - at, "%s%s", at ? "," : "", name);
    if (n < 0 || (size_t)n >= size - at) {
      snprintf(buf, size, "mixed");
      return;
    }
    at += (size_t)n;
  }
}

/* A KNOB column is the workload's effective value of the knob; a DILOCO
 * column too, on a DiLoCo run's row (the simulation had inner steps). */
#define KNOB_KNOB(f) r->f = w->f
#define KNOB_DILOCO(f) \
  if (sr->inner_steps) r->f = w->f
#define KNOB_EVAL(f) (void)0
#define KNOB_LABEL(f) (void)0

/* The row's utilisation, bytes, and its KNOB and DILOCO columns, from the
 * simulation and the workload. */
static void row_figures(const scenario *s, const sim_result *sr,
                        db_result *r) {
  const scenario_workload *w = &s->workload;
  r->compute_utilisation = sr->compute_utilisation;
  r->samples_per_s = sr->samples_per_s, r->pp_bytes = sr->pp_bytes;
  r->dp_bytes = sr->dp_bytes, r->wan_bytes = sr->wan_bytes;
#define X(f, col, type, sql, absent, since, origin) KNOB_##origin(f);
  DB_RESULT_MAP(X)
#undef X
  if (sr->inner_steps) r->outer_step_s = sr->outer_step_s;
}

/* The bill's columns: NULL (NAN) where a part is not priced. */
static void row_bill(const bill *b, db_result *r) {
  r->usd = b->usd, r->usd_per_hour = b->usd_per_hour;
  r->usd_per_1k_samples = b->usd_per_1k_samples;
  r->egress_usd = b->egress_usd, r->lost_usd = b->lost_usd;
  r->kwh = b->kwh, r->gco2 = b->gco2;
}

/* One iteration simulated into r's times and breakdown. */
static int simulate_one(const scenario *s, const alloc *a,
                        const transport_options *t, db_result *r, err *e) {
  sim_options o = sim_options_default();
  o.transport = *t;
  o.seed = s->seed;
  sim_result sr;
  int rc = sim_run(s, a, &o, &sr, e);
  if (rc) return rc;
  r->iteration_s = sr.iteration_s, r->compute_s = sr.mean.compute_s;
  r->bubble_s = sr.mean.bubble_s, r->comm_s = sr.mean.comm_s;
  r->dp_sync_s = sr.mean.dp_sync_s, r->events = (int64_t)sr.events;
  row_figures(s, &sr, r);
  bill b;
  rc = sim_spend_iteration(s, &sr, &b, e);
  if (!rc) row_bill(&b, r);
  bill_free(&b);
  sim_result_free(&sr);
  return rc;
}

/* The marks of a run of total_s: the fault trace's starts, the network
 * trace's changes. */
static void run_marks(const scenario *s, const fault_trace *f, double total_s,
                      db_result *r) {
  size_t cap = 0;
  int64_t end = llround(total_s * 1e9);
  for (size_t i = 0; f && i < fault_count(f); i++) {
    const fault_event *ev = fault_event_at(f, i);
    if (ev->t_ns > end) break;
    mem_grow((void **)&r->marks, &cap, r->nmarks + 1, sizeof *r->marks);
    db_mark *m = &r->marks[r->nmarks++];
    *m = (db_mark){.t_s = (double)ev->t_ns * 1e-9};
    snprintf(m->kind, sizeof m->kind, "%s", fault_kind_name(ev->kind));
    switch (fault_kind_target(ev->kind)) {
      case FAULT_TARGET_DEVICE:
        snprintf(m->what, sizeof m->what, "%d", ev->a);
        break;
      case FAULT_TARGET_SITE:
        snprintf(m->what, sizeof m->what, "%s", s->sites[ev->a].name);
        break;
      case FAULT_TARGET_LINK:
        snprintf(m->what, sizeof m->what, "%s:%s", s->sites[ev->a].name,
                 s->sites[ev->b].name);
        break;
    }
  }
  for (int64_t t = trace_next_change_any(s->network, 0); t <= end;
       t = trace_next_change_any(s->network, t)) {
    mem_grow((void **)&r->marks, &cap, r->nmarks + 1, sizeof *r->marks);
    r->marks[r->nmarks++] = (db_mark){.t_s = (double)t * 1e-9, .kind = "trace"};
  }
}

_Static_assert(DB_LOST_N == SIM_LOST_N, "one column per cause of lost time");

/* A training run (the point's iterations, faults, recovery, checkpoints)
 * simulated into r: its mean iteration and breakdown, the run's columns,
 * its iterations and marks. */
static int simulate_run(const scenario *s, const alloc *a,
                        const transport_options *t, const sweep_point *p,
                        db_result *r, err *e) {
  sim_training_opts o = sim_training_opts_default();
  o.sim.transport = *t;
  o.sim.seed = s->seed;
  o.iterations = p->iterations > 0 ? (int)p->iterations : 1;
  o.checkpoint_every = p->checkpoint_every > 0 ? (int)p->checkpoint_every : 0;
  o.recovery = p->recovery ? (sim_recovery)sim_recovery_parse(p->recovery)
                           : SIM_RECOVERY_RESTART;
  o.method = p->method;
  fault_trace *f = p->faults ? fault_load(p->faults, s, e) : NULL;
  if (p->faults && !f) return e ? e->code : ERR_IO;
  if (f && p->faults_hash && fault_hash(f) != p->faults_hash) {
    fault_free(f);
    return err_set(e, ERR_CONFIG, "%s: changed while the sweep ran: run the "
                   "sweep again", p->faults);
  }
  o.faults = f;
  sim_training_result tr;
  int rc = sim_training_run(s, a, &o, &tr, e);
  if (!rc) {
    row_figures(s, &tr.agg, r); /* over the run, as simulate --json */
    r->iteration_s = tr.mean_s, r->compute_s = tr.agg.mean.compute_s;
    r->bubble_s = tr.agg.mean.bubble_s, r->comm_s = tr.agg.mean.comm_s;
    r->dp_sync_s = tr.agg.mean.dp_sync_s, r->events = (int64_t)tr.agg.events;
    r->iterations = (int64_t)tr.n, r->checkpoint_every = o.checkpoint_every;
    r->total_s = tr.total_s, r->samples_per_s = tr.samples_per_s;
    r->lost_s = tr.lost_total_s;
    r->nit = tr.n;
    r->it = mem_alloc((tr.n + 1) * sizeof *r->it);
    for (size_t k = 0; k < tr.n; k++) {
      const sim_iteration *x = &tr.it[k];
      r->it[k] = (db_iteration){.index = x->index, .replicas = x->replicas,
                                .start_s = x->start_s,
                                .iteration_s = x->iteration_s,
                                .lost_s = x->lost_s, .samples = x->samples};
      memcpy(r->it[k].lost_by, x->lost_by, sizeof x->lost_by);
    }
    run_marks(s, f, tr.total_s, r);
    bill b;
    rc = sim_spend_training(s, &tr, &tr.agg, &b, e);
    if (!rc) row_bill(&b, r);
    bill_free(&b);
    sim_training_result_free(&tr);
  }
  fault_free(f);
  return rc;
}

/* The longest optimizer step of a device of a under s's runtime, its
 * layers split as the simulation ran them; NAN when unknown. */
static double optimizer_s(const scenario *s, const alloc *a) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  int *layers = mem_alloc((size_t)a->stages * sizeof *layers);
  double t = NAN;
  if (spec_workload_resolve(s, &w, NULL) == ERR_OK &&
      spec_device_gpus(s, gpu, NULL) == ERR_OK &&
      partition_apply(&w, s, gpu, a, layers, NULL) == ERR_OK)
    t = runtime_step_max_s(&w, gpu, a);
  free(layers);
  free(gpu);
  return t;
}

/* Whether p asks for a training run rather than one iteration. */
static bool is_run(const sweep_point *p) {
  return p && (p->iterations >= 0 || p->faults || p->recovery ||
               p->checkpoint_every >= 0);
}

static int eval_with(const scenario *s, const cost_ctx *c, const alloc *a,
                     const transport_options *t, const sweep_point *p,
                     db_result *r, err *e) {
  cost_parts parts;
  cost_alloc(c, a, &parts);
  r->score_s = parts.score_s, r->dp_cost_s = parts.dp_s;
  r->pp_cost_s = parts.pp_s;
  int rc = predict(s, a, t, &r->predicted_iteration_s, e);
  if (rc) return rc;
  if ((rc = is_run(p) ? simulate_run(s, a, t, p, r, e)
                      : simulate_one(s, a, t, r, e)))
    return rc;
  const scenario_workload *w = &s->workload;
  r->seed = (int64_t)s->seed;
  transport_facts f = transport_describe(t, s);
  r->window_bytes = transport_is_windowed(t->model) ? (int64_t)f.window_min : -1;
  snprintf(r->shaping, sizeof r->shaping, "%s",
           scenario_shaping_names[f.shaping]);
  snprintf(r->schedule, sizeof r->schedule, "%s", w->schedule);
  snprintf(r->runtime, sizeof r->runtime, "%s", w->runtime);
  r->sockets = s->sites[0].nccl_sockets;
  for (int i = 1; i < s->nsites; i++)
    if (s->sites[i].nccl_sockets != r->sockets) r->sockets = -1; /* mixed */
  r->p2p_sockets_min = f.p2p_sockets_min, r->p2p_sockets_max = f.p2p_sockets_max;
  r->collective_sockets_min = f.coll_sockets_min;
  r->collective_sockets_max = f.coll_sockets_max;
  r->idle_restart = f.idle_restart;
  snprintf(r->dp_algo, sizeof r->dp_algo, "%s", w->dp_algo);
  eval_gpu_label(s, r->gpu, sizeof r->gpu);
  r->optimizer_s = optimizer_s(s, a);
  r->activation_gb = cost_ctx_activation_gb(c);
  r->gradient_gb = cost_ctx_gradient_gb(c);
  free(r->alloc);
  r->alloc = alloc_text(a);
  return ERR_OK;
}

/* The cost command's prediction of a (one session: the header is the
 * point's), its layers per stage as the simulation ran them. */
static int plugged(const scenario *s, const cost_ctx *c, const alloc *a,
                   const sweep_point *p, transport_model net, double *out,
                   err *e) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  int *layers = mem_alloc((size_t)a->stages * sizeof *layers);
  costcmd *cc = NULL;
  int rc = spec_workload_resolve(s, &w, e);
  if (!rc) rc = spec_device_gpus(s, gpu, e);
  if (!rc) rc = partition_apply(&w, s, gpu, a, layers, e);
  if (!rc && !(cc = costcmd_open(s, c, p->cost_cmd, net, p->cost_timeout_s, e)))
    rc = e ? e->code : ERR_IO;
  if (!rc) *out = costcmd_judge(cc, a, &w, e);
  if (!rc && isnan(*out)) rc = e ? e->code : ERR_IO;
  if (!rc) rc = costcmd_close(cc, e);
  costcmd_free(cc);
  free(layers);
  free(gpu);
  return rc;
}

int eval_alloc(const scenario *s, const cost_ctx *c, const alloc *a,
               const transport_options *t, db_result *r, err *e) {
  return eval_with(s, c, a, t, NULL, r, e);
}

int eval_point(void *ctx, const sweep_point *p, db_result *r, err *e) {
  (void)ctx;
  scenario *s = eval_scenario(p, e);
  if (!s) return e ? e->code : ERR_CONFIG;
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  int net = transport_model_parse(p->network);
  sim_options o = sim_options_default();
  o.transport.model = (transport_model)net;
  o.transport.window_bytes = (double)p->knobs.window_bytes;
  o.seed = s->seed;
  alloc *a = c ? sim_place(s, c, p->method, &o, e) : NULL;
  int rc = !c || !a ? (e && e->code ? e->code : ERR_CONFIG)
                    : eval_with(s, c, a, &o.transport, p, r, e);
  if (rc == ERR_OK && p->cost_cmd)
    rc = plugged(s, c, a, p, o.transport.model, &r->cost_cmd_s, e);
  alloc_free(a);
  cost_ctx_free(c);
  scenario_free(s);
  return rc;
}
