/* alloc: which device runs which tasklet — the allocation matrix
 * device[r][s] (row r a pipeline/replica, column s a stage) and the
 * partition form (D_pp unordered groups of D_dp devices), their JSON files
 * (traces/FORMATS.md) and the fixed placements.
 * Invariant: a validated allocation or partition uses every device
 * 0 .. replicas*stages-1 exactly once. Both are plain data: the scheduler
 * and the engine index the arrays directly. */
#ifndef MODELS_ALLOC_H
#define MODELS_ALLOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "base/names.h"

/* device[r * stages + s] runs stage s of replica r. */
typedef struct alloc {
  int replicas;  /* D_dp: rows */
  int stages;    /* D_pp: columns */
  int *device;   /* replicas * stages entries, row-major; owned */
} alloc;

/* Group g is device[g * group_size .. g * group_size + group_size - 1]. */
typedef struct alloc_partition {
  int ngroups;     /* D_pp */
  int group_size;  /* D_dp */
  int *device;     /* ngroups * group_size entries, group-major; owned */
} alloc_partition;

/* New allocation / partition with every entry -1. Never NULL. */
alloc *alloc_new(int replicas, int stages);
void alloc_free(alloc *a);  /* NULL is fine */
/* A copy of a (its own devices). Never NULL. */
alloc *alloc_copy(const alloc *a);
/* Whether a and b have one shape and the same device in every place. */
bool alloc_equal(const alloc *a, const alloc *b);
alloc_partition *alloc_partition_new(int ngroups, int group_size);
void alloc_partition_free(alloc_partition *p);  /* NULL is fine */

/* The device of replica r, stage s. */
static inline int alloc_at(const alloc *a, int r, int s) {
  return a->device[r * a->stages + s];
}

/* Checks that a has `replicas` rows of `stages` devices, and that every
 * device 0 .. ndevices-1 appears exactly once (ndevices must equal
 * replicas * stages). name prefixes the message ("FILE: ..."); ERR_RANGE,
 * ERR_DUPLICATE, ERR_MISSING or ERR_CONFIG. */
int alloc_validate(const alloc *a, int replicas, int stages, int ndevices,
                   const char *name, err *e);
int alloc_partition_validate(const alloc_partition *p, int ngroups,
                             int group_size, int ndevices, const char *name,
                             err *e);

/* Parses {"pipelines": [[d, ...], ...]} from text (len bytes); name is used
 * in "NAME:LINE: message" errors. The shape is taken from the file, then
 * checked against replicas x stages and ndevices as alloc_validate does.
 * NULL and e filled on any problem (not JSON, unknown key, wrong shape, a
 * device reused, omitted or out of range); the caller owns the result. */
alloc *alloc_parse(const char *text, size_t len, const char *name,
                   int replicas, int stages, int ndevices, err *e);
/* alloc_parse on the file at path (ERR_IO if it cannot be read). */
alloc *alloc_read(const char *path, int replicas, int stages, int ndevices,
                  err *e);

/* What an allocation file may carry besides its pipelines, all optional:
 * "stages" and "replicas" (its shape, which must be the scenario's) and
 * "layers_per_stage" (the layer split its time was computed with). */
typedef struct alloc_split {
  int *layers_per_stage;  /* stages entries >= 1, owned; NULL: absent */
  int line;               /* the line of "layers_per_stage" */
} alloc_split;

/* alloc_parse that also reads those keys: the shape keys checked against
 * replicas and stages, the split (stages entries, each >= 1, summing to
 * layers when layers > 0) into *split; "NAME:LINE: key: message" on a
 * mismatch. alloc_parse itself (split NULL) accepts the shape keys and
 * refuses a split, which its callers would not apply. On failure split
 * holds nothing; else the caller frees it with alloc_split_free. */
alloc *alloc_parse_split(const char *text, size_t len, const char *name,
                         int replicas, int stages, int ndevices, int layers,
                         alloc_split *split, err *e);
alloc *alloc_read_split(const char *path, int replicas, int stages,
                        int ndevices, int layers, alloc_split *split, err *e);

