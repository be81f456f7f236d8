/* study: see study.h.
 * Invariant: every row is stored as the sweep point (o->name, knobs,
 * method, network) would be, with its key and identity, so the database
 * holds what `geodes sweep` would compute for it; no transaction is held
 * while a placement is searched or simulated. */
#include "analysis/study.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/eval.h"
#include "analysis/sweep.h"
#include "base/builtin.h"
#include "base/mem.h"
#include "models/alloc.h"
#include "models/cost.h"
#include "models/params.h"
#include "models/spec.h"
#include "schedules/gcma.h"
#include "schedules/schedule.h"
#include "sim/place.h"

/* The placements of the table, in its order. */
static const schedule_method_id METHODS[] = {
    SCHEDULE_DTFM_IDENTITY, SCHEDULE_MEGATRON, SCHEDULE_RANDOM,
    SCHEDULE_GREEDY,        SCHEDULE_GCMA,     SCHEDULE_SIM};
#define NMETHODS ((int)(sizeof METHODS / sizeof *METHODS))

/* A placement kept for the validation (validate_known): one not searched
 * per model, its rows under each model as the table got them. */
typedef struct kept {
  alloc *a;
  db_result rows[TRANSPORT_NMODELS];
} kept;

/* What the rows of one study share (content: the scenario's hash as
 * loaded, before the knobs). */
typedef struct study {
  const study_opts *o;
  const cost_ctx *c;
  db *d;
  int64_t run;
  uint64_t content, data, prices;
  long steps; /* of the phase, for the progress hook */
  kept kept[NMETHODS];
  int nkept;
  const alloc *placed[SCHEDULE_NMETHODS]; /* the kept ones' placements */
  gcma_memo *memo; /* gcma's best partitions, which sim starts from
                      under each model (the same c, objective, options) */
} study;

int study_check(const scenario *s, err *e) {
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  int rc = spec_device_gpus(s, gpu, e);
  free(gpu);
  return rc;
}

static transport_options transport_of(const study_opts *o,
                                      transport_model net) {
  transport_options t = o->transport;
  t.model = net;
  return t;
}

/* The sweep point of (method, network) under the knobs of this study, so
 * its key is the one `geodes sweep` gives the same point. */
static sweep_point point_of(const study *st, const char *method,
                            const char *network) {
  return (sweep_point){
      .scenario = st->o->name, .method = method, .network = network,
      .knobs = *st->o->knobs,
      .iterations = -1, .checkpoint_every = -1,
      .scenario_hash = st->content, .data_hash = st->data,
      .prices_hash = st->prices};
}

/* Stores a search's convergence under curve, in one transaction. */
static int store_curve(const study *st, const char *curve,
                       const search_result *r, err *e) {
  int rc = db_begin(st->d, e);
  for (long i = 0; rc == ERR_OK && i < r->candidates; i++)
    rc = db_convergence_put(st->d, st->run, curve, i + 1, r->convergence[i],
                            e);
  return rc == ERR_OK ? db_commit(st->d, e) : rc;
}

/* A search's progress, as the study's phase "search candidates". */
static void searching(void *ctx, long done, long total, double best_s) {
  (void)best_s;
  const study_hooks *h = ctx;
  h->progress(h->ctx, "search candidates", done, total);
}

/* The placement of method; a search's convergence goes to the database
 * under the method's name (a fixed placement has none worth a curve). `sim`
 * searches by simulation under network model net, and its curve is named
 * "sim/NET"; it starts from GCMA's best partitions (st->memo) and takes the
 * kept placements' times under net as their rows have them (the same
 * options: eval_alloc's simulation is sim_run under so). */
static alloc *place(const study *st, const char *method, transport_model net,
                    err *e) {
  const scenario *s = st->o->s;
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  o.memo = st->memo;
  if (st->o->hooks.progress && !schedule_method_is_fixed(method))
    o.progress = searching, o.progress_ctx = (void *)&st->o->hooks;
  sim_options so = sim_options_default();
  so.transport = transport_of(st->o, net);
  so.seed = s->seed;
  sim_place_known known[NMETHODS]; /* sim's starts include kept ones */
  for (int k = 0; k < st->nkept; k++)
    known[k] = (sim_place_known){
        .a = st->kept[k].a, .iteration_s = st->kept[k].rows[net].iteration_s};
  search_result *r = sim_place_search_known(s, st->c, method, &o, &so, known,
                                            st->nkept, e);
  if (!r) return NULL;
  bool per_net = schedule_method_needs_objective(method);
  char curve[64];
  snprintf(curve, sizeof curve, "%s%s%s", method, per_net ? "/" : "",
           per_net ? transport_model_name(net) : "");
  int rc = schedule_method_is_fixed(method) ? ERR_OK
                                             : store_curve(st, curve, r, e);
  alloc *a = r->best;
  r->best = NULL;
  search_result_free(r);
  return rc == ERR_OK ? a : (alloc_free(a), NULL);
}

/* Simulates a under net into row and stores it as its sweep point. */
static int store_row(const study *st, const alloc *a, const char *method,
                     transport_model net, db_result *row, err *e) {
  transport_options t = transport_of(st->o, net);
  int rc = eval_alloc(st->o->s, st->c, a, &t, row, e);
  if (rc) return rc;
  sweep_point p = point_of(st, method, transport_model_name(net));
  sweep_key k = {0};
  sweep_label l = sweep_point_label(&p, &k);
  sweep_label_row(row, &l);
  rc = db_begin(st->d, e);
  if (rc == ERR_OK && db_result_put(st->d, st->run, row, e) < 0) rc = e->code;
  if (rc == ERR_OK) rc = db_commit(st->d, e);
  row->key = row->identity = NULL; /* k's, freed here */
  free(k.key);
  return rc;
}

