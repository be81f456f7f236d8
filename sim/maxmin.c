/* maxmin: weighted max-min rates by progressive filling (sim/maxmin.h).
 * A solve collects the component of the seeded resources, then raises the
 * rates of its unfrozen variables together, each in proportion to its
 * weight: a heap holds each resource's fair share per weight (remaining
 * capacity / unfrozen weight) and each variable's cap per weight, and the
 * least entry freezes its variables at that share. Stale resource entries
 * are skipped by version. Cost: O((V + R) log(V + R)) for a component of V
 * variables and R resources; O(resources of v) for sim_maxmin_solve_alone.
 * Invariant: res[r].var lists exactly the variables that cross r, each
 * once, at the index its var's pos[] records. */
#include "sim/maxmin.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The least unfrozen weight a resource's share divides by: progressive
 * filling subtracts each frozen variable's weight from wsum, and rounding
 * may leave a resource with unfrozen variables and a wsum of 0 or a few
 * ulps below; a positive floor far below any real weight (1 per socket, or
 * under tcp sockets / RTT in ns, about 1e-9 for a second's RTT) keeps the
 * share finite and positive. */
#define WSUM_FLOOR 1e-300

typedef struct sim_maxmin_hent {
  double key;
  uint32_t id, ver; /* ver == SIM_MAXMIN_NONE: variable id's cap */
} hent;

/* mem_grow's check inline: the scratch arrays grow on hot paths, and a
 * call per element cost about 8% of a run. */
static inline void reserve(void *items, size_t *cap, size_t need,
                           size_t size) {
  if (need > *cap) mem_grow(items, cap, need, size);
}

sim_maxmin *sim_maxmin_new(void) { return mem_calloc(1, sizeof(sim_maxmin)); }

void sim_maxmin_free(sim_maxmin *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nres; i++) free(m->res[i].var);
  free(m->res);
  free(m->var);
  free(m->seeds);
  free(m->cres);
  free(m->cvar);
  free(m->heap);
  free(m);
}

uint32_t sim_maxmin_res_add(sim_maxmin *m, double cap) {
  assert(cap >= 0);
  mem_grow((void **)&m->res, &m->res_cap, m->nres + 1, sizeof *m->res);
  m->res[m->nres] = (sim_maxmin_res){.cap = cap};
  return (uint32_t)m->nres++;
}

uint32_t sim_maxmin_var_add(sim_maxmin *m) {
  mem_grow((void **)&m->var, &m->var_cap, m->nvar + 1, sizeof *m->var);
  m->var[m->nvar] = (sim_maxmin_var){.w = 1, .cap = INFINITY};
  return (uint32_t)m->nvar++;
}

void sim_maxmin_res_grow(sim_maxmin_res *r) {
  r->vcap = r->vcap ? 2 * r->vcap : 4;
  r->var = mem_realloc(r->var, r->vcap * sizeof *r->var);
}

void sim_maxmin_detach(sim_maxmin *m, uint32_t v) {
  sim_maxmin_var *x = &m->var[v];
  for (int j = 0; j < x->nres; j++) {
    sim_maxmin_res *r = &m->res[x->res[j]];
    assert(r->var[x->pos[j]] == v); /* pos[] is true */
    uint32_t i = x->pos[j], last = r->var[--r->nvar];
    sim_maxmin_seed(m, x->res[j]);
    if (last == v) continue; /* v was the last listed: nothing moves */
    r->var[i] = last;
    sim_maxmin_var *g = &m->var[last];
    for (int k = 0; k < g->nres; k++)
      if (g->res[k] == x->res[j]) { /* a variable is on a resource once */
        g->pos[k] = i;
        break;
      }
  }
  x->nres = 0;
}

/* The heap was reserved by fill for the whole solve. */
static inline void heap_push(sim_maxmin *m, hent e) {
  size_t i = m->nheap++;
  while (i > 0 && m->heap[(i - 1) / 2].key > e.key) {
    m->heap[i] = m->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  m->heap[i] = e;
}

static inline hent heap_pop(sim_maxmin *m) {
  hent top = m->heap[0], x = m->heap[--m->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= m->nheap) break;
    if (c + 1 < m->nheap && m->heap[c + 1].key < m->heap[c].key) c++;
    if (!(m->heap[c].key < x.key)) break;
    m->heap[i] = m->heap[c];
    i = c;
  }
  if (m->nheap) m->heap[i] = x;
  return top;
}

