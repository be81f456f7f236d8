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

#include "base/mem.h"
#include "models/predict.h"
#include "models/spec.h"
#include "sim/place.h"

scenario *eval_scenario(const sweep_point *p, err *e) {
  scenario *s = scenario_load(p->scenario, e);
  if (!s) return NULL;
  /* The row's identity holds the content sweep_resolve saw: refuse to store
   * another's results under it (a file edited while the sweep runs). */
  if (p->scenario_hash && scenario_hash(s) != p->scenario_hash) {
    err_set(e, ERR_CONFIG, "%s: changed while the sweep ran (its content is "
            "not what the sweep loaded at its start): run the sweep again",
            p->scenario);
    scenario_free(s);
    return NULL;
  }
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.seed = p->seed, k.layers = p->layers, k.batch = p->batch;
  k.micro_batch = p->micro_batch;
  k.micro_batches_per_pass = p->micro_batches_per_pass;
  k.schedule = p->schedule, k.dp_algo = p->dp_algo, k.gpu = p->gpu;
  k.activation_gb = p->activation_gb, k.gradient_gb = p->gradient_gb;
  k.latency_scale = p->latency_scale, k.bandwidth_scale = p->bandwidth_scale;
  k.sockets = p->sockets, k.runtime = p->runtime;
  k.inner_steps = p->inner_steps, k.fragments = p->fragments;
  k.overlap_steps = p->overlap_steps, k.grad_bits = p->grad_bits;
  k.activation_bits = p->activation_bits;
  if (scenario_apply(s, &k, e) != ERR_OK) {
    scenario_free(s);
    return NULL;
  }
  spec_workload sw;
  if (spec_workload_resolve(s, &sw, e)) {
    scenario_free(s);
    return NULL;
  }
  return s;
}

static int predict(const scenario *s, const alloc *a,
                   const transport_options *t, double *out, err *e) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  predict_result pr;
  int rc = spec_workload_resolve(s, &w, e);
  if (!rc) rc = spec_device_gpus(s, gpu, e);
  if (!rc) rc = predict_iteration_with(&w, s, gpu, a, t, &pr);
  if (!rc) *out = pr.iteration_s;
  else err_set(e, rc, "%s: the predictor failed (%s)", s->name, err_what(rc));
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

/* The row's issue-12 columns from the simulation and the workload. */
static void eval_diloco_row(const scenario *s, const sim_result *sr,
                            db_result *r) {
  const scenario_workload *w = &s->workload;
  r->compute_utilisation = sr->compute_utilisation;
  r->samples_per_s = sr->samples_per_s, r->pp_bytes = sr->pp_bytes;
  r->dp_bytes = sr->dp_bytes, r->wan_bytes = sr->wan_bytes;
  r->grad_bits = w->grad_bits, r->activation_bits = w->activation_bits;
  if (!sr->inner_steps) return;
  r->outer_step_s = sr->outer_step_s, r->inner_steps = w->inner_steps;
  r->fragments = w->fragments, r->overlap_steps = w->overlap_steps;
}

int eval_alloc(const scenario *s, const cost_ctx *c, const alloc *a,
               const transport_options *t, db_result *r, err *e) {
  cost_parts parts;
  cost_alloc(c, a, &parts);
  r->score_s = parts.score_s, r->dp_cost_s = parts.dp_s;
  r->pp_cost_s = parts.pp_s;
  int rc = predict(s, a, t, &r->predicted_iteration_s, e);
  if (rc) return rc;
  sim_options o = sim_options_default();
  o.transport = *t;
  o.seed = s->seed;
  sim_result sr;
  if ((rc = sim_run(s, a, &o, &sr, e))) return rc;
  r->iteration_s = sr.iteration_s, r->compute_s = sr.mean.compute_s;
  r->bubble_s = sr.mean.bubble_s, r->comm_s = sr.mean.comm_s;
  r->dp_sync_s = sr.mean.dp_sync_s, r->events = (int64_t)sr.events;
  eval_diloco_row(s, &sr, r);
  sim_result_free(&sr);
  const scenario_workload *w = &s->workload;
  r->seed = (int64_t)s->seed, r->layers = w->layers, r->batch = w->batch;
  r->micro_batch = w->micro_batch;
  r->micro_batches_per_pass = w->micro_batches_per_pass;
  r->window_bytes =
      t->model == TRANSPORT_TCP ? (int64_t)transport_window(t) : -1;
  snprintf(r->schedule, sizeof r->schedule, "%s", w->schedule);
  snprintf(r->runtime, sizeof r->runtime, "%s", w->runtime);
  r->sockets = s->sites[0].nccl_sockets;
  for (int i = 1; i < s->nsites; i++)
    if (s->sites[i].nccl_sockets != r->sockets) r->sockets = -1; /* mixed */
  snprintf(r->dp_algo, sizeof r->dp_algo, "%s", w->dp_algo);
  eval_gpu_label(s, r->gpu, sizeof r->gpu);
  r->activation_gb = cost_ctx_activation_gb(c);
  r->gradient_gb = cost_ctx_gradient_gb(c);
  free(r->alloc);
  r->alloc = alloc_text(a);
  return ERR_OK;
}

int eval_point(void *ctx, const sweep_point *p, db_result *r, err *e) {
  (void)ctx;
  scenario *s = eval_scenario(p, e);
  if (!s) return e ? e->code : ERR_CONFIG;
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  int net = transport_model_parse(p->network);
  sim_options o = sim_options_default();
  o.transport.model = (transport_model)net;
  o.transport.window_bytes = (double)p->window_bytes;
  o.seed = s->seed;
  alloc *a = c ? sim_place(s, c, p->method, &o, e) : NULL;
  int rc = !c || !a ? (e && e->code ? e->code : ERR_CONFIG)
                    : eval_alloc(s, c, a, &o.transport, r, e);
  alloc_free(a);
  cost_ctx_free(c);
  scenario_free(s);
  return rc;
}
