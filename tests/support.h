/* support: helpers shared by the Criterion test binaries — one temporary
 * folder per test process (made on demand or by a suite's .init, removed by
 * its .fini or at exit), paths inside it, running `geodes ARGS` or any shell
 * line with its exit status and its whole stdout and stderr captured, and
 * whole-file reads and writes. Invariant: the folder belongs to the process
 * whose pid made it; a forked child that asks for it gets a fresh one. Every
 * failure to do what a helper promises is a Criterion assertion failure. */
#ifndef GEODES_TESTS_SUPPORT_H
#define GEODES_TESTS_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "models/alloc.h"
#include "models/predict.h"
#include "models/spec.h"
#include "sim/training.h"
#include "traces/fault.h"
#include "traces/scenario.h"

/* What a command wrote, and how it ended. Zero-initialise before first use;
 * each run frees what the previous one captured into the same struct. */
typedef struct support_run {
  int status;     /* exit status; 128 + N when killed by signal N */
  char *out;      /* all of stdout, NUL-terminated (malloc'd) */
  char *err;      /* all of stderr, NUL-terminated (malloc'd) */
  size_t out_len; /* bytes in out, not counting the NUL */
  size_t err_len;
} support_run;

/* Makes this process's temporary folder if it has none yet; usable as a
 * TestSuite .init. The folder is also made on demand by the helpers below. */
void support_dir_make(void);

/* Removes the folder and everything in it (expecting success) and forgets
 * it; usable as a TestSuite .fini. No-op when this process made none. */
void support_dir_remove(void);

/* This process's temporary folder (absolute path), made on first use; the
 * string is valid until support_dir_remove. */
const char *support_dir(void);

/* support_dir()/NAME, NAME formatted printf-style. The string stays valid
 * until support_dir_remove (or exit). */
