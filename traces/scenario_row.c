/* scenario_row: see scenario_row.h. Every access goes through at_value
 * and at_knob, the one place that turns a row's offset into its C type
 * (workload.c asserts the types of the targets, scenario.h generates the
 * knobs'). */
#include "traces/scenario_row.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

/* The address of row r's value on s (SITES: on site i). */
static char *at_value(const scenario *s, const workload_row *r, int i) {
  switch (r->target) {
    case WORKLOAD_IN_WORKLOAD:
    case WORKLOAD_IN_COST:
    case WORKLOAD_IN_TOP:
    case WORKLOAD_IN_LINKS:
      return (char *)s + r->at;
    case WORKLOAD_IN_SITES:
      return (char *)&s->sites[i] + r->at;
    case WORKLOAD_IN_TRANSPORT:
      break;
  }
  assert(!"a transport row has no value on a scenario");
  return NULL;
}

static double get_number(const char *p, const workload_row *r) {
  switch (r->kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
      if (r->target == WORKLOAD_IN_TOP) return (double)*(const uint64_t *)p;
      return *(const int *)p;
    case WORKLOAD_BOOL:
      return *(const bool *)p;
    case WORKLOAD_REAL:
      return *(const double *)p;
    case WORKLOAD_NAME:
      break;
  }
  assert(!"a name row has no number");
  return NAN;
}

static void put_number(char *p, const workload_row *r, double x) {
  switch (r->kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
      if (r->target == WORKLOAD_IN_TOP) *(uint64_t *)p = (uint64_t)x;
      else *(int *)p = (int)x;
      return;
    case WORKLOAD_BOOL:
      *(bool *)p = x != 0;
      return;
    case WORKLOAD_REAL:
      *(double *)p = x;
      return;
    case WORKLOAD_NAME:
      break;
  }
  assert(!"a name row has no number");
}

double scenario_row_number(const scenario *s, int r) {
  return get_number(at_value(s, &workload_rows[r], 0), &workload_rows[r]);
}

const char *scenario_row_name(const scenario *s, int r) {
  assert(workload_rows[r].kind == WORKLOAD_NAME);
  return *(char *const *)at_value(s, &workload_rows[r], 0);
}

/* The sites a row sets: every one for SITES, else the scenario's one. */
static int copies(const scenario *s, const workload_row *r) {
  return r->target == WORKLOAD_IN_SITES ? s->nsites : 1;
}

void scenario_row_set_number(scenario *s, int r, double x) {
  const workload_row *row = &workload_rows[r];
  for (int i = 0; i < copies(s, row); i++)
    put_number(at_value(s, row, i), row, x);
}

void scenario_row_set_name(scenario *s, int r, const char *name) {
  const workload_row *row = &workload_rows[r];
  assert(row->kind == WORKLOAD_NAME);
  for (int i = 0; i < copies(s, row); i++) {
    char **p = (char **)at_value(s, row, i);
    free(*p);
    *p = mem_strdup(name);
  }
}

bool scenario_row_is_default(const scenario *s, int r) {
  const workload_row *row = &workload_rows[r];
  if (row->kind == WORKLOAD_NAME) {
    const char *v = scenario_row_name(s, r);
    return row->names && v && strcmp(v, row->names[0]) == 0;
  }
  double x = scenario_row_number(s, r);
  return x == row->def || (isnan(x) && isnan(row->def));
}

static char *at_knob(const scenario_knobs *k, int r) {
  return (char *)k + workload_rows[r].knob_at;
}

/* A real knob's absent value: NAN, or for a link scale 1, which changes
 * nothing. */
static double absent_real(const workload_row *row) {
  return row->target == WORKLOAD_IN_LINKS ? 1 : NAN;
}

bool scenario_knob_given(const scenario_knobs *k, int r) {
  const workload_row *row = &workload_rows[r];
  switch (row->kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
    case WORKLOAD_BOOL:
      return *(const long *)at_knob(k, r) >= 0;
    case WORKLOAD_REAL: {
      double x = *(const double *)at_knob(k, r), absent = absent_real(row);
      return isnan(absent) ? !isnan(x) : x != absent;
    }
    case WORKLOAD_NAME:
      return *(const char *const *)at_knob(k, r) != NULL;
  }
  return false;
}

double scenario_knob_number(const scenario_knobs *k, int r) {
  switch (workload_rows[r].kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
    case WORKLOAD_BOOL:
      return (double)*(const long *)at_knob(k, r);
    case WORKLOAD_REAL:
      return *(const double *)at_knob(k, r);
    case WORKLOAD_NAME:
      break;
  }
  assert(!"a name knob has no number");
  return NAN;
}

const char *scenario_knob_name(const scenario_knobs *k, int r) {
  assert(workload_rows[r].kind == WORKLOAD_NAME);
  return *(const char *const *)at_knob(k, r);
}

void scenario_knob_set_number(scenario_knobs *k, int r, double x) {
  switch (workload_rows[r].kind) {
    case WORKLOAD_INT:
    case WORKLOAD_BITS:
    case WORKLOAD_BOOL:
      *(long *)at_knob(k, r) = (long)x;
      return;
    case WORKLOAD_REAL:
      *(double *)at_knob(k, r) = x;
      return;
    case WORKLOAD_NAME:
      break;
  }
  assert(!"a name knob has no number");
}

void scenario_knob_set_name(scenario_knobs *k, int r, const char *name) {
  assert(workload_rows[r].kind == WORKLOAD_NAME);
  *(const char **)at_knob(k, r) = name;
}

void scenario_knob_clear(scenario_knobs *k, int r) {
  const workload_row *row = &workload_rows[r];
  if (row->kind == WORKLOAD_NAME) scenario_knob_set_name(k, r, NULL);
  else scenario_knob_set_number(k, r, row->kind == WORKLOAD_REAL
                                          ? absent_real(row) : -1);
}
