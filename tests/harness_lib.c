/* harness_lib: the relations the harness checks in this process
 * (tests/harness.h): the predictor against the engine, an export read back,
 * utilisations, a what-if against the file that states it, and what
 * another dp algorithm or network model changes. Each builds the case's
 * run as the commands do: the scenario file loaded, the split as
 * --layers-per-stage sets it, the devices that work as a view (what
 * simulate --alloc does with a file of some of them), the placement by the
 * case's method. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "models/unused.h"
#include "schedules/shape.h"
#include "sim/linkstats.h"
#include "sim/netbound.h"
#include "sim/place.h"
#include "sim/sim.h"
#include "sim/whatif.h"
#include "tests/harness.h"
#include "traces/scenario_export.h"
#include "traces/scenario_subset.h"

/* A case made runnable: its scenario (owned), the view the run is on (s, or
 * a subset view of the devices that work) and its allocation. */
typedef struct hx_run {
  scenario *s, *view;
  const scenario *on;
  alloc *a;
  char *path;
  uint64_t hash;   /* the scenario's as loaded, before the split */
} hx_run;

static void run_free(hx_run *x) {
  alloc_free(x->a);
  if (x->view) /* the split apply_split put on it (shape_view's was NULL) */
    free(x->view->workload.layers_per_stage);
  scenario_subset_free(x->view);
  scenario_free(x->s);
  if (x->path) remove(x->path);
  free(x->path);
  *x = (hx_run){0};
}

/* The devices that work: the first of each site in turn, increasing. */
static int keep_of(const hx_case *c, int *keep) {
  int n = 0, first[HX_MAX_SITES], at = 0;
  for (int k = 0; k < c->nsites; k++) first[k] = at, at += c->site[k].devices;
  bool *on = mem_calloc((size_t)c->ndevices, sizeof *on);
  for (int i = 0; n < c->nwork; i++)
    for (int k = 0; k < c->nsites && n < c->nwork; k++)
      if (i < c->site[k].devices) on[first[k] + i] = true, n++;
  n = 0;
  for (int d = 0; d < c->ndevices; d++)
    if (on[d]) keep[n++] = d;
  free(on);
  return n;
}

/* The split as --layers-per-stage would set it, on v. */
static int apply_split(const hx_case *c, scenario *v, err *e) {
  if (c->split_kind == HX_SPLIT_EVEN) return ERR_OK;
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.balanced_layers = c->split_kind == HX_SPLIT_BALANCED;
  if (c->split_kind == HX_SPLIT_LIST)
    k.layers_per_stage = c->split, k.nlayers_per_stage = c->stages;
  return scenario_apply(v, &k, e);
}

/* x's view and split on its scenario x->s (loaded): what the commands
 * make of the case before they place it. */
static int prepare(const hx_case *c, hx_run *x, err *e) {
  x->on = x->s;
  if (c->nwork < c->ndevices) {
    int keep[HX_MAX_DEVICES];
    int n = keep_of(c, keep);
    x->view = shape_view(x->s, keep, n, c->stages, c->replicas, c->batch,
                         c->micro_batch, x->s->workload.dp_algo, NULL);
    x->on = x->view;
  }
  return apply_split(c, x->view ? x->view : x->s, e);
}

/* Loads case c (edited: a variant of the case) into x; ERR_OK or e. The
 * file goes to dir when the network is a trace (it reads the CSV). */
static int run_make(const hx_case *c, const char *dir, hx_run *x, err *e) {
  *x = (hx_run){0};
  if (c->move_s > 0) {
    char name[64];
    snprintf(name, sizeof name, "hx%llu", (unsigned long long)c->seed);
    x->path = hx_case_write(c, dir, name);
    if (!x->path) return err_set(e, ERR_IO, "cannot write into %s", dir);
    x->s = scenario_load(x->path, e);
  } else {
    char *text = hx_case_json(c, "hx.csv");
    x->s = scenario_parse(text, strlen(text), "hx.json", e);
    free(text);
  }
  uint64_t h = x->s ? scenario_hash(x->s) : 0;
  int rc = x->s ? prepare(c, x, e) : e->code;
  x->hash = h;
  cost_ctx *cc = rc ? NULL : cost_ctx_from_scenario(x->on, e);
  if (cc) {
    sim_options o = sim_options_default();
    o.transport.model = c->net;
    x->a = sim_place(x->on, cc, c->method, &o, e);
  }
  cost_ctx_free(cc);
  return x->a ? ERR_OK : (e->code ? e->code : ERR_CONFIG);
}

