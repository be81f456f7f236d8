/* fault: see fault.h. Rows are read by traces/fault_csv.c; each is checked
 * as it comes, so the first error in file order is the one reported. The
 * replay keeps, per device, per site and per site pair that any event
 * touches, the change points of its state (up, speed; bandwidth factor),
 * each point the state from its time on, consecutive points differing; the
 * first point of a target is at t = 0. A device shows its own points and
 * its site's outages.
 *
 * Choices where DESIGN.md is silent:
 * - Overlapping events of one target combine: a device is down while any
 *   outage of it or of its site holds; slowdowns that hold together
 *   multiply (in the fixed order of a product tree over the file's rows,
 *   so the product is reproducible).
 * - duration_s must be > 0 (a zero-length fault changes nothing and is
 *   almost certainly a mistake); "inf" (any case) means for ever.
 * - The factor column must be empty for the *_down events.
 * - A link may join a site with itself ("A:A": the network inside A). */
#include "traces/fault.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/hash.h"
#include "base/mem.h"
#include "base/names.h"
#include "traces/csv.h"
#include "traces/fault_csv.h"

/* ---- the trace ---- */

typedef struct dpoint {  /* a device's state from t on */
  int64_t t;
  bool up;
  double speed;
} dpoint;

typedef struct lpoint {  /* a site pair's bandwidth factor from t on */
  int64_t t;
  double factor;
} lpoint;

struct fault_trace {
  fault_event *ev;
  size_t n;
  csv_comment *comments;
  size_t ncomments;
  int ndevices, nsites;
  int *device_site;    /* [ndevices] */
  size_t *doff;        /* [ndevices + nsites + 1] into dpt: the points of
                          device d, then of site i at ndevices + i (a site's
                          outage is kept once, not once per device) */
  dpoint *dpt;
  uint64_t *lkey;      /* [nl] sorted: a * nsites + b, a <= b */
  size_t nl;
  size_t *loff;        /* [nl + 1] into lpt */
  lpoint *lpt;
  int64_t *changes;    /* every point time > 0, sorted, distinct */
  size_t nchanges;
};

void fault_free(fault_trace *f) {
  if (!f) return;
  free(f->ev);
  csv_comments_free(f->comments, f->ncomments);
  free(f->device_site), free(f->doff), free(f->dpt);
  free(f->lkey), free(f->loff), free(f->lpt);
  free(f->changes);
  free(f);
}

size_t fault_count(const fault_trace *f) { return f->n; }

const fault_event *fault_event_at(const fault_trace *f, size_t i) {
  assert(i < f->n);
  return &f->ev[i];
}

const char *fault_comment(const fault_trace *f, const char *key) {
  for (size_t i = 0; i < f->ncomments; i++)
    if (strcmp(f->comments[i].key, key) == 0) return f->comments[i].value;
  return NULL;
}

uint64_t fault_hash(const fault_trace *f) {
  uint64_t h = hash_u64(HASH_INIT, f->n);
  for (size_t i = 0; i < f->n; i++) {
    const fault_event *e = &f->ev[i];
    h = hash_u64(hash_u64(h, (uint64_t)e->t_ns), (uint64_t)e->dur_ns);
    h = hash_u64(hash_u64(h, (uint64_t)e->kind), (uint64_t)(uint32_t)e->a);
    h = hash_double(hash_u64(h, (uint64_t)(uint32_t)e->b), e->factor);
  }
  return h;
}

static int64_t event_end(const fault_event *e) {
  if (e->dur_ns == FAULT_FOREVER || e->dur_ns > INT64_MAX - e->t_ns)
    return FAULT_FOREVER;
  return e->t_ns + e->dur_ns;
}

/* ---- building the replay ---- */

typedef struct span {  /* one event's interval on one target */
  uint64_t key;        /* device, or site pair key */
  int64_t t0, t1;
  uint32_t ev;         /* index in file order */
} span;

