#pragma once
// The monotonic clock that workloads and the runner time with.
#include <chrono>

namespace mlsb {

using Clock = std::chrono::steady_clock;

/// Seconds elapsed on Clock since `t0`.
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace mlsb
