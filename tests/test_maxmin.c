/* test_maxmin: the pure max-min solver alone — hand-solved weighted shares,
 * and random systems (weights, caps, one to three resources per variable,
 * a resource of capacity 0) against a naive weighted water-filling of the
 * whole system, after a first solve and after each of a random sequence of
 * changes (a variable leaves or arrives, a capacity, weight or cap moves),
 * each solved as the net solves it: alone when it can, else the component
 * of the seeds; and each resource's list, entry by entry, against naive
 * lists, on few resources with long lists. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdbool.h>

#include "sim/maxmin.h"

#define MAXV 64
#define MAXR 16

/* A system as plain arrays, the reference's input. */
typedef struct ref {
  int nv, nr;
  bool tcp;               /* weights sockets / RTT, not sockets */
  bool on[MAXV];          /* attached: it takes part */
  int nres[MAXV], res[MAXV][SIM_MAXMIN_MAXRES];
  double w[MAXV], cap[MAXV], rcap[MAXR];
} ref;

/* Naive reference: one level L raised for every unfrozen variable (rate
 * w x L), step by step to the next event — a resource saturates or a
 * variable reaches its cap — freezing the variables that event binds. */
static void naive_weighted(const ref *s, double *rate) {
  bool frozen[MAXV];
  double rem[MAXR];
  for (int r = 0; r < s->nr; r++) rem[r] = s->rcap[r];
  for (int v = 0; v < s->nv; v++) rate[v] = 0, frozen[v] = !s->on[v];
  for (;;) {
    double step = INFINITY, wsum[MAXR] = {0};
    for (int v = 0; v < s->nv; v++)
      if (!frozen[v]) {
        for (int j = 0; j < s->nres[v]; j++) wsum[s->res[v][j]] += s->w[v];
        step = fmin(step, (s->cap[v] - rate[v]) / s->w[v]);
      }
    for (int r = 0; r < s->nr; r++)
      if (wsum[r] > 0) step = fmin(step, fmax(rem[r], 0) / wsum[r]);
    if (isinf(step)) return; /* nothing unfrozen */
    for (int v = 0; v < s->nv; v++)
      if (!frozen[v]) {
        rate[v] += s->w[v] * step;
        for (int j = 0; j < s->nres[v]; j++) rem[s->res[v][j]] -= s->w[v] * step;
      }
    for (int v = 0; v < s->nv; v++) {
      if (frozen[v]) continue;
      bool bound = rate[v] >= s->cap[v] * (1 - 1e-12);
      for (int j = 0; j < s->nres[v]; j++)
        bound |= rem[s->res[v][j]] <= 1e-12 * s->rcap[s->res[v][j]];
      frozen[v] = bound;
    }
  }
}

static void check(const sim_maxmin *m, const ref *s, unsigned long seed,
                  int step) {
  double want[MAXV];
  naive_weighted(s, want);
  for (int v = 0; v < s->nv; v++) {
    if (!s->on[v]) continue;
    double got = m->var[v].rate;
    cr_assert(fabs(got - want[v]) <= 1e-9 * fmax(1, want[v]),
              "seed %lu step %d var %d: %.17g vs %.17g", seed, step, v, got,
              want[v]);
  }
}

/* Solves as the net does after a change to v: alone when it can. */
static void solve(sim_maxmin *m, uint32_t v) {
  const uint32_t *ids;
  if (v == SIM_MAXMIN_NONE || !sim_maxmin_solve_alone(m, v))
    sim_maxmin_solve(m, &ids);
}

