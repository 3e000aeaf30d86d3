#pragma once
// Algorithm and bus bandwidth of collectives, with nccl-tests' definitions (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw * factor, so busbw is comparable with the
// link's peak whatever the rank count.
#include <string_view>

namespace mlsb::comm {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };

/// Parses "allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"; throws std::invalid_argument.
Collective parse_collective(std::string_view name);
std::string_view to_string(Collective c);

/// busbw / algbw for n ranks: allreduce 2(n-1)/n; allgather, reduce-scatter, all-to-all (n-1)/n;
/// broadcast 1. For n = 1 every factor but broadcast's is 0 (no bus traffic).
double busbw_factor(Collective c, int ranks);

/// The bytes nccl-tests divides by time for algbw (its "size" column), given each rank's input buffer
/// of `in_bytes`: the input for allreduce, broadcast, reduce-scatter (n blocks) and all-to-all (n
/// blocks); the gathered output (in_bytes * ranks) for allgather.
double algbw_bytes(Collective c, double in_bytes, int ranks);

}  // namespace mlsb::comm
