/* costcmd: see costcmd.h. One child per session; our ends of its pipes are
 * non-blocking and close-on-exec, and one poll() loop moves candidate lines
 * out and answer lines in, so a batch never deadlocks on a full pipe.
 * Invariant: once `failed` is set the child is dead and reaped and both
 * pipes are closed; answered <= next_id, and the first `answered` ids have
 * each had exactly one valid answer, in order. */
#include "analysis/costcmd.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/mem.h"

extern char **environ;

/* An answer line longer than this is refused (a model printing a core
 * dump, not a prediction). */
#define COSTCMD_MAX_LINE (1 << 20)

struct costcmd {
  char *cmd;
  pid_t pid;             /* 0 once reaped */
  int status;            /* wait status once reaped */
  int to_child, from_child; /* our ends; -1 when closed */
  double timeout_s;
  long next_id;          /* id the next candidate written gets */
  long answered;         /* valid answers so far (the next id expected) */
  char *w;               /* bytes still to write: w[wpos .. wlen) */
  size_t wlen, wpos, wcap;
  char *r;               /* bytes read, not yet a whole line: r[0 .. rlen) */
  size_t rlen, rcap;
  int failed;            /* ERR_OK, or the code of the session's error */
  char msg[ERR_MSG_MAX];
  /* The candidates submitted since the last collect (a batch): where each
   * one's line lies in w (kept until it is collected, for messages), when
   * it was written in full, and the predictions as they arrive. */
  int n, got, qcap;      /* submitted, answered; got <= n <= qcap */
  long first_id;         /* id of the batch's first candidate */
  size_t *line_start, *line_end;
  double *sent_at;       /* < 0 until written in full */
  double *ans;
  double last_answer_at; /* the batch's start before its first answer */
  double last_write_at;
  double collect_at;     /* when collect began: no answer is due before
                            the timeout after it (geodes's own work between
                            submits is not the model's time) */
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cloexec_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFD);
  int st = fcntl(fd, F_GETFL);
  if (fl < 0 || st < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0 ||
      fcntl(fd, F_SETFL, st | O_NONBLOCK) < 0)
    return -1;
  return 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Waits up to limit_s for the child to exit; kills it after that. */
