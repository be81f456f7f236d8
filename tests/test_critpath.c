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
  char csv[4096], net[128], w[256], path[64], file[64];
  snprintf(csv, sizeof csv,
           "t_s,src,dst,latency_ms,bandwidth_gbps\n0,*,*,1,10\n%s", rows);
  snprintf(path, sizeof path, "%s.csv", name);
  support_write_file(support_path("%s", path), csv);
  snprintf(net, sizeof net, "\"trace\": \"%s\"", path);
  snprintf(file, sizeof file, "%s.json", name);
  snprintf(w, sizeof w, "\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": %d, \"replicas\": %d, "
           "\"dp_algo\": \"ring\"", 4 * R, D, R);
  return support_build(&(support_spec){.name = name, .nsites = n,
                                       .names = sites, .network = net,
                                       .workload = w, .file = file});
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
  err e = {0};
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
  err e = {0};
  cr_assert_eq(sim_whatif_explain(s, a, o, r, cp, NULL, false, &e), ERR_OK,
               "%s", e.msg);
  check_tiles(cp, r);
}

/* The gain of the what-if spec on s under a (ideal). */
static double gain_of(const scenario *s, const alloc *a, const char *spec,
                      double base_s) {
  sim_whatif w;
  err e = {0};
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
  err e = {0};
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

/* Two sites of R V100 each, path shaping, 1.45 MB hosts and one socket
 * per connection (a newcomer's hosts), a 45 ms link of bw Gbit/s between
 * them with `keys` added (e.g. a loss), R 2-stage pipelines across it. */
static scenario *wan_scenario_of(const char *name, const char *keys, int R,
                                 double bw) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"name\": \"%s\", \"sites\": ["
           "{\"name\": \"east\", \"devices\": %d, \"gpu\": \"V100\", "
           "\"tcp_window_bytes\": 1.45e6, \"nccl_sockets\": 1}, "
           "{\"name\": \"west\", \"devices\": %d, \"gpu\": \"V100\", "
           "\"tcp_window_bytes\": 1.45e6, \"nccl_sockets\": 1}], "
           "\"network\": {\"shaping\": \"path\", \"latency_ms\": 1, "
           "\"bandwidth_gbps\": 10, \"links\": [{\"between\": [\"east\", "
           "\"west\"], \"latency_ms\": 45, \"bandwidth_gbps\": %g%s}]}, "
           "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": 4, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": 2, \"replicas\": %d, "
           "\"runtime\": \"dtfm\"}}",
           name, R, R, bw, keys, 4 * R, R);
  return support_scenario(
      support_write_file(support_path("%s.json", name), json));
}

/* One pipeline over a 10 Gbit/s link. */
static scenario *wan_scenario(const char *name, const char *keys) {
  return wan_scenario_of(name, keys, 1, 10);
}

/* The WAN steps of cp: each names `want`, sends included (their stream's
 * cause), with the link's latency and round trip; returns how many. */
static int wan_causes(const sim_critpath *cp, sim_cp_cause want) {
  int n = 0;
  for (size_t i = 0; i < cp->nsteps; i++) {
    const sim_cp_step *x = &cp->steps[i];
    if (x->kind != SIM_TASK_XFER || x->cls != SIM_CP_WAN) continue;
    cr_assert_eq(x->cause, want, "step %zu (%s): %s", i,
                 x->send ? "send" : "arrival", sim_cp_cause_names[x->cause]);
    cr_assert_eq(x->link_latency_s, 0.045, "the link's latency, sends too");
    cr_assert_float_eq(x->rtt_s, 0.09, 1e-12);
    cr_assert_eq(x->window_bytes, 1.45e6);
    cr_assert_eq(x->sockets, 1);
    n++;
  }
  return n;
}

/* A run of a WAN case under tcp, explained. */
typedef struct wan_run {
  scenario *s;
  alloc *a;
  sim_options o;
  sim_result r;
  sim_critpath cp;
} wan_run;

static void wan_explain(wan_run *w, scenario *s, alloc *a) {
  *w = (wan_run){.s = s, .a = a, .o = sim_options_default()};
  explain(s, a, &w->o, &w->r, &w->cp);
}

