/* train_hivemind: one data-parallel group's round of hivemind's averaging
 * as a task graph (models/hivemind.h says what is modelled, from which
 * lines of hivemind's source):
 * - matchmaking: a window on the leader (grp[0]; hivemind's is the peer of
 *   earliest declared expiration, here the first in group order) from the
 *   step's start, hivemind_matchmaking_s long; the group begins when the
 *   window has passed and every member's gradient is ready (the swarm's
 *   step ends when its samples are in), each member one leader's latency
 *   later (BEGIN_ALLREDUCE);
 * - the butterfly: member k streams its slice of member j's part to j in
 *   hivemind_chunks(part) chunks, a chunk issued when the previous one
 *   has left (one connection per pair, HIVEMIND_CHANNELS, whose messages
 *   leave in issue order: k's slices and k's averages to j interleave on
 *   it); j reduces chunk c on its host once every sender's chunk c has
 *   arrived, one chunk after the other, and streams the average back to
 *   every sender the same way; a member applies the averages in peers'
 *   order, chunk by chunk, on its host (a second serial stream).
 * Invariant: adds only tasks of the group's members (transfers between
 * them, host and matchmaking tasks, joins), no more than
 * sim_train_hivemind_tasks; sync[i] waits for member i's last apply and
 * for its own last messages to have left. */
#include <math.h>
#include <stdlib.h>

#include "base/mem.h"
#include "models/hivemind.h"
#include "models/params.h"
#include "sim/train.h"

static int64_t ns_of(double s) { return llround(s * 1e9); }

/* What one round needs besides the graph: per member its part's chunks,
 * chunk bytes and host times per chunk, and when it begins. */
typedef struct hm_round {
  sim_graph *g;
  const int *grp;
  int n;
  int *C;
  double *cb;
  int64_t *red, *app;
  uint32_t *begin;
  uint32_t *apply; /* member -> its apply stream's last task */
  uint32_t *sync;
} hm_round;

/* The window from the leader's step start, the join of the window and
 * the members' ready tasks, and each member's begin one leader's latency
 * after it. Returns the window's task. */
static uint32_t begin_round(hm_round *r, const sim_hivemind_in *in) {
  sim_graph *g = r->g;
  int lead = r->grp[0];
  double w = hivemind_matchmaking_s(in->s, r->grp, r->n, in->matchmaking_s);
  uint32_t win = sim_graph_compute(g, lead, ns_of(w), SIM_ROLE_MATCH, -1);
  if (in->start && in->start[lead] != SIM_GRAPH_NONE)
    sim_graph_edge(g, in->start[lead], win, SIM_ON_DONE);
  uint32_t j = sim_graph_join(g, lead, SIM_ROLE_MATCH);
  for (int i = 0; i < r->n; i++)
    if (in->ready[i] != SIM_GRAPH_NONE)
      sim_graph_edge(g, in->ready[i], j, SIM_ON_DONE);
  if (!in->delayed) sim_graph_edge(g, win, j, SIM_ON_DONE);
  for (int i = 0; i < r->n; i++) {
    int64_t lat = i ? ns_of(scenario_link(in->s, lead, r->grp[i], 0)
                                .latency_ms / 1e3)
                    : 0;
    r->begin[i] = j;
    if (lat <= 0) continue;
    r->begin[i] = sim_graph_compute(g, r->grp[i], lat, SIM_ROLE_MATCH, -1);
    sim_graph_edge(g, j, r->begin[i], SIM_ON_DONE);
  }
  return win;
}

/* A transfer of chunk c of the round, after `after` (done) and the
 * previous message of its stream (*prev, left). */
static uint32_t chunk_xfer(hm_round *r, int from, int to, int c, double bytes,
                           uint32_t after, uint32_t *prev) {
  uint32_t x = sim_graph_xfer(r->g, r->grp[from], r->grp[to], bytes,
                              SIM_ROLE_DP, c);
  sim_graph_channels(r->g, x, HIVEMIND_CHANNELS);
  sim_graph_edge(r->g, after, x, SIM_ON_DONE);
  if (*prev != SIM_GRAPH_NONE) sim_graph_edge(r->g, *prev, x, SIM_ON_LEFT);
  *prev = x;
  return x;
}

