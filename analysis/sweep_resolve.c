/* sweep_resolve: the checks of a sweep made before its first point, each
 * failing at the sweep file's key: every scenario loads, every combination
 * of the workload's axes resolves as its points will (or, for very many,
 * each value alone), every pair of scales keeps the links in bounds, every
 * fault file reads against every scenario; then the content hashes that
 * make a row's identity. */
#include "analysis/sweep_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/mem.h"
#include "models/params.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "sim/sim.h"
#include "traces/fault.h"

/* Combinations of the workload's axes checked together before the first
 * point; past it, each key's values are checked alone (a 4e6-point sweep
 * must not wait minutes before its first point). */
#define SWEEP_MAX_CHECKED 20000

/* Whether key k changes the workload a point resolves: a knob of the
 * workload, or the training run's length (DiLoCo keeps whole outer
 * steps). */
static bool workload_axis(int k) {
  const workload_row *row = sweep_spec(k)->row;
  return k == K_ITERATIONS || (row && row->target == WORKLOAD_IN_WORKLOAD);
}

/* The sweep key a failure of a workload combination belongs to: the key of
 * the row it names (e.field) when the file gives that key, else the first
 * given of the batch's keys, else the scenario's. */
static int blamed_axis(const sweep *s, const err *e) {
  int row = err_field(e);
  for (int k = 0; row >= 0 && k < K_COUNT; k++)
    if (sweep_spec(k)->row == &workload_rows[row] && s->axes[k].n) return k;
  const int batch_keys[] = {K_batch, K_micro_batch, K_micro_batches_per_pass,
                            K_layers};
  for (int i = 0; i < 4; i++)
    if (s->axes[batch_keys[i]].n) return batch_keys[i];
  return K_SCENARIOS;
}

/* Whether row r is a name of the workload (scenario_apply replaces it). */
static bool is_name(int r) {
  return workload_rows[r].target == WORKLOAD_IN_WORKLOAD &&
         workload_rows[r].kind == WORKLOAD_NAME;
}

/* One point's workload (p's knobs on sc) checked as sim_run and a
 * training run will check it; sc is left as it was. */
static int check_point_workload(scenario *sc, const sweep_point *p, err *e) {
  scenario_workload saved = sc->workload;
  int lines[WORKLOAD_NFIELDS];
  memcpy(lines, sc->line, sizeof lines);
  /* scenario_apply frees the names it replaces: it works on copies, and
   * saved keeps sc's own until they are put back */
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (is_name(r)) {
      char **v = (char **)((char *)sc + workload_rows[r].at);
      *v = *v ? mem_strdup(*v) : NULL;
    }
  sc->workload.model_dims = model_dup(saved.model_dims); /* as the names */
  int rc = scenario_apply(sc, &p->knobs, e);
  if (!rc) rc = sim_check_size(sc, e);
  spec_workload w;
  /* DiLoCo's training runs keep whole outer steps (sim/training.h) */
  if (!rc && p->iterations > 0 && !spec_workload_resolve(sc, &w, NULL) &&
      spec_is_diloco(&w) &&
      (p->iterations % w.given.inner_steps ||
       (p->checkpoint_every > 0 && p->checkpoint_every % w.given.inner_steps)))
    rc = err_set_field(e, WORKLOAD_dp_algo, ERR_CONFIG, "%s: "
                       "workload.dp_algo %s: iterations %lld "
                 "and checkpoint_every %lld must be multiples of "
                 "inner_steps %d (a run keeps whole outer steps)", sc->name,
                 sc->workload.dp_algo, (long long)p->iterations,
                 (long long)p->checkpoint_every, w.given.inner_steps);
  for (int r = 0; r < WORKLOAD_NFIELDS; r++)
    if (is_name(r)) free(*(char **)((char *)sc + workload_rows[r].at));
  model_free(sc->workload.model_dims);
  sc->workload = saved;
  memcpy(sc->line, lines, sizeof lines);
  return rc;
}

/* Every combination of the workload axes (workload_axis) applied to sc
 * and checked as a point will be (or, past SWEEP_MAX_CHECKED combinations,
 * each key's values with the others absent): a value that cannot work
 * fails here, at its key's line, before the store is opened, not per
 * point later. sc is left as it was. */
