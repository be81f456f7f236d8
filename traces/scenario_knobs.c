/* scenario_knobs: the knobs of scenario.h — values given after loading
 * (the command line's options, a sweep point's keys) — checked with the
 * loader's own rules and applied.
 * Invariant: scenario_apply changes nothing unless every knob passed its
 * check (check_knobs), so a refused knob leaves the scenario as loaded;
 * a field a knob replaced loses its file line (scenario_lines), so later
 * messages name the knob's scenario instead of a line that no longer holds
 * the value. */
#include "traces/scenario.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/names.h"
#include "traces/workload.h"

void scenario_knobs_init(scenario_knobs *k) {
  *k = (scenario_knobs){.layers = -1, .batch = -1, .micro_batch = -1,
                        .micro_batches_per_pass = -1, .seed = -1,
                        .activation_gb = NAN, .gradient_gb = NAN,
                        .latency_scale = 1, .bandwidth_scale = 1,
                        .sockets = -1, .grad_bits = -1,
                        .activation_bits = -1};
#define ABSENT_(a, f, lo, hi, option, arg, help) k->f = -1;
  SCENARIO_KNOB_MAP(ABSENT_, )
#undef ABSENT_
}

static void replace_str(char **field, const char *value) {
  free(*field);
  *field = mem_strdup(value);
}

/* The workload field the integer knob sets (> 0 present, else current),
 * at most hi. */
static int knob_int(const scenario *s, const char *field, long knob, long hi,
                    int current, int *out, err *e) {
  *out = current;
  if (knob <= 0) return ERR_OK;
  if (knob > hi)
    return err_set(e, ERR_RANGE, "%s: workload.%s: %ld is more than %ld",
                   s->name, field, knob, hi);
  *out = (int)knob;
  return ERR_OK;
}

/* The scaled links (trace and overrides) stay within trace.h's bounds. */
static int check_scaled(const scenario *s, double ls, double bs, err *e) {
  trace_value lo, hi;
  trace_extremes(s->network, &lo, &hi);
  for (int i = 0; i < s->noverrides; i++) {
    const scenario_override *o = &s->overrides[i];
    hi.latency_ms = fmax(hi.latency_ms, o->latency_ms);
    lo.bandwidth_gbps = fmin(lo.bandwidth_gbps, o->bandwidth_gbps);
    hi.bandwidth_gbps = fmax(hi.bandwidth_gbps, o->bandwidth_gbps);
  }
  if (hi.latency_ms * ls > TRACE_MAX_LATENCY_MS ||
      lo.bandwidth_gbps * bs < TRACE_MIN_BANDWIDTH_GBPS ||
      !isfinite(hi.bandwidth_gbps * bs))
    return err_set(e, ERR_RANGE, "%s: latency scale %g and bandwidth scale %g "
                   "take the links outside latency <= %g ms, bandwidth >= "
                   "%g Gbit/s and finite", s->name, ls, bs,
                   TRACE_MAX_LATENCY_MS, TRACE_MIN_BANDWIDTH_GBPS);
  return ERR_OK;
}

/* A name knob (NULL: absent) is one of names: "'x' is not a, b or c". */
static int check_name(const scenario *s, const char *field, const char *v,
                      const char *const *names, err *e) {
  if (!v || names_find(names, v) >= 0) return ERR_OK;
  char known[128];
  names_join(names, ", ", " or ", known, sizeof known);
  return err_set(e, ERR_UNKNOWN, "%s: workload.%s: '%s' is not %s", s->name,
                 field, v, known);
}

/* SCENARIO_KNOB_MAP's knobs (present: >= 0) in their ranges, and the
 * widths (the checks of DiLoCo's against the layers are models/diloco's). */
