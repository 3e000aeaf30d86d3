#pragma once
// Percentiles of a latency sample, computed the same way as sdk_call.mjs (nearest rank).
#include <algorithm>
#include <cmath>
#include <vector>

namespace mlsb::mcp::bench {

/// The q-quantile (0 < q <= 1) by nearest rank; `samples` must not be empty.
inline double nearest_rank(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[std::max<size_t>(rank, 1) - 1];
}

}  // namespace mlsb::mcp::bench
