/* workload: the knobs of a run, declared once (WORKLOAD_MAP), and the
 * names a scenario's workload block, a knob, a sweep and the command line
 * give the pipeline schedule, the data-parallel algorithm and the runtime
 * — one home, at the lowest layer that checks them (the scenario loader,
 * at FILE:LINE). models/spec resolves the names into its enums, which it
 * generates from the name maps below, so a name and its enum value cannot
 * part.
 * Invariant: each name map's first entry is the default (what a scenario
 * that names none gets); the lists are the maps' names in map order; every
 * row of WORKLOAD_MAP is a field of scenario_knobs and of its target, in
 * the map's order, and workload_rows[WORKLOAD_f] describes field f. */
#ifndef TRACES_WORKLOAD_H
#define TRACES_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

/* X(ID, "name"), in the order of the enums generated from them. */
#define WORKLOAD_SCHEDULE_MAP(X) \
  X(GPIPE, "gpipe")              \
  X(1F1B, "1f1b")
#define WORKLOAD_DP_ALGO_MAP(X)  \
  X(CENTRAL_PS, "central-ps")    \
  X(RING, "ring")                \
  X(SHARDED_PS, "sharded-ps")    \
  X(DILOCO, "diloco")            \
  X(STREAMING_DILOCO, "streaming-diloco") \
  X(HIER_RING, "hier-ring")               \
  X(HIVEMIND, "hivemind")
#define WORKLOAD_RUNTIME_MAP(X)  \
  X(MODERN, "modern")            \
  X(DTFM, "dtfm")                \
  X(MEGATRON, "megatron")

/* The K (micro-batches per pass) the batch must be a multiple of, D_dp x
 * m x K, under runtime (a name of workload_runtimes; NULL: the default,
 * modern): Megatron runs all of a replica's micro-batches in one 1F1B
 * schedule and ignores micro_batches_per_pass (models/spec_workload.c), so
 * 1; the others' passes need kpp (<= 0: 1). */
long long workload_batch_k(const char *runtime, long long kpp);

/* The names of each map, NULL-terminated ("gpipe", "1f1b", NULL). */
extern const char *const workload_schedules[];
extern const char *const workload_dp_algos[];
extern const char *const workload_runtimes[];

/* Whether bits is one of the widths of list (a BITS row's names). */
bool workload_bits_ok(const char *const *list, long bits);

/* DiLoCo's defaults where a scenario names none: H = 100 inner steps
 * (INTELLECT-1's and OpenDiLoCo's), one fragment, no overlap. */
#define WORKLOAD_DEFAULT_INNER_STEPS 100

/* hivemind's defaults (models/hivemind.h): hivemind.Optimizer's
 * matchmaking_time, 15 s (hivemind/optim/optimizer.py:177 at 4bd43b7),
 * and its delay_grad_averaging, off; a matchmaking window is at most an
 * hour (hivemind's own guidance is 3 to 15 s, optimizer.py:94). */
#define WORKLOAD_DEFAULT_MATCHMAKING_S 15.0
#define WORKLOAD_MAX_MATCHMAKING_S 3600.0

/* A list of names in a row (a NULL-terminated array with static storage). */
#define WORKLOAD_LIST(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The knobs of a run, declared once: to add one, add its row here and its
 * physics (the code that reads the field). The row makes it
 *   - a field of scenario_knobs (absent: -1, NAN or NULL; a link scale 1),
 *     checked (its range or names) and applied by scenario_apply,
 *   - a field of its target (WORKLOAD: scenario_workload, where models/
 *     read it as the scenario gives it; COST, TOP, LINKS: the scenario),
 *   - a key of the scenario file read at FILE:LINE with its line kept in
 *     scenario.line[] (WORKLOAD, COST, TOP: of the workload, cost or top
 *     object), exported (scenarios --export, --show) and hashed
 *     (scenario_hash),
 *   - a command-line option of the shared workload options (--OPTION ARG,
 *     its help), a sweep key (and so a measurements CSV column), and a
 *     field of every output's "workload" JSON (WORKLOAD rows),
 * each with the one range or list of names below, so that every front door
 * refuses a value with the same words. A row is
 *   X(a, field, KIND, TARGET, SWEEP, designated initialisers...)
 * with a what the user of the map passes through; KIND one of
 *   INT  an integer in [lo, hi]        REAL  a number in [lo, hi] ((lo,
 *   NAME one of names (NULL: any       hi] when .open)
 *        name, which models/ checks)   BITS  a width, one of names
 *   BOOL true or false
 * TARGET what the value sets: WORKLOAD (scenario_workload.field), COST
 * (scenario.field, the "cost" object), TOP (scenario.field, the top
 * level), SITES (every site's scenario_site.field: the site reader reads
 * the file's key), LINKS (every link times the value: a what-if, no file
 * key) or TRANSPORT (the run's transport options, read by the front ends
 * and the sweep: no scenario field); SWEEP: KEY (always in a sweep point's
 * key: the keys stored rows have) or GIVEN (only when given, so rows
 * stored before the key keep their keys). A new row is GIVEN, hashed
 * KEYED. The initialisers are workload_row's fields below, expanded in
 * workload.c alone (the table), where traces/scenario.h's limits are
 * known. */
