/* test_linkstats: link and NIC utilisation of hand-made task records with
 * known answers — a connection's messages back to back on the wire, each
 * ending a latency before it arrives; bytes, busy time, mean and peak
 * utilisation, the rate's change points, the CSV's rows per step — and on
 * an engine run: every resource's rate integrates to its bytes. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/linkstats.h"
#include "sim/whatif.h"
#include "tests/support.h"

TestSuite(linkstats, .init = support_dir_make, .fini = support_dir_remove);

/* Sites a and b of one device each: 1 us one way, 8 Gbit/s (1 byte/ns),
 * NICs of 100 Gbit/s. */
static scenario *two_sites(void) {
  return support_scenario(support_write_file(
      support_path("two.json"),
      "{\"name\": \"two\", \"sites\": [{\"name\": \"a\", \"devices\": 1, "
      "\"gpu\": \"V100\", \"nic_gbps\": 100}, {\"name\": \"b\", \"devices\": "
      "1, \"gpu\": \"V100\", \"nic_gbps\": 100}], \"network\": "
      "{\"latency_ms\": 0.001, \"bandwidth_gbps\": 8}, \"workload\": "
      "{\"model\": \"gpt3-xl\", \"layers\": 2, \"batch\": 1, \"micro_batch\": "
      "1, \"stages\": 2, \"replicas\": 1}}"));
}

/* a -> b: 1000 B from 0 (on the wire [0, 1000)), 500 B issued at 100 but
 * behind it ([1000, 1500)); b -> a: 2000 B [0, 2000). */
static const sim_task T[] = {
    {.kind = SIM_TASK_COMPUTE, .dev = 0, .dst = -1, .t_start = 0,
     .t_left = 50, .t_done = 50},
    {.kind = SIM_TASK_XFER, .dev = 0, .dst = 1, .channels = 1, .bytes = 1000,
     .t_start = 0, .t_left = 900, .t_done = 2000},
    {.kind = SIM_TASK_XFER, .dev = 0, .dst = 1, .channels = 1, .bytes = 500,
     .t_start = 100, .t_left = 1200, .t_done = 2500},
    {.kind = SIM_TASK_XFER, .dev = 1, .dst = 0, .channels = 1, .bytes = 2000,
     .t_start = 0, .t_left = 1900, .t_done = 3000},
};

static const sim_ls_res *find(const sim_linkstats *ls, sim_ls_kind k, int a,
                              int b) {
  for (int i = 0; i < ls->nres; i++)
    if (ls->res[i].kind == k && ls->res[i].a == a && ls->res[i].b == b)
      return &ls->res[i];
  cr_assert_fail("no resource %d %d %d", k, a, b);
  return NULL;
}

Test(linkstats, wire_spans) {
  scenario *s = two_sites();
  int64_t w0[4], w1[4];
  sim_linkstats_wire(s, T, 4, w0, w1);
  cr_assert(w0[0] == -1 && w1[0] == -1, "a compute has none");
  cr_assert(w0[1] == 0 && w1[1] == 1000);
  cr_assert(w0[2] == 1000 && w1[2] == 1500, "behind the first: %lld %lld",
            (long long)w0[2], (long long)w1[2]);
  cr_assert(w0[3] == 0 && w1[3] == 2000);
  scenario_free(s);
}

