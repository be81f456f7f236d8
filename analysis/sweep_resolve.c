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
#include "sim/sim.h"
#include "traces/fault.h"

/* The axes whose values change the workload a point resolves, in the
 * order an error is blamed on them: DiLoCo's knobs and the widths (their
 * messages name them), the names, then the batch's keys. */
#define K_KNOB_KEY_(a, f, lo, hi, option, arg, help) K_##f,
static const int WORKLOAD_KEYS[] = {
    SCENARIO_KNOB_MAP(K_KNOB_KEY_, ) K_GRAD_BITS, K_ACT_BITS, K_DP_ALGO,
    K_RUNTIME, K_SCHEDULE, K_ITERATIONS, K_LAYERS, K_BATCH, K_MICRO_BATCH,
    K_MBPP};
#undef K_KNOB_KEY_
#define N_WORKLOAD_KEYS (sizeof WORKLOAD_KEYS / sizeof *WORKLOAD_KEYS)

/* Combinations of those axes checked together before the first point;
 * past it, each key's values are checked alone (a 4e6-point sweep must
 * not wait minutes before its first point). */
#define SWEEP_MAX_CHECKED 20000

/* Whether msg names sweep key k: as its option ("--dp-algo") or its
 * scenario field ("workload.dp_algo"). */
static bool names_key(const char *msg, int k) {
  char opt[40], field[48];
  snprintf(opt, sizeof opt, "--%s", sweep_specs[k].key);
  for (char *c = opt; *c; c++) *c = *c == '_' ? '-' : *c;
  snprintf(field, sizeof field, "workload.%s", sweep_specs[k].key);
  return strstr(msg, opt) || strstr(msg, field);
}

/* The sweep key an error of a workload combination belongs to: the first
 * given key its message names, else the first given batch key. */
static int blamed_axis(const sweep *s, const char *msg) {
  for (size_t i = 0; i < N_WORKLOAD_KEYS; i++)
    if (s->axes[WORKLOAD_KEYS[i]].n && names_key(msg, WORKLOAD_KEYS[i]))
      return WORKLOAD_KEYS[i];
  const int batch_keys[] = {K_BATCH, K_MICRO_BATCH, K_MBPP, K_LAYERS};
  for (int i = 0; i < 4; i++)
    if (s->axes[batch_keys[i]].n) return batch_keys[i];
  return K_SCENARIOS;
}

/* One point's workload (p's knobs on sc) checked as sim_run and a
 * training run will check it; sc is left as it was. */
static int check_point_workload(scenario *sc, const sweep_point *p, err *e) {
  scenario_workload saved = sc->workload;
  scenario_lines lines = sc->line;
  /* scenario_apply frees the names it replaces: it works on copies, and
   * saved keeps sc's own until they are put back */
  char *names[] = {saved.model, saved.schedule, saved.dp_algo, saved.runtime};
  char *copies[4];
  for (int i = 0; i < 4; i++) copies[i] = names[i] ? mem_strdup(names[i]) : NULL;
  sc->workload.model = copies[0], sc->workload.schedule = copies[1];
  sc->workload.dp_algo = copies[2], sc->workload.runtime = copies[3];
  int rc = scenario_apply(sc, &p->knobs, e);
  if (!rc) rc = sim_check_size(sc, e);
  spec_workload w;
  /* DiLoCo's training runs keep whole outer steps (sim/training.h) */
  if (!rc && p->iterations > 0 && !spec_workload_resolve(sc, &w, NULL) &&
      spec_is_diloco(&w) &&
      (p->iterations % w.inner_steps ||
       (p->checkpoint_every > 0 && p->checkpoint_every % w.inner_steps)))
    rc = err_set(e, ERR_CONFIG, "%s: workload.dp_algo %s: iterations %lld "
                 "and checkpoint_every %lld must be multiples of "
                 "inner_steps %d (a run keeps whole outer steps)", sc->name,
                 sc->workload.dp_algo, (long long)p->iterations,
                 (long long)p->checkpoint_every, w.inner_steps);
  free(sc->workload.model), free(sc->workload.schedule);
  free(sc->workload.dp_algo), free(sc->workload.runtime);
  sc->workload = saved, sc->line = lines;
  return rc;
}

/* Every combination of the workload axes (WORKLOAD_KEYS) applied to sc and
 * checked as a point will be (or, past SWEEP_MAX_CHECKED combinations,
 * each key's values with the others absent): a value that cannot work
 * fails here, at its key's line, before the store is opened, not per
 * point later. sc is left as it was. */
static int check_workload_axes(const sweep *s, scenario *sc, err *e) {
  size_t total = 1;
  for (size_t i = 0; i < N_WORKLOAD_KEYS && total <= SWEEP_MAX_CHECKED; i++)
    total *= sweep_axis_len(s, WORKLOAD_KEYS[i]);
  bool alone = total > SWEEP_MAX_CHECKED;
  size_t n = alone ? 0 : total;
  for (size_t i = 0; alone && i < N_WORKLOAD_KEYS; i++)
    n += sweep_axis_len(s, WORKLOAD_KEYS[i]);
  for (size_t c = 0; c < n; c++) {
    sweep_point p;
    sweep_point_absent(s, &p);
    if (!alone) {
      for (size_t i = 0, r = c; i < N_WORKLOAD_KEYS;
           r /= sweep_axis_len(s, WORKLOAD_KEYS[i]), i++)
        sweep_axis_put(s, WORKLOAD_KEYS[i], r % sweep_axis_len(s, WORKLOAD_KEYS[i]), &p);
    } else {
      size_t i = 0, r = c;
      while (r >= sweep_axis_len(s, WORKLOAD_KEYS[i])) r -= sweep_axis_len(s, WORKLOAD_KEYS[i++]);
      if (s->axes[WORKLOAD_KEYS[i]].n) sweep_axis_put(s, WORKLOAD_KEYS[i], r, &p);
    }
    err ce = {0};
    int rc = check_point_workload(sc, &p, &ce);
    if (rc) {
      int key = blamed_axis(s, ce.msg);
      return err_set(e, rc, "%s:%d: %s: %s", s->name, s->axes[key].line,
                     sweep_axis_key(s, key), ce.msg);
    }
  }
  return ERR_OK;
}

/* Every pair of scales keeps sc's links within trace.h's bounds. */
static int check_scale_axes(const sweep *s, const scenario *sc, err *e) {
  int key = s->axes[K_BW_SCALE].n ? K_BW_SCALE : K_LAT_SCALE;
  for (size_t b = 0; b < sweep_axis_len(s, K_BW_SCALE); b++)
    for (size_t l = 0; l < sweep_axis_len(s, K_LAT_SCALE); l++) {
      sweep_point p;
      sweep_point_absent(s, &p);
      sweep_axis_put(s, K_BW_SCALE, b, &p);
      sweep_axis_put(s, K_LAT_SCALE, l, &p);
      err ce = {0};
      int rc = scenario_check_knobs(sc, &p.knobs, &ce);
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
  uint64_t *h = mem_calloc(n, sizeof *h);
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
    rc = check_workload_axes(s, sc, e);
    if (!rc) rc = check_scale_axes(s, sc, e);
    if (!rc) rc = check_faults(s, sc, fh + i * nf, e);
    scenario_free(sc);
  }
  if (rc) {
    free(h), free(fh);
    return rc;
  }
  free(s->scenario_hash);
  free(s->faults_hash);
  s->scenario_hash = h;
  s->faults_hash = fh;
  /* The built-in data and any parameter a --params file changed. */
  s->data_hash = builtin_hash() ^ params_hash();
  return ERR_OK;
}