static int check_diloco_knobs(const scenario *s, const scenario_knobs *k,
                              err *e) {
#define CHECK_(a, f, lo, hi, option, arg, help)                              \
  if (k->f >= 0 && (k->f < (lo) || k->f > (hi)))                            \
    return err_set(e, ERR_RANGE, "%s: workload.%s: %ld is not in %d..%d",   \
                   s->name, #f, k->f, lo, hi);
  SCENARIO_KNOB_MAP(CHECK_, )
#undef CHECK_
  if (k->grad_bits >= 0 && !workload_bits_ok(workload_grad_bits, k->grad_bits))
    return err_set(e, ERR_RANGE, "%s: workload.grad_bits: %ld is not %s",
                   s->name, k->grad_bits, WORKLOAD_GRAD_BITS_TEXT);
  if (k->activation_bits >= 0 &&
      !workload_bits_ok(workload_act_bits, k->activation_bits))
    return err_set(e, ERR_RANGE, "%s: workload.activation_bits: %ld is not %s",
                   s->name, k->activation_bits, WORKLOAD_ACT_BITS_TEXT);
  return ERR_OK;
}

static int check_other_knobs(const scenario *s, const scenario_knobs *k,
                             err *e) {
  int rc;
  if ((rc = check_name(s, "runtime", k->runtime, workload_runtimes, e)) ||
      (rc = check_diloco_knobs(s, k, e)))
    return rc;
  if (k->sockets >= 0 && (k->sockets < 1 || k->sockets > SCENARIO_SOCKETS_MAX))
    return err_set(e, ERR_RANGE, "%s: sockets: %ld is not in 1..%d", s->name,
                   k->sockets, SCENARIO_SOCKETS_MAX);
  if ((rc = check_name(s, "schedule", k->schedule, workload_schedules, e)) ||
      (rc = check_name(s, "dp_algo", k->dp_algo, workload_dp_algos, e)))
    return rc;
  if (!(k->latency_scale > 0) || !(k->bandwidth_scale > 0) ||
      !isfinite(k->latency_scale) || !isfinite(k->bandwidth_scale))
    return err_set(e, ERR_RANGE, "%s: latency and bandwidth scales must be "
                   "finite and > 0, not %g and %g", s->name, k->latency_scale,
                   k->bandwidth_scale);
  if ((isfinite(k->activation_gb) && !(k->activation_gb > 0)) ||
      (isfinite(k->gradient_gb) && !(k->gradient_gb > 0)))
    return err_set(e, ERR_RANGE, "%s: cost.activation_gb and gradient_gb must "
                   "be > 0, not %g and %g", s->name, k->activation_gb,
                   k->gradient_gb);
  if (k->seed > SCENARIO_MAX_SEED)
    return err_set(e, ERR_RANGE, "%s: seed: %ld is more than %ld", s->name,
                   k->seed, SCENARIO_MAX_SEED);
  if (k->latency_scale == 1 && k->bandwidth_scale == 1) return ERR_OK;
  return check_scaled(s, k->latency_scale, k->bandwidth_scale, e);
}

/* The workload integers the knobs give (the scenario's where absent). */
typedef struct knob_ints {
  int layers, batch, mb, kpp, stages, replicas;
} knob_ints;

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

/* The shape D_pp x D_dp the knobs give: both, one (the other is the
 * devices divided by it) or neither (the scenario's); it uses every device
 * (schedule --shape auto searches subsets on views, scenario_subset.h). */
static int check_shape(const scenario *s, const scenario_knobs *k,
                       knob_ints *v, err *e) {
  const scenario_workload *w = &s->workload;
  long n = s->ndevices, st = k->stages > 0 ? k->stages : -1,
       rep = k->replicas > 0 ? k->replicas : -1;
  v->stages = w->stages, v->replicas = w->replicas;
  if (st < 0 && rep < 0) return ERR_OK;
  if (st > 0 && rep > 0 && st * rep != n)
    return err_set(e, ERR_CONFIG, "%s: workload.stages x workload.replicas = "
                   "%ld x %ld = %ld, "
                   "but the scenario has %ld devices (a shape uses every "
                   "device; schedule --shape auto searches subsets)",
                   s->name, st, rep, st * rep, n);
  if (st > 0 && n % st)
    return err_set(e, ERR_CONFIG, "%s: workload.stages: %ld does not divide "
                   "the %ld devices", s->name, st, n);
  if (rep > 0 && n % rep)
    return err_set(e, ERR_CONFIG, "%s: workload.replicas: %ld does not "
                   "divide the %ld devices", s->name, rep, n);
  v->stages = (int)(st > 0 ? st : n / rep);
  v->replicas = (int)(rep > 0 ? rep : n / st);
  if (v->stages != w->stages && w->layers_per_stage && !k->layers_per_stage &&
      !k->balanced_layers)
    return err_set(e, ERR_CONFIG, "%s: workload.stages: "
                   "workload.layers_per_stage lists %d stages, not %d (give "
                   "the layers per stage too)",
                   s->name, w->stages, v->stages);
  return ERR_OK;
}

/* Every check of scenario_apply; the integers into v. */
static int check_knobs(const scenario *s, const scenario_knobs *k,
                       knob_ints *v, err *e) {
  const scenario_workload *w = &s->workload;
  int rc;
  if ((rc = check_other_knobs(s, k, e)) ||
      (rc = knob_int(s, "layers", k->layers, SCENARIO_MAX_LAYERS, w->layers,
                     &v->layers, e)) ||
      (rc = knob_int(s, "batch", k->batch, INT_MAX, w->batch, &v->batch, e)) ||
      (rc = knob_int(s, "micro_batch", k->micro_batch, INT_MAX,
                     w->micro_batch, &v->mb, e)) ||
      (rc = knob_int(s, "micro_batches_per_pass", k->micro_batches_per_pass,
                     INT_MAX, w->micro_batches_per_pass, &v->kpp, e)))
    return rc;
  if ((rc = check_shape(s, k, v, e)) ||
      (rc = check_layers_per_stage(s, k, v->layers, v->stages, e)))
    return rc;
  bool shaped = k->stages > 0 || k->replicas > 0;
  if (shaped && v->layers > 0 && v->layers < v->stages)
    return err_set(e, ERR_CONFIG, "%s: workload.stages: %d stages for %d "
                   "layers: every stage holds at least one", s->name,
                   v->stages, v->layers);
  if (k->layers > 0 && v->layers < v->stages)
    return err_set(e, ERR_CONFIG, "%s: workload.layers: %d is fewer than the "
                   "%d stages", s->name, v->layers, v->stages);
  long long per_pass,
      kk = workload_batch_k(k->runtime ? k->runtime : w->runtime, v->kpp);
  if (!scenario_batch_divides(v->batch, v->replicas, v->mb, kk, &per_pass))
    return err_set(e, ERR_CONFIG,
                   "%s: workload.batch: %d is not a multiple of D_dp * m * K = "
                   "%d * %d * %lld%s", s->name, v->batch, v->replicas, v->mb,
                   kk, per_pass < 0 ? " (which exceeds it)" : "");
  return ERR_OK;
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

int scenario_check_knobs(const scenario *s, const scenario_knobs *k, err *e) {
  knob_ints v;
  return check_knobs(s, k, &v, e);
}

static void apply_diloco(scenario_workload *w, const scenario_knobs *k) {
#define APPLY_(a, f, lo, hi, option, arg, help) \
  if (k->f >= 0) w->f = (int)k->f;
  SCENARIO_KNOB_MAP(APPLY_, )
#undef APPLY_
  /* the shape is check_shape's (one knob gives both) */
  if (k->grad_bits >= 0) w->grad_bits = (int)k->grad_bits;
  if (k->activation_bits >= 0) w->activation_bits = (int)k->activation_bits;
}

int scenario_apply(scenario *s, const scenario_knobs *k, err *e) {
  knob_ints v;
  int rc = check_knobs(s, k, &v, e);
  if (rc) return rc;
  /* Every check passed: only now is s changed (and the lines of what the
   * knobs replace are no longer the file's). */
  scenario_workload *w = &s->workload;
  if (k->layers > 0) s->line.layers = 0;
  if (k->batch > 0) s->line.batch = 0;
  w->layers = v.layers, w->batch = v.batch, w->micro_batch = v.mb;
  if (k->model) {
    replace_str(&w->model, k->model);
    s->line.model = 0;
    if (k->layers <= 0) w->layers = 0, s->line.layers = 0; /* its depth */
  }
  w->micro_batches_per_pass = v.kpp;
  w->stages = v.stages, w->replicas = v.replicas;
  if (k->seed >= 0) s->seed = (uint64_t)k->seed;
  if (k->schedule) replace_str(&w->schedule, k->schedule);
  if (k->dp_algo)
    replace_str(&w->dp_algo, k->dp_algo), s->line.dp_algo = SCENARIO_LINE_KNOB;
  if (k->runtime)
    replace_str(&w->runtime, k->runtime), s->line.runtime = SCENARIO_LINE_KNOB;
  if (k->inner_steps >= 0) s->line.inner_steps = SCENARIO_LINE_KNOB;
  if (k->fragments >= 0) s->line.fragments = SCENARIO_LINE_KNOB;
  if (k->overlap_steps >= 0) s->line.overlap_steps = SCENARIO_LINE_KNOB;
  if (k->exchange_levels >= 0) s->line.exchange_levels = SCENARIO_LINE_KNOB;
  if (k->sockets > 0)
    for (int i = 0; i < s->nsites; i++) s->sites[i].nccl_sockets = (int)k->sockets;
  apply_diloco(w, k);
  apply_layers_per_stage(w, k);
  if (k->gpu)
    for (int i = 0; i < s->nsites; i++) {
      replace_str(&s->sites[i].gpu, k->gpu);
      s->sites[i].gpu_line = 0;
    }
  if (isfinite(k->activation_gb)) s->activation_gb = k->activation_gb;
  if (isfinite(k->gradient_gb)) s->gradient_gb = k->gradient_gb;
  if (k->latency_scale != 1 || k->bandwidth_scale != 1) {
    trace_scale(s->network, k->latency_scale, k->bandwidth_scale);
    for (int i = 0; i < s->noverrides; i++) {
      s->overrides[i].latency_ms *= k->latency_scale;
      s->overrides[i].bandwidth_gbps *= k->bandwidth_scale;
    }
    s->latency_scale *= k->latency_scale;
    s->bandwidth_scale *= k->bandwidth_scale;
  }
  return ERR_OK;
}
