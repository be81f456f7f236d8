/* onef1b: one 1F1B pass of one pipeline as the engine's graph runs it
 * (sim/train.c), for DT-FM's runtime and for Megatron-LM's.
 * Stage s runs w = min(S - s - 1, M) warm-up forwards, then forward and
 * backward alternately, then w backwards (the op order of both runtimes).
 * DT-FM: an op starts when the previous op of its stage is done and its
 * input has arrived; its output is sent on the stage's send stream (after
 * the previous send is in its socket buffers). Megatron: every point-to-
 * point call (batch_isend_irecv, wait, synchronize) blocks the stage until
 * its sends are in their socket buffers and its receives have arrived,
 * then costs call_s; the warm-up and cool-down calls carry one transfer,
 * the steady ones send_forward_recv_backward and
 * send_backward_recv_forward. A connection sends its messages in issue
 * order, back to back (hop.h). Where a stage's two boundaries lead to one
 * netem class they share its egress shaper: the closed form then serves
 * their messages in issue order, one at a time (work-conserving), where
 * the engine shares the shaper fairly between them — under DT-FM's
 * streams, which send an activation and a gradient at once, this makes the
 * activation early and the pass short (a few per cent on the built-in
 * cases; Megatron's calls rarely overlap the two).
 *
 * The pass is the longest path through this graph, evaluated op by op
 * (O(S M), no events: every duration is a constant). Its steady state has
 * the period of the max-plus system's slowest circuit (onef1b_period):
 * with F_s, B_s forward and backward of stage s, c1_s and c2_s the cost
 * of its call after a forward and after a backward (0 where it has none,
 * and under DT-FM), X the transfer time plus latency of a boundary and h
 * the time a send blocks its call (transfer time beyond what the socket
 * buffers take), the trip from stage s to stage e >= s and back carries
 * e - s + 1 micro-batches:
 *   period >= [sum_{j=s..e} (F_j + B_j + c1_j + c2_j)
 *             + sum_{j=s..e-1} (X_act(j -> j+1) + X_grad(j+1 -> j))
 *             + h_grad(s) + h_act(e)] / (e - s + 1),
 * and every connection carries one message per period (and under DT-FM
 * each send stream its two sends' h). So one slow boundary between
 * adjacent stages costs half its round trip per micro-batch.
 * Invariant: pure functions of the pipe; scratch is freed before return. */
#ifndef MODELS_ONEF1B_H
#define MODELS_ONEF1B_H

#include <stdbool.h>

#include "models/hop.h"

/* One pipeline of a pass (all borrowed). */
typedef struct onef1b_pipe {
  int stages, micro_batches;
  const double *f, *b;   /* per stage: forward, backward of a micro-batch */
  const hop *act;        /* act[s]: stage s -> s + 1 (s < stages - 1) */
  const hop *grad;       /* grad[s]: stage s -> s - 1 (s > 0) */
  const bool *shaper;    /* per stage: its two boundaries share the
                            sender's shaper (one netem class), or NULL */
  double bytes;          /* an activation (and its gradient) */
  bool megatron;         /* Megatron's blocking calls, else DT-FM's streams */
  double call_s;         /* Megatron: the fixed cost of one call */
  const hop_net *net;    /* the transport (message times) */
} onef1b_pipe;

/* Evaluates one pass from time 0: end[s] gets when stage s's last op (or
 * call) is done and sent[s] when its last send is in its socket buffers
 * (-INFINITY: none; either may be NULL). Returns the pass's end. */
double onef1b_pass(const onef1b_pipe *p, double *end, double *sent);

/* The steady period per micro-batch (the bound above, closed form). */
double onef1b_period(const onef1b_pipe *p);

/* p with free communication and no calls (its compute alone): none[0 ..
 * stages) gets the free hops it points to. */
onef1b_pipe onef1b_free(const onef1b_pipe *p, hop *none);

#endif
