/* bill: see bill.h. Sums run in a fixed order (sites, then devices in
 * their order, then pairs as given), so a bill is the same bits for the
 * same use. NAN marks what is not priced and propagates through a sum: a
 * total of a missing part is missing. */
#include "models/bill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/traffic.h"

void bill_free(bill *b) {
  if (!b) return;
  free(b->site);
  free(b->pair);
  *b = (bill){0};
}

bool bill_any_price(const scenario *s) {
  size_t n = (size_t)s->nsites;
  for (size_t i = 0; i < n; i++)
    if (!isnan(s->sites[i].usd_per_gpu_hour)) return true;
  for (size_t a = 0; s->usd_per_gb && a < n; a++)
    for (size_t b = 0; b < n; b++)
      if (a != b && !isnan(s->usd_per_gb[a * n + b])) return true;
  return false;
}

bool bill_egress_complete(const scenario *s) {
  size_t n = (size_t)s->nsites;
  for (size_t a = 0; a < n; a++)
    for (size_t b = 0; b < n; b++)
      if (a != b && isnan(s->usd_per_gb[a * n + b])) return false;
  return true;
}

double bill_compute_usd_per_s(const scenario *s, const int *devices, int n,
                              int *unpriced) {
  double sum = 0;
  if (unpriced) *unpriced = -1;
  int count = devices ? n : s->ndevices;
  for (int i = 0; i < count; i++) {
    int site = s->device_site[devices ? devices[i] : i];
    double p = s->sites[site].usd_per_gpu_hour;
    if (isnan(p) && unpriced && *unpriced < 0) *unpriced = site;
    sum += p / 3600;
  }
  return sum;
}

double bill_cheapest_gpu_hour(const scenario *s, int *site) {
  double best = NAN;
  *site = -1;
  for (int i = 0; i < s->nsites; i++) {
    double p = s->sites[i].usd_per_gpu_hour;
    if (!isnan(p) && (isnan(best) || p < best)) best = p, *site = i;
  }
  return best;
}

typedef struct egress_sum {
  const scenario *s;
  double usd;
  bool unpriced;
} egress_sum;

static void add_egress(void *ctx, int src, int dst, double bytes) {
  egress_sum *x = ctx;
  const scenario *s = x->s;
  double p = s->usd_per_gb[(size_t)s->device_site[src] * s->nsites +
                           s->device_site[dst]];
  if (isnan(p)) x->unpriced = true;
  else x->usd += bytes / BILL_BYTES_PER_GB * p;
}

double bill_egress_usd(const scenario *s, const spec_workload *w,
                       const alloc *a, bool *unpriced) {
  egress_sum x = {.s = s};
  traffic_iteration(w, s, a, add_egress, &x);
  if (unpriced) *unpriced = x.unpriced;
  return x.usd;
}

/* A GPU's power busy and idle at site st: the site's keys, else the
 * table's; NAN where neither states one. */
static void power_of(const scenario_site *st, const spec_gpu *g, double *busy,
                     double *idle) {
  *busy = !isnan(st->board_w) ? st->board_w : g->board_w > 0 ? g->board_w : NAN;
  *idle = !isnan(st->idle_w) ? st->idle_w : g->idle_w > 0 ? g->idle_w : NAN;
}

/* Each held device's hours, dollars and energy into its site's line. */
static void devices(const scenario *s, const spec_gpu *const *gpu,
                    const bill_use *u, bill *b) {
  int n = u->devices ? u->ndevices : s->ndevices;
  for (int i = 0; i < n; i++) {
    int d = u->devices ? u->devices[i] : i, k = s->device_site[d];
    const scenario_site *st = &s->sites[k];
    bill_site *x = &b->site[k];
    double busy = u->busy_s ? fmin(u->busy_s[d], u->held_s) : NAN, pw, iw;
    power_of(st, gpu[d], &pw, &iw);
    double e_busy = busy * pw / BILL_J_PER_KWH;
    x->devices++;
    x->gpu_hours += u->held_s / 3600;
    x->busy_kwh += e_busy;
    x->kwh += e_busy + (u->held_s - busy) * iw / BILL_J_PER_KWH;
  }
  b->devices = n;
}