Test(linkstats, hand_made) {
  scenario *s = two_sites();
  transport_options o = transport_options_default();
  sim_linkstats ls;
  sim_linkstats_build(s, &o, T, 4, 0, 3000, NULL, &ls);
  cr_assert_eq(ls.nres, 2 + 4, "two links, two NICs each way");
  const sim_ls_res *ab = find(&ls, SIM_LS_LINK, 0, 1);
  cr_assert_float_eq(ab->bytes, 1500, 1e-9);
  cr_assert_float_eq(ab->busy_s, 1500e-9, 1e-18);
  cr_assert_float_eq(ab->capacity_gbps, 8, 1e-12);
  cr_assert_float_eq(ab->mean_util, 0.5, 1e-12);
  cr_assert_float_eq(ab->peak_util, 1, 1e-12);
  cr_assert_eq(ab->npts, 3, "0: 8, 1000: 8 (one ends, one starts), 1500: 0");
  cr_assert(ab->t[0] == 0 && ab->t[1] == 1000 && ab->t[2] == 1500);
  cr_assert(ab->inflight[1] == 1 && ab->inflight[2] == 0);
  cr_assert_eq(ab->rate_gbps[2], 0);
  const sim_ls_res *out0 = find(&ls, SIM_LS_NIC_OUT, 0, -1);
  cr_assert_float_eq(out0->bytes, 1500, 1e-9);
  cr_assert_float_eq(out0->peak_util, 0.08, 1e-12);
  cr_assert_float_eq(find(&ls, SIM_LS_NIC_IN, 0, -1)->bytes, 2000, 1e-9);
  const char *path = support_path("ls.csv");
  err e = {0};
  cr_assert_eq(sim_linkstats_csv(&ls, s, 1e-6, path, &e), ERR_OK, "%s", e.msg);
  char *csv = support_read_file(path, NULL);
  const char *head =
      "t_s,kind,resource,src,dst,bytes,rate_gbps,utilisation,flows\n";
  cr_assert(!strncmp(csv, head, strlen(head)), "%s", csv);
  cr_assert(strstr(csv, "\n0,link,a>b,a,b,1000,8,1,1\n"), "%s", csv);
  cr_assert(strstr(csv, "\n1e-06,link,a>b,a,b,500,4,0.5,0.5\n"), "%s", csv);
  cr_assert(!strstr(csv, "2e-06,link,a>b"), "an idle step has no row");
  free(csv);
  sim_linkstats_free(&ls);
  o.model = TRANSPORT_IDEAL;
  sim_linkstats_build(s, &o, T, 4, 0, 3000, NULL, &ls);
  cr_assert_eq(ls.nres, 2, "ideal: no NIC limits");
  sim_linkstats_free(&ls);
  cr_assert_eq(sim_linkstats_csv(&ls, s, 1, "/nonexistent/x.csv", &e), ERR_IO);
  cr_assert_str_eq(e.msg, "/nonexistent/x.csv: cannot write the link "
                   "statistics: No such file or directory");
  scenario_free(s);
}

/* An engine run of worldwide: every resource's rate, integrated between
 * its change points, gives back its bytes. */
