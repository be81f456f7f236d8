/* sweep_parts: the parsed sweep shared by its two files, sweep.c (the
 * file, its points and keys) and sweep_resolve.c (the checks made before
 * the first point). Not for other modules.
 * Invariant: as sweep.c states: every axis holds at least one value (or is
 * absent, with one implicit default), distinct and valid.
 * circle: internal header of the sweep's two files: the parsed sweep holds
 * sweep.h's types, so it includes sweep.h and sweep.c includes it. */
#ifndef ANALYSIS_SWEEP_PARTS_H
#define ANALYSIS_SWEEP_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/sweep.h"
#include "traces/workload.h"

typedef enum { AXIS_NAME, AXIS_INT, AXIS_REAL, AXIS_BOOL } axis_kind;

/* The keys of a sweep file, in sweep_spec's order: the enumeration order
 * (the first varies slowest) and the order of the point key. The knobs,
 * rows of traces/workload.h's WORKLOAD_MAP, are keys of their rows' sweep
 * names: those always in a point's key (SWEEP KEY) after the sweep's own
 * first three, those only when given (GIVEN) after a training run's keys,
 * each group in the map's order (K_seed, K_layers, ...). */
#define K_IN_KEY_KEY(f) K_##f,
#define K_IN_KEY_GIVEN(f)
#define K_GIVEN_KEY(f)
#define K_GIVEN_GIVEN(f) K_##f,
#define K_IN_KEY_(a, f, kind, target, sweep, ...) K_IN_KEY_##sweep(f)
#define K_GIVEN_(a, f, kind, target, sweep, ...) K_GIVEN_##sweep(f)
enum {
  K_SCENARIOS, K_METHODS, K_NETWORKS,
  WORKLOAD_MAP(K_IN_KEY_, )
  K_ITERATIONS, K_FAULTS, K_RECOVERY, K_CKPT,
  WORKLOAD_MAP(K_GIVEN_, )
  K_COUNT
};

/* A key's spec (sweep.c builds them and says how to add one). */
struct axis_spec {
  const char *key;
  const char *alias;        /* its former name, still accepted (NULL: none):
                               the plural list names before the keys took
                               the results columns' names */
  const char *in_key;       /* its name in the point key (NULL: key) */
  axis_kind kind;
  size_t at;                /* offsetof its field in sweep_point */
  const char *(*absent_name)(void); /* AXIS_NAME: the value when the key
                                       is absent (NULL: NULL) */
  double absent;            /* AXIS_REAL: the value when absent */
  bool given_only;          /* in the point key only when given */
  const char *const *names; /* AXIS_NAME: the allowed values, NULL = any */
  const char *(*canon)(const char *); /* AXIS_NAME: the canonical spelling
                                         of a value, NULL if unknown */
  double lo, hi;            /* AXIS_INT / AXIS_REAL: inclusive range */
  bool open_lo;             /* AXIS_REAL: lo itself excluded */
  const workload_row *row;  /* a knob's row (its range and names), or NULL */
};

/* Key k's spec. */
const struct axis_spec *sweep_spec(int k);

typedef struct axis {
  size_t n;        /* 0: absent (one implicit "default" value) */
  char **names;    /* AXIS_NAME */
  double *values;  /* AXIS_INT (exact integers) and AXIS_REAL */
  int line;        /* line of the key in the file, 0 when absent */
  const char *key; /* the key as the file spells it (the spec's key or
                      alias), for messages; NULL when absent */
} axis;

struct sweep {
  char *name;
  axis axes[K_COUNT];
  size_t count;
  uint64_t *prices_hash;   /* per scenario: scenario_prices_hash */
  uint64_t *scenario_hash; /* per scenario (sweep_scenarios order); NULL
                              until sweep_resolve */
  uint64_t *faults_hash;   /* [scenario * faults + fault]: fault_hash of
                              each fault file read against each scenario */
  uint64_t data_hash;      /* builtin_hash, by sweep_resolve */
  const char *cost_cmd;    /* borrowed (sweep_set_cost_cmd), or NULL */
  double cost_timeout_s;
};


/* Key k as s's file spells it (its alias when the file used that), for
 * messages. */
const char *sweep_axis_key(const sweep *s, int k);

/* Value j of key k's axis into p (sweep.c's put_value). */
void sweep_axis_put(const sweep *s, int k, size_t j, sweep_point *p);

/* A point of s with every key absent (its defaults). */
void sweep_point_absent(const sweep *s, sweep_point *p);

/* The values of key k's axis (1 when absent: its default). */
size_t sweep_axis_len(const sweep *s, int k);

#endif
