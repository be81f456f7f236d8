/* simgrid_platform: a geodes scenario's network as a SimGrid platform, for
 * tests/simgrid/simgrid_train.c. Device d is host "d<d>" of the given speed
 * (flop/s) in one zone of full routing; the links are geodes's network
 * model written as SimGrid links:
 *   ideal: one private link per ordered device pair (its latency and
 *          bandwidth at t = 0);
 *   netem: per sender one egress link per destination class (a distinct
 *          (latency, bandwidth) among its destinations, as sim/net.c keys
 *          its shapers), then the sender's NIC up and the receiver's NIC
 *          down (SPLITDUPLEX, when limited) unless the two share a NIC.
 * Invariant: the route from a to b carries exactly the resources a flow
 * from a to b crosses in sim/net.c under the same model. */
#ifndef TESTS_SIMGRID_PLATFORM_H
#define TESTS_SIMGRID_PLATFORM_H

#include <stdbool.h>

#include "traces/scenario.h"

typedef struct simgrid_platform {
  const scenario *s;  /* borrowed */
  const double *speed; /* device -> flop/s of its host; borrowed */
  int *nic;           /* device -> NIC index, as sim_run lays them out */
  double *nic_gbps;   /* NIC -> capacity, Gbit/s (<= 0: unlimited) */
  int nnics;
} simgrid_platform;

/* The NIC layout of s (one per device, or one per site whose GPUs share
 * it), into p; free with simgrid_platform_free. */
void simgrid_platform_init(simgrid_platform *p, const scenario *s,
                           const double *speed);
void simgrid_platform_free(simgrid_platform *p);

/* Writes the platform XML to path (ideal: the ideal model's links, else
 * netem's), every latency multiplied by lat_scale (0: links without
 * latency). Returns 0, or -1 with errno set when the file cannot be
 * written. */
int simgrid_platform_write(const simgrid_platform *p, const char *path,
                           bool ideal, double lat_scale);

#endif
