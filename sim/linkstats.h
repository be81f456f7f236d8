/* linkstats: how busy each link and NIC was over a finished run, read from
 * its task records (sim/graph.h) and the engine's log of every message's
 * rate changes (sim/net.h: the rates the max-min solver gave, exactly, not
 * a message's mean rate over its span, whose sum over messages sharing a
 * resource can pass its capacity). A resource is a directed site pair
 * (every transfer between the two sites' devices, inside a site too) or a
 * NIC's egress or ingress (transfers that cross it, netem and tcp, limited
 * NICs only).
 * Utilisation is rate over capacity: a NIC's capacity is its Gbit/s; a
 * site pair's is the link's bandwidth (at each time: a trace moves it)
 * times its links: under tc shaping the devices that sent on it (each
 * device's egress to a site shaped to the link's rate); under path shaping
 * one (the path between two sites) or inside a site the ordered device
 * pairs that sent (its non-blocking fabric); ideal, the connections that
 * sent (a private link each). So no utilisation passes 1 (to rounding).
 * Invariant: a pure reader of finished records; per resource the rate is
 * piecewise constant between change points, and its integral over the run
 * is the resource's bytes (to rounding). */
#ifndef SIM_LINKSTATS_H
#define SIM_LINKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/names.h"
#include "models/transport.h"
#include "sim/graph.h"
#include "traces/scenario.h"

/* The resources, X(ID, "name"): a site pair's link, a NIC's two ways. */
#define SIM_LS_KIND_MAP(X) X(LINK, "link") X(NIC_OUT, "nic-out") X(NIC_IN, "nic-in")
#define SIM_LS_KIND_ID_(id, name) SIM_LS_##id,
typedef enum sim_ls_kind { SIM_LS_KIND_MAP(SIM_LS_KIND_ID_) } sim_ls_kind;
#undef SIM_LS_KIND_ID_
enum { SIM_LS_NKINDS = 0 SIM_LS_KIND_MAP(NAMES_COUNT_ROW) };
extern const char *const sim_ls_kind_names[SIM_LS_NKINDS]; /* "link", ... */

typedef struct sim_ls_res {
  sim_ls_kind kind;
  int a, b;             /* LINK: sites a -> b; NIC: its first device, -1 */
  int site;             /* NIC: its site */
  double capacity_gbps; /* at t = 0 */
  int links;            /* LINK: capacity_gbps's multiple of the link */
  double bytes, busy_s; /* busy: some flow on the wire */
  double mean_util;     /* bytes over capacity (t = 0) x the run's span */
  double peak_util;     /* the highest rate over the capacity then */
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

/* Each transfer's span on the wire into w0[i], w1[i] (n each; -1 for
 * tasks that are not transfers or never ran): from when its first byte can
 * leave (its start, or the end on the wire of the message before it on its
 * connection, whichever is later: a connection sends its messages back to
 * back) to when its last byte left (its arrival less the link's one-way
 * latency, and no earlier than its send completed). Its bytes over the
 * span are its mean rate (the critical path's steps). */
void sim_linkstats_wire(const scenario *s, const sim_task *t, uint32_t n,
                        int64_t *w0, int64_t *w1);

/* The statistics of the n finished tasks t of a run of s under o over
 * [t0, t1], whose rate changes log holds (sim_options.rates), into *out
 * (sim_linkstats_free). log NULL: each transfer at its mean rate over its
 * span on the wire (sim_linkstats_wire), an estimate whose sums can pass
 * a capacity (a training run's timeline, which keeps no log). */
void sim_linkstats_build(const scenario *s, const transport_options *o,
                         const sim_task *t, uint32_t n, int64_t t0, int64_t t1,
                         const sim_rate_log *log, sim_linkstats *out);

void sim_linkstats_free(sim_linkstats *ls);

/* The same statistics summed while the run goes (a run of 10^4 devices
 * changes rates millions of times): the engine hands each change to the
 * accumulator (sim_rate_log's sink), which adds it to the resources the
 * message crosses at once and keeps no log, and, unless series is asked,
 * no change points either (npts 0: only the CSV's series needs them).
 * Equal, bit for bit, to sim_linkstats_build over the run's log. */
typedef struct sim_ls_acc sim_ls_acc;

/* An accumulator for a run of s under o (both borrowed), keeping each
 * resource's change points when series. */
sim_ls_acc *sim_ls_acc_new(const scenario *s, const transport_options *o,
                           bool series);

/* Sets *log (sim_options.rates) to hand every change to a. */
void sim_ls_acc_attach(sim_ls_acc *a, sim_rate_log *log);

/* The statistics of the n finished tasks t of the run over [t0, t1] into
 * *out (sim_linkstats_free), and frees a. */
void sim_ls_acc_finish(sim_ls_acc *a, const sim_task *t, uint32_t n,
                       int64_t t0, int64_t t1, sim_linkstats *out);

/* Frees an accumulator that was not finished; NULL is fine. */
void sim_ls_acc_free(sim_ls_acc *a);

/* The resource's name: "Oregon>Tokyo", or "Tokyo/12" for a NIC (the site
 * and its first device). */
void sim_linkstats_name(const sim_linkstats *ls, const sim_ls_res *r,
                        const scenario *s, char *buf, size_t size);

/* The indices of ls's k busiest resources (by mean utilisation, the first
 * of equals first) into ord, busiest first: min(k, ls->nres) of them, the
 * count returned. A selection, not a sort (a table lists ten of 10^4
 * NICs). */
int sim_linkstats_busiest(const sim_linkstats *ls, int *ord, int k);

/* The most steps the CSV's time series may take over a run. */
#define SIM_LINKSTATS_MAX_STEPS 1000000

/* The CSV time series (columns in sim/cli/USAGE.md: t_s, kind, resource, src,
 * dst, bytes, rate_gbps, utilisation, flows) at resolution_s per row, one
 * row per resource and step with traffic. ERR_IO naming the path;
 * ERR_RANGE when the run holds more than SIM_LINKSTATS_MAX_STEPS steps. */
int sim_linkstats_csv(const sim_linkstats *ls, const scenario *s,
                      double resolution_s, const char *path, err *e);

#endif
