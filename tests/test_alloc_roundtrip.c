/* test_alloc_roundtrip: `schedule -o FILE` then `simulate --alloc FILE`
 * gives the same iteration time to the bit for every method, under the
 * even split and under --layers-per-stage balanced (the file carries the
 * shape and the split: issue 20, 4); predict reads the split too; a split
 * that disagrees with the scenario's layers, a shape that is not the
 * scenario's and a --layers-per-stage that contradicts the file are
 * refused with FILE:LINE and exit status 1. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(alloc_roundtrip, .init = support_dir_make,
          .fini = support_dir_remove, .timeout = 600);

/* Three cities of mixed GPUs, 4 stages x 2 replicas, 12 layers: the
 * balanced split differs from the even one. */
static const char MIXED[] =
    "{\"name\": \"mixed\", \"sites\": [\n"
    " {\"name\": \"Oregon\", \"devices\": 4, \"gpu\": \"A100\"},\n"
    " {\"name\": \"Ohio\", \"devices\": 2, \"gpu\": \"V100\"},\n"
    " {\"name\": \"Tokyo\", \"devices\": 2, \"gpu\": \"T4\"}],\n"
    " \"network\": {\"latency_ms\": 20, \"bandwidth_gbps\": 2},\n"
    " \"workload\": {\"model\": \"gpt3-small\", \"layers\": 12, \"batch\": 16,\n"
    " \"micro_batch\": 1, \"stages\": 4, \"replicas\": 2,\n"
    " \"micro_batches_per_pass\": 8}}\n";

/* The number at key of the JSON object r printed. */
static double number(const support_run *r, const char *key) {
  json_t *o = json_loads(r->out, 0, NULL);
  cr_assert_not_null(o, "%s", r->out);
  json_t *v = json_object_get(o, key);
  cr_assert(json_is_number(v), "%s: %s", key, r->out);
  double x = json_number_value(v);
  json_decref(o);
  return x;
}

Test(alloc_roundtrip, every_method_gives_the_same_time) {
  const char *scen = support_write_file(support_path("mixed.json"), MIXED);
  static const char *const methods[] = {
      "dtfm-identity", "megatron", "random", "random-search", "greedy",
      "gcma --population 10", "hybrid --population 10", "sim --starts 1"};
  static const char *const splits[] = {"", "--layers-per-stage balanced"};
  support_run r = {0};
  bool some_uneven = false;
  for (size_t m = 0; m < sizeof methods / sizeof *methods; m++)
    for (int k = 0; k < 2; k++) {
      const char *out = support_path("a%zu_%d.json", m, k);
      cr_assert_eq(support_geodes(&r, "schedule '%s' --method %s --trials 8 "
                                  "--network netem %s -o '%s' --json", scen,
                                  methods[m], splits[k], out),
                   0, "%s: %s", methods[m], r.err);
      double scheduled = number(&r, "iteration_s");
      char *text = support_read_file(out, NULL);
      cr_expect(strstr(text, "\"stages\": 4, \"replicas\": 2"), "%s", text);
      cr_expect(strstr(text, "\"layers_per_stage\": ["), "%s", text);
      some_uneven |= strstr(text, "[3, 3, 3, 3]") == NULL;
      free(text);
      cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --network "
                                  "netem --json", scen, out),
                   0, "%s", r.err);
      double simulated = number(&r, "iteration_s");
      cr_expect(simulated == scheduled, "%s %s: schedule %.17g, simulate "
                "--alloc %.17g", methods[m], splits[k], scheduled, simulated);
      /* the same option again agrees with the file */
      cr_expect_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --network "
                                  "netem %s --json", scen, out, splits[k]),
                   0, "%s", r.err);
      cr_expect_eq(support_geodes(&r, "predict '%s' --alloc '%s' --json",
                                  scen, out), 0, "%s", r.err);
    }
  cr_expect(some_uneven, "the balanced split differs from the even one "
            "somewhere, or the test shows nothing");
  support_run_clear(&r);
}

