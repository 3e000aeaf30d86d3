#pragma once
// The order in which a replay processes a trace's tokens: forward passes (batches), and the windows
// of batches whose tokens are available together (so a token scheduler may regroup them).
//   decode:  sequences are served in groups of batch * window concurrent requests; at each position
//            the group's tokens form one window of `window` batches of `batch` tokens (one token per
//            sequence, so a sequence's tokens stay in order);
//   prefill: each sequence is cut into chunks of `batch` tokens; `window` consecutive chunks of a
//            sequence form a window.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {

enum class Phase { Decode, Prefill };
Phase parse_phase(std::string_view name);  ///< "decode" | "prefill"; throws std::invalid_argument("phase: ...")

struct Schedule {
  std::vector<int64_t> tokens;        ///< token indices of the trace, in processing order
  std::vector<int64_t> batch_start;   ///< offsets into `tokens`: batch b is [batch_start[b], batch_start[b+1])
  std::vector<int64_t> window_start;  ///< batch index where each window starts, then the batch count
  int64_t batches() const { return static_cast<int64_t>(batch_start.size()) - 1; }
};

/// The schedule of sequences [seq_begin, seq_end) of `t`. Throws std::invalid_argument naming the
/// axis for batch < 1 or window < 1.
Schedule make_schedule(const RoutingTrace& t, Phase phase, int64_t batch, int64_t window, int64_t seq_begin,
                       int64_t seq_end);

/// The expert lookups of a schedule: one step per (batch, layer), in order b * L + l, holding the
/// distinct experts the batch's tokens need at that layer, ascending. A lookup is one (step, expert).
struct LookupStream {
  int64_t layers = 0, experts = 0;
  std::vector<int64_t> step_start{0};  ///< offsets into `expert`, size steps() + 1
  std::vector<int32_t> expert;
  int64_t steps() const { return static_cast<int64_t>(step_start.size()) - 1; }
  int64_t lookups() const { return static_cast<int64_t>(expert.size()); }
};

LookupStream make_lookups(const RoutingTrace& t, const Schedule& s);

}  // namespace mlsb::moe_offload