/* Member i applies chunk c of j's averages once `got` is done. */
static void apply_chunk(hm_round *r, int i, int j, int c, uint32_t got) {
  uint32_t a = sim_graph_compute(r->g, r->grp[i], r->app[j], SIM_ROLE_HOST, c);
  sim_graph_edge(r->g, got, a, SIM_ON_DONE);
  sim_graph_stream(r->g, &r->apply[i], a, SIM_ON_DONE);
}

/* Reducer j's part: its senders' slices, its reduces, its averages back
 * and their applying; prev (2 n) the streams' last messages. */
static void reduce_part(hm_round *r, int j, uint32_t *prev) {
  int n = r->n;
  uint32_t *in = prev, *out = prev + n, host = SIM_GRAPH_NONE;
  for (int k = 0; k < 2 * n; k++) prev[k] = SIM_GRAPH_NONE;
  for (int c = 0; c < r->C[j]; c++) {
    uint32_t red = sim_graph_compute(r->g, r->grp[j], r->red[j],
                                     SIM_ROLE_HOST, c);
    sim_graph_edge(r->g, r->begin[j], red, SIM_ON_DONE);
    for (int k = 0; k < n; k++)
      if (k != j)
        sim_graph_edge(r->g, chunk_xfer(r, k, j, c, r->cb[j], r->begin[k],
                                        &in[k]),
                       red, SIM_ON_DONE);
    sim_graph_stream(r->g, &host, red, SIM_ON_DONE);
    for (int i = 0; i < n; i++)
      apply_chunk(r, i, j, c,
                  i == j ? red : chunk_xfer(r, j, i, c, r->cb[j], red, &out[i]));
  }
  for (int k = 0; k < n; k++) {
    if (in[k] != SIM_GRAPH_NONE) sim_graph_edge(r->g, in[k], r->sync[k], SIM_ON_LEFT);
    if (out[k] != SIM_GRAPH_NONE) sim_graph_edge(r->g, out[k], r->sync[j], SIM_ON_LEFT);
  }
}

uint32_t sim_train_hivemind(sim_graph *g, const sim_hivemind_in *in,
                            uint32_t *sync) {
  int n = in->n;
  double *frac = mem_alloc((size_t)n * sizeof *frac);
  hivemind_fractions(in->s, in->grp, n, frac);
  hm_round r = {.g = g, .grp = in->grp, .n = n, .sync = sync,
             .C = mem_alloc((size_t)n * sizeof(int)),
             .cb = mem_alloc((size_t)n * sizeof(double)),
             .red = mem_alloc(2 * (size_t)n * sizeof(int64_t)),
             .begin = mem_alloc(2 * (size_t)n * sizeof(uint32_t))};
  r.app = r.red + n, r.apply = r.begin + n;
  double w = in->values > 0 ? in->bytes / in->values : 0;
  double hs = params_get(PARAMS_HIVEMIND_HOST_S_PER_BYTE);
  for (int j = 0; j < n; j++) {
    double part = in->bytes * frac[j];
    r.C[j] = hivemind_chunks(part);
    r.cb[j] = r.C[j] ? part / r.C[j] : 0;
    double v = r.C[j] ? in->values * frac[j] / r.C[j] : 0;
    r.red[j] = ns_of(v * hivemind_reduce_bytes(n, w) * hs);
    r.app[j] = ns_of(v * hivemind_apply_bytes(w) * hs);
    r.apply[j] = SIM_GRAPH_NONE;
  }
  uint32_t win = begin_round(&r, in);
  uint32_t *prev = mem_alloc(2 * (size_t)n * sizeof *prev);
  for (int j = 0; j < n; j++)
    if (r.C[j]) reduce_part(&r, j, prev);
  for (int i = 0; i < n; i++) {
    sim_graph_edge(g, r.begin[i], sync[i], SIM_ON_DONE);
    if (r.apply[i] != SIM_GRAPH_NONE)
      sim_graph_edge(g, r.apply[i], sync[i], SIM_ON_DONE);
  }
  free(prev);
  free(frac);
  free(r.C), free(r.cb), free(r.red), free(r.begin);
  return win;
}

uint64_t sim_train_hivemind_tasks(int n) {
  if (n < 2) return 0;
  uint64_t m = (uint64_t)n;
  /* per chunk of a part: its reduce, n - 1 slices, n - 1 averages and n
   * applies; the window, the join and a latency per member */
  return m * HIVEMIND_MAX_CHUNKS * (3 * m - 1) + m + 2;
}
