/* netbound: see netbound.h. One pass over the log: each logged rate of a
 * transfer against its link's bandwidth at that time. */
#include "sim/netbound.h"

#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* Why transfer x was held below its link: the least of its other bounds
 * when that is below the link, else a resource it shared. */
static sim_cp_cause held_by(const scenario *s, const transport_options *o,
                            const sim_task *x) {
  sim_flow_bounds b = sim_critpath_bounds(s, o, x);
  switch (b.least) {
    case SIM_CP_CAUSE_NIC:
    case SIM_CP_CAUSE_FLOWCAP:
    case SIM_CP_CAUSE_WINDOW:
    case SIM_CP_CAUSE_LOSS: return b.least;
    case SIM_CP_CAUSE_LINK:
    case SIM_CP_CAUSE_SHARED:
    case SIM_CP_CAUSE_SEND: return SIM_CP_CAUSE_SHARED;
  }
  return SIM_CP_CAUSE_SHARED;
}

void sim_netbound_of(const scenario *s, const transport_options *o,
                     const sim_task *t, uint32_t n, const sim_rate_log *log,
                     sim_netbound *out) {
  memset(out, 0, sizeof *out);
  uint8_t *seen = mem_calloc((size_t)n + 1, 1); /* 1 sent, 2 held back */
  for (size_t i = 0; log && i < log->n; i++) {
    const sim_rate_change *c = &log->v[i];
    if (c->tag >= n || t[c->tag].kind != SIM_TASK_XFER || c->rate <= 0)
      continue;
    const sim_task *x = &t[c->tag];
    if (!seen[c->tag]) seen[c->tag] = 1, out->transfers++;
    double link = scenario_link(s, x->dev, x->dst, c->t).bandwidth_gbps / 8;
    if (seen[c->tag] == 2 || c->rate >= link * (1 - SIM_NETBOUND_EPS))
      continue;
    seen[c->tag] = 2;
    out->held[held_by(s, o, x)]++;
    out->held_total++;
  }
  free(seen);
}
