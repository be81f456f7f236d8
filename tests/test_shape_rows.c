/* test_shape_rows: a shape search's configurations as rows of the results
 * store — each field against the configuration it comes from, the dollars
 * against their closed form at the deciding time (the simulated one, else
 * the predicted), absent without prices; and every configuration stored
 * once under its run and index. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "analysis/shape_rows.h"
#include "tests/support.h"

TestSuite(shape_rows, .init = support_dir_make, .fini = support_dir_remove);

/* Two configurations of 4 devices: 2 x 2 simulated, and 4 x 1 of
 * streaming DiLoCo with 2 fragments, predicted only. */
static void two_configs(shape_config c[2]) {
  c[0] = (shape_config){.stages = 2, .replicas = 2, .micro_batch = 1,
                        .batch = 8, .dp_algo = "ring", .ndev = 4,
                        .a = alloc_identity(2, 2), .predicted_s = 2.0,
                        .simulated_s = 2.5, .samples_per_s = 3.2,
                        .usd_per_s = 0.01, .egress_usd = 0.5};
  c[1] = (shape_config){.stages = 4, .replicas = 1, .micro_batch = 2,
                        .batch = 16, .dp_algo = "streaming-diloco",
                        .fragments = 2, .ndev = 4, .a = alloc_identity(1, 4),
                        .predicted_s = 4.0, .simulated_s = NAN,
                        .samples_per_s = 4.0, .usd_per_s = 0.02,
                        .egress_usd = 0};
}

/* 2 sites of 2 devices, 12 layers in 2 x 2. */
static scenario *four_devices(void) {
  return support_build(&(support_spec){
      .nsites = 2, .site = {.devices = 2},
      .workload = "\"model\": \"gpt3-small\", \"layers\": 12, "
                  "\"batch\": 8, \"micro_batch\": 1, \"stages\": 2, "
                  "\"replicas\": 2"});
}

Test(shape_rows, each_field_from_its_configuration) {
  scenario *s = four_devices();
  shape_config c[2];
  two_configs(c);
  for (int i = 0; i < 2; i++)
    for (int price = 0; price < 2; price++) {
      db_result x;
      shape_rows_result(s, &c[i], "tcp", price, "k", &x);
      cr_assert_str_eq(x.key, "k");
      cr_assert_str_eq(x.study, "shape");
      cr_assert_str_eq(x.method, "shape");
      cr_assert_str_eq(x.scenario, s->name);
      cr_assert_str_eq(x.network_model, "tcp");
      cr_assert_eq(x.seed, (int64_t)s->seed);
      cr_assert_eq(x.layers, 12);
      cr_assert_eq(x.batch, c[i].batch);
      cr_assert_eq(x.micro_batch, c[i].micro_batch);
      cr_assert_str_eq(x.dp_algo, c[i].dp_algo);
      cr_assert_eq(x.fragments, i ? 2 : -1);
      char *want = alloc_text(c[i].a);
      cr_assert_str_eq(x.alloc, want);
      free(want);
      cr_assert_eq(x.predicted_iteration_s, c[i].predicted_s);
      cr_assert(i ? isnan(x.iteration_s) : x.iteration_s == 2.5);
      cr_assert_eq(x.samples_per_s, c[i].samples_per_s);
      double t = i ? 4.0 : 2.5; /* the simulated time, else the predicted */
      double per_1k = 1000 * (c[i].usd_per_s * t + c[i].egress_usd) /
                      c[i].batch;
      double per_h = 3600 * (c[i].usd_per_s + c[i].egress_usd / t);
      if (price) {
        cr_assert_float_eq(x.usd_per_1k_samples, per_1k, 1e-12);
        cr_assert_float_eq(x.usd_per_hour, per_h, 1e-12);
      } else {
        cr_assert(isnan(x.usd_per_1k_samples) && isnan(x.usd_per_hour));
      }
      db_result_clear(&x);
    }
  alloc_free(c[0].a), alloc_free(c[1].a);
  scenario_free(s);
}

Test(shape_rows, every_configuration_once_under_its_run) {
  scenario *s = four_devices();
  shape_config c[2];
  two_configs(c);
  shape_result r = {.all = c, .nall = 2};
  const char *path = support_path("shape.db");
  err e;
  err_clear(&e);
  db *d = db_open(path, &e);
  cr_assert_not_null(d, "%s", e.msg);
  int64_t run = db_run_begin(d, &(db_run){.command = "test", .seed = -1}, &e);
  cr_assert_gt(run, 0, "%s", e.msg);
  cr_assert_eq(shape_rows_put(d, run, s, &r, "netem", true, &e), ERR_OK, "%s",
               e.msg);
  db_close(d);
  cr_assert_eq(support_sql_int(path, "SELECT count(*) FROM results"), 2);
  char q[160];
  for (int i = 0; i < 2; i++) {
    snprintf(q, sizeof q, "SELECT batch FROM results WHERE point_key = "
             "'shape run=%lld config=%d'", (long long)run, i);
    cr_assert_eq(support_sql_int(path, q), c[i].batch);
  }
  cr_assert_eq(support_sql_int(path, "SELECT count(*) FROM results WHERE "
                               "network_model = 'netem' AND study = 'shape'"),
               2);
  alloc_free(c[0].a), alloc_free(c[1].a);
  scenario_free(s);
}