Test(linkstats, rates_integrate_to_bytes) {
  scenario *s = support_scenario("worldwide");
  char text[2048];
  int k = snprintf(text, sizeof text, "{\"pipelines\": [");
  for (int r = 0; r < 8; r++)
    for (int d = 0; d < 8; d++)
      k += snprintf(text + k, sizeof text - (size_t)k, "%s%d%s",
                    d ? ", " : r ? ", [" : "[", 8 * r + d, d == 7 ? "]" : "");
  snprintf(text + k, sizeof text - (size_t)k, "]}");
  err e = {0};
  alloc *a = alloc_parse(text, strlen(text), "alloc", 8, 8, 64, &e);
  cr_assert_not_null(a, "%s", e.msg);
  sim_options o = sim_options_default();
  sim_result r;
  sim_critpath cp;
  sim_linkstats ls;
  cr_assert_eq(sim_whatif_explain(s, a, &o, &r, &cp, &ls, true, &e), ERR_OK,
               "%s", e.msg);
  cr_assert_gt(ls.nres, 8);
  double all = 0;
  for (int i = 0; i < ls.nres; i++) {
    const sim_ls_res *x = &ls.res[i];
    double integral = 0;
    for (size_t j = 0; j + 1 < x->npts; j++)
      integral += x->rate_gbps[j] / 8 * (double)(x->t[j + 1] - x->t[j]);
    cr_assert(fabs(integral - x->bytes) <= 1e-6 * x->bytes + 1,
              "resource %d: %.17g vs %.17g", i, integral, x->bytes);
    cr_assert(x->mean_util >= 0 && x->mean_util <= x->peak_util + 1e-12);
    if (x->kind == SIM_LS_LINK) all += x->bytes;
  }
  cr_assert_float_eq(all, r.pp_bytes + r.dp_bytes, 1e-6 * all);
  sim_linkstats_free(&ls);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* End to end: `geodes explain --link-stats` writes the CSV sim/cli/USAGE.md
 * documents, and `plot.py --links` draws it (no database needed). */
Test(linkstats, explain_csv_and_plot, .timeout = 120) {
  scenario *s = two_sites();
  scenario_free(s);
  support_write_file(support_path("two_alloc.json"), "{\"pipelines\": [[0, 1]]}");
  const char *csv = support_path("two.csv");
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "explain '%s' --alloc '%s' --top 1 "
                                  "--link-stats '%s' --resolution-s 0.01",
                              support_path("two.json"),
                              support_path("two_alloc.json"), csv),
               0, "%s", r.err);
  cr_assert(strstr(r.out, "critical path"), "%s", r.out);
  char *text = support_read_file(csv, NULL);
  cr_assert(strstr(text, ",link,a>b,a,b,"), "%s", text);
  free(text);
  cr_assert_eq(support_geodes(&r, "explain '%s' --alloc '%s' --link-stats "
                                  "/nonexistent/x.csv",
                              support_path("two.json"),
                              support_path("two_alloc.json")),
               1, "%s", r.err);
  cr_assert_eq(support_sh(&r, "'%s/analysis/plot.py' --links '%s' --out '%s'",
                          GEODES_SOURCE_DIR, csv, support_path("png")),
               0, "%s", r.err);
  FILE *f = fopen(support_path("png/links.png"), "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  cr_assert_gt(ftell(f), 10000);
  fclose(f);
  support_run_clear(&r);
}

Test(linkstats, too_fine_a_resolution) {
  scenario *s = two_sites();
  transport_options o = transport_options_default();
  sim_linkstats ls;
  sim_linkstats_build(s, &o, T, 4, 0, 3000, NULL, &ls);
  ls.t1 = 2000000000; /* 2 s */
  err e = {0};
  cr_assert_eq(sim_linkstats_csv(&ls, s, 1e-6, support_path("fine.csv"), &e),
               ERR_RANGE);
  cr_assert(strstr(e.msg, "2000000 steps, more than 1000000"), "%s", e.msg);
  sim_linkstats_free(&ls);
  scenario_free(s);
}

/* Issue 35, 5: --resolution-s without --link-stats was ignored; it is a
 * usage error naming both. */
Test(linkstats, a_resolution_without_its_file_is_refused) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "explain worldwide --method dtfm-identity "
                              "--resolution-s 0.5"), 2, "%s", r.err);
  cr_expect(strstr(r.err, "geodes explain: --resolution-s 0.5 is "
                   "--link-stats' step: give --link-stats FILE, or leave it "
                   "out\n"), "%s", r.err);
  cr_assert_eq(r.out_len, 0u);
  support_run_clear(&r);
}

/* A site pair's capacity under each shaping (issue 31): sites a = {0, 1}
 * and b = {2, 3}, 8 Gbit/s everywhere. Devices 0 and 1 send to 2: under tc
 * two shapers, 16 Gbit/s; under path one path, 8. Inside a: 0 -> 1 and
 * 1 -> 0 under path are two private links (16), under tc two senders (16);
 * 2 -> 3 twice (1 and 2 channels), one private link (8) and one shaper
 * (8). Ideal, either shaping: a private link per connection (16, 16, 16:
 * issue 33, it counted shapers). */
