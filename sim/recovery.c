/* recovery: see recovery.h. Every choice is a deterministic function of the
 * state at the instant (devices up, what each holds): ties go to the lower
 * replica or device index. */
#include "sim/recovery.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/names.h"
#include "models/cost.h"
#include "schedules/objective.h"
#include "sim/place.h"
#include "traces/scenario_subset.h"

const char *const sim_recovery_names[SIM_RECOVERY_N + 1] = {
#define SIM_RECOVERY_NAME(name, text) text,
    SIM_RECOVERY_MAP(SIM_RECOVERY_NAME)
#undef SIM_RECOVERY_NAME
    NULL};

const char *sim_recovery_name(sim_recovery r) {
  return sim_recovery_names[r];
}

int sim_recovery_parse(const char *name) {
  return names_find(sim_recovery_names, name);
}

const scenario *sim_plan_scenario(const sim_plan *p) {
  return p->view ? p->view : p->parent;
}

static void plan_stages(sim_plan *p) {
  p->stage_of = mem_alloc((size_t)p->parent->ndevices * sizeof *p->stage_of);
  for (int d = 0; d < p->parent->ndevices; d++) p->stage_of[d] = -1;
  for (int r = 0; r < p->a->replicas; r++)
    for (int s = 0; s < p->a->stages; s++)
      p->stage_of[p->dmap[alloc_at(p->a, r, s)]] = s;
}

void sim_plan_full(sim_plan *p, const scenario *s, const alloc *a) {
  *p = (sim_plan){.parent = s, .replicas = a->replicas};
  p->a = alloc_copy(a);
  p->dmap = mem_alloc((size_t)s->ndevices * sizeof *p->dmap);
  for (int d = 0; d < s->ndevices; d++) p->dmap[d] = d;
  plan_stages(p);
}

void sim_plan_over(sim_plan *p, const scenario *s, const int *keep, int n,
                   int replicas, alloc *a) {
  *p = (sim_plan){.parent = s, .replicas = replicas, .a = a};
  bool all = n == s->ndevices;
  for (int i = 0; all && i < n; i++) all = keep[i] == i;
  p->view = all ? NULL : scenario_subset(s, keep, n, replicas);
  p->dmap = mem_alloc((size_t)n * sizeof *p->dmap);
  memcpy(p->dmap, keep, (size_t)n * sizeof *keep);
  plan_stages(p);
}

void sim_plan_free(sim_plan *p) {
  scenario_subset_free(p->view);
  alloc_free(p->a);
  free(p->dmap);
  free(p->stage_of);
  *p = (sim_plan){0};
}

static bool up(const sim_recovery_ctx *c, int d) {
  return !c->faults || fault_device_up(c->faults, d, c->now);
}

