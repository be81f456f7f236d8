/* alloc_file: an allocation file as every command reads it (simulate,
 * predict, explain, validate, the measurements CSV's alloc column), with
 * what it carries to reproduce the time it was written with: the shape of
 * its pipelines, the layer split, and the workload values of the run that
 * wrote it ("workload": batch, micro-batch, dp algorithm, ... as the
 * scenario file spells them; traces/FORMATS.md). The writer is
 * alloc_file_write (`schedule -o`, any method, --shape auto).
 * Invariant: a file read here applies as knobs of the run (the file's
 * values where the run gives none; a value the run gives otherwise is an
 * error naming both), so reading the file back gives the writer's
 * workload, shape and split, and so its time. */
#ifndef MODELS_ALLOC_FILE_H
#define MODELS_ALLOC_FILE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"
#include "models/alloc.h"
#include "traces/scenario.h"

typedef struct alloc_file {
  char *path;
  alloc *a;                  /* the pipelines, on the scenario's numbers */
  alloc_split split;         /* layers_per_stage (NULL: absent) */
  scenario_knobs k;          /* the "workload" keys as knobs (absent: the
                                knob's absent value) */
  int line[WORKLOAD_NFIELDS]; /* each given key's line; 0: absent */
  char *name[WORKLOAD_NFIELDS]; /* owned copies behind k's names */
  int ndevices;              /* the scenario's */
} alloc_file;

/* Reads path against a scenario of ndevices devices (alloc_parse_some's
 * checks) and its "workload" object: keys of the scenario file's workload
 * (WORKLOAD_MAP rows of target WORKLOAD), each in its row's range or
 * names; stages and replicas are the file's top-level keys. ERR_OK, or e
 * filled ("FILE:LINE: workload.KEY: message") and f empty. */
int alloc_file_read(const char *path, int ndevices, alloc_file *f, err *e);
void alloc_file_free(alloc_file *f); /* a zeroed f is fine */

/* Whether f names fewer devices than its scenario has (the others idle). */
bool alloc_file_some(const alloc_file *f);

/* The run's knobs k with f's joined, before they apply to s: each
 * workload key of f where k gives none, and f's shape (as knobs; for a
 * file of some devices s's stages and replicas become the file's and k's
 * are cleared: the view carries them). A knob k gives with another value
 * than f's is ERR_CONFIG "FILE:LINE: workload.KEY X disagrees with the
 * run's --OPTION Y: drop one of them" (e->field its row). ERR_OK or e;
 * k's names then borrow f's. The split (f->split) is the caller's to join:
 * where the run gives none it is the file's, and a given one must agree
 * with it once the allocation is known. */
int alloc_file_knobs(const alloc_file *f, scenario *s, scenario_knobs *k,
                     err *e);

/* f's split (if any) against the layers of the run k sets on s (its
 * --layers, the model's depth for --model, else the scenario's): ERR_OK,
 * or ERR_CONFIG "FILE:LINE: layers_per_stage: they sum to N, not the
 * run's L layers". */
int alloc_file_check_split(const alloc_file *f, const scenario *s,
                           const scenario_knobs *k, err *e);

/* alloc_file_knobs, alloc_file_check_split, then f's split into k where
 * the run gives none (!split_given): ERR_OK or e. *shaped: f's shape is
 * not s's (some of its devices, or other stages or replicas), so a
 * failure of the run's knobs is the file's to name (alloc_file_blame). */
int alloc_file_join(const alloc_file *f, scenario *s, scenario_knobs *k,
                    bool split_given, bool *shaped, err *e);

/* e (the run's failure rc, f joined) led by f's shape: "FILE: its R
 * pipelines of S stages: MESSAGE", its field kept. */
void alloc_file_blame(const alloc_file *f, int rc, err *e);

/* f's split (if any) against the one the run has for a on s
 * (partition_of: its given split, or the one balanced for a), which the
 * caller names as given ("--layers-per-stage 4,4"): ERR_OK when equal,
 * else ERR_CONFIG "FILE:LINE: layers_per_stage [a, b] disagrees with GIVEN
 * (which gives [c, d] here): drop one of them". */
int alloc_file_split_agrees(const alloc_file *f, const scenario *s,
                            const alloc *a, const char *given, err *e);

/* After the knobs applied: f's allocation on s (a copy, the caller's), or
 * for a file of some devices on *view, the view of s over them (free with
 * scenario_subset_free; NULL for every device). NULL and e filled when the
 * shape is not s's. */
alloc *alloc_file_alloc(const alloc_file *f, const scenario *s,
                        scenario **view, err *e);

/* Writes a (on s's device numbers, or on parent numbers for a view: keep
 * maps view device i to keep[i], NULL: the same) as the file the readers
 * above take back: its shape, its layer split (stages entries), the
 * workload values that reproduce it — every one a knob set on s, and
 * those s (a search's view) has otherwise than parent (NULL: none):
 * batch, micro-batch, dp algorithm, DiLoCo's plan — and its pipelines. */
void alloc_file_write(const alloc *a, const int *keep, const int *layers,
                      const scenario *s, const scenario *parent, FILE *f);

#endif