Test(linkstats, capacity_follows_the_shaping) {
  static const sim_task X[] = {
      {.kind = SIM_TASK_XFER, .dev = 0, .dst = 2, .channels = 1, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000},
      {.kind = SIM_TASK_XFER, .dev = 1, .dst = 2, .channels = 1, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000},
      {.kind = SIM_TASK_XFER, .dev = 0, .dst = 1, .channels = 1, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000},
      {.kind = SIM_TASK_XFER, .dev = 1, .dst = 0, .channels = 1, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000},
      {.kind = SIM_TASK_XFER, .dev = 2, .dst = 3, .channels = 1, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000},
      {.kind = SIM_TASK_XFER, .dev = 2, .dst = 3, .channels = 2, .bytes = 1000,
       .t_start = 0, .t_left = 900, .t_done = 2000}};
  const char *text =
      "{\"name\": \"four\", \"sites\": [{\"name\": \"a\", \"devices\": 2}, "
      "{\"name\": \"b\", \"devices\": 2}], \"network\": {\"shaping\": \"%s\", "
      "\"latency_ms\": 0.001, \"bandwidth_gbps\": 8}, \"workload\": "
      "{\"model\": \"gpt3-xl\", \"layers\": 2, \"batch\": 2, \"micro_batch\": "
      "1, \"stages\": 2, \"replicas\": 2}}";
  const double want[4][3] = {{16, 16, 8}, {8, 16, 8},    /* tc, path */
                             {16, 16, 16}, {16, 16, 16}}; /* ideal */
  for (int p = 0; p < 4; p++) {
    char json[1024];
    snprintf(json, sizeof json, text, p % 2 ? "path" : "tc");
    scenario *s = support_scenario(support_write_file(support_path("f.json"),
                                                      json));
    transport_options o = transport_options_default();
    if (p >= 2) o.model = TRANSPORT_IDEAL;
    sim_linkstats ls;
    sim_linkstats_build(s, &o, X, 6, 0, 3000, NULL, &ls);
    cr_expect_float_eq(find(&ls, SIM_LS_LINK, 0, 1)->capacity_gbps, want[p][0],
                       1e-12, "%d a > b", p);
    cr_expect_float_eq(find(&ls, SIM_LS_LINK, 0, 0)->capacity_gbps, want[p][1],
                       1e-12, "%d a > a", p);
    cr_expect_float_eq(find(&ls, SIM_LS_LINK, 1, 1)->capacity_gbps, want[p][2],
                       1e-12, "%d b > b", p);
    sim_linkstats_free(&ls);
    scenario_free(s);
  }
}

/* Issue 33: explain's peak utilisations summed each message's mean rate
 * over its span, and messages sharing a NIC or a path then summed above
 * its capacity (134-197 % on the new user's cluster, whose RTX 4090 sites
 * share one 1 Gbit/s uplink each). From the engine's own rates, every
 * link and NIC stays at or below 100 %, and reaches it where the shared
 * uplinks are the bottleneck. */
Test(linkstats, no_resource_above_its_capacity) {
  json_t *o = support_geodes_json("explain '%s/newcomer.json' --method "
                                  "random --top 0 --json", GEODES_FIXTURES);
  json_t *u = json_object_get(o, "utilisation");
  cr_assert_gt(json_array_size(u), 8);
  double nic_peak = 0;
  for (size_t i = 0; i < json_array_size(u); i++) {
    json_t *x = json_array_get(u, i);
    double peak = json_number_value(json_object_get(x, "peak_util"));
    const char *res = json_string_value(json_object_get(x, "resource"));
    cr_expect_leq(peak, 1 + 1e-9, "%s: %.17g", res, peak);
    if (strncmp(res, "Munich/", 7) == 0 || strncmp(res, "Hamburg/", 8) == 0)
      nic_peak = fmax(nic_peak, peak);
  }
  cr_expect_float_eq(nic_peak, 1, 1e-9, "the shared uplinks saturate");
  json_decref(o);
}

/* The NIC a device sends and receives through, named by its first device
 * (one per device, or one per site whose devices share it). */
static int nic_first(const scenario *s, int d) {
  const scenario_site *x = &s->sites[s->device_site[d]];
  return x->nic_shared ? x->first_device : d;
}

/* Whether resource r carries the message of task x. */
static bool carries(const scenario *s, const sim_ls_res *r, const sim_task *x) {
  bool wire = nic_first(s, x->dev) != nic_first(s, x->dst);
  switch (r->kind) {
    case SIM_LS_LINK:
      return s->device_site[x->dev] == r->a && s->device_site[x->dst] == r->b;
    case SIM_LS_NIC_OUT: return wire && nic_first(s, x->dev) == r->a;
    case SIM_LS_NIC_IN: return wire && nic_first(s, x->dst) == r->a;
  }
  return false;
}

