#pragma once
// The monotonic clock that workloads and the runner time with, and the wall clock runs are stamped with.
#include <chrono>

namespace mlsb {

using Clock = std::chrono::steady_clock;

/// Seconds elapsed on Clock since `t0`.
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// `seconds` as a Clock duration.
inline Clock::duration as_duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/// The wall-clock time in seconds since the Unix epoch (what runs and cases record as started/finished).
inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace mlsb
