/* scenario_types: the plain data of a scenario — its sites, workload,
 * knobs and the limits they share — below the loader (scenario.h) and what
 * reads and writes a row through offsets into it (workload_rows.c's table,
 * scenario_row.c).
 * Invariant: a scenario_workload and a scenario_knobs hold one field per
 * row of WORKLOAD_MAP (traces/workload.h), of the C type of its kind. */
#ifndef TRACES_SCENARIO_TYPES_H
#define TRACES_SCENARIO_TYPES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/names.h"
#include "traces/model.h"
#include "traces/trace.h"
#include "traces/workload.h"

/* A site's NIC as NCCL's socket transport sees it: threads x sockets per
 * thread per connection by the NIC's PCI vendor (ncclNetSocketGetNsockNthread
 * in src/transport/net_socket.cc): AWS ENA (vendor 0x1d0f) 2 x 8, GCP gVNIC
 * (0x1ae0) 4 x 1, any other 0 threads: the data goes on the control socket,
 * one socket. A site's "nic" key, X(ID, "name"); "nccl_sockets" overrides
 * the count. */
#define SCENARIO_NIC_MAP(X) \
  X(GENERIC, "generic")     \
  X(AWS_ENA, "aws-ena")     \
  X(GCP_GVNIC, "gcp-gvnic")
#define SCENARIO_NIC_ID_(id, name) SCENARIO_NIC_##id,
typedef enum scenario_nic { SCENARIO_NIC_MAP(SCENARIO_NIC_ID_) } scenario_nic;
#undef SCENARIO_NIC_ID_
enum { SCENARIO_NNICS = 0 SCENARIO_NIC_MAP(NAMES_COUNT_ROW) };

/* A host's TCP window limit per socket, bytes: the site key
 * "tcp_window_bytes". Its default is Linux's: autotuning grows a socket's
 * receive buffer up to net.ipv4.tcp_rmem's maximum (6 MiB by default, "between
 * 131072 and 6MB, depending on RAM size") and advertises the buffer less
 * its overhead share 1/2^tcp_adv_win_scale (default 1: half), so 3 MiB
 * (the kernel's Documentation/networking/ip-sysctl.rst; Linux 6.6 replaced
 * tcp_adv_win_scale by a per-socket ratio of payload to buffer). Checked
 * on CloudPilot's single-stream iperf3 runs (tests/test_transport.c:
 * rate x RTT is 3.0-3.1 MB on GCP and IBM paths). DT-FM's p3 hosts keep the
 * window fitted on DT-FM's Gloo rows, 1.45 MB (models/transport.h says how),
 * which is also what a site's window was before this key existed: the
 * value scenario_hash leaves out. */
#define SCENARIO_TCP_WINDOW_DEFAULT 3145728.0
#define SCENARIO_TCP_WINDOW_DTFM 1.45e6

/* How a network shapes its flows: X(ID, "name"); the first is what the
 * built-ins reproducing DT-FM's emulation state, the default is path (a
 * scenario that names none means a real network). */
#define SCENARIO_SHAPING_MAP(X)                                            \
  X(TC, "tc")     /* each device's egress shaped per destination class to \
                     the link's rate: DT-FM's tc emulation */              \
  X(PATH, "path") /* a link is the capacity of the path between two      \
                     sites per direction, shared by every flow on it; a    \
                     non-blocking fabric inside a site */
typedef enum scenario_shaping {
#define SCENARIO_SHAPING_ENUM_(id, name) SCENARIO_SHAPING_##id,
  SCENARIO_SHAPING_MAP(SCENARIO_SHAPING_ENUM_)
#undef SCENARIO_SHAPING_ENUM_
} scenario_shaping;
enum { SCENARIO_NSHAPINGS = 0 SCENARIO_SHAPING_MAP(NAMES_COUNT_ROW) };
#define SCENARIO_SHAPING_DEFAULT SCENARIO_SHAPING_PATH