Test(maxmin, weights_share_one_resource_in_proportion) {
  sim_maxmin *m = sim_maxmin_new();
  uint32_t r = sim_maxmin_res_add(m, 8);
  for (int i = 0; i < 2; i++) {
    uint32_t v = sim_maxmin_var_add(m);
    sim_maxmin_var_reset(m, v, i ? 3 : 1, INFINITY);
    sim_maxmin_attach(m, v, r);
  }
  const uint32_t *ids;
  sim_maxmin_seed(m, r);
  cr_assert_eq(sim_maxmin_solve(m, &ids), 2);
  cr_assert_float_eq(m->var[0].rate, 2, 1e-12);
  cr_assert_float_eq(m->var[1].rate, 6, 1e-12);
  /* a cap below the fair share frees the rest for the other */
  m->var[1].cap = 1;
  sim_maxmin_seed(m, r);
  sim_maxmin_solve(m, &ids);
  cr_assert_float_eq(m->var[0].rate, 7, 1e-12);
  cr_assert_float_eq(m->var[1].rate, 1, 1e-12);
  cr_assert_float_eq(m->var[1].old, 6, 1e-12);
  sim_maxmin_free(m);
}

Test(maxmin, a_seed_no_variable_crosses_solves_nothing) {
  sim_maxmin *m = sim_maxmin_new();
  uint32_t r = sim_maxmin_res_add(m, 1);
  const uint32_t *ids;
  sim_maxmin_seed(m, r);
  cr_assert_eq(sim_maxmin_solve(m, &ids), 0);
  cr_assert_eq(m->solves, 0);
  sim_maxmin_free(m);
}

/* detach_alone takes a variable alone on each of its resources off them
 * without a seed (detach and a solve would find nothing to solve), and
 * refuses, changing nothing, when another shares one or a seed waits. */
Test(maxmin, detach_alone_is_detach_and_an_empty_solve) {
  sim_maxmin *m = sim_maxmin_new();
  uint32_t r0 = sim_maxmin_res_add(m, 4), r1 = sim_maxmin_res_add(m, 2);
  uint32_t a = sim_maxmin_var_add(m), b = sim_maxmin_var_add(m);
  sim_maxmin_attach(m, a, r0);
  sim_maxmin_attach(m, a, r1);
  sim_maxmin_attach(m, b, r1);
  cr_assert(!sim_maxmin_detach_alone(m, a)); /* b shares r1 */
  cr_assert_eq(m->var[a].nres, 2);
  cr_assert_eq(m->res[r1].nvar, 2);
  sim_maxmin_detach(m, b);
  cr_assert_eq(m->nseeds, 1);
  cr_assert(!sim_maxmin_detach_alone(m, a)); /* r1's seed waits */
  const uint32_t *ids;
  cr_assert_eq(sim_maxmin_solve(m, &ids), 1);
  cr_assert_float_eq(m->var[a].rate, 2, 1e-12);
  cr_assert(sim_maxmin_detach_alone(m, a));
  cr_assert_eq(m->var[a].nres, 0);
  cr_assert_eq(m->res[r0].nvar, 0);
  cr_assert_eq(m->res[r1].nvar, 0);
  cr_assert_eq(m->nseeds, 0);
  cr_assert_eq(sim_maxmin_solve(m, &ids), 0);
  sim_maxmin_attach(m, b, r0); /* the emptied lists take a new variable */
  sim_maxmin_seed(m, r0);
  cr_assert(sim_maxmin_solve_alone(m, b));
  cr_assert_float_eq(m->var[b].rate, 4, 1e-12);
  sim_maxmin_free(m);
}

/* A random variable: one to three distinct resources, a weight that is a
 * socket count (1..64) or, in a tcp system, sockets / RTT (RTT 1 us to
 * 300 ms, as the net's weights are), a cap half the time. */
static void random_var(gsl_rng *g, ref *s, sim_maxmin *m, int v) {
  s->nres[v] = 1 + (int)gsl_rng_uniform_int(g, SIM_MAXMIN_MAXRES);
  if (s->nres[v] > s->nr) s->nres[v] = s->nr;
  for (int j = 0; j < s->nres[v]; j++) {
    int r, dup;
    do {
      r = (int)gsl_rng_uniform_int(g, (unsigned long)s->nr);
      dup = 0;
      for (int k = 0; k < j; k++) dup |= s->res[v][k] == r;
    } while (dup);
    s->res[v][j] = r;
  }
  double sockets = 1 + (double)gsl_rng_uniform_int(g, 64);
  s->w[v] = s->tcp ? sockets / (1e3 + gsl_rng_uniform(g) * 3e8) : sockets;
  s->cap[v] = gsl_rng_uniform(g) < 0.5 ? INFINITY : 0.01 + gsl_rng_uniform(g) * 5;
  s->on[v] = true;
  sim_maxmin_var_reset(m, (uint32_t)v, s->w[v], s->cap[v]);
  for (int j = 0; j < s->nres[v]; j++)
    sim_maxmin_attach(m, (uint32_t)v, (uint32_t)s->res[v][j]);
}

