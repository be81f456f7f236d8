/* harness_gen: the harness's cases (tests/harness.h). A case is drawn from
 * a GSL mt19937 seeded with its seed, then checked as a command would
 * check it (the file parses, the workload resolves, every stage fits the
 * smallest GPU); a case that fails is drawn again from the same stream, so
 * the seed alone names the case. */
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/spec.h"
#include "models/spec_workload.h"
#include "tests/harness.h"
#include "traces/scenario.h"

#define HX_MAX_ATTEMPTS 64

static const char *const gpus[] = {"V100", "A100", "H100", "RTX4090",
                                   "L4",   "T4",   "A10G", "A40"};
static const char *const models[] = {"gpt3-small", "gpt3-medium",
                                     "gpt3-large", "gpt3-xl"};
static const char *const nics[] = {"generic", "aws-ena", "gcp-gvnic"};
static const char *const methods[] = {"dtfm-identity", "megatron-order",
                                      "random", "greedy"};
static const char *const names[] = {"Oslo", "Lima", "Pune", "Kobe"};

#define PICK(r, list) (list)[gsl_rng_uniform_int(r, sizeof(list) / sizeof *(list))]

static bool chance(gsl_rng *r, double p) { return gsl_rng_uniform(r) < p; }
static int between(gsl_rng *r, int lo, int hi) {
  return lo + (int)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}
static double one_of(gsl_rng *r, const double *v, int n) {
  return v[gsl_rng_uniform_int(r, (unsigned long)n)];
}

static void draw_site(gsl_rng *r, hx_site *s, int k, int devices) {
  static const double nic[] = {1, 10, 25, 100}, cap[] = {0.5, 2, 5},
                      win[] = {65536, 1.45e6, 6291456};
  *s = (hx_site){.devices = devices, .gpu = PICK(r, gpus),
                 .nic_gbps = one_of(r, nic, 4)};
  snprintf(s->name, sizeof s->name, "%s", names[k]);
  s->nic_shared = devices > 1 && chance(r, 0.3);
  if (chance(r, 0.5)) s->nic = PICK(r, nics);
  if (chance(r, 0.2)) s->nccl_sockets = between(r, 1, 16);
  if (chance(r, 0.2)) s->flow_gbps = one_of(r, cap, 3);
  if (chance(r, 0.3)) s->window_bytes = one_of(r, win, 3);
  if (chance(r, 0.2)) s->efficiency = 0.5 + 0.5 * gsl_rng_uniform(r);
}

static void draw_link(gsl_rng *r, hx_link *l, bool inside) {
  static const double fl[] = {0.1, 0.5, 2}, loss[] = {1e-5, 1e-4, 1e-3},
                      win[] = {65536, 1e6, 8e6};
  *l = inside ? (hx_link){.latency_ms = 0.005 + 0.1 * gsl_rng_uniform(r),
                          .bandwidth_gbps = between(r, 10, 200)}
              : (hx_link){.latency_ms = 1 + 79 * gsl_rng_uniform(r),
                          .bandwidth_gbps = 0.2 + 9.8 * gsl_rng_uniform(r)};
  if (inside) return;
  if (chance(r, 0.15)) l->flow_gbps = one_of(r, fl, 3);
  if (chance(r, 0.15)) l->loss = one_of(r, loss, 3);
  if (chance(r, 0.15)) l->window_bytes = one_of(r, win, 3);
}

static void draw_network(gsl_rng *r, hx_case *c) {
  static const char *const shapings[] = {"tc", "path"};
  c->shaping = chance(r, 0.25) ? NULL : PICK(r, shapings);
  for (int a = 0; a < c->nsites; a++)
    for (int b = 0; b < c->nsites; b++) draw_link(r, &c->link[a][b], a == b);
  c->move_s = c->move_bw = c->move_lat = 0;
  if (c->nsites > 1 && chance(r, 0.25)) {
    static const double at[] = {0.05, 0.5, 2}, f[] = {0.3, 0.5, 2};
    c->move_s = one_of(r, at, 3);
    c->move_bw = one_of(r, f, 3);
    c->move_lat = one_of(r, f, 3);
  }
}

