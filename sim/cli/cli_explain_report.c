/* cli_explain_report: the report of `explain` and `simulate --explain` —
 * the run (sim/whatif.h's sim_whatif_explain), its critical path folded by
 * phase and class, the top links and devices, the path's steps, the
 * sensitivities and the links' utilisation, as a table or one JSON object.
 * Invariant: everything printed comes from one base run and its re-runs
 * under the same allocation; the order of every list is deterministic. */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/cli.h"
#include "sim/cli/cli_bill.h"
#include "sim/cli/cli_progress.h"
#include "sim/critpath.h"
#include "sim/linkstats.h"
#include "sim/spend.h"
#include "sim/timeline.h"
#include "sim/whatif.h"

/* Everything one report shows. */
typedef struct report {
  const scenario *s;
  const alloc *a;
  const cli_explain_opts *eo;
  sim_result r;
  sim_critpath cp;
  sim_linkstats ls;
  sim_sensitivity *sens;
  int nsens;
  bill bill;           /* what the base run cost */
} report;

static void print_phases(const sim_critpath *cp) {
  double row[SIM_CP_NPHASES], col[SIM_CP_NCLASSES];
  double all = sim_critpath_margins(cp, row, col);
  printf("\ntime on the critical path by phase and resource class (s)\n");
  printf("%-10s %10s", "PHASE", "TOTAL");
  for (int c = 0; c < SIM_CP_NCLASSES; c++)
    printf(" %10s", sim_cp_class_names[c]);
  for (int p = 0; p < SIM_CP_NPHASES; p++) {
    if (row[p] == 0) continue;
    printf("\n%-10s %10.4f", sim_cp_phase_names[p], row[p]);
    for (int c = 0; c < SIM_CP_NCLASSES; c++)
      printf(" %10.4f", cp->seconds[p][c]);
  }
  printf("\n%-10s %10.4f", "total", all);
  for (int c = 0; c < SIM_CP_NCLASSES; c++) printf(" %10.4f", col[c]);
  printf("\n%-10s %10s", "share", "");
  for (int c = 0; c < SIM_CP_NCLASSES; c++)
    printf(" %9.1f%%", all > 0 ? 100 * col[c] / all : 0);
  printf("\n");
}

/* Link l's seconds by cause, the most first: "window 74.5 s, shared 2 s". */
static void print_causes(const sim_cp_link *l) {
  int order[SIM_CP_NCAUSES], n = sim_critpath_link_causes(l, order);
  for (int k = 0; k < n; k++)
    printf("%s%s %.4g s", k ? ", " : "; ", sim_cp_cause_names[order[k]],
           l->cause_s[order[k]]);
}

static void print_top(const report *p) {
  const sim_critpath *cp = &p->cp;
  const scenario *s = p->s;
  double all = (double)(cp->end - cp->t0) * 1e-9;
  printf("\nlinks longest on the critical path (site -> site; seconds by "
         "cause)\n");
  int w = cli_site_width(s, 14);
  for (int i = 0; i < cp->nlinks && i < 8; i++) {
    const sim_cp_link *l = &cp->links[i];
    printf("  %-*s -> %-*s %9.4f s %5.1f %%  %9.3f GB in %d steps",
           w, s->sites[l->src_site].name, w, s->sites[l->dst_site].name,
           l->seconds,
           all > 0 ? 100 * l->seconds / all : 0, l->bytes * 1e-9, l->steps);
    print_causes(l);
    printf("\n");
  }
  printf("devices longest on the critical path\n");
  for (int i = 0; i < cp->ndevices && i < 8; i++) {
    const sim_cp_device *d = &cp->devices[i];
    printf("  %-4d %-25s %9.4f s %5.1f %%  in %d steps\n", d->dev,
           s->sites[s->device_site[d->dev]].name, d->seconds,
           all > 0 ? 100 * d->seconds / all : 0, d->steps);
  }
}

