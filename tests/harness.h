/* harness: the consistency harness of issue 33 — random valid scenarios,
 * drawn from a seed, and the relations that must hold between geodes's
 * commands on each of them (tests/test_harness.c runs a few hundred,
 * tests/bench_harness.c 10^4).
 *
 * A case (harness_gen.c) is a scenario file of 1 to HX_MAX_SITES sites
 * (GPU types, NICs per device or shared, NCCL's sockets, flow caps, TCP
 * windows, compute efficiencies), a network shaped tc or path with links
 * that carry the path keys (flow_gbps, loss, window_bytes) or a trace CSV
 * that moves, a workload (model, layers, batch, micro-batch, stages x
 * replicas, passes, schedule, runtime, dp algorithm, widths), a layer
 * split (even, balanced, a list), a placement method, a network model and
 * sometimes a subset of the devices that work. Every draw is valid: the
 * generator redraws (from the same seed's stream) what does not load,
 * resolve or fit in memory, so a refusal by a command is a finding.
 *
 * The relations (HX_REL_MAP) run the libraries in this process, or the
 * geodes binary where the relation is about files and options. Each
 * check ends in one outcome: passed, skipped (the relation does not apply;
 * a counted reason), known (a disagreement of a class the harness lists
 * as not fixed here, HX_KNOWN_MAP, with its note) or failed (a defect: a
 * fixed-seed case in tests/test_harness.c reproduces each class found).
 * Invariant: a case and every outcome are a pure function of the seed and
 * the flags; the library never prints (the report is the caller's). */
#ifndef GEODES_TESTS_HARNESS_H
#define GEODES_TESTS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/transport.h"

#define HX_MAX_SITES 4
#define HX_MAX_DEVICES 16
#define HX_MAX_STAGES 8

/* Equal to the bit, as doubles read back from JSON (17 digits). */
#define HX_SAME(a, b) ((a) == (b))

typedef struct hx_site {
  char name[24];
  int devices;
  const char *gpu;
  double nic_gbps;
  bool nic_shared;
  const char *nic;        /* "generic", "aws-ena", "gcp-gvnic"; NULL absent */
  int nccl_sockets;       /* 0: absent */
  double flow_gbps;       /* 0: absent */
  double window_bytes;    /* tcp_window_bytes; 0: absent */
  double efficiency;      /* compute_efficiency; 0: absent */
} hx_site;

/* A directed link between two sites (a site with itself: inside it). */
typedef struct hx_link {
  double latency_ms, bandwidth_gbps;
  double flow_gbps, loss, window_bytes; /* the path keys; 0: absent */
} hx_link;

/* One layer split: the even one, balanced per allocation, or a list. */
enum { HX_SPLIT_EVEN, HX_SPLIT_BALANCED, HX_SPLIT_LIST };

typedef struct hx_case {
  uint64_t seed;
  int nsites, ndevices;
  hx_site site[HX_MAX_SITES];
  const char *shaping;    /* "tc", "path"; NULL: absent (path) */
  hx_link link[HX_MAX_SITES][HX_MAX_SITES];
  /* a trace CSV that moves: at move_s the links from site 0 change by
   * these factors (0: the network is the links, static) */
  double move_s, move_bw, move_lat;
  const char *model;
  int layers, batch, micro_batch, stages, replicas, kpp;
  const char *schedule, *dp_algo, *runtime;
  int grad_bits, activation_bits, inner_steps, fragments;
  bool recompute;
  int split_kind, split[HX_MAX_STAGES];
  const char *method;     /* a placement method of schedule_method_names */
  transport_model net;
  /* the devices that work (nwork < ndevices: the others idle): the first
   * nwork of each site in turn, stages x replicas of them */
  int nwork;
} hx_case;

/* Draws case seed into c: a valid one (see above). attempts: how many draws
 * it took (>= 1), or NULL. */
void hx_case_gen(uint64_t seed, hx_case *c, int *attempts);

/* The case's scenario file as JSON text (malloc'ed), its network inline
 * or, when it moves, as the trace file trace_name (relative to the file's
 * folder; hx_case_trace writes it). With some devices idle (nwork <
 * ndevices) the file's shape is one stage of every device and the batch
 * they divide: the run is the view of the working ones. */
char *hx_case_json(const hx_case *c, const char *trace_name);
/* The trace CSV of a case that moves (malloc'ed), NULL when it does not. */
char *hx_case_trace(const hx_case *c);

/* Writes the case into dir as NAME.json (and NAME.csv when it moves);
 * returns the scenario file's path (malloc'ed), NULL when it cannot. */
char *hx_case_write(const hx_case *c, const char *dir, const char *name);

/* The --layers-per-stage argument of the case's split into buf ("" for the
 * even split). */
void hx_case_split_arg(const hx_case *c, char *buf, size_t size);

/* One line describing the case, for findings ("3 sites, 12 devices, ..."). */
void hx_case_describe(const hx_case *c, char *buf, size_t size);

