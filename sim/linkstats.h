/* linkstats: how busy each link and NIC was over a finished run, read from
 * its task records (sim/graph.h). A transfer is on the wire from when its
 * first byte can leave (its start, or the end on the wire of the message
 * before it on its connection, whichever is later: a connection sends its
 * messages back to back) to when its last byte left (its arrival less the
 * link's one-way latency, and no earlier than its send completed), at its
 * mean rate over that span. A resource is a directed site pair (every
 * transfer between the two sites' devices, inside a site too) or a NIC's
 * egress or ingress (transfers that cross it, netem and tcp, limited NICs
 * only).
 * Utilisation is rate over capacity: a NIC's capacity is its Gbit/s; a
 * site pair's is the link's bandwidth at t = 0 times the devices that sent
 * on it, each device's egress to a site being shaped to the link's rate.
 * Invariant: a pure reader of finished records; per resource the rate is
 * piecewise constant between change points, and its integral over the run
 * is the resource's bytes (to rounding). */
#ifndef SIM_LINKSTATS_H
#define SIM_LINKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "models/transport.h"
#include "sim/graph.h"
#include "traces/scenario.h"

typedef enum sim_ls_kind { SIM_LS_LINK, SIM_LS_NIC_OUT, SIM_LS_NIC_IN } sim_ls_kind;
extern const char *const sim_ls_kind_names[3]; /* "link", "nic-out", "nic-in" */

typedef struct sim_ls_res {
  sim_ls_kind kind;
  int a, b;             /* LINK: sites a -> b; NIC: its first device, -1 */
  int site;             /* NIC: its site */
  double capacity_gbps;
  double bytes, busy_s; /* busy: some flow on the wire */
  double mean_util;     /* bytes over capacity x the run's span */
  double peak_util;     /* the highest rate over capacity */
  uint64_t flows;
  size_t npts;          /* change points of the rate: at t[i] the rate
                           becomes rate_gbps[i] with flows[i] in flight */
  int64_t *t;
  double *rate_gbps;
  int *inflight;
} sim_ls_res;

typedef struct sim_linkstats {
  int64_t t0, t1;       /* the run's span */
  int nres;
  sim_ls_res *res;      /* links by (src, dst) site, then NICs by device */
} sim_linkstats;

/* Each transfer's span on the wire (see above) into w0[i], w1[i] (n each;
 * -1 for tasks that are not transfers or never ran). */
void sim_linkstats_wire(const scenario *s, const sim_task *t, uint32_t n,
                        int64_t *w0, int64_t *w1);

/* The statistics of the n finished tasks t of a run of s under o over
 * [t0, t1] into *out (sim_linkstats_free); each resource's change points
 * (npts, t, rate_gbps, inflight: what sim_linkstats_csv reads) only when
 * series, else npts 0 and NULL. */
void sim_linkstats_build(const scenario *s, const transport_options *o,
                         const sim_task *t, uint32_t n, int64_t t0, int64_t t1,
                         bool series, sim_linkstats *out);

void sim_linkstats_free(sim_linkstats *ls);

/* The resource's name: "Oregon>Tokyo", or "Tokyo/12" for a NIC (the site
 * and its first device). */
void sim_linkstats_name(const sim_linkstats *ls, const sim_ls_res *r,
                        const scenario *s, char *buf, size_t size);

/* The most steps the CSV's time series may take over a run. */
#define SIM_LINKSTATS_MAX_STEPS 1000000

/* The CSV time series (columns in sim/cli/USAGE.md: t_s, kind, resource, src,
 * dst, bytes, rate_gbps, utilisation, flows) at resolution_s per row, one
 * row per resource and step with traffic. ERR_IO naming the path;
 * ERR_RANGE when the run holds more than SIM_LINKSTATS_MAX_STEPS steps. */
int sim_linkstats_csv(const sim_linkstats *ls, const scenario *s,
                      double resolution_s, const char *path, err *e);

#endif