typedef struct scenario_site {
  char *name;
  int first_device;
  int ndevices;
  char *gpu;         /* GPU type name, e.g. "V100" */
  double nic_gbps;   /* NIC capacity, Gbit/s */
  bool nic_shared;   /* true: one NIC of nic_gbps shared by the site's GPUs
                        (an instance: traffic inside the site does not use
                        the NIC); false: one NIC per device */
  scenario_nic nic;  /* "nic": NCCL's socket rule for it (default generic) */
  int nccl_sockets;  /* TCP sockets per NCCL connection to a device here
                        (NCCL's listener decides): "nccl_sockets", else
                        scenario_nic_sockets(nic): 1 .. SCENARIO_SOCKETS_MAX */
  double flow_gbps;  /* the network's cap on one TCP flow from or to this
                        site's devices, Gbit/s; 0: none (AWS: 5) */
  double tcp_window_bytes; /* the hosts' TCP window limit per socket,
                        bytes: "tcp_window_bytes", else
                        SCENARIO_TCP_WINDOW_DEFAULT */
  double gpu_memory_gb; /* each GPU's device memory, decimal GB, in (0,
                        SCENARIO_MAX_GPU_MEMORY_GB]: "gpu_memory_gb", for a
                        variant the GPU table lacks; 0: the GPU type's
                        (models/spec.c) */
  double compute_efficiency; /* a factor in (0, 1] on the GPU type's
                        efficiency (models/spec) for this site's hosts;
                        0: none (1) */
  char *instance;    /* "instance": the cloud instance type (e.g.
                        "p3.2xlarge"), which `faults synth` reads the spot
                        band of; NULL when absent. Not in scenario_hash: no
                        simulated time depends on it */
  int gpu_line;      /* line of its "gpu" (of its "name" when defaulted);
                        0 once a knob set the GPU */
  /* What running here costs and draws (traces/scenario_price.c); like
   * "instance", none of it is in scenario_hash: no simulated time depends
   * on it (scenario_prices_hash holds it). */
  double usd_per_gpu_hour; /* USD per GPU per hour: "usd_per_gpu_hour",
                        else its instance's row of the price table (its
                        spot price with "spot") per GPU; NAN: not priced */
  char *price_from;  /* where that price came from ("usd_per_gpu_hour", or
                        the table's file:line, type, region and date);
                        NULL when not priced */
  bool spot;         /* "spot": the table's spot price */
  double usd_per_gb; /* "usd_per_gb": what a GB leaving the site toward
                        another costs (billed here, the sender); NAN: none */
  double gco2_per_kwh; /* "gco2_per_kwh": the grid's carbon intensity;
                        NAN: not given */
  double board_w, idle_w; /* "board_w", "idle_w": a GPU's power busy and
                        idle, W; NAN: the GPU table's (models/spec.h) */
} scenario_site;

/* NCCL's socket transport opens at most 64 sockets per connection
 * (MAX_SOCKETS in net_socket.cc); models/transport.h uses this bound. */
#define SCENARIO_SOCKETS_MAX 64

/* A site's gpu_memory_gb goes up to 10^4 GB: past any device's memory
 * (a whole 8-GPU node as one device holds 1.1 TB), and a typo's mark. */
#define SCENARIO_MAX_GPU_MEMORY_GB 1e4


typedef struct scenario_override {
  int a, b;  /* device indices (the file names them "Site:index" or by id);
                applies to (a, b) and (b, a) */
  double latency_ms, bandwidth_gbps;
} scenario_override;

/* The C type of a row's value in its target, by kind (workload.c asserts
 * the hand-declared targets agree). */
#define SCENARIO_TYPE_INT int
#define SCENARIO_TYPE_BITS int
#define SCENARIO_TYPE_BOOL bool
#define SCENARIO_TYPE_NAME char *
#define SCENARIO_TYPE_REAL double
/* The rows of target `want` (WORKLOAD or COST) as struct members. */
#define SCENARIO_FIELD_(want, f, kind, target, ...) \
  SCENARIO_##want##_HOLDS_##target(SCENARIO_TYPE_##kind f;)
#define SCENARIO_WORKLOAD_HOLDS_WORKLOAD(member) member
#define SCENARIO_WORKLOAD_HOLDS_COST(member)
#define SCENARIO_WORKLOAD_HOLDS_TOP(member)
#define SCENARIO_WORKLOAD_HOLDS_SITES(member)
#define SCENARIO_WORKLOAD_HOLDS_LINKS(member)
#define SCENARIO_WORKLOAD_HOLDS_TRANSPORT(member)
#define SCENARIO_COST_HOLDS_WORKLOAD(member)
#define SCENARIO_COST_HOLDS_COST(member) member
#define SCENARIO_COST_HOLDS_TOP(member)
#define SCENARIO_COST_HOLDS_SITES(member)
#define SCENARIO_COST_HOLDS_LINKS(member)
#define SCENARIO_COST_HOLDS_TRANSPORT(member)

/* A scenario's workload: WORKLOAD_MAP's rows of target WORKLOAD (names
 * owned: model, schedule, dp_algo, runtime; model and GPU *names*, which
 * models/ resolves), as the file gives them or their defaults, and the
 * layer split, the record's one field outside the map (a list the command
 * line, or an allocation file, gives per run: no file key). */
typedef struct scenario_workload {
  WORKLOAD_MAP(SCENARIO_FIELD_, WORKLOAD)
  int *layers_per_stage;      /* D_pp entries summing to L (owned; a knob's
                                 --layers-per-stage); NULL: the even split */
  bool balanced_layers;       /* layers per stage balanced for each
                                 allocation by its slowest devices
                                 (models/partition.h) */
  model_dims *model_dims;     /* the model's dimensions when workload.model
                                 gave them (an object, or "hf:PATH"; owned,
                                 and model is their name); NULL: model is a
                                 name of models/spec's table */
} scenario_workload;

