/* netimport: see netimport.h. The tests are sorted once by (snapshot,
 * sender, receiver, several streams, rate received, file order), so each
 * (snapshot, ordered pair) is a contiguous block whose single-stream rates
 * come sorted (their median is read in place); per block the sums the
 * values need are gathered, then each pair's values are filled forward
 * through the snapshots, and backward into the first.
 * Memory: a value per snapshot per ordered pair, bounded by
 * NETIMPORT_MAX_CELLS (refused beyond, naming the product). */
#include "traces/netimport.h"

#include <arpa/inet.h>
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/json_out.h"
#include "base/mem.h"

#define NETIMPORT_MAX_CELLS 10000000 /* snapshots x sites^2 held at once */
#define GBPS 1e9                     /* bit/s in a Gbit/s */

/* ---- sites by address ---- */

typedef struct host_entry {
  char *address;
  int site;
} host_entry;

struct netimport_hosts {
  char **sites;
  int nsites;
  size_t sites_cap;
  host_entry *entries;
  size_t n, cap;
};

netimport_hosts *netimport_hosts_new(void) {
  return mem_calloc(1, sizeof(netimport_hosts));
}

void netimport_hosts_free(netimport_hosts *h) {
  if (!h) return;
  for (int i = 0; i < h->nsites; i++) free(h->sites[i]);
  for (size_t i = 0; i < h->n; i++) free(h->entries[i].address);
  free(h->sites);
  free(h->entries);
  free(h);
}

int netimport_hosts_nsites(const netimport_hosts *h) { return h->nsites; }

const char *netimport_hosts_site(const netimport_hosts *h, int site) {
  return h->sites[site];
}

/* An IP address in binary (16 bytes, family 4 or 6), or false for a name.
 * An IPv4-mapped IPv6 address ("::ffff:1.2.3.4", as a dual-stack server
 * may write its peer) reads as its IPv4 address. */
static bool ip_of(const char *s, unsigned char out[16], int *family) {
  memset(out, 0, 16);
  const char *v4 = strncasecmp(s, "::ffff:", 7) == 0 ? s + 7 : s;
  if (inet_pton(AF_INET, v4, out) == 1) return *family = 4, true;
  if (inet_pton(AF_INET6, s, out) == 1) return *family = 6, true;
  return false;
}

static bool same_address(const char *a, const char *b) {
  unsigned char x[16], y[16];
  int fx = 0, fy = 0;
  bool ix = ip_of(a, x, &fx), iy = ip_of(b, y, &fy);
  if (ix || iy) return ix && iy && fx == fy && memcmp(x, y, 16) == 0;
  return strcasecmp(a, b) == 0;
}

int netimport_hosts_find(const netimport_hosts *h, const char *address) {
  for (size_t i = 0; i < h->n; i++)
    if (same_address(h->entries[i].address, address))
      return h->entries[i].site;
  return -1;
}

