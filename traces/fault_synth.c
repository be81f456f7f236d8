/* fault_synth: see fault_synth.h. Every instance (a run of
 * gpus_per_instance consecutive devices of a site) is interrupted as a
 * Poisson process on its own clock: the next interruption comes an
 * exponential time after its replacement is up. Link outages are a Poisson
 * process per unordered pair of distinct sites with exponential lengths. */
#include "traces/fault_synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/builtin.h"
#include "base/mem.h"
#include "base/simtime.h"
#include "traces/csv.h"
#include "traces/fault.h"

#define PARAMS_HEADER "instance_type,gpus_per_instance,band,monthly_frac"
#define PARAMS_COLS 4

#define SYNTH_MAX_S SIMTIME_LIMIT_S

typedef struct param_row {
  char *type, *band;
  int gpus;
  double frac;
} param_row;

struct fault_params {
  param_row *rows;
  size_t n, cap;
};

void fault_params_free(fault_params *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n; i++) free(p->rows[i].type), free(p->rows[i].band);
  free(p->rows);
  free(p);
}

static int params_row(void *ctx, csv_reader *rd, const char *s, size_t n,
                      err *e) {
  fault_params *p = ctx;
  const char *name = rd->name;
  int line = rd->line;
  const char *f[PARAMS_COLS];
  size_t fn[PARAMS_COLS];
  int cols = csv_split(rd, s, n, f, fn, PARAMS_COLS);
  if (cols != PARAMS_COLS)
    return err_set(e, ERR_PARSE, "%s:%d: expected %d columns (%s), found %d",
                   name, line, PARAMS_COLS, PARAMS_HEADER, cols);
  if (!fn[0] || !fn[2])
    return err_set(e, ERR_PARSE, "%s:%d: instance_type and band must not be "
                   "empty", name, line);
  double g, frac;
  int rc = csv_parse_double(f[1], fn[1], &g);
  if (rc || !(g >= 1 && g <= 1e6 && g == floor(g)))
    return err_set(e, ERR_RANGE, "%s:%d: gpus_per_instance: '%.*s%s' is not "
                   "an integer >= 1", name, line, CSV_SHOW(f[1], fn[1]));
  rc = csv_parse_double(f[3], fn[3], &frac);
  if (rc || !(frac > 0 && frac < 1))
    return err_set(e, ERR_RANGE, "%s:%d: monthly_frac: '%.*s%s' is not in "
                   "(0, 1)", name, line, CSV_SHOW(f[3], fn[3]));
  for (size_t i = 0; i < p->n; i++)
    if (strlen(p->rows[i].type) == fn[0] &&
        memcmp(p->rows[i].type, f[0], fn[0]) == 0)
      return err_set(e, ERR_DUPLICATE, "%s:%d: instance type '%.*s%s' is "
                     "listed twice", name, line, CSV_SHOW(f[0], fn[0]));
  mem_grow((void **)&p->rows, &p->cap, p->n + 1, sizeof *p->rows);
  p->rows[p->n++] = (param_row){mem_strndup(f[0], fn[0]),
                                mem_strndup(f[2], fn[2]), (int)g, frac};
  return ERR_OK;
}

fault_params *fault_params_parse(const char *text, size_t len,
                                 const char *name, err *e) {
  fault_params *p = mem_calloc(1, sizeof *p);
  if (csv_table(text, len, name, PARAMS_HEADER, params_row, p, e) == ERR_OK)
    return p;
  fault_params_free(p);
  return NULL;
}

fault_params *fault_params_builtin(err *e) {
  const builtin_file *f = builtin_find("fault_params.csv");
  if (!f) {
    err_set(e, ERR_MISSING, "fault_params.csv:0: not built in");
    return NULL;
  }
  return fault_params_parse(f->data, f->size, f->name, e);
}

bool fault_params_type(const fault_params *p, const char *instance_type,
                       double *monthly_frac, int *gpus_per_instance,
                       const char **band) {
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->rows[i].type, instance_type) == 0) {
      *monthly_frac = p->rows[i].frac;
      *gpus_per_instance = p->rows[i].gpus;
      if (band) *band = p->rows[i].band;
      return true;
    }
  return false;
}

void fault_params_types(const fault_params *p, char *buf, size_t size) {
  size_t k = 0;
  if (size) buf[0] = '\0';
  for (size_t i = 0; i < p->n && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "",
                          p->rows[i].type);
}

fault_synth_opts fault_synth_opts_default(void) {
  return (fault_synth_opts){.rate_scale = 1,
                            .replace_s = FAULT_SYNTH_REPLACE_S};
}