/* The sensitivities of w's top resource (free). */
static sim_sensitivity *wan_sens(const wan_run *w, int *n) {
  sim_sensitivity *v;
  err e = {0};
  sim_sens_opts q = {.cp = &w->cp, .top = 1, .base_s = w->r.iteration_s};
  cr_assert_eq(sim_whatif_sensitivities(w->s, w->a, &w->o, &q, &v, n, &e),
               ERR_OK, "%s", e.msg);
  return v;
}

/* Every WAN step of w bound at gbps. */
static void wan_bounds(const wan_run *w, double gbps, const char *what) {
  for (size_t i = 0; i < w->cp.nsteps; i++)
    if (w->cp.steps[i].cls == SIM_CP_WAN)
      cr_assert_float_eq(w->cp.steps[i].bound_gbps, gbps, 1e-9 * gbps, "%s",
                         what);
}

static void wan_free(wan_run *w) {
  sim_critpath_free(&w->cp);
  sim_result_free(&w->r);
  alloc_free(w->a);
  scenario_free(w->s);
}

/* A window-bound WAN: every step across names `window` (the sends too,
 * which end in the socket buffers: before, `send-buffer`), its bound is
 * one window per RTT, and the window's fixes rank above bandwidth x2,
 * which gains nothing. */
Test(critpath, window_bound_names_window_and_ranks_its_fixes) {
  wan_run w;
  wan_explain(&w, wan_scenario("newcomer", ""), identity(1, 2));
  int sends = 0;
  for (size_t i = 0; i < w.cp.nsteps; i++)
    sends += w.cp.steps[i].send && w.cp.steps[i].cls == SIM_CP_WAN;
  cr_assert_gt(sends, 0, "sends are on the path");
  cr_assert_gt(wan_causes(&w.cp, SIM_CP_CAUSE_WINDOW), sends);
  wan_bounds(&w, 8 * 1.45e6 / 0.09e9, "one 1.45 MB window per 90 ms");
  cr_assert_eq(sim_critpath_link_cause(&w.cp.links[0]), SIM_CP_CAUSE_WINDOW);
  int n, bw2 = -1, window = -1, sockets = -1, flow = -1;
  sim_sensitivity *v = wan_sens(&w, &n);
  for (int i = 0; i < n; i++) {
    const char *l = v[i].w.label;
    if (strstr(l, ":bw=2")) bw2 = i;
    if (window < 0 && strstr(l, "link:east>west:window=")) window = i;
    if (strstr(l, "site:west:sockets=2")) sockets = i;
    if (strstr(l, "link:east>west:flow=")) flow = i;
    cr_assert_eq(v[i].link, 0, "%s: made for east>west", l);
  }
  cr_assert(bw2 >= 0 && window >= 0 && sockets >= 0 && flow >= 0);
  cr_assert_str_eq(v[window].w.label, "link:east>west:window=112500000",
                   "the path's bandwidth-delay product, 10 Gbit/s x 90 ms: %s",
                   v[window].w.label);
  double base = w.r.iteration_s;
  cr_assert_lt(window, bw2, "a window what-if ranks above bandwidth x2");
  cr_assert_gt(v[window].gain_s, 0.25 * base);
  cr_assert_lt(fabs(v[bw2].gain_s), 1e-3 * base, "bw x2: ~0");
  cr_assert_gt(v[sockets].gain_s, v[bw2].gain_s + 0.05 * base);
  cr_assert_gt(v[flow].gain_s, v[bw2].gain_s + 0.05 * base);
  free(v);
  wan_free(&w);
}

/* A lossy WAN: the loss bound (Padhye) holds each socket below its window,
 * and the steps name `loss`; more sockets help, a larger window is not
 * offered (it would not). */
