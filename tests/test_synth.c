/* test_synth: synthetic-from-real traces. The output is checked against a
 * naive re-reading of the CSV (forward-filled per step) and against the
 * derived parameters: regime levels within jitter, bandwidth within bounds,
 * empirical switching rate and AR(1) moments near their closed forms; the
 * command line is checked for exit codes, messages and exact reproduction. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/builtin.h"
#include "tests/support.h"
#include "traces/scenario.h"
#include "traces/synth.h"
#include "traces/trace.h"

static const char two_sites[] =
    "# source: test\n"
    "t_s,src,dst,latency_ms,bandwidth_gbps\n"
    "0,Virginia,Virginia,5,2\n"
    "0,Virginia,Tokyo,143,0.524\n"
    "0,Tokyo,Virginia,143,0.524\n"
    "0,Tokyo,Tokyo,5,2\n";

static trace *load_text(const char *text, const char *name) {
  err e = {0};
  trace *t = trace_parse(text, strlen(text), name, NULL, 0, &e);
  cr_assert_not_null(t, "%s", e.msg);
  return t;
}

static trace *worldwide(void) {
  const builtin_file *f = builtin_find("worldwide.csv");
  cr_assert_not_null(f);
  err e = {0};
  trace *t = trace_parse(f->data, f->size, f->name, NULL, 0, &e);
  cr_assert_not_null(t, "%s", e.msg);
  return t;
}

static synth_params *params(void) {
  err e = {0};
  synth_params *p = synth_params_builtin(&e);
  cr_assert_not_null(p, "%s", e.msg);
  return p;
}

/* synth_write into a string; caller frees. */
static char *generate(const trace *base, const synth_params *p,
                      const synth_opts *o, size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  cr_assert_not_null(f);
  err e = {0};
  cr_assert_eq(synth_write(f, base, p, o, &e), ERR_OK, "%s", e.msg);
  fclose(f);
  if (len) *len = n;
  return buf;
}

/* Naive reference reader: the value of (src, dst) at every step k*step_s,
 * k = 0..nsteps, forward-filled from the rows. Returns the rows seen. */
static int series(const char *text, const char *src, const char *dst,
                  double step_s, int nsteps, double *lat, double *bw) {
  char *copy = strdup(text), *save = NULL;
  bool header = false;
  int rows = 0, k = 0;
  double cur_l = NAN, cur_b = NAN;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (l[0] == '#') continue;
    if (!header) {
      cr_assert_str_eq(l, "t_s,src,dst,latency_ms,bandwidth_gbps");
      header = true;
      continue;
    }
    double t, la, b;
    char s[64], d[64];
    cr_assert_eq(sscanf(l, "%lf,%63[^,],%63[^,],%lf,%lf", &t, s, d, &la, &b),
                 5, "bad row '%s'", l);
    if (strcmp(s, src) || strcmp(d, dst)) continue;
    while (k <= nsteps && k * step_s < t - 1e-9) lat[k] = cur_l, bw[k] = cur_b, k++;
    cur_l = la, cur_b = b, rows++;
  }
  while (k <= nsteps) lat[k] = cur_l, bw[k] = cur_b, k++;
  free(copy);
  return rows;
}

Test(synth, same_seed_same_bytes_other_seed_differs) {
  trace *base = worldwide();
  synth_params *p = params();
  synth_opts o = {.duration_s = 300, .step_s = 10, .seed = 7,
                  .command = "test", .base_name = "worldwide.csv"};
  size_t n1, n2, n3;
  char *a = generate(base, p, &o, &n1), *b = generate(base, p, &o, &n2);
  cr_assert_eq(n1, n2);
  cr_assert(memcmp(a, b, n1) == 0);
  o.seed = 8;
  char *c = generate(base, p, &o, &n3);
  cr_assert(n3 != n1 || memcmp(a, c, n1) != 0);
  free(a), free(b), free(c);
  synth_params_free(p);
  trace_free(base);
}

