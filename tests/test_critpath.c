/* test_critpath: the critical path of hand-built runs with known answers —
 * a 2-stage pipeline whose slow link carries the activations (on the path:
 * the transfer's step is latency + bytes / bandwidth to the ns, its cause
 * the link), the same pipeline with a slow link that nothing on the path
 * uses (its what-ifs gain exactly 0), and a data-parallel ring where one
 * hop is slow (the hop tops the path's links and its bandwidth the
 * sensitivities). Every path tiles [0, end] and sums to the iteration. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/critpath.h"
#include "sim/whatif.h"
#include "tests/support.h"

TestSuite(critpath, .init = support_dir_make, .fini = support_dir_remove);

/* A scenario of one V100 per site, the trace rows given ("a,b,lat,bw"
 * lines after the default "*,*"), dp_algo ring, R x D as given. */
static scenario *sites_scenario(const char *name, const char *const *sites,
                                int n, const char *rows, int R, int D) {
  char csv[4096], json[4096], path[64];
  snprintf(csv, sizeof csv,
           "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,1,10\n%s", rows);
  snprintf(path, sizeof path, "%s.csv", name);
  support_write_file(support_path("%s", path), csv);
  int k = snprintf(json, sizeof json, "{\"name\": \"%s\", \"sites\": [", name);
  for (int i = 0; i < n; i++)
    k += snprintf(json + k, sizeof json - (size_t)k,
                  "%s{\"name\": \"%s\", \"devices\": 1, \"gpu\": \"V100\"}",
                  i ? ", " : "", sites[i]);
  snprintf(json + k, sizeof json - (size_t)k,
           "], \"network\": {\"trace\": \"%s\"}, \"workload\": {\"model\": "
           "\"gpt3-xl\", \"layers\": 4, \"batch\": %d, \"micro_batch\": 1, "
           "\"stages\": %d, \"replicas\": %d, \"dp_algo\": \"ring\"}}",
           path, 4 * R, D, R);
  return support_scenario(
      support_write_file(support_path("%s.json", name), json));
}

/* The allocation device r D + d for replica r, stage d. */
static alloc *identity(int R, int D) {
  char text[512];
  int k = snprintf(text, sizeof text, "{\"pipelines\": [");
  for (int r = 0; r < R; r++) {
    k += snprintf(text + k, sizeof text - (size_t)k, "%s[", r ? ", " : "");
    for (int d = 0; d < D; d++)
      k += snprintf(text + k, sizeof text - (size_t)k, "%s%d", d ? ", " : "",
                    r * D + d);
    k += snprintf(text + k, sizeof text - (size_t)k, "]");
  }
  snprintf(text + k, sizeof text - (size_t)k, "]}");
  err e = {ERR_OK, ""};
  alloc *a = alloc_parse(text, strlen(text), "alloc", R, D, R * D, &e);
  cr_assert_not_null(a, "%s", e.msg);
  return a;
}

static sim_options ideal(void) {
  sim_options o = sim_options_default();
  o.transport.model = TRANSPORT_IDEAL;
  return o;
}

/* The path's invariants: steps in time order tiling [0, end], end the
 * iteration, the folds summing to it. */
static void check_tiles(const sim_critpath *cp, const sim_result *r) {
  cr_assert_gt(cp->nsteps, 0);
  cr_assert_eq(cp->steps[0].t0, 0);
  for (size_t i = 1; i < cp->nsteps; i++)
    cr_assert_eq(cp->steps[i].t0, cp->steps[i - 1].t1, "step %zu", i);
  cr_assert_eq(cp->end, r->end_ns);
  double sum = 0;
  for (int p = 0; p < SIM_CP_NPHASES; p++)
    for (int c = 0; c < SIM_CP_NCLASSES; c++) sum += cp->seconds[p][c];
  cr_assert_float_eq(sum, r->iteration_s, 1e-9);
}

static void explain(const scenario *s, const alloc *a, const sim_options *o,
                    sim_result *r, sim_critpath *cp) {
  err e = {ERR_OK, ""};
  cr_assert_eq(sim_whatif_explain(s, a, o, r, cp, NULL, false, &e), ERR_OK, "%s",
               e.msg);
  check_tiles(cp, r);
}

