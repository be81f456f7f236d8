/* fault_csv: see fault_csv.h. One row at a time: the time (sorted), the
 * event's name, its target by the kind's target type, the duration, the
 * factor where the kind takes one. */
#include "traces/fault_csv.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/simtime.h"

typedef struct fault_parser {
  csv_reader *rd;
  const char *name;
  int line;
  const scenario *s;
  err *e;
  bool header;
  fault_event *ev;
  size_t n, cap;
  csv_comment *comments;
  size_t ncomments, ccap;
} fault_parser;

static int parse_device(fault_parser *ps, const char *s, size_t n, int *d) {
  long v = 0;
  size_t i = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9' && v <= INT32_MAX; i++)
    v = v * 10 + (s[i] - '0');
  if (n == 0 || i < n)
    return err_set(ps->e, i < n && s[i] >= '0' && s[i] <= '9' ? ERR_RANGE
                   : ERR_PARSE, "%s:%d: target: '%.*s%s' is not a device index "
                   "(an integer 0..%d)", ps->name, ps->line, CSV_SHOW(s, n),
                   ps->s->ndevices - 1);
  if (v >= ps->s->ndevices)
    return err_set(ps->e, ERR_UNKNOWN, "%s:%d: target: device %ld is not in "
                   "scenario %s, whose devices are 0..%d", ps->name, ps->line,
                   v, ps->s->name, ps->s->ndevices - 1);
  *d = (int)v;
  return ERR_OK;
}

static int site_of(const scenario *s, const char *name, size_t n) {
  char *z = mem_strndup(name, n);
  int i = scenario_site_index(s, z);
  free(z);
  return i;
}

static int unknown_site(fault_parser *ps, const char *s, size_t n) {
  return err_set(ps->e, ERR_UNKNOWN, "%s:%d: target: unknown site '%.*s%s' "
                 "(scenario %s has %d sites, the first %s)", ps->name,
                 ps->line, CSV_SHOW(s, n), ps->s->name, ps->s->nsites,
                 ps->s->sites[0].name);
}

/* "A:B": the first ':' whose both sides name sites (a site name may hold a
 * ':' itself). */
static int parse_link(fault_parser *ps, const char *s, size_t n, int *a,
                      int *b) {
  const char *first = memchr(s, ':', n);
  if (!first)
    return err_set(ps->e, ERR_PARSE, "%s:%d: target: '%.*s%s' is not two "
                   "site names 'A:B'", ps->name, ps->line, CSV_SHOW(s, n));
  for (const char *c = first; c; c = memchr(c + 1, ':', (size_t)(s + n - c - 1))) {
    *a = site_of(ps->s, s, (size_t)(c - s));
    *b = site_of(ps->s, c + 1, (size_t)(s + n - c - 1));
    if (*a >= 0 && *b >= 0) return ERR_OK;
    if (c + 1 >= s + n) break;
  }
  if (site_of(ps->s, s, (size_t)(first - s)) < 0)
    return unknown_site(ps, s, (size_t)(first - s));
  return unknown_site(ps, first + 1, (size_t)(s + n - first - 1));
}

static int parse_target(fault_parser *ps, fault_event *ev, const char *s,
                        size_t n) {
  switch (fault_kind_target(ev->kind)) {
    case FAULT_TARGET_DEVICE:
      ev->b = -1;
      return parse_device(ps, s, n, &ev->a);
    case FAULT_TARGET_SITE:
      ev->b = -1;
      ev->a = site_of(ps->s, s, n);
      return ev->a < 0 ? unknown_site(ps, s, n) : ERR_OK;
    case FAULT_TARGET_LINK:
      return parse_link(ps, s, n, &ev->a, &ev->b);
  }
  assert(!"unknown fault target");
  return ERR_PARSE;
}

static int parse_time(fault_parser *ps, fault_event *ev, const char *s,
                      size_t n) {
  return csv_time_field(ps->name, ps->line, s, n,
                        ps->n ? &ps->ev[ps->n - 1].t_ns : NULL, &ev->t_ns,
                        ps->e);
}

static int parse_duration(fault_parser *ps, fault_event *ev, const char *s,
                          size_t n) {
  if (csv_is_inf(s, n)) return ev->dur_ns = FAULT_FOREVER, ERR_OK;
  int rc = csv_parse_ns(s, n, &ev->dur_ns);
  if (rc == CSV_NUM_OK && ev->dur_ns == 0) rc = CSV_NUM_NEGATIVE;
  if (rc == CSV_NUM_NEGATIVE)
    return err_set(ps->e, ERR_RANGE, "%s:%d: duration_s: %.*s%s is not > 0",
                   ps->name, ps->line, CSV_SHOW(s, n));
  /* a fault that ends after the simulated span has no instant to end at:
   * one meant for ever says inf */
  if (rc == CSV_NUM_OVERFLOW ||
      (rc == CSV_NUM_OK && ev->dur_ns > SIMTIME_LIMIT_NS - ev->t_ns))
    return err_set(ps->e, ERR_RANGE, "%s:%d: duration_s: %.*s%s ends the "
                   "fault past " SIMTIME_LIMIT_TEXT " (write inf for a fault "
                   "that never ends)", ps->name, ps->line, CSV_SHOW(s, n));
  if (rc != CSV_NUM_OK)
    return err_set(ps->e, ERR_PARSE, "%s:%d: duration_s: '%.*s%s' is not a "
                   "number or inf", ps->name, ps->line, CSV_SHOW(s, n));
  return ERR_OK;
}

