#pragma once
// The NCCL communicator: one GPU per rank, bootstrapped over an MPI communicator. Collective buffers are
// device memory (device_buffers() is true); host values (expect_same) travel over the bootstrap.
#include <memory>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm {

/// Creates an NCCL communicator over the ranks of `mpi_bootstrap` (a collective: every rank calls it).
/// Rank r uses GPU (OMPI_COMM_WORLD_LOCAL_RANK, else SLURM_LOCALID, else r) modulo the visible device
/// count and its own non-blocking CUDA stream (the communication stream); the ncclUniqueId is broadcast
/// over a duplicate of the bootstrap that the communicator keeps as its host_side() (expect_same, counts,
/// times). Initialisation runs on a non-blocking NCCL communicator, and the collectives on a blocking child
/// split from it (ncclCommSplit): a non-blocking communicator would create and join a thread for every call.
/// Initialisation, the split and every collective complete by polling (cudaStreamQuery, ncclCommGetAsyncError)
/// under the timeout; a blocking launch returns once its kernels are queued. So that no launch has to connect
/// ranks (which no deadline would guard), the init connects the collectives (NCCL_RUNTIME_CONNECT=0 is set
/// for the process unless the user set it) and a one-byte exchange after the split connects every pair.
/// ialltoallv returns once its ncclSend/ncclRecv are enqueued, and its request polls an
/// event recorded after them. A timeout or a cancellation aborts the NCCL communicator (ncclCommAbort) and
/// throws CommTimeout / CommError, after which the communicator refuses further calls; so does a request
/// dropped in flight that its peers do not complete within the settle time. One rank on one GPU works (the
/// collectives degenerate to copies); NCCL refuses two ranks on one GPU. Throws CommError when there is no
/// usable GPU or NCCL fails.
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& mpi_bootstrap);

}  // namespace mlsb::comm
