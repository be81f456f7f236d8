/* params: the table of named physical parameters and their current values.
 * Invariant: values[p] is params_table[p].def or a value params_set
 * accepted. */
#include "models/params.h"

#include <stdio.h>
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

int params_parse_list(const char *list, int *ids, int *n, err *e) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  *n = 0;
  for (char *save, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    int id = params_find(t);
    if (id < 0) return err_set(e, ERR_MISSING, "unknown parameter '%s'", t);
    for (int k = 0; k < *n; k++)
      if (ids[k] == id)
        return err_set(e, ERR_CONFIG, "'%s' given twice", t);
    ids[(*n)++] = id;
  }
  return *n ? ERR_OK : err_set(e, ERR_CONFIG, "no parameter");
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
