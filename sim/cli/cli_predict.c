/* cli_predict: `geodes predict SCENARIO (--alloc FILE | --partition FILE |
 * --method NAME) [--json]` — DT-FM's analytic score of a placement (DP and
 * PP parts, the pipeline order, the bottleneck link of each stage boundary)
 * and the closed-form iteration time of models/predict.
 * Invariant: exactly one placement source; every resource is released at
 * the single exit of predict_main, whatever failed. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/alloc.h"
#include "models/cost.h"
#include "models/partition.h"
#include "models/predict.h"
#include "models/spec.h"
#include "models/bill.h"
#include "models/spec_workload.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_bill.h"
#include "sim/place.h"
#include "sim/spend.h"
#include "traces/scenario_subset.h"

static const cli_opt_command PREDICT = {
    .name = "predict",
    .usage =
        "usage: geodes predict SCENARIO (--alloc FILE | --partition FILE |\n"
        "                      --method NAME) [--json] [OPTIONS]\n\n"
        "Scores a placement with DT-FM's cost model (DataPCost + 2 x\n"
        "PipelinePCost, as DT-FM defines them) and predicts the iteration time\n"
        "in closed form (compute, GPipe bubble, exposed pipeline transfers,\n"
        "gradient synchronisation, optimizer step).\n\n",
    .width = 20, .args_min = 1, .args_max = 1, .missing = "which SCENARIO?"};

typedef struct predict_args {
  const char *scenario, *alloc_file, *partition_file, *method;
  bool json;
  int network; /* a transport_model */
  cli_workload_opts wo;
} predict_args;

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, predict_args *p) {
  *p = (predict_args){.network = TRANSPORT_MODEL_DEFAULT};
  cli_workload_init(&p->wo);
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "alloc", "FILE", &p->alloc_file, CLI_ALLOC_HELP),
      CLI_OPT_STRING(0, "partition", "FILE", &p->partition_file,
                     "{\"groups\": [[d, ...], ...]}: best order and\n"
                     "pairing are chosen by the cost model"),
      CLI_OPT_STRING(0, "method", "NAME", &p->method, cli_method_help()),
      CLI_OPT_ENUM(0, "network-model", "M", &p->network, transport_model_names,
                   NULL,
                   "tcp (default), netem or ideal: the network\n"
                   "model the iteration time is predicted for"),
      CLI_OPT_ALIAS("network", "network-model"),
      CLI_OPT_FLAG(0, "json", &p->json, "one JSON object on stdout"),
      CLI_OPT_HELP(),
      CLI_WORKLOAD_OPTS(&p->wo),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&PREDICT, opts, argc, argv, &args, &nargs);
  if (rc) return rc;
  p->scenario = args[0];
  int sources = !!p->alloc_file + !!p->partition_file + !!p->method;
  if (sources != 1)
    return cli_usage_error("predict", "give exactly one of --alloc, "
                           "--partition, --method");
  return p->method ? cli_check_method("predict", &p->method) : CLI_OK;
}

/* What the predictor leaves out of this case, beyond its tolerance. */
static void print_left_out(const predict_result *r) {
  if (!r->left_out) {
    printf("  left out     nothing that costs more than %.0f %% here\n",
           100 * PREDICT_TOLERANCE);
    return;
  }
  for (int g = 0; g < PREDICT_NGAPS; g++)
    if (r->left_out & (1u << g))
      printf("  left out     %s: %s\n", predict_gap_names[g],
             predict_gap_what((predict_gap)g));
  printf("  so it may be off by %s%.0f %% here (simulate runs it)\n",
         isfinite(r->error_bound) ? "up to " : "more than ",
         100 * (isfinite(r->error_bound) ? r->error_bound : PREDICT_TOLERANCE));
}

/* The same as JSON: [{"name", "what"}, ...], empty when none. */
static json_t *left_out_json(const predict_result *r) {
  json_t *l = json_array();
  for (int g = 0; g < PREDICT_NGAPS; g++)
    if (r->left_out & (1u << g))
      json_array_append_new(l, json_pack("{s:s, s:s}", "name",
                                         predict_gap_names[g], "what",
                                         predict_gap_what((predict_gap)g)));
  return l;
}

/* Everything one prediction computes. */
typedef struct prediction {
  alloc *a;                /* the placement (realised for a partition) */
  int *order;              /* partition: group order along the pipeline */
  cost_parts parts;        /* the score of the placement as given */
  double partition_score;  /* the best order/pairing of a's groups */
  predict_result pr;
  transport_model network;     /* the network model predicted for */
  transport_options transport; /* ... and its options */
  const char *source;      /* "alloc", "partition" or "method" */
  const int *layers;       /* layers per stage when not the even split */
  bill bill;               /* what the predicted iteration costs */
} prediction;

