#pragma once
// The world of an MPI check program on GPUs (tests/mpi/*_gpu_check): the mpi communicator itself (ranks may share a
// GPU), or with "nccl" as the first argument an NCCL communicator over it (one GPU per rank). Header-only, no gtest.
#include <cstdio>
#include <memory>
#include <string>

#include "backends/comm/communicator.hpp"
#ifdef MLSB_HAVE_NCCL
#include "backends/comm/nccl_communicator.hpp"
#endif
#include "backends/cuda/device.hpp"

namespace mlsb::test {

/// 0 when the program goes on, its world in `nccl` (nccl mode) or `mpi` (nccl left empty); 77 (skip, after rank 0
/// printed "skipped: REASON") without a GPU, in nccl mode with fewer GPUs than ranks on a node, or in a build
/// without NCCL. Every rank decides alike.
inline int gpu_world(comm::Communicator& mpi, int argc, char** argv, std::unique_ptr<comm::Communicator>& nccl) {
  std::string why;
  if (!cuda::cuda_available(&why)) {
    if (mpi.rank() == 0) std::printf("skipped: no GPU: %s\n", why.c_str());
    return 77;
  }
  if (argc < 2 || std::string(argv[1]) != "nccl") return 0;
#ifdef MLSB_HAVE_NCCL
  const int gpus = cuda::device_count(), ranks = mpi.size();
  if (mpi.max_over_ranks(comm::node_local_rank(mpi.rank()) + 1) > gpus) {
    if (mpi.rank() == 0) std::printf("skipped: nccl needs a GPU per rank (%d ranks, %d GPUs)\n", ranks, gpus);
    return 77;
  }
  nccl = comm::make_nccl_communicator(mpi);
  return 0;
#else
  if (mpi.rank() == 0) std::printf("skipped: built without NCCL\n");
  return 77;
#endif
}

}  // namespace mlsb::test
