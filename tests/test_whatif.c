/* test_whatif: a what-if run is exactly the run of the scenario file that
 * states the change — every sensitivity of a hand-built pipeline (a link's
 * bandwidth x2, x0.5, its latency x0.5, the fixes of a window, a device's
 * speed x2), a site's GPU swap, a link's flow_gbps and window_bytes and a
 * site's tcp_window_bytes and nccl_sockets against a separate sim_run of a
 * rewritten scenario, bit for bit; the spec grammar and its errors;
 * `geodes explain`'s usage errors (exit 2, naming --what-if) and its
 * determinism. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "sim/whatif.h"
#include "tests/support.h"

TestSuite(whatif, .init = support_dir_make, .fini = support_dir_remove);

/* Three sites of one device each: a 3-stage pipeline a -> b -> c, its
 * links' (latency, bandwidth) in lat[3][3], bw[3][3] and path keys
 * flow[3][3], win[3][3] (0: absent); site i's compute efficiency eff[i],
 * GPU gpu[i], tcp_window_bytes swin[i] and nccl_sockets sock[i] (0:
 * absent). Written to NAME.json / NAME.csv. */
typedef struct net3 {
  double lat[3][3], bw[3][3], flow[3][3], win[3][3], eff[3], swin[3];
  int sock[3];
  const char *gpu[3];
} net3;

static const char *const SITES[] = {"a", "b", "c"};

/* x as a CSV cell: empty when absent (0). */
static const char *cell(double x, char *buf, size_t n) {
  if (x == 0) *buf = 0;
  else snprintf(buf, n, "%.17g", x);
  return buf;
}

/* Site i's optional keys of n. */
static int site_keys(const net3 *n, int i, char *out, size_t size) {
  int k = 0;
  if (n->swin[i] > 0)
    k += snprintf(out + k, size - (size_t)k, ", \"tcp_window_bytes\": %.17g",
                  n->swin[i]);
  if (n->sock[i] > 0)
    k += snprintf(out + k, size - (size_t)k, ", \"nccl_sockets\": %d",
                  n->sock[i]);
  if (!k) *out = 0;
  return k;
}

static scenario *write_net3(const char *name, const net3 *n) {
  char csv[4096], f[32], w[32], keys[3][160], net[64], file[64];
  int k = snprintf(csv, sizeof csv, "t_s,src,dst,latency_ms,bandwidth_gbps,"
                   "flow_gbps,window_bytes\n");
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      k += snprintf(csv + k, sizeof csv - (size_t)k,
                    "0,%s,%s,%.17g,%.17g,%s,%s\n", SITES[i], SITES[j],
                    n->lat[i][j], n->bw[i][j], cell(n->flow[i][j], f, sizeof f),
                    cell(n->win[i][j], w, sizeof w));
  support_write_file(support_path("%s.csv", name), csv);
  support_site site[3];
  for (int i = 0; i < 3; i++) {
    k = snprintf(keys[i], sizeof keys[i], ", \"compute_efficiency\": %.17g",
                 n->eff[i]);
    site_keys(n, i, keys[i] + k, sizeof keys[i] - (size_t)k);
    site[i] = (support_site){.name = SITES[i], .gpu = n->gpu[i],
                             .nic_gbps = 25, .keys = keys[i]};
  }
  snprintf(net, sizeof net, "\"trace\": \"%s.csv\"", name);
  snprintf(file, sizeof file, "%s.json", name);
  return support_build(&(support_spec){
      .name = name, .nsites = 3, .sites = site, .network = net,
      .workload = "\"model\": \"gpt3-xl\", \"layers\": 6, \"batch\": 4, "
                  "\"micro_batch\": 1, \"stages\": 3, \"replicas\": 1",
      .file = file});
}