/* A transfer step's cause with the bound it names: "window: 2 x 1.45 MB
 * per 0.476 s RTT = 0.0487 Gbit/s". */
static void cause_text(const sim_cp_step *x, char *buf, size_t n) {
  const char *name = sim_cp_cause_names[x->cause];
  switch ((sim_cp_cause)x->cause) {
    case SIM_CP_CAUSE_WINDOW:
      snprintf(buf, n, "%s: %d x %.4g MB per %.4g s RTT = %.4g Gbit/s", name,
               x->sockets, x->window_bytes * 1e-6, x->rtt_s, x->bound_gbps);
      break;
    case SIM_CP_CAUSE_LOSS:
      snprintf(buf, n, "%s: %.4g Gbit/s, below the window's %.4g", name,
               x->bound_gbps, 8 * x->sockets * x->window_bytes / x->rtt_s * 1e-9);
      break;
    case SIM_CP_CAUSE_LINK:
      if (x->path_gbps > 0) { /* a path shared by its flows, full */
        snprintf(buf, n, "%s: the path's %.4g Gbit/s, its flows together "
                 "at %.4g", name, x->link_gbps, x->path_gbps);
        break;
      }
      snprintf(buf, n, "%s: %.4g Gbit/s", name, x->link_gbps);
      break;
    case SIM_CP_CAUSE_NIC:
    case SIM_CP_CAUSE_FLOWCAP:
      snprintf(buf, n, "%s: %.4g Gbit/s", name, x->bound_gbps);
      break;
    case SIM_CP_CAUSE_SHARED:
    case SIM_CP_CAUSE_SEND:
      snprintf(buf, n, "%s: below every bound, the least %.4g Gbit/s", name,
               x->bound_gbps);
      break;
  }
}

static void print_step(const scenario *s, const sim_cp_step *x) {
  printf("  %10.4f %9.4f  %-9s ", (double)x->t0 * 1e-9, sim_critpath_step_s(x),
         sim_cp_phase_names[x->phase]);
  const char *role = x->task == UINT32_MAX ? "gap"
                                            : sim_timeline_role_names[x->role];
  switch ((sim_task_kind)x->kind) {
    case SIM_TASK_COMPUTE:
      printf("%s on %d (%s)\n", role, x->dev, s->sites[x->src_site].name);
      break;
    case SIM_TASK_XFER: {
      char why[160];
      cause_text(x, why, sizeof why);
      char rate[96];
      if (!x->send)
        snprintf(rate, sizeof rate, "at %.4g Gbit/s", x->rate_gbps);
      else if (isfinite(x->rate_gbps))
        snprintf(rate, sizeof rate, "into the socket buffers at %.4g Gbit/s, "
                 "its stream at %.4g", x->rate_gbps, x->stream_gbps);
      else
        snprintf(rate, sizeof rate, "into the socket buffers at once, its "
                 "stream at %.4g Gbit/s", x->stream_gbps);
      printf("%s %d (%s) -> %d (%s): %.4g GB %s (%s), latency %.4g s (RTT "
             "%.4g s), queued %.4g s\n", role, x->dev,
             s->sites[x->src_site].name, x->dst, s->sites[x->dst_site].name,
             x->bytes * 1e-9, rate, why, x->link_latency_s, x->rtt_s,
             x->queue_s);
      break;
    }
    case SIM_TASK_JOIN: printf("%s (wait)\n", role); break;
  }
}

static void print_steps(const report *p) {
  size_t n = p->cp.nsteps, show = (size_t)p->eo->steps;
  if (!show) return;
  printf("\nthe critical path (%zu steps%s)\n  %10s %9s  %-9s %s\n", n,
         n > show ? ", the longest listed in time order" : "", "T_S", "DUR_S",
         "PHASE", "WHAT");
  /* the `show` longest steps, listed in time order */
  double cut = sim_critpath_cut_s(&p->cp, show);
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < show; i++)
    if (sim_critpath_step_s(&p->cp.steps[i]) >= cut) {
      print_step(p->s, &p->cp.steps[i]);
      shown++;
    }
}

