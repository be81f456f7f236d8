/* objective: see objective.h. The memory check of a fixed split is a table
 * lookup per tasklet (each stage's need against each device's memory);
 * a balanced split is computed per allocation and fits by construction
 * when partition_balanced finds one. */
#include "schedules/objective.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/bill.h"
#include "models/partition.h"
#include "models/predict.h"
#include "base/mem.h"
#include "models/spec_workload.h"

struct objective {
  const scenario *s;       /* borrowed */
  const cost_ctx *c;       /* borrowed */
  transport_options t;
  bool balanced;
  spec_workload w;         /* resolved; stage_layers as the scenario says */
  const spec_gpu **gpu;    /* [ndevices], borrowed from spec's table */
  int *layers;             /* [D_pp] scratch: the candidate's split */
  double *need;            /* [D_pp] bytes per stage of the fixed split */
  bool always_fits;        /* fixed split, every device holds every stage */
  cost_scratch *scratch;
  int *canon, *tmp, *order; /* canonical(): [n], [n], [D_pp] */
  objective_alloc_fn fn;   /* objective_custom's scorer */
  objective_allocs_fn many; /* and its batch scorer, or NULL */
  objective_submit_fn submit; /* or its stream, or NULL */
  objective_collect_fn collect;
  void *fn_ctx;
  /* The stream's batch: partitions submitted (pm), for each which of its
   * two allocations went to `submit` (bit 0: as realised, bit 1:
   * reversed; the others do not fit), allocations submitted (nsent). */
  int pm, nsent;
  size_t pcap, vcap;
  unsigned char *psent;
  double *v;
  long refused;
  bool cost;               /* objective_price: score in USD per sample */
  double usd_per_s;        /* every device's GPU-hours per second */
  double budget;           /* USD per hour; 0: none */
};

const char *const objective_kind_names[] = {
#define OBJECTIVE_KIND_NAME(id, name) name,
    OBJECTIVE_KIND_MAP(OBJECTIVE_KIND_NAME)
#undef OBJECTIVE_KIND_NAME
    NULL};

bool objective_kind_dollars(objective_kind kind) {
  switch (kind) {
    case OBJECTIVE_USD_PER_SAMPLE:
    case OBJECTIVE_SAMPLES_PER_USD: return true;
    case OBJECTIVE_DTFM:
    case OBJECTIVE_PREDICTED:
    case OBJECTIVE_COST_CMD: return false;
  }
  return false;
}

double objective_kind_value(objective_kind kind, double score) {
  switch (kind) {
    case OBJECTIVE_SAMPLES_PER_USD: return 1 / score;
    case OBJECTIVE_DTFM:
    case OBJECTIVE_PREDICTED:
    case OBJECTIVE_COST_CMD:
    case OBJECTIVE_USD_PER_SAMPLE: return score;
  }
  return score;
}

const char *objective_kind_unit(objective_kind kind) {
  switch (kind) {
    case OBJECTIVE_USD_PER_SAMPLE: return "USD per sample";
    case OBJECTIVE_SAMPLES_PER_USD: return "samples per USD";
    case OBJECTIVE_DTFM:
    case OBJECTIVE_PREDICTED:
    case OBJECTIVE_COST_CMD: break;
  }
  return "s";
}

objective *objective_new(const scenario *s, const cost_ctx *c,
                         const transport_options *t, bool balanced, err *e) {
  objective *o = mem_calloc(1, sizeof *o);
  o->s = s, o->c = c, o->balanced = balanced;
  o->t = t ? *t : transport_options_default();
  o->gpu = mem_calloc((size_t)s->ndevices, sizeof *o->gpu);
  if (spec_workload_resolve(s, &o->w, e) || spec_device_gpus(s, o->gpu, e)) {
    objective_free(o);
    return NULL;
  }
  o->balanced = balanced = balanced || o->w.balanced;
  int n = o->w.stages;
  o->layers = mem_alloc((size_t)n * sizeof *o->layers);
  o->need = mem_alloc((size_t)n * sizeof *o->need);
  double most = 0, least = INFINITY;
  for (int st = 0; st < n; st++) {
    o->need[st] = spec_stage_memory_bytes(&o->w, st);
    most = fmax(most, o->need[st]);
  }
  for (int d = 0; d < s->ndevices; d++)
    least = fmin(least, spec_device_memory_bytes(s, d, o->gpu[d]));
  o->always_fits = !balanced && most <= least;
  o->scratch = cost_scratch_new(o->w.replicas, o->w.stages);
  o->canon = mem_alloc((size_t)s->ndevices * sizeof *o->canon);
  o->tmp = mem_alloc((size_t)s->ndevices * sizeof *o->tmp);
  o->order = mem_alloc((size_t)n * sizeof *o->order);
  return o;
}

