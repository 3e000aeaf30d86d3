#pragma once
// The one-rank communicator: every collective is a local copy (a reduction over one rank is its input).
#include <memory>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm {

/// rank 0 of 1; host buffers. Peers other than 0 (root, dst, src) and byte counts that disagree with
/// one rank (allgatherv, alltoallv, sendrecv) throw CommError.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace mlsb::comm
