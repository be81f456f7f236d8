/* shape_parts: the state of one shape search, shared by shape.c (the
 * enumeration and the predictor's judgement) and shape_decide.c (the
 * decision by simulation among the predictor's best). Internal to
 * schedules/.
 * circle: internal header of the shape search's two files: its state holds
 * shape.h's types, so it includes shape.h and shape.c includes it. */
#ifndef SCHEDULES_SHAPE_PARTS_H
#define SCHEDULES_SHAPE_PARTS_H

#include "models/spec.h"
#include "schedules/shape.h"

#define SHAPE_NALGOS_MAX 3

/* The search's state: the parent, the candidates' lists and the result. */
typedef struct shape_ctx {
  const scenario *s;
  const shape_opts *o;
  spec_workload pw;            /* the parent's workload, resolved */
  const spec_gpu **gpu;        /* [parent devices] */
  int per_replica;             /* sequences per replica (throughput) */
  int micro[SHAPE_MAX_MICRO], nmicro;
  const char *algo[SHAPE_NALGOS_MAX];
  int frag[SHAPE_NALGOS_MAX], nalgos;
  shape_result *r;
  size_t cap;
  /* the smallest stage that did not fit, for the message */
  double nofit_need, nofit_mem;
  int nofit_st, nofit_stages, nofit_layers, nofit_m;
  const char *nofit_gpu;
  int nbatch_ok;               /* (shape, micro-batch) pairs the batch took */
  long done, planned;          /* progress: steps done and planned */
} shape_ctx;

/* One step of the search (a subset or a simulation) done: progress. */
void shape_step(shape_ctx *x);

/* Whether goal keeps each replica's sequences (throughput: the global
 * batch grows with the replicas) or the global batch (iteration). */
bool shape_per_replica_batch(shape_goal goal);

/* DiLoCo's plan on view v for algo with F fragments: o's H and tau where
 * given (the view keeps the workload's otherwise). */
void shape_diloco_plan(const shape_opts *o, scenario *v, const char *algo,
                       int fragments);

/* The decision (shape_decide.c): the predictor's best o->simulate and
 * each shape's best simulated within the devices' budget (for throughput
 * the iteration search's too, at the scenario's batch), r->per_shape and
 * r->best filled. ERR_OK or the simulation's error. */
int shape_decide(shape_ctx *x, err *e);

#endif