static sim_options options(const hx_case *c, transport_model m) {
  sim_options o = sim_options_default();
  o.transport.model = m;
  o.seed = c->seed;
  (void)c;
  return o;
}

/* One simulated iteration of x under m: ERR_OK and *r. */
static int simulate(const hx_case *c, const hx_run *x, transport_model m,
                    sim_result *r, err *e) {
  sim_options o = options(c, m);
  *r = (sim_result){0};
  return sim_run(x->on, x->a, &o, r, e);
}

static const char *rel_text(const hx_case *c) {
  static char buf[600];
  hx_case_describe(c, buf, sizeof buf);
  return buf;
}

/* ---- predict ~ simulate ---- */

/* Whether the working devices of x share a NIC with another working one. */
static bool shares_nic(const hx_run *x) {
  const scenario *s = x->on;
  for (int k = 0; k < s->nsites; k++)
    if (s->sites[k].nic_shared && s->sites[k].ndevices > 1) return true;
  return false;
}

static int known_class(const hx_case *c, const hx_run *x) {
  if (shares_nic(x)) return HX_KNOWN_PREDICT_SHARED_NIC;
  bool path = !c->shaping || strcmp(c->shaping, "path") == 0;
  if (path && c->nsites > 1 && c->net != TRANSPORT_IDEAL)
    return HX_KNOWN_PREDICT_PATH;
  return HX_KNOWN_PREDICT_OTHER;
}

/* The names of the gaps in left_out, comma-separated, into buf. */
static void gaps_text(unsigned left_out, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int g = 0; g < PREDICT_NGAPS && n < size; g++)
    if (left_out & (1u << g))
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "",
                            predict_gap_names[g]);
}

static void check_predict(const hx_case *c, const hx_run *x, hx_report *r) {
  if (c->move_s > 0) {
    hx_record(r, c, HX_REL_PREDICT, HX_SKIP, 0, "moving trace",
              "the predictor reads the links at t = 0");
    return;
  }
  err e = {0};
  spec_workload w;
  const spec_gpu **gpu = mem_calloc((size_t)x->on->ndevices, sizeof *gpu);
  int *layers = mem_alloc((size_t)c->stages * sizeof *layers);
  sim_result sr = {0};
  predict_result pr;
  int rc = spec_workload_resolve(x->on, &w, &e);
  if (!rc) rc = spec_device_gpus(x->on, gpu, &e);
  if (!rc) rc = partition_apply(&w, x->on, gpu, x->a, layers, &e);
  transport_options t = options(c, c->net).transport;
  if (!rc) rc = predict_iteration_with(&w, x->on, gpu, x->a, &t, &pr);
  if (!rc) rc = simulate(c, x, c->net, &sr, &e);
  if (rc) {
    hx_record(r, c, HX_REL_PREDICT, HX_FAIL, 0, "predict or simulate refused",
              "%s", e.msg);
  } else {
    double err_rel = fabs(pr.iteration_s - sr.iteration_s) / sr.iteration_s;
    if (err_rel <= pr.error_bound) { /* what it claims: its bound */
      if (!pr.left_out && err_rel > r->worst_predict)
        r->worst_predict = err_rel;
      hx_record(r, c, HX_REL_PREDICT, HX_PASS, 0, NULL, NULL);
    } else {
      int k = known_class(c, x);
      char gaps[160] = "";
      gaps_text(pr.left_out, gaps, sizeof gaps);
      hx_record(r, c, HX_REL_PREDICT, HX_KNOWN, k, hx_known_names[k],
                "predicted %.6g s, simulated %.6g s (%+.1f %%) beyond its "
                "bound %.3g (left out: %s): %s", pr.iteration_s,
                sr.iteration_s, 100 * (pr.iteration_s / sr.iteration_s - 1),
                pr.error_bound, gaps[0] ? gaps : "nothing", rel_text(c));
    }
  }
  sim_result_free(&sr);
  free(gpu), free(layers);
}

