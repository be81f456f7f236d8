/* sweep_mpi: sweeps over MPI ranks.
 * Invariant: rank 0 is the only writer and hands the missing points out on
 * demand (SWEEP_MPI_AHEAD to each other rank, the next to whichever rank
 * returns a result, and one to itself whenever no result is waiting); every point is
 * evaluated exactly once and stored as soon as rank 0 has it, so the
 * database holds the same rows as a single-process sweep (each row depends
 * on its point only), and a slow rank never holds the others back. */
#include "analysis/sweep_mpi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"

#ifdef GEODES_HAVE_MPI
#include <mpi.h>
#endif

bool sweep_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
         getenv("PMI_RANK");
}

#ifndef GEODES_HAVE_MPI

bool sweep_mpi_available(void) { return false; }

int sweep_mpi_init(int *rank, int *size, err *e) {
  *rank = 0, *size = 1;
  return err_set(e, ERR_CONFIG,
                 "launched by mpirun, but geodes-mpi is not beside this "
                 "geodes (it is built where Open MPI is installed: install "
                 "libopenmpi-dev and rebuild)");
}

void sweep_mpi_finalize(void) {}

char *sweep_mpi_bcast(char *text, long *len) {
  (void)len;
  return text;
}

int sweep_mpi_status(int status) { return status; }

int sweep_mpi_agree(int status) { return status; }

int sweep_mpi_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
                  err *e) {
  return sweep_run(s, d, o, st, e);
}

#else

enum { TAG_RESULT = 1, TAG_WORK = 2 };
#define NO_POINT UINT64_MAX /* "no more work": the rank returns */

bool sweep_mpi_available(void) { return true; }

int sweep_mpi_init(int *rank, int *size, err *e) {
  int provided;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided) !=
      MPI_SUCCESS)
    return err_set(e, ERR_CONFIG, "MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return ERR_OK;
}

void sweep_mpi_finalize(void) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down) MPI_Finalize();
}

char *sweep_mpi_bcast(char *text, long *len) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Bcast(len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (*len < 0) return NULL;
  if (rank != 0) {
    text = mem_alloc((size_t)*len + 1);
    text[*len] = '\0';
  }
  for (long at = 0; at < *len;) { /* MPI counts are int */
    int chunk = *len - at > (1 << 30) ? (1 << 30) : (int)(*len - at);
    MPI_Bcast(text + at, chunk, MPI_BYTE, 0, MPI_COMM_WORLD);
    at += chunk;
  }
  return text;
}