Test(synth, output_parses_and_covers_every_pair_at_t0) {
  trace *base = worldwide();
  synth_params *p = params();
  cr_assert_eq(synth_params_npairs(p), 28);
  synth_opts o = {.duration_s = 120, .step_s = 2.5, .seed = 3,
                  .command = "geodes trace synth", .base_name = "x"};
  char *text = generate(base, p, &o, NULL);
  trace *t = load_text(text, "synth.csv");
  int n = trace_nsites(base);
  cr_assert_eq(trace_nsites(t), n);
  cr_assert_str_eq(trace_comment(t, "synthetic_from_real"), "true");
  cr_assert_str_eq(trace_comment(t, "seed"), "3");
  cr_assert_str_eq(trace_comment(t, "derived_params"), "synth_params.csv");
  cr_assert_not_null(trace_comment(t, "sources"));
  cr_assert_not(trace_is_static(t));
  cr_assert_float_eq(trace_duration_s(t), 120, 1e-9);
  /* t = 0: every ordered pair, each within jitter of a regime level */
  int rows0 = 0;
  for (const char *l = strstr(text, "\n0,"); l; l = strstr(l + 1, "\n0,")) rows0++;
  cr_assert_eq(rows0, n * n);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      trace_value v = trace_at(t, a, b, 0), w = trace_at(base, a, b, 0);
      if (a == b) {
        cr_assert_float_eq(v.latency_ms, w.latency_ms, 1e-12);
        cr_assert_float_eq(v.bandwidth_gbps, w.bandwidth_gbps, 1e-12);
        continue;
      }
      const synth_pair *q =
          synth_params_pair(p, trace_site(base, a), trace_site(base, b));
      double r = v.latency_ms / w.latency_ms, tol = 3 * q->jitter_ratio + 1e-5;
      cr_assert(fabs(r / q->lat_ratio_low - 1) <= tol ||
                    fabs(r / q->lat_ratio_high - 1) <= tol,
                "%s-%s ratio %g", trace_site(base, a), trace_site(base, b), r);
      cr_assert_float_eq(v.bandwidth_gbps, w.bandwidth_gbps, 1e-5);
      /* both directions share regime and jitter */
      cr_assert_float_eq(v.latency_ms, trace_at(t, b, a, 0).latency_ms, 1e-3);
    }
  trace_free(t);
  free(text);
  synth_params_free(p);
  trace_free(base);
}

Test(synth, long_run_matches_derived_parameters) {
  trace *base = load_text(two_sites, "two.csv");
  synth_params *p = params();
  const synth_pair *q = synth_params_pair(p, "Tokyo", "Virginia");
  cr_assert(q->lat_ratio_high > q->lat_ratio_low * 1.1, "a two-level pair");
  enum { N = 20000 };
  double step = 10, dwell = 100;
  synth_opts o = {.duration_s = N * step, .step_s = step, .seed = 42,
                  .dwell_s = dwell};
  char *text = generate(base, p, &o, NULL);
  static double lat[N + 1], bw[N + 1], lat2[N + 1], bw2[N + 1];
  cr_assert_gt(series(text, "Virginia", "Tokyo", step, N, lat, bw), N / 2);
  series(text, "Tokyo", "Virginia", step, N, lat2, bw2);
  int switches = 0, high = 0, prev = -1;
  double sum = 0, sum2 = 0;
  for (int k = 0; k <= N; k++) {
    double r = lat[k] / 143, tol = 3 * q->jitter_ratio + 1e-5;
    bool lo = fabs(r / q->lat_ratio_low - 1) <= tol;
    bool hi = fabs(r / q->lat_ratio_high - 1) <= tol;
    cr_assert(lo || hi, "step %d: latency %g is no regime level", k, lat[k]);
    cr_assert_float_eq(lat[k], lat2[k], 1e-9, "symmetric latency");
    int state = hi;
    if (prev >= 0 && state != prev) switches++;
    prev = state, high += state;
    for (int d = 0; d < 2; d++) {
      double m = (d ? bw2[k] : bw[k]) / 0.524;
      cr_assert(m > 0 && m >= q->bw_lo - 1e-5 && m <= q->bw_hi + 1e-5,
                "step %d: bandwidth multiplier %g", k, m);
    }
    sum += bw[k] / 0.524, sum2 += (bw[k] / 0.524) * (bw[k] / 0.524);
  }
  double p_switch = 1 - exp(-step / dwell), rate = (double)switches / N;
  cr_assert(fabs(rate / p_switch - 1) < 0.15, "switch rate %g vs %g", rate,
            p_switch);
  cr_assert(high > N * 0.4 && high < N * 0.6, "time in high regime %d", high);
  double mean = sum / (N + 1), sd = sqrt(sum2 / (N + 1) - mean * mean);
  cr_assert(fabs(mean - 1) < 0.01, "bandwidth multiplier mean %g", mean);
  cr_assert(fabs(sd / q->bw_sd - 1) < 0.25, "sd %g vs %g", sd, q->bw_sd);
  free(text);
  synth_params_free(p);
  trace_free(base);
}

