/* sweep_run: evaluating the missing points of a sweep and storing them.
 * Invariant: only this process writes the database; workers (forked, or MPI
 * ranks in sweep_mpi.c) return results as sweep_pack buffers. A row is
 * written only after its point was fully evaluated, in a transaction that is
 * committed every batch and before anything waits (sweep_writer_idle), so a
 * kill at any moment leaves whole rows only, a re-run recomputes exactly the
 * points that have no row, and no other writer waits on an evaluation. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/sweep.h"
#include "base/mem.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

size_t *sweep_missing(const sweep *s, db *d, const sweep_opts *o, size_t *n,
                      size_t *stale, err *e) {
  size_t total = sweep_count(s), len = 0;
  size_t *out = mem_alloc(total * sizeof *out + 1);
  sweep_key k = {0};
  double t0 = now_s();
  *stale = 0;
  for (size_t i = 0; i < total; i++) {
    if (o && o->progress && i % SWEEP_CHECK_EVERY == 0 && i)
      o->progress(o->hook_ctx, &(sweep_progress){.done = i, .todo = total,
                                                 .elapsed_s = now_s() - t0,
                                                 .checking = true});
    sweep_point p;
    sweep_point_at(s, i, &p);
    sweep_label l = sweep_point_label(&p, &k);
    int has = db_result_has(d, l.key, l.identity, e);
    if (has < 0) {
      free(k.key), free(out);
      return NULL;
    }
    if (has != DB_RESULT_CURRENT) out[len++] = i;
    if (has == DB_RESULT_STALE) ++*stale;
  }
  free(k.key);
  *n = len;
  return out;
}

/* --- wire format: a flat little buffer of fixed fields and strings --- */

typedef struct wire {
  char *buf;
  size_t len, cap;
} wire;

static void wire_put(wire *w, const void *p, size_t n) {
  mem_grow((void **)&w->buf, &w->cap, w->len + n, 1);
  memcpy(w->buf + w->len, p, n);
  w->len += n;
}

static void wire_str(wire *w, const char *s) {
  uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
  wire_put(w, &n, sizeof n);
  if (s) wire_put(w, s, n);
}

/* One column of a result on the wire, by kind (strings with their length,
 * NULL apart from ""); a LABEL column is not sent: the writer puts the
 * point's label on the row. */
#define PACK_EVAL(type, f) PACK_##type(f)
#define PACK_KNOB(type, f) PACK_##type(f)
#define PACK_DILOCO(type, f) PACK_##type(f)
#define PACK_LABEL(type, f) (void)0
#define PACK_REF(f) wire_str(&w, r->f)
#define PACK_OWNED(f) wire_str(&w, r->f)
#define PACK_CHARS16(f) wire_str(&w, r->f)
#define PACK_CHARS24(f) wire_str(&w, r->f)
#define PACK_CHARS48(f) wire_str(&w, r->f)
#define PACK_INT(f) wire_put(&w, &r->f, sizeof r->f)
#define PACK_REAL(f) wire_put(&w, &r->f, sizeof r->f)

char *sweep_pack(int status, const err *e, const db_result *r, size_t *len) {
  wire w = {0};
  int32_t st = status;
  wire_put(&w, &st, sizeof st);
  if (status != ERR_OK) {
    wire_str(&w, e ? e->msg : "evaluation failed");
  } else {
    /* DB_RESULT_MAP's EVAL and KNOB columns, in its order, then the run's
     * rows */
#define X(f, col, type, sql, absent, since, origin) PACK_##origin(type, f);
    DB_RESULT_MAP(X)
#undef X
    const int64_t counts[] = {(int64_t)r->nit, (int64_t)r->nmarks};
    wire_put(&w, counts, sizeof counts);
    if (r->nit) wire_put(&w, r->it, r->nit * sizeof *r->it);
    if (r->nmarks) wire_put(&w, r->marks, r->nmarks * sizeof *r->marks);
  }
  *len = w.len;
  return w.buf;
}

