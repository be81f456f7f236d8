/* result: the figures of one simulated iteration (sim_result) — what the
 * engine (sim.c) returns and the statistics (stats.c) fill from its task
 * records, below both.
 * Invariant: a result owns its arrays (stage, utilisation, classes,
 * site_bytes), freed by sim_result_free; classes and site_bytes are
 * busiest first (sim_link_classes_sort). */
#ifndef SIM_RESULT_H
#define SIM_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "models/alloc.h"
#include "models/transport.h"

/* Per-device means over one group of devices, seconds. */
typedef struct sim_breakdown {
  double compute_s;  /* compute stream busy (forward, backward, optimizer) */
  double bubble_s;   /* compute stream idle from 0 to its last backward */
  double comm_s;     /* send or receive stream busy (union) */
  double dp_sync_s;  /* last backward done -> gradient sync complete */
} sim_breakdown;

/* Bytes sent from devices of one site to devices of another (a "link
 * class"; src == dst: inside a site). */
typedef struct sim_link_class {
  int src_site, dst_site;
  double bytes;
  uint64_t flows;
} sim_link_class;

/* Sorts n classes busiest first (by bytes, then sender and receiver site),
 * the order sim_result.classes is in. */
void sim_link_classes_sort(sim_link_class *c, int n);

/* Adds the nfrom classes of from into *to (*n of them, capacity *cap,
 * grown), summing bytes and flows of a pair already there (in from's
 * order; a new pair goes last). */
void sim_link_classes_add(sim_link_class **to, int *n, size_t *cap,
                          const sim_link_class *from, int nfrom);

typedef struct sim_result {
  double iteration_s;     /* the last device's end */
  sim_breakdown mean;     /* over all devices */
  int stages;
  sim_breakdown *stage;   /* [stages]: over the devices of each stage */
  uint64_t events;        /* events taken from the queue */
  uint64_t tasks, flows;  /* graph size, flows started */
  int nclasses;
  sim_link_class *classes; /* busiest first */
  transport_model network;
  /* Utilisation: compute stream busy (forward, backward, optimizer,
   * compression and DiLoCo's outer steps) over wall time. */
  double compute_utilisation; /* all devices: busy sum over n x wall */
  int ndevices;
  double *utilisation;        /* [ndevices] */
  double samples_per_s;       /* batch / iteration_s */
  double pp_bytes, dp_bytes;  /* pipeline and data-parallel bytes sent per
                                 iteration (DiLoCo: per inner step) */
  double wan_bytes;           /* of both, those between sites */
  /* DiLoCo (dp_algo diloco or streaming-diloco; 0 otherwise). Its
   * iteration_s is outer_step_s / H: the time per batch, comparable with
   * the other algorithms'; mean and stage are the first inner step's, but
   * dp_sync_s is what the exchanges add per inner step and compute_s is
   * per inner step with the exchanges' quantisation and outer steps. */
  int inner_steps;            /* H */
  int explicit_steps;         /* inner steps the graph held */
  double inner_step_s;        /* one inner step no exchange overlaps */
  double outer_step_s;        /* H inner steps with every exchange */
  int64_t end_ns;         /* when the last device finished (absolute) */
  /* Bytes sent per ordered site pair per iteration, as pp_bytes, dp_bytes
   * and wan_bytes count them (the link classes, but for DiLoCo the
   * pipeline's per inner step and the exchange over H, where classes hold
   * the first inner step's only): what a bill prices. Busiest first. */
  int nsite_bytes;
  sim_link_class *site_bytes;
} sim_result;

/* Frees the arrays of r (not r itself); NULL is fine. */
void sim_result_free(sim_result *r);

/* The least (*lo) and the most (*hi) compute utilisation of the devices
 * of stage st under a (the stage's mean hides a slow GPU beside fast
 * ones); a device r has no utilisation for is left out; 1 and 0 when none
 * has one. */
void sim_result_stage_range(const sim_result *r, const alloc *a, int st,
                            double *lo, double *hi);

#endif
