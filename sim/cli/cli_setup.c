/* cli_setup: what a run ran with, stated by every command's output (the
 * table's header lines and the --json fields): the network model and its
 * transport (window, sockets, runtime), the workload as resolved (layers
 * and their split over the stages, schedule, passes of K micro-batches,
 * data-parallel algorithm) and the what-if scales.
 * Invariant: the values shown are the effective ones (after the knobs, the
 * scenario's defaults and, for a balanced split, the allocation), never
 * the options as typed; a field that cannot be resolved is null, not
 * left out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "models/params.h"
#include "models/partition.h"
#include "models/runtime.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "models/unused.h"
#include "sim/cli/cli.h"
#include "traces/scenario_export.h"
#include "traces/scenario_row.h"

/* Every site's nccl_sockets, or -1 when they differ. */
static int sockets_of(const scenario *s) {
  int n = s->nsites ? s->sites[0].nccl_sockets : -1;
  for (int i = 1; i < s->nsites; i++)
    if (s->sites[i].nccl_sockets != n) return -1;
  return n;
}

/* "3,3,3" into buf (cut with "..." when it does not fit). */
static void split_text(const spec_workload *w, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int st = 0; st < w->stages && at < size; st++)
    at += (size_t)snprintf(buf + at, size - at, "%s%d", st ? "," : "",
                           spec_stage_layers(w, st));
  if (at >= size && size > 4) strcpy(buf + size - 4, "...");
}

void cli_runtime_text(const scenario *s, const alloc *a, double iteration_s,
                      char *buf, size_t size) {
  spec_workload w;
  double step_s;
  buf[0] = '\0';
  if (partition_resolve_step(s, a, &w, &step_s))
    runtime_text(&w, step_s, iteration_s, buf, size);
}

json_t *cli_json_runtime(const scenario *s, const alloc *a,
                         double iteration_s) {
  spec_workload w;
  double step_s;
  if (!partition_resolve_step(s, a, &w, &step_s)) return json_null();
  const runtime_row *r = runtime_of(w.runtime);
  char line[160];
  runtime_text(&w, step_s, iteration_s, line, sizeof line);
  double share = isfinite(iteration_s) && iteration_s > 0
                     ? step_s / iteration_s : NAN;
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(spec_runtime_name(w.runtime)));
  json_object_set_new(o, "optimizer", json_string(r->optimizer));
  const char *on = "gpu";
  switch (r->place) {
    case RUNTIME_ON_HOST: on = "host"; break;
    case RUNTIME_ON_GPU: on = "gpu"; break;
  }
  json_object_set_new(o, "optimizer_on", json_string(on));
  json_object_set_new(o, "bytes_per_param",
                      json_real(runtime_gpu_bytes_per_param(&w)));
  json_object_set_new(o, "zero", json_integer(w.given.zero));
  json_object_set_new(o, "activations", json_string(r->activations));
  json_object_set_new(o, "pass_boundary", json_string(r->boundary));
  json_object_set_new(o, "p2p_call_s",
                      json_real(runtime_p2p_call_s(w.runtime)));
  json_object_set_new(o, "checkpoint", json_string(r->checkpoint));
  json_object_set_new(o, "checkpoint_gbps", json_real(r->checkpoint_gbps));
  json_object_set_new(o, "optimizer_s", cli_json_number(step_s));
  json_object_set_new(o, "optimizer_share", cli_json_number(share));
  json_object_set_new(o, "line", json_string(line));
  return o;
}

/* Row r's value on the run as text: a name, a number, or the window. */
static void value_text(const scenario *s, const transport_options *t, int r,
                       char *buf, size_t size) {
  if (workload_rows[r].target == WORKLOAD_IN_TRANSPORT)
    snprintf(buf, size, "%.17g", t->window_bytes);
  else if (workload_rows[r].kind == WORKLOAD_NAME)
    snprintf(buf, size, "%s", scenario_row_name(s, r));
  else
    snprintf(buf, size, "%.17g", scenario_row_number(s, r));
}

/* The values the run does not use (models/unused.h): one line each. */
static void print_unused(const transport_options *t, const scenario *s,
                         const spec_workload *w, const alloc *a) {
  unused_value u[UNUSED_MAX];
  int n = unused_values(s, w, a, t, u);
  for (int i = 0; i < n; i++) {
    char v[64];
    value_text(s, t, u[i].row, v, sizeof v);
    const workload_row *row = &workload_rows[u[i].row];
    printf("unused      %s %s: %s\n", row->key ? row->key : row->option, v,
           u[i].why);
  }
}

static json_t *json_unused(const transport_options *t, const scenario *s,
                           const spec_workload *w, const alloc *a) {
  unused_value u[UNUSED_MAX];
  int n = unused_values(s, w, a, t, u);
  json_t *o = json_object();
  for (int i = 0; i < n; i++) {
    const workload_row *row = &workload_rows[u[i].row];
    json_object_set_new(o, row->key ? row->key : row->sweep,
                        json_string(u[i].why));
  }
  return o;
}