typedef struct reader {
  const char *p, *end;
  bool ok;
} reader;

static void rd(reader *r, void *out, size_t n) {
  if (!r->ok || (size_t)(r->end - r->p) < n) {
    r->ok = false;
    memset(out, 0, n);
    return;
  }
  memcpy(out, r->p, n);
  r->p += n;
}

/* A string into a fixed buffer (cap > 0) or, with cap == 0, a malloc'ed
 * copy stored in *dup (NULL for a NULL string). */
static void rd_str(reader *r, char *fixed, size_t cap, char **dup) {
  uint32_t n;
  rd(r, &n, sizeof n);
  if (!r->ok || n == UINT32_MAX) return;
  if ((size_t)(r->end - r->p) < n || (cap && n >= cap)) {
    r->ok = false;
    return;
  }
  char *dst = cap ? fixed : (*dup = mem_alloc((size_t)n + 1));
  memcpy(dst, r->p, n);
  dst[n] = '\0';
  r->p += n;
}

/* The inverse of PACK_*: what sweep_pack wrote, read in the same order.
 * A REF column is not sent by an evaluation (all are LABEL). */
#define UNPACK_EVAL(type, f) UNPACK_##type(f)
#define UNPACK_KNOB(type, f) UNPACK_##type(f)
#define UNPACK_DILOCO(type, f) UNPACK_##type(f)
#define UNPACK_LABEL(type, f) (void)0
#define UNPACK_OWNED(f) rd_str(&in, NULL, 0, &r->f)
#define UNPACK_CHARS16(f) rd_str(&in, r->f, sizeof r->f, NULL)
#define UNPACK_CHARS24(f) rd_str(&in, r->f, sizeof r->f, NULL)
#define UNPACK_CHARS48(f) rd_str(&in, r->f, sizeof r->f, NULL)
#define UNPACK_INT(f) rd(&in, &r->f, sizeof r->f)
#define UNPACK_REAL(f) rd(&in, &r->f, sizeof r->f)

bool sweep_unpack(const char *buf, size_t len, int *status, err *e,
                  db_result *r) {
  reader in = {buf, buf + len, true};
  int32_t st;
  rd(&in, &st, sizeof st);
  *status = st;
  if (in.ok && st != ERR_OK) {
    char *msg = NULL;
    rd_str(&in, NULL, 0, &msg);
    err_set(e, st, "%s", msg ? msg : "evaluation failed");
    free(msg);
    return in.ok && in.p == in.end;
  }
#define X(f, col, type, sql, absent, since, origin) UNPACK_##origin(type, f);
  DB_RESULT_MAP(X)
#undef X
  int64_t counts[2];
  rd(&in, counts, sizeof counts);
  size_t nit = (size_t)counts[0], nmk = (size_t)counts[1];
  size_t left = (size_t)(in.end - in.p);
  if (in.ok && (counts[0] < 0 || counts[1] < 0 ||
                nit > left / sizeof *r->it ||
                nmk > (left - nit * sizeof *r->it) / sizeof *r->marks))
    in.ok = false;
  if (in.ok && nit) {
    r->it = mem_alloc(nit * sizeof *r->it);
    rd(&in, r->it, nit * sizeof *r->it);
    r->nit = nit;
  }
  if (in.ok && nmk) {
    r->marks = mem_alloc(nmk * sizeof *r->marks);
    rd(&in, r->marks, nmk * sizeof *r->marks);
    r->nmarks = nmk;
  }
  return in.ok && in.p == in.end;
}

/* --- the writer --- */

struct sweep_writer {
  const sweep *s;
  db *d;
  sweep_opts o;
  size_t total, todo, done, failed, pending;
  double t0, last_commit;
  bool in_tx;
  sweep_key key;
};

