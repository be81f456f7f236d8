/* bysite: see bysite.h. */
#include "schedules/bysite.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

bysite *bysite_new(const cost_ctx *c) {
  int ns;
  const int *site = cost_ctx_site_map(c, &ns);
  if (!site) return NULL;
  bysite *b = mem_alloc(sizeof *b);
  int n = cost_ctx_replicas(c) * cost_ctx_stages(c);
  *b = (bysite){.n = n, .ns = ns, .site = site};
  b->start = mem_calloc((size_t)ns + 1, sizeof *b->start);
  b->dev = mem_alloc((size_t)n * sizeof *b->dev);
  for (int d = 0; d < n; d++) b->start[site[d] + 1]++;
  for (int x = 0; x < ns; x++) b->start[x + 1] += b->start[x];
  int *fill = mem_alloc((size_t)ns * sizeof *fill);
  memcpy(fill, b->start, (size_t)ns * sizeof *fill);
  for (int d = 0; d < n; d++) b->dev[fill[site[d]]++] = d;
  free(fill);
  return b;
}

void bysite_free(bysite *b) {
  if (!b) return;
  free(b->start);
  free(b->dev);
  free(b);
}

void bysite_groups(const bysite *b, int ng, int k, const int *cnt,
                   int *groups) {
  int *label = mem_alloc((size_t)b->n * sizeof *label);
  int *fill = mem_calloc((size_t)ng, sizeof *fill);
  for (int x = 0; x < b->ns; x++) {
    int at = b->start[x];
    for (int g = 0; g < ng; g++)
      for (int i = 0; i < cnt[(size_t)g * b->ns + x]; i++)
        label[b->dev[at++]] = g;
  }
  for (int d = 0; d < b->n; d++) groups[label[d] * k + fill[label[d]]++] = d;
  free(fill);
  free(label);
}

void bysite_counts(const bysite *b, int ng, int k, const int *groups,
                   int *cnt) {
  memset(cnt, 0, (size_t)ng * b->ns * sizeof *cnt);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < k; i++) cnt[(size_t)g * b->ns + b->site[groups[g * k + i]]]++;
}