static void print_table(const scenario *s, const cost_ctx *c,
                        const prediction *p) {
  const alloc *a = p->a;
  printf("scenario   %s, %d devices: %d stages x %d replicas\n", s->name,
         s->ndevices, a->stages, a->replicas);
  printf("sizes      c_pp %.6g GB (activations), c_dp %.6g GB (gradients)\n",
         cost_ctx_activation_gb(c), cost_ctx_gradient_gb(c));
  cli_print_setup(&p->transport, s, a, p->pr.iteration_s);
  printf("\nDT-FM cost model\n");
  printf("  DP part (DataPCost)          %10.4f s\n", p->parts.dp_s);
  printf("  PP part (2 x PipelinePCost)  %10.4f s\n", p->parts.pp_s);
  printf("  score                        %10.4f s\n", p->parts.score_s);
  printf("  best order of these groups   %10.4f s\n", p->partition_score);
  if (p->order) {
    printf("  pipeline order (groups of the file):");
    for (int i = 0; i < a->stages; i++) printf(" %d", p->order[i]);
    putchar('\n');
  }
  printf("\n  %-8s %-14s %-28s %s\n", "BOUNDARY", "BOTTLENECK_S", "LINK",
         "REPLICA");
  for (int st = 0; st + 1 < a->stages; st++) {
    int r;
    double v = cost_boundary(c, a, st, &r);
    int d0 = alloc_at(a, r, st), d1 = alloc_at(a, r, st + 1);
    char link[128];
    snprintf(link, sizeof link, "%d (%s) -> %d (%s)", d0,
             s->sites[s->device_site[d0]].name, d1,
             s->sites[s->device_site[d1]].name);
    printf("  %d -> %-3d %-14.4f %-28s %d\n", st, st + 1, v, link, r);
  }
  const predict_result *r = &p->pr;
  printf("\npredicted iteration (%d passes x %d micro-batches)\n", r->passes,
         r->micro_batches);
  printf("  compute      %10.3f s  (fwd %.4f + bwd %.4f s per micro-batch)\n",
         r->compute_s, r->fwd_s, r->bwd_s);
  printf("  bubble       %10.3f s\n", r->bubble_s);
  printf("  pp comm      %10.3f s\n", r->pp_comm_s);
  printf("  dp sync      %10.3f s\n", r->dp_sync_s);
  printf("  optimizer    %10.3f s\n", r->optimizer_s);
  printf("  iteration    %10.3f s\n", r->iteration_s);
  if (r->outer_step_s > 0)
    printf("  diloco       %10.3f s per outer step (inner step %.3f s)\n",
           r->outer_step_s, r->inner_step_s);
  print_left_out(r);
  if (p->layers) {
    printf("  layers per stage:");
    for (int st = 0; st < a->stages; st++) printf(" %d", p->layers[st]);
    putchar('\n');
  }
  printf("\n");
  cli_bill_print(s, &p->bill, "per predicted iteration");
}

static void print_json(const scenario *s, const cost_ctx *c,
                       const prediction *p) {
  const predict_result *r = &p->pr;
  json_t *o = json_object(), *b = json_array();
  json_object_set_new(o, "cost", cli_bill_json(s, &p->bill));
  json_object_set_new(o, "scenario", json_string(s->name));
  json_object_set_new(o, "source", json_string(p->source));
  json_object_set_new(o, "network_model",
                      json_string(transport_model_name(p->network)));
  cli_json_setup(o, &p->transport, s, p->a, r->iteration_s);
  json_object_set_new(o, "dp_cost_s", json_real(p->parts.dp_s));
  json_object_set_new(o, "pp_cost_s", json_real(p->parts.pp_s));
  json_object_set_new(o, "score_s", json_real(p->parts.score_s));
  json_object_set_new(o, "partition_score_s", json_real(p->partition_score));
  json_object_set_new(o, "predicted_iteration_s", json_real(r->iteration_s));
  json_object_set_new(o, "compute_s", json_real(r->compute_s));
  json_object_set_new(o, "bubble_s", json_real(r->bubble_s));
  json_object_set_new(o, "pp_comm_s", json_real(r->pp_comm_s));
  json_object_set_new(o, "dp_sync_s", json_real(r->dp_sync_s));
  json_object_set_new(o, "optimizer_s", json_real(r->optimizer_s));
  json_object_set_new(o, "passes", json_integer(r->passes));
  json_object_set_new(o, "micro_batches_per_pass", json_integer(r->micro_batches));
  json_object_set_new(o, "activation_gb", json_real(cost_ctx_activation_gb(c)));
  json_object_set_new(o, "gradient_gb", json_real(cost_ctx_gradient_gb(c)));
  if (r->outer_step_s > 0) {
    json_object_set_new(o, "inner_step_s", json_real(r->inner_step_s));
    json_object_set_new(o, "outer_step_s", json_real(r->outer_step_s));
  }
  json_object_set_new(o, "tolerance", json_real(PREDICT_TOLERANCE));
  json_object_set_new(o, "error_bound", isfinite(r->error_bound)
                                            ? json_real(r->error_bound)
                                            : json_null());
  json_object_set_new(o, "left_out", left_out_json(r));
  for (int st = 0; st + 1 < p->a->stages; st++) {
    int rep;
    double v = cost_boundary(c, p->a, st, &rep);
    json_array_append_new(
        b, json_pack("{s:i, s:f, s:i, s:i, s:i}", "stage", st, "bottleneck_s",
                     v, "replica", rep, "from", alloc_at(p->a, rep, st), "to",
                     alloc_at(p->a, rep, st + 1)));
  }
  json_object_set_new(o, "boundaries", b);
  if (p->order) {
    json_t *ord = json_array();
    for (int i = 0; i < p->a->stages; i++)
      json_array_append_new(ord, json_integer(p->order[i]));
    json_object_set_new(o, "order", ord);
  }
  if (p->layers) {
    json_t *l = json_array();
    for (int st = 0; st < p->a->stages; st++)
      json_array_append_new(l, json_integer(p->layers[st]));
    json_object_set_new(o, "layers_per_stage", l);
  }
  json_object_set_new(o, "alloc", alloc_json(p->a));
  cli_print_json(o, CLI_JSON);
}