/* One random change to s and m, seeded as the net seeds it; returns the
 * variable it touched (the one to try alone) or SIM_MAXMIN_NONE. */
static uint32_t random_change(gsl_rng *g, ref *s, sim_maxmin *m) {
  int v = (int)gsl_rng_uniform_int(g, (unsigned long)s->nv);
  switch (gsl_rng_uniform_int(g, 4)) {
    case 0: /* leaves, or arrives */
      if (s->on[v]) { /* as the net takes a flow off: alone, unseeded */
        if (!sim_maxmin_detach_alone(m, (uint32_t)v))
          sim_maxmin_detach(m, (uint32_t)v);
        s->on[v] = false;
        return SIM_MAXMIN_NONE;
      }
      random_var(g, s, m, v);
      sim_maxmin_seed(m, (uint32_t)s->res[v][0]);
      return (uint32_t)v;
    case 1: { /* a capacity moves (sometimes to 0: a link down) */
      int r = (int)gsl_rng_uniform_int(g, (unsigned long)s->nr);
      s->rcap[r] = gsl_rng_uniform(g) < 0.1 ? 0 : 0.1 + gsl_rng_uniform(g) * 10;
      sim_maxmin_set_cap(m, (uint32_t)r, s->rcap[r]);
      return SIM_MAXMIN_NONE;
    }
    default: /* a weight and a cap move (tcp's window, an RTT) */
      if (!s->on[v]) return SIM_MAXMIN_NONE;
      s->w[v] *= 0.5 + gsl_rng_uniform(g);
      s->cap[v] = gsl_rng_uniform(g) < 0.3 ? INFINITY : 0.01 + gsl_rng_uniform(g) * 5;
      m->var[v].w = s->w[v];
      m->var[v].cap = s->cap[v];
      sim_maxmin_seed(m, (uint32_t)s->res[v][0]);
      return (uint32_t)v;
  }
}

Test(maxmin, random_systems_match_weighted_water_filling) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (unsigned long seed = 1; seed <= 300; seed++) {
    gsl_rng_set(g, seed);
    ref s = {.nr = 1 + (int)gsl_rng_uniform_int(g, MAXR),
             .nv = 1 + (int)gsl_rng_uniform_int(g, MAXV),
             .tcp = seed % 2 == 0};
    sim_maxmin *m = sim_maxmin_new();
    for (int r = 0; r < s.nr; r++) {
      s.rcap[r] = 0.1 + gsl_rng_uniform(g) * 10;
      sim_maxmin_res_add(m, s.rcap[r]);
    }
    for (int v = 0; v < s.nv; v++) {
      sim_maxmin_var_add(m);
      random_var(g, &s, m, v);
    }
    for (int r = 0; r < s.nr; r++) sim_maxmin_seed(m, (uint32_t)r);
    solve(m, SIM_MAXMIN_NONE);
    check(m, &s, seed, 0);
    for (int step = 1; step <= 40; step++) {
      solve(m, random_change(g, &s, m));
      check(m, &s, seed, step);
    }
    sim_maxmin_free(m);
  }
  gsl_rng_free(g);
}

/* sim_maxmin_res_grow's first room for a resource's variables. */
#define FIRST_ROOM 4

/* Each resource's list as the solver keeps it, kept naively: an arrival
 * appends itself to each of its resources' lists, in its resources'
 * order; a leaver's place takes the list's last entry. */
typedef struct lists {
  int n[MAXR], v[MAXR][MAXV];
} lists;

