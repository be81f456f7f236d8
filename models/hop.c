/* hop: see hop.h. The bounds are taken in the engine's order (sim/net.c:
 * pair_get, sim_net_start, begin, tcp_cap), so a flow alone on its path
 * gets the engine's rate exactly. */
#include "models/hop.h"

#include <math.h>
#include <stdlib.h>

#include "base/mem.h"

void hop_net_init(hop_net *n, const scenario *s, const transport_options *o) {
  int nd = s->ndevices;
  n->s = s;
  n->o = o ? *o : transport_options_default();
  n->path = scenario_shaping_shares_paths(s->shaping) &&
            transport_is_shared(n->o.model);
  size_t np = n->path ? (size_t)s->nsites * (size_t)s->nsites : 0;
  n->pw = n->path ? mem_calloc(np, sizeof *n->pw) : NULL;
  n->rpw = n->path ? mem_calloc(np, sizeof *n->rpw) : NULL;
  n->touched = n->path ? mem_alloc(np * sizeof *n->touched) : NULL;
  n->ntouched = 0;
  n->nic = mem_alloc((size_t)nd * sizeof *n->nic);
  n->cap = mem_calloc((size_t)nd, sizeof *n->cap);
  n->out = mem_calloc((size_t)nd, sizeof *n->out);
  n->in = mem_calloc((size_t)nd, sizeof *n->in);
  n->rout = mem_calloc((size_t)nd, sizeof *n->rout);
  n->rin = mem_calloc((size_t)nd, sizeof *n->rin);
  n->swap = false;
  for (int d = 0; d < nd; d++) {
    const scenario_site *site = &s->sites[s->device_site[d]];
    n->nic[d] = site->nic_shared ? site->first_device : d;
    double g = site->nic_gbps;
    if (transport_is_shared(n->o.model) && g > 0 && isfinite(g))
      n->cap[n->nic[d]] = g * 1e9 / 8.0;
  }
}

void hop_net_free(hop_net *n) {
  free(n->nic), free(n->cap), free(n->out), free(n->in);
  free(n->rout), free(n->rin);
  free(n->pw), free(n->rpw), free(n->touched);
}

void hop_net_reset(hop_net *n) {
  for (int d = 0; d < n->s->ndevices; d++)
    n->out[d] = n->in[d] = n->rout[d] = n->rin[d] = 0;
  for (int i = 0; i < n->ntouched; i++) /* O(paths used), not sites^2 */
    n->pw[n->touched[i]] = n->rpw[n->touched[i]] = 0;
  n->ntouched = 0;
  n->swap = false;
}

static int sockets_to(const hop_net *n, int b) {
  int N = n->s->sites[n->s->device_site[b]].nccl_sockets;
  return N > 0 ? N : TRANSPORT_SOCKETS_DEFAULT;
}

/* The bytes of a message between different NICs cross both (netem, tcp). */
static bool wired(const hop_net *n, int a, int b) {
  return transport_is_shared(n->o.model) && n->nic[a] != n->nic[b];
}

/* Adds weight w to path id p of weights pw (a path of the phase). */
static void path_add(hop_net *n, double *pw, int p, double w) {
  if (p < 0) return; /* private */
  if (n->pw[p] == 0 && n->rpw[p] == 0) n->touched[n->ntouched++] = p;
  pw[p] += w;
}

void hop_net_count(hop_net *n, int a, int b, double bytes, int channels) {
  if (!wired(n, a, b)) return;
  int w = transport_sockets_dealt(channels, sockets_to(n, b), bytes);
  int wr = transport_sockets_dealt(channels, sockets_to(n, a), bytes);
  n->out[n->nic[a]] += w;
  n->in[n->nic[b]] += w;
  n->rout[n->nic[b]] += wr;
  n->rin[n->nic[a]] += wr;
  if (!n->path) return;
  path_add(n, n->pw, scenario_path(n->s, a, b), w);
  path_add(n, n->rpw, scenario_path(n->s, b, a), wr);
}

/* The share of NIC capacity cap for a flow of weight w among total. */
static double nic_share(double cap, double w, double total) {
  return cap * w / (total > w ? total : w);
}

