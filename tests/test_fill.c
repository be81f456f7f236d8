/* test_fill: the predictor's max-min with departures (models/fill.c)
 * against closed forms — N flows of different sizes on one resource
 * leave in size order at the classical water-filling times, weights share
 * in proportion, a flow of two legs goes at its slower leg's pace and
 * pays twice where both cross one resource, a flow waits for its start
 * and for the flows it follows, a tandem's downstream is held to its
 * upstream or goes its own slower way, a leg's rate is its bytes over its
 * flow's life where it binds — and against two references on random flow
 * sets, event by event: the engine's solver (sim/maxmin.h) for flows of
 * one leg (what the engine does with flows that leave as they finish),
 * and a naive weighted water-filling with coefficients for flows of
 * several legs; and how many flows change rate while they send (the
 * legs' averaged rates then approximate). */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdbool.h>

#include "models/fill.h"
#include "sim/maxmin.h"

#define MAXF 24
#define MAXL 48
#define MAXR 8
#define REL 1e-9 /* the references and the solver agree to rounding */

static fill_leg leg1(double bytes, double weight, double cap, int r) {
  return (fill_leg){.bytes = bytes, .weight = weight, .cap = cap, .nres = 1,
                    .res = {r}};
}

static fill_flow flow1(int first, int nlegs) {
  return (fill_flow){.after = -1, .up = -1, .cap = INFINITY, .first = first,
                     .nlegs = nlegs};
}

static void near(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= REL * fmax(1, fabs(want)), "%s: %.17g vs %.17g",
            what, got, want);
}

/* N flows of sizes s1 < ... < sN on one resource of capacity C, equal
 * weights: flow k leaves at (s1 + ... + sk + (N - k) sk) / C. */
Test(fill, different_sizes_on_one_resource_leave_in_order) {
  double size[5] = {1, 2.5, 3, 7, 11}, C = 2, cap[1] = {C};
  fill_leg l[5];
  fill_flow f[5];
  for (int i = 0; i < 5; i++) l[i] = leg1(size[i], 1, C, 0), f[i] = flow1(i, 1);
  double fin[5], rate[5];
  cr_assert_eq(fill_solve(cap, 1, f, 5, l, fin, rate), 4,
               "every flow but the first speeds up as others leave");
  double before = 0;
  for (int k = 0; k < 5; k++) {
    double want = (before + (5 - k) * size[k]) / C;
    near(fin[k], want, "finish");
    near(rate[k], size[k] / want, "a leg's rate: its bytes over its life");
    before += size[k];
  }
}

Test(fill, weights_share_in_proportion_and_caps_give_back) {
  double cap[1] = {8};
  fill_leg l[2] = {leg1(6, 1, INFINITY, 0), leg1(6, 3, INFINITY, 0)};
  fill_flow f[2] = {flow1(0, 1), flow1(1, 1)};
  double fin[2];
  fill_solve(cap, 1, f, 2, l, fin, NULL);
  near(fin[1], 1, "weight 3 at 6 of 8");     /* 6 bytes at 6/s */
  near(fin[0], 1 + 4.0 / 8, "then alone");   /* 2 sent, 4 left at 8/s */
  l[1].cap = 1; /* below its share: the other takes the rest */
  fill_solve(cap, 1, f, 2, l, fin, NULL);
  near(fin[0], 6.0 / 7, "7 of 8");
  near(fin[1], 6, "its cap");
}

/* One flow of two legs: one alone on a resource of 1, one on a resource
 * of 4 where a second leg of its own also crosses (coefficient 2). */
Test(fill, a_flow_goes_at_its_slowest_leg_and_pays_each_crossing) {
  double cap[2] = {1, 4};
  fill_leg l[3] = {leg1(2, 1, INFINITY, 0), leg1(2, 1, INFINITY, 1),
                   leg1(2, 1, INFINITY, 1)};
  fill_flow f[1] = {flow1(0, 3)};
  double fin[1], rate[3];
  fill_solve(cap, 2, f, 1, l, fin, rate);
  near(fin[0], 2, "its slowest leg: 2 bytes at 1/s");
  cr_assert_eq(fill_solve(cap, 2, f, 1, l, fin, rate), 0, "one rate throughout");
  cap[0] = 10; /* now the shared one binds: 4 bytes through 4/s */
  fill_solve(cap, 2, f, 1, l, fin, rate);
  near(fin[0], 1, "two legs through one resource");
  cr_assert(isinf(rate[0]), "a leg on no saturated resource: its cap (none)");
  near(rate[1], 2, "a binding leg: its bytes over its flow's life");
}