void objective_free(objective *o) {
  if (!o) return;
  cost_scratch_free(o->scratch);
  free(o->gpu), free(o->layers), free(o->need);
  free(o->canon), free(o->tmp), free(o->order);
  free(o->psent), free(o->v);
  free(o);
}

long objective_refused(const objective *o) { return o->refused; }

int objective_layers(objective *o, const alloc *a, int *layers, err *e) {
  if (o->balanced) return partition_balanced(&o->w, o->s, o->gpu, a, layers, e);
  for (int st = 0; st < o->w.stages; st++)
    layers[st] = spec_stage_layers(&o->w, st);
  return ERR_OK;
}

/* Fills o->layers for a; false (and counted) when a does not fit. */
static bool split_fits(objective *o, const alloc *a) {
  bool ok = objective_layers(o, a, o->layers, NULL) == ERR_OK;
  for (int st = 0; ok && !o->always_fits && !o->balanced && st < o->w.stages;
       st++)
    for (int r = 0; ok && r < o->w.replicas; r++) {
      int d = alloc_at(a, r, st);
      ok = o->need[st] <= spec_device_memory_bytes(o->s, d, o->gpu[d]);
    }
  if (!ok) o->refused++;
  return ok;
}

bool objective_fits(objective *o, const alloc *a) { return split_fits(o, a); }

