/* synth: synthetic-from-real traces.
 * Invariant: the output is a pure function of (base, params, options, seed).
 * Draws come from one gsl_rng_mt19937 in a fixed order — per step, per
 * unordered pair (i < j): one uniform (regime switch), truncated normals for
 * the shared latency jitter, then one normal per direction (bandwidth) — and
 * a row is written exactly when its formatted text differs from the last one
 * written for that ordered pair, so equal inputs give equal bytes. */
#include "traces/synth.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/builtin.h"
#include "base/file.h"
#include "base/mem.h"
#include "traces/csv.h"

#define SYNTH_HEADER                                                      \
  "a,b,lat_ratio_low,lat_ratio_high,jitter_ratio,bw_sd,bw_lo,bw_hi,"     \
  "dwell_real_days,dwell_s,bw_tau_s"
#define SYNTH_NCOLS 11
#define SYNTH_JITTER_CUT 3.0   /* jitter is a normal truncated at 3 sd */
#define SYNTH_MAX_STEPS 100000000LL

typedef struct synth_row {
  char *a, *b;
  synth_pair v;
} synth_row;

struct synth_params {
  synth_row *rows;  /* pair rows in file order */
  int nrows;
  bool has_default;
  synth_pair def;   /* the "*,*" row */
};

/* ---- parsing ---------------------------------------------------------- */

static bool parse_num(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Splits line (modified in place) at commas into at most max fields. */
static int split(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line;; p++) {
    if (n < max) f[n] = p;
    n++;
    p = strchr(p, ',');
    if (!p) break;
    *p = '\0';
  }
  return n;
}

static int check_pair(const synth_pair *v, const char *name, int line, err *e) {
  if (!(v->lat_ratio_low > 0 && v->lat_ratio_high >= v->lat_ratio_low))
    return err_set(e, ERR_RANGE,
                   "%s:%d: lat_ratio_low must be > 0 and <= lat_ratio_high",
                   name, line);
  if (!(v->jitter_ratio >= 0 && v->jitter_ratio * SYNTH_JITTER_CUT < 1))
    return err_set(e, ERR_RANGE, "%s:%d: jitter_ratio must be in [0, %g)",
                   name, line, 1 / SYNTH_JITTER_CUT);
  if (!(v->bw_sd >= 0))
    return err_set(e, ERR_RANGE, "%s:%d: bw_sd must be >= 0", name, line);
  if (!(v->bw_lo > 0 && v->bw_lo <= 1))
    return err_set(e, ERR_RANGE, "%s:%d: bw_lo must be in (0, 1]", name, line);
  if (!(v->bw_hi >= 1))
    return err_set(e, ERR_RANGE, "%s:%d: bw_hi must be >= 1", name, line);
  if (!(v->dwell_real_days > 0))
    return err_set(e, ERR_RANGE, "%s:%d: dwell_real_days must be > 0", name,
                   line);
  if (!(v->dwell_s > 0))
    return err_set(e, ERR_RANGE, "%s:%d: dwell_s must be > 0", name, line);
  if (!(v->bw_tau_s > 0))
    return err_set(e, ERR_RANGE, "%s:%d: bw_tau_s must be > 0", name, line);
  return ERR_OK;
}

static bool same_pair(const synth_row *r, const char *a, const char *b) {
  return (strcmp(r->a, a) == 0 && strcmp(r->b, b) == 0) ||
         (strcmp(r->a, b) == 0 && strcmp(r->b, a) == 0);
}