static net3 base_net(void) {
  net3 n = {0};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      n.lat[i][j] = i == j ? 0.5 : 10 + 7 * i + 3 * j;
      n.bw[i][j] = i == j ? 50 : 0.3 + 0.1 * i + 0.2 * j;
    }
    n.eff[i] = 0.5;
    n.gpu[i] = "V100";
  }
  return n;
}

static alloc *pipeline(void) {
  const char *text = "{\"pipelines\": [[0, 1, 2]]}";
  err e = {0};
  alloc *a = alloc_parse(text, strlen(text), "alloc", 1, 3, 3, &e);
  cr_assert_not_null(a, "%s", e.msg);
  return a;
}

/* Link a -> b of n as the what-if w states it. */
static void change_link(net3 *n, int a, int b, const sim_whatif *w) {
  n->bw[a][b] *= w->bw;
  n->lat[a][b] *= w->lat;
  if (w->flow_gbps > 0) n->flow[a][b] = w->flow_gbps;
  if (w->window > 0) n->win[a][b] = w->window;
}

/* The scenario a generated what-if label states, rewritten from base. */
static net3 changed(const sim_whatif *w, net3 n) {
  switch (w->kind) {
    case SIM_WHATIF_LINK:
      change_link(&n, w->a, w->b, w);
      if (w->both && w->a != w->b) change_link(&n, w->b, w->a, w);
      break;
    case SIM_WHATIF_SPEED:
      for (int d = w->a; d < w->b; d++) n.eff[d] *= w->speed;
      break;
    case SIM_WHATIF_GPU: n.gpu[w->a] = w->gpu; break;
    case SIM_WHATIF_HOSTS:
      if (w->window > 0) n.swin[w->a] = w->window;
      if (w->sockets > 0) n.sock[w->a] = w->sockets;
      break;
  }
  return n;
}

static double run_s(const scenario *s, const alloc *a, sim_options *o) {
  sim_result r;
  err e = {0};
  cr_assert_eq(sim_run(s, a, o, &r, &e), ERR_OK, "%s", e.msg);
  double x = r.iteration_s;
  sim_result_free(&r);
  return x;
}

static void same_bits(double x, double y, const char *what) {
  cr_assert(memcmp(&x, &y, sizeof x) == 0, "%s: %.17g vs %.17g", what, x, y);
}

/* The caller's what-ifs of the equivalence checks: a GPU, a link's
 * factors, its path keys (alone and with a factor), a site's hosts. */
static const char *const EXTRA[] = {
    "site:b=H100", "link:a-c:bw=2,lat=0.5", "link:a-b:flow=0.2",
    "link:b>c:window=400000", "link:a>b:bw=2,window=2000000",
    "site:b:window=1000000,sockets=4", "site:c:sockets=2",
    "site:a:window=5e6"};
enum { NEXTRA = sizeof EXTRA / sizeof *EXTRA };

/* The progress hook's calls: the last (done, total) and how many. */
typedef struct heard {
  int calls, done, total;
} heard;

static void hear(void *ctx, int done, int total) {
  heard *h = ctx;
  cr_assert_eq(done, h->done + 1, "one call per re-run, in order");
  h->calls++, h->done = done, h->total = total;
}