/* Why s[0 .. n) cannot name a site of a trace CSV, or NULL. */
static const char *bad_site(const char *s, size_t n) {
  if (n == 0) return "an empty site name";
  if (n == 1 && s[0] == '*') return "'*' stands for every site in a trace";
  if (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t')
    return "white space at an end of the site name";
  for (size_t i = 0; i < n; i++)
    if (s[i] == ',' || s[i] == '"' || (unsigned char)s[i] < 0x20)
      return "a comma, a quote or a control character in the site name";
  return NULL;
}

static const char *bad_address(const char *s) {
  if (!*s) return "an empty address";
  for (; *s; s++)
    if ((unsigned char)*s <= 0x20 || *s == '=')
      return "white space, a control character or '=' in the address";
  return NULL;
}

static int site_index(netimport_hosts *h, const char *s, size_t n) {
  for (int i = 0; i < h->nsites; i++)
    if (strlen(h->sites[i]) == n && memcmp(h->sites[i], s, n) == 0) return i;
  mem_grow((void **)&h->sites, &h->sites_cap, (size_t)h->nsites + 1,
           sizeof *h->sites);
  h->sites[h->nsites] = mem_strndup(s, n);
  return h->nsites++;
}

int netimport_hosts_add(netimport_hosts *h, const char *spec, err *e) {
  const char *eq = strchr(spec, '=');
  if (!eq)
    return err_set(e, ERR_PARSE, "'%s': not SITE=ADDRESS", spec);
  const char *why = bad_site(spec, (size_t)(eq - spec));
  if (!why) why = bad_address(eq + 1);
  if (why) return err_set(e, ERR_PARSE, "'%s': %s", spec, why);
  int have = netimport_hosts_find(h, eq + 1);
  if (have >= 0 && (strlen(h->sites[have]) != (size_t)(eq - spec) ||
                    memcmp(h->sites[have], spec, (size_t)(eq - spec)) != 0))
    return err_set(e, ERR_DUPLICATE, "'%s': %s is site %s's already (one "
                   "address, one site)", spec, eq + 1, h->sites[have]);
  int site = site_index(h, spec, (size_t)(eq - spec));
  if (have >= 0) return ERR_OK; /* given twice: the same fact */
  mem_grow((void **)&h->entries, &h->cap, h->n + 1, sizeof *h->entries);
  h->entries[h->n++] = (host_entry){mem_strdup(eq + 1), site};
  return ERR_OK;
}

/* The site of one end of r into *site, by its names (NULL ones skipped;
 * keys say where in the file each comes from): ERR_UNKNOWN when none maps,
 * ERR_CONFIG when two map to different sites. */
static int end_site(const netimport_hosts *h, const iperf3_run *r,
                    const char *const names[2], const char *const keys[2],
                    int *site, err *e) {
  int by = -1;
  *site = -1;
  for (int i = 0; i < 2; i++) {
    int s = names[i] ? netimport_hosts_find(h, names[i]) : -1;
    if (s >= 0 && *site >= 0 && s != *site)
      return err_set(e, ERR_CONFIG, "%s:%d: %s %s is site %s but %s %s is "
                     "site %s", r->file, r->line, keys[by], names[by],
                     h->sites[*site], keys[i], names[i], h->sites[s]);
    if (s >= 0 && *site < 0) *site = s, by = i;
  }
  if (*site >= 0) return ERR_OK;
  if (!names[1])
    return err_set(e, ERR_UNKNOWN, "%s:%d: host %s (%s) maps to no site: "
                   "give --host SITE=%s", r->file, r->line, names[0],
                   keys[0], names[0]);
  return err_set(e, ERR_UNKNOWN, "%s:%d: host %s (%s) or %s (%s) maps to no "
                 "site: give --host SITE=ADDRESS for it", r->file, r->line,
                 names[0], keys[0], names[1], keys[1]);
}

int netimport_assign(const netimport_hosts *h, const iperf3_run *runs,
                     size_t n, int *from, int *to, err *e) {
  static const char *const local_keys[2] = {"start.connected[0].local_host",
                                            NULL};
  static const char *const peer_keys[2] = {"start.connected[0].remote_host",
                                           "start.connecting_to.host"};
  for (size_t i = 0; i < n; i++) {
    const iperf3_run *r = &runs[i];
    const char *local[2] = {r->local, NULL},
               *peer[2] = {r->remote, r->peer_name};
    int a, b, rc;
    if ((rc = end_site(h, r, local, local_keys, &a, e)) ||
        (rc = end_site(h, r, peer, peer_keys, &b, e)))
      return rc;
    bool out = iperf3_local_sends(r);
    from[i] = out ? a : b;
    to[i] = out ? b : a;
  }
  return ERR_OK;
}

/* ---- links ---- */

/* A test's place in the sort: its snapshot, ordered pair, kind and rate
 * (single-stream tests first, by rate), then file order. */
typedef struct test_key {
  size_t snap;
  int from, to, multi;
  double rate;
  size_t i;
} test_key;

/* What the tests of one (snapshot, ordered pair) sum to. */
typedef struct block {
  int single, multi;
  double flow_bps;          /* the single-stream rates' median; NAN */
  double best_bps;          /* the best multi-stream rate; NAN */
  double rtt1_sum, rtt_sum; /* round trips (ms): single-stream tests', all */
  int rtt1_n, rtt_n;
  double retr, segs;        /* single-stream tests that count retransmits */
  int retr_n;
  size_t first;             /* its first test in file order */
} block;

static int by_time(const void *pa, const void *pb) {
  const test_key *a = pa, *b = pb;
  if (a->rate != b->rate) return a->rate < b->rate ? -1 : 1; /* time here */
  return (a->i > b->i) - (a->i < b->i);
}

static int by_block(const void *pa, const void *pb) {
  const test_key *a = pa, *b = pb;
  if (a->snap != b->snap) return a->snap < b->snap ? -1 : 1;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  if (a->to != b->to) return a->to < b->to ? -1 : 1;
  if (a->multi != b->multi) return a->multi - b->multi;
  if (a->rate != b->rate) return a->rate < b->rate ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* The tests' keys sorted by block; m's snapshot times set (t0_s, t_s,
 * nsnaps). A snapshot opens at the first test not yet in one, in time
 * order, and holds the tests that start within group_s of it. */
static test_key *snapshot_keys(const iperf3_run *runs, const int *from,
                               const int *to, size_t n, double group_s,
                               netimport *m) {
  test_key *k = mem_calloc(n, sizeof *k);
  for (size_t i = 0; i < n; i++) /* rate holds the time for by_time */
    k[i] = (test_key){.from = from[i], .to = to[i],
                      .multi = runs[i].streams > 1,
                      .rate = (double)runs[i].time_s, .i = i};
  qsort(k, n, sizeof *k, by_time);
  m->t0_s = runs[k[0].i].time_s;
  m->t_s = mem_alloc(n * sizeof *m->t_s);
  int64_t open = 0;
  for (size_t j = 0; j < n; j++) {
    int64_t t = runs[k[j].i].time_s;
    if (j == 0 || (double)(t - open) > group_s)
      open = t, m->t_s[m->nsnaps++] = t - m->t0_s;
    k[j].snap = m->nsnaps - 1;
    k[j].rate = runs[k[j].i].received_bps;
  }
  qsort(k, n, sizeof *k, by_block);
  return k;
}

/* Sums the tests k[lo .. hi) of one block into b. */
static void block_sum(block *b, const test_key *k, size_t lo, size_t hi,
                      const iperf3_run *runs, double mss_default) {
  *b = (block){.flow_bps = NAN, .best_bps = NAN, .first = k[lo].i};
  for (size_t j = lo; j < hi; j++) {
    const iperf3_run *r = &runs[k[j].i];
    bool one = !k[j].multi;
    if (k[j].i < b->first) b->first = k[j].i;
    if (!isnan(r->rtt_ms)) {
      b->rtt_sum += r->rtt_ms, b->rtt_n++;
      if (one) b->rtt1_sum += r->rtt_ms, b->rtt1_n++;
    }
    if (!one) {
      b->multi++;
      b->best_bps = isnan(b->best_bps) ? r->received_bps
                                       : fmax(b->best_bps, r->received_bps);
      continue;
    }
    b->single++;
    if (!isnan(r->retransmits)) {
      double mss = isnan(r->mss_bytes) ? mss_default : r->mss_bytes;
      b->retr += r->retransmits, b->segs += r->sent_bytes / mss, b->retr_n++;
    }
  }
  if (b->single) /* single-stream tests come first, sorted by rate */
    b->flow_bps = (k[lo + (size_t)(b->single - 1) / 2].rate +
                   k[lo + (size_t)b->single / 2].rate) / 2;
}

/* The values snapshot blocks bl (nsites^2 of them) measure for a -> b;
 * NAN where they measure nothing. The round trip is the pair's, both
 * ways: single-stream tests' when there are any, else all tests'. */
static netimport_value measured(const block *bl, int ns, int a, int b) {
  const block *x = &bl[a * ns + b], *y = &bl[b * ns + a];
  bool self = a == b;
  int n1 = x->rtt1_n + (self ? 0 : y->rtt1_n),
      n = x->rtt_n + (self ? 0 : y->rtt_n);
  double s1 = x->rtt1_sum + (self ? 0 : y->rtt1_sum),
         s = x->rtt_sum + (self ? 0 : y->rtt_sum);
  double rtt = n1 ? s1 / n1 : n ? s / n : NAN;
  return (netimport_value){
      .latency_ms = rtt / 2,
      .bandwidth_gbps = x->best_bps / GBPS,
      .flow_gbps = x->flow_bps / GBPS,
      .loss = x->retr_n && x->segs > 0 ? x->retr / x->segs : NAN};
}

/* The fields a pair's value holds through the snapshots, by offset. */
enum { F_LATENCY, F_BANDWIDTH, F_FLOW, F_LOSS, NFIELDS };
static const size_t FIELDS[NFIELDS] = {
    [F_LATENCY] = offsetof(netimport_value, latency_ms),
    [F_BANDWIDTH] = offsetof(netimport_value, bandwidth_gbps),
    [F_FLOW] = offsetof(netimport_value, flow_gbps),
    [F_LOSS] = offsetof(netimport_value, loss)};

static double *field(netimport_value *v, int f) {
  return (double *)(void *)((char *)v + FIELDS[f]);
}

/* Field f of the pair at cell through the snapshots: one that measures
 * nothing holds the last measured, those before the first measure take
 * the first. False when no snapshot measures it. */
static bool hold(netimport *m, size_t cell, int f) {
  size_t ns2 = (size_t)m->nsites * (size_t)m->nsites, k = 0;
  while (k < m->nsnaps && isnan(*field(&m->v[k * ns2 + cell], f))) k++;
  if (k == m->nsnaps) return false;
  double now = *field(&m->v[k * ns2 + cell], f);
  for (k = 0; k < m->nsnaps; k++) {
    double *x = field(&m->v[k * ns2 + cell], f);
    if (isnan(*x)) *x = now;
    else now = *x;
  }
  return true;
}

/* The tests of the block at cell in every snapshot, and their first. */
static int tests_of(const netimport *m, const block *bl, size_t cell,
                    size_t *first) {
  size_t ns2 = (size_t)m->nsites * (size_t)m->nsites;
  int n = 0;
  for (size_t k = 0; k < m->nsnaps; k++) {
    const block *x = &bl[k * ns2 + cell];
    if (x->single + x->multi && (n == 0 || x->first < *first))
      *first = x->first;
    n += x->single + x->multi;
  }
  return n;
}

/* Where a -> b's values come from (p's counts set on the way). */
static netimport_source source_of(const netimport *m, const block *bl, int a,
                                  int b, const netimport_opts *o,
                                  netimport_pair *p) {
  size_t ns = (size_t)m->nsites, ns2 = ns * ns, first;
  for (size_t k = 0; k < m->nsnaps; k++) {
    p->single += bl[k * ns2 + (size_t)a * ns + (size_t)b].single;
    p->multi += bl[k * ns2 + (size_t)a * ns + (size_t)b].multi;
  }
  if (p->single + p->multi) return NETIMPORT_MEASURED;
  if (a != b && tests_of(m, bl, (size_t)b * ns + (size_t)a, &first))
    return NETIMPORT_MIRRORED;
  if (a == b && !isnan(o->intra.latency_ms)) return NETIMPORT_INTRA;
  return NETIMPORT_NONE;
}

/* The values of a -> b in every snapshot from the blocks of the direction
 * measured (src), held through the snapshots; ERR_RANGE for a loss of 1
 * or more, ERR_MISSING for a pair without a round trip. */
static int measured_values(netimport *m, const block *bl, size_t cell,
                           size_t src, const netimport_hosts *h,
                           const iperf3_run *runs, err *e) {
  size_t ns = (size_t)m->nsites, ns2 = ns * ns, back = cell % ns * ns + cell / ns;
  int sa = (int)(src / ns), sb = (int)(src % ns);
  const char *fa = h->sites[sa], *fb = h->sites[sb];
  for (size_t k = 0; k < m->nsnaps; k++) {
    const block *x = &bl[k * ns2 + src], *y = &bl[k * ns2 + back];
    m->v[k * ns2 + cell] = measured(&bl[k * ns2], (int)ns, sa, sb);
    m->written[k * ns2 + cell] = k == 0 || x->single + x->multi ||
                                 y->single + y->multi;
    double loss = m->v[k * ns2 + cell].loss;
    if (loss >= 1)
      return err_set(e, ERR_RANGE, "%s:%d: %s -> %s: loss %g (retransmits "
                     "over the segments sent) is not below 1",
                     runs[x->first].file, runs[x->first].line, fa, fb, loss);
  }
  size_t first = SIZE_MAX, other = SIZE_MAX; /* the pair's first test */
  tests_of(m, bl, src, &first);
  if (tests_of(m, bl, src % ns * ns + src / ns, &other) && other < first)
    first = other;
  if (!hold(m, cell, F_LATENCY))
    return err_set(e, ERR_MISSING, "%s:%d: %s -> %s: no round trip in any "
                   "test between the two sites: iperf3 reports mean_rtt from "
                   "the sending host (a -R client's file has none: give the "
                   "server's file too, or run the client with "
                   "--get-server-output)", runs[first].file, runs[first].line,
                   fa, fb);
  hold(m, cell, F_FLOW);
  hold(m, cell, F_LOSS);
  m->pair[cell].capacity_bound = !hold(m, cell, F_BANDWIDTH);
  for (size_t k = 0; k < m->nsnaps && m->pair[cell].capacity_bound; k++)
    m->v[k * ns2 + cell].bandwidth_gbps = m->v[k * ns2 + cell].flow_gbps;
  return ERR_OK;
}

static int pair_values(netimport *m, const block *bl, const netimport_hosts *h,
                       const iperf3_run *runs, int a, int b,
                       const netimport_opts *o, err *e) {
  size_t ns = (size_t)m->nsites, ns2 = ns * ns,
         cell = (size_t)a * ns + (size_t)b;
  netimport_pair *p = &m->pair[cell];
  p->source = source_of(m, bl, a, b, o, p);
  netimport_value none = {NAN, NAN, NAN, NAN};
  for (size_t k = 0; k < m->nsnaps; k++)
    m->v[k * ns2 + cell] = p->source == NETIMPORT_INTRA ? o->intra : none;
  switch (p->source) {
    case NETIMPORT_NONE: return ERR_OK;
    case NETIMPORT_INTRA: m->written[cell] = true; return ERR_OK;
    case NETIMPORT_MEASURED:
    case NETIMPORT_MIRRORED: break;
  }
  size_t src = p->source == NETIMPORT_MEASURED ? cell : (size_t)b * ns + (size_t)a;
  int rc = measured_values(m, bl, cell, src, h, runs, e);
  int single = 0, counted = 0;
  for (size_t k = 0; k < m->nsnaps; k++)
    single += bl[k * ns2 + src].single, counted += bl[k * ns2 + src].retr_n;
  p->loss_unknown = single && !counted;
  return rc;
}

void netimport_free(netimport *m) {
  if (!m) return;
  free(m->t_s);
  free(m->v);
  free(m->written);
  free(m->pair);
  free(m);
}

netimport *netimport_links(const netimport_hosts *h, const iperf3_run *runs,
                           const int *from, const int *to, size_t n,
                           const netimport_opts *o, err *e) {
  if (n == 0) return err_set(e, ERR_MISSING, "no iperf3 test to import"), NULL;
  netimport *m = mem_calloc(1, sizeof *m);
  m->nsites = h->nsites;
  size_t ns = (size_t)h->nsites, ns2 = ns * ns;
  test_key *k = snapshot_keys(runs, from, to, n, o->group_s, m);
  if ((double)m->nsnaps * (double)ns2 > NETIMPORT_MAX_CELLS) {
    err_set(e, ERR_MEMORY, "%zu snapshots of %d sites: more than %d values "
            "to hold (group the tests into fewer snapshots)", m->nsnaps,
            h->nsites, NETIMPORT_MAX_CELLS);
    free(k);
    netimport_free(m);
    return NULL;
  }
  size_t cells = m->nsnaps * ns2;
  block *bl = mem_alloc(cells * sizeof *bl);
  for (size_t c = 0; c < cells; c++)
    bl[c] = (block){.flow_bps = NAN, .best_bps = NAN};
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo + 1; hi < n && k[hi].snap == k[lo].snap &&
                      k[hi].from == k[lo].from && k[hi].to == k[lo].to;)
      hi++;
    size_t c = k[lo].snap * ns2 + (size_t)k[lo].from * ns + (size_t)k[lo].to;
    block_sum(&bl[c], k, lo, hi, runs, o->mss_bytes);
  }
  m->v = mem_alloc(cells * sizeof *m->v);
  m->written = mem_calloc(cells, sizeof *m->written);
  m->pair = mem_calloc(ns2, sizeof *m->pair);
  int rc = ERR_OK;
  for (int a = 0; a < h->nsites && rc == ERR_OK; a++)
    for (int b = 0; b < h->nsites && rc == ERR_OK; b++)
      rc = pair_values(m, bl, h, runs, a, b, o, e);
  free(k);
  free(bl);
  if (rc == ERR_OK) return m;
  netimport_free(m);
  return NULL;
}

