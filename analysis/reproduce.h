/* reproduce: DT-FM's own measured iteration and transfer times (the
 * calibration table traces/data/calibration.csv, from
 * shared/data/dtfm_measured), each simulated beside its measured value
 * under netem and tcp (point-to-point times under tcp only), with the
 * error per row and the median and worst per table (DESIGN.md section 4,
 * "Calibration and held-out truth").
 * Invariant: a row's simulated times are pure functions of the row and the
 * built-in scenarios; nothing here is fitted at run time. */
#ifndef ANALYSIS_REPRODUCE_H
#define ANALYSIS_REPRODUCE_H

#include <stdbool.h>

#include "base/err.h"
#include "base/names.h"
#include "models/transport.h"

/* The tables of the calibration file, in the order reports list them:
 * X(ID, "name"); reproduce_tables is their names, NULL-terminated. */
#define REPRODUCE_TABLE_MAP(X)  \
  X(PIPELINE, "pipeline")       \
  X(HOMOGENEOUS, "homogeneous") \
  X(P2P, "p2p")                 \
  X(GEO, "geo")
#define REPRODUCE_TABLE_ID(id, name) REPRODUCE_##id,
typedef enum reproduce_table {
  REPRODUCE_TABLE_MAP(REPRODUCE_TABLE_ID)
} reproduce_table;
#undef REPRODUCE_TABLE_ID
enum { REPRODUCE_NTABLES = 0 REPRODUCE_TABLE_MAP(NAMES_COUNT_ROW) };
extern const char *const reproduce_tables[REPRODUCE_NTABLES + 1];

/* One measured value and what the simulator makes of it. */
typedef struct reproduce_row {
  int line;              /* in calibration.csv */
  char table[16];        /* one of reproduce_tables */
  char setting[24];      /* network setting or geo case */
  char system[20];       /* "dtfm", "dtfm_random", "megatron", ... */
  double delay_ms;       /* tc delay, NAN when none */
  double bandwidth_gbps; /* tc rate, NAN when none */
  int layers, batch;     /* 0 when not an iteration */
  double bytes;          /* p2p message, 0 otherwise */
  double measured_s;
  double sim_s[TRANSPORT_NMODELS]; /* NAN where not simulated */
} reproduce_row;

typedef struct reproduce_report {
  int n;
  reproduce_row *rows;
  struct reproduce_host *host; /* the tc experiments' host (private) */
} reproduce_report;

/* Progress: done of total simulations; ctx is the caller's. */
typedef void (*reproduce_progress_fn)(void *ctx, int done, int total);

/* Reads the calibration table and simulates every row. NULL and e filled
 * when the table is malformed (a bug in the project) or a simulation
 * fails. The caller frees the report. */
reproduce_report *reproduce_run(reproduce_progress_fn progress, void *ctx,
                                err *e);
void reproduce_report_free(reproduce_report *r);

/* The calibration table read, nothing simulated (every sim_s NAN): the
 * rows `geodes calibrate --data builtin` fits. NULL and e as
 * reproduce_run. */
reproduce_report *reproduce_load(err *e);

/* Row i of r under tcp with the current parameters (models/params.h) into
 * *out, as reproduce_run computes its sim_s[TRANSPORT_TCP]; r unchanged. */
int reproduce_row_tcp(const reproduce_report *r, int i, double *out, err *e);

/* The relative error of row r under model m (NAN when not simulated). */
double reproduce_error(const reproduce_row *r, transport_model m);

/* Median and worst |error| of the rows of table (NULL: all) under model m,
 * and how many rows they cover (0: none simulated). */
int reproduce_summary(const reproduce_report *r, const char *table,
                      transport_model m, double *median, double *worst);

#endif
