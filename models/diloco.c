/* diloco: the exchange schedule of DiLoCo and streaming DiLoCo.
 * Invariant: pure functions; a plan that diloco_check accepted has
 * H = F x period with period > tau >= 0, so every step t has at most one
 * exchange launched after it and at most one due after it, and an
 * exchange is due before the next one is launched. */
#include "models/diloco.h"

#include <math.h>

#include "models/compress.h"
#include "traces/scenario_row.h"

const workload_field diloco_rows[DILOCO_NROWS] = {
    WORKLOAD_inner_steps, WORKLOAD_fragments, WORKLOAD_overlap_steps,
    WORKLOAD_exchange_levels};

const diloco_names diloco_option_names = {
    .lead = {"--inner-steps", "--fragments", "--overlap-steps"},
    .name = {"--inner-steps", "--fragments", "--overlap-steps"},
    .field = {WORKLOAD_inner_steps, WORKLOAD_fragments,
              WORKLOAD_overlap_steps},
    .knob = {true, true, true}};

int diloco_check(const diloco_plan *p, int layers, const diloco_names *n,
                 err *e) {
  int H = p->inner_steps, F = p->fragments, tau = p->overlap;
  if (!n) n = &diloco_option_names;
  if (H < 1)
    return err_set_field(e, n->field[0], ERR_CONFIG, "%s %d: must be at "
                         "least 1", n->lead[0], H);
  if (F < 1 || F > layers)
    return err_set_field(e, n->field[1], ERR_CONFIG, "%s %d: must be from 1 "
                         "to the %d layers", n->lead[1], F, layers);
  if (layers % F)
    return err_set_field(e, n->field[1], ERR_CONFIG, "%s %d does not divide "
                         "the %d layers: streaming DiLoCo's fragments are "
                         "equal strided sets of layers (layer l in fragment "
                         "l mod F)", n->lead[1], F, layers);
  if (H % F) /* about both: the one a knob gave */
    return err_set_field(e, n->field[n->knob[1] || !n->knob[0] ? 1 : 0],
                         ERR_CONFIG, "%s %d does not divide %s %d: one "
                         "fragment is exchanged every H / F inner steps",
                         n->lead[1], F, n->name[0], H);
  if (tau < 0 || tau >= H / F)
    return err_set_field(e, n->field[2], ERR_CONFIG, "%s %d: must be from 0 "
                         "to H / F - 1 = %d, so that a fragment's exchange "
                         "completes before the next one starts", n->lead[2],
                         tau, H / F - 1);
  return ERR_OK;
}

int diloco_period(const diloco_plan *p) {
  return p->inner_steps / p->fragments;
}

/* Fragment of the k-th exchange (k >= 1), -1 when k < 1. */
static int kth(const diloco_plan *p, long long k) {
  return k >= 1 ? (int)((k - 1) % p->fragments) : -1;
}

int diloco_starts_after(const diloco_plan *p, long long t) {
  long long per = diloco_period(p), u = t + p->overlap;
  return t >= 1 && u % per == 0 ? kth(p, u / per) : -1;
}

int diloco_due_after(const diloco_plan *p, long long t) {
  long long per = diloco_period(p);
  return t >= 1 && t % per == 0 ? kth(p, t / per) : -1;
}

int diloco_fragment_of_layer(const diloco_plan *p, int l) {
  return l % p->fragments;
}

double diloco_fragment_params(const spec_workload *w, const diloco_plan *p,
                              int st, int f) {
  int first = 0;
  for (int s = 0; s < st; s++) first += spec_stage_layers(w, s);
  int n = 0;
  for (int l = first; l < first + spec_stage_layers(w, st); l++)
    n += diloco_fragment_of_layer(p, l) == f;
  double params = n * spec_layer_params(w->model);
  if (st == 0 && f == 0) params += spec_embedding_params(w->model);
  if (st == w->stages - 1 && f == p->fragments - 1)
    params += spec_stage_head_params(w);
  return params;
}

double diloco_cycle_s(const diloco_plan *p, double inner_s,
                      const double *sync_s) {
  double t = p->inner_steps * inner_s;
  for (int f = 0; f < p->fragments; f++)
    t += fmax(0, sync_s[f] - p->overlap * inner_s);
  return t;
}

diloco_plan diloco_plan_given(const scenario_workload *w) {
  return (diloco_plan){.inner_steps = w->inner_steps,
                       .fragments = w->fragments,
                       .overlap = w->overlap_steps};
}

diloco_plan diloco_plan_of(const spec_workload *w) {
  return diloco_plan_given(&w->given);
}

void diloco_plan_put(scenario_workload *w, const diloco_plan *p) {
  w->inner_steps = p->inner_steps;
  w->fragments = p->fragments;
  w->overlap_steps = p->overlap;
}

diloco_plan diloco_plan_of_knobs(const scenario_knobs *k) {
  int v[3];
  for (int i = 0; i < 3; i++) {
    double x = scenario_knob_given(k, diloco_rows[i])
                   ? scenario_knob_number(k, diloco_rows[i]) : 0;
    v[i] = x > 0 ? (int)x : 0;
  }
  return (diloco_plan){.inner_steps = v[0], .fragments = v[1],
                       .overlap = v[2]};
}

void diloco_knobs_clear(scenario_knobs *k) {
  for (int i = 0; i < 3; i++) scenario_knob_clear(k, diloco_rows[i]);
}

double diloco_fragment_bytes(const spec_workload *w, const diloco_plan *p,
                             int st, int f) {
  double b16 = diloco_fragment_params(w, p, st, f) * w->model->value_bytes;
  return compress_grad_bytes(w, b16);
}

double diloco_outer_s(const spec_gpu *g, double params) {
  return params * DILOCO_OUTER_BYTES_PER_PARAM /
         (COMPRESS_BW_FRACTION * g->mem_bw_bytes_s);
}

void diloco_exchange_ready(const spec_workload *w, const alloc *a,
                           const spec_gpu *const *gpu, const diloco_plan *p,
                           int f, const double *at, double *rd) {
  int R = a->replicas;
  for (int st = 0; st < a->stages; st++) {
    double b16 = diloco_fragment_params(w, p, st, f) * w->model->value_bytes;
    for (int r = 0; r < R; r++)
      rd[st * R + r] =
          at[r] + compress_grad_s(w, gpu[alloc_at(a, r, st)], b16, false);
  }
}

void diloco_exchange_land(const spec_workload *w, const alloc *a,
                          const spec_gpu *const *gpu, const diloco_plan *p,
                          int f, const double *step, const double *done,
                          double *at) {
  int R = a->replicas;
  for (int r = 0; r < R; r++) {
    double go = at[r] + p->overlap * step[r], back = go;
    for (int st = 0; st < a->stages; st++) {
      double params = diloco_fragment_params(w, p, st, f);
      if (params <= 0) continue; /* nothing of f: it does not wait */
      const spec_gpu *g = gpu[alloc_at(a, r, st)];
      double u = compress_grad_s(w, g, params * w->model->value_bytes, true) +
                 diloco_outer_s(g, params);
      back = fmax(back, fmax(go, done[st * R + r]) + u);
    }
    at[r] = back;
  }
}
