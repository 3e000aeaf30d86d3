#include "backends/comm/bandwidth.hpp"

#include <stdexcept>
#include <string>

namespace mlsb::comm {

Collective parse_collective(std::string_view name) {
  if (name == "allreduce") return Collective::AllReduce;
  if (name == "allgather") return Collective::AllGather;
  if (name == "reduce_scatter") return Collective::ReduceScatter;
  if (name == "alltoall") return Collective::AllToAll;
  if (name == "broadcast") return Collective::Broadcast;
  throw std::invalid_argument("collective: '" + std::string(name) +
                              "' is not allreduce, allgather, reduce_scatter, alltoall or broadcast");
}

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "allreduce";
    case Collective::AllGather: return "allgather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "alltoall";
    case Collective::Broadcast: return "broadcast";
  }
  return "?";
}

double busbw_factor(Collective c, int n) {
  if (c == Collective::Broadcast) return 1.0;
  const double f = static_cast<double>(n - 1) / n;
  return c == Collective::AllReduce ? 2.0 * f : f;
}

double algbw_bytes(Collective c, double in_bytes, int ranks) {
  return c == Collective::AllGather ? in_bytes * ranks : in_bytes;
}

}  // namespace mlsb::comm
