/* reproduce: builds each calibration row's experiment and simulates it.
 * Invariant: every experiment is built from the built-in scenarios and the
 * row alone, as DT-FM ran it:
 * - pipeline, homogeneous: a uniform network of p3.2xlarge hosts (the host
 *   of the built-in geo scenarios: multi-dc's first site), tc's delay and
 *   rate to every peer (default: 0.1 ms, the 10 Gbit/s NIC); DT-FM's
 *   runtime on the identity placement, Megatron's on its rank layout.
 *   The pipeline table does not give its passes: two of B/2 micro-batches
 *   each (DT-FM's gradient accumulation, as in its 64-GPU runs) is what
 *   its rows agree with (one pass leaves the 1 Gbit/s rows 24-32 % fast);
 *   the 64-GPU runs pass 64 micro-batches at a time (DESIGN.md section 9).
 * - geo: the built-in case (datacenter and spot: their physical clusters,
 *   which ran without tc), at the row's batch; inside a region DT-FM's tc
 *   scripts applied 10 ms and 2 Gbit/s (scheduler/generate_heterogeneous_
 *   tc.py) where its scheduler's matrix says 5 ms; random rank maps are
 *   seeds 1-3, averaged.
 * - p2p: one message between two hosts, the tc delay on one direction
 *   only (the round trip is the delay + 0.1 ms), over NCCL's sockets or
 *   Gloo's one, on a connection opened before the clock starts. */
#include "analysis/reproduce.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/mem.h"
#include "base/names.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "sim/sim.h"
#include "sim/transfer.h"
#include "traces/scenario.h"

#define CAL_FILE "calibration.csv"
#define CAL_HEADER \
  "table,setting,delay_ms,bandwidth_gbps,layers,batch,bytes,system,measured_s"
#define ONE_WAY_BASE_MS 0.05 /* half the untouched round trip (0.1 ms) */
#define DEFAULT_DELAY_MS 0.1 /* "default": about 0.1 ms ... */
#define RANDOM_SEEDS 3
#define INTRA_REGION_MS 10.0 /* what DT-FM's tc applied inside a region */
#define INTRA_REGION_GBPS 2.0

/* ---- the table ---- */

static bool field_num(const char *s, double *out) {
  if (!*s) {
    *out = NAN;
    return true;
  }
  char *end;
  *out = strtod(s, &end);
  return *end == '\0' && isfinite(*out) && *out >= 0;
}

static void copy(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src);
}

/* One data line into r; the field count and numbers are checked. */
static int parse_row(char *line, int lineno, reproduce_row *r, err *e) {
  char *f[9];
  int n = 0;
  for (char *p = line; n < 9; n++) {
    f[n] = p;
    char *c = strchr(p, ',');
    if (!c) {
      n++;
      break;
    }
    *c = '\0';
    p = c + 1;
  }
  double layers, batch;
  *r = (reproduce_row){.line = lineno};
  for (int m = 0; m < TRANSPORT_NMODELS; m++) r->sim_s[m] = NAN;
  if (n != 9 || !field_num(f[2], &r->delay_ms) ||
      !field_num(f[3], &r->bandwidth_gbps) || !field_num(f[4], &layers) ||
      !field_num(f[5], &batch) || !field_num(f[6], &r->bytes) ||
      !field_num(f[8], &r->measured_s) || !(r->measured_s > 0))
    return err_set(e, ERR_PARSE, "%s:%d: malformed calibration row", CAL_FILE,
                   lineno);
  copy(r->table, sizeof r->table, f[0]);
  copy(r->setting, sizeof r->setting, f[1]);
  copy(r->system, sizeof r->system, f[7]);
  r->layers = isnan(layers) ? 0 : (int)layers;
  r->batch = isnan(batch) ? 0 : (int)batch;
  if (isnan(r->bytes)) r->bytes = 0;
  return ERR_OK;
}