const char *support_path(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Runs the shell line (printf-style) with /bin/sh in the current directory,
 * capturing its stdout and stderr into r (r may be NULL: both discarded).
 * The line may carry its own redirections and variables. Returns r->status. */
int support_sh(support_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs `GEODES_BIN ARGS` through support_sh: ARGS is printf-style shell
 * text (quote paths; redirections such as 2>&1 apply to geodes). geodes
 * killed by a signal (a crash, a sanitizer abort) fails the test here. */
int support_geodes(support_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs `GEODES_BIN ARGS` (support_geodes' ARGS, printf-style) and returns
 * its stdout read as one JSON document (the caller json_decref's it): the
 * one way a test reads a command's --json. An exit status other than 0, or
 * an output that is not JSON, fails the test naming the command and what
 * it printed. */
json_t *support_geodes_json(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Whether mpirun is on PATH (the MPI tests skip without it). */
bool support_has_mpirun(void);

/* Runs `mpirun -n 2 GEODES_BIN ARGS` (as root too, oversubscribed, without
 * the leak check that MPI's libraries fail) through support_sh: ARGS as
 * support_geodes's. Returns r->status. */
int support_geodes_mpi(support_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs the sweep file sw (with the extra arguments args, "" for none)
 * into the databases one (one process), jobs (--jobs 2) and, where mpirun
 * exists, mpi (two ranks), and expects dump of each (malloc'ed text) to be
 * the same, rows stored. */
void support_sweep_three_ways(const char *sw, const char *args,
                              const char *one, const char *jobs,
                              const char *mpi, char *(*dump)(const char *));

/* Frees what r captured and zeroes it. Safe on a zeroed struct. */
void support_run_clear(support_run *r);

/* The whole file, NUL-terminated (malloc'd; caller frees); its size in *len
 * when len is not NULL. Asserts the file can be read. */
char *support_read_file(const char *path, size_t *len);

/* Writes text to path, replacing it; asserts success. Returns path. */
const char *support_write_file(const char *path, const char *text);

/* The files in this process's temporary folder whose name starts with
 * prefix (a file and the temporaries a writer may have left beside it). */
int support_count_files(const char *prefix);

/* text with the first occurrence of from replaced by to (malloc'ed; the
 * caller frees it); asserts that text holds from. */
char *support_edit(const char *text, const char *from, const char *to);

/* Runs a one-number SQL query (e.g. SELECT count(*)) read-only on the
 * database at path, waiting up to 5 s for locks; -1 when the file cannot be
 * opened or the query gives no row. */
long long support_sql_int(const char *path, const char *query);

/* What the sqlite3 shell prints for query (no single quotes in it) on the
 * database at path, malloc'ed; a failing query fails the test. */
char *support_sql_text(const char *path, const char *query);

/* scenario_load(name) that asserts success (naming the scenario and the
 * error) and that no error was left set. */
scenario *support_scenario(const char *name);

/* A scenario with its workload and its devices' GPUs resolved, as the
 * predictor's tests read it (s owned: scenario_free). */
#define SUPPORT_WORLD_DEVICES 64
typedef struct support_world {
  scenario *s;
  spec_workload w;
  const spec_gpu *gpu[SUPPORT_WORLD_DEVICES];
} support_world;

/* Resolves x->s's workload and GPUs into x, asserting success. */
void support_world_resolve(support_world *x);

/* x from a scenario's JSON text (named "test" in messages), resolved. */
void support_world_text(support_world *x, const char *text);

/* The predictor (*p) and the engine (*sr: free it) on x under allocation
 * a and network model m, both asserted to succeed. */
void support_world_pair(support_world *x, const alloc *a, transport_model m,
                        predict_result *p, sim_result *sr);

/* One site of a built scenario (support_build); a member left 0 or NULL
 * is its default: one device, a V100, no nic_gbps key, no other key. */
typedef struct support_site {
  const char *name;  /* NULL: the spec's names[i], else "s<i>" */
  int devices;       /* 0: 1 */
  const char *gpu;   /* NULL: "V100" */
  double nic_gbps;   /* 0: not stated */
  const char *keys;  /* more of the site's members (", \"x\": 1"), or NULL */
} support_site;

/* A scenario as a test states it, by designated initialisers: the sites
 * (nsites alike of `site`, named by names or s0, s1, ...; or sites[i] each
 * its own), the network's and the workload's members as JSON text.
 * Members left 0 or NULL take the defaults below. */
typedef struct support_spec {
  const char *name;            /* NULL: "t" */
  int nsites;
  support_site site;           /* every site, when sites is NULL */
  const char *const *names;    /* [nsites] their names, or NULL */
  const support_site *sites;   /* [nsites], or NULL */
  const char *network;         /* NULL: "\"latency_ms\": 10,
                                  \"bandwidth_gbps\": 1" */
  const char *workload;        /* the workload object's members */
  const char *file;            /* written to support_path(file) and loaded
                                  from it (a trace beside it); NULL: parsed
                                  in memory as "NAME.json" */
} support_spec;

/* The scenario spec describes, read as a file would be; a scenario it does
 * not make fails the test with the loader's message. The text holds one
 * site a line from line 2 (a message's FILE:LINE names its site). */
scenario *support_build(const support_spec *spec);

/* spec's text written to support_path(spec->file), for a command to read:
 * its path (support_path's). */
const char *support_build_file(const support_spec *spec);

/* A fault trace of the CSV rows below FAULT_HEADER, read against s;
 * asserts that it parses. The caller frees it (fault_trace_free). */
fault_trace *support_faults(const scenario *s, const char *rows);

/* sim_training_opts_default under network model m, n iterations. */
sim_training_opts support_training_opts(transport_model m, int n);

/* sim_training_run that asserts success, naming the error. */
void support_training_run(const scenario *s, const alloc *a,
                          const sim_training_opts *o, sim_training_result *r);

/* Gives every column of DB_RESULT_MAP in r (initialised) a value of its
 * own: column k gets 1000 + k (integers), k + 0.25 (reals) or "vK"
 * (strings: REF ones in static storage, alloc malloc'ed), so a swap of
 * any two columns anywhere shows. */
struct db_result;
void support_result_distinct(struct db_result *r);

/* Whether column `col` of a and b (DB_RESULT_MAP's column name) holds the
 * same value; NANs and NULL strings equal. Returns false for an unknown
 * column. */
bool support_result_same(const struct db_result *a,
                         const struct db_result *b, const char *col);

/* The scenario JSON of three sites A, B, C of one V100 each (NICs of 100
 * Gbit/s), 10 ms and 1 Gbit/s every way but B -> A at 0.1 Gbit/s (a trace
 * written into the test's folder), one stage by three replicas; workload
 * holds the workload's keys beyond the model, stages and replicas. For the
 * reduce order on an asymmetric network. Static storage. */
const char *support_three_asymmetric(const char *workload);

/* Every column of DB_RESULT_MAP of every row of the store at path, as
 * sqlite3's text output ordered by point_key (malloc'ed): two stores that
 * hold the same rows field by field print the same. */
char *support_dump_results(const char *path);

/* NCCL's ring all-reduce by hand, from src/device/all_reduce.h and
 * src/include/collectives.h, not from models/transport.c: 2 channels, a
 * chunk of 4 steps of 512 KiB (2 MiB) per channel, slices of 2 steps;
 * loops = ceil(S / (2 n 2 MiB)) (at most 128), slices = 2 or 1 when a
 * channel's chunk fits one 1 MiB slice. *piece gets S / (n loops slices),
 * returns the messages per member, K = 2 (n - 1) loops slices. */
int support_ring_plan(double S, int n, int *loops, int *slices, double *piece);

/* The message that position k of a member waits for at its predecessor,
 * or -1: the same slice of the step before; a later loop's first message
 * waits for the loop before's last (its final receive). */
int support_ring_wait(int n, int loops, int slices, int k);

/* The all-reduce alone on a uniform network (one-way latency a seconds,
 * rate b bytes/s per connection, every member ready at 0), in closed
 * form: a step's slice 0 every P = max(slices x, x + a) (x = piece / b),
 * a loop (2n - 3) P + slices x + a, the whole loops times that. */
double support_ring_uniform_s(double S, int n, double a, double b);

/* A scenario of ns sites (at most the devices) of random sizes holding
 * stages x replicas V100s, links between every two sites (one value each
 * way when asym, else one for both), latencies of 0, 10, 20 or 30 ms and
 * 1 to 3 Gbit/s (ties), gpt3-xl; drawn from r. Asserts that it parses. */
scenario *support_random_scenario(gsl_rng *r, int ns, int stages,
                                  int replicas, bool asym);

#endif
