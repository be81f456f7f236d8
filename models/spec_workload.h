/* spec_workload: a scenario's workload resolved into a spec_workload and
 * checked against its algorithm, runtime and knobs — above the record and
 * its counts (spec.h) and the models whose rules it applies (DiLoCo's plan,
 * the runtimes' placement), which read the record only.
 * Invariant: a spec_workload that spec_workload_resolve accepted is
 * consistent, as spec.h states. */
#ifndef MODELS_SPEC_WORKLOAD_H
#define MODELS_SPEC_WORKLOAD_H

#include "base/err.h"
#include "models/spec.h"
#include "traces/scenario.h"

/* Resolves s's workload into w: model, schedule and DP algorithm names, K
 * (0 means B / (D_dp m)), passes, DiLoCo's plan (diloco_check; diloco
 * under Megatron's runtime, --fragments or --overlap-steps without
 * streaming-diloco, DiLoCo's knobs without a DiLoCo algorithm: ERR_CONFIG
 * naming the option). Rejects unknown names, D_pp * D_dp !=
 * s->ndevices, L < D_pp, B not a multiple of D_dp m K: ERR_UNKNOWN or
 * ERR_CONFIG with a message naming the field, at its FILE:LINE when the
 * file gave it (scenario_where). */
int spec_workload_resolve(const scenario *s, spec_workload *w, err *e);

#endif