static size_t cell_of(const netimport *m, size_t snap, int from, int to) {
  assert(snap < m->nsnaps && from >= 0 && from < m->nsites && to >= 0 &&
         to < m->nsites);
  size_t ns = (size_t)m->nsites;
  return (snap * ns + (size_t)from) * ns + (size_t)to;
}

const netimport_value *netimport_at(const netimport *m, size_t snap, int from,
                                    int to) {
  return &m->v[cell_of(m, snap, from, to)];
}

bool netimport_written(const netimport *m, size_t snap, int from, int to) {
  return m->written[cell_of(m, snap, from, to)];
}

const netimport_pair *netimport_pair_of(const netimport *m, int from, int to) {
  return &m->pair[cell_of(m, 0, from, to)];
}

/* The note on from -> to of what its tests could not measure, into buf;
 * false when there is none. */
static bool pair_note(const netimport *m, const netimport_hosts *h, int a,
                      int b, char *buf, size_t size) {
  const netimport_pair *p = netimport_pair_of(m, a, b);
  const char *x = netimport_hosts_site(h, a), *y = netimport_hosts_site(h, b);
  if (p->source == NETIMPORT_MIRRORED)
    snprintf(buf, size, "%s -> %s: no test this way: both ways take %s -> "
             "%s's values (links: \"between\")", x, y, y, x);
  else if (p->source == NETIMPORT_NONE && a < b &&
           netimport_pair_of(m, b, a)->source == NETIMPORT_NONE)
    snprintf(buf, size, "%s and %s: no test either way: the scenario's "
             "network.latency_ms and bandwidth_gbps must give their link", x,
             y);
  else if (p->source != NETIMPORT_MEASURED) return false;
  else if (p->capacity_bound)
    snprintf(buf, size, "%s -> %s: no multi-stream test (iperf3 -P N): the "
             "capacity was not measured; bandwidth_gbps is one stream's "
             "rate, a lower bound", x, y);
  else if (p->single == 0)
    snprintf(buf, size, "%s -> %s: no single-stream test: flow_gbps and "
             "loss are left out, latency_ms is from -P tests (with the "
             "queueing they add)", x, y);
  else return false;
  return true;
}