Test(alloc_roundtrip, bad_splits_and_shapes) {
  const char *scen = support_write_file(support_path("mixed.json"), MIXED);
  static const struct {
    const char *file, *option, *msg;
  } bad[] = {
      {"{\"stages\": 4, \"replicas\": 2,\n \"layers_per_stage\": [3, 3, 3, 4],\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:2: layers_per_stage: they sum to 13, not the run's 12 "
       "layers"},
      {"{\"layers_per_stage\": [6, 6],\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:1: layers_per_stage must be a list of 4 layer counts"},
      {"{\"layers_per_stage\": [6, 0, 3, 3],\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:1: layers_per_stage: entry 1 is not a layer count >= 1"},
      {"{\"stages\": 2, \"replicas\": 4,\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:1: stages: 2, but its pipelines have 4"},
      {"{\"stages\": 4,\n \"replicas\": 4,\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:2: replicas: 4, but its pipelines have 2"},
      {"{\"layers_per_stage\": [6, 2, 2, 2],\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n",
       "--layers-per-stage 3,3,3,3",
       "b.json:1: layers_per_stage [6, 2, 2, 2] disagrees with "
       "--layers-per-stage 3,3,3,3 (which gives [3, 3, 3, 3] here)"},
      {"{\"layerz\": [6, 2, 2, 2],\n"
       " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n", "",
       "b.json:1: unknown key 'layerz'"}};
  support_run r = {0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *f = support_write_file(support_path("b.json"), bad[i].file);
    cr_expect_eq(support_geodes(&r, "simulate '%s' --alloc '%s' %s", scen, f,
                                bad[i].option), 1, "%zu: %s", i, r.err);
    cr_expect(strstr(r.err, bad[i].msg), "%zu: %s", i, r.err);
    cr_expect_eq(support_geodes(&r, "predict '%s' --alloc '%s' %s", scen, f,
                                bad[i].option), 1, "%zu: %s", i, r.err);
    cr_expect(strstr(r.err, bad[i].msg), "%zu: %s", i, r.err);
  }
  /* the split given is the split simulated: an uneven one changes the time */
  const char *even = support_write_file(
      support_path("e.json"), "{\"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n");
  const char *odd = support_write_file(
      support_path("o.json"), "{\"layers_per_stage\": [6, 2, 2, 2],\n"
      " \"pipelines\": [[0, 1, 2, 3], [4, 5, 6, 7]]}\n");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --json "
                              "--layers-per-stage 6,2,2,2", scen, even), 0);
  double given = number(&r, "iteration_s");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --json", scen,
                              odd), 0, "%s", r.err);
  cr_expect(number(&r, "iteration_s") == given);
  support_run_clear(&r);
}

/* The time a reader of an allocation file reports: simulate, explain and
 * the measurements CSV's alloc column (reproduce --data) its simulated
 * iteration, predict its predicted one. */
static double read_back(const char *cmd, const char *scen, const char *file,
                        const char *extra) {
  support_run r = {0};
  double t;
  if (strcmp(cmd, "validate") == 0) { /* the sample's first point */
    cr_assert_eq(support_geodes(&r, "validate '%s' --alloc '%s' --samples 2 "
                                "--json --quiet", scen, file), 0, "%s", r.err);
    json_t *o = json_loads(r.out, 0, NULL);
    json_t *p = json_array_get(json_object_get(o, "points"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(p, "kind")), "alloc");
    t = json_number_value(json_object_get(p, "iteration_s"));
    json_decref(o);
  } else if (strcmp(cmd, "measure") == 0) {
    const char *csv = support_path("m.csv");
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fprintf(f, "scenario,alloc,network,measured_s\n%s,%s,tcp,1\n", scen, file);
    fclose(f);
    cr_assert_eq(support_geodes(&r, "reproduce --data '%s' --json", csv), 0,
                 "measurements CSV: %s", r.err);
    json_t *o = json_loads(r.out, 0, NULL);
    t = json_number_value(json_object_get(
        json_array_get(json_object_get(o, "rows"), 0), "sim_s"));
    json_decref(o);
  } else {
    cr_assert_eq(support_geodes(&r, "%s '%s' --alloc '%s' --json %s", cmd,
                                scen, file, extra), 0, "%s: %s", cmd, r.err);
    t = number(&r, strcmp(cmd, "predict") == 0 ? "predicted_iteration_s"
                                                : "iteration_s");
  }
  support_run_clear(&r);
  return t;
}

/* Issue 33: what schedule -o writes (a method's file with its split, and
 * --shape auto's of another shape and batch, some devices idle) is read by
 * simulate, predict, explain, validate (--alloc, new) and the
 * measurements CSV without the flags it was scheduled with, and gives the
 * time schedule reported. Before: explain and the CSV refused
 * layers_per_stage, simulate ran the scenario's batch and refused a file
 * of another shape. */
