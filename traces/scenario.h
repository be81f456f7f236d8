/* scenario: sites, devices, network, workload and cost sizes of one study,
 * loaded from JSON (traces/FORMATS.md) or from the built-in set.
 * Invariant: devices are numbered in the order of sites; site s owns devices
 * first_device .. first_device + ndevices - 1; the network trace covers
 * exactly the scenario's sites, in the same order. The workload keeps model
 * and GPU *names*: models/ resolves them. The struct is plain data so the
 * command line may override workload fields after loading. */
#ifndef TRACES_SCENARIO_H
#define TRACES_SCENARIO_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "traces/scenario_types.h"
#include "traces/trace.h"

/* The types of a scenario (its sites, workload, knobs, limits and the
 * NIC and shaping maps): traces/scenario_types.h. */

/* The NICs' names, "generic", "aws-ena", "gcp-gvnic" (NULL-terminated);
 * parse: -1 unknown. */
extern const char *const scenario_nic_names[SCENARIO_NNICS + 1];
int scenario_nic_parse(const char *name);
/* NCCL's sockets per connection for nic with NCCL_SOCKET_NTHREADS and
 * NCCL_NSOCKS_PERTHREAD set (> 0) or auto (<= 0): threads capped at
 * MAX_THREADS = 16, sockets per thread cut to MAX_SOCKETS / threads when
 * the product passes MAX_SOCKETS; 0 threads: 1 (the control socket). */
int scenario_nic_sockets(scenario_nic nic, int nthreads, int nsocks_per_thread);

/* The shapings' names, "tc", "path" (NULL-terminated); parse: -1 unknown */
extern const char *const scenario_shaping_names[SCENARIO_NSHAPINGS + 1];
int scenario_shaping_parse(const char *name);
/* Whether sh shares a link between sites among every flow on it (path),
 * rather than shaping each sender's egress (tc): the one question the
 * engine, the predictor and the outputs ask of a shaping. */
bool scenario_shaping_shares_paths(scenario_shaping sh);

/* The keys a scenario file's sites take (the parser's list,
 * NULL-terminated). Each is part of scenario_hash's content: a test edits
 * every one and checks that the hash moves. The workload's and cost's keys
 * are WORKLOAD_MAP's rows (workload_rows). */
extern const char *const scenario_site_keys[];
/* The keys of the other objects of a scenario file, as its reader takes
 * them (NULL-terminated): the top level, network, an element of
 * network.links and of network.overrides. traces/FORMATS.md
 * documents every one (test_formats checks it). */
extern const char *const scenario_top_keys[];
extern const char *const scenario_network_keys[];
extern const char *const scenario_link_keys[];
extern const char *const scenario_override_keys[];
/* The site keys a simulated time does not depend on (kept out of
 * scenario_hash): "instance" and the prices and power (usd_per_gpu_hour,
 * spot, usd_per_gb, gco2_per_kwh, board_w, idle_w). A site takes the keys
 * of both lists. */
extern const char *const scenario_site_info_keys[];

/* The scenario of `geodes run` and of a sweep that names none. */
#define SCENARIO_DEFAULT_NAME "worldwide"

/* Loads a built-in scenario by name, or else the JSON file at that path (a
 * relative network.trace is read from the scenario file's folder). Returns
 * NULL and fills e ("FILE:LINE: message" naming the field) on bad input;
 * unknown keys are errors. The caller owns the result. */
scenario *scenario_load(const char *name_or_path, err *e);

/* scenario_load without building a built-in scenario's network (the
 * trace CSV is not parsed; every other key is read and checked): network is
 * NULL, trace_file names the built-in trace and network_static says whether
 * it varies in time (trace_csv_all_at_zero, which agrees with
 * trace_is_static on every built-in). For `geodes scenarios`' listing,
 * which prints names, sizes, sites and descriptions only; anything that
 * reads the network loads in full. A scenario file (a path) loads in full. */
scenario *scenario_load_brief(const char *name_or_path, err *e);

/* Parses scenario JSON text (len bytes) as scenario_load reads a file:
 * file names it in messages and its folder holds a relative network.trace.
 * NULL and e filled on bad input; the caller owns the result. */
