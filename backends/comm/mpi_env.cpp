#include "backends/comm/mpi_env.hpp"

#include <mpi.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm::mpi_env {
namespace {

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

void ensure_initialized() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (initialized) {
      MPI_Query_thread(&provided);
    } else if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      error = "mpi: MPI_Init_thread failed";
      return;
    } else {
      std::atexit(finalize_at_exit);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_MULTIPLE)
      error = "mpi: the MPI library provides thread level " + std::to_string(provided) +
              ", below MPI_THREAD_MULTIPLE (the runner calls MPI from two threads)";
  });
  if (!error.empty()) throw CommError(error);
}

void abort_job(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
}

int world_rank() {
  ensure_initialized();
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  ensure_initialized();
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

}  // namespace mlsb::comm::mpi_env