Test(fill, starts_and_predecessors) {
  double cap[1] = {1}; /* each leg alone at most the resource */
  fill_leg l[3] = {leg1(1, 1, 1, 0), leg1(1, 1, 1, 0), leg1(1, 1, 1, 0)};
  fill_flow f[3] = {flow1(0, 1), flow1(1, 1), flow1(2, 1)};
  f[1].start = 0.5; /* alone 0.5 s, then half each */
  f[2].after = 0;   /* after flow 0 */
  double fin[3], rate[3];
  fill_solve(cap, 1, f, 3, l, fin, rate);
  near(fin[0], 1.5, "alone then shared"); /* 0.5 + 0.5 / 0.5 */
  /* from 1.5: flow 1 has 0.5 left, flow 2 1: 0.5 each until 2.5 */
  near(fin[1], 2.5, "started late");
  near(fin[2], 3, "after its predecessor");
  near(rate[2], 1 / 1.5, "over its own life, from its start");
  f[2].nafter = 2; /* after flows 0 and 1 both (a ring after every site's
                      reduce): flow 1 alone from 1.5, done at 2 */
  fill_solve(cap, 1, f, 3, l, fin, rate);
  near(fin[1], 2, "alone once flow 0 is done");
  near(fin[2], 3, "after the last of its predecessors");
  near(rate[2], 1, "alone over its life");
}

/* A tandem: flow 1 forwards what flow 0 delivered. Upstream slower: the
 * downstream is held to it; upstream faster: the downstream goes its own
 * pace and the upstream leaves early. */
Test(fill, a_tandem_never_passes_its_upstream) {
  double cap[2] = {1, 2};
  fill_leg l[2] = {leg1(1, 1, INFINITY, 0), leg1(1, 1, INFINITY, 1)};
  fill_flow f[2] = {flow1(0, 1), flow1(1, 1)};
  f[1].up = 0;
  double fin[2], rate[2];
  fill_solve(cap, 2, f, 2, l, fin, rate);
  near(fin[0], 1, "upstream");
  near(fin[1], 1, "held to it");
  cr_assert(isinf(rate[1]), "its own cap (none) where it fills nothing");
  cap[0] = 4, cap[1] = 1;
  fill_solve(cap, 2, f, 2, l, fin, rate);
  near(fin[0], 0.25, "upstream ahead");
  near(fin[1], 1, "downstream at its own pace");
}

Test(fill, a_resource_of_nothing_never_finishes) {
  double cap[1] = {0};
  fill_leg l[1] = {leg1(1, 1, INFINITY, 0)};
  fill_flow f[1] = {flow1(0, 1)};
  double fin[1], rate[1];
  fill_solve(cap, 1, f, 1, l, fin, rate);
  cr_assert(isinf(fin[0]));
  cr_assert_eq(rate[0], 0);
}

/* A random system: nf flows of 1..3 legs (1 leg when single), each leg on
 * 1..3 distinct resources of nr, bytes 0.1..10, a socket weight (or over
 * an RTT), a cap a third of the time, starts in [0, 2) half the time. */
typedef struct sys {
  int nf, nr, nl;
  double cap[MAXR];
  fill_flow f[MAXF];
  fill_leg l[MAXL];
} sys;

