/* hash: FNV-1a, 64 bits, over bytes, chained: the one content hash of the
 * project (trace parsing's site table, the content of traces, scenarios and
 * the built-in data that identifies a sweep point's row). Not for
 * adversaries: it tells edited inputs from unchanged ones. */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_INIT 1469598103934665603ULL

/* h extended with the n bytes at p. */
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);

/* h extended with the string s and its terminating NUL (so "ab","c" and
 * "a","bc" differ); NULL hashes as one 0xff byte. */
uint64_t hash_str(uint64_t h, const char *s);

/* h extended with a number's bytes. */
uint64_t hash_u64(uint64_t h, uint64_t v);
uint64_t hash_double(uint64_t h, double v);

/* The slot of the ordered pair (a, b) in an open-addressing table of cap
 * slots (a power of two, at most 2^32): the pair's 64 bits times 2^64 / phi
 * (Fibonacci hashing), whose upper half mixes every bit of both. The one
 * hash of a pair of indices (the net's connections, sim's link classes);
 * callers probe linearly from it. */
static inline size_t hash_pair_slot(int a, int b, size_t cap) {
  uint64_t k = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) *
               0x9E3779B97F4A7C15ULL;
  return (size_t)(k >> 32) & (cap - 1);
}

#endif