/* Parses one data row (fields f[0..SYNTH_NCOLS-1]) into p. */
static int parse_row(synth_params *p, size_t *cap, char **f, const char *name,
                     int line, err *e) {
  static const char *const cols[] = {
      "a", "b", "lat_ratio_low", "lat_ratio_high", "jitter_ratio", "bw_sd",
      "bw_lo", "bw_hi", "dwell_real_days", "dwell_s", "bw_tau_s"};
  double x[SYNTH_NCOLS];
  for (int c = 2; c < SYNTH_NCOLS; c++)
    if (!parse_num(f[c], &x[c]))
      return err_set(e, ERR_PARSE, "%s:%d: %s is not a finite number: '%s'",
                     name, line, cols[c], f[c]);
  synth_pair v = {x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10]};
  int rc = check_pair(&v, name, line, e);
  if (rc) return rc;
  bool star_a = strcmp(f[0], "*") == 0, star_b = strcmp(f[1], "*") == 0;
  if (star_a || star_b) {
    if (!(star_a && star_b))
      return err_set(e, ERR_PARSE, "%s:%d: the default row is \"*,*\"", name,
                     line);
    if (p->has_default)
      return err_set(e, ERR_DUPLICATE, "%s:%d: second \"*,*\" row", name,
                     line);
    p->has_default = true;
    p->def = v;
    return ERR_OK;
  }
  if (!*f[0] || !*f[1] || strcmp(f[0], f[1]) == 0)
    return err_set(e, ERR_PARSE, "%s:%d: a and b must be two distinct sites",
                   name, line);
  for (int i = 0; i < p->nrows; i++)
    if (same_pair(&p->rows[i], f[0], f[1]))
      return err_set(e, ERR_DUPLICATE, "%s:%d: pair %s,%s is listed twice",
                     name, line, f[0], f[1]);
  mem_grow((void **)&p->rows, cap, (size_t)p->nrows + 1, sizeof *p->rows);
  p->rows[p->nrows++] =
      (synth_row){mem_strdup(f[0]), mem_strdup(f[1]), v};
  return ERR_OK;
}

synth_params *synth_params_parse(const char *text, size_t len,
                                 const char *name, err *e) {
  synth_params *p = mem_calloc(1, sizeof *p);
  size_t cap = 0;
  int line = 0, rc = ERR_OK;
  bool header = false;
  const char *end = text + len;
  for (const char *s = text; s < end && rc == ERR_OK;) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = (size_t)((nl ? nl : end) - s);
    char *l = mem_strndup(s, n);
    s = nl ? nl + 1 : end;  /* never past the end */
    line++;
    size_t k = strlen(l);
    if (k && l[k - 1] == '\r') l[--k] = '\0';
    if (l[0] == '#' || k == 0) {
      free(l);
      continue;
    }
    if (!header) {
      if (strcmp(l, SYNTH_HEADER) != 0)
        rc = err_set(e, ERR_PARSE, "%s:%d: the header must be %s", name, line,
                     SYNTH_HEADER);
      header = true;
    } else {
      char *f[SYNTH_NCOLS];
      int nf = split(l, f, SYNTH_NCOLS);
      if (nf != SYNTH_NCOLS)
        rc = err_set(e, ERR_PARSE, "%s:%d: %d fields, expected %d", name, line,
                     nf, SYNTH_NCOLS);
      else
        rc = parse_row(p, &cap, f, name, line, e);
    }
    free(l);
  }
  if (rc == ERR_OK && !header)
    rc = err_set(e, ERR_PARSE, "%s:%d: no header line", name, line);
  if (rc == ERR_OK && !p->has_default)
    rc = err_set(e, ERR_MISSING, "%s:%d: no default \"*,*\" row", name, line);
  if (rc != ERR_OK) {
    synth_params_free(p);
    return NULL;
  }
  return p;
}

synth_params *synth_params_builtin(err *e) {
  const builtin_file *f = builtin_find("synth_params.csv");
  if (!f) {
    err_set(e, ERR_MISSING, "synth_params.csv:0: not built in");
    return NULL;
  }
  return synth_params_parse(f->data, f->size, f->name, e);
}

void synth_params_free(synth_params *p) {
  if (!p) return;
  for (int i = 0; i < p->nrows; i++) {
    free(p->rows[i].a);
    free(p->rows[i].b);
  }
  free(p->rows);
  free(p);
}

