/* diloco: the synchronisation schedules of DiLoCo and streaming DiLoCo —
 * which values a data-parallel group exchanges after which inner step, how
 * long the exchange may overlap the inner steps that follow, and the
 * period's time in closed form for the predictor.
 *
 * DiLoCo (Douillard et al. 2023, arXiv 2311.08105; OpenDiLoCo, Jaghouar et
 * al. 2024, arXiv 2407.07852; INTELLECT-1, arXiv 2412.01152): every replica
 * runs H inner steps with no data-parallel traffic, then each stage's group
 * all-reduces its pseudo-gradient (global minus local parameters) and takes
 * an outer step. The replicas wait for it: nothing overlaps.
 *
 * Streaming DiLoCo (Douillard et al. 2025, arXiv 2501.18512, "Streaming
 * DiLoCo with overlapping communication: towards a distributed free
 * lunch"): the layers are split into F fragments, strided (layer l belongs
 * to fragment l mod F, the pattern the paper prefers to sequential blocks);
 * each fragment is synchronised every H inner steps, the fragments offset
 * from each other by H / F, so one fragment is exchanged every H / F inner
 * steps, in turn 0, 1, ..., F - 1; an exchange starts tau inner steps
 * before it is needed and overlaps them (tau = --overlap-steps, the
 * paper's overlap, at most H / F - 1 so that one exchange is in flight at
 * a time); its values are usually 4-bit (--grad-bits 4). The step
 * numbering follows torchft's implementation of the paper
 * (torchft/local_sgd.py, class DiLoCo, fragment_sync_delay = tau): the
 * exchange of a fragment is launched after inner step k H/F - tau and
 * waited for after inner step k H/F (k = 1, 2, ...).
 * Assumed where the paper fragments only the transformer blocks: the input
 * embedding travels with fragment 0, the final norm and LM head with
 * fragment F - 1.
 *
 * Invariant: pure functions of their arguments; steps count from 1, the
 * first inner step of the run. */
#ifndef MODELS_DILOCO_H
#define MODELS_DILOCO_H

#include <stdbool.h>

#include "base/err.h"
#include "models/alloc.h"
#include "models/spec.h"
#include "traces/scenario.h"
#include "traces/workload.h"

typedef struct diloco_plan {
  int inner_steps; /* H >= 1 */
  int fragments;   /* F >= 1: 1 for DiLoCo */
  int overlap;     /* tau >= 0 inner steps: 0 for DiLoCo */
} diloco_plan;

/* The outer step after an exchange: the pseudo-gradient (global minus
 * local) and Nesterov momentum SGD on fp32 values, as DiLoCo's outer
 * optimizer: read global, local, delta and momentum, write delta,
 * momentum and global, plus the local copy: 8 fp32 values, 32 bytes per
 * parameter through memory. */
#define DILOCO_OUTER_BYTES_PER_PARAM 32.0

/* The workload rows (traces/workload.h) DiLoCo reads: its plan's H, F and
 * tau, in diloco_plan's order, then the levels of its exchange. A run
 * without a DiLoCo algorithm leaves them at their defaults; F and tau are
 * streaming DiLoCo's (DiLoCo's are 1 and 0). */
#define DILOCO_NROWS 4
extern const workload_field diloco_rows[DILOCO_NROWS];

/* How diloco_check's messages name H, F and tau: where each came from as a
 * message's lead ("--fragments", or "s.json:7: workload.fragments:") and
 * its name inside a sentence ("--inner-steps", "workload.inner_steps"),
 * the row a failure names (err.field), and whether a knob gave the value
 * (a failure about two values names the knob's row). */
typedef struct diloco_names {
  const char *lead[3], *name[3]; /* H, F, tau */
  int field[3];
  bool knob[3];
} diloco_names;

/* The command line's options for all three. */
extern const diloco_names diloco_option_names;

/* ERR_OK when p can run on a model of `layers` layers, else ERR_CONFIG
 * with a message naming the value by n (NULL: diloco_option_names):
 * H >= 1; F from 1 to the layer count, dividing the layers (equal strided
 * fragments) and H (one fragment every H / F steps); tau from 0 to
 * H / F - 1. */