/* The top resource a sensitivity was made for and that resource's cause on
 * the path ("Seoul>London (window)", "device 9 (compute)"), or "" for the
 * caller's own. */
static void sens_for(const report *p, const sim_sensitivity *v, char *buf,
                     size_t n) {
  *buf = 0;
  if (v->link >= 0) {
    const sim_cp_link *l = &p->cp.links[v->link];
    snprintf(buf, n, "%s>%s (%s)", p->s->sites[l->src_site].name,
             p->s->sites[l->dst_site].name,
             sim_cp_cause_names[sim_critpath_link_cause(l)]);
  } else if (v->device >= 0) {
    snprintf(buf, n, "device %d (compute)", p->cp.devices[v->device].dev);
  }
}

static void print_sens(const report *p) {
  if (!p->nsens) return;
  int w = 44; /* the longest label, at least 44 */
  for (int i = 0; i < p->nsens; i++)
    if ((int)strlen(p->sens[i].w.label) > w)
      w = (int)strlen(p->sens[i].w.label);
  printf("\nsensitivities (re-simulated under the same allocation; base "
         "%.4f s)\n  %-*s %12s %10s  %s\n", p->r.iteration_s, w, "WHAT-IF",
         "ITERATION_S", "GAIN_S", "FOR (ITS CAUSE ON THE PATH)");
  for (int i = 0; i < p->nsens; i++) {
    char why[200];
    sens_for(p, &p->sens[i], why, sizeof why);
    printf("  %-*s %12.4f %+10.4f  %s\n", w, p->sens[i].w.label,
           p->sens[i].iteration_s, p->sens[i].gain_s, why);
  }
}

static void print_util(const report *p) {
  int ord[10], n = sim_linkstats_busiest(&p->ls, ord, 10), w = 28;
  char name[10][256]; /* the longest, at least 28, sets the column */
  for (int k = 0; k < n; k++) {
    sim_linkstats_name(&p->ls, &p->ls.res[ord[k]], p->s, name[k],
                       sizeof name[k]);
    if ((int)strlen(name[k]) > w) w = (int)strlen(name[k]);
  }
  printf("\nlink and NIC utilisation over the iteration (busiest first)\n"
         "  %-*s %-7s %10s %9s %7s %7s %8s\n", w, "RESOURCE", "KIND", "GB",
         "BUSY_S", "MEAN%", "PEAK%", "CAP_GBPS");
  for (int k = 0; k < n; k++) {
    const sim_ls_res *r = &p->ls.res[ord[k]];
    printf("  %-*s %-7s %10.3f %9.3f %7.1f %7.1f %8.3g\n", w, name[k],
           sim_ls_kind_names[r->kind], r->bytes * 1e-9, r->busy_s,
           100 * r->mean_util, 100 * r->peak_util, r->capacity_gbps);
  }
}

/* Each link between sites: its bytes, price, dollars and share of the
 * egress bill (of the bytes where egress is not priced). */
static void print_egress(const report *p) {
  const bill *b = &p->bill;
  double bytes = 0;
  for (int i = 0; i < b->npairs; i++)
    if (b->pair[i].src != b->pair[i].dst) bytes += b->pair[i].bytes;
  if (bytes <= 0) return;
  int w = cli_site_width(p->s, 14);
  printf("\negress by link (site -> site), per iteration; billed at the "
         "sender\n  %-*s    %-*s %10s %10s %10s %8s\n", w, "FROM", w, "TO",
         "GB", "USD/GB", "USD", "SHARE_%");
  for (int i = 0; i < b->npairs; i++) {
    const bill_pair *x = &b->pair[i];
    if (x->src == x->dst) continue;
    double share = isnan(b->egress_usd) || b->egress_usd <= 0
                       ? x->bytes / bytes : x->usd / b->egress_usd;
    char pr[24], usd[24];
    printf("  %-*s -> %-*s %10.3f %10s %10s %8.1f\n",
           w, p->s->sites[x->src].name, w, p->s->sites[x->dst].name,
           x->bytes * 1e-9, isnan(x->usd_per_gb) ? "-" : cli_real(pr, sizeof pr,
           "%.4g", x->usd_per_gb), isnan(x->usd) ? "-" : cli_real(usd,
           sizeof usd, "%.4g", x->usd), 100 * share);
  }
  if (isnan(b->egress_usd))
    printf("  (egress not priced everywhere: shares of the bytes)\n");
}