/* ---- export = load ---- */

static void check_export(const hx_case *c, const hx_run *x, const char *dir,
                         hx_report *r) {
  const char *slash = x->s->trace_file ? strrchr(x->s->trace_file, '/') : NULL;
  const char *csv = slash ? slash + 1 : x->s->trace_file;
  json_t *o = scenario_export(x->s, csv);
  char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  json_decref(o);
  char file[1024];
  snprintf(file, sizeof file, "%s/hx-export.json", dir);
  err e = {0};
  hx_run y = {.s = scenario_parse(text, strlen(text), file, &e)};
  free(text);
  sim_result a = {0}, b = {0};
  y.hash = y.s ? scenario_hash(y.s) : 0;
  int rc = y.s ? prepare(c, &y, &e) : e.code;
  if (!rc) y.a = x->a; /* the same placement (borrowed) */
  if (!rc) rc = simulate(c, x, c->net, &a, &e);
  if (!rc) rc = simulate(c, &y, c->net, &b, &e);
  if (rc)
    hx_record(r, c, HX_REL_EXPORT, HX_FAIL, 0, "export not read back", "%s",
              e.msg);
  else if (y.hash != x->hash)
    hx_record(r, c, HX_REL_EXPORT, HX_FAIL, 0, "export changes the hash",
              "%016llx became %016llx: %s", (unsigned long long)x->hash,
              (unsigned long long)y.hash, rel_text(c));
  else if (!HX_SAME(a.iteration_s, b.iteration_s))
    hx_record(r, c, HX_REL_EXPORT, HX_FAIL, 0, "export changes the time",
              "%.17g s became %.17g s: %s", a.iteration_s, b.iteration_s,
              rel_text(c));
  else
    hx_record(r, c, HX_REL_EXPORT, HX_PASS, 0, NULL, NULL);
  y.a = NULL;
  run_free(&y);
  sim_result_free(&a), sim_result_free(&b);
}

/* ---- utilisation <= 1 ---- */

/* What a run's inspection reads of its records: the link statistics and
 * what held its transfers back, from the engine's rate log. */
typedef struct ls_ctx {
  const scenario *s;
  const transport_options *o;
  sim_rate_log rates;
  sim_linkstats ls;
  sim_netbound nb;
  bool built;
} ls_ctx;

static void inspect(void *ctx, const sim_graph *g) {
  ls_ctx *k = ctx;
  uint32_t n;
  const sim_task *t = sim_graph_tasks(g, &n);
  sim_linkstats_build(k->s, k->o, t, n, 0, sim_graph_end(g), &k->rates,
                      &k->ls);
  sim_netbound_of(k->s, k->o, t, n, &k->rates, &k->nb);
  k->built = true;
}

/* One iteration of x under m, inspected into *k (its link statistics the
 * caller's to free when k->built); ERR_OK and *out, or e. */
static int inspected(const hx_case *c, const hx_run *x, transport_model m,
                     ls_ctx *k, sim_result *out, err *e) {
  sim_options o = options(c, m);
  *k = (ls_ctx){.s = x->on, .o = &o.transport};
  o.inspect = inspect, o.inspect_ctx = k, o.rates = &k->rates;
  int rc = sim_run(x->on, x->a, &o, out, e);
  k->o = NULL; /* o ends here */
  sim_rate_log_free(&k->rates);
  return rc;
}

#define HX_UTIL_EPS 1e-9

