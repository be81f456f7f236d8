/* spec_workload: see spec_workload.h. Each check names the row it blames
 * where the value came from (an option, or the scenario file's line). */
#include "models/spec_workload.h"

#include <assert.h>
#include <stdio.h>

#include "base/names.h"
#include "models/diloco.h"
#include "models/runtime.h"
#include "traces/scenario_row.h"

/* "'x' is unknown (a, b, c)" for a workload name (row r) no list holds. */
static int unknown_name(const scenario *s, int r, const char *v, err *e) {
  char known[128];
  names_join(workload_rows[r].names, ", ", ", ", known, sizeof known);
  return err_set_field(e, r, ERR_UNKNOWN, "%s: workload.%s '%s' is unknown "
                       "(%s)", s->name, workload_rows[r].key, v, known);
}

/* Whether Megatron-LM's runtime runs schedule sc (its 1F1B) and
 * synchronises by algo (NCCL's ring all-reduce). */
static bool megatron_schedule(spec_schedule sc) {
  switch (sc) {
    case SPEC_GPIPE: return false;
    case SPEC_1F1B: return true;
  }
  return false;
}
static bool megatron_algo(spec_dp_algo algo) {
  switch (algo) {
    case SPEC_RING: return true;
    case SPEC_CENTRAL_PS:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING:
    case SPEC_HIVEMIND:
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: return false;
  }
  return false;
}

/* Under Megatron: an option (a knob, not the scenario file, whose values
 * the run states: models/unused.h) that asks for what its runtime does
 * not run is refused, naming the runtime (issue 33: --dp-algo central-ps
 * and sharded-ps gave ring's time to the bit). */
static int megatron_options(const scenario *s, const spec_workload *w,
                            err *e) {
  const scenario_workload *sw = &s->workload;
  if (s->line[WORKLOAD_schedule] == SCENARIO_LINE_KNOB &&
      !megatron_schedule(w->schedule))
    return err_set_field(e, WORKLOAD_schedule, ERR_CONFIG, "%s: --schedule "
                         "%s: runtime megatron runs 1F1B (give --schedule "
                         "1f1b or leave it out)", s->name, sw->schedule);
  if (s->line[WORKLOAD_dp_algo] == SCENARIO_LINE_KNOB &&
      !megatron_algo(w->dp_algo) && !spec_is_diloco(w))
    return err_set_field(e, WORKLOAD_dp_algo, ERR_CONFIG, "%s: --dp-algo %s: "
                         "runtime megatron all-reduces its gradients with "
                         "NCCL's ring (give --dp-algo ring or leave it out)",
                         s->name, sw->dp_algo);
  return ERR_OK; /* K: stated (measurements give it for either runtime) */
}

static int resolve_names(const scenario *s, spec_workload *w, err *e) {
  const scenario_workload *sw = &s->workload;
  w->model = spec_scenario_model(s);
  if (!w->model) {
    char where[512], known[256];
    scenario_where(s, s->line[WORKLOAD_model], "workload.model", where,
                   sizeof where);
    spec_model_list(known, sizeof known);
    return err_set_field(e, WORKLOAD_model, ERR_UNKNOWN, "%s: '%s' is unknown "
                         "(known: %s; or hf:PATH, a Hugging Face "
                         "config.json, or the model's dimensions)", where,
                         sw->model ? sw->model : "", known);
  }
  int sched = spec_schedule_parse(sw->schedule);
  int algo = spec_dp_algo_parse(sw->dp_algo);
  int rt = spec_runtime_parse(sw->runtime);
  if (sched < 0) return unknown_name(s, WORKLOAD_schedule, sw->schedule, e);
  if (algo < 0) return unknown_name(s, WORKLOAD_dp_algo, sw->dp_algo, e);
  if (rt < 0) return unknown_name(s, WORKLOAD_runtime, sw->runtime, e);
  w->schedule = (spec_schedule)sched;
  w->dp_algo = (spec_dp_algo)algo;
  w->runtime = (spec_runtime)rt;
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break; /* the workload's schedule and algorithm */
    case SPEC_RUNTIME_MEGATRON:
      /* Megatron-LM runs 1F1B and synchronises with NCCL all-reduce
       * (DiLoCo and hivemind under it are refused below); an option
       * asking otherwise is refused, the scenario file's values are stated
       * (unused.h) */
      if (!spec_dp_algo_matchmakes(w->dp_algo) && megatron_options(s, w, e))
        return e ? e->code : ERR_CONFIG;
      if (!spec_is_diloco(w) && !spec_dp_algo_matchmakes(w->dp_algo))
        w->schedule = SPEC_1F1B, w->dp_algo = SPEC_RING;
      break;
  }
  return ERR_OK;
}