int sweep_mpi_status(int status) {
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

int sweep_mpi_agree(int status) {
  int all = status;
  MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* Rank 0: the next result message from any rank (malloc'ed, *len bytes),
 * and the rank that sent it. */
static char *receive_result(int *from, int *len) {
  MPI_Status ms;
  MPI_Probe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &ms);
  MPI_Get_count(&ms, MPI_BYTE, len);
  char *buf = mem_alloc((size_t)*len + 1);
  MPI_Recv(buf, *len, MPI_BYTE, ms.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  *from = ms.MPI_SOURCE;
  return buf;
}

/* Rank 0: stores one result that arrived from another rank; *from is that
 * rank. */
static int receive_one(sweep_writer *w, int *from, err *e) {
  int len;
  char *buf = receive_result(from, &len);
  uint64_t point = 0;
  int status = ERR_CONFIG;
  err pe = {0};
  db_result r;
  db_result_init(&r);
  if (len < (int)sizeof point ||
      (memcpy(&point, buf, sizeof point),
       !sweep_unpack(buf + sizeof point, (size_t)len - sizeof point, &status,
                     &pe, &r)))
    status = err_set(&pe, ERR_CONFIG, "rank %d sent a malformed result",
                     *from);
  free(buf);
  int rc = sweep_writer_put(w, (size_t)point, status, &pe, &r, e);
  db_result_clear(&r);
  return rc;
}

/* Evaluates point i; rank 0 stores it, the others send it to rank 0. */
static int evaluate(const sweep *s, const sweep_opts *o, size_t i, int rank,
                    sweep_writer *w, err *e) {
  sweep_point p;
  sweep_point_at(s, i, &p);
  db_result r;
  db_result_init(&r);
  err pe = {0};
  int status = o->eval(o->ctx, &p, &r, &pe), rc = ERR_OK;
  if (rank == 0) {
    rc = sweep_writer_put(w, i, status, &pe, &r, e);
  } else {
    size_t len;
    char *packed = sweep_pack(status, &pe, &r, &len);
    char *buf = mem_alloc(len + sizeof(uint64_t));
    uint64_t point = i;
    memcpy(buf, &point, sizeof point);
    memcpy(buf + sizeof point, packed, len);
    MPI_Send(buf, (int)(len + sizeof point), MPI_BYTE, 0, TAG_RESULT,
             MPI_COMM_WORLD);
    free(buf), free(packed);
  }
  db_result_clear(&r);
  return rc;
}

static void assign(int rank, uint64_t point) {
  MPI_Send(&point, 1, MPI_UINT64_T, rank, TAG_WORK, MPI_COMM_WORLD);
}

/* Each other rank holds up to this many assigned points, so it always has
 * the next one at hand while rank 0 is busy evaluating its own. */
#define SWEEP_MPI_AHEAD 2

/* Rank 0 after a failure: receives and drops the results of the points the
 * other ranks still hold, releasing each rank once it holds none (a rank
 * that holds none was released already). */
static void release(int *held, int size) {
  for (;;) {
    int r = 1;
    while (r < size && held[r] == 0) r++;
    if (r == size) return;
    int from, len;
    free(receive_result(&from, &len));
    if (--held[from] == 0) assign(from, NO_POINT);
  }
}

/* Rank 0: hands out the n points of todo and stores every result; on a
 * failure, releases the other ranks before it returns.
 * Invariant: held[r] is the number of points rank r holds, and a rank
 * holding none has been sent NO_POINT. */
static int coordinate(const sweep *s, const sweep_opts *o, const size_t *todo,
                      size_t n, int size, sweep_writer *w, err *e) {
  size_t next = 0, done = 0;
  int *held = mem_calloc((size_t)size, sizeof *held);
  for (int r = 1; r < size; r++) {
    while (held[r] < SWEEP_MPI_AHEAD && next < n)
      assign(r, todo[next++]), held[r]++;
    if (!held[r]) assign(r, NO_POINT);
  }
  int rc = ERR_OK, waiting, from;
  while (done < n && rc == ERR_OK) {
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &waiting,
               MPI_STATUS_IGNORE);
    /* what follows waits (an evaluation, a blocking receive) unless a
     * result is already here: hold no transaction through it */
    if (!waiting && (rc = sweep_writer_idle(w, e))) break;
    if (waiting || next >= n) {
      rc = receive_one(w, &from, e);
      if (next < n)
        assign(from, todo[next++]);
      else if (--held[from] == 0)
        assign(from, NO_POINT);
    } else {
      rc = evaluate(s, o, todo[next++], 0, w, e);
    }
    done++;
  }
  if (rc) release(held, size);
  free(held);
  return rc;
}

/* Ranks > 0: evaluate what rank 0 assigns until it says NO_POINT; returns
 * how many. */
static size_t work(const sweep *s, const sweep_opts *o, int rank) {
  size_t mine = 0;
  for (;;) {
    uint64_t point;
    MPI_Recv(&point, 1, MPI_UINT64_T, 0, TAG_WORK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (point == NO_POINT) return mine;
    evaluate(s, o, (size_t)point, rank, NULL, NULL);
    mine++;
  }
}

int sweep_mpi_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
                  err *e) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  sweep_stats local = {0};
  if (!st) st = &local;
  if (rank != 0) {
    *st = (sweep_stats){.total = sweep_count(s)};
    st->computed = work(s, o, rank);
    return ERR_OK;
  }
  size_t n, stale;
  size_t *todo = sweep_missing(s, d, o, &n, &stale, e);
  if (!todo) { /* the other ranks wait for work: release them */
    for (int r = 1; r < size; r++) assign(r, NO_POINT);
    return e ? e->code : ERR_DB;
  }
  *st = (sweep_stats){.total = sweep_count(s),
                      .present = sweep_count(s) - n, .stale = stale};
  sweep_writer *w = sweep_writer_new(s, d, o, st->total, n);
  int rc = coordinate(s, o, todo, n, size, w, e);
  free(todo);
  int rc2 = sweep_writer_finish(w, st, e);
  return rc ? rc : rc2;
}

#endif
