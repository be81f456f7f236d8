/* test_cli_diloco_runs: DiLoCo's training runs from the command line —
 * a sweep of DiLoCo and streaming DiLoCo runs with faults under every
 * policy stores the same rows and iterations from one process, two forked
 * jobs and two MPI ranks; bad knobs are usage errors that name them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

TestSuite(cli_diloco_runs, .init = support_dir_make,
          .fini = support_dir_remove, .timeout = 600);

static char *dump(const char *db) {
  return support_sql_text(
      db, "SELECT point_key, dp_algo, recovery, total_s, samples_per_s, "
          "lost_s, wan_bytes, outer_step_s, events FROM results ORDER BY "
          "point_key; SELECT r.point_key, i.idx, i.start_s, i.iteration_s, "
          "i.lost_s, i.replicas, i.samples FROM iterations i JOIN results r "
          "ON r.id = i.result_id ORDER BY r.point_key, i.idx");
}

Test(cli_diloco_runs, sweeps_with_faults_are_deterministic_across_jobs_and_mpi) {
  const char *f = support_path("f.csv"), *sw = support_path("d.json");
  support_write_file(f, "t_s,event,target,duration_s,factor\n"
                        "50,device_down,5,60,\n70,link_slow,Tokyo:Seoul,40,"
                        "0.25\n90,device_slow,9,30,0.5\n");
  char text[512];
  snprintf(text, sizeof text,
           "{\"scenarios\": [\"worldwide\"], \"methods\": [\"dtfm-identity\"],"
           " \"networks\": [\"netem\"], \"dp_algo\": [\"diloco\", "
           "\"streaming-diloco\"], \"inner_steps\": 4, \"iterations\": 8, "
           "\"faults\": [\"%s\"], \"recovery\": [\"restart\", \"reroute\", "
           "\"replan\"], \"checkpoint_every\": 4}\n", f);
  support_write_file(sw, text);
  const char *one = support_path("1.db"), *jobs = support_path("2.db"),
             *mpi = support_path("3.db");
  support_sweep_three_ways(sw, "", one, jobs, mpi, dump);
  support_run r = {0};
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM results"), 6);
  cr_expect_eq(support_sql_int(one, "SELECT count(*) FROM iterations"), 12);
  /* reroute lets the others finish the step: less lost than restart */
  cr_expect_gt(support_sql_int(one, "SELECT count(*) FROM results a JOIN "
                                    "results b ON a.dp_algo = b.dp_algo "
                                    "WHERE a.recovery = 'restart' AND "
                                    "b.recovery = 'reroute' AND a.lost_s > "
                                    "b.lost_s"), 0);
  /* a sweep whose iterations are not whole outer steps fails at once */
  snprintf(text, sizeof text,
           "{\"scenarios\": [\"worldwide\"], \"methods\": [\"dtfm-identity\"],"
           " \"dp_algo\": [\"diloco\"], \"inner_steps\": 4, \"iterations\": "
           "6}\n");
  support_write_file(sw, text);
  cr_expect_eq(support_geodes(&r, "sweep '%s' --db '%s'", sw,
                              support_path("bad.db")), 1);
  cr_expect_not_null(strstr(r.err, "must be multiples of inner_steps 4"), "%s",
                     r.err);
  support_run_clear(&r);
}

Test(cli_diloco_runs, knobs_that_are_not_whole_outer_steps_are_usage_errors) {
  support_run r = {0};
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--dp-algo diloco --inner-steps 10 "
                                  "--iterations 55"), 2);
  cr_expect_not_null(strstr(r.err, "--iterations 55 is not a multiple of "
                                   "--inner-steps 10"), "%s", r.err);
  cr_expect_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--dp-algo streaming-diloco --inner-steps 4 "
                                  "--iterations 8 --checkpoint-every 6"), 2);
  cr_expect_not_null(strstr(r.err, "--checkpoint-every 6"), "%s", r.err);
  /* a run of whole outer steps prints them with samples/s and goodput */
  cr_assert_eq(support_geodes(&r, "simulate worldwide --method dtfm-identity "
                                  "--dp-algo diloco --inner-steps 2 "
                                  "--iterations 4 --network ideal"), 0, "%s",
               r.err);
  cr_expect_not_null(strstr(r.out, "2 outer steps"), "%s", r.out);
  cr_expect_not_null(strstr(r.out, "goodput"), "%s", r.out);
  cr_expect_not_null(strstr(r.out, "SAMPLES/S"), "%s", r.out);
  support_run_clear(&r);
}

/* Issue 35, 4: a DiLoCo run with one device_slow fault reported a negative
 * dp_sync_s, and H x inner_step_s above outer_step_s. Each fault below (a
 * device slowed early, late, briefly, for the whole run, and one that ends
 * inside an outer step's first inner step, which gave dp_sync_s -0.512 and
 * 4 x 22.10 > 86.36: sim/stats.c counted the slowed first step H times):
 * dp_sync_s >= 0, per stage too, and the H inner steps fit in the outer
 * step. */
Test(cli_diloco_runs, a_slowed_device_keeps_the_outer_step_whole) {
  static const char *const faults[] = {
      "10,device_slow,9,300,0.5", "0,device_slow,0,1e6,0.1",
      "200,device_slow,63,5,0.9", "55.5,device_slow,17,40,0.01"};
  support_run r = {0};
  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
    const char *f = support_write_file(support_path("slow%zu.csv", i), "");
    FILE *o = fopen(f, "w");
    fprintf(o, "t_s,event,target,duration_s,factor\n%s\n", faults[i]);
    fclose(o);
    for (int streaming = 0; streaming < 2; streaming++) {
      cr_assert_eq(support_geodes(&r, "simulate worldwide --method "
                                  "dtfm-identity --dp-algo %s --inner-steps 4 "
                                  "--iterations 8 --faults '%s' --json",
                                  streaming ? "streaming-diloco --fragments 2"
                                            : "diloco", f),
                   0, "%s: %s", faults[i], r.err);
      const char *at = strstr(r.out, "\"dp_sync_s\":");
      cr_assert_not_null(at, "%s", r.out);
      for (; at; at = strstr(at + 1, "\"dp_sync_s\":"))
        cr_expect_geq(strtod(at + 12, NULL), 0, "%s: %.60s", faults[i], at);
      const char *in = strstr(r.out, "\"inner_step_s\":"),
                 *out = strstr(r.out, "\"outer_step_s\":");
      cr_assert(in && out, "%s", r.out);
      double inner = strtod(in + 15, NULL), outer = strtod(out + 15, NULL);
      cr_expect_leq(4 * inner, outer * (1 + 1e-12), "%s: 4 x %.9g > %.9g",
                    faults[i], inner, outer);
    }
  }
  support_run_clear(&r);
}