/* Where row r's value came from, for a message: the option that set it
 * (line SCENARIO_LINE_KNOB), its key at its line in the file, or its key
 * with "(default)" when the file leaves it out. where names it so
 * ("worldwide: --dp-algo", "s.json:7: workload.dp_algo"); lead begins a
 * message, as jfield's do ("s.json:7: workload.dp_algo:"); name is the
 * short form for the middle of a sentence. */
typedef struct named {
  char where[320], lead[328], name[64];
  int row;
  bool knob;
} named;

static named name_of(const scenario *s, int r) {
  const workload_row *row = &workload_rows[r];
  int line = s->line[r];
  named n = {.row = r, .knob = line == SCENARIO_LINE_KNOB};
  if (n.knob) {
    snprintf(n.where, sizeof n.where, "%s: --%s", s->name, row->option);
    snprintf(n.lead, sizeof n.lead, "%s", n.where);
    snprintf(n.name, sizeof n.name, "--%s", row->option);
    return n;
  }
  char path[48];
  snprintf(path, sizeof path, "workload.%s%s", row->key,
           line > 0 ? "" : " (default)");
  scenario_where(s, line, path, n.where, sizeof n.where);
  snprintf(n.lead, sizeof n.lead, "%s:", n.where);
  snprintf(n.name, sizeof n.name, "workload.%s", row->key);
  return n;
}

/* The row a failure about a and b names: a's, unless b's alone came from
 * a knob (the value the user just gave is the one to change). */
static int blame(const named *a, const named *b) {
  return a->knob || !b->knob ? a->row : b->row;
}

/* DiLoCo's knobs (models/diloco.h's rows) against the algorithm, the
 * runtime and the layers, each named where it came from (an option, or
 * the scenario file's line). */
static int check_diloco(const scenario *s, const spec_workload *w, err *e) {
  named d[DILOCO_NROWS], A = name_of(s, WORKLOAD_dp_algo),
                         R = name_of(s, WORKLOAD_runtime);
  for (int i = 0; i < DILOCO_NROWS; i++) d[i] = name_of(s, diloco_rows[i]);
  const char *algo = workload_dp_algos[w->dp_algo];
  if (!spec_is_diloco(w)) {
    for (int i = 0; i < DILOCO_NROWS; i++)
      if (!scenario_row_is_default(s, diloco_rows[i]))
        return err_set_field(e, blame(&d[i], &A), ERR_CONFIG, "%s needs "
                             "diloco or streaming-diloco as the data-parallel "
                             "algorithm, not %s (%s)", d[i].lead, algo,
                             A.where);
    return ERR_OK;
  }
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break;
    case SPEC_RUNTIME_MEGATRON:
      if (w->stages > 1)
        return err_set_field(e, blame(&A, &R), ERR_CONFIG, "%s %s on %s "
                             "megatron needs one stage per replica (a replica "
                             "on one device, stepping Adam on its GPU; "
                             "Megatron's pipelines all-reduce every step)",
                             A.lead, algo, R.name);
      break;
  }
  for (int i = 1; !spec_dp_algo_streams(w->dp_algo) && i <= 2; i++) /* F, tau */
    if (!scenario_row_is_default(s, diloco_rows[i]))
      return err_set_field(e, blame(&d[i], &A), ERR_CONFIG, "%s needs %s "
                           "streaming-diloco (diloco exchanges the whole "
                           "model, blocking)", d[i].lead, A.name);
  diloco_plan p = diloco_plan_of(w);
  diloco_names n;
  for (int i = 0; i < 3; i++)
    n.lead[i] = d[i].lead, n.name[i] = d[i].name, n.field[i] = d[i].row,
    n.knob[i] = d[i].knob;
  return diloco_check(&p, w->layers, &n, e);
}

