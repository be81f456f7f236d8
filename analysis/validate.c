/* validate: the sample, the simulations and the verdicts.
 * Invariant: sample i is the same allocation under every network model, so
 * verdicts of different models compare the same placements; the sample is
 * a pure function of the scenario (its seed included). */
#include "analysis/validate.h"

#include <assert.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/costcmd_header.h"
#include "analysis/eval.h"
#include "analysis/sweep.h"
#include "base/mem.h"
#include "models/cost.h"
#include "models/partition.h"
#include "models/spec_workload.h"
#include "schedules/schedule.h"
#include "sim/place.h"

struct validate_report {
  char *scenario;
  int n;                       /* samples */
  char (*kind)[24];            /* [n] */
  alloc **a;                   /* [n], owned */
  int nv;
  validate_verdict v[VALIDATE_NETWORKS];
  db_result *rows;             /* [nv * n] */
  double *plugged;             /* [n] the cost command's predictions, or NULL */
  char **keys;                 /* [nv * n] */
};

/* dst = src with k random transpositions of devices. */
static alloc *perturb(const alloc *src, int k, gsl_rng *rng) {
  alloc *a = alloc_copy(src);
  int n = src->replicas * src->stages;
  for (int t = 0; t < k; t++) {
    int i = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
    int j = (int)gsl_rng_uniform_int(rng, (unsigned long)n - 1);
    if (j >= i) j++;
    int tmp = a->device[i];
    a->device[i] = a->device[j], a->device[j] = tmp;
  }
  return a;
}

static void add(validate_report *r, const char *kind, alloc *a) {
  snprintf(r->kind[r->n], sizeof r->kind[r->n], "%s", kind);
  r->a[r->n++] = a;
}

/* sim_place's placement of method, the search reporting to o->searching. */
static alloc *drawn(const scenario *s, const cost_ctx *c, const char *method,
                    const validate_opts *o, err *e) {
  search_opts so;
  search_opts_default(&so);
  so.seed = s->seed;
  if (!schedule_method_is_fixed(method))
    so.progress = o->searching, so.progress_ctx = o->progress_ctx;
  return sim_place_as(s, c, method, &so, NULL, e);
}

/* Fixed placements, the schedulers' best (sim: judged by simulation under
 * netem, whatever model is being validated, so that every model sees the
 * same sample), then perturbations of the best-scored so far and random
 * permutations, alternating. */
static int draw_sample(validate_report *r, const scenario *s,
                       const cost_ctx *c, const validate_opts *o, int want,
                       err *e) {
  static const schedule_method_id named[] = {
      SCHEDULE_DTFM_IDENTITY, SCHEDULE_MEGATRON, SCHEDULE_GREEDY,
      SCHEDULE_GCMA, SCHEDULE_SIM};
  if (o->include) add(r, "alloc", alloc_copy(o->include));
  for (size_t k = 0; k < sizeof named / sizeof *named && r->n < want; k++) {
    const char *method = schedule_method_name(named[k]);
    const alloc *had = o->placed ? o->placed[named[k]] : NULL;
    alloc *a = had ? alloc_copy(had) : drawn(s, c, method, o, e);
    if (!a) return e ? e->code : ERR_CONFIG;
    add(r, method, a);
  }
  int best = 0;
  for (int i = 1; i < r->n; i++)
    if (cost_alloc(c, r->a[i], NULL) < cost_alloc(c, r->a[best], NULL))
      best = i;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, s->seed);
  for (int t = 0; r->n < want; t++) {
    char kind[24];
    if (t % 2 == 0) {
      int k = 1 + (t / 2) % 8;
      snprintf(kind, sizeof kind, "perturbed-%d", k);
      add(r, kind, perturb(r->a[best], k, rng));
    } else {
      uint64_t seed = gsl_rng_get(rng);
      add(r, schedule_method_name(SCHEDULE_RANDOM), alloc_random(s->workload.replicas, s->workload.stages,
                                    seed));
    }
  }
  gsl_rng_free(rng);
  return ERR_OK;
}

static validate_model model_stats(const double *x, const double *sim,
                                  size_t n) {
  return (validate_model){.spearman = stats_spearman(x, sim, n),
                          .kendall = stats_kendall(x, sim, n),
                          .mape = stats_mape(x, sim, n),
                          .regret = stats_regret(x, sim, n)};
}