const synth_pair *synth_params_pair(const synth_params *p, const char *a,
                                    const char *b) {
  for (int i = 0; i < p->nrows; i++)
    if (same_pair(&p->rows[i], a, b)) return &p->rows[i].v;
  return &p->def;
}

int synth_params_npairs(const synth_params *p) { return p->nrows; }

/* ---- generation ------------------------------------------------------- */

/* State of one unordered pair i < j. */
typedef struct synth_state {
  const synth_pair *par;
  double p_switch;   /* probability of leaving the regime in one step */
  double phi, innov; /* AR(1): x' = phi x + innov * N(0, 1) */
  int regime;        /* 0: lat_ratio_low, 1: lat_ratio_high */
  double x[2];       /* bandwidth deviations, direction i->j and j->i */
} synth_state;

typedef struct synth_text {
  char lat[32], bw[32];
} synth_text;

/* Seconds with exactly the digits an integer number of ns needs. */
static void format_time(char *buf, size_t size, int64_t ns) {
  int64_t s = ns / TRACE_NS_PER_S, frac = ns % TRACE_NS_PER_S;
  if (frac == 0) {
    snprintf(buf, size, "%lld", (long long)s);
    return;
  }
  int digits = 9;
  while (frac % 10 == 0) frac /= 10, digits--;
  snprintf(buf, size, "%lld.%0*lld", (long long)s, digits, (long long)frac);
}

static double truncated_normal(gsl_rng *r) {
  double z;
  do z = gsl_ran_gaussian_ziggurat(r, 1.0);
  while (fabs(z) > SYNTH_JITTER_CUT);
  return z;
}

static double clamp(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static void write_header(FILE *out, const trace *base, const synth_opts *o,
                         double dwell_note) {
  fputs("# synthetic_from_real: true\n", out);
  if (o->command) csv_write_comment(out, "generated_by", o->command);
  fprintf(out, "# seed: %llu\n", (unsigned long long)o->seed);
  if (o->base_name) csv_write_comment(out, "base", o->base_name);
  const char *bs = trace_comment(base, "source");
  if (bs) fprintf(out, "# base_source: %s\n", bs);
  const char *bl = trace_comment(base, "licence");
  if (bl) fprintf(out, "# base_licence: %s\n", bl);
  fputs("# sources: Skyplane ping and 64-stream throughput grids 2022 "
        "(Apache-2.0); CloudPilot iperf3 runs 2021 (Apache-2.0); DoiT "
        "intercloud pings 2022 (Apache-2.0); cloudping.co p50 2022 (no "
        "licence: derived numbers only) and 2025 (Apache-2.0); IBM Cloud VPC "
        "weekly RTT 2023-2026 (no licence: derived numbers only)\n", out);
  fputs("# licence: the modulation uses derived numbers only, no source "
        "data (see synth_params.csv); base values keep the base's licence\n",
        out);
  fputs("# derived_params: synth_params.csv\n", out);
  fprintf(out,
          "# model: per unordered site pair a two-level Markov latency regime "
          "(mean dwell %s), truncated-normal jitter, an AR(1) bandwidth "
          "multiplier per direction clamped to derived bounds; both directions "
          "share regime and jitter (routes are symmetric); each site with "
          "itself keeps the base value\n",
          dwell_note > 0 ? "overridden" : "from the table");
  if (dwell_note > 0) fprintf(out, "# dwell_s: %.17g\n", dwell_note);
  fputs("t_s,src,dst,latency_ms,bandwidth_gbps\n", out);
}

static void init_states(synth_state *st, const trace *base,
                        const synth_params *p, const synth_opts *o,
                        double step_s) {
  int n = trace_nsites(base), k = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++, k++) {
      const synth_pair *par =
          synth_params_pair(p, trace_site(base, i), trace_site(base, j));
      double dwell = o->dwell_s > 0 ? o->dwell_s : par->dwell_s;
      double phi = exp(-step_s / par->bw_tau_s);
      st[k] = (synth_state){
          .par = par,
          .p_switch = par->lat_ratio_high > par->lat_ratio_low
                          ? -expm1(-step_s / dwell)
                          : 0,
          .phi = phi,
          .innov = par->bw_sd * sqrt(1 - phi * phi),
          /* start in the regime nearer the base value (ratio 1) */
          .regime = fabs(log(par->lat_ratio_high)) <
                    fabs(log(par->lat_ratio_low)),
      };
    }
}