static void check_equivalence(transport_model m, net3 n) {
  scenario *s = write_net3("base", &n);
  alloc *a = pipeline();
  sim_options o = sim_options_default();
  o.transport.model = m;
  sim_result r;
  sim_critpath cp;
  err e = {0};
  cr_assert_eq(sim_whatif_explain(s, a, &o, &r, &cp, NULL, false, &e),
               ERR_OK);
  same_bits(r.iteration_s, run_s(s, a, &o), "explain's run is sim_run's");
  sim_whatif extra[NEXTRA];
  for (int i = 0; i < NEXTRA; i++)
    cr_assert_eq(sim_whatif_parse(s, EXTRA[i], &extra[i], &e), ERR_OK, "%s: %s",
                 EXTRA[i], e.msg);
  sim_sensitivity *v;
  int nv;
  heard h = {0};
  sim_sens_opts q = {.cp = &cp, .top = 10, .extra = extra, .nextra = NEXTRA,
                     .base_s = r.iteration_s, .progress = hear,
                     .progress_ctx = &h};
  cr_assert_eq(sim_whatif_sensitivities(s, a, &o, &q, &v, &nv, &e),
               ERR_OK, "%s", e.msg);
  cr_assert_geq(nv, 6 + NEXTRA);
  cr_assert(h.calls == nv && h.done == nv && h.total == nv,
            "progress after each of the %d re-runs", nv);
  bool device = false;
  for (int i = 0; i < nv; i++) {
    net3 c = changed(&v[i].w, n);
    scenario *t = write_net3("changed", &c);
    same_bits(v[i].iteration_s, run_s(t, a, &o), v[i].w.label);
    same_bits(v[i].gain_s, r.iteration_s - v[i].iteration_s, v[i].w.label);
    device |= v[i].w.kind == SIM_WHATIF_SPEED;
    scenario_free(t);
  }
  cr_assert(device, "a device is among the top resources");
  free(v);
  sim_critpath_free(&cp);
  sim_result_free(&r);
  alloc_free(a);
  scenario_free(s);
}

/* base_net with path keys and host keys already given, which the what-ifs
 * then override: a flow on c -> a and a -> b, a window on b -> c, windows
 * and sockets on two sites. */
static net3 keyed_net(void) {
  net3 n = base_net();
  n.flow[2][0] = 0.05, n.flow[0][1] = 0.1, n.win[1][2] = 300000;
  n.swin[0] = 1.45e6, n.swin[2] = 2e6, n.sock[1] = 2, n.sock[2] = 3;
  return n;
}

Test(whatif, equals_a_separate_simulation_tcp) {
  check_equivalence(TRANSPORT_TCP, base_net());
}
Test(whatif, equals_a_separate_simulation_ideal) {
  check_equivalence(TRANSPORT_IDEAL, base_net());
}
Test(whatif, equals_a_separate_simulation_keyed_tcp) {
  check_equivalence(TRANSPORT_TCP, keyed_net());
}
Test(whatif, equals_a_separate_simulation_keyed_netem) {
  check_equivalence(TRANSPORT_NETEM, keyed_net());
}

Test(whatif, leaves_the_scenario_alone) {
  net3 n = base_net();
  scenario *s = write_net3("alone", &n);
  alloc *a = pipeline();
  uint64_t h = scenario_hash(s);
  sim_options o = sim_options_default();
  double before = run_s(s, a, &o);
  sim_whatif w[3];
  err e = {0};
  cr_assert_eq(sim_whatif_parse(s, "link:a>b:bw=3", &w[0], &e), ERR_OK);
  cr_assert_eq(sim_whatif_parse(s, "site:c=A100", &w[1], &e), ERR_OK);
  cr_assert_eq(sim_whatif_parse(s, "device:1:speed=1.5", &w[2], &e), ERR_OK);
  sim_result r;
  cr_assert_eq(sim_whatif_run(s, a, &o, w, 3, &r, &e), ERR_OK, "%s", e.msg);
  cr_assert_neq(r.iteration_s, before);
  sim_result_free(&r);
  cr_assert_eq(scenario_hash(s), h);
  same_bits(run_s(s, a, &o), before, "unchanged after");
  alloc_free(a);
  scenario_free(s);
}

/* A what-if text sim_whatif_parse refuses, and what its message says. */
typedef struct bad_spec {
  const char *spec, *msg;
} bad_spec;

/* Each of the n texts refused on s (ERR_CONFIG), its message saying msg. */
static void refused(const scenario *s, const bad_spec *bad, size_t n) {
  for (size_t i = 0; i < n; i++) {
    err e = {0};
    sim_whatif w;
    cr_assert_eq(sim_whatif_parse(s, bad[i].spec, &w, &e), ERR_CONFIG, "%s",
                 bad[i].spec);
    cr_assert(strstr(e.msg, bad[i].msg), "%s: %s", bad[i].spec, e.msg);
  }
}

