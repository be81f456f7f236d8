/* cost_memo: a scratch's memos of values that depend on the groups' sites
 * alone (cost.c: a group pair's bottleneck value, a partition's TSP path).
 * Invariant: every entry holds the exact value computed for its key under
 * the context whose serial the memo carries; a memo for another context is
 * emptied before use. Why the values are exact: without device-pair
 * overrides a weight depends on its sites only, so a group pair's matrix
 * is fixed by the two groups' sorted sites up to a permutation of rows and
 * columns, and the bottleneck value (one matrix entry, the least that
 * holds a perfect matching) does not depend on that order; the partition's
 * group-pair matrix is then fixed by its groups' signatures up to a
 * relabelling of the groups, and Held–Karp's value (the least, over paths,
 * of the path's left-to-right sum: rounding is monotone) does not depend
 * on the labels. A full memo is emptied, never grown: its memory is fixed
 * and lookups stay O(key). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "models/cost_parts.h"

/* An entry: [0] 1 when used, [1] the value's bits, [2 ..] the key. */
static uint64_t *entry(const cost_memo *m, size_t i) {
  return m->slots + i * (size_t)(m->words + 2);
}

static size_t memo_hash(const cost_memo *m, const uint64_t *key) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < m->words; i++) {
    h ^= key[i];
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  return (size_t)h & (m->cap - 1);
}

void cost_memo_init(cost_memo *m, int words, size_t cap) {
  *m = (cost_memo){.words = words, .cap = cap};
}

void cost_memo_free(cost_memo *m) { free(m->slots); }

bool cost_memo_get(cost_memo *m, uint64_t serial, const uint64_t *key,
                   double *v, size_t *at) {
  size_t bytes = m->cap * (size_t)(m->words + 2) * sizeof *m->slots;
  if (!m->slots) { /* first use */
    m->slots = mem_calloc(1, bytes);
    m->ctx = serial;
  }
  if (m->ctx != serial || 2 * (m->n + 1) > m->cap) {
    memset(m->slots, 0, bytes);
    m->ctx = serial;
    m->n = 0;
  }
  size_t i = memo_hash(m, key);
  for (;; i = (i + 1) & (m->cap - 1)) {
    uint64_t *e = entry(m, i);
    if (!e[0]) {
      *at = i;
      return false;
    }
    if (memcmp(e + 2, key, (size_t)m->words * sizeof *key) == 0) {
      memcpy(v, &e[1], sizeof *v);
      return true;
    }
  }
}

void cost_memo_put(cost_memo *m, size_t at, const uint64_t *key, double v) {
  uint64_t *e = entry(m, at);
  e[0] = 1;
  memcpy(&e[1], &v, sizeof v);
  memcpy(e + 2, key, (size_t)m->words * sizeof *key);
  m->n++;
}