static int span_cmp(const void *x, const void *y) {
  const span *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int i64_cmp(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* A boundary of a target's spans: span i starts (on) or ends at t. */
typedef struct edge {
  int64_t t;
  uint32_t i;
  bool on;
} edge;

static int edge_cmp(const void *x, const void *y) {
  const edge *a = x, *b = y;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* Scratch of build_points, sized once for the largest target. */
typedef struct sweep {
  edge *edges;  /* [2k] */
  double *tree; /* [2 size]: a product tree over the k spans in file order,
                   each leaf its factor while it holds, else 1 */
  size_t size;
} sweep;

static void tree_set(sweep *w, size_t i, double v) {
  size_t p = w->size + i;
  w->tree[p] = v;
  for (p /= 2; p; p /= 2) w->tree[p] = w->tree[2 * p] * w->tree[2 * p + 1];
}

/* Change points of one target from its spans s[0..k) (file order): the
 * state at 0 and at every start and end, consecutive equal states merged.
 * A sweep over the boundaries in time order keeps a count of the outages
 * that hold and the product of the factors that hold, in a tree, so each
 * boundary costs O(log k) and a target O(k log k) (a scan of every span
 * per boundary made 250,000 slowdowns of one device take minutes). */
static size_t target_points(const fault_trace *f, const span *s, size_t k,
                            sweep *w, dpoint *out) {
  size_t ne = 0, np = 0;
  for (size_t i = 0; i < k; i++) {
    w->edges[ne++] = (edge){s[i].t0, (uint32_t)i, true};
    if (s[i].t1 != FAULT_FOREVER) w->edges[ne++] = (edge){s[i].t1, (uint32_t)i, false};
  }
  qsort(w->edges, ne, sizeof *w->edges, edge_cmp);
  for (w->size = 1; w->size < k; w->size *= 2) {}
  for (size_t i = 1; i < 2 * w->size; i++) w->tree[i] = 1;
  long down = 0;
  size_t j = 0;
  /* the state at 0, then after each distinct boundary time */
  for (bool first = true;; first = false) {
    int64_t t = first ? 0 : w->edges[j].t;
    for (; j < ne && w->edges[j].t == t; j++) {
      const edge *x = &w->edges[j];
      const fault_event *e = &f->ev[s[x->i].ev];
      if (!fault_kind_has_factor(e->kind)) down += x->on ? 1 : -1;
      else tree_set(w, x->i, x->on ? e->factor : 1);
    }
    assert(down >= 0);
    bool up = down == 0;
    double factor = w->tree[1];
    if (!(np && out[np - 1].up == up && out[np - 1].speed == factor))
      out[np++] = (dpoint){t, up, factor};
    if (j == ne) break;
  }
  return np;
}

/* Groups spans by key and turns each group into points; returns the number
 * of groups, their keys and offsets, and the points (as dpoints: up is
 * false for a link that is down). */
static size_t build_points(const fault_trace *f, span *sp, size_t ns,
                           uint64_t **keys, size_t **off, dpoint **pts) {
  if (ns) qsort(sp, ns, sizeof *sp, span_cmp); /* sp may be NULL when ns is 0 */
  size_t most = 1;
  for (size_t i = 0, j; i < ns; i = j) {
    for (j = i; j < ns && sp[j].key == sp[i].key; j++) {}
    if (j - i > most) most = j - i;
  }
  size_t size = 1;
  while (size < most) size *= 2;
  sweep w = {.edges = mem_alloc(2 * most * sizeof *w.edges),
             .tree = mem_alloc(2 * size * sizeof *w.tree)};
  *pts = mem_alloc((3 * ns + 1) * sizeof **pts); /* 2k + 1 a group */
  *keys = mem_alloc((ns + 1) * sizeof **keys);
  *off = mem_alloc((ns + 2) * sizeof **off);
  size_t ng = 0, np = 0;
  for (size_t i = 0, j; i < ns; i = j) {
    for (j = i; j < ns && sp[j].key == sp[i].key; j++) {}
    (*keys)[ng] = sp[i].key;
    (*off)[ng++] = np;
    np += target_points(f, sp + i, j - i, &w, *pts + np);
  }
  (*off)[ng] = np;
  free(w.edges), free(w.tree);
  return ng;
}

static void add_span(span **sp, size_t *n, size_t *cap, uint64_t key,
                     const fault_event *e, size_t ev) {
  mem_grow((void **)sp, cap, *n + 1, sizeof **sp);
  (*sp)[(*n)++] = (span){key, e->t_ns, event_end(e), (uint32_t)ev};
}

/* Whether a point of holder h (a device, or ndevices + a site) at t
 * changes what some device shows: an outage of a site hides what its
 * devices do meanwhile, and the reverse. */
static bool point_shows(const fault_trace *f, const scenario *s, int h,
                        int64_t t);

/* Every instant > 0 at which some device or link changes: the devices' and
 * the sites' points that some device shows, the links' points; sorted,
 * distinct. */
static void collect_changes(fault_trace *f, const scenario *s) {
  size_t na = f->doff[f->ndevices + f->nsites], nb = f->loff[f->nl];
  f->changes = mem_alloc((na + nb + 1) * sizeof *f->changes);
  size_t n = 0;
  for (int h = 0; h < f->ndevices + f->nsites; h++)
    for (size_t i = f->doff[h]; i < f->doff[h + 1]; i++) {
      int64_t t = f->dpt[i].t;
      if (t > 0 && point_shows(f, s, h, t))
        f->changes[n++] = t;
    }
  for (size_t i = 0; i < nb; i++)
    if (f->lpt[i].t > 0) f->changes[n++] = f->lpt[i].t;
  qsort(f->changes, n, sizeof *f->changes, i64_cmp);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (!u || f->changes[i] != f->changes[u - 1]) f->changes[u++] = f->changes[i];
  f->nchanges = u;
}

static void build_replay(fault_trace *f, const scenario *s) {
  span *ds = NULL, *ls = NULL;
  size_t nd = 0, dcap = 0, nl = 0, lcap = 0;
  for (size_t i = 0; i < f->n; i++) {
    const fault_event *e = &f->ev[i];
    switch (fault_kind_target(e->kind)) {
      case FAULT_TARGET_SITE:
        add_span(&ds, &nd, &dcap, (uint64_t)f->ndevices + (uint64_t)e->a, e, i);
        break;
      case FAULT_TARGET_DEVICE:
        add_span(&ds, &nd, &dcap, (uint64_t)e->a, e, i);
        break;
      case FAULT_TARGET_LINK: {
        int a = e->a < e->b ? e->a : e->b, b = e->a < e->b ? e->b : e->a;
        add_span(&ls, &nl, &lcap, (uint64_t)a * (uint64_t)f->nsites + (uint64_t)b,
                 e, i);
        break;
      }
    }
  }
  uint64_t *dkeys;
  size_t *doff;
  size_t ndg = build_points(f, ds, nd, &dkeys, &doff, &f->dpt);
  int nholders = f->ndevices + f->nsites;
  f->doff = mem_calloc((size_t)nholders + 1, sizeof *f->doff);
  for (int d = 0, g = 0; d <= nholders; d++) { /* dense offsets */
    while ((size_t)g < ndg && dkeys[g] < (uint64_t)d) g++;
    f->doff[d] = (size_t)g < ndg ? doff[g] : doff[ndg];
  }
  dpoint *lp;
  f->nl = build_points(f, ls, nl, &f->lkey, &f->loff, &lp);
  /* A link's factor is 0 while it is down, whatever slows it meanwhile:
   * points that differ only there are one state. */
  f->lpt = mem_alloc((f->loff[f->nl] + 1) * sizeof *f->lpt);
  size_t np = 0;
  for (size_t g = 0; g < f->nl; g++) {
    size_t from = f->loff[g], to = f->loff[g + 1];
    f->loff[g] = np;
    for (size_t i = from; i < to; i++) {
      double x = lp[i].up ? lp[i].speed : 0;
      if (np > f->loff[g] && f->lpt[np - 1].factor == x) continue;
      f->lpt[np++] = (lpoint){lp[i].t, x};
    }
  }
  f->loff[f->nl] = np;
  collect_changes(f, s);
  free(lp), free(dkeys), free(doff), free(ds), free(ls);
}

/* ---- queries ---- */

/* Index of the last point of p[0..n) at or before t (n > 0, p[0].t == 0). */
static size_t dpoint_find(const dpoint *p, size_t n, int64_t t) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (p[mid].t <= t) lo = mid; else hi = mid;
  }
  return lo;
}

/* The point of holder h (a device, or ndevices + a site) in force at t,
 * its index *at and its group's end; NULL when h has no fault. */
static const dpoint *holder_point(const fault_trace *f, int h, int64_t t,
                                  size_t *at, size_t *end) {
  assert(h >= 0 && h < f->ndevices + f->nsites);
  size_t a = f->doff[h], b = f->doff[h + 1];
  if (a == b) return NULL;
  *at = a + dpoint_find(f->dpt + a, b - a, t);
  *end = b;
  return &f->dpt[*at];
}

static bool holder_up(const fault_trace *f, int h, int64_t t) {
  size_t at, end;
  const dpoint *p = holder_point(f, h, t, &at, &end);
  return !p || p->up;
}

static int64_t holder_next(const fault_trace *f, int h, int64_t t) {
  size_t at, end;
  if (!holder_point(f, h, t, &at, &end)) return FAULT_FOREVER;
  return at + 1 < end ? f->dpt[at + 1].t : FAULT_FOREVER;
}

/* The first instant >= t at which h is up (FAULT_FOREVER: never). */
static int64_t holder_up_again(const fault_trace *f, int h, int64_t t) {
  size_t at, end;
  const dpoint *p = holder_point(f, h, t, &at, &end);
  if (!p || p->up) return t;
  for (size_t i = at + 1; i < end; i++)
    if (f->dpt[i].up) return f->dpt[i].t;
  return FAULT_FOREVER;
}

static bool shows_change(const fault_trace *f, int d, int64_t t) {
  return fault_device_up(f, d, t - 1) != fault_device_up(f, d, t) ||
         fault_device_speed(f, d, t - 1) != fault_device_speed(f, d, t);
}

static bool point_shows(const fault_trace *f, const scenario *s, int h,
                        int64_t t) {
  if (h < f->ndevices) return shows_change(f, h, t);
  const scenario_site *site = &s->sites[h - f->ndevices];
  for (int d = site->first_device; d < site->first_device + site->ndevices; d++)
    if (shows_change(f, d, t)) return true;
  return false;
}

static int site_holder(const fault_trace *f, int d) {
  assert(d >= 0 && d < f->ndevices);
  return f->ndevices + f->device_site[d];
}

bool fault_device_up(const fault_trace *f, int d, int64_t t_ns) {
  return holder_up(f, d, t_ns) && holder_up(f, site_holder(f, d), t_ns);
}

double fault_device_speed(const fault_trace *f, int d, int64_t t_ns) {
  size_t at, end;
  const dpoint *p = holder_point(f, d, t_ns, &at, &end);
  return p ? p->speed : 1;
}

int64_t fault_device_next(const fault_trace *f, int d, int64_t t_ns) {
  bool up = fault_device_up(f, d, t_ns);
  double speed = fault_device_speed(f, d, t_ns);
  /* the next point of the device or its site at which what the device
   * shows changes (its site may come back while it is down itself) */
  for (int64_t t = t_ns;;) {
    int64_t a = holder_next(f, d, t), b = holder_next(f, site_holder(f, d), t);
    t = a < b ? a : b;
    if (t == FAULT_FOREVER || fault_device_up(f, d, t) != up ||
        fault_device_speed(f, d, t) != speed)
      return t;
  }
}

int64_t fault_device_up_again(const fault_trace *f, int d, int64_t t_ns) {
  /* each round moves t past an outage of the device or of its site, and
   * each holds finitely many points: the loop ends */
  for (int64_t t = t_ns;;) {
    int64_t a = holder_up_again(f, d, t);
    if (a == FAULT_FOREVER) return a;
    int64_t b = holder_up_again(f, site_holder(f, d), a);
    if (b == a || b == FAULT_FOREVER) return b;
    t = b;
  }
}

double fault_link_factor(const fault_trace *f, int a, int b, int64_t t_ns) {
  if (!f->nl) return 1;
  if (a > b) {
    int x = a;
    a = b;
    b = x;
  }
  uint64_t key = (uint64_t)a * (uint64_t)f->nsites + (uint64_t)b;
  size_t lo = 0, hi = f->nl;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->lkey[mid] < key) lo = mid + 1; else hi = mid;
  }
  if (lo == f->nl || f->lkey[lo] != key) return 1;
  const lpoint *p = f->lpt + f->loff[lo];
  size_t n = f->loff[lo + 1] - f->loff[lo], l = 0, h = n;
  while (h - l > 1) {
    size_t mid = l + (h - l) / 2;
    if (p[mid].t <= t_ns) l = mid; else h = mid;
  }
  return p[l].factor;
}