static void check_util(const hx_case *c, const hx_run *x, hx_report *r) {
  ls_ctx k;
  sim_result sr = {0};
  err e = {0};
  if (inspected(c, x, c->net, &k, &sr, &e)) {
    hx_record(r, c, HX_REL_UTIL, HX_FAIL, 0, "simulate refused", "%s", e.msg);
    return;
  }
  const char *bad = NULL;
  double worst = 0;
  for (int d = 0; d < sr.ndevices; d++)
    if (sr.utilisation[d] > 1 + HX_UTIL_EPS && sr.utilisation[d] > worst)
      worst = sr.utilisation[d], bad = "device utilisation > 100 %";
  for (int i = 0; k.built && i < k.ls.nres; i++) {
    const sim_ls_res *q = &k.ls.res[i];
    if (q->peak_util > 1 + HX_UTIL_EPS && q->peak_util > worst)
      worst = q->peak_util,
      bad = q->kind == SIM_LS_LINK ? "link peak utilisation > 100 %"
                                   : "NIC peak utilisation > 100 %";
  }
  if (bad)
    hx_record(r, c, HX_REL_UTIL, HX_FAIL, 0, bad, "%.1f %%: %s", 100 * worst,
              rel_text(c));
  else
    hx_record(r, c, HX_REL_UTIL, HX_PASS, 0, NULL, NULL);
  if (k.built) sim_linkstats_free(&k.ls);
  sim_result_free(&sr);
}

/* ---- what-if = the edited file ---- */

/* One what-if on case c as text (into spec) and as the edit of the case
 * that states it (into *ed), chosen by the seed. */
static void whatif_of(const hx_case *c, char *spec, size_t size, hx_case *ed) {
  *ed = *c;
  int a = (int)(c->seed % (uint64_t)c->nsites);
  int b = (int)((c->seed / 7) % (uint64_t)c->nsites);
  switch (c->seed % 3) {
    case 0: /* a link's bandwidth and latency, both ways */
      snprintf(spec, size, "link:%s-%s:bw=2,lat=0.5", c->site[a].name,
               c->site[b].name);
      ed->link[a][b].bandwidth_gbps *= 2, ed->link[a][b].latency_ms *= 0.5;
      if (a != b)
        ed->link[b][a].bandwidth_gbps *= 2, ed->link[b][a].latency_ms *= 0.5;
      return;
    case 1: /* a site's GPU */
      snprintf(spec, size, "site:%s=A100", c->site[a].name);
      ed->site[a].gpu = "A100";
      return;
    default: /* a site's speed: its efficiency halved */
      snprintf(spec, size, "site:%s:speed=0.5", c->site[a].name);
      ed->site[a].efficiency =
          0.5 * (c->site[a].efficiency > 0 ? c->site[a].efficiency : 1);
      return;
  }
}

static void check_whatif(const hx_case *c, const hx_run *x, const char *dir,
                         hx_report *r) {
  char spec[128];
  hx_case ed;
  whatif_of(c, spec, sizeof spec, &ed);
  err e = {0};
  sim_whatif w;
  hx_run y = {0};
  sim_result a = {0}, b = {0};
  sim_options o = options(c, c->net);
  int rc = sim_whatif_parse(x->on, spec, &w, &e);
  if (!rc) rc = sim_whatif_run(x->on, x->a, &o, &w, 1, &a, &e);
  if (rc == ERR_MEMORY) { /* the what-if's GPU cannot hold the stage */
    hx_record(r, c, HX_REL_WHATIF, HX_SKIP, 0, "what-if does not fit", "%s",
              e.msg);
    return;
  }
  if (!rc) rc = run_make(&ed, dir, &y, &e);
  if (!rc) { /* the same placement, not the method's again */
    alloc_free(y.a);
    y.a = alloc_new(x->a->replicas, x->a->stages);
    memcpy(y.a->device, x->a->device,
           (size_t)(x->a->replicas * x->a->stages) * sizeof *x->a->device);
    rc = simulate(&ed, &y, c->net, &b, &e);
  }
  if (rc)
    hx_record(r, c, HX_REL_WHATIF, HX_FAIL, 0, "what-if refused", "%s: %s",
              spec, e.msg);
  else if (!HX_SAME(a.iteration_s, b.iteration_s) && c->seed % 3 == 2 &&
           c->split_kind == HX_SPLIT_BALANCED)
    hx_record(r, c, HX_REL_WHATIF, HX_KNOWN, HX_KNOWN_WHATIF_SPEED_BALANCED,
              hx_known_names[HX_KNOWN_WHATIF_SPEED_BALANCED],
              "%s: %.17g s, the edited file %.17g s: %s", spec, a.iteration_s,
              b.iteration_s, rel_text(c));
  else if (!HX_SAME(a.iteration_s, b.iteration_s))
    hx_record(r, c, HX_REL_WHATIF, HX_FAIL, 0,
              c->seed % 3 == 0   ? "link what-if differs from the file"
              : c->seed % 3 == 1 ? "GPU what-if differs from the file"
                                 : "speed what-if differs from the file",
              "%s: %.17g s, the edited file %.17g s: %s", spec, a.iteration_s,
              b.iteration_s, rel_text(c));
  else
    hx_record(r, c, HX_REL_WHATIF, HX_PASS, 0, NULL, NULL);
  sim_result_free(&a), sim_result_free(&b);
  run_free(&y);
}