/* hivemind's knobs need hivemind, and hivemind a runtime that steps
 * outside a framework's blocking calls: DT-FM's (its optimizer on the
 * host, as hivemind.Optimizer's offload_optimizer) or the modern one (on
 * the GPU, hivemind.Optimizer's default); its averaging is on the host
 * under both. */
static int check_hivemind(const scenario *s, const spec_workload *w, err *e) {
  const int rows[] = {WORKLOAD_matchmaking_s, WORKLOAD_delay_averaging};
  named A = name_of(s, WORKLOAD_dp_algo), R = name_of(s, WORKLOAD_runtime);
  for (int i = 0; i < 2 && !spec_dp_algo_matchmakes(w->dp_algo); i++) {
    named k = name_of(s, rows[i]);
    if (!scenario_row_is_default(s, rows[i]))
      return err_set_field(e, blame(&k, &A), ERR_CONFIG, "%s needs hivemind "
                           "as the data-parallel algorithm, not %s (%s)",
                           k.lead, workload_dp_algos[w->dp_algo], A.where);
  }
  switch (w->runtime) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: return ERR_OK;
    case SPEC_RUNTIME_MEGATRON:
      if (!spec_dp_algo_matchmakes(w->dp_algo)) return ERR_OK;
      return err_set_field(e, blame(&A, &R), ERR_CONFIG, "%s hivemind on %s "
                           "megatron: hivemind averages on its own, outside "
                           "Megatron's calls (use --runtime modern or dtfm)",
                           A.lead, R.name);
  }
  assert(!"unknown runtime");
  return ERR_OK;
}

/* Whether runtime rt runs all of a replica's micro-batches in one pass,
 * whatever micro_batches_per_pass says (Megatron: one 1F1B schedule). */
static bool one_pass(spec_runtime rt) {
  switch (rt) {
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: return false;
    case SPEC_RUNTIME_MEGATRON: return true;
  }
  assert(!"unknown runtime");
  return false;
}

/* ZeRO (workload.zero) against the runtime and the algorithm: it shards
 * an optimizer's state on the GPU over replicas that synchronise every
 * step by a reduce-scatter and an all-gather (a ring's two halves, or
 * sharded-ps's); DT-FM steps on the host, DiLoCo's replicas step apart,
 * and central-ps reduces to one replica. */
static int check_zero(const scenario *s, const spec_workload *w, err *e) {
  if (w->given.zero < 1) return ERR_OK;
  named Z = name_of(s, WORKLOAD_zero), R = name_of(s, WORKLOAD_runtime),
        A = name_of(s, WORKLOAD_dp_algo);
  switch (runtime_of(w->runtime)->place) {
    case RUNTIME_ON_HOST:
      return err_set_field(e, blame(&Z, &R), ERR_CONFIG, "%s %d shards an "
                           "optimizer on the GPU, and %s %s steps it on the "
                           "host (modern or megatron step on the GPU)",
                           Z.lead, w->given.zero, R.name,
                           spec_runtime_name(w->runtime));
    case RUNTIME_ON_GPU: break;
  }
  bool ok = false;
  switch (w->dp_algo) {
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIER_RING: ok = true; break;
    case SPEC_CENTRAL_PS:
    case SPEC_HIVEMIND: /* averages whole tensors on the host */
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: ok = false; break;
  }
  if (!ok)
    return err_set_field(e, blame(&Z, &A), ERR_CONFIG, "%s %d shards the "
                         "optimizer over replicas that reduce-scatter and "
                         "all-gather every step (%s ring, hier-ring or "
                         "sharded-ps), not %s", Z.lead, w->given.zero,
                         A.name, spec_dp_algo_name(w->dp_algo));
  return ERR_OK;
}

