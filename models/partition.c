/* partition: see partition.h. The balanced split is greedy water-filling:
 * for per-stage times that grow with the stage's layers, adding each next
 * layer where the resulting time is smallest reaches the smallest possible
 * largest time (the greedy's final maximum is the least v such that the
 * stages can hold L layers within v each), and a memory cap is a time of
 * +inf beyond it. O(L D_pp), with one memory bound per stage found by
 * bisection. */
#include "models/partition.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/roofline.h"
#include "models/runtime.h"
#include "models/spec_workload.h"

int partition_parse(const char *text, int *out, int cap) {
  int n = 0;
  const char *p = text;
  for (;;) {
    if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end;
    long v = strtol(p, &end, 10);
    if (errno || v > INT_MAX || n >= cap) return -1;
    out[n++] = (int)v;
    if (*end == '\0') return n;
    if (*end != ',') return -1;
    p = end + 1;
  }
}

int partition_check(const int *layers, int n, int stages, int total, err *e) {
  if (n != stages)
    return err_set(e, ERR_CONFIG, "%d entr%s for %d stages", n,
                   n == 1 ? "y" : "ies", stages);
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    if (layers[i] < 1)
      return err_set(e, ERR_CONFIG, "entry %d is %d: every stage needs at "
                     "least one layer", i, layers[i]);
    sum += layers[i];
  }
  if (total > 0 && sum != total)
    return err_set(e, ERR_CONFIG, "they sum to %lld, not the %d layers", sum,
                   total);
  return ERR_OK;
}

double partition_stage_s(const spec_workload *w, const scenario *s,
                         const spec_gpu *const *gpu, int st, int layers,
                         int d) {
  const scenario_site *site = &s->sites[s->device_site[d]];
  return (roofline_stage_fwd_with(gpu[d], w, st, layers) +
          roofline_stage_bwd_with(gpu[d], w, st, layers)) *
         spec_site_compute_factor(site, gpu[d]);
}