#define WORKLOAD_MAP(X, a)                                                   \
  X(a, seed, INT, TOP, KEY, .key = "seed", .option = "seed", .arg = "S",     \
    .sweep = "seed", .alias = "seeds", .lo = 0, .hi = SCENARIO_MAX_SEED,     \
    .def = 1, .hash = WORKLOAD_HASH_ELSEWHERE,                               \
    .help = "seed of every random choice")                                   \
  X(a, model, NAME, WORKLOAD, GIVEN, .key = "model", .option = "model",      \
    .arg = "NAME", .sweep = "model", .required = true, .line_object = true,  \
    .hash = WORKLOAD_HASH_NAME,                                              \
    .help = "model (geodes models), or hf:PATH, a Hugging\n"                  \
            "Face config.json; its depth unless --layers")                   \
  X(a, layers, INT, WORKLOAD, KEY, .key = "layers", .option = "layers",      \
    .arg = "N", .sweep = "layers", .lo = 1, .hi = SCENARIO_MAX_LAYERS,       \
    .def = 0 /* the model's depth */, .line_object = true,                   \
    .hash = WORKLOAD_HASH_INT, .help = "transformer layers")                 \
  X(a, batch, INT, WORKLOAD, KEY, .key = "batch", .option = "batch",         \
    .arg = "B", .sweep = "batch", .lo = 1, .hi = SCENARIO_KNOB_MAX_BATCH,    \
    .required = true, .line_object = true, .hash = WORKLOAD_HASH_INT,        \
    .help = "global batch, sequences")                                       \
  X(a, micro_batch, INT, WORKLOAD, KEY, .key = "micro_batch",                \
    .option = "micro-batch", .arg = "m", .sweep = "micro_batch", .lo = 1,    \
    .hi = SCENARIO_KNOB_MAX_MICRO_BATCH, .required = true,                   \
    .hash = WORKLOAD_HASH_INT, .help = "micro-batch size, sequences")        \
  X(a, stages, INT, WORKLOAD, GIVEN, .key = "stages", .option = "stages",    \
    .arg = "N", .sweep = "stages", .lo = 1, .hi = SCENARIO_MAX_LAYERS,       \
    .required = true, .hash = WORKLOAD_HASH_INT,                             \
    .help = "pipeline stages D_pp (D_pp x D_dp = the\n"                      \
            "devices; alone: D_dp = the devices / N)")                       \
  X(a, replicas, INT, WORKLOAD, GIVEN, .key = "replicas",                    \
    .option = "replicas", .arg = "R", .sweep = "replicas", .lo = 1,          \
    .hi = INT_MAX, .required = true, .hash = WORKLOAD_HASH_INT,              \
    .help = "data-parallel replicas D_dp (alone: D_pp =\n"                   \
            "the devices / R)")                                              \
  X(a, micro_batches_per_pass, INT, WORKLOAD, KEY,                           \
    .key = "micro_batches_per_pass", .option = "micro-batches-per-pass",     \
    .arg = "K", .sweep = "micro_batches_per_pass", .lo = 0,                  \
    .hi = SCENARIO_KNOB_MAX_MBPP, .def = 0, .hash = WORKLOAD_HASH_INT,       \
    .help = "micro-batches per GPipe pass (0: B / (D_dp\n"                   \
            "m), no accumulation)")                                          \
  X(a, schedule, NAME, WORKLOAD, KEY, .key = "schedule",                     \
    .option = "schedule", .sweep = "schedule", .names = workload_schedules,  \
    .hash = WORKLOAD_HASH_NAME, .help = "pipeline schedule")                 \
  X(a, dp_algo, NAME, WORKLOAD, KEY, .key = "dp_algo", .option = "dp-algo",  \
    .sweep = "dp_algo", .names = workload_dp_algos,                          \
    .hash = WORKLOAD_HASH_NAME,                                              \
    .help = "\ndata-parallel gradient synchronisation")                      \
  X(a, recompute, BOOL, WORKLOAD, GIVEN, .key = "recompute",                 \
    .option = "recompute", .sweep = "recompute", .def = 1,                   \
    .hash = WORKLOAD_HASH_INT, .help = "activation recomputation (true)")    \
  X(a, bandwidth_scale, REAL, LINKS, KEY, .option = "bandwidth-scale",       \
    .arg = "X", .sweep = "bandwidth_scale", .lo = 0, .open = true,           \
    .hi = SCENARIO_KNOB_MAX_SCALE, .def = 1, .hash = WORKLOAD_HASH_ELSEWHERE, \
    .help = "what-if: every link's bandwidth times X\n"                      \
            "(not the NICs; the sweep key bandwidth_scale)")                 \
  X(a, latency_scale, REAL, LINKS, KEY, .option = "latency-scale",           \
    .arg = "X", .sweep = "latency_scale", .lo = 0, .open = true,             \
    .hi = SCENARIO_KNOB_MAX_SCALE, .def = 1, .hash = WORKLOAD_HASH_ELSEWHERE, \
    .help = "what-if: every link's latency times X\n"                        \
            "(the sweep key latency_scale)")                                 \
  X(a, window_bytes, INT, TRANSPORT, KEY, .option = "window-bytes",          \
    .arg = "W", .sweep = "window_bytes", .lo = SCENARIO_KNOB_MIN_WINDOW,     \
    .hi = SCENARIO_KNOB_MAX_WINDOW, .def = -1 /* each connection's own */,   \
    .hash = WORKLOAD_HASH_NONE,                                              \
    .help = "what-if: the TCP window of every socket\n"                      \
            "(tcp; default: each connection's own, from\n"                   \
            "its link's window_bytes or flow_gbps, else\n"                   \
            "its sites' tcp_window_bytes)")                                  \
  X(a, activation_gb, REAL, COST, KEY, .key = "activation_gb",               \
    .option = "activation-gb", .arg = "X", .sweep = "activation_gb",         \
    .lo = 0, .open = true, .hi = SCENARIO_KNOB_MAX_GB,                       \
    .def = NAN /* the workload's */, .hash = WORKLOAD_HASH_REAL,             \
    .help = "cost model: activation volume c_pp, GB")                        \
  X(a, gradient_gb, REAL, COST, KEY, .key = "gradient_gb",                   \
    .option = "gradient-gb", .arg = "Y", .sweep = "gradient_gb", .lo = 0,    \
    .open = true, .hi = SCENARIO_KNOB_MAX_GB,                                \
    .def = NAN /* the workload's */, .hash = WORKLOAD_HASH_REAL,             \
    .help = "cost model: gradient volume c_dp, GB")                          \
  X(a, gpu, NAME, SITES, KEY, .key = "gpu", .option = "gpu", .arg = "NAME",  \
    .sweep = "gpu", .alias = "gpus", .hash = WORKLOAD_HASH_ELSEWHERE,        \
    .help = "GPU type of every device")                                      \
  X(a, nccl_sockets, INT, SITES, KEY, .key = "nccl_sockets",                 \
    .option = "sockets", .arg = "N", .sweep = "sockets", .lo = 1,            \
    .hi = SCENARIO_SOCKETS_MAX, .hash = WORKLOAD_HASH_ELSEWHERE,             \
    .help = "TCP sockets per NCCL connection, 1..64\n"                       \
            "(every site's nccl_sockets)")                                   \
  X(a, runtime, NAME, WORKLOAD, KEY, .key = "runtime", .option = "runtime",  \
    .sweep = "runtime", .names = workload_runtimes,                          \
    .hash = WORKLOAD_HASH_NAME,                                              \
    .help = "what runs the schedule (models/runtime.c):\n"                   \
            "modern (GPU AdamW, no barrier per pass), dtfm\n"                \
            "(host SGD, barriers) or megatron (1F1B,\n"                      \
            "blocking point-to-point calls, GPU Adam)")                      \
  X(a, inner_steps, INT, WORKLOAD, GIVEN, .key = "inner_steps",              \
    .option = "inner-steps", .arg = "H", .sweep = "inner_steps", .lo = 1,    \
    .hi = INT_MAX, .def = WORKLOAD_DEFAULT_INNER_STEPS,                      \
    .hash = WORKLOAD_HASH_INT,                                               \
    .help = "diloco: inner steps per outer step (100)")                      \
  X(a, fragments, INT, WORKLOAD, GIVEN, .key = "fragments",                  \
    .option = "fragments", .arg = "F", .sweep = "fragments", .lo = 1,        \
    .hi = INT_MAX, .def = 1, .hash = WORKLOAD_HASH_INT,                      \
    .help = "streaming-diloco: fragments, dividing the\n"                    \
            "layers and H (1)")                                              \
  X(a, overlap_steps, INT, WORKLOAD, GIVEN, .key = "overlap_steps",          \
    .option = "overlap-steps", .arg = "T", .sweep = "overlap_steps",         \
    .lo = 0, .hi = INT_MAX, .def = 0, .hash = WORKLOAD_HASH_INT,             \
    .help = "streaming-diloco: inner steps an exchange\n"                    \
            "overlaps, below H / F (0)")                                     \
  X(a, exchange_levels, INT, WORKLOAD, GIVEN, .key = "exchange_levels",      \
    .option = "exchange-levels", .arg = "N", .sweep = "exchange_levels",     \
    .lo = 1, .hi = 2, .def = 1, .hash = WORKLOAD_HASH_IF_SET,                \
    .help = "diloco: levels of the exchange's all-reduce:\n"                 \
            "1 one ring, 2 hier-ring (in each site, then\n"                  \
            "across the sites) (1)")                                         \
  X(a, grad_bits, BITS, WORKLOAD, GIVEN, .key = "grad_bits",                 \
    .option = "grad-bits", .sweep = "grad_bits",                             \
    .names = WORKLOAD_LIST("16", "8", "4"), .def = 16,                       \
    .hash = WORKLOAD_HASH_INT,                                               \
    .help = "width of the synchronised values (16)")                         \
  X(a, activation_bits, BITS, WORKLOAD, GIVEN, .key = "activation_bits",     \
    .option = "activation-bits", .sweep = "activation_bits",                 \
    .names = WORKLOAD_LIST("16", "8", "4", "2"), .def = 16,                  \
    .hash = WORKLOAD_HASH_INT,                                               \
    .help = "\nwidth of the pipeline's activations and\n"                    \
            "their gradients, as AC-SGD (16)")                               \
  X(a, matchmaking_s, REAL, WORKLOAD, GIVEN, .key = "matchmaking_s",         \
    .option = "matchmaking-s", .arg = "S", .sweep = "matchmaking_s",         \
    .lo = 0, .hi = WORKLOAD_MAX_MATCHMAKING_S,                               \
    .def = WORKLOAD_DEFAULT_MATCHMAKING_S, .hash = WORKLOAD_HASH_KEYED,      \
    .help = "hivemind: seconds a peer looks for its\n"                       \
            "group before each averaging round (15)")                        \
  X(a, delay_averaging, BOOL, WORKLOAD, GIVEN, .key = "delay_averaging",     \
    .option = "delay-averaging", .sweep = "delay_averaging", .def = 0,      \
    .hash = WORKLOAD_HASH_KEYED,                                             \
    .help = "hivemind: average and step in the\n"                            \
            "background during the next step (false)")                       \
  X(a, zero, INT, WORKLOAD, GIVEN, .key = "zero", .option = "zero",          \
    .arg = "N", .sweep = "zero", .lo = 0, .hi = 2, .def = 0,                 \
    .hash = WORKLOAD_HASH_KEYED,                                             \
    .help = "ZeRO stage of a GPU optimizer (modern,\n"                       \
            "megatron): 1 shards its state over the\n"                       \
            "replicas, 2 the gradients too (0)")

