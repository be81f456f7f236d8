/* netimport: iperf3 measurements (traces/iperf3.h) turned into the links
 * of a scenario's network (traces/FORMATS.md, `geodes net import`): the
 * hosts mapped to sites by address, each test to the ordered site pair
 * its data crossed (sender -> receiver), and per pair the values
 * network.links and the trace CSV take:
 *   latency_ms      the round trip / 2, the mean over the pair's tests in
 *                   either direction (a round trip crosses both), from the
 *                   single-stream tests when there are any (a saturating
 *                   -P test adds its own queueing);
 *   flow_gbps       the median rate received by the single-stream tests;
 *   bandwidth_gbps  the best rate received by a multi-stream test (-P N):
 *                   the path's capacity; with none, the single-stream rate
 *                   (a lower bound, flagged);
 *   loss            the single-stream tests' retransmitted segments over
 *                   the segments sent (bytes sent / MSS), where iperf3
 *                   counts retransmits (a -P test's are the congestion it
 *                   causes, not the path's loss).
 * Over time, tests group into snapshots (each holds the tests within
 * group_s of its first); a value a snapshot does not measure holds the
 * last one measured (the first snapshot takes each pair's first).
 * Invariant: every value is a function of the tests and the options only
 * (order of the files aside, ties broken by file order): the same inputs
 * give the same links, bit for bit. */
#ifndef TRACES_NETIMPORT_H
#define TRACES_NETIMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "base/err.h"
#include "traces/iperf3.h"

/* ---- sites by address ---- */

typedef struct netimport_hosts netimport_hosts;

netimport_hosts *netimport_hosts_new(void);
void netimport_hosts_free(netimport_hosts *h); /* NULL is fine */

/* Adds spec, "SITE=ADDRESS" (an IP address or a host name, as iperf3
 * writes it); a site is numbered by its first spec, and may have several
 * addresses (a private and a public one). ERR_PARSE for a spec that is not
 * SITE=ADDRESS or a site name a trace cannot hold (empty, '*', a comma, a
 * quote, a control character, white space at an end); ERR_DUPLICATE for
 * an address another site has. The message quotes spec (the caller names
 * the option). */
int netimport_hosts_add(netimport_hosts *h, const char *spec, err *e);

int netimport_hosts_nsites(const netimport_hosts *h);
const char *netimport_hosts_site(const netimport_hosts *h, int site);

/* The site of address, or -1. Addresses compare as addresses (IPv4,
 * IPv6 in any spelling, an IPv4-mapped IPv6 as its IPv4), names without
 * regard to case. */
int netimport_hosts_find(const netimport_hosts *h, const char *address);

/* ---- links ---- */

/* What a pair's link carries; NAN: absent (flow_gbps, loss). */
typedef struct netimport_value {
  double latency_ms, bandwidth_gbps, flow_gbps, loss;
} netimport_value;

/* What a pair's values came from, over all snapshots. */
typedef enum netimport_source {
  NETIMPORT_NONE,     /* no test either way (and no intra-site value) */
  NETIMPORT_MEASURED, /* tests in this direction */
  NETIMPORT_MIRRORED, /* tests only the other way: their values */
  NETIMPORT_INTRA     /* a site with itself, from opts.intra */
} netimport_source;

/* One ordered pair over all snapshots (plain data). */
typedef struct netimport_pair {
  netimport_source source;
  int single, multi;     /* tests of one stream, of several (this way) */
  bool capacity_bound;   /* no multi-stream test: bandwidth_gbps is the
                            single-stream rate, a lower bound */
  bool loss_unknown;     /* single-stream tests, none counting retransmits */
} netimport_pair;

typedef struct netimport_opts {
  double group_s;       /* a snapshot holds the tests within group_s of
                           its first (INFINITY: one snapshot) */
  double mss_bytes;     /* segment size of a test that reports none */
  netimport_value intra;  /* a site with itself when no test measures it
                             (latency_ms NAN: none) */
} netimport_opts;

/* The links of a set of tests (plain data; netimport_free). */
typedef struct netimport {
  int nsites;
  size_t nsnaps;
  int64_t t0_s;          /* Unix time of the first test */
  int64_t *t_s;          /* [snap]: seconds after t0_s */
  netimport_value *v;    /* [(snap * nsites + from) * nsites + to] */
  bool *written;         /* same index: a snapshot (re)states this pair
                            (the first: every pair with a source; later
                            ones: the pairs they measured either way) */
  netimport_pair *pair;  /* [from * nsites + to] */
} netimport;

/* The sender and receiver site of every test (from[i], to[i]), by the
 * addresses of its two ends: the file's own host (connected local_host)
 * and its peer (connected remote_host and, in a client's file, the
 * server as named by the user); each end's names must map to one site.
 * ERR_UNKNOWN naming FILE:LINE and the host for an end that maps to no
 * site; ERR_CONFIG when one end's names map to two sites. */
int netimport_assign(const netimport_hosts *h, const iperf3_run *runs,
                     size_t n, int *from, int *to, err *e);

/* The links of the n tests (sites from[i] -> to[i] of h) under o.
 * ERR_MISSING naming a test's FILE:LINE when a pair measured has no round
 * trip in any snapshot (iperf3 reports it from the sender's kernel: a -R
 * client's file has none without --get-server-output); ERR_RANGE when a
 * loss comes out at 1 or above. NULL and e filled on error. */
netimport *netimport_links(const netimport_hosts *h, const iperf3_run *runs,
                           const int *from, const int *to, size_t n,
                           const netimport_opts *o, err *e);

void netimport_free(netimport *m); /* NULL is fine */

/* m's value of from -> to at snapshot snap, and whether that snapshot
 * states it. */
const netimport_value *netimport_at(const netimport *m, size_t snap, int from,
                                    int to);
bool netimport_written(const netimport *m, size_t snap, int from, int to);
const netimport_pair *netimport_pair_of(const netimport *m, int from, int to);

/* What m's tests could not measure, pair by pair (from, then to): a pair
 * with no test either way, one tested only the other way, one without a
 * multi-stream or a single-stream test, one whose loss iperf3 did not
 * count. note(ctx, text) once per note, in that order, the text naming
 * the sites by h (borrowed for the call). */
void netimport_notes(const netimport *m, const netimport_hosts *h,
                     void (*note)(void *ctx, const char *text), void *ctx);

/* The first pair (from, then to) no test measured either way and no intra
 * value gives: true and *from, *to; false when every pair has a value. */
bool netimport_untested(const netimport *m, int *from, int *to);

/* m's links file at t = 0, {"links": [...]} (traces/FORMATS.md, "net
 * import"): a measured pair as from/to, or as between when the other way
 * has no test of its own (mirrored); a site with itself from its tests or
 * the intra value; latency_ms and bandwidth_gbps, flow_gbps and loss when
 * known. Sites named by h. A new reference. */
json_t *netimport_links_json(const netimport *m, const netimport_hosts *h);

/* m's trace CSV into f: the provenance ("# source: SOURCE", "#
 * generated_by: COMMAND", t0 as UTC, group_s, a step replay), the header
 * t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss and the rows of
 * every snapshot that netimport_written says, each real as json_out_real
 * writes it, an unknown one empty. */
void netimport_trace_write(FILE *f, const netimport *m,
                           const netimport_hosts *h, const char *source,
                           const char *command, double group_s);

#endif