Test(synth, single_level_pair_never_switches) {
  trace *base = worldwide();
  synth_params *p = params();
  const synth_pair *q = synth_params_pair(p, "London", "Ireland");
  cr_assert_eq(q->lat_ratio_low, q->lat_ratio_high);
  /* unknown pairs take the "*,*" row */
  const synth_pair *d = synth_params_pair(p, "Mars", "Venus");
  cr_assert_eq(d->lat_ratio_low, 1.0);
  cr_assert_eq(d->lat_ratio_high, 1.0);
  synth_opts o = {.duration_s = 2000, .step_s = 10, .seed = 5, .dwell_s = 20};
  char *text = generate(base, p, &o, NULL);
  static double lat[201], bw[201];
  series(text, "London", "Ireland", 10, 200, lat, bw);
  for (int k = 0; k <= 200; k++)
    cr_assert(fabs(lat[k] / 12 - 1) <= 3 * q->jitter_ratio + 1e-5, "%g", lat[k]);
  free(text);
  synth_params_free(p);
  trace_free(base);
}

/* ---- bad parameter tables ---- */

static void bad_params(const char *text, int code, const char *needle) {
  err e = {0};
  synth_params *p = synth_params_parse(text, strlen(text), "p.csv", &e);
  cr_assert_null(p);
  cr_assert_eq(e.code, code, "code %d: %s", e.code, e.msg);
  cr_assert(strstr(e.msg, needle), "'%s' lacks '%s'", e.msg, needle);
}

#define HDR "a,b,lat_ratio_low,lat_ratio_high,jitter_ratio,bw_sd,bw_lo,bw_hi,dwell_real_days,dwell_s,bw_tau_s\n"
#define DEF "*,*,1,1,0.003,0.03,0.9,1.1,255,600,300\n"

Test(synth, params_errors_name_file_and_line) {
  bad_params("# c\na,b,c\n", ERR_PARSE, "p.csv:2: the header");
  bad_params("# only a comment\n", ERR_PARSE, "p.csv:1: no header");
  bad_params(HDR "A,B,1,1.1,0.003,0.03,0.9,1.1,255,600,300\n", ERR_MISSING,
             "p.csv:2: no default");
  bad_params(HDR DEF "A,B,1,x,0.003,0.03,0.9,1.1,255,600,300\n", ERR_PARSE,
             "p.csv:3: lat_ratio_high is not a finite number");
  bad_params(HDR DEF "A,B,1,nan,0.003,0.03,0.9,1.1,255,600,300\n", ERR_PARSE,
             "p.csv:3: lat_ratio_high");
  bad_params(HDR DEF "A,B,1.2,1.1,0.003,0.03,0.9,1.1,255,600,300\n", ERR_RANGE,
             "p.csv:3: lat_ratio_low");
  bad_params(HDR DEF "A,B,1,1,0.003,0.03,0,1.1,255,600,300\n", ERR_RANGE,
             "p.csv:3: bw_lo");
  bad_params(HDR DEF "A,B,1,1,0.003,0.03,0.9,1.1,255,0,300\n", ERR_RANGE,
             "p.csv:3: dwell_s");
  bad_params(HDR DEF "A,B,1,1,0.003,0.03,0.9,1.1\n", ERR_PARSE,
             "p.csv:3: 8 fields");
  bad_params(HDR DEF "A,B,1,1,0.003,0.03,0.9,1.1,255,600,300\n"
                     "B,A,1,1,0.003,0.03,0.9,1.1,255,600,300\n",
             ERR_DUPLICATE, "p.csv:4: pair B,A");
  bad_params(HDR DEF DEF, ERR_DUPLICATE, "p.csv:3: second");
  bad_params(HDR "*,B,1,1,0.003,0.03,0.9,1.1,255,600,300\n", ERR_PARSE,
             "p.csv:2: the default row");
}