static void print_table(const report *p) {
  const scenario *s = p->s;
  printf("scenario    %s, %d devices: %d stages x %d replicas, %s\n", s->name,
         s->ndevices, s->workload.stages, s->workload.replicas,
         p->eo->placement);
  printf("network     %s\n", transport_model_name(p->r.network));
  char rt[160];
  cli_runtime_text(s, p->a, p->r.iteration_s, rt, sizeof rt);
  printf("runtime     %s%s%s%s\n", s->workload.runtime, rt[0] ? " (" : "", rt,
         rt[0] ? ")" : "");
  cli_print_params();
  printf("iteration   %.4f s; the critical path: %zu steps over %.4f s%s\n",
         p->r.iteration_s, p->cp.nsteps,
         (double)(p->cp.end - p->cp.t0) * 1e-9,
         p->r.inner_steps ? " (DiLoCo: the outer step's graph)" : "");
  print_phases(&p->cp);
  print_top(p);
  print_steps(p);
  print_sens(p);
  print_util(p);
  print_egress(p);
  printf("\n");
  cli_bill_print(p->s, &p->bill, "per iteration");
}

/* A step's kind as --json names it. */
static const char *kind_name(sim_task_kind k) {
  switch (k) {
    case SIM_TASK_COMPUTE: return "compute";
    case SIM_TASK_XFER: return "transfer";
    case SIM_TASK_JOIN: return "wait";
  }
  assert(!"unknown task kind");
  return "";
}

/* A transfer step's stream and bounds: what its cause was judged on. */
static void json_step_bounds(json_t *o, const sim_cp_step *x) {
  json_object_set_new(o, "send", json_boolean(x->send));
  json_object_set_new(o, "stream_gbps", cli_json_number(x->stream_gbps));
  json_object_set_new(o, "bound_gbps", cli_json_number(x->bound_gbps));
  json_object_set_new(o, "link_gbps", cli_json_number(x->link_gbps));
  if (x->path_gbps > 0)
    json_object_set_new(o, "path_gbps", cli_json_number(x->path_gbps));
  json_object_set_new(o, "link_latency_s", cli_json_number(x->link_latency_s));
  json_object_set_new(o, "rtt_s", cli_json_number(x->rtt_s));
  json_object_set_new(o, "window_bytes", cli_json_number(x->window_bytes));
  json_object_set_new(o, "sockets", json_integer(x->sockets));
}

static json_t *json_step(const scenario *s, const sim_cp_step *x) {
  json_t *o = json_object();
  json_object_set_new(o, "t_s", cli_json_number((double)x->t0 * 1e-9));
  json_object_set_new(o, "dur_s", cli_json_number(sim_critpath_step_s(x)));
  json_object_set_new(o, "kind",
                      json_string(kind_name((sim_task_kind)x->kind)));
  json_object_set_new(o, "phase", json_string(sim_cp_phase_names[x->phase]));
  json_object_set_new(o, "class", json_string(sim_cp_class_names[x->cls]));
  if (x->task != UINT32_MAX) {
    json_object_set_new(o, "task", json_integer(x->task));
    json_object_set_new(o, "role", json_string(sim_timeline_role_names[x->role]));
  }
  switch ((sim_task_kind)x->kind) {
    case SIM_TASK_COMPUTE:
      json_object_set_new(o, "device", json_integer(x->dev));
      json_object_set_new(o, "site", json_string(s->sites[x->src_site].name));
      break;
    case SIM_TASK_XFER:
      json_object_set_new(o, "src", json_integer(x->dev));
      json_object_set_new(o, "dst", json_integer(x->dst));
      json_object_set_new(o, "src_site",
                          json_string(s->sites[x->src_site].name));
      json_object_set_new(o, "dst_site",
                          json_string(s->sites[x->dst_site].name));
      json_object_set_new(o, "bytes", cli_json_number(x->bytes));
      json_object_set_new(o, "rate_gbps", cli_json_number(x->rate_gbps));
      json_object_set_new(o, "latency_s", cli_json_number(x->latency_s));
      json_object_set_new(o, "queue_s", cli_json_number(x->queue_s));
      json_object_set_new(o, "cause",
                          json_string(sim_cp_cause_names[x->cause]));
      json_step_bounds(o, x);
      break;
    case SIM_TASK_JOIN: break;
  }
  return o;
}

