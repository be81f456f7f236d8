/* cli_sweep: `geodes sweep SWEEP.json [--db FILE] [--jobs N]` — every point
 * of a sweep file simulated once into the results database, resumable, on
 * the cores of one machine (--jobs) or over MPI ranks (mpirun -n K). MPI is
 * initialised here and only when mpirun launched the process: geodes itself
 * is not linked with MPI (its start-up loads none of Open MPI's libraries),
 * so under mpirun it execs geodes-mpi, the same commands linked with MPI,
 * from its own folder. SIGINT or
 * SIGTERM stops a sweep cleanly: what is stored is committed, the run is
 * marked "interrupted" and the exit status is 128 + the signal. */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/eval.h"
#include "analysis/params_file.h"
#include "analysis/sweep_mpi.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/spec.h"
#include "sim/cli/cli.h"
#include "sim/cli/cli_progress.h"

/* The width the list of keys is wrapped to. */
#define SWEEP_KEYS_WIDTH 69

/* The help after the option lines: the keys (sweep_key_name's), the GPUs
 * known, an example. */
static void sweep_more(void) {
  printf("\nKeys:");
  size_t col = sizeof "Keys:" - 1;
  for (size_t i = 0; sweep_key_name(i); i++) {
    const char *k = sweep_key_name(i);
    bool wrap = col + 1 + strlen(k) > SWEEP_KEYS_WIDTH;
    col = wrap ? strlen(k) : col + 1 + strlen(k);
    printf("%s%s", wrap ? "\n" : " ", k);
  }
  printf("\nFormer names, still read:");
  for (size_t i = 0; sweep_key_name(i); i++)
    if (sweep_key_alias(i)) printf(" %s", sweep_key_alias(i));
  printf(
      "\n\n"
      "  iterations, faults, recovery, checkpoint_every: a training run\n"
      "               (traces/FORMATS.md; as simulate --iterations ...):\n"
      "               faults names fault files (read against every\n"
      "               scenario), recovery restart | reroute | replan.\n"
      "               Its iterations go to the table iterations, its\n"
      "               faults and trace changes to marks\n"
      "  gpu          GPU type of every device (any letter case); absent:\n"
      "               each site's own. The column gpu of a row is the GPU\n"
      "               simulated: one name, or the sites' distinct names\n"
      "               joined by commas. Known:");
  int n;
  const spec_gpu *g = spec_gpus(&n);
  for (int i = 0; i < n; i++) printf(" %s", g[i].name);
  printf("\nExample: {\"method\": [\"megatron-order\", \"gcma\"],\n"
         "          \"gpu\": [\"V100\", \"A100\"], \"seed\": [1, 2]}\n"
         "is 2 x 2 x 2 = 8 points.\n");
}

static const cli_opt_command SWEEP = {
    .name = "sweep",
    .usage =
        "usage: geodes sweep SWEEP.json [--db FILE] [--jobs N] [--batch N] "
        "[--json]\n\n"
        "Simulates every point of a sweep (traces/FORMATS.md: an array "
        "value\n"
        "is crossed, a scalar fixed) and stores one row per point in the\n"
        "results database. A point already there is skipped, so running the\n"
        "same command again after a kill computes only what is missing; a "
        "row\n"
        "made from other inputs (the scenario or its trace edited since, "
        "other\n"
        "built-in data, an older model) is stale: recomputed and replaced.\n"
        "Ctrl-C (SIGINT) or SIGTERM stops it cleanly: rows done are\n"
        "committed, the run is marked interrupted, exit status 128 + "
        "signal.\n"
        "Under `mpirun -n K geodes sweep ...` the points are spread over the\n"
        "K ranks and rank 0 writes the database.\n\n",
    .width = 13, .args_min = 1, .args_max = 1,
    .missing = "wants one sweep file", .extra = "wants one sweep file",
    .more = sweep_more};

/* The sweep file's text: read by rank 0, broadcast under MPI. NULL (and e
 * naming the file and the reason) when it cannot be read — a folder, a
 * device or a FIFO included (file_read reads regular files only). */
static char *read_text(const char *path, bool mpi, int rank, long *len,
                       err *e) {
  char *text = NULL;
  *len = -1;
  if (rank == 0) {
    size_t n;
    text = file_load(path, "the sweep file", FILE_MAX_JSON_BYTES, &n, e);
    if (text) *len = (long)n;
  }
  if (mpi) text = sweep_mpi_bcast(text, len);
  return text;
}