/* The rows' indices: WORKLOAD_seed, WORKLOAD_model, ... */
#define WORKLOAD_ENUM_(a, f, kind, target, sweep, ...) WORKLOAD_##f,
typedef enum workload_field {
  WORKLOAD_MAP(WORKLOAD_ENUM_, ) WORKLOAD_NFIELDS
} workload_field;
#undef WORKLOAD_ENUM_

typedef enum workload_kind {
  WORKLOAD_INT, WORKLOAD_REAL, WORKLOAD_NAME, WORKLOAD_BITS, WORKLOAD_BOOL
} workload_kind;

typedef enum workload_target {
  WORKLOAD_IN_WORKLOAD, WORKLOAD_IN_COST, WORKLOAD_IN_TOP,
  WORKLOAD_IN_SITES, WORKLOAD_IN_LINKS, WORKLOAD_IN_TRANSPORT
} workload_target;

/* How scenario_hash takes a row, in passes of this order (stored sweep
 * rows are identified by the hash, so the passes keep the order and
 * encoding of the rows that were hashed before the map): INT (each row's
 * integer), IF_SET (the integer when not its default), NAME (the name),
 * REAL (the double), then the layer split and KEYED (the key and the
 * value when not its default: what a new row takes, so scenarios that
 * leave it at its default keep their hashes); ELSEWHERE: the part of the
 * scenario it sets is hashed (the seed, the sites, the links); NONE: not
 * the scenario's (the transport: a sweep point's key holds it). */