/* One more step of a phase of total, to the progress hook. */
static void step(study *st, const char *phase, long total) {
  const study_hooks *h = &st->o->hooks;
  if (h->progress) h->progress(h->ctx, phase, ++st->steps, total);
}

/* One placement method under every network model: placed (once, or per
 * model for a search judged by simulation: the sweep point (sim, NET)
 * means exactly that), simulated, stored, handed to the hook. */
static int one_method(study *st, schedule_method_id id, err *e) {
  const char *method = schedule_method_name(id);
  bool per_net = schedule_method_needs_objective(method);
  alloc *a = NULL;
  db_result rows[TRANSPORT_NMODELS];
  for (int n = 0; n < TRANSPORT_NMODELS; n++) db_result_init(&rows[n]);
  int rc = ERR_OK;
  for (int n = 0; n < TRANSPORT_NMODELS && rc == ERR_OK; n++) {
    if (!a || per_net) {
      alloc_free(a);
      if (!(a = place(st, method, (transport_model)n, e))) {
        rc = e->code;
        break;
      }
    }
    rc = store_row(st, a, method, (transport_model)n, &rows[n], e);
    if (rc == ERR_OK) step(st, "placements", NMETHODS * TRANSPORT_NMODELS);
  }
  const study_hooks *h = &st->o->hooks;
  if (rc == ERR_OK && h->placement) h->placement(h->ctx, method, rows);
  if (rc == ERR_OK && !per_net) { /* the validation may draw it again */
    kept *k = &st->kept[st->nkept++];
    st->placed[id] = k->a = a, a = NULL;
    memcpy(k->rows, rows, sizeof rows);
  } else {
    for (int n = 0; n < TRANSPORT_NMODELS; n++) db_result_clear(&rows[n]);
  }
  alloc_free(a);
  return rc;
}

/* Placements x network models: simulated, stored, reported. */
static int placements(study *st, err *e) {
  const study_opts *o = st->o;
  const study_hooks *h = &o->hooks;
  scenario *raw = scenario_load(o->name, e);
  if (!raw) return e->code;
  st->content = scenario_hash(raw);
  st->prices = scenario_prices_hash(raw);
  st->data = builtin_hash() ^ params_hash(); /* and any --params */
  scenario_free(raw);
  cost_ctx *c = cost_ctx_from_scenario(o->s, e);
  if (!(st->c = c)) return e->code;
  if (h->table) h->table(h->ctx);
  int rc = ERR_OK;
  st->steps = 0;
  st->memo = gcma_memo_new();
  for (int m = 0; m < NMETHODS && rc == ERR_OK; m++)
    rc = one_method(st, METHODS[m], e);
  gcma_memo_free(st->memo); /* its key names c */
  st->memo = NULL;
  cost_ctx_free(c);
  st->c = NULL;
  if (rc == ERR_OK && h->table_done) h->table_done(h->ctx);
  return rc;
}

/* validate's progress, as the study's phase "validation simulations". */
static void validating(void *ctx, int done, int total) {
  const study_hooks *h = ctx;
  h->progress(h->ctx, "validation simulations", done, total);
}

/* The validation of the cost model; a sample drawn by a kept method takes
 * its placement instead of a search, and its rows instead of simulations
 * (the same placement and rows: validate_opts.placed, validate_known). */
static int validation(const study *st, err *e) {
  const study_opts *o = st->o;
  validate_known known[NMETHODS];
  for (int k = 0; k < st->nkept; k++)
    known[k] = (validate_known){.a = st->kept[k].a,
                                .rows = st->kept[k].rows};
  validate_opts vo = {.samples = o->samples,
                      .networks = VALIDATE_ALL_NETWORKS,
                      .transport = transport_of(o, TRANSPORT_MODEL_DEFAULT),
                      .known = known, .nknown = st->nkept,
                      .placed = st->placed,
                      .progress = o->hooks.progress ? validating : NULL,
                      .searching = o->hooks.progress ? searching : NULL,
                      .progress_ctx = (void *)&o->hooks};
  validate_report *r = validate_run(o->s, &vo, e);
  if (!r) return e->code;
  if (o->hooks.validated) o->hooks.validated(o->hooks.ctx, r);
  int rc = validate_store(st->d, st->run, r, e);
  validate_report_free(r);
  return rc;
}

int study_run(const study_opts *o, err *e) {
  study st = {.o = o};
  if (!(st.d = db_open(o->db_path, e))) return e->code;
  db_run run = o->run;
  run.scenario = o->s->name, run.seed = (int64_t)o->s->seed;
  st.run = db_run_begin(st.d, &run, e);
  int rc = st.run < 0 ? (int)st.run : placements(&st, e);
  if (rc == ERR_OK) rc = validation(&st, e);
  for (int k = 0; k < st.nkept; k++) {
    alloc_free(st.kept[k].a);
    for (int n = 0; n < TRANSPORT_NMODELS; n++)
      db_result_clear(&st.kept[k].rows[n]);
  }
  if (st.run > 0) db_run_end(st.d, st.run, rc ? "error" : "ok", NULL);
  db_close(st.d);
  return rc;
}