static void report(const sweep_stats *st, const char *db_path, int ranks,
                   int jobs, bool json) {
  double rate = st->computed / (st->seconds > 0 ? st->seconds : 1e-9);
  if (json) {
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:i, s:i, s:s}", "points",
        (json_int_t)st->total, "present", (json_int_t)st->present, "stale",
        (json_int_t)st->stale, "computed", (json_int_t)st->computed,
        "failed", (json_int_t)st->failed,
        "seconds", st->seconds, "points_per_s",
        st->computed ? json_real(rate) : json_null(), "ranks", ranks, "jobs",
        jobs, "db", db_path);
    cli_print_json(o, JSON_COMPACT);
    return;
  }
  printf("%zu points: %zu already in %s, ", st->total, st->present, db_path);
  if (st->stale)
    printf("%zu stale there (made from another scenario content, built-in "
           "data or model: recomputed), ", st->stale);
  printf("%zu computed, %zu failed", st->computed, st->failed);
  if (st->computed)
    printf(" in %.2f s (%.2f points/s, %d rank%s x %d job%s)", st->seconds,
           rate, ranks, ranks > 1 ? "s" : "", jobs, jobs > 1 ? "s" : "");
  putchar('\n');
}

/* SIGINT / SIGTERM during a sweep: the first asks sweep_run to stop after
 * committing what is stored; a second one ends the process at once. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) {
  if (stop_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
  stop_signal = sig;
}

/* Installs on_stop for SIGINT and SIGTERM (without SA_RESTART, so the
 * fork loop's poll wakes up), saving the old actions in old[2]. */
static void catch_stop(struct sigaction old[2]) {
  struct sigaction sa = {.sa_handler = on_stop};
  sigemptyset(&sa.sa_mask);
  stop_signal = 0;
  sigaction(SIGINT, &sa, &old[0]);
  sigaction(SIGTERM, &sa, &old[1]);
}

static void release_stop(const struct sigaction old[2]) {
  sigaction(SIGINT, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
}

typedef struct sweep_args {
  const char *file, *db, *params;
  long jobs, batch;
  bool json, quiet;
  cli_cost_cmd_opts cc;
} sweep_args;

/* CLI_OK, CLI_USAGE (message printed) or CLI_OPT_HELPED. */
static int parse_args(int argc, char **argv, sweep_args *a) {
  *a = (sweep_args){.db = "geodes.db", .jobs = 1, .batch = 64};
  const cli_opt opts[] = {
      CLI_OPT_STRING(0, "db", "FILE", &a->db,
                     "results database (default geodes.db)"),
      CLI_OPT_INT('j', "jobs", "N", &a->jobs, 1, 4096,
                  "worker processes on this machine (default 1)"),
      CLI_OPT_INT(0, "batch", "N", &a->batch, 1, 1000000,
                  "rows per transaction (default 64; a commit also\n"
                  "happens every second). Not the global batch: that\n"
                  "is the sweep file's key \"batch\""),
      CLI_OPT_FLAG(0, "json", &a->json,
                   "print one JSON object: the counts and the rate"),
      CLI_OPT_QUIET(&a->quiet),
      CLI_OPT_STRING(0, "params", "FILE", &a->params,
                     "physical parameters from FILE, a params.json\n"
                     "(geodes calibrate -o), in every point's identity:\n"
                     "rows stored under other values are recomputed"),
      CLI_OPT_HELP(),
      CLI_COST_CMD_OPTS(&a->cc),
      CLI_OPT_END()};
  char **args;
  int nargs, rc = cli_opt_parse(&SWEEP, opts, argc, argv, &args, &nargs);
  if (rc == CLI_OK) a->file = args[0];
  return rc;
}

/* The sweep's hooks: where it stands, to the front end's reporter. */
static void progress(void *ctx, const sweep_progress *p) {
  char failed[32] = "";
  if (p->failed) snprintf(failed, sizeof failed, "%zu failed", p->failed);
  cli_progress_update(ctx, p->checking ? "points looked up" : "points",
                      (double)(p->checking ? p->done : p->done + p->failed),
                      (double)p->todo, failed);
}

/* A failed point: its message and key, below the bar when one is drawn. */
static void point_failed(void *ctx, const char *key, const char *msg) {
  cli_progress_interrupt(ctx);
  fprintf(stderr, "geodes: %s\n  (point %s)\n", msg, key);
}

/* Runs the sweep: over MPI, or here (in --jobs workers) with ^C caught. */
static void evaluate(const sweep *s, db *d, const sweep_args *a, bool mpi,
                     int rank, int64_t run, sweep_stats *st, err *e) {
  cli_progress bar;
  cli_progress_start(&bar, "sweep", a->quiet || rank != 0);
  sweep_opts o = {.eval = eval_point, .jobs = mpi ? 1 : (int)a->jobs,
                  .run = run, .batch_rows = (int)a->batch,
                  .progress = progress, .failed = point_failed,
                  .hook_ctx = &bar};
  if (mpi) { /* mpirun forwards ^C to every rank: MPI stops as a whole */
    sweep_mpi_run(s, d, &o, st, e);
  } else {
    struct sigaction old[2];
    catch_stop(old);
    o.stop = &stop_signal;
    sweep_run(s, d, &o, st, e);
    release_stop(old);
  }
  cli_progress_end(&bar);
}

/* The sweep of text (a's file), its files beside it, resolved (each
 * scenario once: bad ones fail here); NULL or e filled when it fails. */
static sweep *parse(const sweep_args *a, const char *text, long len, err *e) {
  sweep *s = sweep_parse(text, (size_t)len, a->file, e);
  if (!s) return NULL;
  sweep_files_beside(s, a->file);
  sweep_resolve(s, e);
  sweep_set_cost_cmd(s, a->cc.cmd, a->cc.timeout_s);
  return s;
}

/* Whether mpirun launched this process. Under mpirun in an executable
 * without MPI, first execs geodes-mpi from this executable's folder with
 * the same arguments (argv[0] is "sweep"), keeping the environment mpirun
 * set; it returns only when that fails: sweep_mpi_init then says why. */
static bool mpi_launched(int argc, char **argv) {
  if (!sweep_mpi_launched()) return false;
  if (sweep_mpi_available()) return true;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || (size_t)n >= sizeof self - sizeof "geodes-mpi") return true;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash) return true;
  strcpy(slash + 1, "geodes-mpi");
  char **v = mem_calloc((size_t)argc + 2, sizeof *v);
  v[0] = self;
  for (int i = 0; i < argc; i++) v[i + 1] = argv[i];
  fflush(NULL);
  execv(self, v);
  free(v);
  return true;
}

