/* bysite: a cost context's devices by site, for the searches that work on
 * sites rather than devices (greedy's constructions, GCMA over site
 * counts). Without device-pair overrides every edge weight is a function
 * of its endpoints' sites (cost_ctx_site_map), so two devices of one site
 * are interchangeable in every DT-FM score: a partition is then fixed, up
 * to an equal score, by how many devices of each site each group holds.
 * Invariant: dev[start[x] .. start[x+1]) lists site x's devices in
 * increasing order; every device appears once. */
#ifndef SCHEDULES_BYSITE_H
#define SCHEDULES_BYSITE_H

#include "models/cost.h"

typedef struct bysite {
  int n, ns;        /* devices, sites */
  const int *site;  /* n: device -> site (borrowed from the context) */
  int *start;       /* ns + 1 */
  int *dev;         /* n: the devices, site by site */
} bysite;

/* The devices of c by site; NULL when c has device-pair overrides (a
 * device is then not interchangeable with its site's others). Free with
 * bysite_free (NULL is fine). */
bysite *bysite_new(const cost_ctx *c);
void bysite_free(bysite *b);

/* How many devices site x holds. */
static inline int bysite_size(const bysite *b, int x) {
  return b->start[x + 1] - b->start[x];
}

/* The partition of site counts cnt (ng x ns, row-major: cnt[g * ns + x]
 * devices of site x in group g; every column sums to its site's devices,
 * every row to k) as groups, group-major (ng x k): each site's devices in
 * increasing order go to group 0 first, then 1, ...; a group's members in
 * increasing order. */
void bysite_groups(const bysite *b, int ng, int k, const int *cnt,
                   int *groups);

/* The site counts of groups (ng groups of k devices, group-major) into cnt
 * (ng x ns). */
void bysite_counts(const bysite *b, int ng, int k, const int *groups,
                   int *cnt);

#endif