/* The relations, X(ID, "name", "what must hold"). */
#define HX_REL_MAP(X)                                                       \
  X(PREDICT, "predict~simulate",                                           \
    "predict within the error_bound it states (PREDICT_TOLERANCE where " \
    "it leaves nothing out) of simulate")  \
  X(EXPORT, "export=load",                                                 \
    "scenarios --export then load: the same hash and simulated time")      \
  X(UTIL, "utilisation<=1",                                                 \
    "every device's, link's and NIC's utilisation (explain) <= 100 %")     \
  X(WHATIF, "what-if=file",                                                 \
    "a what-if's run equals the run of the file that states the change")   \
  X(DPALGO, "dp-algo-moves-sync",                                           \
    "another --dp-algo changes the data-parallel sync, or the command "    \
    "refuses it or states why not")                                        \
  X(NETMODEL, "network-model-moves-sync",                                   \
    "another --network-model changes the run, or the output states why "   \
    "not (every transfer ran at its link's rate)")                         \
  X(ALLOC_FILE, "schedule-o-read-back",                                     \
    "the allocation schedule -o wrote (any method, --shape auto) is read "  \
    "by simulate, predict, explain, validate and a measurements CSV "      \
    "without extra flags, and gives the time schedule reported")                         \
  X(OPTION, "option-used-or-refused",                                       \
    "an option the runtime does not use is refused naming it, or changes " \
    "the run")
#define HX_REL_ID_(id, name, what) HX_REL_##id,
typedef enum hx_rel { HX_REL_MAP(HX_REL_ID_) HX_NRELS } hx_rel;
#undef HX_REL_ID_
extern const char *const hx_rel_names[HX_NRELS];
extern const char *const hx_rel_what[HX_NRELS];

/* The disagreements the harness knows of and does not fail on, each with
 * why, X(ID, "name", "note"). */
#define HX_KNOWN_MAP(X)                                                     \
  X(PREDICT_SHARED_NIC, "predictor: shared NIC",                            \
    "a nic_shared site's NIC shared by flows the closed form's max-min "   \
    "leaves apart (a 1F1B pass's two directions: predict's 1f1b-sharing)") \
  X(PREDICT_PATH, "predictor: shared path",                                 \
    "under path shaping the closed form's path shares (hop.c) miss flows " \
    "of other stages and replicas on one path beyond the phase's")         \
  X(PREDICT_OTHER, "predictor: other",                                      \
    "a disagreement beyond the stated bound on a case without a shared NIC "\
    "or path: flow caps, windows, losses, moving traces, Megatron's calls)")\
  X(NETMODEL_OFF_PATH, "network models agree, held off the path",        \
    "ideal and tcp give the same time while some transfers were held back "\
    "under tcp: none of them on the critical path (simulate states what "  \
    "held them; geodes explain shows the path)")                          \
  X(DPALGO_TWO_MEMBERS, "dp algos agree: two members, one bound",         \
    "with two members per group central-ps (NCCL's reduce, then its "     \
    "broadcast) and ring send the gradient once each way over the same "  \
    "two links, so when one link's steady rate (a TCP window, a flow cap) "\
    "bounds both they end together: physics, not an unused value (it "    \
    "holds for this run, not for the values), so nothing states it")       \
  X(WHATIF_SPEED_BALANCED, "what-if: a speed under a balanced split",      \
    "sim_whatif's speeds (sim_options.speedup) do not reach "              \
    "partition_balanced: the split stays balanced for the devices' own "   \
    "speeds, where the file stating the speed (compute_efficiency) "       \
    "rebalances it (branch explain-pred: sim/whatif.c)")
#define HX_KNOWN_ID_(id, name, note) HX_KNOWN_##id,
typedef enum hx_known { HX_KNOWN_MAP(HX_KNOWN_ID_) HX_NKNOWN } hx_known;
#undef HX_KNOWN_ID_
extern const char *const hx_known_names[HX_NKNOWN];
extern const char *const hx_known_notes[HX_NKNOWN];

enum { HX_PASS, HX_SKIP, HX_KNOWN, HX_FAIL };

/* One failed (or known) check: its case's seed, the relation, the class
 * of the failure (a short stable text naming what broke) and a message. */
typedef struct hx_finding {
  uint64_t seed;
  hx_rel rel;
  int outcome;            /* HX_FAIL or HX_KNOWN */
  int known;              /* HX_KNOWN: its class */
  char klass[96];
  char msg[512];
} hx_finding;

#define HX_MAX_FINDINGS 256
#define HX_MAX_CLASSES 64

/* What a run of the harness checked and found. */
typedef struct hx_report {
  long cases, draws;
  long n[HX_NRELS][4];     /* per relation: passed, skipped, known, failed */
  double worst_predict;    /* the largest relative error where it counts */
  /* the distinct failure classes, each with its first seed and count */
  int nclasses;
  struct { hx_rel rel; int outcome; char klass[96]; uint64_t seed;
           long count; char msg[512]; } cls[HX_MAX_CLASSES];
  hx_finding find[HX_MAX_FINDINGS];
  int nfind;               /* kept (the first HX_MAX_FINDINGS) */
  double wall_s;
} hx_report;

/* Which relations a run checks. */
typedef struct hx_opts {
  bool lib;                /* the relations run in this process */
  bool cli;                /* the relations that run the binary */
  const char *bin;         /* the geodes binary (cli) */
  const char *dir;         /* a folder the run may write in (cli, traces) */
  bool shape;              /* cli: also schedule --shape auto's file */
} hx_opts;

void hx_report_init(hx_report *r);

/* r as text on f: the counts per relation, then each failure class with
 * its count, its first seed and its first message. */
void hx_report_write(const hx_report *r, FILE *f);

/* Checks case c under o into r (r->cases counts it). */
void hx_check_case(const hx_case *c, const hx_opts *o, hx_report *r);

/* Records one outcome (the library's; tests may call it too). */
void hx_record(hx_report *r, const hx_case *c, hx_rel rel, int outcome,
               int known, const char *klass, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* The library relations (harness_lib.c) and the binary's (harness_cli.c). */
void hx_check_lib(const hx_case *c, const hx_opts *o, hx_report *r);
void hx_check_cli(const hx_case *c, const hx_opts *o, hx_report *r);

#endif