/* ---- another dp algorithm, another network model ---- */

/* Whether the run x states that row r is unused (models/unused.h). */
static bool stated(const hx_run *x, transport_model m, int row) {
  spec_workload w;
  if (spec_workload_resolve(x->on, &w, NULL)) return false;
  transport_options t = transport_options_default();
  t.model = m;
  unused_value u[UNUSED_MAX];
  int n = unused_values(x->on, &w, x->a, &t, u);
  for (int i = 0; i < n; i++)
    if (u[i].row == row) return true;
  return false;
}

/* The iteration and mean dp sync of case c with dp algorithm algo (NULL:
 * its own) under model m, on x's placement; *said: the run states the dp
 * algorithm unused. ERR_OK or e. */
static int variant(const hx_case *c, const hx_run *x, const char *dir,
                   const char *algo, transport_model m, double *it,
                   double *sync, bool *said, err *e) {
  hx_case v = *c;
  if (algo) v.dp_algo = algo;
  hx_run y = {0};
  sim_result sr = {0};
  int rc = run_make(&v, dir, &y, e);
  if (!rc) { /* the same placement */
    alloc_free(y.a);
    y.a = alloc_new(x->a->replicas, x->a->stages);
    memcpy(y.a->device, x->a->device,
           (size_t)(x->a->replicas * x->a->stages) * sizeof *x->a->device);
    rc = simulate(&v, &y, m, &sr, e);
  }
  *it = sr.iteration_s, *sync = sr.mean.dp_sync_s;
  if (said) *said = !rc && stated(&y, m, WORKLOAD_dp_algo);
  sim_result_free(&sr);
  run_free(&y);
  return rc;
}

static void check_dp_algo(const hx_case *c, const hx_run *x, const char *dir,
                          hx_report *r) {
  static const char *const algos[] = {"central-ps", "ring", "sharded-ps",
                                      "hier-ring"};
  if (c->inner_steps || strcmp(c->runtime, "megatron") == 0) {
    hx_record(r, c, HX_REL_DPALGO, HX_SKIP, 0, "diloco or megatron", NULL);
    return; /* megatron: the binary's relation (the option is refused) */
  }
  double it[4], sync[4];
  bool said[4];
  err e = {0};
  for (int k = 0; k < 4; k++)
    if (variant(c, x, dir, algos[k], c->net, &it[k], &sync[k], &said[k], &e)) {
      hx_record(r, c, HX_REL_DPALGO, HX_FAIL, 0, "another dp algo refused",
                "%s: %s", algos[k], e.msg);
      return;
    }
  bool two = false; /* central-ps and ring over two members, equal */
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++) {
      if (!HX_SAME(sync[a], sync[b]) || said[a] || said[b]) continue;
      if (c->replicas == 2 && strcmp(algos[a], "central-ps") == 0 &&
          strcmp(algos[b], "ring") == 0) {
        two = true;
        continue;
      }
      char klass[96];
      snprintf(klass, sizeof klass, "%s and %s give the same sync, unstated",
               algos[a], algos[b]);
      hx_record(r, c, HX_REL_DPALGO, HX_FAIL, 0, klass,
                "dp sync %.17g s, iteration %.17g and %.17g s: %s", sync[a],
                it[a], it[b], rel_text(c));
      return;
    }
  for (int k = 0; k < 4; k++) /* a statement is true: another changes nothing */
    for (int b = 0; b < 4; b++)
      if (said[k] && c->replicas == 1 && !HX_SAME(sync[k], sync[b])) {
        hx_record(r, c, HX_REL_DPALGO, HX_FAIL, 0,
                  "stated unused, another changes the sync",
                  "%s %.17g s, %s %.17g s: %s", algos[k], sync[k], algos[b],
                  sync[b], rel_text(c));
        return;
      }
  if (two)
    hx_record(r, c, HX_REL_DPALGO, HX_KNOWN, HX_KNOWN_DPALGO_TWO_MEMBERS,
              hx_known_names[HX_KNOWN_DPALGO_TWO_MEMBERS],
              "dp sync %.17g s: %s", sync[0], rel_text(c));
  else
    hx_record(r, c, HX_REL_DPALGO, HX_PASS, 0, NULL, NULL);
}

