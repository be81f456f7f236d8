/* sweep_mpi: sweeps over MPI ranks.
 * Invariant: rank 0 is the only writer. Point t of the missing list belongs
 * to rank t mod size; every rank evaluates its points in increasing t, and
 * rank 0 stores a result as soon as it has it, so the database holds the
 * same rows as a single-process sweep (each row depends on its point only). */
#include "analysis/sweep_mpi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "traces/mem.h"

#ifdef GEODES_HAVE_MPI
#include <mpi.h>
#endif

bool sweep_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
         getenv("PMI_RANK");
}

#ifndef GEODES_HAVE_MPI

int sweep_mpi_init(int *rank, int *size, err *e) {
  *rank = 0, *size = 1;
  return err_set(e, ERR_CONFIG,
                 "launched by mpirun, but this geodes was built without MPI "
                 "(install libopenmpi-dev and rebuild)");
}

void sweep_mpi_finalize(void) {}

_Noreturn void sweep_mpi_abort(int code) { exit(code); }

char *sweep_mpi_bcast(char *text, long *len) {
  (void)len;
  return text;
}

int sweep_mpi_status(int status) { return status; }

int sweep_mpi_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
                  err *e) {
  return sweep_run(s, d, o, st, e);
}

#else

enum { TAG_RESULT = 1 };

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

_Noreturn void sweep_mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
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

/* Rank 0: stores one result that arrived from another rank. */
static int receive_one(sweep_writer *w, err *e) {
  MPI_Status ms;
  int len;
  MPI_Probe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &ms);
  MPI_Get_count(&ms, MPI_BYTE, &len);
  char *buf = mem_alloc((size_t)len + 1);
  MPI_Recv(buf, len, MPI_BYTE, ms.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
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
                     ms.MPI_SOURCE);
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

int sweep_mpi_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
                  err *e) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t n = 0;
  size_t *todo = NULL;
  if (rank == 0) {
    size_t missing;
    if (!(todo = sweep_missing(s, d, &missing, e))) sweep_mpi_abort(1);
    n = missing;
  }
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  uint64_t *list = mem_alloc((size_t)n * sizeof *list + 1);
  for (uint64_t t = 0; rank == 0 && t < n; t++) list[t] = todo[t];
  for (uint64_t at = 0; at < n;) {
    int chunk = n - at > (1u << 26) ? (1 << 26) : (int)(n - at);
    MPI_Bcast(list + at, chunk, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    at += (uint64_t)chunk;
  }
  free(todo);
  sweep_stats local = {0};
  if (!st) st = &local;
  *st = (sweep_stats){.total = sweep_count(s), .present = sweep_count(s) - n};
  sweep_writer *w = rank == 0 ? sweep_writer_new(s, d, o, st->total, n) : NULL;
  size_t mine = 0, remote = 0;
  int rc = ERR_OK, flag;
  for (uint64_t t = (uint64_t)rank; t < n && rc == ERR_OK;
       t += (uint64_t)size, mine++) {
    rc = evaluate(s, o, (size_t)list[t], rank, w, e);
    while (rank == 0 && rc == ERR_OK &&
           (MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag,
                       MPI_STATUS_IGNORE),
            flag)) {
      rc = receive_one(w, e);
      remote++;
    }
  }
  while (rank == 0 && rc == ERR_OK && mine + remote < n) {
    rc = receive_one(w, e);
    remote++;
  }
  free(list);
  if (rank == 0) {
    int rc2 = sweep_writer_finish(w, st, e);
    if (rc == ERR_OK) rc = rc2;
    if (rc) sweep_mpi_abort(1); /* the other ranks may wait on a send */
  } else {
    st->computed = mine;
  }
  return rc;
}

#endif