/* Collects the component reachable from the seeds into cres/cvar. */
static void collect(sim_maxmin *m) {
  m->epoch++;
  m->ncres = m->ncvar = 0;
  /* Each resource and variable enters at most once: no growth in loops. */
  reserve((void **)&m->cres, &m->cres_cap, m->nres, sizeof *m->cres);
  reserve((void **)&m->cvar, &m->cvar_cap, m->nvar, sizeof *m->cvar);
  for (size_t i = 0; i < m->nseeds; i++) {
    sim_maxmin_res *r = &m->res[m->seeds[i]];
    if (r->mark == m->epoch) continue;
    r->mark = m->epoch;
    m->cres[m->ncres++] = m->seeds[i];
  }
  m->nseeds = 0;
  for (size_t k = 0; k < m->ncres; k++) {
    sim_maxmin_res *r = &m->res[m->cres[k]];
    for (uint32_t j = 0; j < r->nvar; j++) {
      sim_maxmin_var *x = &m->var[r->var[j]];
      if (x->mark == m->epoch) continue;
      x->mark = m->epoch;
      m->cvar[m->ncvar++] = r->var[j];
      for (int i = 0; i < x->nres; i++) {
        sim_maxmin_res *r2 = &m->res[x->res[i]];
        if (r2->mark == m->epoch) continue;
        r2->mark = m->epoch;
        m->cres[m->ncres++] = x->res[i];
      }
    }
  }
}

static void freeze(sim_maxmin *m, sim_maxmin_var *x, double rate) {
  assert(!x->frozen && rate >= 0);
  x->frozen = true;
  x->rate = rate;
  for (int j = 0; j < x->nres; j++) {
    sim_maxmin_res *r = &m->res[x->res[j]];
    r->rem -= rate;
    r->wsum -= x->w;
    r->unfrozen--;
    r->ver++;
    if (r->unfrozen > 0)
      heap_push(m, (hent){fmax(r->rem, 0) / fmax(r->wsum, WSUM_FLOOR),
                          (uint32_t)(r - m->res), r->ver});
  }
}

/* Sets up the heap of the component: each resource's share, each capped
 * variable's cap, per weight. */
static void fill_start(sim_maxmin *m) {
  m->nheap = 0;
  /* At most one entry per variable and resource, plus one per resource a
   * freeze touches. */
  reserve((void **)&m->heap, &m->heap_cap,
          m->ncvar * (1 + SIM_MAXMIN_MAXRES) + m->ncres, sizeof *m->heap);
  for (size_t k = 0; k < m->ncres; k++) {
    sim_maxmin_res *r = &m->res[m->cres[k]];
    r->rem = r->cap;
    r->wsum = 0;
    r->unfrozen = r->nvar;
    r->ver++;
  }
  for (size_t k = 0; k < m->ncvar; k++) {
    sim_maxmin_var *x = &m->var[m->cvar[k]];
    x->old = x->rate;
    x->frozen = false;
    for (int j = 0; j < x->nres; j++) m->res[x->res[j]].wsum += x->w;
    if (isfinite(x->cap))
      heap_push(m, (hent){x->cap / x->w, m->cvar[k], SIM_MAXMIN_NONE});
  }
  for (size_t k = 0; k < m->ncres; k++) {
    sim_maxmin_res *r = &m->res[m->cres[k]];
    if (r->unfrozen)
      heap_push(m, (hent){r->rem / r->wsum, m->cres[k], r->ver});
  }
}

static void fill(sim_maxmin *m) {
  if (m->ncvar == 1) {
    sim_maxmin_fill_one(m, &m->var[m->cvar[0]]);
    return;
  }
  fill_start(m);
  while (m->nheap) {
    hent e = heap_pop(m);
    if (e.ver == SIM_MAXMIN_NONE) {
      sim_maxmin_var *x = &m->var[e.id];
      if (!x->frozen) freeze(m, x, x->cap);
      continue;
    }
    sim_maxmin_res *r = &m->res[e.id];
    if (e.ver != r->ver || r->unfrozen == 0) continue;
    for (uint32_t j = 0; j < r->nvar; j++) {
      sim_maxmin_var *x = &m->var[r->var[j]];
      if (!x->frozen) freeze(m, x, x->w * e.key);
    }
  }
}

size_t sim_maxmin_solve_seeded(sim_maxmin *m, const uint32_t **vars) {
  collect(m);
  m->solves++;
  m->vars_solved += m->ncvar;
  fill(m);
  *vars = m->cvar;
  return m->ncvar;
}
