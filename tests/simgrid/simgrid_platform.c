/* simgrid_platform: the XML writer (platform v4.1).
 * Invariant: link and route ids are built from device, class and NIC
 * indices only, so the file is a function of the scenario. */
#include "tests/simgrid/simgrid_platform.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* sim_run's nic_layout, which sim/sim.c keeps static. */
void simgrid_platform_init(simgrid_platform *p, const scenario *s,
                           const double *speed) {
  *p = (simgrid_platform){.s = s, .speed = speed};
  p->nic = mem_alloc((size_t)s->ndevices * sizeof *p->nic);
  p->nic_gbps = mem_alloc((size_t)s->ndevices * sizeof *p->nic_gbps);
  int nn = 0;
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *site = &s->sites[i];
    for (int d = 0; d < site->ndevices; d++) {
      if (!site->nic_shared || d == 0) p->nic_gbps[nn++] = site->nic_gbps;
      p->nic[site->first_device + d] = nn - 1;
    }
  }
  p->nnics = nn;
}

void simgrid_platform_free(simgrid_platform *p) {
  if (!p) return;
  free(p->nic);
  free(p->nic_gbps);
  p->nic = NULL;
  p->nic_gbps = NULL;
}

static double bytes_s(double gbps) { return gbps * 1e9 / 8; }

static void xml_link(FILE *f, const char *id, double bps, double lat_s,
                     const char *policy) {
  fprintf(f, "  <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"%s%s%s/>\n",
          id, bps, lat_s, policy ? " sharing_policy=\"" : "",
          policy ? policy : "", policy ? "\"" : "");
}

/* Per sender a, the class of each destination (its index among a's distinct
 * (latency, bandwidth) values in destination order, as sim/net.c's
 * shaper_of keys them), writing one egress link per class. */
static void netem_classes(FILE *f, const simgrid_platform *p, int a, int *cls,
                          double lat_scale) {
  int n = p->s->ndevices, k = 0;
  trace_value *v = mem_alloc((size_t)n * sizeof *v);
  for (int b = 0; b < n; b++) {
    if (b == a) continue;
    trace_value x = scenario_link(p->s, a, b, 0);
    int c = 0;
    while (c < k && !(v[c].latency_ms == x.latency_ms &&
                      v[c].bandwidth_gbps == x.bandwidth_gbps))
      c++;
    if (c == k) {
      v[k++] = x;
      char id[64];
      snprintf(id, sizeof id, "s%d_%d", a, c);
      xml_link(f, id, bytes_s(x.bandwidth_gbps),
               x.latency_ms * 1e-3 * lat_scale, NULL);
    }
    cls[b] = c;
  }
  free(v);
}

static bool nic_limited(const simgrid_platform *p, int i) {
  return p->nic_gbps[i] > 0 && isfinite(p->nic_gbps[i]);
}

static void netem_route(FILE *f, const simgrid_platform *p, int a, int b, int c) {
  fprintf(f, "  <route src=\"d%d\" dst=\"d%d\" symmetrical=\"NO\">"
          "<link_ctn id=\"s%d_%d\"/>", a, b, a, c);
  int na = p->nic[a], nb = p->nic[b];
  if (na != nb && nic_limited(p, na))
    fprintf(f, "<link_ctn id=\"nic%d\" direction=\"UP\"/>", na);
  if (na != nb && nic_limited(p, nb))
    fprintf(f, "<link_ctn id=\"nic%d\" direction=\"DOWN\"/>", nb);
  fprintf(f, "</route>\n");
}

static void platform_netem(FILE *f, const simgrid_platform *p, double lat_scale) {
  int n = p->s->ndevices;
  int *cls = mem_alloc((size_t)n * n * sizeof *cls);
  for (int i = 0; i < p->nnics; i++)
    if (nic_limited(p, i)) {
      char id[32];
      snprintf(id, sizeof id, "nic%d", i);
      xml_link(f, id, bytes_s(p->nic_gbps[i]), 0, "SPLITDUPLEX");
    }
  for (int a = 0; a < n; a++)
    netem_classes(f, p, a, cls + (size_t)a * n, lat_scale);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b) netem_route(f, p, a, b, cls[(size_t)a * n + b]);
  free(cls);
}

static void platform_ideal(FILE *f, const simgrid_platform *p, double lat_scale) {
  int n = p->s->ndevices;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b) {
        trace_value x = scenario_link(p->s, a, b, 0);
        char id[64];
        snprintf(id, sizeof id, "p%d_%d", a, b);
        xml_link(f, id, bytes_s(x.bandwidth_gbps),
                 x.latency_ms * 1e-3 * lat_scale, NULL);
      }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b)
        fprintf(f, "  <route src=\"d%d\" dst=\"d%d\" symmetrical=\"NO\">"
                "<link_ctn id=\"p%d_%d\"/></route>\n", a, b, a, b);
}

int simgrid_platform_write(const simgrid_platform *p, const char *path,
                           bool ideal, double lat_scale) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
          "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
          "<zone id=\"world\" routing=\"Full\">\n");
  for (int d = 0; d < p->s->ndevices; d++)
    fprintf(f, "  <host id=\"d%d\" speed=\"%.17gf\"/>\n", d, p->speed[d]);
  if (ideal) platform_ideal(f, p, lat_scale);
  else platform_netem(f, p, lat_scale);
  fprintf(f, "</zone>\n</platform>\n");
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) return -1;
  return 0;
}
