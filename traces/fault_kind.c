/* fault_kind: see fault_kind.h. */
#include "traces/fault_kind.h"

#include <string.h>

static const struct {
  fault_target target;
  bool factor;
} kinds[] = {
#define FAULT_ROW(name, text, target, factor) {target, factor},
    FAULT_MAP(FAULT_ROW)
#undef FAULT_ROW
};

static const char *const kind_names[] = {
#define FAULT_NAME(name, text, target, factor) text,
    FAULT_MAP(FAULT_NAME)
#undef FAULT_NAME
    NULL};

const char *fault_kind_name(fault_kind k) { return kind_names[k]; }
fault_target fault_kind_target(fault_kind k) { return kinds[k].target; }
bool fault_kind_has_factor(fault_kind k) { return kinds[k].factor; }

int fault_kind_find(const char *s, size_t n) {
  char name[32];
  if (n >= sizeof name) return -1;
  memcpy(name, s, n);
  name[n] = '\0';
  return names_find(kind_names, name);
}

const char *fault_kind_list(void) {
  static char buf[128];
  if (!buf[0]) names_join(kind_names, ", ", " or ", buf, sizeof buf);
  return buf;
}
