/* params: the table of named physical parameters and their current values.
 * Invariant: values[p] is params_table[p].def or a value params_set
 * accepted. */
#include "models/params.h"

#include <string.h>

#include "base/hash.h"

#define PARAMS_ROW(id, nm, d, l, h, s, u, w, doc_) \
  [PARAMS_##id] = {.name = nm, .def = d, .lo = l, .hi = h, .start = s, \
                   .unit = u, .where = w, .doc = doc_},
const params_info params_table[PARAMS_N] = {PARAMS_MAP(PARAMS_ROW)};
#undef PARAMS_ROW

#define PARAMS_DEF(id, nm, d, ...) [PARAMS_##id] = d,
static double values[PARAMS_N] = {PARAMS_MAP(PARAMS_DEF)};
#undef PARAMS_DEF

double params_get(params_id p) { return values[p]; }

bool params_set(params_id p, double v) {
  const params_info *i = &params_table[p];
  bool unset = v == 0 && i->def == 0;
  if (!unset && !(v >= i->lo && v <= i->hi)) return false;
  values[p] = v;
  return true;
}

void params_reset(void) {
  for (int p = 0; p < PARAMS_N; p++) values[p] = params_table[p].def;
}

int params_find(const char *name) {
  for (int p = 0; p < PARAMS_N; p++)
    if (strcmp(params_table[p].name, name) == 0) return p;
  return -1;
}

bool params_all_default(void) {
  for (int p = 0; p < PARAMS_N; p++)
    if (values[p] != params_table[p].def) return false;
  return true;
}

unsigned long long params_hash(void) {
  uint64_t h = 0;
  for (int p = 0; p < PARAMS_N; p++)
    if (values[p] != params_table[p].def)
      h = hash_double(hash_u64(h ? h : 1, (uint64_t)p), values[p]);
  return h;
}
