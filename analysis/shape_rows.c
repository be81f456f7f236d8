/* shape_rows: see shape_rows.h. */
#include "analysis/shape_rows.h"

#include <math.h>
#include <stdio.h>

#include "models/alloc.h"

void shape_rows_result(const scenario *s, const shape_config *c,
                       const char *net, bool price, const char *key,
                       db_result *x) {
  db_result_init(x);
  x->key = key, x->study = "shape", x->scenario = s->name, x->method = "shape";
  x->network_model = net, x->seed = (int64_t)s->seed;
  x->layers = s->workload.layers > 0 ? s->workload.layers : -1;
  x->batch = c->batch;
  x->micro_batch = c->micro_batch;
  snprintf(x->dp_algo, sizeof x->dp_algo, "%s", c->dp_algo);
  x->alloc = alloc_text(c->a);
  x->predicted_iteration_s = c->predicted_s;
  x->iteration_s = c->simulated_s;
  x->samples_per_s = c->samples_per_s;
  if (c->fragments) x->fragments = c->fragments;
  double t = shape_decided_s(c); /* the dollars the search judged it by */
  x->usd_per_1k_samples = 1000 * shape_usd_per_sample(c, t);
  x->usd_per_hour = shape_usd_per_hour(c, t);
  if (!price) x->usd_per_1k_samples = x->usd_per_hour = NAN;
}

int shape_rows_put(db *d, int64_t run, const scenario *s,
                   const shape_result *r, const char *net, bool price,
                   err *e) {
  int rc = ERR_OK;
  for (long i = 0; rc == ERR_OK && i < r->nall; i++) {
    char key[96];
    snprintf(key, sizeof key, "shape run=%lld config=%ld", (long long)run, i);
    db_result x;
    shape_rows_result(s, &r->all[i], net, price, key, &x);
    if (db_result_put(d, run, &x, e) < 0) rc = e->code ? e->code : ERR_DB;
    db_result_clear(&x);
  }
  return rc;
}