/* The pairs' bytes and dollars, each billed at its sender's line. */
static void pairs(const scenario *s, const bill_use *u, bill *b) {
  b->pair = mem_calloc((size_t)u->nbytes + 1, sizeof *b->pair);
  for (int i = 0; i < u->nbytes; i++) {
    const bill_bytes *x = &u->bytes[i];
    double p = s->usd_per_gb[(size_t)x->src * s->nsites + x->dst];
    bill_pair *q = &b->pair[b->npairs++];
    *q = (bill_pair){x->src, x->dst, x->bytes, p,
                     x->bytes / BILL_BYTES_PER_GB * p};
    if (x->src == x->dst) continue;
    b->site[x->src].egress_bytes += x->bytes;
    b->site[x->src].egress_usd += q->usd;
  }
}

static int pair_cmp(const void *x, const void *y) {
  const bill_pair *a = x, *b = y;
  double ua = isnan(a->usd) ? -1 : a->usd, ub = isnan(b->usd) ? -1 : b->usd;
  if (ua != ub) return ua > ub ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  if (a->src != b->src) return a->src - b->src;
  return a->dst - b->dst;
}

/* The totals from the sites' lines (NAN where a held site's part is). */
static void totals(const scenario *s, const bill_use *u, bill *b) {
  for (int k = 0; k < s->nsites; k++) {
    bill_site *x = &b->site[k];
    const scenario_site *st = &s->sites[k];
    x->usd = x->gpu_hours * st->usd_per_gpu_hour;
    x->gco2 = x->kwh * st->gco2_per_kwh;
    if (!x->devices) x->usd = x->gco2 = 0;
    b->compute_usd += x->usd, b->egress_usd += x->egress_usd;
    b->busy_kwh += x->busy_kwh, b->kwh += x->kwh, b->gco2 += x->gco2;
    if (x->devices) b->compute_usd_per_hour += x->devices * st->usd_per_gpu_hour;
  }
  b->usd = b->compute_usd + b->egress_usd;
  double hours = u->held_s / 3600;
  b->usd_per_hour = hours > 0 ? b->usd / hours : NAN;
  b->usd_per_1k_samples = u->samples > 0 ? b->usd / u->samples * 1000 : NAN;
  b->egress_share = b->usd > 0 ? b->egress_usd / b->usd : NAN;
  b->lost_usd = u->nlost ? 0 : NAN;
  b->nlost = u->nlost < BILL_MAX_LOST ? u->nlost : BILL_MAX_LOST;
  for (int c = 0; c < b->nlost; c++) {
    b->lost_names[c] = u->lost_names[c];
    b->lost_usd_by[c] = u->lost_s[c] / 3600 * b->compute_usd_per_hour;
    b->lost_usd += b->lost_usd_by[c];
  }
}

int bill_make(const scenario *s, const bill_use *u, bill *out, err *e) {
  *out = (bill){.held_s = u->held_s, .samples = u->samples,
                .any_price = bill_any_price(s), .nsites = s->nsites,
                .busy_known = u->busy_s != NULL};
  const spec_gpu **gpu = mem_alloc((size_t)s->ndevices * sizeof *gpu + 1);
  if (spec_device_gpus(s, gpu, e)) {
    free(gpu);
    return e->code;
  }
  out->site = mem_calloc((size_t)s->nsites, sizeof *out->site);
  devices(s, gpu, u, out);
  pairs(s, u, out);
  qsort(out->pair, (size_t)out->npairs, sizeof *out->pair, pair_cmp);
  totals(s, u, out);
  free(gpu);
  return ERR_OK;
}

static void add_pair(void *ctx, int src, int dst, double bytes) {
  const void *const *x = ctx;
  const scenario *s = x[0];
  double *m = (double *)x[1];
  m[(size_t)s->device_site[src] * s->nsites + s->device_site[dst]] += bytes;
}

bill_bytes *bill_traffic_pairs(const scenario *s, const spec_workload *w,
                               const alloc *a, int *n) {
  size_t ns = (size_t)s->nsites;
  double *m = mem_calloc(ns * ns, sizeof *m);
  const void *ctx[2] = {s, m};
  traffic_iteration(w, s, a, add_pair, ctx);
  bill_bytes *v = mem_alloc(ns * ns * sizeof *v + 1);
  *n = 0;
  for (size_t i = 0; i < ns * ns; i++)
    if (m[i] > 0) v[(*n)++] = (bill_bytes){(int)(i / ns), (int)(i % ns), m[i]};
  free(m);
  return v;
}