/* stages x replicas = the devices that work; a divisor of them. */
static void draw_shape(gsl_rng *r, hx_case *c) {
  c->nwork = c->ndevices;
  if (c->ndevices > 2 && chance(r, 0.15)) c->nwork = between(r, 2, c->ndevices - 1);
  int div[HX_MAX_DEVICES], nd = 0;
  for (int s = 1; s <= c->nwork && s <= HX_MAX_STAGES; s++)
    if (c->nwork % s == 0) div[nd++] = s;
  c->stages = div[gsl_rng_uniform_int(r, (unsigned long)nd)];
  c->replicas = c->nwork / c->stages;
}

static void draw_split(gsl_rng *r, hx_case *c) {
  c->split_kind = HX_SPLIT_EVEN;
  double u = gsl_rng_uniform(r);
  if (c->stages < 2 || u < 0.6) return;
  if (u < 0.8) {
    c->split_kind = HX_SPLIT_BALANCED;
    return;
  }
  c->split_kind = HX_SPLIT_LIST;
  int left = c->layers;
  for (int st = 0; st < c->stages; st++) {
    int rest = c->stages - 1 - st;
    c->split[st] = rest ? between(r, 1, left - rest) : left;
    left -= c->split[st];
  }
}

static void draw_dp(gsl_rng *r, hx_case *c) {
  static const char *const plain[] = {"central-ps", "ring", "sharded-ps",
                                      "hier-ring"};
  c->dp_algo = PICK(r, plain);
  c->inner_steps = c->fragments = 0;
  bool dtfm = strcmp(c->runtime, "dtfm") == 0;
  if (dtfm && c->replicas > 1 && chance(r, 0.1)) {
    c->inner_steps = between(r, 2, 8) * 2;
    c->dp_algo = "diloco";
    if (c->layers % 2 == 0 && chance(r, 0.5))
      c->dp_algo = "streaming-diloco", c->fragments = 2;
  }
}

static void draw_workload(gsl_rng *r, hx_case *c) {
  static const char *const sched[] = {"gpipe", "1f1b"};
  static const char *const runtimes[] = {"dtfm", "megatron"};
  c->model = PICK(r, models);
  draw_shape(r, c);
  c->layers = between(r, c->stages, c->stages + 6);
  c->micro_batch = between(r, 1, 2);
  int K = between(r, 1, 6), passes = between(r, 1, 2);
  c->runtime = chance(r, 0.8) ? runtimes[0] : runtimes[1];
  bool meg = strcmp(c->runtime, "megatron") == 0;
  c->kpp = passes > 1 && !meg ? K : (chance(r, 0.5) ? K : 0);
  c->batch = c->replicas * c->micro_batch * K * (meg ? 1 : passes);
  c->schedule = PICK(r, sched);
  if (meg) c->schedule = "1f1b";
  draw_dp(r, c);
  if (meg) c->dp_algo = "ring";
  c->grad_bits = chance(r, 0.15) ? 8 : 16;
  c->activation_bits = chance(r, 0.15) ? 8 : 16;
  c->recompute = !chance(r, 0.2);
  draw_split(r, c);
  c->method = PICK(r, methods);
  static const transport_model nets[] = {TRANSPORT_IDEAL, TRANSPORT_NETEM,
                                         TRANSPORT_TCP};
  c->net = chance(r, 0.6) ? TRANSPORT_TCP : nets[gsl_rng_uniform_int(r, 3)];
}

static void draw(gsl_rng *r, hx_case *c, uint64_t seed) {
  *c = (hx_case){.seed = seed, .nsites = between(r, 1, HX_MAX_SITES)};
  int left = between(r, 2, HX_MAX_DEVICES);
  if (left < c->nsites) left = c->nsites;
  for (int k = 0; k < c->nsites; k++) {
    int rest = c->nsites - 1 - k;
    int n = rest ? between(r, 1, left - rest > 6 ? 6 : left - rest) : left;
    if (n > 8) n = 8;
    draw_site(r, &c->site[k], k, n);
    c->ndevices += n;
    left -= n;
  }
  draw_network(r, c);
  draw_workload(r, c);
}

/* Whether the case loads and resolves, and its largest stage fits the
 * smallest GPU (so every placement fits). */