/* A link of the path: its time, bytes, steps, its seconds by cause
 * ({"window": s, ...}, causes it had) and the cause of most of them. */
static json_t *json_link(const scenario *s, const sim_cp_link *x) {
  json_t *c = json_object();
  for (int k = 0; k < SIM_CP_NCAUSES; k++)
    if (x->cause_s[k] > 0)
      json_object_set_new(c, sim_cp_cause_names[k],
                          cli_json_number(x->cause_s[k]));
  return json_pack("{s:s,s:s,s:o,s:o,s:i,s:s,s:o}", "src_site",
                   s->sites[x->src_site].name, "dst_site",
                   s->sites[x->dst_site].name, "seconds",
                   cli_json_number(x->seconds), "bytes",
                   cli_json_number(x->bytes), "steps", x->steps, "cause",
                   sim_cp_cause_names[sim_critpath_link_cause(x)], "causes", c);
}

static json_t *json_path(const report *p) {
  const sim_critpath *cp = &p->cp;
  const scenario *s = p->s;
  json_t *o = json_object(), *ph = json_object(), *l = json_array(),
         *d = json_array(), *st = json_array();
  for (int i = 0; i < SIM_CP_NPHASES; i++) {
    json_t *c = json_object();
    for (int k = 0; k < SIM_CP_NCLASSES; k++)
      json_object_set_new(c, sim_cp_class_names[k],
                          cli_json_number(cp->seconds[i][k]));
    json_object_set_new(ph, sim_cp_phase_names[i], c);
  }
  for (int i = 0; i < cp->nlinks; i++)
    json_array_append_new(l, json_link(s, &cp->links[i]));
  for (int i = 0; i < cp->ndevices; i++)
    json_array_append_new(
        d, json_pack("{s:i,s:s,s:o,s:i}", "device", cp->devices[i].dev, "site",
                     s->sites[s->device_site[cp->devices[i].dev]].name,
                     "seconds", cli_json_number(cp->devices[i].seconds),
                     "steps", cp->devices[i].steps));
  for (size_t i = 0; i < cp->nsteps; i++)
    json_array_append_new(st, json_step(s, &cp->steps[i]));
  json_object_set_new(o, "seconds", cli_json_number((double)(cp->end - cp->t0) * 1e-9));
  json_object_set_new(o, "phases", ph);
  json_object_set_new(o, "links", l);
  json_object_set_new(o, "devices", d);
  json_object_set_new(o, "steps", st);
  return o;
}

static json_t *json_util(const report *p) {
  json_t *a = json_array();
  for (int i = 0; i < p->ls.nres; i++) {
    const sim_ls_res *r = &p->ls.res[i];
    char name[256];
    sim_linkstats_name(&p->ls, r, p->s, name, sizeof name);
    json_array_append_new(
        a, json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:I}", "kind",
                     sim_ls_kind_names[r->kind], "resource", name,
                     "capacity_gbps", cli_json_number(r->capacity_gbps),
                     "bytes", cli_json_number(r->bytes), "busy_s",
                     cli_json_number(r->busy_s), "mean_util",
                     cli_json_number(r->mean_util), "peak_util",
                     cli_json_number(r->peak_util), "flows",
                     (json_int_t)r->flows));
  }
  return a;
}