/* The gain of the what-if spec on s under a (ideal). */
static double gain_of(const scenario *s, const alloc *a, const char *spec,
                      double base_s) {
  sim_whatif w;
  err e = {ERR_OK, ""};
  cr_assert_eq(sim_whatif_parse(s, spec, &w, &e), ERR_OK, "%s", e.msg);
  sim_options o = ideal();
  sim_result r;
  cr_assert_eq(sim_whatif_run(s, a, &o, &w, 1, &r, &e), ERR_OK, "%s", e.msg);
  double g = base_s - r.iteration_s;
  sim_result_free(&r);
  return g;
}

static const char *const AB[] = {"a", "b", "c"};

Test(critpath, pipeline_slow_link_on_the_path) {
  scenario *s = sites_scenario("pipe", AB, 2,
                               "0,a,b,20,0.2\n0,b,a,1,10\n", 1, 2);
  alloc *a = identity(1, 2);
  sim_options o = ideal();
  sim_result r;
  sim_critpath cp;
  explain(s, a, &o, &r, &cp);
  cr_assert_geq(cp.nlinks, 1);
  cr_assert_eq(cp.links[0].src_site, 0, "a -> b tops the path's links");
  cr_assert_eq(cp.links[0].dst_site, 1);
  int seen = 0;
  for (size_t i = 0; i < cp.nsteps; i++) {
    const sim_cp_step *x = &cp.steps[i];
    if (x->kind != SIM_TASK_XFER || x->src_site != 0) continue;
    cr_assert_eq(x->phase, SIM_CP_FWD);
    cr_assert_eq(x->cls, SIM_CP_WAN);
    if (x->latency_s == 0) continue; /* a send: ends in the socket buffers */
    /* alone on its private link, to its arrival: latency + ceil(bytes /
     * rate), to the ns */
    int64_t want = llround(20 * 1e6) + (int64_t)ceil(x->bytes / (0.2 / 8));
    int64_t got = x->t1 - x->t0 - llround(x->queue_s * 1e9);
    cr_assert_eq(got, want, "%lld vs %lld", (long long)got, (long long)want);
    cr_assert_eq(x->cause, SIM_CP_CAUSE_LINK);
    seen++;
  }
  cr_assert_eq(seen, 1, "the last activation's arrival is on the path");
  cr_assert_gt(gain_of(s, a, "link:a>b:bw=2", r.iteration_s), 0);
  cr_assert_lt(gain_of(s, a, "link:a>b:bw=0.5", r.iteration_s), 0);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(critpath, pipeline_slow_link_off_the_path) {
  /* Two 2-stage pipelines a -> b and c -> d; stage 0 syncs over the slow
   * a <-> c, stage 1 over b <-> d, which is slow too but done (its sync
   * starts when the last backward ends, stage 0's later) before stage 0's:
   * used, yet off the path. */
  static const char *const S[] = {"a", "b", "c", "d"};
  scenario *s = sites_scenario("off", S, 4,
                               "0,a,b,10,1\n0,b,a,10,1\n0,c,d,10,1\n"
                               "0,d,c,10,1\n0,a,c,30,0.5\n0,c,a,30,0.5\n"
                               "0,b,d,30,1\n0,d,b,30,1\n", 2, 2);
  alloc *a = identity(2, 2);
  sim_options o = ideal();
  sim_result r;
  sim_critpath cp;
  explain(s, a, &o, &r, &cp);
  for (int i = 0; i < cp.nlinks; i++)
    cr_assert(!(cp.links[i].src_site % 2 == 1 && cp.links[i].dst_site % 2 == 1),
              "b <-> d is off the path");
  cr_assert_eq(cp.links[0].src_site % 2, 0, "a <-> c tops it");
  cr_assert_eq(cp.links[0].dst_site % 2, 0);
  cr_assert_eq(gain_of(s, a, "link:b-d:bw=2", r.iteration_s), 0);
  cr_assert_eq(gain_of(s, a, "link:b-d:lat=0.5", r.iteration_s), 0);
  cr_assert_eq(gain_of(s, a, "link:b>d:bw=1.5", r.iteration_s), 0);
  cr_assert_gt(gain_of(s, a, "link:a-c:bw=2", r.iteration_s), 0);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(critpath, dp_ring_bottleneck_hop) {
  static const char *const S[] = {"r0", "r1", "r2", "r3"};
  scenario *s = sites_scenario("ring", S, 4, "0,r1,r2,40,0.2\n", 4, 1);
  alloc *a = identity(4, 1);
  sim_options o = ideal();
  sim_result r;
  sim_critpath cp;
  explain(s, a, &o, &r, &cp);
  cr_assert_eq(cp.links[0].src_site, 1, "the slow hop r1 -> r2 tops it");
  cr_assert_eq(cp.links[0].dst_site, 2);
  double wan = 0;
  for (int c = 0; c < SIM_CP_NCLASSES; c++)
    wan += c == SIM_CP_WAN ? cp.seconds[SIM_CP_DP][c] : 0;
  cr_assert_gt(wan, 0.5 * r.iteration_s, "the sync's transfers hold it");
  sim_sensitivity *v;
  int n;
  err e = {ERR_OK, ""};
  sim_sens_opts q = {.cp = &cp, .top = 3, .base_s = r.iteration_s};
  cr_assert_eq(sim_whatif_sensitivities(s, a, &o, &q, &v, &n, &e),
               ERR_OK, "%s", e.msg);
  cr_assert_gt(n, 0);
  cr_assert_str_eq(v[0].w.label, "link:r1>r2:bw=2");
  cr_assert_gt(v[0].gain_s, 0);
  for (int i = 1; i < n; i++) cr_assert_geq(v[i - 1].gain_s, v[i].gain_s);
  free(v);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* Under tcp a long fat link is bound by the window: sockets x W / RTT. */
Test(critpath, window_bound_under_tcp) {
  scenario *s = sites_scenario("fat", AB, 2,
                               "0,a,b,100,100\n0,b,a,100,100\n", 1, 2);
  alloc *a = identity(1, 2);
  sim_options o = sim_options_default();
  sim_result r;
  sim_critpath cp;
  explain(s, a, &o, &r, &cp);
  int seen = 0;
  for (size_t i = 0; i < cp.nsteps; i++) {
    const sim_cp_step *x = &cp.steps[i];
    if (x->kind != SIM_TASK_XFER || x->latency_s == 0) continue;
    cr_assert_eq(x->cause, SIM_CP_CAUSE_WINDOW, "%s at %g Gbit/s",
                 sim_cp_cause_names[x->cause], x->rate_gbps);
    sim_flow_bounds b =
        sim_critpath_bounds(s, &o.transport, &(sim_task){
            .kind = SIM_TASK_XFER, .dev = x->dev, .dst = x->dst,
            .channels = 1, .bytes = x->bytes, .t_start = x->t0});
    cr_assert_float_eq(x->rate_gbps, b.window_gbps, 1e-3 * b.window_gbps);
    cr_assert_lt(b.window_gbps, 1, "far below the link's 100 Gbit/s");
    seen++;
  }
  cr_assert_gt(seen, 0);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

Test(critpath, causes) {
  sim_flow_bounds b = {.link_gbps = 1, .nic_gbps = INFINITY,
                       .flowcap_gbps = INFINITY, .window_gbps = 0.5,
                       .bound_gbps = 0.5, .least = SIM_CP_CAUSE_WINDOW};
  cr_assert_eq(sim_critpath_cause(&b, 0.5), SIM_CP_CAUSE_WINDOW);
  cr_assert_eq(sim_critpath_cause(&b, 0.495), SIM_CP_CAUSE_WINDOW);
  cr_assert_eq(sim_critpath_cause(&b, 0.4), SIM_CP_CAUSE_SHARED);
  cr_assert_str_eq(sim_cp_cause_names[SIM_CP_CAUSE_FLOWCAP], "flow-cap");
  cr_assert_str_eq(sim_cp_phase_names[SIM_CP_DP], "dp-sync");
}