static bool valid(const hx_case *c) {
  char *text = hx_case_json(c, "inline.csv");
  err e = {0};
  scenario *s = c->move_s > 0 ? NULL : scenario_parse(text, strlen(text),
                                                      "hx.json", &e);
  free(text);
  if (c->move_s > 0) { /* its trace is a file: check the inline twin */
    hx_case still = *c;
    still.move_s = 0;
    return valid(&still);
  }
  spec_workload w;
  bool ok = s && spec_workload_resolve(s, &w, NULL) == ERR_OK;
  for (int st = 0; ok && st < c->stages; st++) {
    int layers = c->split_kind == HX_SPLIT_LIST ? c->split[st]
                 : c->split_kind == HX_SPLIT_BALANCED
                     ? c->layers - c->stages + 1 /* the most it may get */
                     : spec_stage_layers(&w, st);
    double need = spec_stage_memory_with(&w, st, layers);
    for (int k = 0; ok && k < c->nsites; k++)
      ok = need <= spec_gpu_find(c->site[k].gpu)->memory_bytes;
  }
  scenario_free(s);
  return ok;
}

void hx_case_gen(uint64_t seed, hx_case *c, int *attempts) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, (unsigned long)(seed % 4294967291UL) + 1);
  int n = 0;
  do draw(r, c, seed);
  while (++n < HX_MAX_ATTEMPTS && !valid(c));
  gsl_rng_free(r);
  if (attempts) *attempts = n;
}

static json_t *site_json(const hx_site *s) {
  json_t *o = json_pack("{s:s,s:i,s:s,s:f,s:b}", "name", s->name, "devices",
                        s->devices, "gpu", s->gpu, "nic_gbps", s->nic_gbps,
                        "nic_shared", s->nic_shared);
  if (s->nic) json_object_set_new(o, "nic", json_string(s->nic));
  if (s->nccl_sockets)
    json_object_set_new(o, "nccl_sockets", json_integer(s->nccl_sockets));
  if (s->flow_gbps) json_object_set_new(o, "flow_gbps", json_real(s->flow_gbps));
  if (s->window_bytes)
    json_object_set_new(o, "tcp_window_bytes", json_real(s->window_bytes));
  if (s->efficiency)
    json_object_set_new(o, "compute_efficiency", json_real(s->efficiency));
  return o;
}

static json_t *link_json(const hx_case *c, int a, int b) {
  const hx_link *l = &c->link[a][b];
  json_t *o = json_pack("{s:s,s:s,s:f,s:f}", "from", c->site[a].name, "to",
                        c->site[b].name, "latency_ms", l->latency_ms,
                        "bandwidth_gbps", l->bandwidth_gbps);
  if (l->flow_gbps) json_object_set_new(o, "flow_gbps", json_real(l->flow_gbps));
  if (l->loss) json_object_set_new(o, "loss", json_real(l->loss));
  if (l->window_bytes)
    json_object_set_new(o, "window_bytes", json_real(l->window_bytes));
  return o;
}

/* The file's workload: the case's, or with some devices idle, a shape of
 * every device (one stage, a replica each, the batch they divide) that the
 * run's view replaces. */
static json_t *workload_json(const hx_case *c) {
  int stages = c->stages, replicas = c->replicas, batch = c->batch;
  if (c->nwork < c->ndevices)
    stages = 1, replicas = c->ndevices, batch = c->batch * c->ndevices;
  json_t *w = json_pack(
      "{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:b,s:i,s:i}", "model",
      c->model, "layers", c->layers, "batch", batch, "micro_batch",
      c->micro_batch, "stages", stages, "replicas", replicas,
      "micro_batches_per_pass", c->kpp, "schedule", c->schedule, "dp_algo",
      c->dp_algo, "runtime", c->runtime, "recompute", c->recompute,
      "grad_bits", c->grad_bits, "activation_bits", c->activation_bits);
  if (c->inner_steps)
    json_object_set_new(w, "inner_steps", json_integer(c->inner_steps));
  if (c->fragments) json_object_set_new(w, "fragments", json_integer(c->fragments));
  return w;
}

