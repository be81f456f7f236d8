/* result: see result.h. */
#include "sim/result.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"

void sim_result_free(sim_result *r) {
  if (!r) return;
  free(r->stage);
  free(r->classes);
  free(r->utilisation);
  free(r->site_bytes);
  r->stage = NULL;
  r->classes = NULL;
  r->utilisation = NULL;
  r->site_bytes = NULL;
  r->nsite_bytes = 0;
}

static int class_cmp(const void *x, const void *y) {
  const sim_link_class *a = x, *b = y;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  if (a->src_site != b->src_site) return a->src_site - b->src_site;
  return a->dst_site - b->dst_site;
}

void sim_link_classes_add(sim_link_class **to, int *n, size_t *cap,
                          const sim_link_class *from, int nfrom) {
  for (int i = 0; i < nfrom; i++) {
    const sim_link_class *c = &from[i];
    int k = 0;
    while (k < *n && ((*to)[k].src_site != c->src_site ||
                      (*to)[k].dst_site != c->dst_site))
      k++;
    if (k == *n) {
      mem_grow((void **)to, cap, (size_t)k + 1, sizeof **to);
      (*to)[(*n)++] = (sim_link_class){c->src_site, c->dst_site, 0, 0};
    }
    (*to)[k].bytes += c->bytes;
    (*to)[k].flows += c->flows;
  }
}

void sim_link_classes_sort(sim_link_class *c, int n) {
  if (n > 0) qsort(c, (size_t)n, sizeof *c, class_cmp);
}

void sim_result_stage_range(const sim_result *r, const alloc *a, int st,
                            double *lo, double *hi) {
  *lo = 1, *hi = 0;
  for (int rep = 0; rep < a->replicas; rep++) {
    int d = alloc_at(a, rep, st);
    double u = d < r->ndevices && r->utilisation ? r->utilisation[d] : NAN;
    *lo = fmin(*lo, u), *hi = fmax(*hi, u); /* fmin/fmax skip a NAN */
  }
}