static void check_net_model(const hx_case *c, const hx_run *x,
                            const char *dir, hx_report *r) {
  double it[TRANSPORT_NMODELS], sync[TRANSPORT_NMODELS];
  err e = {0};
  for (int m = 0; m < TRANSPORT_NMODELS; m++)
    if (variant(c, x, dir, NULL, (transport_model)m, &it[m], &sync[m], NULL,
                &e)) {
      hx_record(r, c, HX_REL_NETMODEL, HX_FAIL, 0, "another model refused",
                "%s: %s", transport_model_name((transport_model)m), e.msg);
      return;
    }
  ls_ctx k;
  sim_result sr = {0};
  int rc = inspected(c, x, TRANSPORT_TCP, &k, &sr, &e);
  sim_result_free(&sr);
  if (k.built) sim_linkstats_free(&k.ls);
  bool same = HX_SAME(it[TRANSPORT_IDEAL], it[TRANSPORT_TCP]);
  bool said = k.nb.held_total == 0;
  if (rc)
    hx_record(r, c, HX_REL_NETMODEL, HX_FAIL, 0, "simulate refused", "%s",
              e.msg);
  else if (said && !same)
    hx_record(r, c, HX_REL_NETMODEL, HX_FAIL, 0,
              "says the models agree, they do not",
              "ideal %.17g s, tcp %.17g s: %s", it[TRANSPORT_IDEAL],
              it[TRANSPORT_TCP], rel_text(c));
  else if (same && !said && HX_SAME(sync[TRANSPORT_IDEAL], sync[TRANSPORT_TCP]))
    hx_record(r, c, HX_REL_NETMODEL, HX_KNOWN, HX_KNOWN_NETMODEL_OFF_PATH,
              hx_known_names[HX_KNOWN_NETMODEL_OFF_PATH],
              "%.17g s; %llu of %llu transfers held back: %s",
              it[TRANSPORT_TCP], (unsigned long long)k.nb.held_total,
              (unsigned long long)k.nb.transfers, rel_text(c));
  else
    hx_record(r, c, HX_REL_NETMODEL, HX_PASS, 0, NULL, NULL);
}

void hx_check_lib(const hx_case *c, const hx_opts *o, hx_report *r) {
  hx_run x;
  err e = {0};
  if (run_make(c, o->dir, &x, &e)) {
    hx_record(r, c, HX_REL_PREDICT, HX_FAIL, 0, "the case does not run",
              "%s: %s", e.msg, rel_text(c));
    run_free(&x);
    return;
  }
  check_predict(c, &x, r);
  check_export(c, &x, o->dir, r);
  check_util(c, &x, r);
  check_whatif(c, &x, o->dir, r);
  check_dp_algo(c, &x, o->dir, r);
  check_net_model(c, &x, o->dir, r);
  run_free(&x);
}
