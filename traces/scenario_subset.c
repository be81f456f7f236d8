/* scenario_subset: see scenario_subset.h. Sites keep their order and their
 * index (a site whose devices are all gone keeps zero), so site pairs, the
 * trace and fault targets mean the same in the subset as in the parent. */
#include "traces/scenario_subset.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

scenario *scenario_subset(const scenario *s, const int *keep, int nkeep,
                          int replicas) {
  assert(nkeep > 0 && replicas > 0 && nkeep == replicas * s->workload.stages);
  assert(s->workload.batch % s->workload.replicas == 0);
  scenario *v = mem_alloc(sizeof *v);
  *v = *s;
  v->sites = mem_alloc((size_t)s->nsites * sizeof *v->sites);
  v->device_site = mem_alloc((size_t)nkeep * sizeof *v->device_site);
  int *map = mem_alloc((size_t)s->ndevices * sizeof *map); /* parent -> sub */
  for (int d = 0; d < s->ndevices; d++) map[d] = -1;
  for (int i = 0; i < nkeep; i++) {
    assert(keep[i] >= 0 && keep[i] < s->ndevices && (i == 0 || keep[i] > keep[i - 1]));
    map[keep[i]] = i;
    v->device_site[i] = s->device_site[keep[i]];
  }
  for (int k = 0, i = 0; k < s->nsites; k++) {
    v->sites[k] = s->sites[k];
    v->sites[k].first_device = i;
    while (i < nkeep && v->device_site[i] == k) i++;
    v->sites[k].ndevices = i - v->sites[k].first_device;
  }
  v->ndevices = nkeep;
  v->overrides = mem_alloc(((size_t)s->noverrides + 1) * sizeof *v->overrides);
  v->noverrides = 0;
  for (int i = 0; i < s->noverrides; i++) {
    scenario_override o = s->overrides[i];
    if (map[o.a] < 0 || map[o.b] < 0) continue;
    o.a = map[o.a];
    o.b = map[o.b];
    v->overrides[v->noverrides++] = o;
  }
  v->workload.batch = s->workload.batch / s->workload.replicas * replicas;
  v->workload.replicas = replicas;
  free(map);
  return v;
}

void scenario_subset_free(scenario *sub) {
  if (!sub) return;
  free(sub->sites);
  free(sub->device_site);
  free(sub->overrides);
  free(sub);
}
