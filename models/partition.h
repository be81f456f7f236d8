/* partition: how a workload's L layers are split over its D_pp stages — an
 * explicit list (`--layers-per-stage a,b,...`, `workload.layers_per_stage`)
 * or the partition balanced for an allocation, where each stage runs at
 * the pace of the slowest device of its data-parallel group.
 * Invariant: a partition has D_pp entries, each >= 1, summing to L; the
 * balanced one also fits every stage in the memory of every device that
 * runs it (spec_stage_memory_with). Pure functions: nothing allocated
 * outlives a call. */
#ifndef MODELS_PARTITION_H
#define MODELS_PARTITION_H

#include "models/alloc.h"
#include "models/spec.h"
#include "base/err.h"
#include "traces/scenario.h"

/* Parses "a,b,c" (decimal integers, no spaces) into out (at most cap
 * entries). Returns the count, or -1 when text is not such a list or has
 * more than cap entries (out then holds nothing usable). */
int partition_parse(const char *text, int *out, int cap);

/* Checks layers (n entries) as a partition of total layers over stages:
 * n == stages, every entry >= 1, the sum == total (unless total <= 0: not
 * known yet, the model's depth). ERR_OK, or ERR_CONFIG
 * with a message that says which ("3 entries for 4 stages", "entry 2 is
 * 0", "they sum to 23, not the 24 layers"); the caller prefixes the option
 * or the key. */
int partition_check(const int *layers, int n, int stages, int total, err *e);

/* Seconds one micro-batch's forward and backward of stage st takes with
 * `layers` layers on device d of s (the engine's compute: the roofline's
 * time, models/roofline.h, times the site's compute factor). */
double partition_stage_s(const spec_workload *w, const scenario *s,
                         const spec_gpu *const *gpu, int st, int layers,
                         int d);

/* The partition balanced for allocation a (D_dp x D_pp, validated): layers
 * per stage minimising the largest stage time on the slowest device of
 * each stage, within the memory of every device of the stage. Exact for
 * that min-max (layers are added one at a time to the stage that stays
 * fastest with one more, ties to the lower stage). Writes D_pp entries
 * into out; ERR_OK, or ERR_MEMORY naming the stage or the total that does
 * not fit. */
int partition_balanced(const spec_workload *w, const scenario *s,
                       const spec_gpu *const *gpu, const alloc *a, int *out,
                       err *e);

/* When w->balanced: partition_balanced for a into buf (D_pp entries, owned
 * by the caller and outliving w's use) and w->stage_layers = buf. Else
 * nothing. ERR_OK, or partition_balanced's ERR_MEMORY. */
int partition_apply(spec_workload *w, const scenario *s,
                    const spec_gpu *const *gpu, const alloc *a, int *buf,
                    err *e);

/* The layers each stage of a runs under s's workload, into out (D_pp
 * entries): the explicit split, the one balanced for a, or the even split
 * (spec_stage_layers): what `schedule -o` writes beside the pipelines.
 * ERR_OK, or spec_workload_resolve's or partition_balanced's error. */
int partition_of(const scenario *s, const alloc *a, int *out, err *e);

/* The stages and layers s's workload will have once knobs k apply
 * (scenario_apply): k's stages, else the devices over k's replicas when
 * they divide them, else s's; k's layers, else s's (unless k names a
 * model), else the depth of k's model or s's (0 when unknown: an hf:PATH
 * is read when the knobs apply, and models/spec then says so). */
int partition_knob_stages(const scenario *s, const scenario_knobs *k);
int partition_knob_layers(const scenario *s, const scenario_knobs *k);

/* A split given as text into k before it applies to s: "balanced" sets
 * k->balanced_layers; "a,b,..." (partition_parse) checked against
 * partition_knob_stages and _layers (partition_check) becomes
 * k->layers_per_stage = *list (malloc'ed, the caller frees it, also on
 * error). ERR_OK, ERR_PARSE "wants 'balanced' or N comma-separated layer
 * counts (no spaces), not 'TEXT'", or partition_check's ERR_CONFIG; the
 * caller prefixes the option or the key. */
int partition_knob_split(const scenario *s, scenario_knobs *k,
                         const char *text, int **list, err *e);

/* The stages k fixes (its stages, or the devices over its replicas)
 * against the layers of partition_knob_layers, which the knobs' own check
 * does not know: ERR_CONFIG "N stages for the L layers: every stage holds
 * at least one" (field WORKLOAD_stages, or _replicas when k gives only
 * them) when there are more; else (or when k fixes neither) ERR_OK. */
int partition_knob_fits(const scenario *s, const scenario_knobs *k, err *e);

/* The shape k fixes as the options that give it, "--stages S
 * --replicas R" (either alone; "" for none), into buf. */
void partition_knob_options(const scenario_knobs *k, char *buf,
                            size_t size);

/* s's workload resolved into *w with its layer split for a: even, given
 * (a list), or balanced for a (computed into split, D_pp entries); *how
 * says which ("even", "given", "balanced", or "balanced per allocation"
 * when a is NULL or no split fits: w->stage_layers is then NULL). False
 * when the workload does not resolve. */
bool partition_resolve(const scenario *s, const alloc *a, spec_workload *w,
                       int *split, const char **how);

/* partition_resolve, and the longest optimizer step of a device of a
 * under that split into *step_s (runtime_step_max_s; NAN without a, its
 * GPUs or a split that fits); w->stage_layers is NULL on return. */
bool partition_resolve_step(const scenario *s, const alloc *a,
                            spec_workload *w, double *step_s);

#endif