/* Everything one generation run holds, allocated once. */
typedef struct synth_run {
  FILE *out;
  const trace *base;
  synth_state *st;    /* per unordered pair */
  synth_text *last;   /* per ordered pair: the text last written */
  double *lat_f, *bw_f; /* per ordered pair: this step's multipliers */
  gsl_rng *r;
} synth_run;

/* Writes row (a, b) with value v at time tbuf if its text changed (always
 * when force). */
static void emit(const synth_run *run, int a, int b, const char *tbuf,
                 trace_value v, bool force) {
  int n = trace_nsites(run->base);
  synth_text now;
  snprintf(now.lat, sizeof now.lat, "%.6g", v.latency_ms);
  snprintf(now.bw, sizeof now.bw, "%.6g", v.bandwidth_gbps);
  synth_text *l = &run->last[a * n + b];
  if (!force && strcmp(now.lat, l->lat) == 0 && strcmp(now.bw, l->bw) == 0)
    return;
  *l = now;
  fprintf(run->out, "%s,", tbuf);
  csv_write_field(run->out, trace_site(run->base, a));
  putc(',', run->out);
  csv_write_field(run->out, trace_site(run->base, b));
  fprintf(run->out, ",%s,%s\n", now.lat, now.bw);
}

/* One step: advance every pair's state (k > 0) and write changed rows. */
static void step(synth_run *run, int64_t k, int64_t t_ns) {
  const trace *base = run->base;
  synth_state *st = run->st;
  double *lat_f = run->lat_f, *bw_f = run->bw_f;
  gsl_rng *r = run->r;
  int n = trace_nsites(base);
  char tbuf[48];
  format_time(tbuf, sizeof tbuf, t_ns);
  int q = 0;
  for (int i = 0; i < n; i++) {
    lat_f[i * n + i] = bw_f[i * n + i] = 1;
    for (int j = i + 1; j < n; j++, q++) {
      synth_state *s = &st[q];
      const synth_pair *par = s->par;
      if (k > 0 && gsl_rng_uniform(r) < s->p_switch) s->regime = !s->regime;
      double level = s->regime ? par->lat_ratio_high : par->lat_ratio_low;
      double f = level * (1 + par->jitter_ratio * truncated_normal(r));
      lat_f[i * n + j] = lat_f[j * n + i] = f;
      for (int d = 0; d < 2; d++) {
        double eps = gsl_ran_gaussian_ziggurat(r, 1.0);
        if (k > 0) s->x[d] = s->phi * s->x[d] + s->innov * eps;
      }
      bw_f[i * n + j] = clamp(1 + s->x[0], par->bw_lo, par->bw_hi);
      bw_f[j * n + i] = clamp(1 + s->x[1], par->bw_lo, par->bw_hi);
    }
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      trace_value v = trace_at(base, a, b, t_ns);
      trace_value w = {.latency_ms = v.latency_ms * lat_f[a * n + b],
                       .bandwidth_gbps = v.bandwidth_gbps * bw_f[a * n + b]};
      emit(run, a, b, tbuf, w, k == 0);
    }
}

/* Refuses a trace that trace_load could not read back: at most n^2 rows per
 * step (every ordered pair changes), each no longer than its time, names and
 * two "%.6g" values; as a file (FILE_MAX_BYTES) and in memory
 * (TRACE_MAX_BYTES, a row being at most one change point). Checked before
 * the first byte is written. */