sweep_writer *sweep_writer_new(const sweep *s, db *d, const sweep_opts *o,
                               size_t total, size_t todo) {
  sweep_writer *w = mem_calloc(1, sizeof *w);
  *w = (sweep_writer){.s = s, .d = d, .o = *o, .total = total, .todo = todo};
  if (w->o.batch_rows <= 0) w->o.batch_rows = 64;
  if (!(w->o.batch_seconds > 0)) w->o.batch_seconds = 1.0;
  w->t0 = w->last_commit = now_s();
  return w;
}

static void report(const sweep_writer *w, bool last) {
  if (!w->o.progress) return;
  sweep_progress p = {.done = w->done, .failed = w->failed, .todo = w->todo,
                      .elapsed_s = now_s() - w->t0, .last = last};
  w->o.progress(w->o.hook_ctx, &p);
}

static int commit(sweep_writer *w, err *e) {
  if (!w->in_tx) return ERR_OK;
  w->in_tx = false;
  w->pending = 0;
  w->last_commit = now_s();
  return db_commit(w->d, e);
}

int sweep_writer_put(sweep_writer *w, size_t i, int status, const err *e,
                     db_result *r, err *err_out) {
  sweep_point p;
  sweep_point_at(w->s, i, &p);
  sweep_label l = sweep_point_label(&p, &w->key);
  int rc = ERR_OK;
  if (status != ERR_OK) {
    w->failed++;
    if (w->o.failed)
      w->o.failed(w->o.hook_ctx, l.key,
                  e && e->msg[0] ? e->msg : err_what(status));
  } else {
    sweep_label_row(r, &l);
    if (!w->in_tx && (rc = db_begin(w->d, err_out)) == ERR_OK) w->in_tx = true;
    if (rc == ERR_OK && (rc = db_result_put(w->d, w->o.run, r, err_out)) > 0)
      rc = ERR_OK;
    w->done++;
    if (rc == ERR_OK && (++w->pending >= (size_t)w->o.batch_rows ||
                         now_s() - w->last_commit >= w->o.batch_seconds))
      rc = commit(w, err_out);
  }
  report(w, false);
  return rc;
}

int sweep_writer_idle(sweep_writer *w, err *e) { return commit(w, e); }

int sweep_writer_finish(sweep_writer *w, sweep_stats *st, err *e) {
  if (!w) return ERR_OK;
  int rc = commit(w, e);
  report(w, true);
  if (st) {
    st->computed = w->done;
    st->failed = w->failed;
    st->seconds = now_s() - w->t0;
  }
  free(w->key.key);
  free(w);
  return rc;
}

/* --- in-process and forked evaluation --- */

static bool stopped(const sweep_opts *o) { return o->stop && *o->stop; }

static int run_inline(const sweep *s, const sweep_opts *o, const size_t *todo,
                      size_t n, sweep_writer *w, err *e) {
  for (size_t t = 0; t < n && !stopped(o); t++) {
    sweep_point p;
    sweep_point_at(s, todo[t], &p);
    db_result r;
    db_result_init(&r);
    err pe = {0};
    int rc = sweep_writer_idle(w, e);
    if (rc) return rc;
    int status = o->eval(o->ctx, &p, &r, &pe);
    rc = sweep_writer_put(w, todo[t], status, &pe, &r, e);
    db_result_clear(&r);
    if (rc) return rc;
  }
  return ERR_OK;
}

typedef struct worker {
  pid_t pid;
  int task_fd, result_fd;  /* parent's ends */
  size_t point;
  bool busy;
} worker;