double fault_synth_rate(double monthly_frac) {
  return -log1p(-monthly_frac) / FAULT_SYNTH_MONTH_S;
}

/* ---- drawing ---- */

typedef struct item {
  fault_event ev;
  size_t order;  /* draw index, the tie-break of the stable sort */
} item;

typedef struct drawn {
  item *v;
  size_t n, cap;
} drawn;

static int64_t to_ns(double s) { return llround(s * 1e9); }

static int add(drawn *d, fault_event ev, err *e) {
  if (d->n >= FAULT_MAX_EVENTS)
    return err_set(e, ERR_MEMORY, "faults synth: more than %d rows would be "
                   "drawn, more than a fault trace may hold (lower "
                   "--duration-s or --rate-scale)", FAULT_MAX_EVENTS);
  mem_grow((void **)&d->v, &d->cap, d->n + 1, sizeof *d->v);
  d->v[d->n] = (item){ev, d->n};
  d->n++;
  return ERR_OK;
}

/* The interruptions of one instance: devices first .. first + k - 1 of
 * site (all of them: a site_down). */
static int draw_instance(gsl_rng *r, drawn *d, const scenario *s, int site,
                         int first, int k, double rate,
                         const fault_synth_opts *o, err *e) {
  const scenario_site *st = &s->sites[site];
  bool whole = k == st->ndevices;
  for (double t = gsl_ran_exponential(r, 1 / rate); t < o->duration_s;
       t += o->replace_s + gsl_ran_exponential(r, 1 / rate)) {
    fault_event ev = {.t_ns = to_ns(t), .dur_ns = to_ns(o->replace_s),
                      .kind = whole ? FAULT_SITE_DOWN : FAULT_DEVICE_DOWN,
                      .a = whole ? site : first, .b = -1, .factor = 1};
    for (int j = 0; j < (whole ? 1 : k); j++, ev.a++)
      if (add(d, ev, e)) return e ? e->code : ERR_MEMORY;
  }
  return ERR_OK;
}

/* A site's spot statistics: its "instance" type's row of the table, the
 * fraction replaced by --monthly-frac when given; a site that names no
 * type (or one the table lacks) needs --monthly-frac and is then one
 * instance per GPU. */
static int site_params(const scenario *s, int i, const fault_params *p,
                       const fault_synth_opts *o, double *frac, int *gpi,
                       err *e) {
  const scenario_site *st = &s->sites[i];
  *gpi = 1;
  bool known = st->instance &&
               fault_params_type(p, st->instance, frac, gpi, NULL);
  if (o->monthly_frac > 0) *frac = o->monthly_frac;
  if (known || o->monthly_frac > 0) return ERR_OK;
  char types[256];
  fault_params_types(p, types, sizeof types);
  if (!st->instance)
    return err_set(e, ERR_MISSING, "%s: sites[%d] ('%s') names no instance "
                   "type (the site key \"instance\": %s), so its spot "
                   "interruption rate is unknown: give --monthly-frac F",
                   s->name, i, st->name, types);
  return err_set(e, ERR_UNKNOWN, "%s: sites[%d] ('%s'): instance type '%s' "
                 "is not in fault_params.csv (%s): give --monthly-frac F",
                 s->name, i, st->name, st->instance, types);
}

static int draw_sites(gsl_rng *r, drawn *d, const scenario *s,
                      const fault_params *p, const fault_synth_opts *o,
                      err *e) {
  for (int i = 0; i < s->nsites; i++) {
    const scenario_site *st = &s->sites[i];
    double frac;
    int gpi, rc = site_params(s, i, p, o, &frac, &gpi, e);
    if (rc) return rc;
    double rate = fault_synth_rate(frac) * o->rate_scale;
    for (int k0 = 0; k0 < st->ndevices; k0 += gpi) {
      int k = st->ndevices - k0 < gpi ? st->ndevices - k0 : gpi;
      rc = draw_instance(r, d, s, i, st->first_device + k0, k, rate, o, e);
      if (rc) return rc;
    }
  }
  return ERR_OK;
}

static int draw_links(gsl_rng *r, drawn *d, const scenario *s,
                      const fault_synth_opts *o, err *e) {
  double rate = FAULT_SYNTH_LINK_DOWN_FRAC / FAULT_SYNTH_LINK_MEAN_S *
                o->rate_scale;
  for (int a = 0; a < s->nsites; a++)
    for (int b = a + 1; b < s->nsites; b++)
      for (double t = gsl_ran_exponential(r, 1 / rate); t < o->duration_s;) {
        double len = gsl_ran_exponential(r, FAULT_SYNTH_LINK_MEAN_S);
        int64_t dur = to_ns(len) > 0 ? to_ns(len) : 1;
        fault_event ev = {.t_ns = to_ns(t), .dur_ns = dur,
                          .kind = FAULT_LINK_DOWN, .a = a, .b = b, .factor = 1};
        if (add(d, ev, e)) return e ? e->code : ERR_MEMORY;
        t += len + gsl_ran_exponential(r, 1 / rate);
      }
  return ERR_OK;
}