static void random_leg(gsl_rng *g, sys *s, fill_leg *l) {
  l->nres = 1 + (int)gsl_rng_uniform_int(g, FILL_MAXRES);
  if (l->nres > s->nr) l->nres = s->nr;
  for (int j = 0; j < l->nres; j++) {
    int r, dup;
    do {
      r = (int)gsl_rng_uniform_int(g, (unsigned long)s->nr), dup = 0;
      for (int k = 0; k < j; k++) dup |= l->res[k] == r;
    } while (dup);
    l->res[j] = r;
  }
  l->bytes = 0.1 + 10 * gsl_rng_uniform(g);
  double sockets = 1 + (double)gsl_rng_uniform_int(g, 16);
  l->weight = gsl_rng_uniform(g) < 0.5 ? sockets : sockets / (1e-3 + 0.3 * gsl_rng_uniform(g));
  l->cap = gsl_rng_uniform(g) < 0.33 ? 0.05 + 3 * gsl_rng_uniform(g) : INFINITY;
}

static void random_sys(gsl_rng *g, sys *s, bool single) {
  s->nr = 1 + (int)gsl_rng_uniform_int(g, MAXR);
  s->nf = 1 + (int)gsl_rng_uniform_int(g, MAXF);
  s->nl = 0;
  for (int r = 0; r < s->nr; r++) s->cap[r] = 0.5 + 5 * gsl_rng_uniform(g);
  for (int i = 0; i < s->nf; i++) {
    int n = single ? 1 : 1 + (int)gsl_rng_uniform_int(g, 2);
    s->f[i] = flow1(s->nl, n);
    s->f[i].start = gsl_rng_uniform(g) < 0.5 ? 0 : 2 * gsl_rng_uniform(g);
    for (int k = 0; k < n; k++) random_leg(g, s, &s->l[s->nl++]);
  }
}

/* The engine's solver event by event on flows of one leg: each flow a
 * variable of the leg's weight and cap on its resources, solved at every
 * start and departure; finish[] gets when each leaves. */
static void engine_reference(const sys *s, double *finish) {
  sim_maxmin *m = sim_maxmin_new();
  for (int r = 0; r < s->nr; r++) sim_maxmin_res_add(m, s->cap[r]);
  double left[MAXF], t = 0;
  bool on[MAXF] = {false}, done[MAXF] = {false};
  for (int i = 0; i < s->nf; i++) {
    sim_maxmin_var_add(m);
    left[i] = s->l[i].bytes, finish[i] = INFINITY;
  }
  for (;;) {
    for (int i = 0; i < s->nf; i++)
      if (!on[i] && !done[i] && s->f[i].start <= t) {
        const fill_leg *l = &s->l[i];
        sim_maxmin_var_reset(m, (uint32_t)i, l->weight, l->cap);
        for (int j = 0; j < l->nres; j++) sim_maxmin_attach(m, (uint32_t)i, (uint32_t)l->res[j]);
        sim_maxmin_seed(m, (uint32_t)l->res[0]);
        on[i] = true;
      }
    for (int r = 0; r < s->nr; r++) sim_maxmin_seed(m, (uint32_t)r);
    const uint32_t *ids;
    sim_maxmin_solve(m, &ids);
    double next = INFINITY;
    for (int i = 0; i < s->nf; i++) {
      if (on[i] && m->var[i].rate > 0) next = fmin(next, t + left[i] / m->var[i].rate);
      if (!on[i] && !done[i]) next = fmin(next, s->f[i].start);
    }
    if (isinf(next)) break;
    for (int i = 0; i < s->nf; i++) {
      if (!on[i]) continue;
      bool last = t + left[i] / m->var[i].rate <= next;
      left[i] = last ? 0 : left[i] - m->var[i].rate * (next - t);
      if (last || left[i] <= 1e-12 * s->l[i].bytes) {
        sim_maxmin_detach(m, (uint32_t)i);
        on[i] = false, done[i] = true, finish[i] = next;
      }
    }
    t = next;
  }
  sim_maxmin_free(m);
}

/* fill_solve against reference on 300 random systems (one leg per flow
 * when one_leg), every flow's finish within 1e-7 relative. */
static void against_reference(bool one_leg,
                              void (*reference)(const sys *, double *)) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (unsigned long seed = 1; seed <= 300; seed++) {
    gsl_rng_set(g, seed);
    sys s;
    random_sys(g, &s, one_leg);
    double want[MAXF], got[MAXF];
    reference(&s, want);
    fill_solve(s.cap, s.nr, s.f, s.nf, s.l, got, NULL);
    for (int i = 0; i < s.nf; i++)
      cr_assert(fabs(got[i] - want[i]) <= 1e-7 * fmax(1, want[i]) ||
                    (isinf(got[i]) && isinf(want[i])),
                "seed %lu flow %d: %.17g vs %.17g", seed, i, got[i], want[i]);
  }
  gsl_rng_free(g);
}