/* inner on a with its split, or +inf when it does not fit. */
static double judge(objective *o, const alloc *a, objective_alloc_fn inner,
                    void *ctx, err *e) {
  if (!split_fits(o, a)) return INFINITY;
  spec_workload w = o->w;
  w.stage_layers = o->layers;
  return inner(ctx, a, &w, e);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* groups in a form that depends on the partition alone: devices in index
 * order inside each group, groups in the order of their first device (the
 * TSP's ties, among them every path and its reverse, are then broken the
 * same way whatever labels a search gave the groups). */
static void canonical(const objective *o, const int *groups, int *out) {
  int k = o->w.replicas, n = o->w.stages;
  memcpy(o->tmp, groups, (size_t)k * n * sizeof *out);
  for (int g = 0; g < n; g++) qsort(o->tmp + g * k, (size_t)k, sizeof *out, cmp_int);
  for (int g = 0; g < n; g++) o->order[g] = g;
  for (int i = 1; i < n; i++) /* insertion sort by first device */
    for (int j = i; j > 0 && o->tmp[o->order[j] * k] < o->tmp[o->order[j - 1] * k]; j--) {
      int t = o->order[j];
      o->order[j] = o->order[j - 1], o->order[j - 1] = t;
    }
  for (int g = 0; g < n; g++)
    memcpy(out + g * k, o->tmp + o->order[g] * k, (size_t)k * sizeof *out);
}

/* a with its stages in the reverse order: the same pipelines, the other
 * end first (the embeddings and the LM head change sides). */
static alloc *reversed(const alloc *a) {
  alloc *b = alloc_new(a->replicas, a->stages);
  for (int r = 0; r < a->replicas; r++)
    for (int st = 0; st < a->stages; st++)
      b->device[r * a->stages + st] = alloc_at(a, r, a->stages - 1 - st);
  return b;
}

/* A partition judged as the better of its realised allocation and that
 * allocation reversed (*best, when not NULL, receives it; else freed). */
static double judge_groups_as(objective *o, const int *groups,
                              objective_alloc_fn inner, void *ctx,
                              alloc **best, err *e) {
  canonical(o, groups, o->canon);
  alloc *a = cost_realise(o->c, o->canon, o->scratch);
  alloc *b = reversed(a);
  double va = judge(o, a, inner, ctx, e);
  double vb = isnan(va) ? NAN : judge(o, b, inner, ctx, e);
  bool keep_b = vb < va;
  alloc *kept = keep_b ? b : a, *other = keep_b ? a : b;
  alloc_free(other);
  if (best)
    *best = kept;
  else
    alloc_free(kept);
  return isnan(vb) ? NAN : fmin(va, vb);
}

static double judge_groups(objective *o, const int *groups,
                           objective_alloc_fn inner, void *ctx, err *e) {
  return judge_groups_as(o, groups, inner, ctx, NULL, e);
}

static double predicted(void *ctx, const alloc *a, const spec_workload *w,
                        err *e) {
  const objective *o = ctx;
  predict_result r;
  int rc = predict_iteration_with(w, o->s, o->gpu, a, &o->t, &r);
  if (rc) {
    err_set(e, rc, "%s: the predictor cannot judge this allocation",
            o->s->name);
    return NAN;
  }
  double t = r.iteration_s;
  if (!o->cost && !(o->budget > 0)) return t;
  double egress = bill_egress_usd(o->s, w, a, NULL); /* unpriced pairs: 0 */
  if (o->budget > 0 && (o->usd_per_s + egress / t) * 3600 > o->budget)
    return INFINITY;
  return o->cost ? (o->usd_per_s * t + egress) / w->batch : t;
}

void objective_price(objective *o, bool cost, double usd_per_s,
                     double max_usd_per_hour) {
  o->cost = cost, o->usd_per_s = usd_per_s, o->budget = max_usd_per_hour;
}

int objective_within_budget(const objective *o, double best,
                            const char *method, err *e) {
  if (!isinf(best)) return ERR_OK;
  return err_set(e, ERR_CONFIG, "%s: no placement by %s within $%g per hour: "
                 "the devices cost $%.4g per hour before any egress",
                 o->s->name, method, o->budget,
                 bill_compute_usd_per_s(o->s, NULL, 0, NULL) * 3600);
}

int objective_of_kind(objective *o, objective_kind kind,
                      double max_usd_per_hour, search_objective *obj,
                      err *e) {
  double usd_per_s = bill_compute_usd_per_s(o->s, NULL, 0, NULL);
  switch (kind) {
    case OBJECTIVE_DTFM: *obj = objective_dtfm(o); return ERR_OK;
    case OBJECTIVE_PREDICTED:
      objective_price(o, false, usd_per_s, max_usd_per_hour);
      *obj = objective_predicted(o);
      return ERR_OK;
    case OBJECTIVE_USD_PER_SAMPLE:
    case OBJECTIVE_SAMPLES_PER_USD:
      objective_price(o, true, usd_per_s, max_usd_per_hour);
      *obj = objective_predicted(o);
      obj->name = objective_kind_names[kind];
      return ERR_OK;
    case OBJECTIVE_COST_CMD: break;
  }
  return err_set(e, ERR_CONFIG, "the objective %s is the caller's model",
                 objective_kind_names[kind]);
}

static double predicted_alloc(void *ctx, const alloc *a, err *e) {
  return judge(ctx, a, predicted, ctx, e);
}

static double predicted_groups(void *ctx, const int *groups, err *e) {
  return judge_groups(ctx, groups, predicted, ctx, e);
}

static alloc *predicted_realise(void *ctx, const int *groups) {
  alloc *a = NULL;
  judge_groups_as(ctx, groups, predicted, ctx, &a, NULL);
  return a;
}

search_objective objective_predicted(objective *o) {
  return (search_objective){.name = "predicted", .partition = predicted_groups,
                            .alloc = predicted_alloc,
                            .realise = predicted_realise, .ctx = o};
}

static double custom_alloc(void *ctx, const alloc *a, err *e) {
  objective *o = ctx;
  return judge(o, a, o->fn, o->fn_ctx, e);
}

static double custom_groups(void *ctx, const int *groups, err *e) {
  objective *o = ctx;
  return judge_groups(o, groups, o->fn, o->fn_ctx, e);
}

static alloc *custom_realise(void *ctx, const int *groups) {
  objective *o = ctx;
  alloc *a = NULL;
  judge_groups_as(o, groups, o->fn, o->fn_ctx, &a, NULL);
  return a;
}

/* custom_groups's allocations of partition groups -- as realised, then
 * reversed -- handed to o->submit when they fit, in that order. */
static int custom_submit(void *ctx, const int *groups, err *e) {
  objective *o = ctx;
  canonical(o, groups, o->canon);
  alloc *a[2];
  a[0] = cost_realise(o->c, o->canon, o->scratch);
  a[1] = reversed(a[0]);
  mem_grow((void **)&o->psent, &o->pcap, (size_t)o->pm + 1, sizeof *o->psent);
  unsigned char sent = 0;
  int rc = ERR_OK;
  for (int j = 0; j < 2 && rc == ERR_OK; j++) {
    if (!split_fits(o, a[j])) continue;
    sent |= (unsigned char)(1u << j);
    o->nsent++;
    rc = o->submit(o->fn_ctx, a[j], o->layers, e);
  }
  o->psent[o->pm++] = sent;
  alloc_free(a[0]), alloc_free(a[1]);
  return rc;
}

/* The scores of the m partitions submitted since the last collect: the
 * better of each one's two allocations, +inf for one that does not fit. */
static int custom_collect(void *ctx, int m, double *out, err *e) {
  objective *o = ctx;
  mem_grow((void **)&o->v, &o->vcap, (size_t)o->nsent + 1, sizeof *o->v);
  int rc = o->collect(o->fn_ctx, o->nsent, o->v, e);
  /* fewer submitted than asked: a submit failed, and the scorer says so */
  if (rc == ERR_OK && m != o->pm)
    rc = err_set(e, ERR_RANGE, "%d partitions collected where %d were "
                 "submitted", m, o->pm);
  for (int i = 0, k = 0; i < m && rc == ERR_OK; i++) {
    double x[2];
    for (int j = 0; j < 2; j++)
      x[j] = o->psent[i] >> j & 1 ? o->v[k++] : INFINITY;
    out[i] = fmin(x[0], x[1]);
  }
  o->pm = o->nsent = 0;
  return rc;
}

/* m partitions as custom_groups judges each -- its realised allocation
 * and that reversed, +inf for one that does not fit -- with every
 * allocation that fits sent to o->many in one batch, in the order
 * custom_groups would send them one at a time. */
static int custom_partitions(void *ctx, int m, const int *groups, double *out,
                             err *e) {
  objective *o = ctx;
  int nd = o->w.replicas * o->w.stages, ns = o->w.stages;
  if (o->submit) {
    int rc = ERR_OK;
    for (int i = 0; i < m && rc == ERR_OK; i++)
      rc = custom_submit(o, groups + (size_t)i * nd, e);
    int rc2 = custom_collect(o, o->pm, out, e);
    return rc ? rc : rc2;
  }
  alloc **a = mem_alloc((size_t)2 * m * sizeof *a);
  int *layers = mem_alloc((size_t)2 * m * ns * sizeof *layers);
  const int **lp = mem_alloc((size_t)2 * m * sizeof *lp);
  const alloc **sent = mem_alloc((size_t)2 * m * sizeof *sent);
  double *got = mem_alloc((size_t)2 * m * sizeof *got);
  int nsent = 0;
  for (int i = 0; i < m; i++) {
    canonical(o, groups + (size_t)i * nd, o->canon);
    a[2 * i] = cost_realise(o->c, o->canon, o->scratch);
    a[2 * i + 1] = reversed(a[2 * i]);
    for (int j = 2 * i; j < 2 * i + 2; j++) {
      got[j] = INFINITY;
      if (!split_fits(o, a[j])) continue;
      int *l = layers + (size_t)j * ns;
      memcpy(l, o->layers, (size_t)ns * sizeof *l);
      lp[nsent] = l;
      sent[nsent++] = a[j];
      got[j] = NAN; /* filled from the batch below */
    }
  }
  double *v = mem_alloc((size_t)(nsent > 0 ? nsent : 1) * sizeof *v);
  int rc = nsent ? o->many(o->fn_ctx, nsent, sent, lp, v, e) : ERR_OK;
  for (int j = 0, k = 0; j < 2 * m && rc == ERR_OK; j++)
    if (isnan(got[j])) got[j] = v[k++];
  for (int i = 0; i < m && rc == ERR_OK; i++)
    out[i] = fmin(got[2 * i], got[2 * i + 1]);
  for (int j = 0; j < 2 * m; j++) alloc_free(a[j]);
  free(a), free(layers), free(lp), free(sent), free(got), free(v);
  return rc;
}

search_objective objective_custom(objective *o, const char *name,
                                  objective_alloc_fn fn, void *ctx) {
  return objective_custom_batch(o, name, fn, NULL, ctx);
}

search_objective objective_custom_stream(objective *o, const char *name,
                                         objective_alloc_fn fn,
                                         objective_submit_fn submit,
                                         objective_collect_fn collect,
                                         void *ctx) {
  search_objective r = objective_custom_batch(o, name, fn, NULL, ctx);
  o->submit = submit, o->collect = collect;
  r.partitions = custom_partitions;
  r.submit = custom_submit, r.collect = custom_collect;
  return r;
}

search_objective objective_custom_batch(objective *o, const char *name,
                                        objective_alloc_fn fn,
                                        objective_allocs_fn many, void *ctx) {
  o->fn = fn, o->many = many, o->fn_ctx = ctx;
  o->submit = NULL, o->collect = NULL, o->pm = o->nsent = 0;
  return (search_objective){.name = name, .partition = custom_groups,
                            .alloc = custom_alloc, .realise = custom_realise,
                            .partitions = many ? custom_partitions : NULL,
                            .ctx = o};
}

static double dtfm(void *ctx, const alloc *a, const spec_workload *w,
                   err *e) {
  (void)w, (void)e;
  const objective *o = ctx;
  return cost_alloc(o->c, a, NULL);
}

static double dtfm_alloc(void *ctx, const alloc *a, err *e) {
  return judge(ctx, a, dtfm, ctx, e);
}

/* The realised allocation (canonical groups), or its reverse when only
 * that fits: the checked path. Its cost_alloc is cost_partition of the
 * groups (cost.h), so it agrees with the fast path where both apply. */
static alloc *dtfm_fitting(objective *o, const int *groups) {
  canonical(o, groups, o->canon);
  alloc *a = cost_realise(o->c, o->canon, o->scratch);
  if (split_fits(o, a)) return a;
  alloc *b = reversed(a);
  alloc_free(a);
  if (split_fits(o, b)) return b;
  alloc_free(b);
  return NULL;
}

static double dtfm_groups(void *ctx, const int *groups, err *e) {
  (void)e;
  objective *o = ctx;
  if (o->always_fits) return cost_partition(o->c, groups, o->scratch, NULL);
  alloc *a = dtfm_fitting(o, groups);
  double v = a ? cost_alloc(o->c, a, NULL) : INFINITY;
  alloc_free(a);
  return v;
}

/* What gcma and random-search return: cost_realise's pipelines when every
 * stage fits anywhere (as without the constraint), else the fitting one
 * (the cost model's pipelines themselves when no direction fits). */
static alloc *dtfm_realise(void *ctx, const int *groups) {
  objective *o = ctx;
  alloc *a = o->always_fits ? NULL : dtfm_fitting(o, groups);
  return a ? a : cost_realise(o->c, groups, o->scratch);
}

search_objective objective_dtfm(objective *o) {
  return (search_objective){.name = "dtfm-score", .partition = dtfm_groups,
                            .alloc = dtfm_alloc, .realise = dtfm_realise,
                            .ctx = o};
}