/* An allocation file of ndevices's devices whatever its shape: its rows
 * (pipelines) of equal length, each device 0 .. ndevices-1 at most once,
 * every one of them or fewer (the others idle); the shape keys checked
 * against its rows, the split read (summed later, by the run's layers).
 * The allocation's devices are the file's numbers. NULL and e filled as
 * alloc_parse_split fails; split holds nothing then. models/alloc_file.h
 * reads the rest of the file. */
alloc *alloc_parse_some(const char *text, size_t len, const char *name,
                        int ndevices, alloc_split *split, err *e);
void alloc_split_free(alloc_split *split);  /* NULL is fine */

/* The same for partitions: {"groups": [[d, ...], ...]}, ngroups groups of
 * group_size devices. */
alloc_partition *alloc_partition_parse(const char *text, size_t len,
                                       const char *name, int ngroups,
                                       int group_size, int ndevices, err *e);
alloc_partition *alloc_partition_read(const char *path, int ngroups,
                                      int group_size, int ndevices, err *e);

/* a's pipelines as JSON, [[d, ...], ...] (row r is replica r): the one
 * writer every output of an allocation goes through (the files below, the
 * results store's text, the JSON of predict and schedule). The caller owns
 * the new reference. */
json_t *alloc_json(const alloc *a);

/* {"pipelines": [[0, 1], [2, 3]]} on one line, as the results store keeps
 * it; malloc'ed, the caller frees it. */
char *alloc_text(const alloc *a);

/* Writes a as {"pipelines": [[...], ...]} (one row per line) to f. */
void alloc_write(const alloc *a, FILE *f);
void alloc_partition_write(const alloc_partition *p, FILE *f);

/* The partition of a: group s = column s, in row order. Caller owns it. */
alloc_partition *alloc_to_partition(const alloc *a);

/* Fixed placements (DESIGN.md section 9), on replicas*stages devices:
 * dtfm-identity: pipeline r = devices stages*r .. stages*r + stages - 1;
 * megatron-order (formerly megatron): group s = devices replicas*s .. replicas*s + replicas - 1, so
 *   device[r][s] = replicas*s + r;
 * random: one uniform permutation of the devices drawn from a GSL mt19937
 *   seeded with seed (the same seed gives the same allocation). */
alloc *alloc_identity(int replicas, int stages);
alloc *alloc_megatron(int replicas, int stages);
alloc *alloc_random(int replicas, int stages, uint64_t seed);

/* The fixed placements by name, X(ID, "name"): the home of their names,
 * which schedules/schedule.h's method list starts with. */
#define ALLOC_FIXED_MAP(X)           \
  X(DTFM_IDENTITY, "dtfm-identity")  \
  X(MEGATRON, "megatron-order")      \
  X(RANDOM, "random")

/* Former names of fixed placements, still accepted: X("old", "name").
 * "megatron" was Megatron-LM's rank order, a placement; it read as the
 * runtime of the same name (--runtime megatron). */
#define ALLOC_FIXED_ALIAS_MAP(X) X("megatron", "megatron-order")

/* The name of the placement name stands for: its current name when name
 * is a former one (ALLOC_FIXED_ALIAS_MAP), else name itself. */
const char *alloc_fixed_canonical(const char *name);
#define ALLOC_FIXED_ID(id, name) ALLOC_##id,
typedef enum alloc_fixed_id {
  ALLOC_FIXED_MAP(ALLOC_FIXED_ID) /* ALLOC_DTFM_IDENTITY, ... */
} alloc_fixed_id;
#undef ALLOC_FIXED_ID
enum { ALLOC_NFIXED = 0 ALLOC_FIXED_MAP(NAMES_COUNT_ROW) };

/* Their names in map order, NULL-terminated. */
extern const char *const alloc_fixed_names[ALLOC_NFIXED + 1];

/* The fixed placement called name (alloc_fixed_names), or NULL if name is
 * not one of them (e untouched: the caller decides whether the scheduler
 * knows the name). */
alloc *alloc_fixed(const char *name, int replicas, int stages, uint64_t seed);

#endif
