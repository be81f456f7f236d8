/* scenario_knobs: the knobs of scenario.h — values given after loading
 * (the command line's options, a sweep point's keys), one per row of
 * WORKLOAD_MAP — checked with the rows' own ranges and the loader's rules
 * and applied.
 * Invariant: scenario_apply changes nothing unless every knob passed its
 * check (check_knobs), so a refused knob leaves the scenario as loaded; a
 * row a knob set has the line SCENARIO_LINE_KNOB, so later messages name
 * the knob instead of a line that no longer holds the value; every failure
 * names its row (err.field). */
#include "traces/scenario.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "traces/model_hf.h"
#include "traces/scenario_row.h"
#include "traces/workload.h"

void scenario_knobs_init(scenario_knobs *k) {
  *k = (scenario_knobs){.layers_per_stage = NULL};
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) scenario_knob_clear(k, r);
}

/* Knob r within its row's range or names: "NAME: workload.batch: 0 is not
 * in [1, 100000000]". */
static int check_row(const scenario *s, const scenario_knobs *k, int r,
                     err *e) {
  const workload_row *row = &workload_rows[r];
  if (!scenario_knob_given(k, r)) return ERR_OK;
  char path[64], range[128];
  workload_path(row, path, sizeof path);
  workload_range_text(row, range, sizeof range);
  if (row->kind == WORKLOAD_NAME) {
    const char *v = scenario_knob_name(k, r);
    if (!row->names || workload_name_ok(row, v)) return ERR_OK;
    return err_set_field(e, r, ERR_UNKNOWN, "%s: %s: '%s' is not %s", s->name,
                         path, v, range);
  }
  double x = scenario_knob_number(k, r);
  if (workload_number_ok(row, x)) return ERR_OK;
  bool listed = row->kind == WORKLOAD_BITS || row->kind == WORKLOAD_BOOL;
  return err_set_field(e, r, ERR_RANGE, "%s: %s: %.17g is not %s%s", s->name,
                       path, x, listed ? "" : "in ", range);
}

/* The scaled links (trace and overrides) stay within trace.h's bounds. */
static int check_scaled(const scenario *s, double ls, double bs, err *e) {
  if (ls == 1 && bs == 1) return ERR_OK;
  trace_value lo, hi;
  trace_extremes(s->network, &lo, &hi);
  for (int i = 0; i < s->noverrides; i++) {
    const scenario_override *o = &s->overrides[i];
    hi.latency_ms = fmax(hi.latency_ms, o->latency_ms);
    lo.bandwidth_gbps = fmin(lo.bandwidth_gbps, o->bandwidth_gbps);
    hi.bandwidth_gbps = fmax(hi.bandwidth_gbps, o->bandwidth_gbps);
  }
  bool slow = hi.latency_ms * ls > TRACE_MAX_LATENCY_MS;
  if (slow || lo.bandwidth_gbps * bs < TRACE_MIN_BANDWIDTH_GBPS ||
      !isfinite(hi.bandwidth_gbps * bs))
    return err_set_field(e, slow ? WORKLOAD_latency_scale
                                 : WORKLOAD_bandwidth_scale,
                         ERR_RANGE, "%s: latency scale %g and bandwidth "
                         "scale %g take the links outside latency <= %g ms, "
                         "bandwidth >= %g Gbit/s and finite", s->name, ls, bs,
                         TRACE_MAX_LATENCY_MS, TRACE_MIN_BANDWIDTH_GBPS);
  return ERR_OK;
}

/* The workload integer row r will have: the knob's, else the scenario's. */
static int int_of(const scenario *s, const scenario_knobs *k, int r) {
  return (int)(scenario_knob_given(k, r) ? scenario_knob_number(k, r)
                                         : scenario_row_number(s, r));
}

/* The layers-per-stage knob: D_pp entries, each >= 1, summing to the
 * layers when they are known here (a count of 0 leaves the model's depth,
 * which models/spec checks). */
static int check_layers_per_stage(const scenario *s, const scenario_knobs *k,
                                  int layers, int stages, err *e) {
  if (!k->layers_per_stage) return ERR_OK;
  int n = k->nlayers_per_stage;
  long sum = 0;
  if (n != stages)
    return err_set(e, ERR_CONFIG, "%s: layers per stage: %d entries for %d "
                   "stages", s->name, n, stages);
  for (int st = 0; st < n; st++) {
    if (k->layers_per_stage[st] < 1)
      return err_set(e, ERR_CONFIG, "%s: layers per stage: entry %d is %d",
                     s->name, st, k->layers_per_stage[st]);
    sum += k->layers_per_stage[st];
  }
  if (layers > 0 && sum != layers)
    return err_set(e, ERR_CONFIG, "%s: layers per stage: they sum to %ld, "
                   "not the %d layers", s->name, sum, layers);
  return ERR_OK;
}