void netimport_notes(const netimport *m, const netimport_hosts *h,
                     void (*note)(void *ctx, const char *text), void *ctx) {
  char buf[512];
  for (int a = 0; a < m->nsites; a++)
    for (int b = 0; b < m->nsites; b++) {
      if (pair_note(m, h, a, b, buf, sizeof buf)) note(ctx, buf);
      const netimport_pair *p = netimport_pair_of(m, a, b);
      if (p->source == NETIMPORT_MEASURED && p->loss_unknown) {
        snprintf(buf, sizeof buf, "%s -> %s: iperf3 counted no retransmits "
                 "(a sender that is not Linux?): loss is left out",
                 netimport_hosts_site(h, a), netimport_hosts_site(h, b));
        note(ctx, buf);
      }
    }
}

bool netimport_untested(const netimport *m, int *from, int *to) {
  for (int a = 0; a < m->nsites; a++)
    for (int b = 0; b < m->nsites; b++)
      if (netimport_pair_of(m, a, b)->source == NETIMPORT_NONE) {
        *from = a, *to = b;
        return true;
      }
  return false;
}

/* Sets on l the values of v (flow_gbps and loss when present). */
static void set_values(json_t *l, const netimport_value *v) {
  json_object_set_new(l, "latency_ms", json_real(v->latency_ms));
  json_object_set_new(l, "bandwidth_gbps", json_real(v->bandwidth_gbps));
  if (!isnan(v->flow_gbps))
    json_object_set_new(l, "flow_gbps", json_real(v->flow_gbps));
  if (!isnan(v->loss)) json_object_set_new(l, "loss", json_real(v->loss));
}