int64_t fault_next_change(const fault_trace *f, int64_t t_ns) {
  size_t lo = 0, hi = f->nchanges;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->changes[mid] <= t_ns) lo = mid + 1; else hi = mid;
  }
  return lo < f->nchanges ? f->changes[lo] : FAULT_FOREVER;
}

/* ---- reading ---- */

fault_trace *fault_parse(const char *text, size_t len, const char *name,
                         const scenario *s, err *e) {
  fault_trace *f = mem_calloc(1, sizeof *f);
  if (fault_csv_read(text, len, name, s, &f->ev, &f->n, &f->comments,
                     &f->ncomments, e)) {
    free(f);
    return NULL;
  }
  f->ndevices = s->ndevices, f->nsites = s->nsites;
  f->device_site = mem_alloc((size_t)s->ndevices * sizeof *f->device_site);
  memcpy(f->device_site, s->device_site,
         (size_t)s->ndevices * sizeof *f->device_site);
  build_replay(f, s);
  return f;
}

fault_trace *fault_load(const char *path, const scenario *s, err *e) {
  size_t len;
  char *text = file_load(path, "the fault trace", FILE_MAX_BYTES, &len, e);
  if (!text) return NULL;
  fault_trace *f = fault_parse(text, len, path, s, e);
  free(text);
  return f;
}