int diloco_check(const diloco_plan *p, int layers, const diloco_names *n,
                 err *e);

/* Inner steps between two consecutive exchanges: H / F. */
int diloco_period(const diloco_plan *p);

/* The fragment whose exchange is launched right after inner step t, or -1:
 * t = k H/F - tau for some k >= 1, fragment (k - 1) mod F. */
int diloco_starts_after(const diloco_plan *p, long long t);

/* The fragment whose exchange must be complete before inner step t + 1
 * begins (the replica blocks on it after step t), or -1: t = k H/F,
 * fragment (k - 1) mod F. */
int diloco_due_after(const diloco_plan *p, long long t);

/* Layer l's fragment: l mod F. */
int diloco_fragment_of_layer(const diloco_plan *p, int l);

/* The parameters of stage st of w that belong to fragment f: its layers
 * l with l mod F = f (stage st holds layers first .. first +
 * spec_stage_layers - 1), the embedding on stage 0 with fragment 0, the
 * head on the last stage with fragment F - 1. Summed over f it is
 * spec_stage_params(w, st). */
double diloco_fragment_params(const spec_workload *w, const diloco_plan *p,
                              int st, int f);

/* Seconds of one full cycle of H inner steps, each inner_s long, when
 * fragment f's exchange (outer step included) takes sync_s[f] alone
 * (F entries): H inner_s plus, per fragment, what its exchange does not
 * hide behind the tau inner steps it overlaps, max(0, sync_s[f] - tau
 * inner_s). DiLoCo: H inner_s + sync_s[0]. */
double diloco_cycle_s(const diloco_plan *p, double inner_s,
                      const double *sync_s);

/* w's plan (w resolved: spec_workload_resolve checked it). */
diloco_plan diloco_plan_of(const spec_workload *w);

/* The plan a scenario's workload gives (not checked), and p written into
 * one (a view's: the shape search's candidates). */
diloco_plan diloco_plan_given(const scenario_workload *w);
void diloco_plan_put(scenario_workload *w, const diloco_plan *p);

/* The plan the knobs of k give (0 where absent or 0), and k without them
 * (the shape search takes them to its candidates). */
diloco_plan diloco_plan_of_knobs(const scenario_knobs *k);
void diloco_knobs_clear(scenario_knobs *k);

/* Bytes fragment f of stage st exchanges at w's --grad-bits: its
 * parameters as fp16 values (the model's value_bytes), compressed. */
double diloco_fragment_bytes(const spec_workload *w, const diloco_plan *p,
                             int st, int f);

/* Seconds DiLoCo's outer step on `params` parameters takes on g: memory-
 * bound, DILOCO_OUTER_BYTES_PER_PARAM per parameter at the fraction of
 * its bandwidth a memory-bound kernel reaches (COMPRESS_BW_FRACTION). */
double diloco_outer_s(const spec_gpu *g, double params);

/* When member r of stage st starts fragment f's ring, rd[st R + r]:
 * replica r launches the exchange at at[r] (the end of the inner step
 * after which the engine's shortcut, sim/outer.c, launches fragment f:
 * step 1 + f (tau + 1), each replica from its own clock) and each member
 * quantises its part first. */
void diloco_exchange_ready(const spec_workload *w, const alloc *a,
                           const spec_gpu *const *gpu, const diloco_plan *p,
                           int f, const double *at, double *rd);

/* Replica r's clock past fragment f's exchange launched at at[r]: its tau
 * overlapped inner steps (step[r] each), then on each stage holding some
 * of f its member's result (done[st R + r]) and update (dequantisation
 * and outer step); at[r] gets the latest stage's end, where the replica's
 * next inner step starts (each replica from its own result: the engine's
 * replicas do not wait for each other's). */
void diloco_exchange_land(const spec_workload *w, const alloc *a,
                          const spec_gpu *const *gpu, const diloco_plan *p,
                          int f, const double *step, const double *done,
                          double *at);

#endif