json_t *netimport_links_json(const netimport *m, const netimport_hosts *h) {
  json_t *links = json_array();
  for (int a = 0; a < m->nsites; a++)
    for (int b = 0; b < m->nsites; b++) {
      const netimport_pair *p = netimport_pair_of(m, a, b);
      if (p->source == NETIMPORT_NONE || p->source == NETIMPORT_MIRRORED)
        continue;
      json_t *l = json_object();
      const char *x = netimport_hosts_site(h, a), *y = netimport_hosts_site(h, b);
      if (a != b && netimport_pair_of(m, b, a)->source == NETIMPORT_MIRRORED) {
        json_object_set_new(l, "between", json_pack("[ss]", x, y));
      } else {
        json_object_set_new(l, "from", json_string(x));
        json_object_set_new(l, "to", json_string(y));
      }
      set_values(l, netimport_at(m, 0, a, b));
      json_array_append_new(links, l);
    }
  json_t *o = json_object();
  json_object_set_new(o, "links", links);
  return o;
}

static void csv_number(FILE *f, double x) {
  char buf[40] = "";
  if (!isnan(x)) json_out_real(x, buf, sizeof buf);
  fprintf(f, ",%s", buf);
}

void netimport_trace_write(FILE *f, const netimport *m,
                           const netimport_hosts *h, const char *source,
                           const char *command, double group_s) {
  char when[64];
  time_t t0 = (time_t)m->t0_s;
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));
  fprintf(f, "# source: %s\n# generated_by: %s\n", source, command);
  fprintf(f, "# t0: %s (the first test's start.timestamp; t_s counts from "
          "it)\n# group_s: %g (a snapshot holds the tests within it of its "
          "first)\n# interpolate: step\n", when, group_s);
  fprintf(f, "t_s,src,dst,latency_ms,bandwidth_gbps,flow_gbps,loss\n");
  for (size_t k = 0; k < m->nsnaps; k++)
    for (int x = 0; x < m->nsites; x++)
      for (int y = 0; y < m->nsites; y++) {
        if (!netimport_written(m, k, x, y)) continue;
        const netimport_value *v = netimport_at(m, k, x, y);
        fprintf(f, "%lld,%s,%s", (long long)m->t_s[k],
                netimport_hosts_site(h, x), netimport_hosts_site(h, y));
        csv_number(f, v->latency_ms);
        csv_number(f, v->bandwidth_gbps);
        csv_number(f, v->flow_gbps);
        csv_number(f, v->loss);
        fputc('\n', f);
      }
}
