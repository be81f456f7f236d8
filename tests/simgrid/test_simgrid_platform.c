/* Tests of tests/simgrid/simgrid_platform.c: the platform it writes, loaded
 * by SimGrid, against the scenario read directly — every route's latency,
 * its bandwidth (the least of its links) and its links, under ideal and
 * netem, on per-device NICs (worldwide) and on instances whose GPUs share
 * one (spot-physical). Built only where SimGrid is installed. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

#include "tests/simgrid/simgrid_platform.h"
#include "tests/support.h"

static scenario *S;
static simgrid_platform P;
static double *speed;

static void cleanup(void) {
  simgrid_platform_free(&P);
  scenario_free(S);
  free(speed);
  S = NULL;
  speed = NULL;
}

TestSuite(simgrid_platform, .fini = cleanup);

/* Loads scenario name's platform into a fresh SimGrid (each Criterion test
 * runs in its own process). */
static void load(const char *name, bool ideal, double lat_scale) {
  scenario *s = support_scenario(name);
  speed = malloc((size_t)s->ndevices * sizeof *speed);
  for (int d = 0; d < s->ndevices; d++) speed[d] = 1e12 + d;
  simgrid_platform_init(&P, s, speed);
  const char *path = support_path("platform.xml");
  cr_assert_eq(simgrid_platform_write(&P, path, ideal, lat_scale), 0);
  int argc = 1;
  char *argv[] = {"test_simgrid_platform", NULL};
  simgrid_init(&argc, argv);
  simgrid_load_platform(path);
  S = s;
}

static sg_host_t host(int d) {
  char id[32];
  snprintf(id, sizeof id, "d%d", d);
  sg_host_t h = sg_host_by_name(id);
  cr_assert(h, "no host %s", id);
  return h;
}

static int route_links(int a, int b) {
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(host(a), host(b), links);
  int n = (int)xbt_dynar_length(links);
  xbt_dynar_free(&links);
  return n;
}

static bool close_to(double x, double y) {
  return fabs(x - y) <= 1e-12 * fmax(fabs(x), fabs(y));
}

/* The naive reference for netem: the pair's link, then the NICs unless
 * shared; the class's link is the pair's own values (classes are keyed by
 * exact values). */
static void check_netem(double lat_scale) {
  for (int a = 0; a < S->ndevices; a++)
    for (int b = 0; b < S->ndevices; b++) {
      if (a == b) continue;
      trace_value v = scenario_link(S, a, b, 0);
      double bw = v.bandwidth_gbps * 1e9 / 8;
      bool wire = P.nic[a] != P.nic[b];
      if (wire) bw = fmin(bw, fmin(P.nic_gbps[P.nic[a]], P.nic_gbps[P.nic[b]]) * 1e9 / 8);
      cr_assert(close_to(sg_host_get_route_latency(host(a), host(b)),
                         v.latency_ms * 1e-3 * lat_scale), "%d -> %d", a, b);
      cr_assert(close_to(sg_host_get_route_bandwidth(host(a), host(b)), bw),
                "%d -> %d", a, b);
      cr_assert_eq(route_links(a, b), wire ? 3 : 1, "%d -> %d", a, b);
    }
}

Test(simgrid_platform, netem_per_device_nics) {
  load("worldwide", false, 1);
  cr_assert_eq(P.nnics, S->ndevices);
  check_netem(1);
}

Test(simgrid_platform, netem_shared_nics) {
  load("spot-physical", false, 1);
  cr_assert_lt(P.nnics, S->ndevices);
  check_netem(1);
}

Test(simgrid_platform, netem_without_latency) {
  load("worldwide", false, 0);
  check_netem(0);
}

/* One egress link per sender per distinct (latency, bandwidth) among its
 * destinations, and one per NIC: counted against the scenario. */
Test(simgrid_platform, netem_link_count) {
  load("worldwide", false, 1);
  int classes = 0;
  for (int a = 0; a < S->ndevices; a++)
    for (int b = 0; b < S->ndevices; b++) {
      if (b == a) continue;
      trace_value x = scenario_link(S, a, b, 0);
      bool seen = false;
      for (int c = 0; c < b && !seen; c++) {
        if (c == a) continue;
        trace_value y = scenario_link(S, a, c, 0);
        seen = x.latency_ms == y.latency_ms && x.bandwidth_gbps == y.bandwidth_gbps;
      }
      classes += !seen;
    }
  /* a SPLITDUPLEX link counts twice (its UP and DOWN halves), and SimGrid
   * adds its own loopback */
  cr_assert_eq((int)sg_link_count(), classes + 2 * P.nnics + 1, "%d links, %d "
               "classes, %d NICs", (int)sg_link_count(), classes, P.nnics);
}

Test(simgrid_platform, ideal_private_pairs) {
  load("worldwide", true, 1);
  cr_assert_eq((int)sg_link_count(), S->ndevices * (S->ndevices - 1) + 1,
               "%d links", (int)sg_link_count());
  for (int a = 0; a < S->ndevices; a++)
    for (int b = 0; b < S->ndevices; b++) {
      if (a == b) continue;
      trace_value v = scenario_link(S, a, b, 0);
      cr_assert(close_to(sg_host_get_route_latency(host(a), host(b)),
                         v.latency_ms * 1e-3));
      cr_assert(close_to(sg_host_get_route_bandwidth(host(a), host(b)),
                         v.bandwidth_gbps * 1e9 / 8));
      cr_assert_eq(route_links(a, b), 1);
    }
}

Test(simgrid_platform, host_speeds) {
  load("worldwide", true, 1);
  for (int d = 0; d < S->ndevices; d++)
    cr_assert(close_to(sg_host_get_speed(host(d)), 1e12 + d));
}

Test(simgrid_platform, unwritable_path) {
  scenario *s = support_scenario("worldwide");
  double v[64] = {0};
  simgrid_platform p;
  simgrid_platform_init(&p, s, v);
  cr_assert_eq(simgrid_platform_write(&p, "/nonexistent/dir/p.xml", true, 1), -1);
  simgrid_platform_free(&p);
  scenario_free(s);
}
