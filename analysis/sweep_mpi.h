/* sweep_mpi: a sweep spread over the ranks of an MPI job (`mpirun -n K
 * geodes sweep ...`). Rank 0 reads the sweep file and the database, hands
 * the missing points out round-robin, evaluates its share and writes every
 * row; the other ranks evaluate and send results to it. MPI is initialised
 * only here, only when the process was launched by mpirun, and linked only
 * into geodes-mpi: the libraries compile this file without MPI (stubs), and
 * geodes-mpi compiles it again with GEODES_HAVE_MPI. */
#ifndef ANALYSIS_SWEEP_MPI_H
#define ANALYSIS_SWEEP_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/sweep.h"

/* True when this process was started by mpirun (OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK or PMI_RANK in the environment). Reads the environment only. */
bool sweep_mpi_launched(void);

/* True in the executable linked with Open MPI (geodes-mpi, which `geodes
 * sweep` execs under mpirun so that no other run loads MPI's libraries);
 * false in geodes itself, whose sweep_mpi_* are stubs. */
bool sweep_mpi_available(void);

/* MPI_Init; *rank and *size get this process's rank and the job's size.
 * ERR_CONFIG in an executable without MPI (sweep_mpi_available false). */
int sweep_mpi_init(int *rank, int *size, err *e);

/* MPI_Finalize (nothing when MPI was never initialised). */
void sweep_mpi_finalize(void);


/* Broadcasts rank 0's buffer (text, *len bytes) to every rank; the other
 * ranks pass NULL and get a malloc'ed, NUL-terminated copy. Rank 0 gets
 * text back. A negative *len on rank 0 tells the others to give up (NULL). */
char *sweep_mpi_bcast(char *text, long *len);

/* Broadcasts rank 0's status (ERR_OK or an error code) to every rank and
 * returns it, so that all ranks stop together when rank 0 cannot start. */
int sweep_mpi_status(int status);

/* Every rank's status combined (a collective: every rank calls it): ERR_OK
 * when all are, else the lowest error code, so that all ranks stop
 * together when any one cannot start (no rank waits for a lost one, and no
 * MPI_Abort ends the job). */
int sweep_mpi_agree(int status);

/* sweep_run over the MPI job: d is the database on rank 0 and NULL on the
 * others. st counts what this rank evaluated (rank 0: everything stored).
 * When rank 0 fails (a database error), it stops handing out points,
 * collects those in flight and releases every rank, then returns the error
 * (e filled on rank 0); the other ranks return ERR_OK. */
int sweep_mpi_run(const sweep *s, db *d, const sweep_opts *o, sweep_stats *st,
                  err *e);

#endif
