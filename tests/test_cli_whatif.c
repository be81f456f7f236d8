/* test_cli_whatif: the what-if scales and the setup every output states.
 * --bandwidth-scale 2 (and --latency-scale 0.5) on simulate, predict,
 * schedule and validate give, bit for bit, what a hand-made scenario with
 * doubled bandwidth (halved latency) gives; the outputs say they were
 * scaled; scales out of bounds are usage errors naming the options; every
 * --json and table header states network model, sockets, window, runtime,
 * layer split, schedule and passes. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_whatif, .init = support_dir_make, .fini = support_dir_remove);

/* Three cities of mixed GPUs, one uniform link of latency L ms and
 * bandwidth B Gbit/s. */
static const char *three(const char *file, double lat, double bw) {
  char net[128];
  snprintf(net, sizeof net, "\"latency_ms\": %.17g, \"bandwidth_gbps\": %.17g",
           lat, bw);
  const support_site sites[] = {{.name = "A", .devices = 2, .gpu = "A100"},
                                {.name = "B", .gpu = "V100"},
                                {.name = "C", .gpu = "H100"}};
  return support_build_file(&(support_spec){
      .name = "three", .nsites = 3, .sites = sites, .network = net,
      .workload = "\"model\": \"gpt3-small\", \"batch\": 32, "
                  "\"micro_batch\": 1, \"stages\": 2, \"replicas\": 2",
      .file = file});
}

/* geodes ARGS --json as a JSON object, with the given keys removed. */
static json_t *run_json(const char *args, const char *const *drop) {
  json_t *o = support_geodes_json("%s --json", args);
  for (; drop && *drop; drop++) json_object_del(o, *drop);
  return o;
}

#define SCALES "--bandwidth-scale 2 --latency-scale 0.5"

