/* prices: see prices.h. A row is checked column by column, each failure
 * worded "NAME:LINE: column: message" as every CSV of geodes words it. */
#include "traces/prices.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/builtin.h"
#include "base/mem.h"
#include "traces/csv.h"

enum { COL_TYPE, COL_GPUS, COL_PRICE, COL_SPOT, COL_REGION, COL_DATE,
       COL_SOURCE, NCOLS };
static const char *const col_names[NCOLS] = {
    "instance_type", "gpus_per_instance", "usd_per_hour", "spot_usd_per_hour",
    "region", "date", "source"};

struct prices {
  char *file;
  prices_row *rows;
  size_t n, cap;
};

void prices_free(prices *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n; i++) {
    free((char *)p->rows[i].type), free((char *)p->rows[i].region);
    free((char *)p->rows[i].date), free((char *)p->rows[i].source);
  }
  free(p->rows);
  free(p->file);
  free(p);
}

/* A price column: a finite number >= 0 into *x; empty is NAN when `may_be
 * _empty`, else an error. */
static int price(const csv_reader *rd, int col, const char *f, size_t n,
                 bool may_be_empty, double *x, err *e) {
  if (!n && may_be_empty) {
    *x = NAN;
    return ERR_OK;
  }
  if (!n)
    return err_set(e, ERR_MISSING, "%s:%d: %s: missing (USD per hour)",
                   rd->name, rd->line, col_names[col]);
  int rc = csv_parse_double(f, n, x);
  if (rc == CSV_NUM_OK && *x < 0) rc = CSV_NUM_NEGATIVE;
  if (rc)
    return err_set(e, csv_num_err(rc), "%s:%d: %s: '%.*s%s' %s", rd->name,
                   rd->line, col_names[col], CSV_SHOW(f, n), csv_num_what(rc));
  return ERR_OK;
}

/* The text columns a row needs: its type, region, date and source. */
static int texts(const csv_reader *rd, const size_t *fn, err *e) {
  static const int need[] = {COL_TYPE, COL_REGION, COL_DATE, COL_SOURCE};
  for (size_t i = 0; i < sizeof need / sizeof *need; i++)
    if (!fn[need[i]])
      return err_set(e, ERR_MISSING, "%s:%d: %s: missing (%s)", rd->name,
                     rd->line, col_names[need[i]],
                     need[i] == COL_SOURCE ? "every price names where it was "
                                             "read"
                     : need[i] == COL_DATE ? "when the price was read, "
                                             "YYYY-MM-DD"
                                           : "a name");
  return ERR_OK;
}

static int row(void *ctx, csv_reader *rd, const char *s, size_t n, err *e) {
  prices *p = ctx;
  const char *f[NCOLS];
  size_t fn[NCOLS];
  int cols = csv_split(rd, s, n, f, fn, NCOLS), rc;
  if (cols != NCOLS)
    return err_set(e, ERR_PARSE, "%s:%d: expected %d columns (%s), found %d",
                   rd->name, rd->line, NCOLS, PRICES_HEADER, cols);
  if ((rc = texts(rd, fn, e))) return rc;
  double g, od, spot;
  rc = csv_parse_double(f[COL_GPUS], fn[COL_GPUS], &g);
  if (rc || !(g >= 1 && g <= 1e6 && g == floor(g)))
    return err_set(e, ERR_RANGE, "%s:%d: gpus_per_instance: '%.*s%s' is not "
                   "an integer >= 1", rd->name, rd->line,
                   CSV_SHOW(f[COL_GPUS], fn[COL_GPUS]));
  if ((rc = price(rd, COL_PRICE, f[COL_PRICE], fn[COL_PRICE], false, &od, e)) ||
      (rc = price(rd, COL_SPOT, f[COL_SPOT], fn[COL_SPOT], true, &spot, e)))
    return rc;
  for (size_t i = 0; i < p->n; i++)
    if (strlen(p->rows[i].type) == fn[COL_TYPE] &&
        memcmp(p->rows[i].type, f[COL_TYPE], fn[COL_TYPE]) == 0)
      return err_set(e, ERR_DUPLICATE, "%s:%d: instance_type: '%.*s%s' is "
                     "already line %d", rd->name, rd->line,
                     CSV_SHOW(f[COL_TYPE], fn[COL_TYPE]), p->rows[i].line);
  mem_grow((void **)&p->rows, &p->cap, p->n + 1, sizeof *p->rows);
  p->rows[p->n++] = (prices_row){
      .type = mem_strndup(f[COL_TYPE], fn[COL_TYPE]),
      .region = mem_strndup(f[COL_REGION], fn[COL_REGION]),
      .date = mem_strndup(f[COL_DATE], fn[COL_DATE]),
      .source = mem_strndup(f[COL_SOURCE], fn[COL_SOURCE]),
      .gpus = (int)g, .usd_per_hour = od, .spot_usd_per_hour = spot,
      .line = rd->line};
  return ERR_OK;
}

prices *prices_parse(const char *text, size_t len, const char *name, err *e) {
  prices *p = mem_calloc(1, sizeof *p);
  p->file = mem_strdup(name);
  if (csv_table(text, len, name, PRICES_HEADER, row, p, e) == ERR_OK)
    return p;
  prices_free(p);
  return NULL;
}

prices *prices_builtin(err *e) {
  const builtin_file *f = builtin_find(PRICES_BUILTIN);
  if (!f) {
    err_set(e, ERR_MISSING, "%s:0: not built in", PRICES_BUILTIN);
    return NULL;
  }
  return prices_parse(f->data, f->size, f->name, e);
}

const prices_row *prices_find(const prices *p, const char *type) {
  for (size_t i = 0; type && i < p->n; i++)
    if (strcmp(p->rows[i].type, type) == 0) return &p->rows[i];
  return NULL;
}

const char *prices_file(const prices *p) { return p->file; }
