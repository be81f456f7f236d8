/* unused: see unused.h. Each rule asks the resolved workload (a switch
 * over its names, never a comparison), the scenario's own names and, for
 * hier-ring, where each data-parallel group's members sit. */
#include "models/unused.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

static void add(unused_value *out, int *n, int row, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(unused_value *out, int *n, int row, const char *fmt, ...) {
  if (*n >= UNUSED_MAX) return;
  out[*n].row = row;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out[*n].why, UNUSED_WHY_MAX, fmt, ap);
  va_end(ap);
  (*n)++;
}

/* Megatron: the scenario's schedule and dp algorithm when not its own,
 * passes of K micro-batches. */
static void megatron(const scenario *s, unused_value *out, int *n) {
  const scenario_workload *sw = &s->workload;
  int sc = spec_schedule_parse(sw->schedule), al = spec_dp_algo_parse(sw->dp_algo);
  if (sc >= 0) switch ((spec_schedule)sc) {
      case SPEC_GPIPE:
        add(out, n, WORKLOAD_schedule, "runtime megatron runs 1F1B");
        break;
      case SPEC_1F1B: break;
    }
  if (al >= 0) switch ((spec_dp_algo)al) {
      case SPEC_CENTRAL_PS:
      case SPEC_SHARDED_PS:
      case SPEC_HIER_RING:
        add(out, n, WORKLOAD_dp_algo, "runtime megatron all-reduces with "
            "NCCL's ring");
        break;
      case SPEC_RING:
      case SPEC_HIVEMIND: /* refused under megatron (models/spec_workload.c) */
      case SPEC_DILOCO:
      case SPEC_STREAMING_DILOCO: break;
    }
  if (sw->micro_batches_per_pass > 0)
    add(out, n, WORKLOAD_micro_batches_per_pass, "runtime megatron runs a "
        "replica's micro-batches in one 1F1B schedule, without passes");
}

/* hier-ring under a: its groups each in one site (then it is central-ps's
 * reduce and broadcast) or each with one member per site (then the ring
 * across the sites alone). */
static void hier_ring(const scenario *s, const alloc *a, unused_value *out,
                      int *n) {
  bool one_site = true, one_each = true;
  int *count = mem_calloc((size_t)s->nsites, sizeof *count);
  for (int st = 0; st < a->stages; st++) {
    memset(count, 0, (size_t)s->nsites * sizeof *count);
    int sites = 0;
    for (int r = 0; r < a->replicas; r++) {
      int k = s->device_site[alloc_at(a, r, st)];
      sites += count[k]++ == 0;
      one_each = one_each && count[k] == 1;
    }
    one_site = one_site && sites == 1;
  }
  free(count);
  if (one_site)
    add(out, n, WORKLOAD_dp_algo, "every data-parallel group is inside one "
        "site: hier-ring is central-ps's reduce and broadcast");
  else if (one_each)
    add(out, n, WORKLOAD_dp_algo, "every data-parallel group has one member "
        "per site: hier-ring is the ring across the sites");
}

/* The dp algorithm's own rules: nothing to synchronise, or hier-ring's
 * levels collapsing under a. */
static void dp(const scenario *s, const spec_workload *w, const alloc *a,
               unused_value *out, int *n) {
  if (spec_is_diloco(w)) return;
  if (w->replicas == 1) {
    add(out, n, WORKLOAD_dp_algo, "one replica: no data-parallel sync");
    if (s->workload.grad_bits != 16)
      add(out, n, WORKLOAD_grad_bits, "one replica: no gradients exchanged");
    if (w->given.zero > 0)
      add(out, n, WORKLOAD_zero, "one replica: nothing to shard over");
    return;
  }
  switch (w->dp_algo) {
    case SPEC_HIER_RING:
      if (a) hier_ring(s, a, out, n);
      break;
    case SPEC_CENTRAL_PS:
    case SPEC_RING:
    case SPEC_SHARDED_PS:
    case SPEC_HIVEMIND:
    case SPEC_DILOCO:
    case SPEC_STREAMING_DILOCO: break;
  }
}

int unused_values(const scenario *s, const spec_workload *w, const alloc *a,
                  const transport_options *t, unused_value *out) {
  int n = 0;
  switch (w->runtime) {
    case SPEC_RUNTIME_MEGATRON: megatron(s, out, &n); break;
    case SPEC_RUNTIME_MODERN:
    case SPEC_RUNTIME_DTFM: break;
  }
  dp(s, w, a, out, &n);
  if (w->stages == 1 && s->workload.activation_bits != 16)
    add(out, &n, WORKLOAD_activation_bits, "one stage: no activations sent");
  (void)t; /* a window sizes the send buffers under every model */
  return n;
}