scenario *scenario_parse(const char *text, size_t len, const char *file,
                         err *e);

/* Frees s; NULL is fine. */
void scenario_free(scenario *s);

/* A content hash of everything s holds that a result depends on: seed,
 * sites (every key of scenario_site_keys, resolved: a "nic" by the sockets
 * it gives), overrides, workload and cost sizes (WORKLOAD_MAP's rows, as
 * each row's hash says, and the layer split), the shaping and the network
 * trace's content (trace_hash). Keys added since results were first stored
 * (the shaping, a site's tcp_window_bytes, the path keys) count only when
 * they differ from the value that reproduces the behaviour before them
 * (tc, 1.45e6, absent), so stored identities of the scenarios that state
 * those hold.
 * Not its name, description, origin or latency convention. Two loads of
 * unchanged files hash equal; an edit of the scenario or of its trace file
 * changes it. */
uint64_t scenario_hash(const scenario *s);

/* A content hash of what s's bills read and scenario_hash leaves out:
 * every site's GPU-hour price, carbon intensity and power keys, and the
 * egress price of every ordered site pair; 0 when s states none of them
 * (priced by neither key nor instance), so that an unpriced scenario's
 * stored rows keep their identity (analysis/sweep.c). */
uint64_t scenario_prices_hash(const scenario *s);

/* The link from device a to device b (a != b) at time t_ns: the override if
 * one exists, else the trace value between their sites. */
trace_value scenario_link(const scenario *s, int a, int b, int64_t t_ns);

/* Whether the pair a, b (either order) has a device override. O(overrides). */
bool scenario_overridden(const scenario *s, int a, int b);

/* The path a message from device a to device b (a != b) takes under path
 * shaping: the ordered site pair's index, site(a) x nsites + site(b), for
 * devices of different sites without an override; -1 for a private one
 * (two devices of one site, or an overridden pair). */
int scenario_path(const scenario *s, int a, int b);

/* Where a value of s came from, for a check made after loading, into buf:
 * "FILE:LINE: KEY" for one read from the file (line > 0), "NAME: KEY" for
 * one a knob set or a default (line <= 0). KEY is as messages name it
 * ("workload.batch", "sites[2].gpu"). */
void scenario_where(const scenario *s, int line, const char *key, char *buf,
                    size_t size);

/* The index of the site called name, or -1. */
int scenario_site_index(const scenario *s, const char *name);


/* Whether batch is a multiple of replicas * micro_batch * k (each in
 * 1 .. INT_MAX) without overflowing: a partial product above batch already
 * fails, and what remains fits in 62 bits. *per_pass gets the product, or
 * -1 when it exceeds batch. The loader and the knobs share it. */
bool scenario_batch_divides(long long batch, long long replicas,
                            long long mb, long long k, long long *per_pass);

/* Every knob absent. */
void scenario_knobs_init(scenario_knobs *k);

/* Applies the present knobs of k to s after checking them all: each in
 * its row's range or names (ERR_RANGE, ERR_UNKNOWN), scales that keep
 * every link within trace.h's bounds (ERR_RANGE), a shape that uses every
 * device and B a multiple of D_dp * m * K (ERR_CONFIG), a model knob
 * "hf:PATH" a config.json that model_hf_load reads (PATH from the working
 * directory: its dimensions replace the workload's, its name the model's;
 * a name drops them). Returns ERR_OK, or fills e naming the scenario and
 * the knob (e->field: its row; the shape's rows when the shape alone
 * breaks the batch; a config's own FILE:LINE) and leaves s unchanged. A
 * row's line becomes SCENARIO_LINE_KNOB. */
int scenario_apply(scenario *s, const scenario_knobs *k, err *e);

/* The checks of scenario_apply alone, s unchanged: a sweep checks each of
 * its knob combinations before any point runs. */
int scenario_check_knobs(const scenario *s, const scenario_knobs *k, err *e);

/* Names of the built-in scenarios (every traces/data/<name>.json), the
 * paper's five first in the paper's order, then the rest alphabetically;
 * NULL-terminated, built once, owned by the module. */
const char *const *scenario_builtin_names(void);

#endif
