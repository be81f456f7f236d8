/* support: the test binaries' shared helpers (see support.h). Invariant:
 * folder[] is empty or names a folder that process owner made with mkdtemp
 * and has not removed; paths holds every string support_path handed out
 * since then, so they stay valid (and reachable for LeakSanitizer) until
 * support_dir_remove frees them together. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "tests/support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/db.h"
#include "base/mem.h"
#include "models/spec_workload.h"

typedef struct support_path_node support_path_node;
struct support_path_node {
  support_path_node *next;
  char path[]; /* NUL-terminated */
};

static char folder[256];
static pid_t owner;
static support_path_node *paths;
static int exit_hook;

/* printf into a malloc'd string of any length. */
static char *vformat(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  cr_assert_geq(n, 0, "bad format '%s'", fmt);
  char *s = mem_alloc((size_t)n + 1);
  vsnprintf(s, (size_t)n + 1, fmt, again);
  va_end(again);
  return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path) == 0 ? 0 : errno;
}

static void remove_at_exit(void) {
  if (folder[0] && owner == getpid())
    nftw(folder, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void support_dir_make(void) {
  if (folder[0] && owner == getpid()) return;
  /* A forked child inherits the parent's name: it makes its own folder and
   * leaves the parent's alone. */
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  int n = snprintf(folder, sizeof folder, "%s/geodes_test_XXXXXX", tmp);
  cr_assert(n > 0 && (size_t)n < sizeof folder, "TMPDIR too long: %s", tmp);
  cr_assert_not_null(mkdtemp(folder), "mkdtemp %s: %s", folder,
                     strerror(errno));
  owner = getpid();
  if (!exit_hook) exit_hook = atexit(remove_at_exit) == 0;
}

void support_dir_remove(void) {
  if (!folder[0] || owner != getpid()) return;
  int rc = nftw(folder, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  cr_expect_eq(rc, 0, "cannot remove %s: %s", folder,
               strerror(rc > 0 ? rc : errno));
  folder[0] = '\0';
  while (paths) {
    support_path_node *next = paths->next;
    free(paths);
    paths = next;
  }
}

const char *support_dir(void) {
  support_dir_make();
  return folder;
}

const char *support_path(const char *fmt, ...) {
  const char *dir = support_dir();
  va_list ap;
  va_start(ap, fmt);
  char *name = vformat(fmt, ap);
  va_end(ap);
  size_t n = strlen(dir) + 1 + strlen(name) + 1;
  support_path_node *p = mem_alloc(sizeof *p + n);
  snprintf(p->path, n, "%s/%s", dir, name);
  free(name);
  p->next = paths;
  paths = p;
  return p->path;
}

void support_run_clear(support_run *r) {
  if (!r) return;
  free(r->out);
  free(r->err);
  *r = (support_run){0};
}

/* A sanitizer report of a child goes to the test's own stderr, where ctest's
 * FAIL_REGULAR_EXPRESSION sees it; captured, it would be hidden. */
static void forward_reports(const char *line, const char *text) {
  static const char *const marks[] = {"ERROR: AddressSanitizer",
                                      "ERROR: LeakSanitizer", "runtime error:"};
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
    if (strstr(text, marks[i])) {
      fprintf(stderr, "support: `%s` wrote:\n%s\n", line, text);
      return;
    }
}

static int run_line(support_run *r, const char *line) {
  support_run local = {0};
  if (!r) r = &local;
  support_run_clear(r);
  char *out = format("%s/.support.out", support_dir());
  char *errs = format("%s/.support.err", support_dir());
  /* The braces let the line's own redirections apply inside the capture. */
  char *cmd = format("{ %s\n} >'%s' 2>'%s'", line, out, errs);
  fflush(NULL);
  int st = system(cmd);
  cr_assert_neq(st, -1, "cannot run %s: %s", line, strerror(errno));
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r->out = support_read_file(out, &r->out_len);
  r->err = support_read_file(errs, &r->err_len);
  unlink(out), unlink(errs);
  forward_reports(line, r->out);
  forward_reports(line, r->err);
  free(cmd), free(out), free(errs);
  int status = r->status;
  support_run_clear(&local);
  return status;
}

int support_sh(support_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *line = vformat(fmt, ap);
  va_end(ap);
  int status = run_line(r, line);
  free(line);
  return status;
}

int support_geodes(support_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *args = vformat(fmt, ap);
  va_end(ap);
  char *line = format("'%s' %s", GEODES_BIN, args);
  int status = run_line(r, line);
  cr_assert_lt(status, 128, "geodes %s: killed by signal %d", args,
               status - 128);
  free(line), free(args);
  return status;
}

json_t *support_geodes_json(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *args = vformat(fmt, ap);
  va_end(ap);
  support_run r = {0};
  int status = support_geodes(&r, "%s", args);
  cr_assert_eq(status, 0, "geodes %s: exit %d: %s", args, status, r.err);
  json_error_t je;
  json_t *o = json_loads(r.out, 0, &je);
  cr_assert(o, "geodes %s: stdout is not one JSON document (%s at line %d): "
            "%s", args, je.text, je.line, r.out);
  support_run_clear(&r);
  free(args);
  return o;
}

bool support_has_mpirun(void) {
  return support_sh(NULL, "command -v mpirun") == 0;
}

int support_geodes_mpi(support_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *args = vformat(fmt, ap);
  va_end(ap);
  int status = support_sh(r,
                          "OMPI_MCA_btl_vader_single_copy_mechanism=none "
                          "ASAN_OPTIONS=detect_leaks=0 mpirun "
                          "--allow-run-as-root --oversubscribe -n 2 '%s' %s",
                          GEODES_BIN, args);
  free(args);
  return status;
}

void support_sweep_three_ways(const char *sw, const char *args,
                              const char *one, const char *jobs,
                              const char *mpi, char *(*dump)(const char *)) {
  support_run r = {0};
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' %s", sw, one, args),
               0, "%s", r.err);
  cr_assert_eq(support_geodes(&r, "sweep '%s' --db '%s' --jobs 2 %s", sw,
                              jobs, args),
               0, "%s", r.err);
  char *a = dump(one), *b = dump(jobs);
  cr_expect_gt(strlen(a), 0, "%s: rows stored", sw);
  cr_expect_str_eq(a, b, "%s: --jobs 2 rows differ", sw);
  if (support_has_mpirun()) {
    cr_assert_eq(support_geodes_mpi(&r, "sweep '%s' --db '%s' %s", sw, mpi,
                                    args),
                 0, "%s", r.err);
    char *c = dump(mpi);
    cr_expect_str_eq(a, c, "%s: MPI rows differ", sw);
    free(c);
  }
  free(a), free(b);
  support_run_clear(&r);
}

char *support_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
  size_t cap = 1 << 12, n = 0, got;
  char *buf = mem_alloc(cap);
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
    if ((n += got) + 1 == cap) buf = mem_realloc(buf, cap *= 2);
  int bad = ferror(f);
  fclose(f);
  cr_assert_not(bad, "cannot read %s", path);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

const char *support_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  ok &= fclose(f) == 0;
  cr_assert(ok, "cannot write %s", path);
  return path;
}

int support_count_files(const char *prefix) {
  DIR *d = opendir(support_dir());
  cr_assert_not_null(d, "cannot list %s", support_dir());
  int n = 0;
  for (struct dirent *x; (x = readdir(d));)
    n += strncmp(x->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}

char *support_edit(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  cr_assert_not_null(at, "'%s' is not in the text", from);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  cr_assert_not_null(out);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return out;
}

long long support_sql_int(const char *path, const char *query) {
  sqlite3 *h;
  sqlite3_stmt *st = NULL;
  long long v = -1;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(h); /* a failed open still allocates the handle */
    return -1;
  }
  sqlite3_busy_timeout(h, 5000);
  if (sqlite3_prepare_v2(h, query, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

char *support_sql_text(const char *path, const char *query) {
  cr_assert_null(strchr(query, '\''), "a query without single quotes");
  support_run r = {0};
  cr_assert_eq(support_sh(&r, "sqlite3 '%s' '%s'", path, query), 0, "%s",
               r.err);
  char *out = r.out;
  r.out = NULL;
  support_run_clear(&r);
  return out;
}

scenario *support_scenario(const char *name) {
  err e = {0};
  scenario *s = scenario_load(name, &e);
  cr_assert_not_null(s, "%s: %s", name, e.msg);
  cr_assert_eq(e.code, ERR_OK, "%s: %s", name, e.msg);
  return s;
}

void support_world_resolve(support_world *x) {
  err e = {0};
  cr_assert_leq(x->s->ndevices, SUPPORT_WORLD_DEVICES);
  cr_assert_eq(spec_workload_resolve(x->s, &x->w, &e), ERR_OK, "%s", e.msg);
  cr_assert_eq(spec_device_gpus(x->s, x->gpu, &e), ERR_OK, "%s", e.msg);
}

void support_world_text(support_world *x, const char *text) {
  err e = {0};
  x->s = scenario_parse(text, strlen(text), "test", &e);
  cr_assert_not_null(x->s, "%s", e.msg);
  support_world_resolve(x);
}

void support_world_pair(support_world *x, const alloc *a, transport_model m,
                        predict_result *p, sim_result *sr) {
  transport_options o = transport_options_default();
  o.model = m;
  cr_assert_eq(predict_iteration_with(&x->w, x->s, x->gpu, a, &o, p), ERR_OK);
  sim_options so = sim_options_default();
  so.transport = o;
  err e = {0};
  cr_assert_eq(sim_run(x->s, a, &so, sr, &e), ERR_OK, "%s", e.msg);
}

/* spec's site i (its own, or the shared one), with its defaults. */
static support_site site_of(const support_spec *spec, int i) {
  support_site t = spec->sites ? spec->sites[i] : spec->site;
  if (!t.name && spec->names) t.name = spec->names[i];
  return t;
}

/* The scenario text spec describes (malloc'd). */
static char *build_text(const support_spec *spec) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  cr_assert_not_null(f);
  fprintf(f, "{\"name\": \"%s\", \"sites\": [\n",
          spec->name ? spec->name : "t");
  for (int i = 0; i < spec->nsites; i++) {
    support_site t = site_of(spec, i);
    fprintf(f, "%s{\"name\": \"", i ? ",\n" : "");
    if (t.name) fputs(t.name, f);
    else fprintf(f, "s%d", i);
    fprintf(f, "\", \"devices\": %d, \"gpu\": \"%s\"",
            t.devices > 0 ? t.devices : 1, t.gpu ? t.gpu : "V100");
    if (t.nic_gbps > 0) fprintf(f, ", \"nic_gbps\": %.17g", t.nic_gbps);
    fprintf(f, "%s}", t.keys ? t.keys : "");
  }
  fprintf(f, "],\n\"network\": {%s},\n\"workload\": {%s}}\n",
          spec->network ? spec->network
                        : "\"latency_ms\": 10, \"bandwidth_gbps\": 1",
          spec->workload ? spec->workload : "");
  cr_assert_eq(fclose(f), 0);
  return text;
}

const char *support_build_file(const support_spec *spec) {
  cr_assert_not_null(spec->file, "support_build_file: no file named");
  char *text = build_text(spec);
  const char *path = support_write_file(support_path("%s", spec->file), text);
  free(text);
  return path;
}

scenario *support_build(const support_spec *spec) {
  if (spec->file) return support_scenario(support_build_file(spec));
  char *text = build_text(spec), file[256];
  snprintf(file, sizeof file, "%s.json", spec->name ? spec->name : "t");
  err e = {0};
  scenario *s = scenario_parse(text, strlen(text), file, &e);
  cr_assert_not_null(s, "%s\n%s", e.msg, text);
  free(text);
  return s;
}

#define DISTINCT_REF(f, k) snprintf(refs[k], sizeof refs[k], "v%d", k), \
    r->f = refs[k]
#define DISTINCT_OWNED(f, k) free(r->f), r->f = strdup("v" #f)
#define DISTINCT_CHARS(f, k) snprintf(r->f, sizeof r->f, "v%d", k)
#define DISTINCT_CHARS16 DISTINCT_CHARS
#define DISTINCT_CHARS24 DISTINCT_CHARS
#define DISTINCT_CHARS48 DISTINCT_CHARS
#define DISTINCT_INT(f, k) r->f = 1000 + (k)
#define DISTINCT_REAL(f, k) r->f = (k) + 0.25

void support_result_distinct(db_result *r) {
  static char refs[DB_RESULT_NFIELDS][8];
  int k = 0;
#define X(f, col, type, sql, absent, since, origin) \
  DISTINCT_##type(f, k);                              \
  k++;
  DB_RESULT_MAP(X)
#undef X
}

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define SAME_REF(f) same_str(a->f, b->f)
#define SAME_OWNED(f) same_str(a->f, b->f)
#define SAME_CHARS16(f) same_str(a->f, b->f)
#define SAME_CHARS24(f) same_str(a->f, b->f)
#define SAME_CHARS48(f) same_str(a->f, b->f)
#define SAME_INT(f) (a->f == b->f)
#define SAME_REAL(f) (a->f == b->f || (isnan(a->f) && isnan(b->f)))

bool support_result_same(const db_result *a, const db_result *b,
                         const char *column) {
#define X(f, col, type, sql, absent, since, origin) \
  if (strcmp(column, col) == 0) return SAME_##type(f);
  DB_RESULT_MAP(X)
#undef X
  return false;
}

const char *support_three_asymmetric(const char *workload) {
  const char *csv = support_write_file(
      support_path("three.csv"),
      "t_s,src,dst,latency_ms,bandwidth_gbps\n"
      "0,A,A,0.01,100\n0,B,B,0.01,100\n0,C,C,0.01,100\n"
      "0,A,B,10,1\n0,B,A,10,0.1\n0,A,C,10,1\n0,C,A,10,1\n"
      "0,B,C,10,1\n0,C,B,10,1\n");
  static char text[1536];
  snprintf(text, sizeof text,
           "{\"name\": \"three\", \"sites\": ["
           "{\"name\": \"A\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 100},"
           "{\"name\": \"B\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 100},"
           "{\"name\": \"C\", \"devices\": 1, \"gpu\": \"V100\", \"nic_gbps\": 100}],"
           "\"network\": {\"trace\": \"%s\"},"
           "\"workload\": {\"model\": \"gpt3-xl\", \"stages\": 1, \"replicas\": 3, "
           "%s}}", csv, workload);
  return text;
}

char *support_dump_results(const char *path) {
  static const char *const cols[] = {
#define X(f, col, type, sql, absent, since, origin) col,
      DB_RESULT_MAP(X)
#undef X
  };
  char sql[4096];
  size_t at = (size_t)snprintf(sql, sizeof sql, "SELECT quote(%s)", cols[0]);
  for (size_t i = 1; i < sizeof cols / sizeof *cols; i++)
    at += (size_t)snprintf(sql + at, sizeof sql - at, ", quote(%s)", cols[i]);
  snprintf(sql + at, sizeof sql - at, " FROM results ORDER BY point_key");
  cr_assert_lt(at + 40, sizeof sql, "the query fits");
  return support_sql_text(path, sql);
}

int support_ring_plan(double S, int n, int *loops, int *slices, double *piece) {
  double chunk = 2.0 * 1024 * 1024, slice = 1024.0 * 1024;
  double L = fmin(128, fmax(1, ceil(S / (2 * n * chunk))));
  double sl = fmin(2, fmax(1, ceil(S / (2 * n * L) / slice)));
  *loops = (int)L, *slices = (int)sl;
  *piece = S / (n * L * sl);
  return 2 * (n - 1) * (int)L * (int)sl;
}

int support_ring_wait(int n, int loops, int slices, int k) {
  (void)loops;
  int per_loop = 2 * (n - 1) * slices, q = k % per_loop;
  if (q >= slices) return k - slices;
  return k >= per_loop && q == 0 ? k - 1 : -1;
}

double support_ring_uniform_s(double S, int n, double a, double b) {
  int L, sl;
  double p;
  support_ring_plan(S, n, &L, &sl, &p);
  double x = p / b, P = fmax(sl * x, x + a);
  return L * ((2 * n - 3) * P + sl * x + a);
}

fault_trace *support_faults(const scenario *s, const char *rows) {
  char text[4096];
  snprintf(text, sizeof text, FAULT_HEADER "\n%s", rows);
  err e;
  err_clear(&e);
  fault_trace *f = fault_parse(text, strlen(text), "f.csv", s, &e);
  cr_assert_not_null(f, "%s", e.msg);
  return f;
}

sim_training_opts support_training_opts(transport_model m, int n) {
  sim_training_opts o = sim_training_opts_default();
  o.sim.transport.model = m;
  o.iterations = n;
  return o;
}

void support_training_run(const scenario *s, const alloc *a,
                          const sim_training_opts *o, sim_training_result *r) {
  err e;
  err_clear(&e);
  cr_assert_eq(sim_training_run(s, a, o, r, &e), ERR_OK, "%s", e.msg);
}

scenario *support_random_scenario(gsl_rng *r, int ns, int stages, int replicas,
                                 bool asym) {
  if (ns > stages * replicas) ns = stages * replicas;
  int n = stages * replicas, *size = calloc((size_t)ns, sizeof *size);
  for (int i = 0; i < n; i++)
    size[i < ns ? i : (int)gsl_rng_uniform_int(r, (unsigned long)ns)]++;
  size_t cap = 4096 + (size_t)ns * ns * 120, len = 0;
  char *t = malloc(cap);
  len += (size_t)snprintf(t + len, cap - len, "{\"name\": \"r\", \"sites\": [");
  for (int x = 0; x < ns; x++)
    len += (size_t)snprintf(t + len, cap - len,
                            "%s{\"name\": \"s%d\", \"devices\": %d, \"gpu\": "
                            "\"V100\"}", x ? ", " : "", x, size[x]);
  len += (size_t)snprintf(t + len, cap - len,
                          "], \"network\": {\"latency_ms\": 1, "
                          "\"bandwidth_gbps\": 10%s", ns > 1 ? ", \"links\": [" : "");
  bool first = true;
  for (int x = 0; x < ns; x++)
    for (int y = 0; y < ns; y++) {
      if (x == y || (!asym && y < x)) continue;
      len += (size_t)snprintf(
          t + len, cap - len,
          "%s{\"%s\": %s\"s%d\", %s\"s%d\"%s, \"latency_ms\": %d, "
          "\"bandwidth_gbps\": %d}",
          first ? "" : ", ", asym ? "from" : "between", asym ? "" : "[", x,
          asym ? "\"to\": " : "", y, asym ? "" : "]",
          (int)gsl_rng_uniform_int(r, 4) * 10, 1 + (int)gsl_rng_uniform_int(r, 3));
      first = false;
    }
  snprintf(t + len, cap - len,
           "%s}, \"workload\": {\"model\": \"gpt3-xl\", \"batch\": %d, "
           "\"micro_batch\": 1, \"stages\": %d, \"replicas\": %d}}",
           ns > 1 ? "]" : "", replicas, stages, replicas);
  err e = {0};
  scenario *s = scenario_parse(t, strlen(t), "random", &e);
  cr_assert(s, "%s", e.msg);
  free(t);
  free(size);
  return s;
}