static double flow_cap_gbps(const hop_net *n, int d) {
  double g = n->s->sites[n->s->device_site[d]].flow_gbps;
  return g > 0 ? g : INFINITY;
}

/* The link's rate for the hop a -> b of weight w: tc, the sender's shaper
 * split among `share`; path, its share of the path (a private one whole). */
static double link_rate(const hop_net *n, int a, int b, double bytes_s,
                        int w, int share) {
  if (!n->path) return bytes_s / (share > 1 ? share : 1);
  int p = scenario_path(n->s, a, b);
  return p < 0 ? bytes_s
               : nic_share(bytes_s, w, n->swap ? n->rpw[p] : n->pw[p]);
}

hop hop_of(const hop_net *n, int a, int b, double bytes, int share,
           int channels) {
  trace_value v = scenario_link(n->s, a, b, 0);
  trace_value back = scenario_link(n->s, b, a, 0);
  int N = sockets_to(n, b), w = transport_sockets_dealt(channels, N, bytes);
  double rtt = (v.latency_ms + back.latency_ms) / 1e3;
  const scenario *s = n->s;
  transport_path tp = transport_site_path(&n->o, s, s->device_site[a],
                                          s->device_site[b], &v, rtt);
  hop h = {.lat = v.latency_ms / 1e3, .rtt = rtt,
           .rate = link_rate(n, a, b, v.bandwidth_gbps * 1e9 / 8.0, w, share),
           .window = tp.cwnd_max, .room = channels * N * tp.window,
           .channels = channels, .sockets = N};
  if (!wired(n, a, b)) return h; /* ideal, or NVLink inside an instance */
  int na = n->nic[a], nb = n->nic[b];
  double eo = n->swap ? n->rout[na] : n->out[na];
  double ei = n->swap ? n->rin[nb] : n->in[nb];
  if (n->cap[na] > 0) h.rate = fmin(h.rate, nic_share(n->cap[na], w, eo));
  if (n->cap[nb] > 0) h.rate = fmin(h.rate, nic_share(n->cap[nb], w, ei));
  double fg = fmin(flow_cap_gbps(n, a), flow_cap_gbps(n, b));
  if (isfinite(fg)) h.rate = fmin(h.rate, w * fg * 1e9 / 8.0);
  return h;
}

double hop_time_from(const hop_net *n, const hop *h, double bytes,
                     double *cwnd) {
  return transport_message_s(bytes, h->rtt, h->rate, h->channels, h->sockets,
                             n->o.model, h->window, cwnd);
}

double hop_time(const hop_net *n, const hop *h, double bytes) {
  double w = h->window;
  return hop_time_from(n, h, bytes, &w);
}

double hop_handed(const hop *h, double issue, double left, double bytes,
                  double x) {
  if (!(bytes > 0)) return fmax(issue, left);
  return fmax(issue, left - h->room * x / bytes);
}

bool hop_restarts(const hop_net *n) {
  return transport_is_windowed(n->o.model) && n->o.idle_restart;
}

double hop_first_extra(const hop_net *n, const hop *h, double bytes,
                       int flows, double *steady) {
  *steady = hop_time(n, h, bytes);
  if (!hop_restarts(n) || !(h->rtt > 0)) return 0;
  double cwnd = 0, sum = 0;
  for (int k = 0; k < flows; k++) {
    double before = cwnd, x = hop_time_from(n, h, bytes, &cwnd);
    *steady = x;
    if (k > 0 && cwnd == before) return sum - k * x;
    sum += x;
  }
  return sum - flows * *steady;
}

double hop_paced(const hop_net *n, const hop *h, double bytes, double x,
                 double pace) {
  double rto = h->rtt + TRANSPORT_TCP_RTO_MIN_S, idle = pace - x;
  if (!hop_restarts(n) || !(h->rtt > 0) || !(idle > rto)) return x;
  double w = transport_idle_window(h->window, idle, rto);
  return fmax(x, fmin(hop_time_from(n, h, bytes, &w), pace));
}