Test(whatif, parse) {
  net3 n = base_net();
  scenario *s = write_net3("parse", &n);
  sim_whatif w;
  err e = {0};
  cr_assert_eq(sim_whatif_parse(s, "link:a-b:bw=2", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_LINK && w.a == 0 && w.b == 1 && w.both);
  cr_assert(w.bw == 2 && w.lat == 1);
  cr_assert_eq(sim_whatif_parse(s, "link:c>a:lat=0.25", &w, &e), ERR_OK);
  cr_assert(w.a == 2 && w.b == 0 && !w.both && w.lat == 0.25 && w.bw == 1);
  cr_assert_eq(sim_whatif_parse(s, "site:b:speed=3", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_SPEED && w.a == 1 && w.b == 2 && w.speed == 3);
  cr_assert_eq(sim_whatif_parse(s, "site:a=H100", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_GPU && !strcmp(w.gpu, "H100"));
  /* values, not factors: a link's flow and window, a site's hosts */
  cr_assert_eq(sim_whatif_parse(s, "link:a-c:flow=0.75,bw=2", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_LINK && w.a == 0 && w.b == 2 && w.both);
  cr_assert(w.flow_gbps == 0.75 && w.bw == 2 && w.lat == 1 && w.window == 0);
  cr_assert_eq(sim_whatif_parse(s, "link:b>a:window=16e6", &w, &e), ERR_OK);
  cr_assert(w.a == 1 && w.b == 0 && !w.both && w.window == 16e6);
  cr_assert(w.flow_gbps == 0 && w.bw == 1);
  cr_assert_eq(sim_whatif_parse(s, "site:c:window=1448", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_HOSTS && w.a == 2 && w.window == 1448 &&
            w.sockets == 0);
  cr_assert_eq(sim_whatif_parse(s, "site:b:sockets=64,window=3e6", &w, &e),
               ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_HOSTS && w.a == 1 && w.sockets == 64 &&
            w.window == 3e6);
  static const bad_spec bad[] = {
      {"link:a-x:bw=2", "is not a site of parse"},
      {"link:a>b:bw=0", "is not a finite number > 0"},
      {"link:a>b:bw=-1", "is not a finite number > 0"},
      {"link:a>b:bw=inf", "is not a finite number > 0"},
      {"link:a>b:speed=2", "is not bw=F, lat=F, flow=G or window=B"},
      {"link:a>b", "link:A-B:bw=F"},
      {"link:a>b:flow=0", "the flow '0' is not >= 1e-06 Gbit/s and finite"},
      {"link:a>b:flow=-2", "the flow '-2' is not >= 1e-06 Gbit/s"},
      {"link:a>b:flow=nan", "the flow 'nan' is not >= 1e-06 Gbit/s"},
      {"link:a-b:window=1447", "the window '1447' is not in [1448, "
                               "1099511627776] bytes"},
      {"link:a-b:window=2e12", "the window '2e12' is not in [1448"},
      {"link:a-b:window=1MB", "the window '1MB' is not in [1448"},
      {"site:x=H100", "is not a site of parse"},
      {"site:x:window=2e6", "is not a site of parse"},
      {"site:a=Z9000", "unknown GPU 'Z9000'"},
      {"site:a:speed=abc", "is not a finite number > 0"},
      {"site:a:window=100", "the window '100' is not in [1448"},
      {"site:a:sockets=0", "the sockets '0' are not a whole number in 1 .. 64"},
      {"site:a:sockets=65", "the sockets '65' are not a whole number in 1 .."},
      {"site:a:sockets=2.5", "the sockets '2.5' are not a whole number"},
      {"site:a:bw=2", "'bw=2' is not speed=F, window=B or sockets=N"},
      {"site:a:speed=2,window=2e6", "is not a finite number > 0"},
      {"site:a", "site:NAME=GPU, site:NAME:speed=F or site:NAME:window=B"},
      {"device:3:speed=2", "has devices 0 .. 2"},
      {"device:1", "device:N:speed=F"},
      {"nic:a", "starts with link:, site: or device:"},
      /* issue 35, 10: nothing set, a key twice, an empty setting */
      {"link:a-b:", "'link:a-b:': nothing after the ':' (bw=F, lat=F"},
      {"link:a>b:bw=2,bw=3", "'link:a>b:bw=2,bw=3': bw given twice"},
      {"link:a>b:bw=2,lat=0.5,bw=2", "bw given twice"},
      {"link:a>b:bw=2,", "an empty setting"},
      {"link:a>b:,bw=2", "an empty setting"},
      {"link:a>b:bw=", "'bw=' is not bw=F, lat=F, flow=G or window=B"},
      {"site:a:", "'site:a:': nothing after the ':' (speed=F, window=B"},
      {"site:b:sockets=2,sockets=4", "sockets given twice"},
      {"site:c:window=2e6,sockets=2,window=3e6", "window given twice"}};
  refused(s, bad, sizeof bad / sizeof *bad);
  scenario_free(s);
}

/* Issue 35, 9 and 10: site names that hold '-', '>', ':' or '=' are named
 * in what-ifs; a text that reads as two different pairs of sites (or two
 * sites) is refused naming both readings. */
Test(whatif, names_with_separators_and_two_readings) {
  const char *json =
      "{\"name\": \"amb\", \"sites\": ["
      "{\"name\": \"a-b\", \"devices\": 1}, {\"name\": \"c\", \"devices\": 1},"
      "{\"name\": \"a\", \"devices\": 1}, {\"name\": \"b-c\", \"devices\": 1},"
      "{\"name\": \"b\", \"devices\": 1}, {\"name\": \"x:y\", \"devices\": 1},"
      "{\"name\": \"x\", \"devices\": 1}, {\"name\": \"g=h\", \"devices\": 1},"
      "{\"name\": \"g\", \"devices\": 1}],"
      " \"network\": {\"latency_ms\": 10, \"bandwidth_gbps\": 1},"
      " \"workload\": {\"model\": \"gpt3-small\", \"batch\": 9,"
      " \"micro_batch\": 1, \"stages\": 9, \"replicas\": 1}}";
  err e = {0};
  scenario *s = scenario_parse(json, strlen(json), "amb.json", &e);
  cr_assert_not_null(s, "%s", e.msg);
  sim_whatif w;
  static const struct { const char *spec; int a, b; bool both; } good[] = {
      {"link:a>b-c:bw=2", 2, 3, false},  /* 'a>b' is no site */
      {"link:a-b>c:bw=2", 0, 1, false},
      {"link:x:y-a:lat=0.5", 5, 2, true},
      {"link:a-x:y:bw=2", 2, 5, true},
      {"link:a-b-b:bw=2", 0, 4, true},   /* 'b-b' is no site */
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    e = (err){0};
    cr_assert_eq(sim_whatif_parse(s, good[i].spec, &w, &e), ERR_OK, "%s: %s",
                 good[i].spec, e.msg);
    cr_assert(w.kind == SIM_WHATIF_LINK && w.a == good[i].a &&
              w.b == good[i].b && w.both == good[i].both, "%s", good[i].spec);
  }
  cr_assert_eq(sim_whatif_parse(s, "site:x:y:speed=2", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_SPEED && w.a == 5 && w.b == 6);
  cr_assert_eq(sim_whatif_parse(s, "site:x:speed=3", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_SPEED && w.a == 6 && w.speed == 3);
  cr_assert_eq(sim_whatif_parse(s, "site:x:y=H100", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_GPU && w.a == 5);
  cr_assert_eq(sim_whatif_parse(s, "site:x:y:window=2e6", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_HOSTS && w.a == 5 && w.window == 2e6);
  cr_assert_eq(sim_whatif_parse(s, "site:g=h:sockets=4", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_HOSTS && w.a == 7 && w.sockets == 4);
  cr_assert_eq(sim_whatif_parse(s, "site:g=H100", &w, &e), ERR_OK);
  cr_assert(w.kind == SIM_WHATIF_GPU && w.a == 8);
  static const bad_spec bad[] = {
      {"link:a-b-c:bw=2", "'link:a-b-c:bw=2': 'a-b-c' reads two ways, sites "
                          "'a' and 'b-c' or 'a-b' and 'c' (rename one)"},
      {"link:a-b-c:", "reads two ways"},
      {"site:x:y:window=2e6,window=3e6", "window given twice"},
      {"link:a-q:bw=2", "is not a site of amb"}};
  refused(s, bad, sizeof bad / sizeof *bad);
  scenario_free(s);
}

Test(whatif, cli_usage_errors_and_determinism) {
  net3 n = base_net();
  scenario *s = write_net3("cli", &n);
  scenario_free(s);
  support_write_file(support_path("cli_alloc.json"),
                     "{\"pipelines\": [[0, 1, 2]]}");
  support_run r = {0};
  const char *bad[] = {"site:Nowhere=H100", "site:a=Z9000", "link:a-b:bw=0",
                       "link:a-b:lat=-2", "link:a-b:window=10",
                       "link:a>c:flow=-1", "site:b:sockets=0",
                       "site:c:window=1e13", "link:a-b:", ";;;",
                       "link:a-b:bw=2;", ";link:a-b:bw=2",
                       "link:a-b:bw=2;;site:a=H100", "link:a-b:bw=2,bw=3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(support_geodes(&r, "explain '%s' --alloc '%s' --what-if '%s'",
                                support_path("cli.json"),
                                support_path("cli_alloc.json"), bad[i]),
                 2, "%s: %s", bad[i], r.err);
    cr_assert(strstr(r.err, "geodes explain: --what-if '"), "%s", r.err);
    cr_assert(strstr(r.err, bad[i]), "names the text: %s", r.err);
  }
  const char *cmd = "explain '%s' --alloc '%s' --top 3 --json "
                    "--what-if 'site:a=H100;link:b-c:bw=2'";
  cr_assert_eq(support_geodes(&r, cmd, support_path("cli.json"),
                              support_path("cli_alloc.json")), 0, "%s", r.err);
  char *first = strdup(r.out);
  cr_assert(strstr(first, "\"what_if\":\"site:a=H100\""), "%s", first);
  cr_assert(strstr(first, "\"critical_path\""));
  cr_assert_eq(support_geodes(&r, cmd, support_path("cli.json"),
                              support_path("cli_alloc.json")), 0);
  cr_assert_str_eq(r.out, first, "the same inputs, the same bytes");
  free(first);
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --explain",
                              support_path("cli.json"),
                              support_path("cli_alloc.json")), 0, "%s", r.err);
  cr_assert(strstr(r.out, "busiest link classes"), "simulate's table first");
  cr_assert(strstr(r.out, "time on the critical path by phase"), "%s", r.out);
  cr_assert(strstr(r.out, "sensitivities (re-simulated"), "%s", r.out);
  cr_assert_eq(support_geodes(&r, "simulate '%s' --alloc '%s' --explain "
                                  "--json", support_path("cli.json"),
                              support_path("cli_alloc.json")), 2);
  cr_assert_eq(support_geodes(&r, "explain '%s' --alloc '%s' --top 0 --json "
                                  "--what-if site:a=H100 --what-if=link:b-c:"
                                  "bw=2 --what-if 'device:0:speed=2;site:c="
                                  "A100'", support_path("cli.json"),
                              support_path("cli_alloc.json")), 0, "%s", r.err);
  const char *each[] = {"site:a=H100", "link:b-c:bw=2", "device:0:speed=2",
                        "site:c=A100"};
  for (int i = 0; i < 4; i++) { /* one --what-if each, or joined: all run */
    char want[64];
    snprintf(want, sizeof want, "\"what_if\":\"%s\"", each[i]);
    cr_assert(strstr(r.out, want), "%s in %s", want, r.out);
  }
  cr_assert_eq(support_geodes(&r, "explain '%s'", support_path("cli.json")),
               2);
  cr_assert(strstr(r.err, "--alloc, --method"), "%s", r.err);
  support_run_clear(&r);
}

/* Two results' figures, bit for bit: the iteration, the counts, the
 * per-stage breakdown, every device's utilisation, the outer step's. */
static void same_result(const sim_result *x, const sim_result *y,
                        const char *what) {
  same_bits(x->iteration_s, y->iteration_s, what);
  same_bits(x->outer_step_s, y->outer_step_s, what);
  same_bits(x->inner_step_s, y->inner_step_s, what);
  same_bits(x->wan_bytes, y->wan_bytes, what);
  cr_assert(x->end_ns == y->end_ns && x->events == y->events &&
            x->flows == y->flows && x->tasks == y->tasks, "%s", what);
  cr_assert(x->ndevices == y->ndevices && x->stages == y->stages, "%s", what);
  cr_assert(memcmp(x->utilisation, y->utilisation,
                   (size_t)x->ndevices * sizeof *x->utilisation) == 0, "%s",
            what);
  cr_assert(memcmp(x->stage, y->stage,
                   (size_t)x->stages * sizeof *x->stage) == 0, "%s", what);
}

/* sim_run's task records, copied by its inspect hook. */
typedef struct records {
  sim_task *t;
  uint32_t n;
} records;

static void copy_records(void *ctx, const sim_graph *g) {
  records *r = ctx;
  const sim_task *t = sim_graph_tasks(g, &r->n);
  r->t = malloc(r->n * sizeof *r->t);
  memcpy(r->t, t, r->n * sizeof *r->t);
}

/* Issue 37: explain's re-runs of a link or a site's hosts run on one task
 * graph, built and frozen once, its run state reset per re-run
 * (sim_engine_rerun), and laid out after the first in that run's order;
 * each equals sim_run of the changed scenario, every figure and every task
 * record (in task ids) bit for bit, on built-ins of a plain iteration, a
 * DiLoCo outer step (its shortcut) and volunteers' mixed GPUs, under tcp
 * and netem, after re-runs of other changes on the same graph. A latency
 * that moves DT-FM's barriers changes the graph: not served. */
Test(whatif, a_kept_graph_reruns_as_a_fresh_build) {
  const char *const names[] = {"worldwide", "intellect-1", "volunteer-mix"};
  const transport_model models[] = {TRANSPORT_TCP, TRANSPORT_NETEM};
  for (size_t i = 0; i < 3; i++)
    for (size_t m = 0; m < 2; m++) {
      scenario *s = support_scenario(names[i]);
      alloc *a = alloc_identity(s->workload.replicas, s->workload.stages);
      sim_options o = sim_options_default();
      o.transport.model = models[m];
      sim_engine *x;
      err e = {0};
      cr_assert_eq(sim_engine_new(s, a, &o, NULL, NULL, SIM_NET_WARM, &x, &e),
                   ERR_OK, "%s", e.msg);
      for (int k = 0; k < 4; k++) {
        scenario c = *s;
        c.network = trace_copy(s->network);
        c.sites = malloc((size_t)s->nsites * sizeof *c.sites);
        memcpy(c.sites, s->sites, (size_t)s->nsites * sizeof *c.sites);
        trace_scale_pair(c.network, k % s->nsites, (k + 1) % s->nsites, 1,
                         k & 1 ? 0.5 : 2);
        if (k >= 2) c.sites[k % s->nsites].nccl_sockets = 4;
        if (k == 3) c.sites[1].tcp_window_bytes = 1e6;
        cr_assert(sim_engine_same_graph(x, &c), "%s: %d", names[i], k);
        sim_result kept, fresh;
        cr_assert_eq(sim_engine_rerun(x, &c, &kept, &e), ERR_OK, "%s", e.msg);
        records rec = {0};
        sim_options oi = o;
        oi.inspect = copy_records, oi.inspect_ctx = &rec;
        cr_assert_eq(sim_run(&c, a, &oi, &fresh, &e), ERR_OK, "%s", e.msg);
        same_result(&kept, &fresh, names[i]);
        uint32_t n;
        const sim_task *t = sim_engine_tasks(x, &n);
        cr_assert(n == rec.n && memcmp(t, rec.t, n * sizeof *t) == 0,
                  "%s: re-run %d's records", names[i], k);
        free(rec.t);
        sim_result_free(&kept);
        sim_result_free(&fresh);
        for (int p = 0; p < s->nsites; p++)
          for (int q = 0; q < s->nsites; q++)
            trace_scale_pair(c.network, p, q, 4, 1);
        cr_assert_not(sim_engine_same_graph(x, &c), "%s: barriers", names[i]);
        trace_free(c.network);
        free(c.sites);
      }
      sim_engine_free(x);
      alloc_free(a);
      scenario_free(s);
    }
}

/* A list of --what-if texts against the naive reference: each text split
 * at every ';' and each piece parsed alone, in order; an empty piece and a
 * bad one refused with their messages, nothing returned. */
Test(whatif, a_list_is_its_pieces_parsed_in_order) {
  net3 n = base_net();
  scenario *s = write_net3("list", &n);
  const char *specs[] = {"link:a>b:bw=3;site:c=A100", "device:0:speed=2",
                         "link:a-c:lat=0.5;site:b:speed=1.5"};
  const char *pieces[] = {"link:a>b:bw=3", "site:c=A100", "device:0:speed=2",
                          "link:a-c:lat=0.5", "site:b:speed=1.5"};
  sim_whatif *w = NULL;
  int count = -1;
  err e;
  err_clear(&e);
  cr_assert_eq(sim_whatif_parse_list(s, specs, 3, &w, &count, &e), ERR_OK,
               "%s", e.msg);
  cr_assert_eq(count, 5);
  for (int i = 0; i < 5; i++) {
    sim_whatif one;
    cr_assert_eq(sim_whatif_parse(s, pieces[i], &one, NULL), ERR_OK);
    cr_expect_str_eq(w[i].label, one.label);
    cr_expect(w[i].kind == one.kind && w[i].a == one.a && w[i].b == one.b &&
              w[i].both == one.both && w[i].bw == one.bw &&
              w[i].lat == one.lat && w[i].speed == one.speed &&
              w[i].gpu == one.gpu, "%s", pieces[i]);
  }
  free(w);
  const char *empty[] = {"device:0:speed=2", "site:c=A100;;device:1:speed=2"};
  cr_assert_eq(sim_whatif_parse_list(s, empty, 2, &w, &count, &e),
               ERR_CONFIG);
  cr_expect_str_eq(e.msg, "'site:c=A100;;device:1:speed=2': an empty what-if "
                   "(what-ifs are joined by one ';')");
  cr_expect(!w && count == 0);
  err_clear(&e);
  const char *bad[] = {"link:x"};
  err one;
  err_clear(&one);
  sim_whatif ignored;
  cr_assert_eq(sim_whatif_parse(s, "link:x", &ignored, &one), ERR_CONFIG);
  cr_assert_eq(sim_whatif_parse_list(s, bad, 1, &w, &count, &e), ERR_CONFIG);
  cr_expect_str_eq(e.msg, one.msg);
  cr_expect(!w && count == 0);
  scenario_free(s);
}