static int read_table(reproduce_report *rep, err *e) {
  const builtin_file *b = builtin_find(CAL_FILE);
  if (!b) return err_set(e, ERR_MISSING, "%s: not built in", CAL_FILE);
  char *text = mem_strdup(b->data), *save = NULL;
  int lineno = 0, rc = ERR_OK, cap = 0;
  bool header = false;
  for (char *l = strtok_r(text, "\n", &save); l && !rc;
       l = strtok_r(NULL, "\n", &save)) {
    lineno++; /* no empty lines in the table, so strtok_r keeps the count */
    if (l[0] == '#') continue;
    if (!header) {
      header = true;
      if (strcmp(l, CAL_HEADER) != 0)
        rc = err_set(e, ERR_PARSE, "%s:%d: the header is not '%s'", CAL_FILE,
                     lineno, CAL_HEADER);
      continue;
    }
    if (rep->n == cap) {
      cap = cap ? 2 * cap : 64;
      rep->rows = mem_realloc(rep->rows, (size_t)cap * sizeof *rep->rows);
    }
    rc = parse_row(l, lineno, &rep->rows[rep->n], e);
    if (!rc) rep->n++;
  }
  free(text);
  if (!rc && rep->n == 0)
    rc = err_set(e, ERR_PARSE, "%s: no rows", CAL_FILE);
  return rc;
}

/* ---- the experiments ---- */

/* The host every tc experiment ran on: the built-in geo scenarios' site. */
typedef struct reproduce_host {
  char gpu[32];
  double nic_gbps, efficiency, flow_gbps, window;
  int sockets;
} host;

static int load_host(host *h, err *e) {
  scenario *s = scenario_load("multi-dc", e);
  if (!s) return e ? e->code : ERR_MISSING;
  const scenario_site *site = &s->sites[0];
  copy(h->gpu, sizeof h->gpu, site->gpu);
  h->nic_gbps = site->nic_gbps;
  h->efficiency = site->compute_efficiency;
  h->sockets = site->nccl_sockets;
  h->flow_gbps = site->flow_gbps;
  h->window = site->tcp_window_bytes;
  scenario_free(s);
  return ERR_OK;
}

static bool is_megatron(const reproduce_row *r) {
  return strncmp(r->system, "megatron", 8) == 0;
}

static bool is_random(const reproduce_row *r) {
  return strstr(r->system, "random") != NULL;
}

/* A uniform network of devices p3.2xlarge hosts (pipeline, homogeneous),
 * shaped as DT-FM's tc did, the hosts' window multi-dc's sites'. */
static scenario *uniform_case(const reproduce_row *r, const host *h,
                              int replicas, err *e) {
  int batch = r->batch ? r->batch : 1024, stages = 8;
  bool meg = is_megatron(r);
  int per_pass = replicas == 1 ? batch / 2 : 64; /* Megatron: all at once */
  char eff[160] = "", text[1200], name[64];
  snprintf(eff, sizeof eff, ", \"tcp_window_bytes\": %.17g", h->window);
  if (h->efficiency > 0)
    snprintf(eff + strlen(eff), sizeof eff - strlen(eff),
             ", \"compute_efficiency\": %.17g", h->efficiency);
  if (h->flow_gbps > 0)
    snprintf(eff + strlen(eff), sizeof eff - strlen(eff),
             ", \"flow_gbps\": %.17g", h->flow_gbps);
  snprintf(text, sizeof text,
           "{\"name\": \"calibration\", \"sites\": [{\"name\": \"p3.2xlarge\", "
           "\"devices\": %d, \"gpu\": \"%s\", \"nic_gbps\": %.17g, "
           "\"nccl_sockets\": %d%s}],\n"
           "\"network\": {\"shaping\": \"tc\", \"latency_ms\": %.17g, "
           "\"bandwidth_gbps\": %.17g},\n"
           "\"workload\": {\"model\": \"gpt3-xl\", \"layers\": %d, \"batch\": "
           "%d, \"micro_batch\": 1, \"stages\": %d, \"replicas\": %d, "
           "\"micro_batches_per_pass\": %d, \"runtime\": \"%s\"}}\n",
           stages * replicas, h->gpu, h->nic_gbps, h->sockets, eff,
           isnan(r->delay_ms) ? DEFAULT_DELAY_MS : r->delay_ms,
           isnan(r->bandwidth_gbps) ? h->nic_gbps : r->bandwidth_gbps,
           r->layers, batch, stages, replicas, per_pass,
           spec_runtime_name(meg ? SPEC_RUNTIME_MEGATRON : SPEC_RUNTIME_DTFM));
  snprintf(name, sizeof name, "%s:%d", CAL_FILE, r->line);
  return scenario_parse(text, strlen(text), name, e);
}