/* The scenario's layers per stage (a knob checked their count and zeros)
 * against the layers resolved here, which may be the model's depth. */
static int resolve_layers_per_stage(const scenario *s, spec_workload *w,
                                    err *e) {
  const scenario_workload *sw = &s->workload;
  w->balanced = sw->balanced_layers;
  if (!sw->layers_per_stage) return ERR_OK;
  long sum = 0;
  for (int st = 0; st < w->stages; st++) sum += sw->layers_per_stage[st];
  if (sum != w->layers)
    return err_set(e, ERR_CONFIG, "%s: layers per stage: they sum to %ld, "
                   "not the %d layers", s->name, sum, w->layers);
  w->stage_layers = sw->layers_per_stage;
  return ERR_OK;
}

int spec_workload_resolve(const scenario *s, spec_workload *w, err *e) {
  const scenario_workload *sw = &s->workload;
  *w = (spec_workload){0};
  int rc = resolve_names(s, w, e);
  if (rc) return rc;
  if (sw->stages < 1 || sw->replicas < 1 || sw->micro_batch < 1 ||
      sw->batch < 1 || sw->micro_batches_per_pass < 0)
    return err_set(e, ERR_CONFIG,
                   "%s: workload.stages, replicas, micro_batch and batch must "
                   "be >= 1 (got %d, %d, %d, %d)",
                   s->name, sw->stages, sw->replicas, sw->micro_batch,
                   sw->batch);
  if ((long)sw->stages * sw->replicas != s->ndevices)
    return err_set_field(e, WORKLOAD_stages, ERR_CONFIG,
                         "%s: workload.stages x workload.replicas = %d x %d "
                         "is not the %d devices",
                         s->name, sw->stages, sw->replicas, s->ndevices);
  w->layers = sw->layers > 0 ? sw->layers : w->model->layers;
  if (w->layers < sw->stages) {
    char where[512];
    scenario_where(s, s->line[WORKLOAD_layers], "workload.layers", where,
                   sizeof where);
    return err_set_field(e, WORKLOAD_layers, ERR_CONFIG, "%s: %d%s is fewer "
                         "than the %d stages", where, w->layers,
                         sw->layers > 0 ? "" : " (the model's own depth)",
                         sw->stages);
  }
  long long per_replica = sw->batch / sw->replicas;
  long long k = sw->micro_batches_per_pass > 0 && !one_pass(w->runtime)
                    ? sw->micro_batches_per_pass
                    : per_replica / sw->micro_batch;
  /* Each factor is at most INT_MAX: D_dp m <= 2^62, and (D_dp m) K is only
   * formed once D_dp m <= B, so nothing overflows. */
  long long rm = (long long)sw->replicas * sw->micro_batch;
  long long per_pass = k >= 1 && rm <= sw->batch ? rm * k : 0;
  if (per_pass < 1 || per_pass > sw->batch || sw->batch % per_pass != 0)
    return err_set(e, ERR_CONFIG,
                   "%s: workload.batch %d is not a multiple of D_dp x m x K "
                   "= %d x %d x %lld",
                   s->name, sw->batch, sw->replicas, sw->micro_batch, k);
  w->batch = sw->batch;
  w->micro_batch = sw->micro_batch;
  w->stages = sw->stages;
  w->replicas = sw->replicas;
  w->micro_batches_per_pass = (int)k;
  w->passes = (int)(sw->batch / per_pass);
  w->recompute = sw->recompute;
  w->given = *sw;
  if ((rc = check_diloco(s, w, e)) || (rc = check_hivemind(s, w, e)) ||
      (rc = check_zero(s, w, e)))
    return rc;
  return resolve_layers_per_stage(s, w, e);
}