char *hx_case_json(const hx_case *c, const char *trace_name) {
  json_t *o = json_pack("{s:s,s:I}", "name", "harness", "seed",
                        (json_int_t)(c->seed % 2147483647));
  json_t *sites = json_array(), *net = json_object();
  for (int k = 0; k < c->nsites; k++) json_array_append_new(sites, site_json(&c->site[k]));
  json_object_set_new(o, "sites", sites);
  if (c->shaping) json_object_set_new(net, "shaping", json_string(c->shaping));
  if (c->move_s > 0) {
    json_object_set_new(net, "trace", json_string(trace_name));
  } else {
    json_t *links = json_array();
    for (int a = 0; a < c->nsites; a++)
      for (int b = 0; b < c->nsites; b++)
        json_array_append_new(links, link_json(c, a, b));
    json_object_set_new(net, "links", links);
  }
  json_object_set_new(o, "network", net);
  json_object_set_new(o, "workload", workload_json(c));
  char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
  json_decref(o);
  char *out = mem_strdup(text);
  free(text);
  return out;
}

/* One CSV row of link l from a to b at t. */
static void trace_row(char *buf, size_t size, double t, const char *a,
                      const char *b, const hx_link *l) {
  char fl[32] = "", loss[32] = "", win[32] = "";
  if (l->flow_gbps) snprintf(fl, sizeof fl, "%.17g", l->flow_gbps);
  if (l->loss) snprintf(loss, sizeof loss, "%.17g", l->loss);
  if (l->window_bytes) snprintf(win, sizeof win, "%.17g", l->window_bytes);
  snprintf(buf, size, "%.17g,%s,%s,%.17g,%.17g,%s,%s,%s\n", t, a, b,
           l->latency_ms, l->bandwidth_gbps, fl, loss, win);
}

char *hx_case_trace(const hx_case *c) {
  if (c->move_s <= 0) return NULL;
  size_t cap = 256 + 2 * 256 * (size_t)(c->nsites * c->nsites);
  char *out = mem_alloc(cap), row[256];
  snprintf(out, cap, "# source: tests/harness_gen.c, seed %llu\n"
           "t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss,"
           "window_bytes\n", (unsigned long long)c->seed);
  for (int pass = 0; pass < 2; pass++)
    for (int a = 0; a < c->nsites; a++)
      for (int b = 0; b < c->nsites; b++) {
        if (pass && (a != 0 || b == 0)) continue;
        hx_link l = c->link[a][b];
        if (pass) l.bandwidth_gbps *= c->move_bw, l.latency_ms *= c->move_lat;
        trace_row(row, sizeof row, pass ? c->move_s : 0, c->site[a].name,
                  c->site[b].name, &l);
        strncat(out, row, cap - strlen(out) - 1);
      }
  return out;
}

static bool write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

char *hx_case_write(const hx_case *c, const char *dir, const char *name) {
  char path[1024], csvp[1024], tname[256];
  snprintf(tname, sizeof tname, "%s.csv", name);
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  snprintf(csvp, sizeof csvp, "%s/%s", dir, tname);
  char *text = hx_case_json(c, tname), *csv = hx_case_trace(c);
  bool ok = write_text(path, text) && (!csv || write_text(csvp, csv));
  free(text), free(csv);
  return ok ? mem_strdup(path) : NULL;
}

void hx_case_split_arg(const hx_case *c, char *buf, size_t size) {
  buf[0] = '\0';
  if (c->split_kind == HX_SPLIT_BALANCED) snprintf(buf, size, "balanced");
  if (c->split_kind != HX_SPLIT_LIST) return;
  size_t at = 0;
  for (int st = 0; st < c->stages && at < size; st++)
    at += (size_t)snprintf(buf + at, size - at, "%s%d", st ? "," : "",
                           c->split[st]);
}

void hx_case_describe(const hx_case *c, char *buf, size_t size) {
  char split[64];
  hx_case_split_arg(c, split, sizeof split);
  int shared = 0;
  for (int k = 0; k < c->nsites; k++) shared += c->site[k].nic_shared;
  snprintf(buf, size, "seed %llu: %d sites, %d devices (%d work), %s%s, "
           "%s %d layers %d x %d, batch %d m %d K %d, %s, %s, %s, split %s, "
           "%s, %s, %d shared NICs",
           (unsigned long long)c->seed, c->nsites, c->ndevices, c->nwork,
           c->shaping ? c->shaping : "path(default)",
           c->move_s > 0 ? " moving" : "", c->model, c->layers, c->stages,
           c->replicas, c->batch, c->micro_batch, c->kpp, c->schedule,
           c->dp_algo, c->runtime, split[0] ? split : "even", c->method,
           transport_model_name(c->net), shared);
}