static void verdict(validate_report *r, int v) {
  double *score = mem_alloc((size_t)r->n * sizeof *score);
  double *pred = mem_alloc((size_t)r->n * sizeof *pred);
  double *sim = mem_alloc((size_t)r->n * sizeof *sim);
  for (int i = 0; i < r->n; i++) {
    const db_result *row = &r->rows[v * r->n + i];
    score[i] = row->score_s, pred[i] = row->predicted_iteration_s;
    sim[i] = row->iteration_s;
  }
  validate_verdict *d = &r->v[v];
  size_t n = (size_t)r->n;
  d->samples = n;
  d->spearman = stats_spearman(score, sim, n);
  d->kendall = stats_kendall(score, sim, n);
  d->mape = stats_mape(pred, sim, n);
  d->regret = stats_regret(score, sim, n);
  d->pairs = n * (n - 1) / 2;
  d->discordant = stats_discordant(score, sim, n, d->worst, VALIDATE_WORST);
  d->nworst = d->discordant < VALIDATE_WORST ? d->discordant : VALIDATE_WORST;
  d->score_model = model_stats(score, sim, n);
  d->predictor = model_stats(pred, sim, n);
  d->has_cost_cmd = r->plugged != NULL;
  if (r->plugged) d->cost_cmd = model_stats(r->plugged, sim, n);
  free(score), free(pred), free(sim);
}

/* The canonical key of a validation point. */
static char *point_key(const scenario *s, const db_result *row,
                       const char *cost_cmd) {
  size_t len = strlen(row->alloc) + strlen(s->name) + 512 +
               (cost_cmd ? strlen(cost_cmd) + 16 : 0);
  char *k = mem_alloc(len);
  snprintf(k, len,
           "validate scenario=%s network=%s seed=%lld layers=%lld "
           "batch=%lld micro_batch=%lld micro_batches_per_pass=%lld "
           "schedule=%s dp_algo=%s window_bytes=%lld activation_gb=%.17g "
           "gradient_gb=%.17g gpu=%s alloc=%s",
           s->name, row->network_model, (long long)row->seed,
           (long long)row->layers, (long long)row->batch,
           (long long)row->micro_batch,
           (long long)row->micro_batches_per_pass, row->schedule,
           row->dp_algo, (long long)row->window_bytes, row->activation_gb,
           row->gradient_gb, row->gpu, row->alloc);
  /* a layer split other than the even one, only then: keys stay as they
   * were for every run without it */
  const scenario_workload *w = &s->workload;
  if (w->balanced_layers) snprintf(k + strlen(k), len - strlen(k),
                                   " layers_per_stage=balanced");
  for (int st = 0; w->layers_per_stage && st < w->stages; st++) {
    k = mem_realloc(k, len += 16);
    snprintf(k + strlen(k), len - strlen(k), "%s%d",
             st ? "," : " layers_per_stage=", w->layers_per_stage[st]);
  }
  if (cost_cmd) snprintf(k + strlen(k), len - strlen(k), " cost_cmd=%s",
                         cost_cmd);
  return k;
}

/* The row o knows of a under model m, or NULL. */
static const db_result *known_row(const validate_opts *o, const alloc *a,
                                  transport_model m) {
  for (int k = 0; k < o->nknown; k++)
    if (alloc_equal(o->known[k].a, a)) return &o->known[k].rows[m];
  return NULL;
}

/* A copy of a known row's figures into row (sweep_pack's fields: what
 * eval_alloc fills), the way a worker's row reaches a sweep. */
static int copy_row(const db_result *from, db_result *row, err *e) {
  size_t len;
  err none = {0};
  char *buf = sweep_pack(ERR_OK, &none, from, &len);
  int status = ERR_OK;
  bool ok = sweep_unpack(buf, len, &status, &none, row);
  free(buf);
  assert(ok && status == ERR_OK); /* our own packing */
  return ok ? ERR_OK : err_set(e, ERR_CONFIG, "a known row did not copy");
}

static int simulate_all(validate_report *r, const scenario *s,
                        const cost_ctx *c, const validate_opts *o, err *e) {
  int done = 0, total = r->nv * r->n;
  for (int v = 0; v < r->nv; v++)
    for (int i = 0; i < r->n; i++) {
      db_result *row = &r->rows[v * r->n + i];
      transport_options t = o->transport;
      t.model = r->v[v].network;
      const db_result *known = known_row(o, r->a[i], t.model);
      int rc = known ? copy_row(known, row, e)
                     : eval_alloc(s, c, r->a[i], &t, row, e);
      if (rc) return rc;
      row->network_model = transport_model_name(r->v[v].network);
      r->keys[v * r->n + i] = point_key(s, row, o->cost_cmd);
      if (r->plugged) row->cost_cmd_s = r->plugged[i];
      sweep_label_row(row, &(sweep_label){
                               .study = "validate", .scenario = r->scenario,
                               .method = r->kind[i],
                               .network_model = row->network_model,
                               .key = r->keys[v * r->n + i],
                               .bandwidth_scale = 1, .latency_scale = 1});
      if (o->progress) o->progress(o->progress_ctx, ++done, total);
    }
  return ERR_OK;
}

/* The layers per stage of every sample (the workload's, or balanced for
 * each allocation) into l[i] (malloc'ed arrays). */