/* The naive reference of resource r from a run's whole log (in time
 * order) and its n tasks t: its changes collected, summed per time into
 * change points, busy while a message sends, the peak against the
 * capacity at each point; compared bit for bit with want. */
static void check_against_log(const scenario *s, const sim_ls_res *want,
                              const sim_task *t, uint32_t n,
                              const sim_rate_log *log) {
  double *now = calloc(n + 1, sizeof *now), rate = 0, busy = 0, peak = 0;
  int fl = 0;
  size_t npts = 0;
  int64_t last_t = 0;
  int last_fl = 0;
  for (size_t i = 0; i < log->n;) {
    int64_t at = log->v[i].t;
    bool any = false;
    for (; i < log->n && log->v[i].t == at; i++) {
      const sim_rate_change *c = &log->v[i];
      double g = 8 * c->rate, was = now[c->tag];
      now[c->tag] = g;
      if (!carries(s, want, &t[c->tag])) continue;
      rate += g - was, fl += (was == 0 && g > 0) - (was > 0 && g == 0);
      any = true;
    }
    if (!any) continue;
    if (fl == 0) rate = 0;
    if (npts && last_fl > 0) busy += (double)(at - last_t) * 1e-9;
    cr_assert(npts < want->npts, "more points than the build");
    cr_assert(want->t[npts] == at && want->rate_gbps[npts] == rate &&
                  want->inflight[npts] == fl,
              "point %zu: %lld %.17g %d", npts, (long long)at, rate, fl);
    double cap = want->kind == SIM_LS_LINK
                     ? want->links * trace_at(s->network, want->a, want->b, at)
                                         .bandwidth_gbps
                     : want->capacity_gbps;
    if (rate / cap > peak) peak = rate / cap;
    npts++, last_t = at, last_fl = fl;
  }
  cr_assert_eq(npts, want->npts);
  cr_assert(busy == want->busy_s && peak == want->peak_util,
            "busy %.17g/%.17g peak %.17g/%.17g", busy, want->busy_s, peak,
            want->peak_util);
  double bytes = 0;
  for (uint32_t i = 0; i < n; i++)
    if (t[i].kind == SIM_TASK_XFER && carries(s, want, &t[i]))
      bytes += t[i].bytes;
  cr_assert(bytes == want->bytes, "bytes %.17g/%.17g", bytes, want->bytes);
  free(now);
}

/* A run's records and whole log, kept by its inspection. */
typedef struct kept {
  sim_task *t;
  uint32_t n;
} kept;

static void keep(void *ctx, const sim_graph *g) {
  kept *k = ctx;
  const sim_task *t = sim_graph_tasks(g, &k->n);
  k->t = malloc((k->n + 1) * sizeof *k->t);
  memcpy(k->t, t, k->n * sizeof *t);
}

/* Scenario name under method and model: the statistics explain sums as
 * the run goes (sim_ls_acc: no log kept) equal, bit for bit, the naive
 * reference over the same run's whole log; without the series, the same
 * sums and no points. *iteration_s: the run's. */
