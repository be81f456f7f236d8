/* test_harness: the consistency harness (tests/harness.h) in the suite —
 * seeds 1 .. HX_TEST_CASES through the library relations (every
 * HX_TEST_CLI_EVERY-th through the binary's too), no failure allowed, the
 * known disagreements logged; then a fixed-seed case for every defect
 * class the harness found, each a test that failed before its fix. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/harness.h"
#include "tests/support.h"

#define HX_TEST_CASES 300
#define HX_TEST_PARTS 6
#define HX_TEST_CLI_EVERY 10

/* Seeds lo .. hi through the harness; asserts no failure. */
static void sweep(long lo, long hi) {
  static hx_report r;
  hx_report_init(&r);
  for (long k = lo; k <= hi; k++) {
    hx_case c;
    hx_case_gen((uint64_t)k, &c, NULL);
    hx_opts o = {.lib = true, .cli = k % HX_TEST_CLI_EVERY == 0,
                 .dir = support_dir(), .bin = GEODES_BIN};
    hx_check_case(&c, &o, &r);
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  hx_report_write(&r, f);
  fclose(f);
  cr_log_info("%s", text);
  long failed = 0;
  for (int k = 0; k < HX_NRELS; k++) failed += r.n[k][HX_FAIL];
  cr_expect_eq(failed, 0, "seeds %ld .. %ld: %ld failures\n%s", lo, hi,
               failed, text);
  free(text);
}

#define PART(i)                                                          \
  Test(harness, seeds_part_##i, .init = support_dir_make,                \
       .fini = support_dir_remove) {                                     \
    long per = HX_TEST_CASES / HX_TEST_PARTS;                            \
    sweep(1 + (i) * per, ((i) + 1) * per);                               \
  }
PART(0)
PART(1)
PART(2)
PART(3)
PART(4)
PART(5)

/* One seed through the harness (the binary's relations when cli, with
 * --shape auto's file when shape) into r. */
static void seed(uint64_t k, bool cli, bool shape, hx_report *r) {
  hx_report_init(r);
  hx_case c;
  hx_case_gen(k, &c, NULL);
  hx_opts o = {.lib = true, .cli = cli, .shape = shape, .dir = support_dir(),
               .bin = GEODES_BIN};
  hx_check_case(&c, &o, r);
}

/* Seed k's relation rel was checked and held (a defect the harness found,
 * fixed: its case). */
static void holds(uint64_t k, bool cli, bool shape, hx_rel rel) {
  static hx_report r;
  seed(k, cli, shape, &r);
  char desc[600] = "";
  for (int i = 0; i < r.nfind; i++)
    if (r.find[i].rel == rel)
      snprintf(desc, sizeof desc, "%s: %s", r.find[i].klass, r.find[i].msg);
  cr_expect_eq(r.n[rel][HX_FAIL], 0, "seed %llu, %s: %s",
               (unsigned long long)k, hx_rel_names[rel], desc);
  cr_expect_gt(r.n[rel][HX_PASS], 0, "seed %llu: %s was not checked",
               (unsigned long long)k, hx_rel_names[rel]);
}

/* Seed k's relation rel fails as the known class kn (another branch's
 * work, HX_KNOWN_MAP's note): when it is fixed there, this says so. */
static void known(uint64_t k, hx_rel rel, int kn) {
  static hx_report r;
  seed(k, false, false, &r);
  bool seen = false;
  for (int i = 0; i < r.nfind; i++)
    seen |= r.find[i].rel == rel && r.find[i].outcome == HX_KNOWN &&
            r.find[i].known == kn;
  cr_expect(seen, "seed %llu: %s no longer fails as '%s' (%s): move it to "
            "the holding cases", (unsigned long long)k, hx_rel_names[rel],
            hx_known_names[kn], hx_known_notes[kn]);
}

TestSuite(harness_cases, .init = support_dir_make, .fini = support_dir_remove,
          .timeout = 600);

/* explain's NIC (and path) peaks summed mean rates past 100 %: seed 3's
 * shared NIC at 107 %, seed 24's link under path shaping at 122 %. */
Test(harness_cases, utilisation_at_most_one) {
  holds(3, false, false, HX_REL_UTIL);
  holds(24, false, false, HX_REL_UTIL);
}

/* schedule -o's file: explain and the measurements CSV refused its
 * layers_per_stage (seed 20); --shape auto's of some devices: predict and
 * the CSV refused it (400); of every device in another shape: simulate
 * refused it, '6 pipelines, expected 1' (600). */
Test(harness_cases, every_reader_takes_schedules_file) {
  holds(20, true, false, HX_REL_ALLOC_FILE);
  holds(400, true, true, HX_REL_ALLOC_FILE);
  holds(600, true, true, HX_REL_ALLOC_FILE);
}

/* hier-ring gave ring's sync (seed 7: one member per site) and central-ps's
 * (10: one site) without a word; ideal and tcp agreed (4) without one. */
Test(harness_cases, equal_runs_say_why) {
  holds(7, false, false, HX_REL_DPALGO);
  holds(10, false, false, HX_REL_DPALGO);
  holds(4, false, false, HX_REL_NETMODEL);
}

/* Stated to agree, ideal and tcp did not: tcp 4 ns behind (seed 3380, one
 * site, every transfer at its link's rate), each transfer's end the ceil
 * of a quotient an ulp above a whole nanosecond (sim/net_parts.h's
 * net_ceil_ns). */
Test(harness_cases, agreeing_models_agree_to_the_bit) {
  holds(3380, false, false, HX_REL_NETMODEL);
}

/* Megatron took --dp-algo sharded-ps and --schedule gpipe and ran ring and
 * 1F1B (seed 5). */
Test(harness_cases, megatron_refuses_what_it_ignores) {
  holds(5, true, false, HX_REL_OPTION);
}

/* The predictor was off by 28 % on seed 24's shared NICs: the engine's
 * max-min over a phase's flows (models/fill.c) brought it to +4.0 %, past
 * the 2 % it claimed with nothing left out (PREDICT_TOLERANCE); it now
 * names what it leaves out there and holds within the bound it states. */
Test(harness_cases, predictor_shares_a_nic) {
  holds(24, false, false, HX_REL_PREDICT);
}

/* The predictor was off by 5.3 % on seed 22 (hier-ring over 3 sites under
 * path shaping), known as 'predictor: shared path': the phase's counts
 * added the leaders' three parts, which send one after the other
 * (models/hop.c legs_mixed): exact since. */
Test(harness_cases, predictor_hier_ring_parts_apart) {
  holds(22, false, false, HX_REL_PREDICT);
}

/* The predictor was 27.7 % long on seed 155 (DiLoCo, GPipe, 6 replicas
 * over a shared NIC under tcp), 7.9 % on 3070 and 3.3 % on 2246 with
 * nothing left out: it passed DiLoCo's inner steps through one barrier
 * for every replica, where the engine's replicas barrier apart
 * (spec_dp_algo_apart; models/predict.c passes_together); 2.4 % on 1063
 * (streaming DiLoCo, 1F1B, ideal): each replica ended at the slowest
 * replica's barrier, not its own (finish). */
Test(harness_cases, predictor_diloco_replicas_apart) {
  holds(1063, false, false, HX_REL_PREDICT);
  holds(155, false, false, HX_REL_PREDICT);
  holds(3070, false, false, HX_REL_PREDICT);
  holds(2246, false, false, HX_REL_PREDICT);
}

/* 8.9 % short on seed 2105 with nothing left out: a 1F1B stage receives
 * its activation and its gradient through its 1 Gbit/s NIC, but the
 * senders' NICs are as fast, and the gap's predicate asked
 * hop_nic_bound, which names the sender's where both ends bind
 * (models/predict_gap.c binds: either end); 1f1b-sharing now. */
Test(harness_cases, predictor_names_a_nic_bound_at_either_end) {
  holds(2105, false, false, HX_REL_PREDICT);
}

/* 3.7 % short on seed 548 with nothing left out: Megatron's last stage
 * sends its tied embedding's all-reduce beside its gradient to the stage
 * before it through one binding NIC (sync-beside-pass was asked of the
 * data-parallel groups only: predict_gap_ends_beside_pass). */
Test(harness_cases, predictor_names_megatron_ends_beside_pass) {
  holds(548, false, false, HX_REL_PREDICT);
}

/* sharded-ps on 2 x 2 was 3 to 6 % long with nothing left out (seeds
 * 3387 GPipe and 2722, 589 1F1B under ideal; 2680 under tcp): a stage's
 * synchronisation waited for its last pipeline send to be in its socket
 * buffers, but sharded-ps's pieces go on no stream (sim/train.c), so they
 * leave at its last backward (spec_dp_algo_behind_sends). */
Test(harness_cases, predictor_sharded_ps_not_behind_sends) {
  holds(3387, false, false, HX_REL_PREDICT);
  holds(2722, false, false, HX_REL_PREDICT);
  holds(589, false, false, HX_REL_PREDICT);
  holds(2680, false, false, HX_REL_PREDICT);
}

/* 26 % long on seed 2370 with nothing left out: one pipeline of one
 * micro-batch whose two boundaries leave one shared NIC on one path; the
 * phase's counts split them as if they sent at once, but a pass of one
 * micro-batch sends them one after the other (hop_net_whole). */
Test(harness_cases, predictor_one_micro_batch_boundaries_apart) {
  holds(2370, false, false, HX_REL_PREDICT);
}

/* Beyond 2 % with nothing left out: central-ps over 7 members, two of
 * them behind one shared 1 Gbit/s NIC whose ingress carries two hops of
 * the reduce (seed 1929, +6.3 % under netem), and Megatron's ring over
 * shared NICs (230, +8.6 %): the predictor shares the NIC at one rate
 * throughout, the engine gives it to the hops sending (work-conserving,
 * as a chain's chunks fill and drain). Named chain-sharing now, its
 * bound the 8.6 % measured. */
Test(harness_cases, predictor_names_chain_sharing) {
  holds(1929, false, false, HX_REL_PREDICT);
  holds(230, false, false, HX_REL_PREDICT);
}

/* DiLoCo's exchange was 3 to 7 % long with nothing left out (seeds 2827
 * GPipe, 2017 1F1B, 3854 streaming, all under tcp): the predictor started
 * every member's ring after the slowest replica's step and the slowest
 * member's quantisation; the engine's replicas run apart and each member
 * starts its ring from its own step end and quantisation
 * (diloco_exchange_ready). */
Test(harness_cases, predictor_diloco_exchange_from_each_member) {
  holds(2827, false, false, HX_REL_PREDICT);
  holds(2017, false, false, HX_REL_PREDICT);
  holds(3854, false, false, HX_REL_PREDICT);
}

/* 32.8 % long on seed 7090 with nothing left out: one 8-stage GPipe
 * pipeline of 5 micro-batches whose boundaries leave one shared NIC on
 * one path; the fluid tandem shares them as if they sent at once
 * throughout, where a pass of a few micro-batches sends them partly one
 * after the other. Named pass-boundaries now (its bound that case). */
Test(harness_cases, predictor_names_pass_boundaries) {
  holds(7090, false, false, HX_REL_PREDICT);
}

/* 4.1 % short on seeds 2934 and 1643 with nothing left out (ring,
 * exact under ideal, as far off under netem): a stage's ring beside its
 * pass's last transfers on a NIC that neither binds alone (2934: 10
 * Gbit/s, the ring's two channels at 10, a boundary at the 5 Gbit/s flow
 * cap) but that cannot carry both at once; sync-beside-pass asked that
 * the NIC bind each alone, now that it cannot carry them together. */
Test(harness_cases, predictor_names_sync_crowding_a_nic) {
  holds(2934, false, false, HX_REL_PREDICT);
  holds(1643, false, false, HX_REL_PREDICT);
}

/* hier-ring under tcp 2 to 16 % short with nothing left out (seeds 8805
 * -15.9 %, 6141, 6023, 9960, 6994, 8680; within 2 % under netem): a
 * site's leader starts its broadcast when it has the ring's result, while
 * its own last ring message is still leaving its socket buffers; on its
 * NIC tcp's shares, weighted by round trip, starve that message, and the
 * next leader gets the result late (models/dpsync.c tails_beside). */
Test(harness_cases, predictor_hier_ring_tail_beside_broadcast) {
  holds(8805, false, false, HX_REL_PREDICT);
  holds(6141, false, false, HX_REL_PREDICT);
  holds(6023, false, false, HX_REL_PREDICT);
  holds(9960, false, false, HX_REL_PREDICT);
  holds(6994, false, false, HX_REL_PREDICT);
  holds(8680, false, false, HX_REL_PREDICT);
}

/* 4.3 % long on seed 5878 with nothing left out (2 stages x 1 replica,
 * hier-ring, 1F1B under tcp): the optimizer waited for the stage's last
 * pipeline send to be in its buffers, as a group's messages queue behind
 * it; a replica alone syncs nothing and steps at its last backward
 * (sim/train.c sync_stages: no sync_group below two). */
Test(harness_cases, predictor_one_replica_not_behind_sends) {
  holds(5878, false, false, HX_REL_PREDICT);
}

/* One 1F1B pipeline, nothing left out: 6.0 % short on seed 4853 (its
 * first and last stages behind one shared 1 Gbit/s NIC) and 4.0 % on
 * 6209 (two boundaries on one path under path shaping): the activation
 * out of one stage and the gradient out of another cross one NIC or
 * path at once; 1f1b-sharing asked a stage's own two boundaries only,
 * now any two that cannot share it at their own rates. */
Test(harness_cases, predictor_names_boundaries_sharing_a_nic) {
  holds(4853, false, false, HX_REL_PREDICT);
  holds(6209, false, false, HX_REL_PREDICT);
}

/* GPipe passes of two micro-batches, nothing left out: 13.5 % long on
 * seed 6173 (DiLoCo, netem) and 5.6 % on 7940 (central-ps, tcp), two
 * pipelines' boundaries on one shared NIC: the fluid tandem shares them
 * as if they sent throughout, as pass-boundaries says of one pipeline's;
 * it now counts several pipelines' boundaries on one resource too. */
Test(harness_cases, predictor_names_pipelines_boundaries_together) {
  holds(6173, false, false, HX_REL_PREDICT);
  holds(7940, false, false, HX_REL_PREDICT);
}

/* 4.2 % short on seed 543 under tcp with nothing left out (GPipe, ring
 * over path shaping; named under netem): another replica's ring hop and
 * this pipeline's gradient into one device cross one 0.21 Gbit/s path
 * (Lima to Oslo) at once; sync-beside-pass asked the device's NIC only,
 * now the path too. */
Test(harness_cases, predictor_names_sync_beside_pass_on_a_path) {
  holds(543, false, false, HX_REL_PREDICT);
}

/* Known (HX_KNOWN_MAP): a speed what-if under a balanced split (116);
 * held transfers off the critical path (443); central-ps and ring over two
 * members bound by one window (9458). */
Test(harness_cases, known_disagreements) {
  known(116, HX_REL_WHATIF, HX_KNOWN_WHATIF_SPEED_BALANCED);
  known(443, HX_REL_NETMODEL, HX_KNOWN_NETMODEL_OFF_PATH);
  known(9458, HX_REL_DPALGO, HX_KNOWN_DPALGO_TWO_MEMBERS);
}

/* 2.8 % long on seed 657 with nothing left out (streaming DiLoCo, two
 * fragments, replicas of unequal GPUs under tcp): the predictor restarted
 * every replica when the last member had the exchange's result, where the
 * engine's replicas each go on from their own (the slow replica has its
 * result early in the ring's last pass, and the fast ones' late results
 * hide behind its longer inner step: diloco_exchange_land). 3854 (within
 * 0.2 % before, exact since) needs the rest: a ring member is done once
 * its socket has taken its last message, not once that message starts
 * sending, and the next fragment's ring sends on a connection only after
 * the last message of the exchange before has left it (dpsync_run_left). */
Test(harness_cases, predictor_diloco_replicas_on_from_their_own_result) {
  holds(657, false, false, HX_REL_PREDICT);
  holds(3854, false, false, HX_REL_PREDICT);
}