static int check_size(const trace *base, int64_t nsteps, int64_t step_ns,
                      err *e) {
  int n = trace_nsites(base);
  double names = 0;
  for (int a = 0; a < n; a++) names += strlen(trace_site(base, a));
  char tbuf[48];
  format_time(tbuf, sizeof tbuf, nsteps * step_ns + 1); /* most digits */
  double per_step_rows = (double)n * n;
  double per_step = 2.0 * n * names +
                    per_step_rows * (strlen(tbuf) + 2 * 12 + 5);
  double rows = per_step_rows * (double)(nsteps + 1);
  double bytes = per_step * (double)(nsteps + 1);
  double memory = trace_bytes(rows, rows, n);
  if (bytes <= (double)FILE_MAX_BYTES && memory <= (double)TRACE_MAX_BYTES)
    return ERR_OK;
  return err_set(e, ERR_RANGE,
                 "synth: %lld steps over %d sites may write %.0f rows (%.2f GB "
                 "of file, %.2f GB to read back), more than a trace may be "
                 "(%.2f GB of file, %.2f GB in memory): take a longer step or "
                 "a shorter duration",
                 (long long)nsteps + 1, n, rows, bytes / 1e9, memory / 1e9,
                 (double)FILE_MAX_BYTES / 1e9, (double)TRACE_MAX_BYTES / 1e9);
}

int synth_write(FILE *out, const trace *base, const synth_params *p,
                const synth_opts *o, err *e) {
  if (!(o->step_s > 0 && isfinite(o->step_s)))
    return err_set(e, ERR_RANGE, "synth: step_s must be > 0");
  int64_t step_ns = llround(o->step_s * 1e9);
  if (step_ns < 1)
    return err_set(e, ERR_RANGE, "synth: step_s is below one nanosecond");
  if (!(o->duration_s >= o->step_s && isfinite(o->duration_s)))
    return err_set(e, ERR_RANGE, "synth: duration_s must be >= step_s");
  if (!(o->dwell_s >= 0 && isfinite(o->dwell_s)))
    return err_set(e, ERR_RANGE, "synth: dwell_s must be >= 0");
  if (trace_has_path(base)) /* not carried: refused, never dropped */
    return err_set(e, ERR_CONFIG, "synth: the base trace gives path keys "
                   "(flow_gbps, loss, window_bytes); synth modulates latency "
                   "and bandwidth only: give a base without them");
  double dur_ns = floor(o->duration_s * 1e9 + 0.5);
  if (dur_ns / (double)step_ns > (double)SYNTH_MAX_STEPS)
    return err_set(e, ERR_RANGE, "synth: more than %lld steps",
                   SYNTH_MAX_STEPS);
  int64_t nsteps = (int64_t)dur_ns / step_ns;
  double step_s = (double)step_ns / 1e9;
  int rc = check_size(base, nsteps, step_ns, e);
  if (rc) return rc;

  size_t n = (size_t)trace_nsites(base);
  size_t npairs = n * (n - 1) / 2;
  synth_run run = {
      .out = out,
      .base = base,
      .st = mem_calloc(npairs ? npairs : 1, sizeof *run.st),
      .last = mem_calloc(n * n, sizeof *run.last),
      .lat_f = mem_calloc(n * n, sizeof *run.lat_f),
      .bw_f = mem_calloc(n * n, sizeof *run.bw_f),
      .r = gsl_rng_alloc(gsl_rng_mt19937),
  };
  assert(run.r);
  init_states(run.st, base, p, o, step_s);
  gsl_rng_set(run.r, (unsigned long)o->seed);

  write_header(out, base, o, o->dwell_s);
  for (int64_t k = 0; k <= nsteps; k++) step(&run, k, k * step_ns);

  gsl_rng_free(run.r);
  free(run.bw_f);
  free(run.lat_f);
  free(run.last);
  free(run.st);
  if (fflush(out) != 0 || ferror(out))
    return err_set(e, ERR_IO, "synth: cannot write the trace: %s",
                   strerror(errno));
  return ERR_OK;
}
