/* maxmin: weighted max-min fair sharing (progressive filling) of resource
 * capacities among variables, the pure solver under sim/net.c, as SimGrid's
 * lmm is under its network model: it reads weights, caps and each
 * variable's resources and writes rates; it knows no time, no bytes and no
 * events.
 * Invariant: after a solve every variable of the solved component (the
 * variables and resources reachable from the seeded resources) has its
 * weighted max-min rate — no resource above its capacity, every variable
 * at its own cap or crossing a saturated resource on which no variable has
 * a larger rate per weight — and `old` holds its rate before that solve;
 * variables outside the component keep their rates. */
#ifndef SIM_MAXMIN_H
#define SIM_MAXMIN_H

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

#define SIM_MAXMIN_MAXRES 3 /* resources one variable crosses, at most */
#define SIM_MAXMIN_NONE UINT32_MAX

/* A variable (the net's flow). The owner writes w (> 0) and cap (>= 0,
 * INFINITY: none) and then seeds one of its resources; the solver writes
 * rate and old. rate is in the capacities' unit. */
typedef struct sim_maxmin_var {
  double w, cap, rate, old;
  uint32_t res[SIM_MAXMIN_MAXRES], pos[SIM_MAXMIN_MAXRES];
  uint32_t mark;
  uint8_t nres;
  bool frozen;
} sim_maxmin_var;

/* A resource: its capacity and the variables listed on it (var[pos] for
 * each of their pos[]); the rest is the solver's scratch. */
typedef struct sim_maxmin_res {
  double cap;
  uint32_t *var, nvar, vcap;
  uint32_t mark, ver, unfrozen;
  double rem, wsum;
} sim_maxmin_res;

/* The system. Plain so that the owner's hot paths read var[].rate and
 * res[].cap without a call; every field but those is the solver's. */
typedef struct sim_maxmin {
  sim_maxmin_var *var;
  size_t nvar, var_cap;
  sim_maxmin_res *res;
  size_t nres, res_cap;
  uint32_t *seeds, *cres, *cvar;
  size_t nseeds, seeds_cap, ncres, cres_cap, ncvar, cvar_cap;
  struct sim_maxmin_hent *heap;
  size_t nheap, heap_cap;
  uint32_t epoch;
  uint64_t solves, vars_solved; /* counters: solves, variables visited */
} sim_maxmin;

/* An empty system; free with sim_maxmin_free (NULL is fine). */
sim_maxmin *sim_maxmin_new(void);
void sim_maxmin_free(sim_maxmin *m);

/* A new resource of capacity cap (>= 0). Returns its index. */
uint32_t sim_maxmin_res_add(sim_maxmin *m, double cap);

/* A new variable (index nvar), on no resource. Returns its index; the
 * owner may keep its own records under the same index. */
uint32_t sim_maxmin_var_add(sim_maxmin *m);

/* Resets variable v (on no resource) to weight w, cap cap, rate 0. */
static inline void sim_maxmin_var_reset(sim_maxmin *m, uint32_t v, double w,
                                        double cap) {
  assert(v < m->nvar && m->var[v].nres == 0);
  m->var[v] = (sim_maxmin_var){.w = w, .cap = cap};
}

/* Doubles r's room for variables (sim_maxmin_attach's, when full). */
void sim_maxmin_res_grow(sim_maxmin_res *r);

/* Lists v on resource rid (its next resource; at most SIM_MAXMIN_MAXRES;
 * not one v is on already). Inline: on most flows' starts. */
static inline void sim_maxmin_attach(sim_maxmin *m, uint32_t v, uint32_t rid) {
  sim_maxmin_var *x = &m->var[v];
  sim_maxmin_res *r = &m->res[rid];
  assert(x->nres < SIM_MAXMIN_MAXRES);
#ifndef NDEBUG
  for (int k = 0; k < x->nres; k++) assert(x->res[k] != rid); /* once */
#endif
  if (r->nvar == r->vcap) sim_maxmin_res_grow(r);
  x->pos[x->nres] = r->nvar;
  x->res[x->nres++] = rid;
  r->var[r->nvar++] = v;
}