/* The built-in geo case at the row's batch, as DT-FM's tc ran it. */
static scenario *geo_case(const reproduce_row *r, err *e) {
  const char *name = strcmp(r->setting, "datacenter") == 0 ? "datacenter-physical"
                     : strcmp(r->setting, "spot") == 0     ? "spot-physical"
                                                           : r->setting;
  scenario *s = scenario_load(name, e);
  if (!s) return NULL;
  bool meg = is_megatron(r);
  scenario_knobs k;
  scenario_knobs_init(&k);
  k.batch = r->batch;
  k.layers = r->layers;
  k.runtime = spec_runtime_name(meg ? SPEC_RUNTIME_MEGATRON : SPEC_RUNTIME_DTFM);
  if (!meg) k.micro_batches_per_pass = 64; /* Megatron runs them at once */
  if (scenario_apply(s, &k, e)) {
    scenario_free(s);
    return NULL;
  }
  if (strcmp(name, "regional") == 0 || strcmp(name, "worldwide") == 0)
    for (int i = 0; i < s->nsites; i++)
      trace_set_static(s->network, i, i,
                       (trace_value){.latency_ms = INTRA_REGION_MS,
                                     .bandwidth_gbps = INTRA_REGION_GBPS});
  return s;
}

/* The row's iteration under model m: the mean over its placements. */
static int simulate(const reproduce_row *r, const scenario *s,
                    transport_model m, double *out, err *e) {
  const scenario_workload *w = &s->workload;
  const char *method =
      alloc_fixed_names[is_random(r)     ? ALLOC_RANDOM
                        : is_megatron(r) ? ALLOC_MEGATRON
                                         : ALLOC_DTFM_IDENTITY];
  int seeds = is_random(r) ? RANDOM_SEEDS : 1;
  double sum = 0;
  sim_options o = sim_options_default();
  o.transport.model = m;
  for (int k = 1; k <= seeds; k++) {
    alloc *a = alloc_fixed(method, w->replicas, w->stages, (uint64_t)k);
    sim_result res;
    int rc = sim_run(s, a, &o, &res, e);
    alloc_free(a);
    if (rc) return rc;
    sum += res.iteration_s;
    sim_result_free(&res);
  }
  *out = sum / seeds;
  return ERR_OK;
}

static void p2p(reproduce_row *r, const host *h) {
  sim_transfer x = {
      .latency_ms = (isnan(r->delay_ms) ? 0 : r->delay_ms) + ONE_WAY_BASE_MS,
      .back_ms = ONE_WAY_BASE_MS,
      .bandwidth_gbps = isnan(r->bandwidth_gbps) ? h->nic_gbps : r->bandwidth_gbps,
      .bytes = r->bytes,
      .sockets = strcmp(r->system, "gloo") == 0 ? 1 : h->sockets,
      .flow_cap_gbps = h->flow_gbps,
      .host_window_bytes = h->window,
      .transport = transport_options_default()};
  x.transport.model = TRANSPORT_TCP;
  r->sim_s[TRANSPORT_TCP] = sim_transfer_s(&x);
}

#define REPRODUCE_TABLE_NAME(id, name) name,
const char *const reproduce_tables[REPRODUCE_NTABLES + 1] = {
    REPRODUCE_TABLE_MAP(REPRODUCE_TABLE_NAME) NULL};
