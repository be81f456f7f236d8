/* fault_kind: the events a fault trace holds — their kinds (one name
 * table), targets and factors, and the plain row — below the CSV reader
 * (fault_csv.c) and the replay (fault.c).
 * Invariant: FAULT_MAP is the one list of event names; a fault_event's
 * target fields and factor follow its kind's row. */
#ifndef TRACES_FAULT_KIND_H
#define TRACES_FAULT_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/names.h"

/* X(NAME, "event", target, has_factor): the one table of event names, what
 * their target is and whether they take a factor. */
#define FAULT_MAP(X)                                       \
  X(DEVICE_DOWN, "device_down", FAULT_TARGET_DEVICE, 0)    \
  X(SITE_DOWN, "site_down", FAULT_TARGET_SITE, 0)          \
  X(LINK_DOWN, "link_down", FAULT_TARGET_LINK, 0)          \
  X(LINK_SLOW, "link_slow", FAULT_TARGET_LINK, 1)          \
  X(DEVICE_SLOW, "device_slow", FAULT_TARGET_DEVICE, 1)

typedef enum fault_kind {
#define FAULT_ENUM(name, text, target, factor) FAULT_##name,
  FAULT_MAP(FAULT_ENUM)
#undef FAULT_ENUM
} fault_kind;
/* Their count, outside the enumeration: a switch over the kinds names every
 * kind and nothing else. */
enum { FAULT_NKINDS = 0 FAULT_MAP(NAMES_COUNT_ROW) };

typedef enum fault_target {
  FAULT_TARGET_DEVICE,  /* a device index of the scenario: "5" */
  FAULT_TARGET_SITE,    /* a site name: "Tokyo" */
  FAULT_TARGET_LINK     /* two site names, both directions: "Tokyo:Seoul" */
} fault_target;

#define FAULT_HEADER "t_s,event,target,duration_s,factor"
#define FAULT_FOREVER INT64_MAX  /* duration inf; also "no end" */
#define FAULT_MAX_EVENTS 10000000 /* rows one fault trace may hold */

/* The event's name ("device_down"), its target kind, whether it takes a
 * factor; fault_kind_find gives the kind named s[0 .. n), or -1. */
const char *fault_kind_name(fault_kind k);
fault_target fault_kind_target(fault_kind k);
bool fault_kind_has_factor(fault_kind k);
int fault_kind_find(const char *s, size_t n);

/* "device_down, site_down, link_down, link_slow or device_slow". */
const char *fault_kind_list(void);

/* One row of the trace (plain data). */
typedef struct fault_event {
  int64_t t_ns;     /* start */
  int64_t dur_ns;   /* > 0; FAULT_FOREVER for inf */
  fault_kind kind;
  int a, b;         /* device: a; site: a; link: sites a, b (either order) */
  double factor;    /* *_slow: the bandwidth or compute-speed multiplier
                       (> 0, finite); 1 for the others */
  int line;         /* its line in the file */
} fault_event;

#endif