static int sample_layers(const validate_report *r, const scenario *s,
                         int **l, err *e) {
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  int rc = spec_workload_resolve(s, &w, e);
  if (rc == ERR_OK) rc = spec_device_gpus(s, gpu, e);
  for (int i = 0; rc == ERR_OK && i < r->n; i++) {
    l[i] = mem_alloc((size_t)w.stages * sizeof *l[i]);
    spec_workload wi = w;
    rc = partition_apply(&wi, s, gpu, r->a[i], l[i], e);
    for (int st = 0; rc == ERR_OK && st < w.stages; st++)
      l[i][st] = spec_stage_layers(&wi, st);
  }
  free(gpu);
  return rc;
}

/* Every sample scored by the cost command in one pipelined batch. */
static int score_plugged(validate_report *r, const scenario *s,
                         const cost_ctx *c, const validate_opts *o, err *e) {
  int **l = mem_calloc((size_t)r->n, sizeof *l);
  costcmd *cc = NULL;
  r->plugged = mem_alloc((size_t)r->n * sizeof *r->plugged);
  int rc = sample_layers(r, s, l, e);
  if (rc == ERR_OK &&
      !(cc = costcmd_open(s, c, o->cost_cmd, r->v[0].network,
                          o->cost_timeout_s, e)))
    rc = e ? e->code : ERR_IO;
  if (rc == ERR_OK)
    rc = costcmd_score(cc, r->n, (const alloc *const *)r->a,
                       (const int *const *)l, r->plugged, e);
  if (rc == ERR_OK) rc = costcmd_close(cc, e);
  costcmd_free(cc);
  for (int i = 0; i < r->n; i++) free(l[i]);
  free(l);
  return rc;
}

validate_report *validate_run(const scenario *s, const validate_opts *o,
                              err *e) {
  int want = o->samples >= 2 ? o->samples
                             : validate_default_samples(s->ndevices);
  validate_report *r = mem_calloc(1, sizeof *r);
  r->scenario = mem_strdup(s->name);
  r->kind = mem_calloc((size_t)want, sizeof *r->kind);
  r->a = mem_calloc((size_t)want, sizeof *r->a);
  for (int m = 0; m < VALIDATE_NETWORKS; m++)
    if (o->networks & (1u << m)) r->v[r->nv++].network = (transport_model)m;
  cost_ctx *c = cost_ctx_from_scenario(s, e);
  int rc = c ? draw_sample(r, s, c, o, want, e)
             : (e ? e->code : ERR_CONFIG);
  if (rc == ERR_OK && o->cost_cmd) rc = score_plugged(r, s, c, o, e);
  if (rc == ERR_OK) {
    r->rows = mem_calloc((size_t)(r->nv * r->n), sizeof *r->rows);
    r->keys = mem_calloc((size_t)(r->nv * r->n), sizeof *r->keys);
    for (int k = 0; k < r->nv * r->n; k++) db_result_init(&r->rows[k]);
    rc = simulate_all(r, s, c, o, e);
  }
  cost_ctx_free(c);
  if (rc) {
    validate_report_free(r);
    return NULL;
  }
  for (int v = 0; v < r->nv; v++) verdict(r, v);
  return r;
}

void validate_report_free(validate_report *r) {
  if (!r) return;
  for (int i = 0; i < r->n; i++) alloc_free(r->a[i]);
  for (int k = 0; r->rows && k < r->nv * r->n; k++) {
    db_result_clear(&r->rows[k]);
    free(r->keys[k]);
  }
  free(r->rows), free(r->keys), free(r->a), free(r->kind), free(r->plugged);
  free(r->scenario);
  free(r);
}

int validate_default_samples(int ndevices) {
  if (ndevices <= VALIDATE_FULL_DEVICES) return VALIDATE_DEFAULT_SAMPLES;
  long n = (long)VALIDATE_DEFAULT_SAMPLES * VALIDATE_FULL_DEVICES / ndevices;
  return n < 2 ? 2 : (int)n;
}

int validate_nsamples(const validate_report *r) { return r->n; }
int validate_nverdicts(const validate_report *r) { return r->nv; }

const validate_verdict *validate_verdict_at(const validate_report *r, int v) {
  return &r->v[v];
}

const char *validate_kind(const validate_report *r, int i) {
  return r->kind[i];
}

const db_result *validate_row(const validate_report *r, int v, int i) {
  return &r->rows[v * r->n + i];
}

double validate_cost_cmd_s(const validate_report *r, int i) {
  return r->plugged ? r->plugged[i] : NAN;
}

int validate_store_rows(db *d, int64_t run, const void *ctx, err *e) {
  const validate_report *r = ctx;
  for (int k = 0; k < r->nv * r->n; k++)
    if (db_result_put(d, run, &r->rows[k], e) < 0) return e ? e->code : ERR_DB;
  return ERR_OK;
}

int validate_store(db *d, int64_t run, const validate_report *r, err *e) {
  int rc = db_begin(d, e);
  if (rc == ERR_OK) rc = validate_store_rows(d, run, r, e);
  int rc2 = rc == ERR_OK ? db_commit(d, e) : ERR_OK;
  return rc ? rc : rc2;
}