#undef REPRODUCE_TABLE_NAME

static scenario *row_case(const reproduce_row *r, const host *h, err *e) {
  int t = names_find(reproduce_tables, r->table);
  if (t >= 0)
    switch ((reproduce_table)t) {
      case REPRODUCE_PIPELINE: return uniform_case(r, h, 1, e);
      case REPRODUCE_HOMOGENEOUS: return uniform_case(r, h, 8, e);
      case REPRODUCE_GEO: return geo_case(r, e);
      case REPRODUCE_P2P: /* a transfer, no scenario: run_row's p2p */
        assert(!"a p2p row has no scenario");
        break;
    }
  err_set(e, ERR_PARSE, "%s:%d: unknown table '%s'", CAL_FILE, r->line,
          r->table);
  return NULL;
}

static int run_row(reproduce_row *r, const host *h, err *e) {
  if (names_find(reproduce_tables, r->table) == REPRODUCE_P2P) {
    p2p(r, h);
    return ERR_OK;
  }
  scenario *s = row_case(r, h, e);
  if (!s) return e ? e->code : ERR_CONFIG;
  int rc = simulate(r, s, TRANSPORT_NETEM, &r->sim_s[TRANSPORT_NETEM], e);
  if (!rc) rc = simulate(r, s, TRANSPORT_TCP, &r->sim_s[TRANSPORT_TCP], e);
  scenario_free(s);
  return rc;
}

reproduce_report *reproduce_load(err *e) {
  reproduce_report *rep = mem_calloc(1, sizeof *rep);
  rep->host = mem_calloc(1, sizeof *rep->host);
  int rc = read_table(rep, e);
  if (!rc) rc = load_host(rep->host, e);
  if (rc) {
    reproduce_report_free(rep);
    return NULL;
  }
  return rep;
}

int reproduce_row_tcp(const reproduce_report *rep, int i, double *out,
                      err *e) {
  reproduce_row r = rep->rows[i];
  int rc = ERR_OK;
  if (names_find(reproduce_tables, r.table) == REPRODUCE_P2P) {
    p2p(&r, rep->host);
  } else {
    scenario *s = row_case(&r, rep->host, e);
    if (!s) return e ? e->code : ERR_CONFIG;
    rc = simulate(&r, s, TRANSPORT_TCP, &r.sim_s[TRANSPORT_TCP], e);
    scenario_free(s);
  }
  *out = r.sim_s[TRANSPORT_TCP];
  return rc;
}

reproduce_report *reproduce_run(reproduce_progress_fn progress, void *ctx,
                                err *e) {
  reproduce_report *rep = reproduce_load(e);
  int rc = rep ? ERR_OK : ERR_CONFIG;
  for (int i = 0; rep && i < rep->n && !rc; i++) {
    rc = run_row(&rep->rows[i], rep->host, e);
    if (progress) progress(ctx, i + 1, rep->n);
  }
  if (rc) {
    reproduce_report_free(rep);
    return NULL;
  }
  return rep;
}

void reproduce_report_free(reproduce_report *r) {
  if (!r) return;
  free(r->rows);
  free(r->host);
  free(r);
}

double reproduce_error(const reproduce_row *r, transport_model m) {
  return r->sim_s[m] / r->measured_s - 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int reproduce_summary(const reproduce_report *r, const char *table,
                      transport_model m, double *median, double *worst) {
  double *v = mem_alloc((size_t)(r->n + 1) * sizeof *v);
  int n = 0;
  for (int i = 0; i < r->n; i++) {
    const reproduce_row *x = &r->rows[i];
    double rel = reproduce_error(x, m);
    if ((!table || strcmp(x->table, table) == 0) && !isnan(rel))
      v[n++] = fabs(rel);
  }
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  *median = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
  *worst = n ? v[n - 1] : NAN;
  free(v);
  return n;
}