static int check_workload_axes(const sweep *s, scenario *sc, err *e) {
  int keys[K_COUNT];
  size_t nkeys = 0, total = 1;
  for (int k = 0; k < K_COUNT; k++)
    if (workload_axis(k)) keys[nkeys++] = k;
  for (size_t i = 0; i < nkeys && total <= SWEEP_MAX_CHECKED; i++)
    total *= sweep_axis_len(s, keys[i]);
  bool alone = total > SWEEP_MAX_CHECKED;
  size_t n = alone ? 0 : total;
  for (size_t i = 0; alone && i < nkeys; i++) n += sweep_axis_len(s, keys[i]);
  for (size_t c = 0; c < n; c++) {
    sweep_point p;
    sweep_point_absent(s, &p);
    if (!alone) {
      for (size_t i = 0, r = c; i < nkeys; r /= sweep_axis_len(s, keys[i]), i++)
        sweep_axis_put(s, keys[i], r % sweep_axis_len(s, keys[i]), &p);
    } else {
      size_t i = 0, r = c;
      while (r >= sweep_axis_len(s, keys[i])) r -= sweep_axis_len(s, keys[i++]);
      if (s->axes[keys[i]].n) sweep_axis_put(s, keys[i], r, &p);
    }
    err ce = {0};
    int rc = check_point_workload(sc, &p, &ce);
    if (rc) {
      int key = blamed_axis(s, &ce);
      return err_set_field(e, err_field(&ce), rc, "%s:%d: %s: %s", s->name,
                           s->axes[key].line, sweep_axis_key(s, key), ce.msg);
    }
  }
  return ERR_OK;
}

/* Every pair of scales keeps sc's links within trace.h's bounds (a
 * failure at the key of the scale it names, when given). */
static int check_scale_axes(const sweep *s, const scenario *sc, err *e) {
  for (size_t b = 0; b < sweep_axis_len(s, K_bandwidth_scale); b++)
    for (size_t l = 0; l < sweep_axis_len(s, K_latency_scale); l++) {
      sweep_point p;
      sweep_point_absent(s, &p);
      sweep_axis_put(s, K_bandwidth_scale, b, &p);
      sweep_axis_put(s, K_latency_scale, l, &p);
      err ce = {0};
      int rc = scenario_check_knobs(sc, &p.knobs, &ce);
      int key = err_field(&ce) == WORKLOAD_latency_scale ? K_latency_scale
                                                         : K_bandwidth_scale;
      if (!s->axes[key].n)
        key = key == K_latency_scale ? K_bandwidth_scale : K_latency_scale;
      if (rc)
        return err_set(e, rc, "%s:%d: %s: %s", s->name, s->axes[key].line,
                       sweep_axis_key(s, key), ce.msg);
    }
  return ERR_OK;
}

/* Every fault file read against sc (a bad row fails at the faults key's
 * line, naming the file's line), each content hash into h[0 .. n). */
static int check_faults(const sweep *s, const scenario *sc, uint64_t *h,
                        err *e) {
  const axis *ax = &s->axes[K_FAULTS];
  for (size_t j = 0; j < ax->n; j++) {
    err fe = {0};
    fault_trace *f = fault_load(ax->names[j], sc, &fe);
    if (!f)
      return err_set(e, fe.code, "%s:%d: faults: %s (scenario %s)", s->name,
                     ax->line, fe.msg, sc->name);
    h[j] = fault_hash(f);
    fault_free(f);
  }
  return ERR_OK;
}

int sweep_resolve(sweep *s, err *e) {
  const char *const *names;
  size_t n = sweep_scenarios(s, &names), nf = s->axes[K_FAULTS].n;
  uint64_t *h = mem_calloc(n, sizeof *h), *ph = mem_calloc(n, sizeof *ph);
  uint64_t *fh = mem_calloc(n * nf + 1, sizeof *fh);
  int rc = ERR_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    err se = {0};
    scenario *sc = scenario_load(names[i], &se);
    if (!sc) {
      rc = err_set(e, se.code, "%s:%d: %s: %s", s->name,
                   s->axes[K_SCENARIOS].line, sweep_axis_key(s, K_SCENARIOS),
                   se.msg);
      break;
    }
    h[i] = scenario_hash(sc);
    ph[i] = scenario_prices_hash(sc);
    rc = check_workload_axes(s, sc, e);
    if (!rc) rc = check_scale_axes(s, sc, e);
    if (!rc) rc = check_faults(s, sc, fh + i * nf, e);
    scenario_free(sc);
  }
  if (rc) {
    free(h), free(fh), free(ph);
    return rc;
  }
  free(s->prices_hash);
  s->prices_hash = ph;
  free(s->scenario_hash);
  free(s->faults_hash);
  s->scenario_hash = h;
  s->faults_hash = fh;
  /* The built-in data and any parameter a --params file changed. */
  s->data_hash = builtin_hash() ^ params_hash();
  return ERR_OK;
}