/* The shape D_pp x D_dp the knobs give into *stages, *replicas: both, one
 * (the other is the devices divided by it) or neither (the scenario's); it
 * uses every device (schedule --shape auto searches subsets on views,
 * scenario_subset.h). */
static int check_shape(const scenario *s, const scenario_knobs *k,
                       int *stages, int *replicas, err *e) {
  const scenario_workload *w = &s->workload;
  long n = s->ndevices, st = k->stages, rep = k->replicas;
  *stages = w->stages, *replicas = w->replicas;
  if (st < 0 && rep < 0) return ERR_OK;
  if (st > 0 && rep > 0 && st * rep != n)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG,
                         "%s: workload.stages x workload.replicas = %ld x %ld "
                         "= %ld, but the scenario has %ld devices (a shape "
                         "uses every device; schedule --shape auto searches "
                         "subsets)", s->name, st, rep, st * rep, n);
  if (st > 0 && n % st)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "%s: workload.stages: "
                         "%ld does not divide the %ld devices", s->name, st, n);
  if (rep > 0 && n % rep)
    return err_set_field(e, WORKLOAD_replicas, ERR_CONFIG, "%s: "
                         "workload.replicas: %ld does not divide the %ld "
                         "devices", s->name, rep, n);
  *stages = (int)(st > 0 ? st : n / rep);
  *replicas = (int)(rep > 0 ? rep : n / st);
  if (*stages != w->stages && w->layers_per_stage && !k->layers_per_stage &&
      !k->balanced_layers)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "%s: workload.stages: "
                         "workload.layers_per_stage lists %d stages, not %d "
                         "(give the layers per stage too)",
                         s->name, w->stages, *stages);
  return ERR_OK;
}

/* The row a batch that does not divide is blamed on: the first of the
 * batch's own knobs given, else the shape's when the scenario's own shape
 * divides it, else the batch. */
static int batch_blame(const scenario *s, const scenario_knobs *k,
                       long long kk, int batch, int mb) {
  const int own[] = {WORKLOAD_batch, WORKLOAD_micro_batch,
                     WORKLOAD_micro_batches_per_pass, WORKLOAD_runtime};
  for (size_t i = 0; i < sizeof own / sizeof *own; i++)
    if (scenario_knob_given(k, own[i])) return own[i];
  long long per_pass;
  bool shaped = k->stages > 0 || k->replicas > 0;
  if (shaped &&
      scenario_batch_divides(batch, s->workload.replicas, mb, kk, &per_pass))
    return k->replicas > 0 ? WORKLOAD_replicas : WORKLOAD_stages;
  return WORKLOAD_batch;
}

/* The shape's, the layers' and the batch's checks against each other. */
static int check_workload(const scenario *s, const scenario_knobs *k,
                          int *stages, int *replicas, err *e) {
  int rc, layers = int_of(s, k, WORKLOAD_layers);
  if (scenario_knob_given(k, WORKLOAD_model) &&
      !scenario_knob_given(k, WORKLOAD_layers))
    layers = 0; /* the model's depth, which models/spec knows */
  if ((rc = check_shape(s, k, stages, replicas, e)) ||
      (rc = check_layers_per_stage(s, k, layers, *stages, e)))
    return rc;
  bool shaped = k->stages > 0 || k->replicas > 0;
  if (shaped && layers > 0 && layers < *stages)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG, "%s: "
                         "workload.stages: %d stages for %d layers: every "
                         "stage holds at least one", s->name, *stages, layers);
  if (k->layers > 0 && layers < *stages)
    return err_set_field(e, WORKLOAD_layers, ERR_CONFIG, "%s: "
                         "workload.layers: %d is fewer than the %d stages",
                         s->name, layers, *stages);
  int batch = int_of(s, k, WORKLOAD_batch),
      mb = int_of(s, k, WORKLOAD_micro_batch);
  const char *runtime = k->runtime ? k->runtime : s->workload.runtime;
  int kpp = int_of(s, k, WORKLOAD_micro_batches_per_pass);
  long long per_pass, kk = workload_batch_k(runtime, kpp);
  if (!scenario_batch_divides(batch, *replicas, mb, kk, &per_pass))
    return err_set_field(e, batch_blame(s, k, kk, batch, mb), ERR_CONFIG,
                         "%s: workload.batch: %d is not a multiple of D_dp * "
                         "m * K = %d * %d * %lld%s", s->name, batch,
                         *replicas, mb, kk,
                         per_pass < 0 ? " (which exceeds it)" : "");
  return ERR_OK;
}

/* The model knob's config when it names one ("hf:PATH", relative to the
 * working directory: the command line's and a sweep's), read and checked
 * into *dims (NULL: only checked); *dims stays NULL for a name, which
 * models/spec checks. */
