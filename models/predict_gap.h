/* predict_gap's predicates on a placement: whether a case has a
 * mechanism PREDICT_GAP_MAP names (predict.c sets the bits).
 * Invariant: pure functions of their arguments (the net's counts unread:
 * each hop alone).
 * circle: predict_gap.c is the gaps' one home: the name table predict.h
 * declares (PREDICT_GAP_MAP's rows) and these predicates predict.c asks. */
#ifndef MODELS_PREDICT_GAP_H
#define MODELS_PREDICT_GAP_H

#include <stdbool.h>

#include "models/alloc.h"
#include "models/hop.h"

/* Whether stage st of replica r sends its activation and its gradient
 * (messages of bytes) through one NIC that binds both, or receives both
 * through one, or its activation and another stage's gradient cross one
 * NIC or path that cannot carry both: a 1F1B pass's two phases' flows at
 * once (1f1b-sharing). */
bool predict_gap_two_ways(const hop_net *n, const alloc *a, int r, int st,
                          double bytes);

/* Whether a device's gradient synchronisation (its group's hops, messages
 * of sync bytes) leaves or enters through a NIC, or under path shaping
 * crosses a path between sites, that cannot carry it and one of the
 * device's pipeline boundaries (messages of act bytes) at their own rates
 * at once: the synchronisation beside the pass's last transfers
 * (sync-beside-pass). */
bool predict_gap_sync_beside_pass(const hop_net *n, const alloc *a,
                                  double act, double sync);

/* The same for Megatron's tied embedding (messages of emb bytes) between
 * the first and the last stage of each pipeline: either end's NIC crowded
 * by the all-reduce and one of the end's pipeline boundaries. */
bool predict_gap_ends_beside_pass(const hop_net *n, const alloc *a,
                                  double act, double emb);

#endif