static void reap(costcmd *c, double limit_s) {
  if (c->pid <= 0) return;
  double end = now_s() + limit_s;
  for (;;) {
    pid_t got = waitpid(c->pid, &c->status, WNOHANG);
    if (got == c->pid || (got < 0 && errno != EINTR)) break;
    if (now_s() >= end) {
      kill(-c->pid, SIGKILL);
      while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {}
      break;
    }
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  c->pid = 0;
}

/* How the reaped child ended, for messages. */
static void describe_exit(const costcmd *c, char *buf, size_t size) {
  if (WIFEXITED(c->status))
    snprintf(buf, size, "exited with status %d", WEXITSTATUS(c->status));
  else if (WIFSIGNALED(c->status))
    snprintf(buf, size, "was killed by signal %d", WTERMSIG(c->status));
  else
    snprintf(buf, size, "ended");
}

/* Records the session's error (the first one wins), kills and reaps the
 * child, closes the pipes; returns code. */
static int fail(costcmd *c, err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(costcmd *c, err *e, int code, const char *fmt, ...) {
  if (!c->failed) {
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->msg, sizeof c->msg, "cost command '%.200s'%s%s", c->cmd,
             what[0] == ':' ? "" : " ", what);
    c->failed = code;
  }
  if (c->pid > 0) kill(-c->pid, SIGKILL);
  reap(c, 5);
  close_fd(&c->to_child);
  close_fd(&c->from_child);
  return err_set(e, c->failed, "%s", c->msg);
}

static int spawn(costcmd *c, err *e) {
  int in[2], out[2];
  if (pipe(in) < 0) return -1;
  if (pipe(out) < 0) {
    close(in[0]), close(in[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawnattr_init(&at);
  sigset_t none, pipe_only;
  sigemptyset(&none);
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &pipe_only);
  /* its own process group, so that killing it kills what sh started */
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                    POSIX_SPAWN_SETPGROUP);
  char *argv[] = {"sh", "-c", c->cmd, NULL};
  /* our ends must not leak into the child: close-on-exec before spawning */
  int rc = cloexec_nonblock(in[1]) || cloexec_nonblock(out[0]) ||
                   fcntl(in[0], F_SETFD, FD_CLOEXEC) < 0 ||
                   fcntl(out[1], F_SETFD, FD_CLOEXEC) < 0
               ? errno
               : posix_spawn(&c->pid, "/bin/sh", &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(in[0]), close(out[1]);
  c->to_child = in[1], c->from_child = out[0];
  if (rc) {
    c->pid = 0;
    return fail(c, e, ERR_IO, "cannot be started: %s", strerror(rc));
  }
  return ERR_OK;
}

costcmd *costcmd_start(const char *cmd, const char *header, double timeout_s,
                       err *e) {
  costcmd *c = mem_calloc(1, sizeof *c);
  c->cmd = mem_strdup(cmd);
  c->to_child = c->from_child = -1;
  c->timeout_s = timeout_s > 0 ? timeout_s : COSTCMD_TIMEOUT_S;
  size_t hl = strlen(header);
  mem_grow((void **)&c->w, &c->wcap, hl + 1, 1);
  memcpy(c->w, header, hl);
  c->w[hl] = '\n';
  c->wlen = hl + 1;
  if (spawn(c, e) != ERR_OK) {
    if (!c->failed) {
      int saved = errno;
      fail(c, e, ERR_IO, "cannot be started: %s", strerror(saved));
    }
    costcmd_free(c);
    return NULL;
  }
  return c;
}

/* Appends text to the output. */
static void put(costcmd *c, const char *s, size_t n) {
  mem_grow((void **)&c->w, &c->wcap, c->wlen + n, 1);
  memcpy(c->w + c->wlen, s, n);
  c->wlen += n;
}

/* v in decimal, as "%ld" writes it (without printf's cost: a batch writes
 * a few hundred numbers per candidate). */
static void put_int(costcmd *c, long v) {
  char buf[24];
  int at = (int)sizeof buf;
  unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
  do buf[--at] = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) buf[--at] = '-';
  put(c, buf + at, sizeof buf - (size_t)at);
}

/* One candidate's line. */
static void put_candidate(costcmd *c, long id, const alloc *a,
                          const int *layers) {
  put(c, "{\"id\": ", 7);
  put_int(c, id);
  put(c, ", \"pipelines\": [", 16);
  for (int r = 0; r < a->replicas; r++) {
    put(c, r ? ", [" : "[", r ? 3 : 1);
    for (int s = 0; s < a->stages; s++) {
      if (s) put(c, ", ", 2);
      put_int(c, a->device[r * a->stages + s]);
    }
    put(c, "]", 1);
  }
  put(c, "], \"layers_per_stage\": [", 24);
  for (int s = 0; layers && s < a->stages; s++) {
    if (s) put(c, ", ", 2);
    put_int(c, layers[s]);
  }
  put(c, "]}\n", 3);
}

/* Candidate i of the batch's line without its id and newline, shortened,
 * for messages. */
static void describe_candidate(const costcmd *c, int i, char *buf,
                               size_t size) {
  const char *s = c->w + c->line_start[i];
  const char *p = strstr(s, "\"pipelines\"");
  size_t len = c->line_end[i] - c->line_start[i];
  size_t off = p && (size_t)(p - s) < len ? (size_t)(p - s) : 0;
  size_t n = len - off - 2; /* drop "}\n" */
  if (n > 160)
    snprintf(buf, size, "{%.*s ...}", 150, s + off);
  else
    snprintf(buf, size, "{%.*s}", (int)n, s + off);
}

/* Whether line (len bytes) contains word. */
static bool contains(const char *line, size_t len, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(line + i, word, n) == 0) return true;
  return false;
}

/* Skips the digits at *p (at most max of them, and no leading zero but a
 * lone one: JSON's integers); false when there are none or too many. */
static bool skip_digits(const char **p, const char *end, int max, bool json) {
  const char *q = *p;
  while (q < end && *q >= '0' && *q <= '9' && q - *p <= max) q++;
  bool ok = q > *p && q - *p <= max && !(json && **p == '0' && q - *p > 1);
  *p = q;
  return ok;
}

/* The answer line as the shipped models print it, exactly
 * {"id": K, "predicted_s": X} with K the id expected and X a JSON number
 * >= 0 that strtod reads as at most COSTCMD_MAX_PREDICTED_S (what jansson gives: it reads numbers
 * with strtod, and an integer's conversion rounds the same): true and *x
 * set. Any other line (other spacing, keys, a wrong id) goes to the full
 * parser, which checks it and names what is wrong. */
static bool fast_answer(const char *line, size_t len, long id, double *x) {
  static const char head[] = "{\"id\": ", mid[] = ", \"predicted_s\": ";
  const char *p = line, *end = line + len;
  if (len < sizeof head + sizeof mid || memcmp(p, head, sizeof head - 1))
    return false;
  p += sizeof head - 1;
  const char *k = p;
  if (!skip_digits(&p, end, 15, true) || strtol(k, NULL, 10) != id ||
      (size_t)(end - p) < sizeof mid || memcmp(p, mid, sizeof mid - 1))
    return false;
  p += sizeof mid - 1;
  const char *num = p;
  if (!skip_digits(&p, end, 15, true)) return false;
  if (p < end && *p == '.') {
    p++;
    if (!skip_digits(&p, end, 40, false)) return false;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!skip_digits(&p, end, 3, false)) return false;
  }
  if (end - p != 1 || *p != '}') return false;
  char buf[64];
  if (p - num >= (long)sizeof buf) return false;
  memcpy(buf, num, (size_t)(p - num));
  buf[p - num] = '\0';
  *x = strtod(buf, NULL);
  return *x <= COSTCMD_MAX_PREDICTED_S;
}