/* What a kind's factor multiplies, for a message; "" for the kinds that
 * take none. */
static const char *factor_what(fault_kind k) {
  switch (k) {
    case FAULT_DEVICE_DOWN:
    case FAULT_SITE_DOWN:
    case FAULT_LINK_DOWN: return "";
    case FAULT_LINK_SLOW: return "bandwidth";
    case FAULT_DEVICE_SLOW: return "compute-speed";
  }
  assert(!"unknown fault kind");
  return "";
}

static int parse_factor(fault_parser *ps, fault_event *ev, const char *s,
                        size_t n) {
  const char *kind = fault_kind_name(ev->kind);
  ev->factor = 1;
  if (!fault_kind_has_factor(ev->kind))
    return n == 0 ? ERR_OK
           : err_set(ps->e, ERR_PARSE, "%s:%d: factor: '%.*s%s' given for %s, "
                     "which takes none (leave it empty)", ps->name, ps->line,
                     CSV_SHOW(s, n), kind);
  if (n == 0)
    return err_set(ps->e, ERR_MISSING, "%s:%d: factor: empty, but %s needs "
                   "its %s multiplier", ps->name, ps->line, kind,
                   factor_what(ev->kind));
  int rc = csv_parse_double(s, n, &ev->factor);
  if (rc == CSV_NUM_OK && !(ev->factor > 0))
    return err_set(ps->e, ERR_RANGE, "%s:%d: factor: %.*s%s is not > 0",
                   ps->name, ps->line, CSV_SHOW(s, n));
  if (rc != CSV_NUM_OK)
    return err_set(ps->e, csv_num_err(rc), "%s:%d: factor: '%.*s%s' %s",
                   ps->name, ps->line, CSV_SHOW(s, n), csv_num_what(rc));
  return ERR_OK;
}

static int data_line(fault_parser *ps, const char *s, size_t n) {
  const char *f[5];
  size_t fn[5];
  int cols = csv_split(ps->rd, s, n, f, fn, 5);
  if (cols != 5)
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected 5 columns (%s), found "
                   "%d", ps->name, ps->line, FAULT_HEADER, cols);
  if (ps->n >= FAULT_MAX_EVENTS)
    return err_set(ps->e, ERR_MEMORY, "%s:%d: more than the %d rows a fault "
                   "trace may hold", ps->name, ps->line, FAULT_MAX_EVENTS);
  fault_event ev = {.line = ps->line};
  int k = fault_kind_find(f[1], fn[1]);
  if (parse_time(ps, &ev, f[0], fn[0])) return ps->e->code;
  if (k < 0)
    return err_set(ps->e, ERR_UNKNOWN, "%s:%d: event: unknown '%.*s%s' (%s)",
                   ps->name, ps->line, CSV_SHOW(f[1], fn[1]),
                   fault_kind_list());
  ev.kind = (fault_kind)k;
  if (parse_target(ps, &ev, f[2], fn[2]) ||
      parse_duration(ps, &ev, f[3], fn[3]) || parse_factor(ps, &ev, f[4], fn[4]))
    return ps->e->code;
  mem_grow((void **)&ps->ev, &ps->cap, ps->n + 1, sizeof *ps->ev);
  ps->ev[ps->n++] = ev;
  return ERR_OK;
}

static int one_line(fault_parser *ps, const char *s, size_t n) {
  const char *k, *v;
  size_t kn, vn;
  if (n == 0) return ERR_OK;
  if (s[0] == '#') {
    if (csv_comment_split(s, n, &k, &kn, &v, &vn))
      csv_comment_add(&ps->comments, &ps->ncomments, &ps->ccap, k, kn, v, vn);
    return ERR_OK;
  }
  if (ps->header) return data_line(ps, s, n);
  if (n != strlen(FAULT_HEADER) || memcmp(s, FAULT_HEADER, n) != 0)
    return err_set(ps->e, ERR_PARSE, "%s:%d: expected the header '%s', found "
                   "'%.*s%s'", ps->name, ps->line, FAULT_HEADER,
                   CSV_SHOW(s, n));
  ps->header = true;
  return ERR_OK;
}

int fault_csv_read(const char *text, size_t len, const char *name,
                   const scenario *s, fault_event **ev, size_t *n_ev,
                   csv_comment **comments, size_t *ncomments, err *e) {
  assert(text || len == 0);
  err local;
  err_clear(&local);
  csv_reader rd;
  csv_reader_init(&rd, text, len, name);
  fault_parser ps = {.rd = &rd, .name = name, .s = s, .e = &local};
  const char *line;
  size_t n;
  int more;
  while ((more = csv_next(&rd, &line, &n, &local)) > 0) {
    ps.line = rd.line;
    if (one_line(&ps, line, n)) break;
  }
  if (!local.code && !ps.header)
    err_set(&local, ERR_PARSE, rd.any_text ? "%s:%d: no header line '%s' "
            "(only comments)" : "%s:%d: empty file (expected the header '%s')",
            name, rd.line ? rd.line : 1, FAULT_HEADER);
  csv_reader_free(&rd);
  if (local.code) {
    free(ps.ev);
    csv_comments_free(ps.comments, ps.ncomments);
    return err_set(e, local.code, "%s", local.msg);
  }
  *ev = ps.ev, *n_ev = ps.n;
  *comments = ps.comments, *ncomments = ps.ncomments;
  return ERR_OK;
}
