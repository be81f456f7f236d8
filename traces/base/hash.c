/* hash: see hash.h. FNV-1a: h = (h ^ byte) * prime, per byte. */
#include "base/hash.h"

#include <string.h>

uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

uint64_t hash_str(uint64_t h, const char *s) {
  if (!s) return hash_bytes(h, "\xff", 1);
  return hash_bytes(h, s, strlen(s) + 1);
}

uint64_t hash_u64(uint64_t h, uint64_t v) { return hash_bytes(h, &v, sizeof v); }

uint64_t hash_double(uint64_t h, double v) {
  if (v == 0) v = 0; /* -0.0 and 0.0 are one value */
  return hash_bytes(h, &v, sizeof v);
}