/* Stores x as the answer to the batch's next candidate. */
static int accept(costcmd *c, double x) {
  c->ans[c->got++] = x;
  c->answered++;
  return ERR_OK;
}

/* The answer line (len bytes) as JSON into *out (json_decref), or the
 * session's error naming candidate id (cand) and the line: not JSON, a NUL
 * byte, a key given twice, a number past a double. */
static int load_answer(costcmd *c, const char *line, size_t len, long id,
                       const char *cand, json_t **out, err *e) {
  json_error_t je;
  /* jansson reads a NUL between tokens as the end of its input (it took
   * '{"predicted_s": 0.5<NUL>}' as an object): refused before it looks */
  bool nul = memchr(line, '\0', len) != NULL;
  *out = nul ? NULL : json_loadb(line, len, JSON_DECODE_ANY |
                                 JSON_REJECT_DUPLICATES, &je);
  if (*out) return ERR_OK;
  /* the line as far as its first NUL, which ends what a message shows */
  size_t show = strnlen(line, len > 200 ? 200 : len);
  enum json_error_code why = nul ? json_error_null_character
                                 : json_error_code(&je);
  if (why == json_error_duplicate_key) {
    const char *key = strstr(je.text, "near ");
    return fail(c, e, ERR_PARSE, "answered candidate %ld %s with a key given "
                "twice (%s): '%.*s'", id, cand, key ? key + 5 : je.text,
                (int)show, line);
  }
  bool nonfinite = contains(line, len, "NaN") || contains(line, len, "Infinity");
  const char *what =
      nonfinite ? "a predicted_s that is not a finite number (NaN and "
                  "Infinity are not JSON)"
      : why == json_error_numeric_overflow ? "a number past what a double "
                  "or a 64-bit integer holds"
      : nul ? "a line that holds a NUL byte"
      : "a line that is not JSON";
  return fail(c, e, ERR_PARSE, "answered candidate %ld %s with %s: '%.*s'",
              id, cand, what, (int)show, line);
}