static int knob_model(const scenario_knobs *k, model_dims **dims, err *e) {
  const char *v = k->model;
  if (!model_is_hf(v)) return ERR_OK;
  model_dims *d = NULL;
  int rc = model_hf_load(v + strlen(MODEL_HF_PREFIX), &d, e);
  if (rc) return err_blame(e, WORKLOAD_model, rc);
  if (dims) *dims = d;
  else model_free(d);
  return ERR_OK;
}

/* Every check of scenario_apply; the shape into *stages, *replicas, the
 * model knob's dimensions into *dims (see knob_model). */
static int check_knobs(const scenario *s, const scenario_knobs *k,
                       int *stages, int *replicas, model_dims **dims,
                       err *e) {
  for (int r = 0; r < WORKLOAD_NFIELDS; r++) {
    int rc = check_row(s, k, r, e);
    if (rc) return rc;
  }
  int rc = check_scaled(s, k->latency_scale, k->bandwidth_scale, e);
  if (!rc) rc = check_workload(s, k, stages, replicas, e);
  return rc ? rc : knob_model(k, dims, e);
}

int scenario_check_knobs(const scenario *s, const scenario_knobs *k, err *e) {
  int stages, replicas;
  return check_knobs(s, k, &stages, &replicas, NULL, e);
}

static void apply_layers_per_stage(scenario_workload *w,
                                   const scenario_knobs *k) {
  if (!k->layers_per_stage && !k->balanced_layers) return;
  free(w->layers_per_stage);
  w->layers_per_stage = NULL;
  w->balanced_layers = k->balanced_layers && !k->layers_per_stage;
  if (!k->layers_per_stage) return;
  size_t bytes = (size_t)k->nlayers_per_stage * sizeof *w->layers_per_stage;
  w->layers_per_stage = mem_alloc(bytes);
  memcpy(w->layers_per_stage, k->layers_per_stage, bytes);
}

/* Knob r (given) onto s: the value of its target, and its line. */
static void apply_row(scenario *s, const scenario_knobs *k, int r) {
  const workload_row *row = &workload_rows[r];
  switch (row->target) {
    case WORKLOAD_IN_LINKS: /* apply_links scales the links */
    case WORKLOAD_IN_TRANSPORT: /* the front ends' transport options */
      return;
    case WORKLOAD_IN_SITES:
      for (int i = 0; r == WORKLOAD_gpu && i < s->nsites; i++)
        s->sites[i].gpu_line = 0; /* the site's line no longer holds it */
      break;
    case WORKLOAD_IN_WORKLOAD:
    case WORKLOAD_IN_COST:
    case WORKLOAD_IN_TOP:
      break;
  }
  if (row->kind == WORKLOAD_NAME)
    scenario_row_set_name(s, r, scenario_knob_name(k, r));
  else scenario_row_set_number(s, r, scenario_knob_number(k, r));
  s->line[r] = SCENARIO_LINE_KNOB;
}

/* The links' what-if: every link (trace and overrides) times the scales,
 * which the scenario records. */
static void apply_links(scenario *s, const scenario_knobs *k) {
  double ls = k->latency_scale, bs = k->bandwidth_scale;
  if (ls == 1 && bs == 1) return;
  trace_scale(s->network, ls, bs);
  for (int i = 0; i < s->noverrides; i++) {
    s->overrides[i].latency_ms *= ls;
    s->overrides[i].bandwidth_gbps *= bs;
  }
  s->latency_scale *= ls;
  s->bandwidth_scale *= bs;
}

int scenario_apply(scenario *s, const scenario_knobs *k, err *e) {
  int stages, replicas;
  model_dims *dims = NULL;
  int rc = check_knobs(s, k, &stages, &replicas, &dims, e);
  if (rc) return rc;
  /* Every check passed: only now is s changed (and the lines of what the
   * knobs replace are no longer the file's). */
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (scenario_knob_given(k, r)) apply_row(s, k, r);
  scenario_workload *w = &s->workload;
  if (k->model) { /* a name, or a config's dimensions and their name */
    model_free(w->model_dims);
    w->model_dims = dims;
    if (dims) scenario_row_set_name(s, WORKLOAD_model, dims->name);
  }
  if (k->model && k->layers < 0) /* the model's own depth */
    w->layers = 0, s->line[WORKLOAD_layers] = SCENARIO_LINE_KNOB;
  w->stages = stages, w->replicas = replicas; /* one knob gives both */
  if (k->stages > 0 || k->replicas > 0)
    s->line[WORKLOAD_stages] = s->line[WORKLOAD_replicas] = SCENARIO_LINE_KNOB;
  apply_layers_per_stage(w, k);
  apply_links(s, k);
  return ERR_OK;
}