Test(fill, flows_of_one_leg_match_the_engine_solver_event_by_event) {
  against_reference(true, engine_reference);
}

/* Naive weighted water-filling with coefficients: every unfrozen active
 * flow's progress rate w x L (w: its least leg weight per byte), L raised
 * step by step to the next resource to fill (its legs' bytes x rate) or
 * cap (its own, its legs' over their bytes). */
static void naive_rates(const sys *s, const bool *on, double *rate) {
  bool frozen[MAXF];
  double w[MAXF], cap[MAXF], rem[MAXR];
  for (int r = 0; r < s->nr; r++) rem[r] = s->cap[r];
  for (int i = 0; i < s->nf; i++) {
    const fill_flow *f = &s->f[i];
    w[i] = INFINITY, cap[i] = f->cap, rate[i] = 0, frozen[i] = !on[i];
    for (int k = f->first; k < f->first + f->nlegs; k++) {
      w[i] = fmin(w[i], s->l[k].weight / s->l[k].bytes);
      cap[i] = fmin(cap[i], s->l[k].cap / s->l[k].bytes);
    }
  }
  for (;;) {
    double step = INFINITY, use[MAXR] = {0};
    for (int i = 0; i < s->nf; i++) {
      if (frozen[i]) continue;
      step = fmin(step, (cap[i] - rate[i]) / w[i]);
      for (int k = s->f[i].first; k < s->f[i].first + s->f[i].nlegs; k++)
        for (int j = 0; j < s->l[k].nres; j++) use[s->l[k].res[j]] += s->l[k].bytes * w[i];
    }
    for (int r = 0; r < s->nr; r++)
      if (use[r] > 0) step = fmin(step, fmax(rem[r], 0) / use[r]);
    if (isinf(step)) break;
    for (int i = 0; i < s->nf; i++) {
      if (frozen[i]) continue;
      rate[i] += w[i] * step;
      for (int k = s->f[i].first; k < s->f[i].first + s->f[i].nlegs; k++)
        for (int j = 0; j < s->l[k].nres; j++) rem[s->l[k].res[j]] -= s->l[k].bytes * w[i] * step;
    }
    for (int i = 0; i < s->nf; i++) {
      if (frozen[i]) continue;
      bool bound = rate[i] >= cap[i] * (1 - 1e-12);
      for (int k = s->f[i].first; k < s->f[i].first + s->f[i].nlegs; k++)
        for (int j = 0; j < s->l[k].nres; j++) bound |= rem[s->l[k].res[j]] <= 1e-12 * s->cap[s->l[k].res[j]];
      frozen[i] = bound;
    }
  }
}

/* The naive rates event by event: finish[] of every flow. */
static void naive_reference(const sys *s, double *finish) {
  double left[MAXF], rate[MAXF], t = 0;
  bool on[MAXF] = {false}, done[MAXF] = {false};
  for (int i = 0; i < s->nf; i++) left[i] = 1, finish[i] = INFINITY;
  for (;;) {
    for (int i = 0; i < s->nf; i++) on[i] |= !done[i] && s->f[i].start <= t;
    naive_rates(s, on, rate);
    double next = INFINITY;
    for (int i = 0; i < s->nf; i++) {
      if (on[i] && rate[i] > 0) next = fmin(next, t + left[i] / rate[i]);
      if (!on[i] && !done[i]) next = fmin(next, s->f[i].start);
    }
    if (isinf(next)) break;
    for (int i = 0; i < s->nf; i++) {
      if (!on[i]) continue;
      bool last = t + left[i] / rate[i] <= next;
      left[i] = last ? 0 : left[i] - rate[i] * (next - t);
      if (last || left[i] <= 1e-12) on[i] = false, done[i] = true, finish[i] = next;
    }
    t = next;
  }
}

Test(fill, coupled_flows_match_naive_water_filling_event_by_event) {
  against_reference(false, naive_reference);
}
