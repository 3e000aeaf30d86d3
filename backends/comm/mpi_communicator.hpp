#pragma once
// The Open MPI communicator: non-blocking MPI collectives completed by a polling loop with a deadline,
// so a rank that never arrives gives CommTimeout instead of a hang.
#include <cstddef>
#include <memory>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm {

/// A communicator over a duplicate of MPI_COMM_WORLD (initialising MPI on first use). Errors return
/// (MPI_ERRORS_RETURN) and become CommError with MPI's message. BF16/F16 reductions use user-defined
/// ops that accumulate in fp32 and round to nearest-even (reduce.hpp). Messages above the message
/// limit are split, so 64-bit counts work with Open MPI's int counts. After a timeout, a cancellation
/// or an error the communicator refuses further calls (CommError), since a collective is left pending
/// on it; the receive buffers of that collective may still be written if a late rank arrives.
/// In-place operation (send == recv) is allowed for allreduce only. ialltoallv is MPI_Ialltoallv (or, above the
/// message limit, point-to-point requests), progressed by its request's test() and wait().
std::unique_ptr<Communicator> make_mpi_communicator();

/// The largest message one MPI call carries, in bytes (default 1 GiB; at most INT_MAX). Tests lower it
/// to exercise the split paths with small buffers. Applies to collectives started afterwards.
void set_mpi_message_limit(size_t bytes);
size_t mpi_message_limit();

}  // namespace mlsb::comm
