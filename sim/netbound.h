/* netbound: what held a finished run's transfers below their links' rates
 * — the answer to "why do ideal, netem and tcp give the same time here?"
 * (issue 33: at one stage worldwide's three models agree to the bit).
 * From the engine's log of every message's rate (sim_options.rates): a
 * transfer is held back when it ever sent below its link's bandwidth at
 * that time (a private link per connection: what ideal gives it), and the
 * cause is the least of its bounds below the link (sim_critpath_bounds: a
 * NIC, the network's flow cap, its TCP window), else a resource it shared.
 * Invariant: when no transfer of a netem or tcp run was held back, every
 * message ran at its link's rate from start to end, as under ideal, so the
 * three models give the run the same times (tests/test_harness.c checks
 * it both ways on its random cases). */
#ifndef SIM_NETBOUND_H
#define SIM_NETBOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/critpath.h"
#include "sim/graph.h"
#include "sim/net.h"
#include "sim/sim.h"
#include "traces/scenario.h"

/* A rate counts as its link's when within this relative margin of it (the
 * max-min solver's w x (cap / w) may differ from cap by an ulp). */
#define SIM_NETBOUND_EPS 1e-9

typedef struct sim_netbound {
  uint64_t transfers;                 /* that sent bytes */
  uint64_t held[SIM_CP_NCAUSES];      /* held back, by cause (LINK unused) */
  uint64_t held_total;
} sim_netbound;

/* The transfers of the n finished tasks t of a run of s under o, whose
 * rate changes log holds, into *out. */
void sim_netbound_of(const scenario *s, const transport_options *o,
                     const sim_task *t, uint32_t n, const sim_rate_log *log,
                     sim_netbound *out);

/* The same as the run goes, keeping no log: one byte per transfer (sent,
 * held back) instead of every rate change (at 10^4 devices about 3 M of
 * them). new: for a run of s (borrowed); attach: log hands every change to
 * the accumulator (its sink; log borrowed); finish: sim_netbound_of's
 * figures, the same numbers, from the run's n finished tasks t. */
typedef struct sim_netbound_acc sim_netbound_acc;
sim_netbound_acc *sim_netbound_acc_new(const scenario *s);
void sim_netbound_acc_attach(sim_netbound_acc *a, sim_rate_log *log);
void sim_netbound_acc_finish(const sim_netbound_acc *a,
                             const transport_options *o, const sim_task *t,
                             uint32_t n, sim_netbound *out);
void sim_netbound_acc_free(sim_netbound_acc *a); /* NULL is fine */

/* A run of s under o watched for what held its transfers back: start
 * points o's rate log and inspection at w (o must outlive the run), so
 * that once sim_run has inspected it, w->done and w->nb holds its figures;
 * summed as the run goes (online), else from the whole log (which w->rates
 * keeps, for a timeline that reads it too). free releases what w holds. */
typedef struct sim_netbound_watch {
  const scenario *s;
  const transport_options *o;
  sim_rate_log rates;
  sim_netbound_acc *acc; /* online; NULL: from the log */
  sim_netbound nb;
  bool done;
} sim_netbound_watch;
void sim_netbound_watch_start(sim_netbound_watch *w, const scenario *s,
                              sim_options *o, bool online);
void sim_netbound_watch_free(sim_netbound_watch *w);

#endif
