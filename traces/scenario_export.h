/* scenario_export: a loaded scenario as the JSON object of its file format
 * (traces/FORMATS.md): `geodes scenarios --export` and --show.
 * Invariant: loading the export gives the same scenario_hash. */
#ifndef TRACES_SCENARIO_EXPORT_H
#define TRACES_SCENARIO_EXPORT_H

#include <jansson.h>
#include <stdio.h>

#include "traces/scenario.h"

/* s as a scenario file's object (keys in the format's order), every key
 * with its effective value, defaults included (the shaping, each site's
 * tcp_window_bytes); keys whose default means "none" (a site's instance,
 * flow_gbps and compute_efficiency, a link's path keys, the workload's
 * layers when the model's depth, the cost sizes) are left out when s has
 * none. The network is trace_name ({"trace": trace_name}) when
 * given, else the links of every ordered site pair at t = 0 (the caller
 * gives a trace for a network that varies in time: trace_is_static), and
 * the device overrides as "Site:index" pairs; workload.model is a model's
 * name, or its dimensions' object when the scenario gave them (an object,
 * or "hf:PATH": the config's dimensions, not its path). The caller owns the
 * new reference. */
json_t *scenario_export(const scenario *s, const char *trace_name);

/* Row r of WORKLOAD_MAP on s (not a TRANSPORT row) as the file spells it:
 * an integer, a boolean, a real or a name. A new reference. */
json_t *scenario_export_row(const scenario *s, int r);

/* o (scenario_export's) into f in the export's layout, and a newline: a
 * key per line, a top-level object as a block of its own, a list of
 * objects one per line, any other value on one line
 * (scenario_export_value). What --export writes. */
void scenario_export_write(const json_t *o, FILE *f);

/* v on one line into f: objects {"k": v, ...}, arrays [v, ...], a real in
 * the fewest digits that read back as the same double, positional between
 * 1e-5 and 1e16 ("10.0", not "1e+01"; ".0" on an integral one). */
void scenario_export_value(const json_t *v, FILE *f);

#endif