static void same(const char *cmd, const char *args) {
  const char *base = three("base.json", 20, 1);
  const char *twice = three("twice.json", 10, 2);
  const char *drop[] = {"bandwidth_scale", "latency_scale", NULL};
  char a[512], b[512];
  snprintf(a, sizeof a, "%s '%s' %s " SCALES, cmd, base, args);
  snprintf(b, sizeof b, "%s '%s' %s", cmd, twice, args);
  json_t *x = run_json(a, NULL), *y = run_json(b, NULL);
  cr_expect_eq(json_real_value(json_object_get(x, "bandwidth_scale")), 2.0, "%s", a);
  cr_expect_eq(json_real_value(json_object_get(x, "latency_scale")), 0.5, "%s", a);
  cr_expect_eq(json_real_value(json_object_get(y, "bandwidth_scale")), 1.0);
  for (const char *const *k = drop; *k; k++) json_object_del(x, *k), json_object_del(y, *k);
  char *sx = json_dumps(x, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  char *sy = json_dumps(y, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  cr_expect_str_eq(sx, sy, "%s", cmd);
  free(sx), free(sy);
  json_decref(x), json_decref(y);
}

Test(cli_whatif, simulate_scaled_is_the_doubled_scenario) {
  same("simulate", "--method random");
  same("simulate", "--method megatron --network netem");
}

Test(cli_whatif, predict_schedule_validate_scaled) {
  same("predict", "--method greedy");
  same("schedule", "--method greedy");
  same("validate", "--samples 6");
}

Test(cli_whatif, the_table_says_it_was_scaled) {
  const char *base = three("base.json", 20, 1);
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method random " SCALES, base), 0);
  cr_expect(strstr(r.out, "what-if     every link's bandwidth x 2, latency x 0.5\n"),
            "%s", r.out);
  support_run_clear(&r);
  cr_assert_eq(support_geodes(&r, "simulate '%s' --method random", base), 0);
  cr_expect(!strstr(r.out, "what-if"), "%s", r.out);
  support_run_clear(&r);
}

Test(cli_whatif, scales_out_of_bounds_are_usage_errors) {
  const char *base = three("base.json", 20, 1);
  const char *cmds[] = {"simulate '%s' --method random --bandwidth-scale %s",
                        "predict '%s' --method random --bandwidth-scale %s",
                        "schedule '%s' --method random --bandwidth-scale %s",
                        "validate '%s' --samples 4 --bandwidth-scale %s"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    support_run r = {0};
    char line[256];
    snprintf(line, sizeof line, cmds[i], base, "1e-9");
    cr_expect_eq(support_geodes(&r, "%s", line), 2, "%s", line);
    cr_expect(strstr(r.err, "--bandwidth-scale 1e-09 --latency-scale 1: "),
              "%s", r.err);
    support_run_clear(&r);
    /* the option's range is the row's, lo excluded: 0 is refused by the
     * option table itself, with the words of 2e6's refusal */
    const char *bad[] = {"0", "2e6"};
    for (int b = 0; b < 2; b++) {
      snprintf(line, sizeof line, cmds[i], base, bad[b]);
      cr_expect_eq(support_geodes(&r, "%s", line), 2, "%s", line);
      cr_expect(strstr(r.err, "--bandwidth-scale wants a number in (0, "
                              "1e+06]"), "%s", r.err);
      support_run_clear(&r);
    }
    support_run_clear(&r);
  }
}

/* Every command's --json states the setup, with the effective values. */
Test(cli_whatif, every_json_states_the_setup) {
  const char *base = three("base.json", 20, 1);
  const char *cmds[] = {
      "simulate '%s' --method random --sockets 3 --layers-per-stage 5,7",
      "predict '%s' --method random --sockets 3 --layers-per-stage 5,7",
      "schedule '%s' --method random --sockets 3 --layers-per-stage 5,7",
      "validate '%s' --samples 4 --sockets 3 --layers-per-stage 5,7"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char line[256];
    snprintf(line, sizeof line, cmds[i], base);
    json_t *o = run_json(line, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(o, "network_model")), "tcp", "%s", line);
    cr_expect_eq(json_integer_value(json_object_get(o, "sockets")), 3, "%s", line);
    json_t *t = json_object_get(o, "transport"), *w = json_object_get(o, "workload");
    cr_expect(json_is_number(json_object_get(t, "window_bytes")), "%s", line);
    cr_expect_str_eq(json_string_value(json_object_get(w, "runtime")), "modern");
    /* what the runtime implies, and its optimizer's share of the iteration
     * where one ran (validate states no one allocation's) */
    json_t *rt = json_object_get(o, "runtime");
    cr_expect_str_eq(json_string_value(json_object_get(rt, "optimizer")),
                     "GPU AdamW", "%s", line);
    cr_expect_eq(json_number_value(json_object_get(rt, "bytes_per_param")), 16);
    json_t *share = json_object_get(rt, "optimizer_share");
    cr_expect(i == 3 ? json_is_null(share)
                     : json_number_value(share) > 0 &&
                           json_number_value(share) < 0.5,
              "%s", line);
    cr_expect_str_eq(json_string_value(json_object_get(w, "schedule")), "gpipe");
    cr_expect_str_eq(json_string_value(json_object_get(w, "layer_split")), "given");
    json_t *split = json_object_get(w, "layers_per_stage");
    cr_expect_eq(json_integer_value(json_array_get(split, 0)), 5, "%s", line);
    cr_expect_eq(json_integer_value(json_array_get(split, 1)), 7, "%s", line);
    /* 32 sequences = passes x 2 replicas x 1 x K: K = 16, one pass */
    cr_expect_eq(json_integer_value(json_object_get(w, "micro_batches_per_pass")), 16);
    cr_expect_eq(json_integer_value(json_object_get(w, "passes")), 1);
    json_decref(o);
  }
}

/* Every table's header states the same. */
Test(cli_whatif, every_table_states_the_setup) {
  const char *base = three("base.json", 20, 1);
  const char *cmds[] = {
      "simulate '%s' --method random --micro-batches-per-pass 4",
      "predict '%s' --method random --micro-batches-per-pass 4",
      "schedule '%s' --method random --micro-batches-per-pass 4",
      "validate '%s' --samples 4 --micro-batches-per-pass 4"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char line[256];
    snprintf(line, sizeof line, cmds[i], base);
    support_run r = {0};
    cr_assert_eq(support_geodes(&r, "%s", line), 0, "%s", r.err);
    cr_expect(strstr(r.out, "transport   tcp, path shaping, window 3.15 MB, "
                            "sockets per connection: p2p 1 (1 channel)"),
              "%s", r.out);
    cr_expect(strstr(r.out, i == 3 ? "runtime modern (GPU AdamW, 16 B/param)\n"
                                   : "runtime modern (GPU AdamW, 16 B/param, "
                                     "optimizer "), "%s", r.out);
    cr_expect(i == 3 || strstr(r.out, " % of the iteration)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "workload    gpt3-small, 12 layers split 6,6 "
                            "(even), gpipe, 4 passes x 4 micro-batches of 1, "
                            "central-ps\n"), "%s: %s", line, r.out);
    support_run_clear(&r);
  }
}

/* The small defects of the issue: "1 sockets", and the per-stage table
 * that averaged a 43 s GPU with a 3 s one now shows each stage's range. */
Test(cli_whatif, small_output_defects) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "transfer --latency-ms 1 --bandwidth-gbps 1 "
                              "--bytes 1000 --sockets 1"), 0);
  cr_expect(strstr(r.out, "over 1 socket,"), "%s", r.out);
  support_run_clear(&r);
  cr_assert_eq(support_geodes(&r, "--help"), 0);
  cr_expect(strstr(r.out, "simulate an iteration, or a training run"), "%s", r.out);
  support_run_clear(&r);
  /* stage 0 holds an A100 (replica 0) and a V100 (replica 1) */
  const char *base = three("base.json", 20, 1);
  char line[256];
  snprintf(line, sizeof line, "simulate '%s' --method dtfm-identity", base);
  json_t *o = run_json(line, NULL);
  json_t *st = json_array_get(json_object_get(o, "stages"), 0);
  double lo = json_real_value(json_object_get(st, "utilisation_min"));
  double hi = json_real_value(json_object_get(st, "utilisation_max"));
  cr_expect(lo > 0 && hi > 1.5 * lo, "%g %g", lo, hi);
  json_t *c = json_array_get(json_object_get(o, "link_classes"), 0);
  cr_expect_eq(json_real_value(json_object_get(c, "bytes_per_iteration")),
               json_real_value(json_object_get(c, "bytes")));
  cr_expect_eq(json_integer_value(json_object_get(o, "link_classes_iterations")), 1);
  json_decref(o);
  /* a training run: classes' bytes are totals, bytes_per_iteration means */
  snprintf(line, sizeof line, "simulate '%s' --method dtfm-identity "
           "--iterations 3", base);
  o = run_json(line, NULL);
  c = json_array_get(json_object_get(o, "link_classes"), 0);
  cr_expect_eq(json_integer_value(json_object_get(o, "link_classes_iterations")), 3);
  cr_expect_eq(json_real_value(json_object_get(c, "bytes_per_iteration")),
               json_real_value(json_object_get(c, "bytes")) / 3);
  json_decref(o);
}