/* Fills p->a (and p->order) from the chosen source. */
static int place(const predict_args *args, const scenario *s,
                 const cost_ctx *c, cost_scratch *w, prediction *p, err *e) {
  int R = s->workload.replicas, D = s->workload.stages, N = s->ndevices;
  if (args->alloc_file) { /* read before the workload was resolved */
    p->source = "alloc";
    return ERR_OK;
  }
  if (args->partition_file) {
    p->source = "partition";
    alloc_partition *part = alloc_partition_read(args->partition_file, D, R, N, e);
    if (!part) return e->code;
    p->order = mem_alloc((size_t)D * sizeof *p->order);
    cost_pp(c, part->device, p->order, w);
    p->a = cost_realise(c, part->device, w);
    alloc_partition_free(part);
    return ERR_OK;
  }
  p->source = "method";
  p->a = sim_place(s, c, args->method, NULL, e);
  return p->a ? ERR_OK : e->code;
}

int cli_predict(int argc, char **argv) {
  predict_args args;
  int rc = parse_args(argc, argv, &args);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  err e = {0};
  scenario *parent = scenario_load(args.scenario, &e), *view = NULL;
  const scenario *s = parent;
  cost_ctx *c = NULL;
  cost_scratch *w = NULL;
  const spec_gpu **gpu = NULL;
  int *layers = NULL;
  prediction p = {0};
  spec_workload wl;
  if (!parent ||
      cli_workload_alloc(&args.wo, args.alloc_file, parent, &p.a, &view, &e) ||
      (rc = cli_workload_usage("predict", &args.wo, parent)))
    goto done;
  if (view) s = view; /* the file's devices work, the others idle */
  if (spec_workload_resolve(s, &wl, &e)) goto done;
  gpu = mem_calloc((size_t)s->ndevices, sizeof *gpu);
  if (spec_device_gpus(s, gpu, &e) || !(c = cost_ctx_from_scenario(s, &e)))
    goto done;
  w = cost_scratch_new(wl.replicas, wl.stages);
  layers = mem_alloc((size_t)wl.stages * sizeof *layers);
  if (place(&args, s, c, w, &p, &e) ||
      partition_apply(&wl, s, gpu, p.a, layers, &e) ||
      spec_check_memory(&wl, s, p.a->device, gpu, &e))
    goto done;
  cost_alloc(c, p.a, &p.parts);
  alloc_partition *part = alloc_to_partition(p.a);
  p.partition_score = cost_partition(c, part->device, w, NULL);
  alloc_partition_free(part);
  p.network = (transport_model)args.network;
  p.layers = wl.stage_layers;
  transport_options po = cli_transport(&args.wo, p.network);
  p.transport = po;
  predict_iteration_with(&wl, s, gpu, p.a, &po, &p.pr);
  if (sim_spend_predicted(s, &wl, p.a, p.pr.iteration_s, &p.bill, &e))
    goto done;
  if (args.json) print_json(s, c, &p);
  else print_table(s, c, &p);
done:
  if (e.code) rc = cli_fail("predict", &e);
  alloc_free(p.a);
  bill_free(&p.bill);
  free(p.order);
  free(layers);
  free(gpu);
  cost_scratch_free(w);
  cost_ctx_free(c);
  scenario_subset_free(view);
  scenario_free(parent);
  return rc;
}