Test(critpath, loss_bound_names_loss) {
  wan_run w;
  wan_explain(&w, wan_scenario("lossy", ", \"loss\": 0.01"), identity(1, 2));
  cr_assert_gt(wan_causes(&w.cp, SIM_CP_CAUSE_LOSS), 0);
  double rtt = 0.09, p = 0.01;
  double padhye = 1448 / (rtt * sqrt(2 * p / 3) +
                          (rtt + 0.2) * fmin(1, 3 * sqrt(3 * p / 8)) * p *
                              (1 + 32 * p * p));
  wan_bounds(&w, 8 * padhye * 1e-9, "one socket at the loss bound");
  int n;
  sim_sensitivity *v = wan_sens(&w, &n);
  bool sockets = false;
  for (int i = 0; i < n; i++) {
    cr_assert_null(strstr(v[i].w.label, "window="), "%s", v[i].w.label);
    cr_assert_null(strstr(v[i].w.label, "flow="), "%s", v[i].w.label);
    if (strstr(v[i].w.label, "site:west:sockets=2")) {
      sockets = true;
      cr_assert_gt(v[i].gain_s, 0.1 * w.r.iteration_s, "two loss bounds");
    }
  }
  cr_assert(sockets);
  free(v);
  wan_free(&w);
}

/* `geodes explain` on the window-bound WAN: the table names the window and
 * the link's latency, its first sensitivity is a window what-if; --json
 * carries the causes (steps, links) and what each what-if was made for. */