/* Checks one answer line (len bytes, no newline) against the batch's next
 * candidate and stores its prediction. */
static int take_answer(costcmd *c, const char *line, size_t len, err *e) {
  int i = c->got;
  long id = c->first_id + i;
  double fast;
  if (fast_answer(line, len, id, &fast)) return accept(c, fast);
  char cand[256];
  describe_candidate(c, i, cand, sizeof cand);
  size_t show = strnlen(line, len > 200 ? 200 : len);
  json_t *j;
  int rc = load_answer(c, line, len, id, cand, &j, e);
  if (rc) return rc;
  json_t *jid = json_is_object(j) ? json_object_get(j, "id") : NULL;
  json_t *jp = json_is_object(j) ? json_object_get(j, "predicted_s") : NULL;
  double x = json_is_number(jp) ? json_number_value(jp) : NAN;
  if (!json_is_object(j))
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s with a JSON value "
              "that is not an object: '%.*s'", id, cand,
              (int)(len > 200 ? 200 : len), line);
  else if (!json_is_integer(jid))
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s without an "
              "integer \"id\"", id, cand);
  else if (json_integer_value(jid) != id)
    rc = fail(c, e, ERR_PARSE, "answered id %lld where candidate %ld %s was "
              "expected (answers come in the order of the candidates)",
              (long long)json_integer_value(jid), id, cand);
  else if (!jp || json_is_null(jp))
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s without a "
              "\"predicted_s\"", id, cand);
  else if (!json_is_number(jp))
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s with a "
              "\"predicted_s\" that is not a number", id, cand);
  else if (!isfinite(x) || x < 0)
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s with a %s "
              "predicted_s (%g)", id, cand, x < 0 ? "negative" : "non-finite",
              x);
  else if (x > COSTCMD_MAX_PREDICTED_S)
    rc = fail(c, e, ERR_PARSE, "answered candidate %ld %s with a predicted_s "
              "of %g s, past the ceiling of %g s (31.7 years): '%.*s'", id,
              cand, x, COSTCMD_MAX_PREDICTED_S, (int)show, line);
  json_decref(j);
  return rc ? rc : accept(c, x);
}

/* Splits whole lines off the input and takes them as answers. A line
 * beyond the batch's answers waits in the input while candidates may still
 * be submitted (it answers the next one, or is refused then); when the
 * batch is complete (final: its collect) it is an error: CMD answered
 * something geodes has not asked. */
static int take_lines(costcmd *c, bool final, double now, err *e) {
  size_t start = 0;
  for (;;) {
    char *nl = memchr(c->r + start, '\n', c->rlen - start);
    if (!nl) break;
    if (c->got >= c->n && !final) break;
    size_t len = (size_t)(nl - (c->r + start));
    const char *line = c->r + start;
    start += len + 1;
    if (len && line[len - 1] == '\r') len--;
    if (c->got >= c->n) {
      char more[ERR_MSG_MAX];
      snprintf(more, sizeof more, "printed a line beyond its %d answers "
               "(after candidate %ld): '%.*s'", c->n, c->answered - 1,
               (int)(len > 200 ? 200 : len), line);
      return fail(c, e, ERR_PARSE, "%s", more);
    }
    int rc = take_answer(c, line, len, e);
    if (rc) return rc;
    c->last_answer_at = now;
  }
  memmove(c->r, c->r + start, c->rlen - start);
  c->rlen -= start;
  if (c->rlen > COSTCMD_MAX_LINE)
    return fail(c, e, ERR_PARSE, "printed a line longer than %d bytes while "
                "answering candidate %ld", COSTCMD_MAX_LINE, c->answered);
  return ERR_OK;
}