Test(synth, bad_options_are_range_errors) {
  trace *base = load_text(two_sites, "two.csv");
  synth_params *p = params();
  err e = {0};
  synth_opts o = {.duration_s = 5, .step_s = 10, .seed = 1};
  cr_assert_eq(synth_write(stdout, base, p, &o, &e), ERR_RANGE);
  o = (synth_opts){.duration_s = 5, .step_s = 0, .seed = 1};
  err_clear(&e);
  cr_assert_eq(synth_write(stdout, base, p, &o, &e), ERR_RANGE);
  synth_params_free(p);
  trace_free(base);
}

/* Before the cap, 1e8 one-second steps were accepted and would have written
 * about 240 GB that trace_load could never read back. */
Test(synth, output_too_large_to_read_back_is_refused) {
  trace *base = worldwide();
  synth_params *p = params();
  err e = {0};
  synth_opts o = {.duration_s = 1e8, .step_s = 1, .seed = 1};
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  cr_assert_eq(synth_write(out, base, p, &o, &e), ERR_RANGE, "%s", e.msg);
  fclose(out);
  cr_expect_eq(len, 0, "wrote %zu bytes before refusing", len);
  cr_expect(strstr(e.msg, "more than a trace may be"), "%s", e.msg);
  /* a day of minutes is far inside */
  err_clear(&e);
  o = (synth_opts){.duration_s = 86400, .step_s = 60, .seed = 1};
  out = fopen("/dev/null", "w");
  cr_expect_eq(synth_write(out, base, p, &o, &e), ERR_OK, "%s", e.msg);
  fclose(out);
  free(buf);
  synth_params_free(p);
  trace_free(base);
}

/* ---- the command line ---- */

TestSuite(synth_cli, .init = support_dir_make, .fini = support_dir_remove);

/* Runs `cd TMP && GEODES_BIN args`; its exit status, stderr in r->err. */
static int geodes(support_run *r, const char *args) {
  return support_sh(r, "cd '%s' && '%s' %s", support_dir(), GEODES_BIN, args);
}

/* The command line refuses it too, and leaves no file behind. */
Test(synth_cli, too_long_a_trace_is_refused) {
  support_run r = {0};
  cr_expect_eq(geodes(&r, "trace synth --duration-s 1e8 --step-s 1 --seed 1 "
                      "-o big.csv"), 1, "%s", r.err);
  cr_expect(strstr(r.err, "take a longer step or a shorter duration"), "%s",
            r.err);
  cr_expect_neq(access(support_path("big.csv"), F_OK), 0, "big.csv was left");
  support_run_clear(&r);
}

Test(synth_cli, synth_then_check) {
  support_run r = {0};
  cr_assert_eq(geodes(&r, "trace synth --duration-s 60 --step-s 5 --seed 9 "
                          "-o o.csv"),
               0, "%s", r.err);
  cr_assert_eq(geodes(&r, "trace check o.csv"), 0, "%s", r.err);
  cr_assert_eq(geodes(&r, "trace check o.csv --scenario worldwide"), 0, "%s",
               r.err);
  cr_assert_eq(geodes(&r, "trace synth --help"), 0);
  support_run_clear(&r);
}

