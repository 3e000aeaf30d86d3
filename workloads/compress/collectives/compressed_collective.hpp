#pragma once
// Collectives with a codec in the loop, on any host-buffer communicator (local, mpi).
//
// Algorithms:
//   native  the communicator's own collective, uncompressed (the baseline users would run).
//   gather  compress this rank's data, exchange the compressed bytes (allgatherv, alltoallv or
//           broadcast), decompress, and reduce in rank order (fp32 accumulation, one rounding to the
//           dtype at the end). Any codec.
//   ring    allreduce only: ring reduce-scatter then ring allgather (n-1 steps each), every step's chunk
//           compressed; partial sums are rounded to the dtype at each step. Stateless codecs only.
//   linear  allreduce only, for codecs whose encoding can be summed: randomk (indices from a seed shared
//           by all ranks, values allreduced) and powersgd (P then Q allreduced; Vogels et al. 2019),
//           both with error feedback.
// With codec "none", gather and ring are the uncompressed twins of the compressed runs: a lossless
// codec's result equals its twin's bit for bit, which verify() checks.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "backends/comm/bandwidth.hpp"
#include "backends/comm/communicator.hpp"
#include "workloads/compress/codec.hpp"
#include "workloads/compress/powersgd.hpp"
#include "workloads/compress/sparsify.hpp"

namespace mlsb::compress {

enum class Algorithm { Native, Gather, Ring, Linear };
/// Parses "native", "gather", "ring", "linear"; throws std::invalid_argument.
Algorithm parse_algorithm(std::string_view name);
std::string_view to_string(Algorithm a);

/// The default algorithm of a codec for a collective: native for "none"; for allreduce linear with
/// randomk/powersgd, gather with topk, ring otherwise (a ring step sends 2(n-1)/n of the compressed
/// tensor, gather n-1 times it); gather for the other collectives.
Algorithm default_algorithm(comm::Collective op, std::string_view codec);

/// Elements of the input and output of a collective for `count` input elements per rank:
/// allreduce, broadcast, alltoall: count -> count; allgather: count -> count * ranks;
/// reduce_scatter: count -> count / ranks. reduce_scatter and alltoall need count % ranks == 0.
int64_t collective_output_count(comm::Collective op, int64_t count, int ranks);

/// What one run cost this rank.
struct CollectiveStats {
  double compress_s = 0;    ///< time in the codec's compress
  double decompress_s = 0;  ///< time in decompress and the reduction of decoded data
  /// Bytes this rank sends under a ring schedule of the exchange it uses: for native collectives
  /// busbw_factor * algbw bytes (what nccl-tests' busbw counts); for gather the same factor applied
  /// to the compressed size; for ring the bytes of its sendrecv steps; for linear the allreduced encoding.
  double wire_bytes = 0;
};

class CompressedCollective {
 public:
  /// Throws std::invalid_argument for a combination that cannot run (ring or linear with another
  /// collective than allreduce, ring with a stateful codec, linear with a codec that is not linear)
  /// and for codec parameters make_codec rejects.
  CompressedCollective(comm::Communicator& comm, comm::Collective op, Algorithm algorithm, const CodecConfig& codec);

  /// One collective: `in` is this rank's input (count elements), `out` receives
  /// collective_output_count(...) elements of the same dtype. Broadcast's root is rank 0. On a
  /// device-buffer communicator (nccl) only the native algorithm runs, on device pointers, and a
  /// broadcast runs in place (in.data == out.data).
  /// Throws CodecError, comm::CommError, or std::invalid_argument for a count the collective cannot split.
  CollectiveStats run(TensorView in, MutableTensorView out);

  Algorithm algorithm() const { return algorithm_; }

 private:
  CollectiveStats run_native(TensorView in, MutableTensorView out);
  CollectiveStats run_gather(TensorView in, MutableTensorView out);
  CollectiveStats run_ring(TensorView in, MutableTensorView out);
  CollectiveStats run_linear(TensorView in, MutableTensorView out);

  comm::Communicator& comm_;
  comm::Collective op_;
  Algorithm algorithm_;
  CodecConfig config_;
  std::unique_ptr<Codec> codec_;        // gather, ring
  ErrorFeedback feedback_;              // linear
  std::unique_ptr<PowerSgd> powersgd_;  // linear powersgd (shaped on first use)
  uint64_t step_ = 0;                   // linear randomk: the shared index step
};

}  // namespace mlsb::compress