/* The most layers stage st holds within `bytes` (0 when not even one). */
static int memory_cap(const spec_workload *w, int st, double bytes) {
  if (spec_stage_memory_with(w, st, 1) > bytes) return 0;
  int lo = 1, hi = w->layers; /* lo fits; the answer is in [lo, hi] */
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (spec_stage_memory_with(w, st, mid) <= bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Per stage: the smallest memory, with the device that has it. */
static void stage_limits(const spec_workload *w, const scenario *s,
                         const alloc *a, const spec_gpu *const *gpu, int *cap,
                         int *tight) {
  for (int st = 0; st < w->stages; st++) {
    tight[st] = alloc_at(a, 0, st);
    double least = spec_device_memory_bytes(s, tight[st], gpu[tight[st]]);
    for (int r = 0; r < w->replicas; r++) {
      int d = alloc_at(a, r, st);
      double have = spec_device_memory_bytes(s, d, gpu[d]);
      if (have < least) tight[st] = d, least = have;
    }
    cap[st] = memory_cap(w, st, least);
  }
}

/* A stage's time is affine in its layers on each device: fixed[i] (the
 * head's, on the last stage) plus per_layer[i] a layer, i = st R + r. */
static void stage_lines(const spec_workload *w, const scenario *s,
                        const spec_gpu *const *gpu, const alloc *a,
                        double *fixed, double *per_layer) {
  for (int st = 0; st < w->stages; st++)
    for (int r = 0; r < w->replicas; r++) {
      int d = alloc_at(a, r, st), i = st * w->replicas + r;
      fixed[i] = partition_stage_s(w, s, gpu, st, 0, d);
      per_layer[i] = partition_stage_s(w, s, gpu, st, 1, d) - fixed[i];
    }
}

/* Adds the remaining layers one by one where the stage stays fastest, a
 * stage as fast as its slowest device. */
static void fill(const spec_workload *w, const double *fixed,
                 const double *per_layer, const int *cap, int *out) {
  int R = w->replicas;
  for (int left = w->layers - w->stages; left > 0; left--) {
    int best = -1;
    double best_t = INFINITY;
    for (int st = 0; st < w->stages; st++) {
      if (out[st] >= cap[st]) continue;
      double t = 0;
      for (int r = 0; r < R; r++)
        t = fmax(t, fixed[st * R + r] + (out[st] + 1) * per_layer[st * R + r]);
      if (t < best_t) best_t = t, best = st;
    }
    out[best]++;
  }
}

int partition_balanced(const spec_workload *w, const scenario *s,
                       const spec_gpu *const *gpu, const alloc *a, int *out,
                       err *e) {
  int n = w->stages;
  size_t cells = (size_t)n * w->replicas;
  double *fixed = mem_alloc(2 * cells * sizeof *fixed);
  double *per_layer = fixed + cells;
  int *cap = mem_alloc((size_t)n * sizeof *cap);
  int *tight = mem_alloc((size_t)n * sizeof *tight);
  stage_limits(w, s, a, gpu, cap, tight);
  stage_lines(w, s, gpu, a, fixed, per_layer);
  long long room = 0;
  int rc = ERR_OK;
  for (int st = 0; st < n && rc == ERR_OK; st++) {
    if (cap[st] < 1)
      rc = err_set(e, ERR_MEMORY, "%s: stage %d does not fit even one layer "
                   "(%.2f GB) on device %d (%s, %.2f GB)", s->name, st,
                   spec_stage_memory_with(w, st, 1) / 1e9, tight[st],
                   gpu[tight[st]]->name,
                   spec_device_memory_bytes(s, tight[st], gpu[tight[st]]) /
                       1e9);
    room += cap[st];
    out[st] = 1;
  }
  if (rc == ERR_OK && room < w->layers)
    rc = err_set(e, ERR_MEMORY, "%s: the %d layers do not fit: the stages' "
                 "smallest devices hold at most %lld", s->name, w->layers,
                 room);
  if (rc == ERR_OK) fill(w, fixed, per_layer, cap, out);
  free(fixed), free(cap), free(tight);
  return rc;
}

int partition_apply(spec_workload *w, const scenario *s,
                    const spec_gpu *const *gpu, const alloc *a, int *buf,
                    err *e) {
  if (!w->balanced) return ERR_OK;
  int rc = partition_balanced(w, s, gpu, a, buf, e);
  if (rc == ERR_OK) w->stage_layers = buf;
  return rc;
}

int partition_of(const scenario *s, const alloc *a, int *out, err *e) {
  spec_workload w;
  int rc = spec_workload_resolve(s, &w, e);
  if (rc) return rc;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  int *buf = mem_alloc((size_t)w.stages * sizeof *buf);
  if (!(rc = spec_device_gpus(s, gpu, e)) &&
      !(rc = partition_apply(&w, s, gpu, a, buf, e)))
    for (int st = 0; st < w.stages; st++) out[st] = spec_stage_layers(&w, st);
  free(buf);
  free(gpu);
  return rc;
}

int partition_knob_stages(const scenario *s, const scenario_knobs *k) {
  if (k->stages > 0) return (int)k->stages;
  if (k->replicas > 0 && s->ndevices % k->replicas == 0)
    return s->ndevices / (int)k->replicas;
  return s->workload.stages;
}

int partition_knob_layers(const scenario *s, const scenario_knobs *k) {
  if (k->layers > 0) return (int)k->layers;
  if (s->workload.layers > 0 && !k->model) return s->workload.layers;
  const spec_model *m = k->model ? spec_model_find(k->model)
                                 : spec_scenario_model(s);
  return m ? m->layers : 0; /* hf:PATH: read when the knobs apply */
}

int partition_knob_split(const scenario *s, scenario_knobs *k,
                         const char *text, int **list, err *e) {
  if (strcmp(text, "balanced") == 0) {
    k->balanced_layers = true;
    return ERR_OK;
  }
  int stages = partition_knob_stages(s, k);
  *list = mem_alloc(((size_t)stages + 1) * sizeof **list);
  int n = partition_parse(text, *list, stages + 1);
  if (n < 0)
    return err_set(e, ERR_PARSE, "wants 'balanced' or %d comma-separated "
                   "layer counts (no spaces), not '%s'", stages, text);
  /* layers 0: unknown, the sum unchecked here */
  int rc = partition_check(*list, n, stages, partition_knob_layers(s, k), e);
  if (rc) return rc;
  k->layers_per_stage = *list;
  k->nlayers_per_stage = n;
  return ERR_OK;
}

int partition_knob_fits(const scenario *s, const scenario_knobs *k, err *e) {
  if (k->stages <= 0 && k->replicas <= 0) return ERR_OK;
  int layers = partition_knob_layers(s, k);
  long st = k->stages > 0 ? k->stages
            : s->ndevices % k->replicas ? 0 : s->ndevices / k->replicas;
  if (layers <= 0 || st <= layers) return ERR_OK;
  return err_set_field(e, k->stages > 0 ? WORKLOAD_stages : WORKLOAD_replicas,
                       ERR_CONFIG, "%ld stages for the %d layers: every "
                       "stage holds at least one", st, layers);
}

void partition_knob_options(const scenario_knobs *k, char *buf,
                            size_t size) {
  buf[0] = '\0';
  if (k->stages > 0) snprintf(buf, size, "--stages %ld", k->stages);
  if (k->replicas > 0)
    snprintf(buf + strlen(buf), size - strlen(buf), "%s--replicas %ld",
             buf[0] ? " " : "", k->replicas);
}

bool partition_resolve(const scenario *s, const alloc *a, spec_workload *w,
                       int *split, const char **how) {
  if (spec_workload_resolve(s, w, NULL) != ERR_OK) return false;
  *how = w->stage_layers ? "given" : "even";
  if (!w->balanced) return true;
  *how = "balanced";
  const spec_gpu **gpu = mem_alloc((size_t)s->ndevices * sizeof *gpu + 1);
  if (!a || spec_device_gpus(s, gpu, NULL) != ERR_OK ||
      partition_apply(w, s, gpu, a, split, NULL) != ERR_OK)
    w->stage_layers = NULL, *how = "balanced per allocation";
  free(gpu);
  return true;
}

bool partition_resolve_step(const scenario *s, const alloc *a,
                            spec_workload *w, double *step_s) {
  const char *how;
  int *split = mem_alloc(((size_t)s->workload.stages + 1) * sizeof *split);
  const spec_gpu **gpu = mem_alloc((size_t)s->ndevices * sizeof *gpu + 1);
  bool ok = partition_resolve(s, a, w, split, &how);
  *step_s = NAN;
  if (ok && a && !(w->balanced && !w->stage_layers) &&
      spec_device_gpus(s, gpu, NULL) == ERR_OK)
    *step_s = runtime_step_max_s(w, gpu, a);
  w->stage_layers = NULL; /* split is freed: the step is known */
  free(gpu);
  free(split);
  return ok;
}