Test(synth_cli, usage_errors_exit_2) {
  support_run r = {0};
  const char *cases[] = {
      "trace synth --step-s 5 --seed 1 -o o.csv",
      "trace synth --duration-s 60 --seed 1 -o o.csv",
      "trace synth --duration-s 60 --step-s 5 -o o.csv",
      "trace synth --duration-s 60 --step-s 5 --seed 1",
      "trace synth --duration-s 60 --step-s 0 --seed 1 -o o.csv",
      "trace synth --duration-s 60 --step-s -1 --seed 1 -o o.csv",
      "trace synth --duration-s 4 --step-s 5 --seed 1 -o o.csv",
      "trace synth --duration-s 60 --step-s 5 --seed x -o o.csv",
      "trace synth --duration-s 60 --step-s 5 --seed 1 -o o.csv --bogus",
      "trace synth --duration-s 60 --step-s 5 --seed 1 -o o.csv extra",
      "trace synth --duration-s 60 --step-s 5 --seed 1 -o",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(geodes(&r, cases[i]), 2, "%s: %s", cases[i], r.err);
    cr_assert(strstr(r.err, "trace synth"), "%s: %s", cases[i], r.err);
  }
  support_run_clear(&r);
}

Test(synth_cli, malformed_base_names_file_and_line) {
  support_write_file(support_path("bad.csv"),
                     "# comment\nt_s,src,dst,latency_ms,bandwidth_gbps\n"
                     "0,A,A,5,2\n0,A,B,5,-1\n0,B,A,5,1\n0,B,B,5,2\n");
  support_run r = {0};
  cr_assert_eq(geodes(&r, "trace synth --duration-s 60 --step-s 5 --seed 1 "
                          "--base bad.csv -o o.csv"),
               1, "%s", r.err);
  cr_assert(strstr(r.err, "bad.csv:4:"), "%s", r.err);
  cr_assert_eq(geodes(&r, "trace synth --duration-s 60 --step-s 5 --seed 1 "
                          "--base missing.csv -o o.csv"),
               1);
  cr_assert(strstr(r.err, "missing.csv"), "%s", r.err);
  support_run_clear(&r);
}

/* The committed worldwide-varying.csv is what its recorded command writes. */
Test(synth_cli, committed_trace_is_reproduced) {
  size_t n;
  char *want = support_read_file(
      GEODES_SOURCE_DIR "/traces/data/worldwide-varying.csv", &n);
  const char *key = "# generated_by: geodes ";
  char *g = strstr(want, key);
  cr_assert_not_null(g);
  g += strlen(key);
  char args[1024];
  size_t len = strcspn(g, "\n");
  cr_assert_lt(len, sizeof args);
  memcpy(args, g, len), args[len] = '\0';
  support_run r = {0};
  cr_assert_eq(geodes(&r, args), 0, "%s: %s", args, r.err);
  support_run_clear(&r);
  char *o = strstr(args, " -o ");
  cr_assert_not_null(o);
  size_t m;
  char *got = support_read_file(support_path("%s", o + 4), &m);
  cr_assert_eq(m, n, "size %zu vs %zu", m, n);
  cr_assert(memcmp(got, want, n) == 0);
  free(got);
  free(want);
}

Test(synth, worldwide_varying_scenario_loads) {
  err e = {0};
  scenario *s = scenario_load("worldwide-varying", &e);
  cr_assert_not_null(s, "%s", e.msg);
  cr_assert_eq(s->ndevices, 64);
  cr_assert_eq(s->nsites, 8);
  cr_assert_not(trace_is_static(s->network));
  cr_assert_str_eq(trace_comment(s->network, "synthetic_from_real"), "true");
  cr_assert_float_eq(s->activation_gb, 0.5, 1e-12);
  cr_assert_float_eq(s->gradient_gb, 0.9, 1e-12);
  cr_assert_eq(s->workload.micro_batches_per_pass, 64);
  scenario_free(s);
}
