#pragma once
// Host side of the CUDA executor: which rows of a batch each expert of a step computes on, and where
// its outputs go, as flat int32 lists the kernels read (built once per replay, uploaded once). Plain
// C++ (no CUDA), so it builds and is testable everywhere.
#include <cstdint>
#include <vector>

#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload::gpu {

/// Per step (b * L + l, as the CachePlan counts them) the distinct experts the batch's tokens need at
/// layer l, ascending, and for each such (step, expert) entry the rows it computes on.
struct RoutingLists {
  int64_t layers = 0, topk = 0;
  int64_t max_batch = 0;                ///< the largest batch of the schedule (tokens)
  std::vector<int64_t> step_start{0};   ///< offsets into `expert`, size steps + 1
  std::vector<int32_t> expert;          ///< per entry: the expert id
  std::vector<int64_t> row_start{0};    ///< per entry: offsets into src / dst, size entries + 1
  std::vector<int32_t> src;             ///< per row: the token's schedule position p (row of hidden [P, h])
  std::vector<int32_t> dst;             ///< per row: i * k + j, i the token's row in its batch, j its slot
  std::vector<float> weight;            ///< [P, L, k]: combine weights of schedule position p at layer l

  int64_t steps() const { return static_cast<int64_t>(step_start.size()) - 1; }
  int64_t entries() const { return static_cast<int64_t>(expert.size()); }
  /// The entry of `expert` at `step`, or -1 when no token of the batch needs it there.
  int64_t find(int64_t step, int32_t expert) const;
};

/// The lists of schedule `s` over trace `t`; rows of an entry in batch order. Throws
/// std::invalid_argument("schedule: ...") for a token index outside the trace or more schedule
/// positions than int32 indexes, and ("trace: ...") for an expert id outside [0, t.experts).
RoutingLists build_routing_lists(const RoutingTrace& t, const Schedule& s);

}  // namespace mlsb::moe_offload::gpu
