/* spec: a workload's names and predicates, and the byte / FLOP counts of
 * its stages (the resolution from a scenario: spec_workload.c; the GPU
 * table: spec_gpu.c; the models' table and a model's own counts:
 * spec_model.c).
 * Invariant: the tables are static and read-only; every function here is a
 * pure function of its arguments (see spec.h). Counts are doubles: a 13B
 * model's FLOPs overflow 32-bit integers and the callers divide anyway. */
#include "models/spec.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "models/params.h"

const char *spec_schedule_name(spec_schedule s) {
  return workload_schedules[s];
}

const char *spec_dp_algo_name(spec_dp_algo a) { return workload_dp_algos[a]; }

const char *spec_runtime_name(spec_runtime r) { return workload_runtimes[r]; }

int spec_schedule_parse(const char *name) {
  return name ? names_find(workload_schedules, name) : 0;
}

int spec_dp_algo_parse(const char *name) {
  return name ? names_find(workload_dp_algos, name) : 0;
}

int spec_runtime_parse(const char *name) {
  return name ? names_find(workload_runtimes, name) : 0;
}

bool spec_is_diloco(const spec_workload *w) {
  return spec_dp_algo_outer(w->dp_algo);
}

bool spec_dp_algo_outer(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING:
    case SPEC_HIVEMIND: return false;
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_algo_streams(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING:
    case SPEC_HIVEMIND:
    case SPEC_DILOCO: return false;
    case SPEC_STREAMING_DILOCO: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_algo_apart(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING: return false;
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO:
    case SPEC_HIVEMIND: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_algo_behind_sends(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_HIER_RING: return true;
    case SPEC_SHARDED_PS:
    case SPEC_HIVEMIND:
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return false;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_algo_matchmakes(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING:
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return false;
    case SPEC_HIVEMIND: return true;
  }
  assert(!"unknown dp_algo");
  return false;
}

bool spec_dp_delayed(const spec_workload *w) {
  return spec_dp_algo_matchmakes(w->dp_algo) && w->given.delay_averaging;
}

int spec_device_gpus(const scenario *s, const spec_gpu **gpu, err *e) {
  for (int d = 0; d < s->ndevices; d++) {
    const scenario_site *site = &s->sites[s->device_site[d]];
    gpu[d] = spec_gpu_find(site->gpu);
    if (!gpu[d]) {
      char key[64], where[512], known[256];
      snprintf(key, sizeof key, "sites[%d].gpu", s->device_site[d]);
      scenario_where(s, site->gpu_line, key, where, sizeof where);
      spec_gpu_list(known, sizeof known);
      return err_set(e, ERR_UNKNOWN, "%s: '%s' is unknown (site '%s'; "
                     "known: %s)", where, site->gpu ? site->gpu : "",
                     site->name, known);
    }
  }
  return ERR_OK;
}

/* A site's compute_efficiency is a factor on its GPUs' speed as the
 * roofline gives it (models/roofline.h): e = 0.5 computes twice as long.
 * The built-in p3.2xlarge sites carry 0.43 / 0.5656: their V100 reached
 * 0.43 of its peak at DT-FM's shape, where the roofline gives it 0.5656
 * (traces/gen/gen_builtins.py; test_roofline.c holds the two agreed). The
 * site_compute_efficiency parameter (models/params.h), when set, replaces
 * every site's. */
double spec_site_compute_factor(const scenario_site *site, const spec_gpu *g) {
  (void)g; /* a factor on g's speed, whatever that is */
  double e = params_get(PARAMS_SITE_COMPUTE_EFFICIENCY) > 0
                 ? params_get(PARAMS_SITE_COMPUTE_EFFICIENCY)
                 : site->compute_efficiency;
  return e > 0 ? 1 / e : 1;
}

int spec_stage_layers(const spec_workload *w, int st) {
  if (w->stage_layers) return w->stage_layers[st];
  return w->layers / w->stages + (st < w->layers % w->stages ? 1 : 0);
}

double spec_stage_params_with(const spec_workload *w, int st, int layers) {
  const spec_model *m = w->model;
  double p = layers * spec_layer_params(m);
  if (st == 0) p += spec_embedding_params(m);
  if (st == w->stages - 1) p += spec_stage_head_params(w);
  return p;
}

double spec_stage_params(const spec_workload *w, int st) {
  return spec_stage_params_with(w, st, spec_stage_layers(w, st));
}

double spec_stage_gradient_bytes(const spec_workload *w, int st) {
  return spec_stage_params(w, st) * w->model->value_bytes;
}

double spec_activation_bytes(const spec_workload *w) {
  const spec_model *m = w->model;
  return (double)w->micro_batch * m->seq * m->hidden * m->value_bytes;
}

/* The layers' share, then the head's on the last stage: the head is not
 * recomputed (activation checkpointing covers the transformer blocks). */
static double layers_fwd_flops(const spec_workload *w, int st) {
  return (double)spec_stage_layers(w, st) * w->micro_batch *
         spec_layer_flops(w->model);
}

static double head_fwd_flops(const spec_workload *w, int st) {
  return st == w->stages - 1 ? w->micro_batch * spec_head_flops(w->model) : 0;
}

double spec_stage_fwd_flops(const spec_workload *w, int st) {
  return layers_fwd_flops(w, st) + head_fwd_flops(w, st);
}

double spec_stage_bwd_flops(const spec_workload *w, int st) {
  return (w->recompute ? 3.0 : 2.0) * layers_fwd_flops(w, st) +
         2.0 * head_fwd_flops(w, st);
}

double spec_default_activation_gb(const spec_workload *w) {
  const spec_model *m = w->model;
  return (double)w->batch / w->replicas * m->seq * m->hidden *
         m->value_bytes / 1e9;
}

double spec_default_gradient_gb(const spec_workload *w) {
  double most = 0;
  for (int st = 0; st < w->stages; st++)
    most = fmax(most, spec_stage_gradient_bytes(w, st));
  return most / 1e9;
}