/* A sensitivity: its what-if, the re-run, and the top resource it was
 * made for with that resource's cause (null for a caller's what-if). */
static json_t *json_sens(const report *p, const sim_sensitivity *v) {
  json_t *o = json_pack("{s:s,s:o,s:o}", "what_if", v->w.label, "iteration_s",
                        cli_json_number(v->iteration_s), "gain_s",
                        cli_json_number(v->gain_s));
  json_t *res = json_null(), *cause = json_null();
  if (v->link >= 0) {
    const sim_cp_link *l = &p->cp.links[v->link];
    res = json_sprintf("%s>%s", p->s->sites[l->src_site].name,
                       p->s->sites[l->dst_site].name);
    cause = json_string(sim_cp_cause_names[sim_critpath_link_cause(l)]);
  } else if (v->device >= 0) {
    res = json_sprintf("device %d", p->cp.devices[v->device].dev);
    cause = json_string("compute");
  }
  json_object_set_new(o, "resource", res);
  json_object_set_new(o, "cause", cause);
  return o;
}

static void print_json(const report *p) {
  json_t *o = json_object(), *sv = json_array();
  json_object_set_new(o, "scenario", json_string(p->s->name));
  json_object_set_new(o, "placement", json_string(p->eo->placement));
  json_object_set_new(o, "network_model",
                      json_string(transport_model_name(p->r.network)));
  json_object_set_new(o, "runtime",
                      cli_json_runtime(p->s, p->a, p->r.iteration_s));
  json_object_set_new(o, "params", cli_json_params());
  json_object_set_new(o, "iteration_s", cli_json_number(p->r.iteration_s));
  json_object_set_new(o, "critical_path", json_path(p));
  for (int i = 0; i < p->nsens; i++)
    json_array_append_new(sv, json_sens(p, &p->sens[i]));
  json_object_set_new(o, "sensitivities", sv);
  json_object_set_new(o, "utilisation", json_util(p));
  json_object_set_new(o, "cost", cli_bill_json(p->s, &p->bill));
  cli_print_json(o, CLI_JSON);
}

/* sim_sens_opts' hook: a re-run done. */
static void heard_rerun(void *ctx, int done, int total) {
  cli_progress_update(ctx, "re-runs", done, total, NULL);
}

int cli_explain_report(const char *cmd, const scenario *s, const alloc *a,
                       const sim_options *o, const cli_explain_opts *eo) {
  report p = {.s = s, .a = a, .eo = eo};
  err e = {0};
  int rc = sim_whatif_explain(s, a, o, &p.r, &p.cp, &p.ls,
                              eo->link_stats != NULL, &e);
  cli_progress bar;
  cli_progress_start(&bar, cmd, eo->quiet);
  if (!rc)
    rc = sim_whatif_sensitivities(
        s, a, o,
        &(sim_sens_opts){.cp = &p.cp, .top = eo->top, .extra = eo->whatifs,
                         .nextra = eo->nwhatifs, .base_s = p.r.iteration_s,
                         .progress = heard_rerun, .progress_ctx = &bar},
        &p.sens, &p.nsens, &e);
  cli_progress_end(&bar);
  if (!rc && eo->link_stats)
    rc = sim_linkstats_csv(&p.ls, s, eo->resolution_s, eo->link_stats, &e);
  if (!rc) rc = sim_spend_iteration(s, &p.r, &p.bill, &e);
  if (rc) {
    rc = cli_fail(cmd, &e);
  } else {
    if (eo->json) print_json(&p);
    else print_table(&p);
    rc = CLI_OK;
  }
  free(p.sens);
  bill_free(&p.bill);
  sim_linkstats_free(&p.ls);
  sim_critpath_free(&p.cp);
  sim_result_free(&p.r);
  return rc;
}