Test(critpath, explain_cli_window_bound) {
  scenario *s = wan_scenario("cli_wan", "");
  scenario_free(s);
  support_write_file(support_path("cli_wan_alloc.json"),
                     "{\"pipelines\": [[0, 1]]}");
  support_run r = {0};
  const char *cmd = "explain '%s' --alloc '%s' --top 1%s";
  cr_assert_eq(support_geodes(&r, cmd, support_path("cli_wan.json"),
                              support_path("cli_wan_alloc.json"), ""),
               0, "%s", r.err);
  cr_assert(strstr(r.out, "(window: 1 x 1.45 MB per 0.09 s RTT = 0.1289 "
                          "Gbit/s), latency 0.045 s (RTT 0.09 s)"), "%s", r.out);
  cr_assert_null(strstr(r.out, "send-buffer"), "%s", r.out);
  cr_assert(strstr(r.out, "east           -> west              2.1277 s  45.0 %"
                          "      0.034 GB in 4 steps; window 2.128 s"),
            "%s", r.out);
  const char *first = strstr(r.out, "GAIN_S  FOR (ITS CAUSE ON THE PATH)\n");
  cr_assert_not_null(first, "%s", r.out);
  cr_assert(!strncmp(strchr(first, '\n') + 1,
                     "  link:east>west:window=112500000", 33), "%s", first);
  cr_assert_eq(support_geodes(&r, cmd, support_path("cli_wan.json"),
                              support_path("cli_wan_alloc.json"), " --json"),
               0, "%s", r.err);
  const char *want[] = {
      "\"cause\":\"window\",\"send\":true", "\"link_latency_s\":0.045",
      "\"rtt_s\":0.09000000000000001", "\"window_bytes\":1450000.0",
      "\"causes\":{\"window\":", "{\"what_if\":\"link:east>west:window="
      "112500000\",\"iteration_s\":", "\"resource\":\"east>west\","
      "\"cause\":\"window\"}"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_assert(strstr(r.out, want[i]), "%s in %s", want[i], r.out);
  support_run_clear(&r);
}

/* Two pipelines east -> west over one path of 0.2 Gbit/s, less than their
 * two windows' 2 x 0.129: each flow stays below its own bounds, the path
 * runs full, and the steps across name `link` with the path's rate. */
Test(critpath, full_path_names_link) {
  char text[] = "{\"pipelines\": [[0, 2], [1, 3]]}";
  err e = {0};
  alloc *a = alloc_parse(text, strlen(text), "alloc", 2, 2, 4, &e);
  cr_assert_not_null(a, "%s", e.msg);
  wan_run w;
  wan_explain(&w, wan_scenario_of("full", "", 2, 0.2), a);
  int full = 0;
  for (size_t i = 0; i < w.cp.nsteps; i++) {
    const sim_cp_step *x = &w.cp.steps[i];
    if (x->cls != SIM_CP_WAN || x->cause != SIM_CP_CAUSE_LINK) continue;
    cr_assert_lt(x->stream_gbps, 0.99 * x->bound_gbps, "below its window");
    cr_assert_float_eq(x->path_gbps, 0.2, 0.02 * 0.2, "the path full");
    full++;
  }
  cr_assert_gt(full, 0, "steps bound by the shared path");
  cr_assert_eq(sim_critpath_link_cause(&w.cp.links[0]), SIM_CP_CAUSE_LINK);
  wan_free(&w);
}

/* The cut of the show longest steps against a full sort (the naive
 * reference), with ties, on hand-made steps of 1..9 s. */
static int descending(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

Test(critpath, cut_of_the_longest_steps_against_a_sort) {
  static const int secs[] = {3, 9, 1, 4, 4, 7, 2, 9, 5, 4};
  enum { N = sizeof secs / sizeof *secs };
  sim_cp_step steps[N];
  double sorted[N];
  for (int i = 0; i < N; i++) {
    steps[i] = (sim_cp_step){.t0 = i * 100000000000LL,
                             .t1 = i * 100000000000LL + secs[i] * 1000000000LL};
    sorted[i] = secs[i];
  }
  qsort(sorted, N, sizeof *sorted, descending);
  sim_critpath cp = {.nsteps = N, .steps = steps};
  for (size_t show = 1; show <= N + 2; show++) {
    double want = show < N ? sorted[show - 1] : 0;
    cr_assert_float_eq(sim_critpath_cut_s(&cp, show), want, 1e-12,
                       "show %zu", show);
    size_t kept = 0; /* the steps the cut keeps: the show longest, ties too */
    for (int i = 0; i < N; i++)
      kept += sim_critpath_step_s(&steps[i]) >= sim_critpath_cut_s(&cp, show);
    cr_assert_geq(kept, show < N ? show : N);
  }
  cr_assert_float_eq(sim_critpath_step_s(&steps[1]), 9, 1e-12);
}

Test(critpath, link_causes_longest_first_against_a_selection) {
  unsigned seed = 7;
  for (int trial = 0; trial < 500; trial++) {
    sim_cp_link l = {0};
    for (int c = 0; c < SIM_CP_NCAUSES; c++) { /* zeros and ties */
      seed = seed * 1103515245u + 12345u;
      l.cause_s[c] = (double)((seed >> 16) % 4);
    }
    int got[SIM_CP_NCAUSES], n = sim_critpath_link_causes(&l, got);
    /* the naive reference: pick the longest not yet picked, the first of
     * equals, until none with seconds is left */
    bool done[SIM_CP_NCAUSES] = {false};
    int k = 0;
    for (;; k++) {
      int best = -1;
      for (int c = 0; c < SIM_CP_NCAUSES; c++)
        if (!done[c] && l.cause_s[c] > 0 &&
            (best < 0 || l.cause_s[c] > l.cause_s[best]))
          best = c;
      if (best < 0) break;
      done[best] = true;
      cr_assert_lt(k, n);
      cr_assert_eq(got[k], best, "trial %d, place %d", trial, k);
    }
    cr_assert_eq(n, k);
    if (n) cr_assert_eq(got[0], (int)sim_critpath_link_cause(&l));
  }
}

Test(critpath, margins_are_the_row_and_column_sums) {
  sim_critpath cp = {0};
  for (int p = 0; p < SIM_CP_NPHASES; p++)
    for (int c = 0; c < SIM_CP_NCLASSES; c++)
      cp.seconds[p][c] = (p % 2) ? 0 : 0.1 * (p + 1) + 0.01 * c;
  double row[SIM_CP_NPHASES], col[SIM_CP_NCLASSES];
  double all = sim_critpath_margins(&cp, row, col), want_all = 0;
  for (int p = 0; p < SIM_CP_NPHASES; p++) {
    double r = 0;
    for (int c = 0; c < SIM_CP_NCLASSES; c++) r += cp.seconds[p][c];
    cr_assert_eq(row[p], r);
    want_all += r;
  }
  for (int c = 0; c < SIM_CP_NCLASSES; c++) {
    double s = 0;
    for (int p = 0; p < SIM_CP_NPHASES; p++) s += cp.seconds[p][c];
    cr_assert_eq(col[c], s);
  }
  cr_assert_eq(all, want_all);
}