void cli_print_setup(const transport_options *t, const scenario *s,
                     const alloc *a, double iteration_s) {
  cli_print_transport(t, s, a, iteration_s);
  spec_workload w;
  const char *how = "even";
  int *buf = mem_alloc(((size_t)s->workload.stages + 1) * sizeof *buf);
  if (partition_resolve(s, a, &w, buf, &how)) {
    char split[128] = "";
    if (w.balanced && !w.stage_layers) snprintf(split, sizeof split, "?");
    else split_text(&w, split, sizeof split);
    char algo[96];
    snprintf(algo, sizeof algo, "%s", s->workload.dp_algo);
    if (spec_dp_algo_matchmakes(w.dp_algo)) /* hivemind's knobs */
      snprintf(algo, sizeof algo, "%s (matchmaking %g s%s)",
               s->workload.dp_algo, w.given.matchmaking_s,
               spec_dp_delayed(&w) ? ", averaging delayed a step" : "");
    printf("workload    %s, %d layers split %s (%s), %s, %d pass%s x %d "
           "micro-batch%s of %d, %s\n", w.model->name, w.layers, split, how,
           spec_schedule_name(w.schedule), w.passes, w.passes == 1 ? "" : "es",
           w.micro_batches_per_pass, w.micro_batches_per_pass == 1 ? "" : "es",
           w.micro_batch, algo);
    print_unused(t, s, &w, a);
  }
  free(buf);
  cli_print_whatif(s);
  cli_print_params();
}

void cli_print_params(void) {
  bool any = false;
  for (int i = 0; i < PARAMS_N; i++) {
    double v = params_get((params_id)i), def = params_table[i].def;
    if (v == def) continue;
    char was[48] = "unset"; /* a default of 0: each site's own */
    if (def != 0) snprintf(was, sizeof was, "%.6g", def);
    printf("%s%s %.6g %s (built-in %s)", any ? ", " : "params      ",
           params_table[i].name, v, params_table[i].unit, was);
    any = true;
  }
  if (any) printf("\n");
}

json_t *cli_json_params(void) {
  json_t *o = json_object();
  for (int i = 0; i < PARAMS_N; i++)
    if (params_get((params_id)i) != params_table[i].def)
      json_object_set_new(o, params_table[i].name,
                          cli_json_number(params_get((params_id)i)));
  return o;
}

void cli_print_whatif(const scenario *s) {
  if (s->bandwidth_scale != 1 || s->latency_scale != 1)
    printf("what-if     every link's bandwidth x %g, latency x %g\n",
           s->bandwidth_scale, s->latency_scale);
}

static json_t *int_or_null(int v) { return v >= 0 ? json_integer(v) : json_null(); }

void cli_json_setup(json_t *o, const transport_options *t, const scenario *s,
                    const alloc *a, double iteration_s) {
  if (!json_object_get(o, "network_model"))
    json_object_set_new(o, "network_model",
                        json_string(transport_model_name(t->model)));
  json_object_set_new(o, "transport", cli_json_transport(t, s, a, iteration_s));
  json_object_set_new(o, "runtime", cli_json_runtime(s, a, iteration_s));
  json_object_set_new(o, "sockets", int_or_null(sockets_of(s)));
  json_object_set_new(o, "bandwidth_scale", cli_json_number(s->bandwidth_scale));
  json_object_set_new(o, "latency_scale", cli_json_number(s->latency_scale));
  json_object_set_new(o, "params", cli_json_params());
  spec_workload w;
  const char *how = "even";
  int *buf = mem_alloc(((size_t)s->workload.stages + 1) * sizeof *buf);
  json_t *k = json_object();
  if (partition_resolve(s, a, &w, buf, &how)) {
    json_t *split = json_null();
    if (!w.balanced || w.stage_layers) {
      split = json_array();
      for (int st = 0; st < w.stages; st++)
        json_array_append_new(split, json_integer(spec_stage_layers(&w, st)));
    }
    json_object_set_new(k, "model", json_string(w.model->name));
    json_object_set_new(k, "layers", json_integer(w.layers));
    json_object_set_new(k, "layers_per_stage", split);
    json_object_set_new(k, "layer_split", json_string(how));
    json_object_set_new(k, "schedule",
                        json_string(spec_schedule_name(w.schedule)));
    json_object_set_new(k, "runtime", json_string(s->workload.runtime));
    json_object_set_new(k, "dp_algo", json_string(spec_dp_algo_name(w.dp_algo)));
    json_object_set_new(k, "batch", json_integer(w.batch));
    json_object_set_new(k, "micro_batch", json_integer(w.micro_batch));
    json_object_set_new(k, "micro_batches_per_pass",
                        json_integer(w.micro_batches_per_pass));
    json_object_set_new(k, "passes", json_integer(w.passes));
    for (int r = 0; r < WORKLOAD_NFIELDS; r++) /* the other knobs, as set */
      if (workload_rows[r].target == WORKLOAD_IN_WORKLOAD &&
          !json_object_get(k, workload_rows[r].key))
        json_object_set_new(k, workload_rows[r].key, scenario_export_row(s, r));
  }
  json_object_set_new(o, "unused", k == NULL || !json_object_size(k)
                                       ? json_object()
                                       : json_unused(t, s, &w, a));
  free(buf);
  json_object_set_new(o, "workload", k);
}