static void lists_attach(lists *l, const ref *s, int v) {
  for (int j = 0; j < s->nres[v]; j++) {
    int r = s->res[v][j];
    l->v[r][l->n[r]++] = v;
  }
}

static void lists_detach(lists *l, const ref *s, int v) {
  for (int j = 0; j < s->nres[v]; j++) {
    int r = s->res[v][j], i = 0;
    while (l->v[r][i] != v) i++;
    l->v[r][i] = l->v[r][--l->n[r]];
  }
}

/* The solver's lists and every variable's pos[] against the naive lists,
 * entry by entry. */
static void check_lists(sim_maxmin *m, const lists *l, const ref *s,
                        unsigned long seed, int step) {
  for (int r = 0; r < s->nr; r++) {
    sim_maxmin_res *x = &m->res[r];
    cr_assert_eq(x->nvar, (uint32_t)l->n[r], "seed %lu step %d res %d", seed,
                 step, r);
    const uint32_t *list = x->var;
    for (int i = 0; i < l->n[r]; i++)
      cr_assert_eq(list[i], (uint32_t)l->v[r][i],
                   "seed %lu step %d res %d entry %d", seed, step, r, i);
  }
  for (int v = 0; v < s->nv; v++) {
    cr_assert_eq(m->var[v].nres, s->on[v] ? s->nres[v] : 0);
    for (int j = 0; s->on[v] && j < s->nres[v]; j++) {
      int r = s->res[v][j];
      cr_assert_eq(l->v[r][m->var[v].pos[j]], v, "seed %lu step %d var %d",
                   seed, step, v);
    }
  }
}

/* Long lists: few resources, many variables arriving and leaving, so that
 * lists grow past their first room (FIRST_ROOM), shrink below it and grow
 * again; after every change the lists equal the naive ones, entry by
 * entry, and the rates the water-filling. */
Test(maxmin, long_lists_keep_their_order_and_rates) {
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  int grown = 0, shrunk = 0;
  for (unsigned long seed = 1; seed <= 60; seed++) {
    gsl_rng_set(g, seed);
    ref s = {.nr = 1 + (int)gsl_rng_uniform_int(g, 3),
             .nv = 2 * FIRST_ROOM +
                   (int)gsl_rng_uniform_int(g, MAXV - 2 * FIRST_ROOM),
             .tcp = seed % 2 == 0};
    lists l = {0};
    bool was_grown[MAXR] = {0};
    sim_maxmin *m = sim_maxmin_new();
    for (int r = 0; r < s.nr; r++) {
      s.rcap[r] = 0.1 + gsl_rng_uniform(g) * 10;
      sim_maxmin_res_add(m, s.rcap[r]);
    }
    for (int v = 0; v < s.nv; v++) sim_maxmin_var_add(m);
    for (int step = 0; step <= 200; step++) {
      int v = (int)gsl_rng_uniform_int(g, (unsigned long)s.nv);
      uint32_t touched = SIM_MAXMIN_NONE;
      if (s.on[v]) { /* leaves as the net takes a flow off */
        if (!sim_maxmin_detach_alone(m, (uint32_t)v))
          sim_maxmin_detach(m, (uint32_t)v);
        lists_detach(&l, &s, v);
        s.on[v] = false;
      } else {
        random_var(g, &s, m, v);
        lists_attach(&l, &s, v);
        sim_maxmin_seed(m, (uint32_t)s.res[v][0]);
        touched = (uint32_t)v;
      }
      solve(m, touched);
      check_lists(m, &l, &s, seed, step);
      check(m, &s, seed, step);
      for (int r = 0; r < s.nr; r++) {
        shrunk += was_grown[r] && l.n[r] > 0 && l.n[r] <= FIRST_ROOM;
        was_grown[r] |= l.n[r] > FIRST_ROOM;
        grown += l.n[r] > FIRST_ROOM;
      }
    }
    sim_maxmin_free(m);
  }
  gsl_rng_free(g);
  cr_assert_gt(grown, 1000); /* lists past their first room */
  cr_assert_gt(shrunk, 100); /* and short again after that */
}