Test(alloc_roundtrip, every_reader_takes_what_schedule_writes) {
  const char *scen = support_write_file(support_path("mixed.json"), MIXED);
  const char *out = support_path("g.json"), *shp = support_path("s.json");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "schedule '%s' --method greedy "
                              "--layers-per-stage 6,2,2,2 -o '%s' --json",
                              scen, out), 0, "%s", r.err);
  double want = number(&r, "iteration_s");
  cr_expect(read_back("simulate", scen, out, "") == want);
  cr_expect(read_back("explain", scen, out, "--top 0") == want);
  cr_expect(read_back("measure", scen, out, "") == want);
  cr_expect(read_back("validate", scen, out, "") == want);
  cr_assert_eq(support_geodes(&r, "schedule '%s' --shape auto --quiet "
                              "--micro-batches 2 -o '%s' --json", scen, shp),
               0, "%s", r.err);
  json_t *o = json_loads(r.out, 0, NULL), *b = json_object_get(o, "best");
  double sim_s = json_number_value(json_object_get(b, "simulated_s"));
  double pred_s = json_number_value(json_object_get(b, "predicted_s"));
  cr_assert(json_integer_value(json_object_get(b, "idle")) > 0, "%s", r.out);
  json_decref(o);
  char *text = support_read_file(shp, NULL); /* the scenario's is 1 */
  cr_assert(strstr(text, "\"micro_batch\": 2"), "%s", text);
  free(text);
  cr_expect(read_back("simulate", scen, shp, "") == sim_s);
  cr_expect(read_back("predict", scen, shp, "") == pred_s);
  cr_expect(read_back("explain", scen, shp, "--top 0") == sim_s);
  cr_expect(read_back("measure", scen, shp, "") == sim_s);
  cr_expect(read_back("validate", scen, shp, "") == sim_s);
  support_run_clear(&r);
}

/* A file of every device in another shape (2 x 4 of a 4 x 2 scenario) is
 * the run's shape, as --stages 2 gives it (before: "4 pipelines, expected
 * 2"), with its workload; an option that contradicts the file's workload is refused naming
 * both, a shape option too (a usage error). */
Test(alloc_roundtrip, the_file_carries_its_shape_and_workload) {
  const char *scen = support_write_file(support_path("mixed.json"), MIXED);
  const char *f = support_write_file(
      support_path("tall.json"),
      "{\"stages\": 2, \"replicas\": 4,\n"
      " \"workload\": {\"batch\": 8, \"micro_batch\": 1,\n"
      "              \"dp_algo\": \"ring\"},\n"
      " \"pipelines\": [[0, 1], [2, 3], [4, 5], [6, 7]]}\n");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--stages 2 --batch 8 --micro-batch 1 "
                              "--micro-batches-per-pass 2 --json", scen), 0,
               "%s", r.err);
  double want = number(&r, "iteration_s");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' "
                              "--micro-batches-per-pass 2 --json", scen, f),
               0, "%s", r.err);
  cr_expect(number(&r, "iteration_s") != want, "ring differs from central-ps");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method dtfm-identity "
                              "--stages 2 --batch 8 --micro-batch 1 "
                              "--micro-batches-per-pass 2 --dp-algo ring "
                              "--json", scen), 0, "%s", r.err);
  want = number(&r, "iteration_s");
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' "
                              "--micro-batches-per-pass 2 --json", scen, f),
               0, "%s", r.err);
  cr_expect(number(&r, "iteration_s") == want);
  cr_expect_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --batch 16",
                              scen, f), 1);
  cr_expect(strstr(r.err, "tall.json:2: workload.batch 8 disagrees with the "
                   "run's --batch 16: drop one of them"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "predict '%s' --alloc '%s' --stages 4",
                              scen, f), 2);
  cr_expect(strstr(r.err, "its 4 pipelines of 2 stages disagree with the "
                   "run's --stages 4"), "%s", r.err);
  const char *bad = support_write_file(
      support_path("bad.json"),
      "{\"workload\": {\"batch\": 0},\n \"pipelines\": [[0, 1], [2, 3], "
      "[4, 5], [6, 7]]}\n");
  cr_expect_eq(support_geodes(&r, "simulate '%s' --alloc '%s'", scen, bad), 1);
  cr_expect(strstr(r.err, "bad.json:1: workload.batch: must be in"), "%s",
            r.err);
  support_run_clear(&r);
}
