/* costcmd_header: see costcmd_header.h. Built with jansson (its key order
 * is insertion order) and dumped compact in one line. */
#include "analysis/costcmd_header.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec_workload.h"

static json_t *sites_json(const scenario *s) {
  json_t *a = json_array();
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *t = &s->sites[i];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "devices", json_integer(t->ndevices));
    json_object_set_new(o, "gpu", json_string(t->gpu ? t->gpu : ""));
    json_object_set_new(o, "nic_gbps", json_real(t->nic_gbps));
    json_object_set_new(o, "nic_shared", json_boolean(t->nic_shared));
    json_object_set_new(o, "nccl_sockets", json_integer(t->nccl_sockets));
    json_object_set_new(o, "flow_gbps", json_real(t->flow_gbps));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *devices_json(const scenario *s, const spec_workload *w,
                            const spec_gpu *const *gpu) {
  json_t *a = json_array();
  for (int d = 0; d < s->ndevices; d++) {
    const scenario_site *t = &s->sites[s->device_site[d]];
    const spec_gpu *g = gpu[d];
    double factor = spec_site_compute_factor(t, g);
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(d));
    json_object_set_new(o, "site", json_string(t->name));
    json_object_set_new(o, "gpu", json_string(g->name));
    json_object_set_new(o, "peak_flops", json_real(g->peak_flops));
    /* the roofline's fraction of peak on this workload's layer, so that a
     * layer's FLOPs over flops_per_s is the engine's time for it (the
     * head's, at the layer's rate, is an approximation) */
    double eff = roofline_layer_fraction(g, w) / factor;
    json_object_set_new(o, "efficiency", json_real(eff));
    json_object_set_new(o, "flops_per_s", json_real(g->peak_flops * eff));
    json_object_set_new(o, "memory_bytes",
                        json_real(spec_device_memory_bytes(s, d, g)));
    json_object_set_new(o, "mem_bw_bytes_s", json_real(g->mem_bw_bytes_s));
    json_object_set_new(o, "optimizer_s_per_param",
                        json_real(runtime_optimizer_s(w->runtime, g, 1.0)));
    json_object_set_new(o, "nic_gbps", json_real(t->nic_gbps));
    json_array_append_new(a, o);
  }
  return a;
}

/* The n x n link matrices at t = 0; the diagonal is 0 ms and null. */
static void links_json(const scenario *s, json_t *into) {
  json_t *lat = json_array(), *bw = json_array();
  for (int a = 0; a < s->ndevices; a++) {
    json_t *lr = json_array(), *br = json_array();
    for (int b = 0; b < s->ndevices; b++) {
      if (a == b) {
        json_array_append_new(lr, json_real(0));
        json_array_append_new(br, json_null());
        continue;
      }
      trace_value v = scenario_link(s, a, b, 0);
      json_array_append_new(lr, json_real(v.latency_ms));
      json_array_append_new(br, json_real(v.bandwidth_gbps));
    }
    json_array_append_new(lat, lr);
    json_array_append_new(bw, br);
  }
  json_object_set_new(into, "latency_ms", lat);
  json_object_set_new(into, "bandwidth_gbps", bw);
}

static void shape_json(const spec_workload *w, json_t *o) {
  const spec_model *m = w->model;
  json_object_set_new(o, "model", json_string(m->name));
  json_object_set_new(o, "layers", json_integer(w->layers));
  json_object_set_new(o, "hidden", json_integer(m->hidden));
  json_object_set_new(o, "heads", json_integer(m->heads));
  json_object_set_new(o, "seq", json_integer(m->seq));
  json_object_set_new(o, "vocab", json_integer(m->vocab));
  json_object_set_new(o, "value_bytes", json_integer(m->value_bytes));
  json_object_set_new(o, "batch", json_integer(w->batch));
  json_object_set_new(o, "micro_batch", json_integer(w->micro_batch));
  json_object_set_new(o, "stages", json_integer(w->stages));
  json_object_set_new(o, "replicas", json_integer(w->replicas));
  json_object_set_new(o, "micro_batches_per_pass",
                      json_integer(w->micro_batches_per_pass));
  json_object_set_new(o, "passes", json_integer(w->passes));
  json_object_set_new(o, "schedule",
                      json_string(spec_schedule_name(w->schedule)));
  json_object_set_new(o, "dp_algo", json_string(spec_dp_algo_name(w->dp_algo)));
  json_object_set_new(o, "runtime", json_string(spec_runtime_name(w->runtime)));
  json_object_set_new(o, "recompute", json_boolean(w->recompute));
}

/* The per-micro-batch counts a model needs to cost any partition. */
static void counts_json(const spec_workload *w, json_t *o) {
  const spec_model *m = w->model;
  double layer = w->micro_batch * spec_layer_flops(m);
  double head = w->micro_batch * spec_head_flops(m);
  json_object_set_new(o, "layer_fwd_flops", json_real(layer));
  json_object_set_new(o, "layer_bwd_flops",
                      json_real((w->recompute ? 3.0 : 2.0) * layer));
  json_object_set_new(o, "head_fwd_flops", json_real(head));
  json_object_set_new(o, "head_bwd_flops", json_real(2.0 * head));
  json_object_set_new(o, "layer_params", json_real(spec_layer_params(m)));
  json_object_set_new(o, "embedding_params",
                      json_real(spec_embedding_params(m)));
  json_object_set_new(o, "head_params", json_real(spec_stage_head_params(w)));
  json_object_set_new(o, "activation_bytes", json_real(spec_activation_bytes(w)));
  json_object_set_new(o, "gradient_value_bytes", json_integer(m->value_bytes));
}

char *costcmd_header_json(const scenario *s, const spec_workload *w,
                          const spec_gpu *const *gpu, double activation_gb,
                          double gradient_gb, transport_model network) {
  json_t *sc = json_object();
  json_object_set_new(sc, "name", json_string(s->name));
  json_object_set_new(sc, "seed", json_integer((json_int_t)s->seed));
  json_object_set_new(sc, "network_model",
                      json_string(transport_model_name(network)));
  json_object_set_new(sc, "sites", sites_json(s));
  json_object_set_new(sc, "devices", devices_json(s, w, gpu));
  links_json(s, sc);
  json_t *wl = json_object();
  shape_json(w, wl);
  counts_json(w, wl);
  json_t *cost = json_object();
  json_object_set_new(cost, "activation_gb", json_real(activation_gb));
  json_object_set_new(cost, "gradient_gb", json_real(gradient_gb));
  json_t *root = json_object();
  json_object_set_new(root, "protocol", json_string("geodes-cost-cmd/1"));
  json_object_set_new(root, "scenario", sc);
  json_object_set_new(root, "workload", wl);
  json_object_set_new(root, "cost", cost);
  char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(root);
  return text;
}

costcmd *costcmd_open(const scenario *s, const cost_ctx *c, const char *cmd,
                      transport_model network, double timeout_s, err *e) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  costcmd *cc = NULL;
  if (spec_workload_resolve(s, &w, e) == ERR_OK &&
      spec_device_gpus(s, gpu, e) == ERR_OK) {
    char *header = costcmd_header_json(s, &w, gpu, cost_ctx_activation_gb(c),
                                       cost_ctx_gradient_gb(c), network);
    cc = costcmd_start(cmd, header, timeout_s, e);
    free(header);
  }
  free(gpu);
  return cc;
}