/* The line of a row's value in the scenario file (scenario.line[row]),
 * for checks made after loading (models/ knows the model names, sim/ the
 * task graph's size): the key's line, or when the file leaves it out its
 * object's (a row's line_object) or 0; SCENARIO_LINE_KNOB once a knob set
 * the value, so that a message names the knob instead of a line that no
 * longer holds it (scenario_where, spec's messages). */
#define SCENARIO_LINE_KNOB (-1)

typedef struct scenario {
  char *name;
  char *file;                /* the file messages cite: the path, or a
                                built-in's name in traces/data */
  int line[WORKLOAD_NFIELDS]; /* each row's line (SCENARIO_LINE_KNOB) */
  char *description;         /* "" when absent */
  char *origin;              /* "built-in" or the path it was read from */
  char *latency_convention;  /* how latency_ms was derived, for `scenarios` */
  uint64_t seed;
  int nsites;
  scenario_site *sites;
  int ndevices;
  int *device_site;          /* device -> site index */
  scenario_shaping shaping;  /* network.shaping (default path) */
  trace *network;            /* owned; per site pair. NULL after
                                scenario_load_brief of a built-in, which
                                nothing but the listing may use */
  bool network_static;       /* trace_is_static(network), known without
                                it after scenario_load_brief */
  bool brief;                /* loaded by scenario_load_brief */
  char *trace_file;          /* the trace file read (its path, or the
                                built-in's name); NULL: the network was
                                given inline */
  int noverrides;
  scenario_override *overrides;
  scenario_workload workload;
  /* the COST rows (cost.activation_gb, cost.gradient_gb), NAN when absent */
  WORKLOAD_MAP(SCENARIO_FIELD_, COST)
  double bandwidth_scale, latency_scale; /* the what-if scales the knobs
                                applied to every link (1: none), so that
                                outputs can say the run was scaled */
  double *usd_per_gb;        /* [nsites x nsites] what a GB from site a to
                                site b costs, billed at a: the link's
                                "usd_per_gb", else a's, else the network's;
                                NAN: not priced; inside a site 0 unless its
                                link states one (scenario_price.c). A
                                subset borrows it */
  double net_usd_per_gb;     /* "network.usd_per_gb"; NAN: none */
  char *prices_file;         /* the price table the instances were looked
                                up in (the built-in's name, or "prices") */
} scenario;

/* Limits shared by the scenario file, the knobs, the command line and the
 * sweep file (the ranges of traces/workload.h's rows), so a value means the
 * same wherever it is given. A seed goes to GSL's mt19937, which keeps 32
 * bits (4294967297 would be seed 1), and the command line has always taken
 * 31; layers beyond 100,000 describe no model and only multiply the
 * engine's work (and a stage holds one layer at least); the batch,
 * micro-batch and K bounds keep the engine's products far from
 * overflowing; a cost size and a link scale go up to 1e6. The per-socket
 * TCP windows a run may set are one TCP segment (models/transport.h's,
 * which asserts it) to 1 TiB. */
#define SCENARIO_MAX_SEED 2147483647L
#define SCENARIO_MAX_LAYERS 100000
#define SCENARIO_KNOB_MAX_BATCH 100000000L
#define SCENARIO_KNOB_MAX_MICRO_BATCH 1000000L
#define SCENARIO_KNOB_MAX_MBPP 10000000L
#define SCENARIO_KNOB_MAX_GB 1e6
#define SCENARIO_KNOB_MAX_SCALE 1e6
#define SCENARIO_KNOB_MIN_WINDOW TRACE_WINDOW_MIN_BYTES
#define SCENARIO_KNOB_MAX_WINDOW TRACE_WINDOW_MAX_BYTES

/* The C type of a knob, by its row's kind. */
#define SCENARIO_KNOB_TYPE_INT long
#define SCENARIO_KNOB_TYPE_BITS long
#define SCENARIO_KNOB_TYPE_BOOL long
#define SCENARIO_KNOB_TYPE_REAL double
#define SCENARIO_KNOB_TYPE_NAME const char *
#define SCENARIO_KNOB_FIELD_(a, f, kind, ...) SCENARIO_KNOB_TYPE_##kind f;

/* Knobs that override a scenario's values after loading: the shared
 * command-line options (DESIGN.md section 9) and a sweep point's keys, one
 * per row of WORKLOAD_MAP (traces/workload.h). Absent knobs are -1
 * (integers, widths, booleans: 0 or 1), NULL (names) or NAN (numbers; a
 * link scale is 1, which changes nothing). Names are borrowed. */
typedef struct scenario_knobs {
  WORKLOAD_MAP(SCENARIO_KNOB_FIELD_, )
  /* Layers per stage: n entries (n = D_pp, each >= 1, summing to the
   * layers; NULL: absent), or balanced per allocation (the list is then
   * NULL). Either replaces the other. */
  const int *layers_per_stage;
  int nlayers_per_stage;
  bool balanced_layers;
} scenario_knobs;

#endif