static void online_equals_log(const char *name, const char *method,
                              transport_model model, double *iteration_s) {
  scenario *s = support_scenario(name);
  alloc *a = alloc_fixed(method, s->workload.replicas, s->workload.stages,
                         s->seed);
  sim_options o = sim_options_default();
  o.transport.model = model;
  sim_rate_log log = {0};
  kept k = {0};
  sim_options ol = o;
  ol.rates = &log, ol.inspect = keep, ol.inspect_ctx = &k;
  sim_result r, r2, r3;
  err e = {0};
  cr_assert_eq(sim_run(s, a, &ol, &r, &e), ERR_OK, "%s", e.msg);
  *iteration_s = r.iteration_s;
  sim_critpath cp, cp2;
  sim_linkstats ls, sums;
  cr_assert_eq(sim_whatif_explain(s, a, &o, &r2, &cp, &ls, true, &e), ERR_OK,
               "%s", e.msg);
  cr_assert_eq(sim_whatif_explain(s, a, &o, &r3, &cp2, &sums, false, &e),
               ERR_OK, "%s", e.msg);
  cr_assert_gt(ls.nres, 2, "%s", name);
  cr_assert_eq(sums.nres, ls.nres);
  for (int i = 0; i < ls.nres; i++) {
    check_against_log(s, &ls.res[i], k.t, k.n, &log);
    const sim_ls_res *x = &sums.res[i], *y = &ls.res[i];
    cr_assert(x->npts == 0 && !x->t && !x->rate_gbps && !x->inflight);
    cr_assert(x->kind == y->kind && x->a == y->a && x->b == y->b &&
                  x->site == y->site && x->links == y->links &&
                  x->flows == y->flows,
              "%s: resource %d", name, i);
    const double xv[] = {x->capacity_gbps, x->bytes, x->busy_s, x->mean_util,
                         x->peak_util},
                 yv[] = {y->capacity_gbps, y->bytes, y->busy_s, y->mean_util,
                         y->peak_util};
    cr_assert(!memcmp(xv, yv, sizeof xv), "%s: resource %d", name, i);
  }
  sim_linkstats_free(&ls), sim_linkstats_free(&sums);
  sim_critpath_free(&cp), sim_critpath_free(&cp2);
  sim_result_free(&r), sim_result_free(&r2), sim_result_free(&r3);
  sim_rate_log_free(&log);
  free(k.t);
  alloc_free(a);
  scenario_free(s);
}

/* Issue 37: explain keeps no log of the run's rate changes (at 10^4
 * devices millions of them, and their sorted copies, were most of its
 * memory) but sums them into the resources as they come. Under tcp, netem
 * and ideal; shared NICs under path shaping; a trace that cuts links
 * mid-run (their capacity changes: the peak against each). */
Test(linkstats, summed_as_the_run_goes_equals_the_log, .timeout = 120) {
  double it;
  online_equals_log("worldwide", "dtfm-identity", TRANSPORT_TCP, &it);
  online_equals_log("worldwide", "random", TRANSPORT_NETEM, &it);
  online_equals_log("worldwide", "random", TRANSPORT_IDEAL, &it);
  char path[512];
  snprintf(path, sizeof path, "%s/newcomer.json", GEODES_FIXTURES);
  online_equals_log(path, "random", TRANSPORT_TCP, &it);
  snprintf(path, sizeof path, "%s/traces/pacific_cut.json", GEODES_FIXTURES);
  online_equals_log(path, "random", TRANSPORT_TCP, &it);
  cr_assert_gt(it, 50, "the run passes the cut at 50 s");
}

/* The busiest resources against a stable sort by mean utilisation (the
 * naive reference: the first of equals first). */
Test(linkstats, busiest_against_a_stable_sort) {
  static const double util[] = {0.2, 0.9, 0.2, 0.5, 0.9, 0, 0.7};
  enum { N = sizeof util / sizeof *util };
  sim_ls_res res[N];
  for (int i = 0; i < N; i++) res[i] = (sim_ls_res){.mean_util = util[i]};
  sim_linkstats ls = {.nres = N, .res = res};
  int want[N], ord[N + 2];
  for (int i = 0; i < N; i++) want[i] = i;
  for (int i = 1; i < N; i++) /* insertion sort: stable */
    for (int j = i; j > 0 && util[want[j]] > util[want[j - 1]]; j--) {
      int t = want[j];
      want[j] = want[j - 1], want[j - 1] = t;
    }
  for (int k = 0; k <= N + 2; k++) {
    int n = sim_linkstats_busiest(&ls, ord, k);
    cr_assert_eq(n, k < N ? k : N);
    for (int i = 0; i < n; i++) cr_assert_eq(ord[i], want[i], "k %d: %d", k, i);
  }
}
