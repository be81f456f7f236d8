/* scenario_parts: what the scenario reader's files share — scenario.c (the
 * document, its sites, workload and cost) and scenario_net.c (its network
 * block). Not for other modules.
 * circle: internal header of the scenario reader's files (scenario.c,
 * scenario_net.c, scenario_price.c): it reads into scenario.h's types, so
 * it includes scenario.h and scenario.c includes it. */
#ifndef TRACES_SCENARIO_PARTS_H
#define TRACES_SCENARIO_PARTS_H

#include <jansson.h>
#include <stdbool.h>

#include "base/jfield.h"
#include "traces/scenario.h"

/* Reads root's "network" into sc (its sites already read): a uniform
 * value, a trace file (built-in beside a built-in scenario, else relative
 * to the file) or inline site-pair links, and the device overrides. With
 * sc->brief a built-in trace is found but not parsed (sc->network NULL,
 * sc->network_static from a scan of its rows' times).
 * ERR_OK, or the code with c->e holding "FILE:LINE: network...: message". */
int scenario_read_network(const jfield_doc *c, const json_t *root,
                          scenario *sc, bool builtin);

/* The path of a file a scenario file names (name: absolute, or relative
 * to the scenario file's folder), malloc'ed. */
char *scenario_file_beside(const char *scenario_file, const char *name);

/* The site keys of prices and power (scenario_price.c reads them). */
#define SCENARIO_SITE_PRICE_KEYS_ \
  "usd_per_gpu_hour", "spot", "usd_per_gb", "gco2_per_kwh", "board_w", "idle_w"

/* Reads root's prices into sc (its sites and network already read): the
 * price table ("prices": a file relative to the scenario's folder, else the
 * built-in), each site's price and power keys and its GPU-hour (its own, or
 * its instance's), and the egress price of every ordered site pair
 * (network.links[].usd_per_gb, sites[].usd_per_gb, network.usd_per_gb).
 * ERR_OK, or the code with c->e holding "FILE:LINE: key: message". */
int scenario_read_prices(const jfield_doc *c, const json_t *root,
                         scenario *sc, bool builtin);

#endif
