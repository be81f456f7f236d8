/* hivemind_flow: see hivemind_flow.h. */
#include "models/hivemind_flow.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/mem.h"

/* Scratch of one run: bytes sent, rate, frozen; per resource what is left
 * and the weight of the unfrozen flows crossing it (cnt: how many). */
typedef struct state {
  double *sent, *rate, *rem, *wsum;
  int *cnt;
  bool *frozen, *active;
} state;

/* The level (rate per weight) at which the next flow freezes: a
 * resource's share of what is left, or an unfrozen flow's own bound. */
static double next_level(const hivemind_flow *f, int n, const state *s,
                         int nres) {
  double L = INFINITY;
  for (int r = 0; r < nres; r++)
    if (s->cnt[r] > 0) L = fmin(L, s->rem[r] / s->wsum[r]);
  for (int i = 0; i < n; i++)
    if (s->active[i] && !s->frozen[i]) L = fmin(L, f[i].cap / f[i].w);
  return L;
}

/* Freezes flow i at level L. */
static void freeze(const hivemind_flow *f, state *s, int i, double L) {
  s->frozen[i] = true;
  s->rate[i] = L * f[i].w;
  for (int k = 0; k < HIVEMIND_FLOW_RES; k++) {
    int r = f[i].res[k];
    if (r >= 0) s->rem[r] -= s->rate[i], s->wsum[r] -= f[i].w, s->cnt[r]--;
  }
}

/* Max-min rates of the active flows (progressive filling). */
static void share(const hivemind_flow *f, int n, const double *cap, int nres,
                  state *s) {
  int left = 0;
  for (int r = 0; r < nres; r++) s->rem[r] = cap[r], s->wsum[r] = 0, s->cnt[r] = 0;
  for (int i = 0; i < n; i++) {
    s->frozen[i] = !s->active[i];
    s->rate[i] = 0;
    if (!s->active[i]) continue;
    left++;
    for (int k = 0; k < HIVEMIND_FLOW_RES; k++)
      if (f[i].res[k] >= 0) s->cnt[f[i].res[k]]++, s->wsum[f[i].res[k]] += f[i].w;
  }
  while (left > 0) {
    double L = next_level(f, n, s, nres), tol = L * (1 + 1e-12);
    if (!isfinite(L)) { /* nothing binds the rest: instantaneous */
      for (int i = 0; i < n; i++)
        if (!s->frozen[i]) s->frozen[i] = true, s->rate[i] = INFINITY, left--;
      return;
    }
    bool *full = mem_alloc((size_t)nres * sizeof *full + 1);
    for (int r = 0; r < nres; r++)
      full[r] = s->cnt[r] > 0 && s->rem[r] / s->wsum[r] <= tol;
    for (int i = 0; i < n; i++) {
      if (s->frozen[i]) continue;
      bool bound = f[i].cap / f[i].w <= tol;
      for (int k = 0; k < HIVEMIND_FLOW_RES; k++)
        bound |= f[i].res[k] >= 0 && full[f[i].res[k]];
      if (bound) freeze(f, s, i, L), left--;
    }
    free(full);
  }
}

/* The time until the next event from t: a start, a mark, an end. */
static double next_event(const hivemind_flow *f, int n, const state *s,
                         double t) {
  double dt = INFINITY;
  for (int i = 0; i < n; i++) {
    if (f[i].t_all >= 0) continue;
    if (!s->active[i]) {
      dt = fmin(dt, f[i].begin - t);
      continue;
    }
    double to = s->sent[i] < f[i].mark ? f[i].mark : f[i].bytes;
    dt = fmin(dt, s->rate[i] > 0 ? (to - s->sent[i]) / s->rate[i] : INFINITY);
  }
  return dt;
}

/* Advances the active flows by dt to t, recording their marks and ends. */
static void advance(hivemind_flow *f, int n, state *s, double dt, double t) {
  for (int i = 0; i < n; i++) {
    if (!s->active[i]) continue;
    s->sent[i] = isfinite(s->rate[i]) ? s->sent[i] + s->rate[i] * dt
                                      : f[i].bytes;
    double eps = 1e-9 * f[i].bytes;
    if (f[i].t_mark < 0 && s->sent[i] >= f[i].mark - eps) f[i].t_mark = t;
    if (s->sent[i] >= f[i].bytes - eps) {
      f[i].t_all = t;
      s->active[i] = false;
    }
  }
}

void hivemind_flow_run(hivemind_flow *f, int n, const double *cap, int nres) {
  state s = {.sent = mem_calloc(2 * (size_t)n + 1, sizeof(double)),
             .rem = mem_alloc(2 * ((size_t)nres + 1) * sizeof(double)),
             .cnt = mem_alloc(((size_t)nres + 1) * sizeof(int)),
             .frozen = mem_alloc(2 * (size_t)n + 1)};
  s.rate = s.sent + n, s.active = s.frozen + n, s.wsum = s.rem + nres + 1;
  double t = INFINITY;
  for (int i = 0; i < n; i++) {
    f[i].t_mark = f[i].t_all = -1;
    s.active[i] = false;
    t = fmin(t, f[i].begin);
  }
  for (int left = n; left > 0;) {
    for (int i = 0; i < n; i++)
      if (f[i].t_all < 0 && !s.active[i] && f[i].begin <= t) s.active[i] = true;
    share(f, n, cap, nres, &s);
    double dt = fmax(0, next_event(f, n, &s, t));
    t += dt;
    advance(f, n, &s, dt, t);
    left = 0;
    for (int i = 0; i < n; i++) left += f[i].t_all < 0;
  }
  free(s.sent), free(s.rem), free(s.cnt), free(s.frozen);
}