/* ---- writing ---- */

void fault_format_s(char *buf, size_t size, int64_t ns) {
  if (ns == FAULT_FOREVER) {
    snprintf(buf, size, "inf");
    return;
  }
  int len = snprintf(buf, size, "%lld.%09lld", (long long)(ns / 1000000000LL),
                     (long long)(ns % 1000000000LL));
  while (len > 0 && buf[len - 1] == '0') buf[--len] = '\0';
  if (len > 0 && buf[len - 1] == '.') buf[--len] = '\0';
}

int fault_write_row(FILE *out, const char *path, const scenario *s,
                    const fault_event *ev, err *e) {
  char t[32], d[32], device[24], factor[40] = "", *pair = NULL;
  const char *target = device;
  fault_format_s(t, sizeof t, ev->t_ns);
  fault_format_s(d, sizeof d, ev->dur_ns);
  switch (fault_kind_target(ev->kind)) {
    case FAULT_TARGET_DEVICE:
      snprintf(device, sizeof device, "%d", ev->a);
      break;
    case FAULT_TARGET_SITE:
      target = s->sites[ev->a].name;
      break;
    case FAULT_TARGET_LINK: {
      const char *a = s->sites[ev->a].name, *b = s->sites[ev->b].name;
      size_t n = strlen(a) + strlen(b) + 2; /* names of any length */
      target = pair = mem_alloc(n);
      snprintf(pair, n, "%s:%s", a, b);
      break;
    }
  }
  if (fault_kind_has_factor(ev->kind))
    snprintf(factor, sizeof factor, "%.17g", ev->factor);
  bool bad = fprintf(out, "%s,%s,", t, fault_kind_name(ev->kind)) < 0 ||
             csv_write_field(out, target) == EOF ||
             fprintf(out, ",%s,%s\n", d, factor) < 0;
  free(pair);
  if (bad) return err_set(e, ERR_IO, "%s: %s", path, strerror(errno));
  return ERR_OK;
}