static int item_cmp(const void *x, const void *y) {
  const item *a = x, *b = y;
  if (a->ev.t_ns != b->ev.t_ns) return a->ev.t_ns < b->ev.t_ns ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* ---- writing ---- */

static void header(FILE *out, const scenario *s, const fault_synth_opts *o) {
  fprintf(out, "# source: AWS Spot Instance Advisor interruption bands per "
          "instance type and region (traces/data/fault_params.csv, with its "
          "provenance); replacement boot time: Depot, 2024");
  if (o->link_outages)
    fprintf(out, "; link outages: Turner et al., SIGCOMM 2010 (downtime) and "
            "lastinfirstout.net, 2008 (outage length)");
  fprintf(out, "\n# synthetic_from_real: true\n");
  if (o->command) csv_write_comment(out, "generated_by", o->command);
  fprintf(out, "# seed: %llu\n", (unsigned long long)o->seed);
  csv_write_comment(out, "scenario", s->name);
  fprintf(out, "# duration_s: %.17g\n", o->duration_s);
  fprintf(out, "# measured: the fraction of instances Spot reclaims in a "
          "month, per instance type and region (a band; the lower edge "
          "of \">20%%\")%s\n", o->monthly_frac > 0 ? "; overridden here by "
          "--monthly-frac" : "");
  fprintf(out, "# synthetic: when: a Poisson process per instance, "
          "independent across instances, rate -ln(1 - monthly_frac) / 30 "
          "days x rate_scale; how long: a fixed replacement time\n");
  fprintf(out, "# monthly_frac: %s\n# rate_scale: %.17g\n# replace_s: %.17g\n",
          o->monthly_frac > 0 ? "given" : "from the table", o->rate_scale,
          o->replace_s);
  if (o->monthly_frac > 0)
    fprintf(out, "# monthly_frac_given: %.17g\n", o->monthly_frac);
  fprintf(out, "# link_outages: %s\n", o->link_outages ? "on (measured on "
          "research and enterprise WANs, applied to the links between "
          "sites by assumption; cloud backbones are redundant)" : "off");
}

static int check_opts(const fault_synth_opts *o, err *e) {
  if (!(o->duration_s > 0 && o->duration_s <= SYNTH_MAX_S))
    return err_set(e, ERR_RANGE, "faults synth: --duration-s %g is not in "
                   "(0, %g]", o->duration_s, SYNTH_MAX_S);
  if (!(o->rate_scale > 0 && o->rate_scale <= 1e12))
    return err_set(e, ERR_RANGE, "faults synth: --rate-scale %g is not in "
                   "(0, 1e12]", o->rate_scale);
  if (!(o->replace_s > 0 && o->replace_s <= SYNTH_MAX_S))
    return err_set(e, ERR_RANGE, "faults synth: --replace-s %g is not in "
                   "(0, %g]", o->replace_s, SYNTH_MAX_S);
  if (!(o->monthly_frac >= 0 && o->monthly_frac < 1))
    return err_set(e, ERR_RANGE, "faults synth: --monthly-frac %g is not in "
                   "(0, 1)", o->monthly_frac);
  return ERR_OK;
}

int fault_synth_write(FILE *out, const char *path, const scenario *s,
                      const fault_params *p, const fault_synth_opts *o,
                      err *e) {
  int rc = check_opts(o, e);
  if (rc) return rc;
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, (unsigned long)o->seed);
  drawn d = {0};
  if ((rc = draw_sites(r, &d, s, p, o, e)) ||
      (o->link_outages && (rc = draw_links(r, &d, s, o, e))))
    goto done;
  if (d.n) qsort(d.v, d.n, sizeof *d.v, item_cmp);
  header(out, s, o);
  if (fprintf(out, "%s\n", FAULT_HEADER) < 0) {
    rc = err_set(e, ERR_IO, "%s: %s", path, strerror(errno));
    goto done;
  }
  for (size_t i = 0; i < d.n && !rc; i++)
    rc = fault_write_row(out, path, s, &d.v[i].ev, e);
done:
  free(d.v);
  gsl_rng_free(r);
  return rc;
}