static int int_cmp(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* The plan over the devices pick[r * S + s] (scenario indices): a view of
 * them in increasing order and the allocation renumbered into it. */
static void plan_from_picks(sim_plan *out, const scenario *s, const int *pick,
                            int R, int S) {
  int n = R * S;
  int *keep = mem_alloc((size_t)n * sizeof *keep);
  memcpy(keep, pick, (size_t)n * sizeof *keep);
  qsort(keep, (size_t)n, sizeof *keep, int_cmp);
  int *pos = mem_alloc((size_t)s->ndevices * sizeof *pos);
  for (int i = 0; i < n; i++) pos[keep[i]] = i;
  alloc *a = alloc_new(R, S);
  for (int i = 0; i < n; i++) a->device[i] = pos[pick[i]];
  sim_plan_over(out, s, keep, n, R, a);
  free(pos);
  free(keep);
}

void sim_plan_replicas(sim_plan *out, const sim_plan *p, const bool *keep) {
  int R = p->a->replicas, S = p->a->stages, n = 0;
  int *pick = mem_alloc((size_t)R * S * sizeof *pick);
  for (int r = 0; r < R; r++)
    if (keep[r]) {
      for (int s = 0; s < S; s++)
        pick[n * S + s] = p->dmap[alloc_at(p->a, r, s)];
      n++;
    }
  assert(n > 0);
  plan_from_picks(out, p->parent, pick, n, S);
  free(pick);
}

int sim_recovery_reroute(const sim_recovery_ctx *c, sim_plan *out, err *e) {
  const alloc *o = c->original;
  int R = o->replicas, S = o->stages, most = R;
  int *col = mem_alloc((size_t)R * S * sizeof *col); /* [s * R + i] */
  int *cnt = mem_calloc((size_t)S, sizeof *cnt);
  bool *whole = mem_alloc((size_t)R * sizeof *whole); /* all of it up */
  for (int r = 0; r < R; r++) {
    whole[r] = true;
    for (int s = 0; s < S; s++) whole[r] = whole[r] && up(c, alloc_at(o, r, s));
  }
  /* per column: the replicas whose devices are all up, then the other
   * holders, then the rest, so the first pipelines are whole replicas as
   * they were (a device of one that lacks the state receives it) */
  for (int s = 0; s < S; s++) {
    bool held = false;
    for (int pass = 0; pass < 3; pass++)
      for (int r = 0; r < R; r++) {
        int d = alloc_at(o, r, s);
        int rank = whole[r] ? 0 : c->holds[d] == s ? 1 : 2;
        if (up(c, d) && rank == pass) col[s * R + cnt[s]++] = d;
        held = held || (up(c, d) && c->holds[d] == s);
      }
    if (!held) {
      free(col), free(cnt), free(whole);
      return err_set(e, ERR_CONFIG, "%s: the job cannot continue: stage %d "
                     "has no replica left at t = %.6f s (every device that "
                     "held it is down)", c->s->name, s, (double)c->now * 1e-9);
    }
    if (cnt[s] < most) most = cnt[s];
  }
  int *pick = mem_alloc((size_t)most * S * sizeof *pick);
  for (int r = 0; r < most; r++)
    for (int s = 0; s < S; s++) pick[r * S + s] = col[s * R + r];
  plan_from_picks(out, c->s, pick, most, S);
  free(pick), free(col), free(cnt), free(whole);
  return ERR_OK;
}

/* The devices replan keeps (increasing), *n of them: every device up but
 * the `drop` beyond whole replicas. A site's up devices fill
 * floor(up / stages) pipelines of its own and leave a fragment; devices
 * are dropped from fragments only, the smallest fragment first (then the
 * higher site), each site's highest device first, so pipelines that fit
 * inside a site stay possible. */
static int *replan_keep(const sim_recovery_ctx *c, int S, int *n, int *R) {
  const scenario *s = c->s;
  int *frag = mem_calloc((size_t)s->nsites, sizeof *frag), total = 0;
  bool *on = mem_calloc((size_t)s->ndevices, sizeof *on);
  for (int d = 0; d < s->ndevices; d++)
    if (up(c, d)) on[d] = true, frag[s->device_site[d]]++, total++;
  for (int k = 0; k < s->nsites; k++) frag[k] %= S;
  *R = total / S;
  int drop = total - *R * S; /* < S <= the sum of the fragments */
  while (drop > 0) {
    int best = -1;
    for (int k = 0; k < s->nsites; k++)
      if (frag[k] > 0 && (best < 0 || frag[k] <= frag[best])) best = k;
    assert(best >= 0);
    const scenario_site *st = &s->sites[best];
    for (int d = st->first_device + st->ndevices - 1;
         d >= st->first_device && drop > 0 && frag[best] > 0; d--)
      if (on[d]) on[d] = false, frag[best]--, drop--;
    frag[best] = 0; /* what is left of it stays */
  }
  int *keep = mem_alloc(((size_t)*R * S + 1) * sizeof *keep);
  *n = 0;
  for (int d = 0; d < s->ndevices; d++)
    if (on[d]) keep[(*n)++] = d;
  free(frag), free(on);
  return keep;
}

/* method's placement of s found by a search minimising the predictor. */
static alloc *place_predicted(const scenario *s, const cost_ctx *cc,
                              const char *method, const sim_options *so,
                              err *e) {
  alloc *a = NULL;
  objective *ob = objective_new(s, cc, so ? &so->transport : NULL, false, e);
  search_opts o;
  search_opts_default(&o);
  o.seed = s->seed;
  search_objective obj = ob ? objective_predicted(ob) : (search_objective){0};
  search_result *r =
      ob ? sim_place_search_with(s, cc, method, &o, so, &obj, e) : NULL;
  if (r) a = r->best, r->best = NULL;
  search_result_free(r);
  objective_free(ob);
  return a;
}

alloc *sim_recovery_place(const scenario *s, const char *method, int kind,
                          const sim_options *so, err *e) {
  cost_ctx *cc = cost_ctx_from_scenario(s, e);
  if (!cc) return NULL;
  alloc *a = NULL;
  switch ((objective_kind)(kind < 0 ? OBJECTIVE_DTFM : kind)) {
    case OBJECTIVE_DTFM:
      a = sim_place(s, cc, method, so, e); /* as every command places */
      break;
    case OBJECTIVE_PREDICTED: a = place_predicted(s, cc, method, so, e); break;
    case OBJECTIVE_COST_CMD:
    case OBJECTIVE_USD_PER_SAMPLE:
    case OBJECTIVE_SAMPLES_PER_USD:
      err_set(e, ERR_CONFIG, "re-planning minimises dtfm or predicted, not "
              "%s (schedule's)", objective_kind_names[kind]);
      break;
  }
  cost_ctx_free(cc);
  return a;
}

static int original_up(const sim_recovery_ctx *c) {
  int n = 0;
  for (int i = 0; i < c->original->replicas * c->original->stages; i++)
    n += up(c, c->original->device[i]);
  return n;
}

int sim_recovery_replan_replicas(const sim_recovery_ctx *c) {
  int S = c->original->stages, n, R;
  if (!c->method) return original_up(c) / S;
  free(replan_keep(c, S, &n, &R));
  return R;
}

/* Pipeline k of the original's leftovers: each stage from its own column
 * when it has a device left, else from the column with the most left (the
 * lowest stage on ties; its own stage is already served). */
static void fill_pipeline(int *pick, const int *col, int *take,
                          const int *cnt, int S, int R0) {
  for (int s = 0; s < S; s++)
    pick[s] = take[s] < cnt[s] ? col[s * R0 + take[s]++] : -1;
  for (int s = 0; s < S; s++) {
    if (pick[s] >= 0) continue;
    int most = -1;
    for (int t = 0; t < S; t++)
      if (cnt[t] - take[t] > 0 && (most < 0 || cnt[t] - take[t] > cnt[most] - take[most]))
        most = t;
    assert(most >= 0); /* R = floor(up / S): enough devices */
    pick[s] = col[most * R0 + take[most]++];
  }
}

/* sim_recovery_replan from the original allocation (c->method NULL). */
static void replan_original(const sim_recovery_ctx *c, int R, sim_plan *out) {
  const alloc *o = c->original;
  int R0 = o->replicas, S = o->stages, n = 0;
  int *pick = mem_alloc((size_t)R * S * sizeof *pick);
  int *col = mem_alloc((size_t)R0 * S * sizeof *col); /* [s * R0 + i] */
  int *cnt = mem_calloc((size_t)S, sizeof *cnt), *take = mem_calloc((size_t)S, sizeof *take);
  for (int r = 0; r < R0; r++) {
    bool whole = true;
    for (int s = 0; s < S; s++) whole = whole && up(c, alloc_at(o, r, s));
    for (int s = 0; s < S; s++) {
      int d = alloc_at(o, r, s);
      if (whole && n < R) pick[n * S + s] = d;
      else if (up(c, d)) col[s * R0 + cnt[s]++] = d;
    }
    n += whole && n < R;
  }
  for (; n < R; n++) fill_pipeline(pick + n * S, col, take, cnt, S, R0);
  plan_from_picks(out, c->s, pick, R, S);
  free(pick), free(col), free(cnt), free(take);
}

int sim_recovery_replan(const sim_recovery_ctx *c, sim_plan *out, err *e) {
  int S = c->original->stages, n, R;
  int *keep = c->method ? replan_keep(c, S, &n, &R) : NULL;
  if (!c->method) R = original_up(c) / S;
  if (R == 0) {
    free(keep);
    return err_set(e, ERR_CONFIG, "%s: the job cannot continue: fewer "
                   "devices than its %d stages are up at t = %.6f s",
                   c->s->name, S, (double)c->now * 1e-9);
  }
  if (!c->method) {
    replan_original(c, R, out);
    return ERR_OK;
  }
  scenario *v = scenario_subset(c->s, keep, n, R);
  alloc *a = sim_recovery_place(v, c->method, c->objective, c->sim, e);
  scenario_subset_free(v);
  if (!a) {
    free(keep);
    return e ? e->code : ERR_CONFIG;
  }
  sim_plan_over(out, c->s, keep, n, R, a);
  free(keep);
  return ERR_OK;
}

int sim_recovery_moves(const sim_recovery_ctx *c, const sim_plan *p,
                       const double *state_bytes, sim_move **v, int *n) {
  int S = p->a->stages, nd = c->s->ndevices;
  int *next = mem_calloc((size_t)S, sizeof *next); /* round-robin cursor */
  *v = NULL;
  *n = 0;
  size_t cap = 0;
  for (int i = 0; i < p->a->replicas * S; i++) {
    int dst = p->dmap[p->a->device[i]], s = i % S;
    if (c->holds[dst] == s) continue;
    int src = -1;
    for (int k = 0; k < nd && src < 0; k++) {
      int d = (next[s] + k) % nd;
      if (c->holds[d] == s && up(c, d)) src = d;
    }
    if (src < 0) {
      free(*v), free(next);
      *v = NULL;
      *n = 0;
      return s;
    }
    next[s] = (src + 1) % nd;
    mem_grow((void **)v, &cap, (size_t)*n + 1, sizeof **v);
    (*v)[(*n)++] = (sim_move){src, dst, state_bytes[s]};
  }
  free(next);
  return -1;
}
