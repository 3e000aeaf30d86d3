#pragma once
// The process's MPI library state: initialised once (MPI_THREAD_MULTIPLE, since the runner's case
// thread and its main thread both call MPI) and finalised at exit.
namespace mlsb::comm::mpi_env {

/// Calls MPI_Init_thread on first use (thread-safe) and registers MPI_Finalize with atexit. Throws
/// CommError when the library cannot initialise or provides less than MPI_THREAD_MULTIPLE.
void ensure_initialized();
/// Ends every rank of the job now (MPI_Abort on MPI_COMM_WORLD with `code`), for a rank that must not
/// wait in MPI_Finalize for peers that may be stuck anywhere (after a signal). Returns only when MPI
/// was never initialised or is already finalised.
void abort_job(int code);
/// Rank and size in MPI_COMM_WORLD (initialising MPI).
int world_rank();
int world_size();

}  // namespace mlsb::comm::mpi_env