static bool write_full(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static bool read_full(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

/* A worker: reads point indices, answers (index, length, sweep_pack). */
static _Noreturn void worker_main(const sweep *s, const sweep_opts *o, int in,
                                  int out) {
  /* ^C reaches the whole process group: the parent decides (it ends busy
   * workers with SIGTERM); an idle worker ends when its task pipe closes. */
  signal(SIGINT, SIG_IGN);
  uint64_t i;
  while (read_full(in, &i, sizeof i) && i != UINT64_MAX) {
    sweep_point p;
    sweep_point_at(s, (size_t)i, &p);
    db_result r;
    db_result_init(&r);
    err pe = {0};
    int status = o->eval(o->ctx, &p, &r, &pe);
    size_t len;
    char *buf = sweep_pack(status, &pe, &r, &len);
    uint64_t head[2] = {i, len};
    bool ok = write_full(out, head, sizeof head) && write_full(out, buf, len);
    free(buf);
    db_result_clear(&r);
    if (!ok) break;
  }
  _exit(0); /* the forked child ends here: returning would run the caller's
               code a second time (its exit handlers and buffers included) */
}

/* Starts worker k: its two pipes and the forked process, which keeps only
 * its own ends. ERR_IO with e filled when a pipe or the fork fails (ws[k]
 * is then unused: pid 0). */
static int spawn(worker *ws, int nw, int k, const sweep *s,
                 const sweep_opts *o, err *e) {
  int task[2], result[2];
  if (pipe(task)) return err_set(e, ERR_IO, "pipe: %s", strerror(errno));
  if (pipe(result)) {
    int why = errno;
    close(task[0]), close(task[1]);
    return err_set(e, ERR_IO, "pipe: %s", strerror(why));
  }
  /* what the caller buffered must not be written twice, by the child too */
  fflush(stdout), fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    int why = errno;
    close(task[0]), close(task[1]), close(result[0]), close(result[1]);
    return err_set(e, ERR_IO, "fork: %s", strerror(why));
  }
  if (pid == 0) {
    for (int j = 0; j < nw; j++)
      if (j != k && ws[j].pid > 0) close(ws[j].task_fd), close(ws[j].result_fd);
    close(task[1]), close(result[0]);
    worker_main(s, o, task[0], result[1]);
  }
  close(task[0]), close(result[1]);
  ws[k] = (worker){.pid = pid, .task_fd = task[1], .result_fd = result[0]};
  return ERR_OK;
}

/* Ends worker k (SIGTERM first when it is evaluating) and waits for it. */
static void retire(worker *wk) {
  static const uint64_t quit = UINT64_MAX;
  if (wk->pid <= 0) return;
  if (wk->busy) kill(wk->pid, SIGTERM);
  write_full(wk->task_fd, &quit, sizeof quit);
  close(wk->task_fd), close(wk->result_fd);
  waitpid(wk->pid, NULL, 0);
  wk->pid = 0;
}

/* Reads the answer of worker k into status, pe and r; false when the
 * worker died (or sent a frame that is not one). */
static bool receive(worker *wk, int *status, err *pe, db_result *r) {
  uint64_t head[2];
  bool ok = read_full(wk->result_fd, head, sizeof head) &&
            head[0] == wk->point && head[1] < (1ULL << 40);
  char *buf = NULL;
  if (ok) {
    buf = mem_alloc(head[1] + 1);
    ok = read_full(wk->result_fd, buf, head[1]);
  }
  if (ok && !sweep_unpack(buf, head[1], status, pe, r))
    *status = err_set(pe, ERR_CONFIG, "a worker sent a malformed result");
  free(buf);
  return ok;
}

/* Handles one readable worker: stores its answer, or, if it died, records
 * its point as failed and starts a new worker in its place. */
static int collect(worker *ws, int nw, int k, const sweep *s,
                   const sweep_opts *o, sweep_writer *w, err *e) {
  worker *wk = &ws[k];
  size_t point = wk->point;
  db_result r;
  db_result_init(&r);
  err pe = {0};
  int status = ERR_CONFIG;
  bool alive = receive(wk, &status, &pe, &r);
  wk->busy = false;
  int rc = ERR_OK;
  if (!alive) {
    int ws_status = 0;
    close(wk->task_fd), close(wk->result_fd);
    waitpid(wk->pid, &ws_status, 0);
    err_set(&pe, ERR_CONFIG, "the worker evaluating this point died (%s %d)",
            WIFSIGNALED(ws_status) ? "signal" : "exit status",
            WIFSIGNALED(ws_status) ? WTERMSIG(ws_status)
                                   : WEXITSTATUS(ws_status));
    wk->pid = 0;
    rc = spawn(ws, nw, k, s, o, e);
  }
  int rc2 = sweep_writer_put(w, point, status, &pe, &r, e);
  db_result_clear(&r);
  return rc ? rc : rc2;
}

/* Hands the next points of todo to the idle workers. */
static void assign(worker *ws, int nw, const size_t *todo, size_t n,
                   size_t *next, size_t *busy) {
  for (int k = 0; k < nw && *next < n; k++) {
    if (ws[k].busy) continue;
    uint64_t i = todo[*next];
    ws[k].point = todo[(*next)++];
    ws[k].busy = true;
    ++*busy;
    write_full(ws[k].task_fd, &i, sizeof i); /* a dead worker shows in poll */
  }
}

/* Waits for answers and collects each. */
static int wait_answers(worker *ws, int nw, struct pollfd *pf,
                        const sweep *s, const sweep_opts *o, sweep_writer *w,
                        size_t *busy, err *e) {
  for (int k = 0; k < nw; k++)
    pf[k] = (struct pollfd){.fd = ws[k].busy ? ws[k].result_fd : -1,
                            .events = POLLIN};
  int rc = sweep_writer_idle(w, e);
  if (rc) return rc;
  if (poll(pf, (nfds_t)nw, -1) < 0)
    return errno == EINTR ? ERR_OK
                          : err_set(e, ERR_IO, "poll: %s", strerror(errno));
  for (int k = 0; k < nw && rc == ERR_OK; k++)
    if (ws[k].busy && pf[k].revents) {
      --*busy;
      rc = collect(ws, nw, k, s, o, w, e);
    }
  return rc;
}

static int run_forked(const sweep *s, const sweep_opts *o, const size_t *todo,
                      size_t n, sweep_writer *w, err *e) {
  int nw = o->jobs < (int)n ? o->jobs : (int)n;
  worker *ws = mem_calloc((size_t)nw, sizeof *ws);
  struct pollfd *pf = mem_calloc((size_t)nw, sizeof *pf);
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
  int rc = ERR_OK;
  for (int k = 0; k < nw && rc == ERR_OK; k++) rc = spawn(ws, nw, k, s, o, e);
  size_t next = 0, busy = 0;
  while (rc == ERR_OK && (next < n || busy) && !stopped(o)) {
    assign(ws, nw, todo, n, &next, &busy);
    rc = wait_answers(ws, nw, pf, s, o, w, &busy, e);
  }
  for (int k = 0; k < nw; k++) retire(&ws[k]);
  signal(SIGPIPE, old_pipe);
  free(pf);
  free(ws);
  return rc;
}

int sweep_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
              err *e) {
  size_t n, stale;
  size_t *todo = sweep_missing(s, d, o, &n, &stale, e);
  if (!todo) return e ? e->code : ERR_DB;
  sweep_stats local = {0};
  if (!st) st = &local;
  *st = (sweep_stats){.total = sweep_count(s),
                      .present = sweep_count(s) - n, .stale = stale};
  sweep_writer *w = sweep_writer_new(s, d, o, st->total, n);
  int rc = n == 0         ? ERR_OK
           : o->jobs <= 1 ? run_inline(s, o, todo, n, w, e)
                          : run_forked(s, o, todo, n, w, e);
  int rc2 = sweep_writer_finish(w, st, e);
  st->interrupted = stopped(o) && st->computed + st->failed < n;
  free(todo);
  return rc ? rc : rc2;
}