int cli_sweep(int argc, char **argv) {
  bool mpi = mpi_launched(argc, argv);
  sweep_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc == CLI_OPT_HELPED ? CLI_OK : rc;
  int rank = 0, ranks = 1;
  err e = {0};
  if (mpi && sweep_mpi_init(&rank, &ranks, &e)) return cli_error("%s", e.msg);
  long len;
  if (a.params && params_file_apply(a.params, &e)) {
    if (mpi) sweep_mpi_finalize();
    return cli_error("%s", e.msg);
  }
  char *text = read_text(a.file, mpi, rank, &len, &e);
  sweep *s = text ? parse(&a, text, len, &e) : NULL;
  if (!text) err_set(&e, ERR_IO, "%s: cannot read the sweep file", a.file);
  db *d = NULL;
  int64_t run = 0;
  if (e.code == ERR_OK && rank == 0 && (d = db_open(a.db, &e))) {
    char *cmd;
    db_run row = cli_run_row(argc, argv, NULL, &cmd);
    run = db_run_begin(d, &row, &e);
    free(cmd);
  }
  int first = mpi ? sweep_mpi_status(e.code) : ERR_OK;
  if (first && rank != 0) {
    sweep_free(s), free(text);
    sweep_mpi_finalize(); /* rank 0 failed and says why, once */
    return CLI_ERROR;
  }
  if (mpi && !first && sweep_mpi_agree(e.code)) { /* another rank failed */
    if (e.code) cli_error("rank %d: %s", rank, e.msg);
    if (d) db_run_end(d, run, "error", NULL);
    db_close(d), sweep_free(s), free(text);
    sweep_mpi_finalize(); /* every rank stops, none waits for another */
    return CLI_ERROR;
  }
  sweep_stats st = {0};
  if (e.code == ERR_OK) evaluate(s, d, &a, mpi, rank, run, &st, &e);
  const char *status = st.interrupted        ? "interrupted"
                       : e.code || st.failed ? "error"
                                             : "ok";
  if (d) db_run_end(d, run, status, NULL);
  if (rank == 0 && e.code) cli_error("%s", e.msg);
  else if (rank == 0) report(&st, a.db, ranks, mpi ? 1 : (int)a.jobs, a.json);
  if (st.interrupted)
    fprintf(stderr,
            "geodes: interrupted (%s): %zu of %zu points are in %s; the same "
            "command computes the other %zu\n",
            strsignal(stop_signal), st.present + st.computed, st.total, a.db,
            st.total - st.present - st.computed);
  db_close(d);
  sweep_free(s);
  free(text);
  if (mpi) sweep_mpi_finalize();
  if (st.interrupted) return 128 + stop_signal; /* as the shell reports it */
  return e.code || st.failed ? CLI_ERROR : CLI_OK;
}