/* Reads what is there (nothing: ERR_OK); EOF means the child is gone (or
 * closed its output). */
static int read_some(costcmd *c, bool final, double now, err *e) {
  mem_grow((void **)&c->r, &c->rcap, c->rlen + 65536, 1);
  ssize_t got = read(c->from_child, c->r + c->rlen, c->rcap - c->rlen);
  if (got < 0)
    return errno == EAGAIN || errno == EINTR
               ? ERR_OK
               : fail(c, e, ERR_IO, "cannot be read: %s", strerror(errno));
  if (got == 0) {
    /* the answers before EOF count: a model that answers and exits fails
       at the first candidate it left unanswered */
    int rc = take_lines(c, final, now, e);
    if (rc || c->got >= c->n) return rc ? rc : ERR_OK;
    char how[64];
    close_fd(&c->to_child);
    reap(c, c->timeout_s < 2 ? c->timeout_s : 2);
    describe_exit(c, how, sizeof how);
    char cand[256];
    describe_candidate(c, c->got, cand, sizeof cand);
    return fail(c, e, ERR_IO, "%s (or closed its output) before answering "
                "candidate %ld %s", how, c->first_id + c->got, cand);
  }
  c->rlen += (size_t)got;
  return take_lines(c, final, now, e);
}

/* Writes what the pipe takes. A child that closed its input (EPIPE) may
 * still be answering what it read: writing stops, reading goes on. SIGPIPE
 * is blocked by the caller. */
static int write_some(costcmd *c, double now, err *e) {
  ssize_t put_n = write(c->to_child, c->w + c->wpos, c->wlen - c->wpos);
  if (put_n < 0) {
    if (errno == EAGAIN || errno == EINTR) return ERR_OK;
    if (errno != EPIPE)
      return fail(c, e, ERR_IO, "cannot be written to: %s", strerror(errno));
    close_fd(&c->to_child);
    return ERR_OK;
  }
  c->wpos += (size_t)put_n;
  c->last_write_at = now;
  for (int i = c->got; i < c->n && c->line_end[i] <= c->wpos; i++)
    if (c->sent_at[i] < 0) c->sent_at[i] = now;
  return ERR_OK;
}

/* When the answer to the next candidate is due: timeout after the latest
 * of its line written in full, the previous answer and the start of the
 * collect; while its line is not written, timeout after the pipe last took
 * bytes. The session's first answer also has COSTCMD_START_S for CMD's
 * start. */
static double deadline(const costcmd *c) {
  int i = c->got;
  double base = c->sent_at[i] >= 0 ? c->sent_at[i] : c->last_write_at;
  if (c->last_answer_at > base) base = c->last_answer_at;
  if (c->collect_at > base) base = c->collect_at;
  return base + c->timeout_s +
         (c->answered == 0 && i == 0 ? COSTCMD_START_S : 0);
}

/* Moves bytes both ways until every answer of the batch is in. */
static int exchange(costcmd *c, err *e) {
  int rc = take_lines(c, true, now_s(), e);
  while (rc == ERR_OK && c->got < c->n) {
    double now = now_s();
    double due = deadline(c);
    if (now >= due) {
      char cand[256];
      describe_candidate(c, c->got, cand, sizeof cand);
      return fail(c, e, ERR_IO, "gave no answer to candidate %ld %s within "
                  "%g s (the per-candidate timeout%s)", c->first_id + c->got,
                  cand, c->timeout_s + (c->answered == 0 && c->got == 0
                                            ? COSTCMD_START_S : 0),
                  c->answered == 0 && c->got == 0 ? ", plus the start's" : "");
    }
    bool writing = c->to_child >= 0 && c->wpos < c->wlen;
    struct pollfd p[2] = {{.fd = c->from_child, .events = POLLIN},
                          {.fd = writing ? c->to_child : -1,
                           .events = POLLOUT}};
    double wait_ms = ceil((due - now) * 1e3);
    int k = poll(p, 2, wait_ms > 1e9 ? 1000000000 : (int)wait_ms);
    if (k < 0 && errno != EINTR)
      return fail(c, e, ERR_IO, "cannot be waited for: %s", strerror(errno));
    if (k <= 0) continue;
    now = now_s();
    if (p[1].revents & (POLLOUT | POLLERR | POLLHUP))
      rc = write_some(c, now, e);
    if (rc == ERR_OK && p[0].revents & (POLLIN | POLLERR | POLLHUP))
      rc = read_some(c, true, now, e);
  }
  return rc;
}