typedef enum workload_hash {
  WORKLOAD_HASH_INT, WORKLOAD_HASH_IF_SET, WORKLOAD_HASH_NAME,
  WORKLOAD_HASH_REAL, WORKLOAD_HASH_KEYED, WORKLOAD_HASH_ELSEWHERE,
  WORKLOAD_HASH_NONE
} workload_hash;

/* A row of WORKLOAD_MAP (the table workload_rows). */
typedef struct workload_row {
  const char *field;        /* the member's name, "micro_batch" */
  workload_kind kind;
  workload_target target;
  bool given_only;          /* SWEEP GIVEN */
  size_t at;                /* offsetof the value in scenario (WORKLOAD,
                               COST, TOP, LINKS) or scenario_site (SITES) */
  size_t knob_at;           /* offsetof the knob in scenario_knobs */
  const char *key;          /* the file's key in the target's object
                               (SITES: a site's); NULL: none */
  const char *option, *arg; /* --option ARG (arg NULL: the names) */
  const char *sweep, *alias; /* the sweep key and its former name (NULL) */
  double lo, hi;            /* INT, REAL: the range, inclusive */
  bool open;                /* REAL: lo itself excluded */
  const char *const *names; /* NAME, BITS: the values (NAME NULL: any) */
  double def;               /* the value a file that leaves the key out
                               gets (NAME: names[0]); one outside [lo, hi]
                               (or NAN) means none: such a key is exported
                               only when set */
  bool required;            /* a file must give the key */
  bool line_object;         /* the key's line when absent is its
                               object's, not 0 (a later message cites it) */
  workload_hash hash;
  const char *help;         /* --help's lines */
} workload_row;

extern const workload_row workload_rows[WORKLOAD_NFIELDS];

/* What row r takes, as every front door's message says it, into buf:
 * "[1, 100000]", "(0, 1e+06]", "gpipe or 1f1b", "16, 8 or 4", "true or
 * false"; "a name" for a NAME row of any name. */
void workload_range_text(const workload_row *r, char *buf, size_t size);

/* Whether the number x is within r's range (INT: an integer in [lo, hi];
 * REAL: finite, in [lo, hi] or (lo, hi]; BITS: one of the widths; BOOL: 0
 * or 1). NAME rows: false. */
bool workload_number_ok(const workload_row *r, double x);

/* Whether name is one of r's names (any non-empty name when r has none). */
bool workload_name_ok(const workload_row *r, const char *name);

/* How messages name row r: "workload.batch", "cost.activation_gb",
 * "seed", or for a site's row or one without a file key its sweep key
 * ("sockets", "bandwidth_scale"). */
void workload_path(const workload_row *r, char *buf, size_t size);

#endif