/* Takes v off all its resources, seeding each for the next solve. */
void sim_maxmin_detach(sim_maxmin *m, uint32_t v);

/* Marks resource r as changed: the next solve re-solves its component.
 * This and the other inline functions below run on every flow's start or
 * end; as calls they cost about 2% of a simulated run. */
static inline void sim_maxmin_seed(sim_maxmin *m, uint32_t r) {
  if (m->nseeds + 1 > m->seeds_cap)
    mem_grow((void **)&m->seeds, &m->seeds_cap, m->nseeds + 1,
             sizeof *m->seeds);
  m->seeds[m->nseeds++] = r;
}

/* Sets r's capacity; seeds r when it changed and some variable crosses it. */
static inline void sim_maxmin_set_cap(sim_maxmin *m, uint32_t r, double cap) {
  assert(cap >= 0);
  if (cap == m->res[r].cap) return;
  m->res[r].cap = cap;
  if (m->res[r].nvar) sim_maxmin_seed(m, r);
}

/* Takes v off its resources when it is alone on each and no seed waits:
 * what sim_maxmin_detach and then a solve do (each list empties, the solve
 * finds no variable on a seed and does nothing), without the seeds. false,
 * doing nothing, otherwise. */
static inline bool sim_maxmin_detach_alone(sim_maxmin *m, uint32_t v) {
  sim_maxmin_var *x = &m->var[v];
  if (m->nseeds) return false;
  for (int j = 0; j < x->nres; j++)
    if (m->res[x->res[j]].nvar != 1) return false;
  for (int j = 0; j < x->nres; j++) m->res[x->res[j]].nvar = 0;
  x->nres = 0;
  return true;
}

/* sim_maxmin_solve past its first test (at least one seed is crossed). */
size_t sim_maxmin_solve_seeded(sim_maxmin *m, const uint32_t **vars);

/* Re-solves the component of the seeded resources and clears the seeds.
 * Returns how many variables it holds (0 when no seed is crossed by one:
 * nothing solved, as after most flows' ends) and points *vars at them
 * (valid until the next call). */
static inline size_t sim_maxmin_solve(sim_maxmin *m, const uint32_t **vars) {
  size_t i = 0;
  while (i < m->nseeds && m->res[m->seeds[i]].nvar == 0) i++;
  if (i == m->nseeds) { /* the change touched no variable */
    m->nseeds = 0;
    return 0;
  }
  return sim_maxmin_solve_seeded(m, vars);
}

/* The solve of a component of one variable x, with the general path's
 * arithmetic: each of its resources offers cap / w, its own cap offers
 * cap / w as well; the general path pushes the cap first and its heap
 * moves an entry up only past a strictly greater key, so on a tie the cap
 * is taken. The solver's; most solves are this one. */
static inline void sim_maxmin_fill_one(sim_maxmin *m, sim_maxmin_var *x) {
  double key = INFINITY;
  for (int j = 0; j < x->nres; j++) {
    double k = m->res[x->res[j]].cap / x->w;
    if (k < key) key = k;
  }
  x->old = x->rate;
  x->frozen = true;
  x->rate = isfinite(x->cap) && x->cap / x->w <= key ? x->cap : x->w * key;
}

/* sim_maxmin_solve when v is alone on each of its resources and every seed
 * is one of them (most flows start on idle resources): the same rates with
 * the same arithmetic, without the search. false, doing nothing, else. */
static inline bool sim_maxmin_solve_alone(sim_maxmin *m, uint32_t v) {
  sim_maxmin_var *x = &m->var[v];
  for (int j = 0; j < x->nres; j++)
    if (m->res[x->res[j]].nvar != 1) return false;
  for (size_t i = 0; i < m->nseeds; i++) {
    int j = 0;
    while (j < x->nres && x->res[j] != m->seeds[i]) j++;
    if (j == x->nres) return false;
  }
  m->nseeds = 0;
  m->solves++;
  m->vars_solved++;
  sim_maxmin_fill_one(m, x);
  return true;
}

#endif