/* SIGPIPE stays blocked while we write; one raised by our writes is
 * consumed before the mask is restored. */
typedef struct pipe_guard {
  sigset_t set, old;
  bool was_pending;
} pipe_guard;

static void guard_on(pipe_guard *g) {
  sigset_t pending;
  sigemptyset(&g->set);
  sigaddset(&g->set, SIGPIPE);
  sigpending(&pending);
  g->was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &g->set, &g->old);
}

static void guard_off(pipe_guard *g) {
  sigset_t pending;
  sigpending(&pending);
  if (!g->was_pending && sigismember(&pending, SIGPIPE))
    sigtimedwait(&g->set, NULL, &(struct timespec){0, 0});
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

int costcmd_submit(costcmd *c, const alloc *a, const int *layers, err *e) {
  if (c->failed) return err_set(e, c->failed, "%s", c->msg);
  double now = now_s();
  if (c->n == 0) {
    /* a new batch: drop the bytes already written, so that its offsets
       start afresh, and start its clocks */
    memmove(c->w, c->w + c->wpos, c->wlen - c->wpos);
    c->wlen -= c->wpos;
    c->wpos = 0;
    c->first_id = c->next_id;
    c->last_answer_at = c->last_write_at = now;
    c->collect_at = 0;
  }
  if (c->n == c->qcap) {
    int cap = c->qcap ? 2 * c->qcap : 64;
    c->line_start = mem_realloc(c->line_start, (size_t)cap * sizeof(size_t));
    c->line_end = mem_realloc(c->line_end, (size_t)cap * sizeof(size_t));
    c->sent_at = mem_realloc(c->sent_at, (size_t)cap * sizeof(double));
    c->ans = mem_realloc(c->ans, (size_t)cap * sizeof(double));
    c->qcap = cap;
  }
  int i = c->n++;
  c->line_start[i] = c->wlen;
  put_candidate(c, c->next_id++, a, layers);
  c->line_end[i] = c->wlen;
  c->sent_at[i] = -1;
  /* pump without waiting: what the pipe takes, what CMD has answered */
  pipe_guard g;
  guard_on(&g);
  int rc = c->to_child >= 0 ? write_some(c, now, e) : ERR_OK;
  if (rc == ERR_OK) rc = read_some(c, false, now, e);
  guard_off(&g);
  return rc;
}

int costcmd_collect(costcmd *c, int n, double *out, err *e) {
  assert(c->failed || n == c->n);
  (void)n;
  int rc = c->failed ? err_set(e, c->failed, "%s", c->msg) : ERR_OK;
  if (rc == ERR_OK && c->n > 0) {
    c->collect_at = now_s();
    pipe_guard g;
    guard_on(&g);
    rc = exchange(c, e);
    guard_off(&g);
  }
  if (rc == ERR_OK && c->n > 0)
    memcpy(out, c->ans, (size_t)c->n * sizeof *out);
  c->n = c->got = 0;
  return rc;
}

int costcmd_pending(const costcmd *c) { return c->n; }

int costcmd_score(costcmd *c, int n, const alloc *const *a,
                  const int *const *layers, double *out, err *e) {
  assert(c->n == 0);
  if (c->failed) return err_set(e, c->failed, "%s", c->msg);
  int rc = ERR_OK;
  for (int i = 0; i < n && rc == ERR_OK; i++)
    rc = costcmd_submit(c, a[i], layers ? layers[i] : NULL, e);
  if (rc) {
    c->n = c->got = 0;
    return rc;
  }
  return costcmd_collect(c, n, out, e);
}

double costcmd_score_one(costcmd *c, const alloc *a, const int *layers,
                         err *e) {
  double x = NAN;
  const int *const l[1] = {layers};
  return costcmd_score(c, 1, &a, l, &x, e) == ERR_OK ? x : NAN;
}

double costcmd_judge(void *ctx, const alloc *a, const spec_workload *w,
                     err *e) {
  int *layers = mem_alloc((size_t)w->stages * sizeof *layers);
  for (int st = 0; st < w->stages; st++) layers[st] = spec_stage_layers(w, st);
  double x = costcmd_score_one(ctx, a, layers, e);
  free(layers);
  return x;
}

int costcmd_judge_many(void *ctx, int n, const alloc *const *a,
                       const int *const *layers, double *out, err *e) {
  return costcmd_score(ctx, n, a, layers, out, e);
}

int costcmd_judge_submit(void *ctx, const alloc *a, const int *layers,
                         err *e) {
  return costcmd_submit(ctx, a, layers, e);
}

int costcmd_judge_collect(void *ctx, int n, double *out, err *e) {
  return costcmd_collect(ctx, n, out, e);
}

/* After the input is closed: reads until EOF, up to the timeout. Returns
 * ERR_OK at EOF with nothing but blank space read. */
static int drain(costcmd *c, err *e) {
  double due = now_s() + c->timeout_s;
  for (;;) {
    double left = due - now_s();
    if (left <= 0)
      return fail(c, e, ERR_IO, "did not exit within %g s after its input "
                  "ended (%ld candidates answered)", c->timeout_s, c->answered);
    struct pollfd p = {.fd = c->from_child, .events = POLLIN};
    int k = poll(&p, 1, (int)ceil(left * 1e3));
    if (k <= 0) continue;
    mem_grow((void **)&c->r, &c->rcap, c->rlen + 4096, 1);
    ssize_t got = read(c->from_child, c->r + c->rlen, c->rcap - c->rlen);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got <= 0) break;
    c->rlen += (size_t)got;
  }
  for (size_t i = 0; i < c->rlen; i++)
    if (c->r[i] != '\n' && c->r[i] != '\r' && c->r[i] != ' ')
      return fail(c, e, ERR_PARSE, "printed more than its %ld answers: "
                  "'%.*s'", c->answered, (int)(c->rlen > 200 ? 200 : c->rlen),
                  c->r);
  return ERR_OK;
}

int costcmd_close(costcmd *c, err *e) {
  if (c->failed) return err_set(e, c->failed, "%s", c->msg);
  close_fd(&c->to_child);
  int rc = drain(c, e);
  if (rc) return rc;
  close_fd(&c->from_child);
  reap(c, c->timeout_s);
  if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
    char how[64];
    describe_exit(c, how, sizeof how);
    return fail(c, e, ERR_IO, "%s after its %ld answers", how, c->answered);
  }
  return ERR_OK;
}

void costcmd_free(costcmd *c) {
  if (!c) return;
  close_fd(&c->to_child);
  close_fd(&c->from_child);
  if (c->pid > 0) kill(-c->pid, SIGKILL);
  reap(c, 5);
  free(c->w), free(c->r), free(c->cmd);
  free(c->line_start), free(c->line_end), free(c->sent_at), free(c->ans);
  free(c);
}

long costcmd_answered(const costcmd *c) { return c->answered; }

const char *costcmd_command(const costcmd *c) { return c->cmd; }
