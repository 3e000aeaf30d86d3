#pragma once
// A minimal fork-join loop for workloads that split work into independent items (chunks of a tensor).
#include <algorithm>
#include <cstdint>
#include <functional>

namespace mlsb {

/// Runs body(item, worker) for every item in [0, n) on min(threads, n) threads (the calling thread is
/// worker 0; items are handed out dynamically). After the first exception no new item starts; it is
/// rethrown once every thread has stopped. threads <= 1 runs inline.
void parallel_for(int64_t n, int threads, const std::function<void(int64_t item, int worker)>& body);

/// Splits [0, n) into ranges of `chunk` (the last one shorter) and runs body(begin, end) for each on
/// min(threads, ranges) threads, as parallel_for does with its items. A template, so that the body is
/// inlined into the one std::function call per range.
template <typename F>
void parallel_for_ranges(int64_t n, int64_t chunk, int threads, F&& body) {
  parallel_for((n + chunk - 1) / chunk, threads,
               [&](int64_t i, int) { body(i * chunk, std::min(n, (i + 1) * chunk)); });
}

}  // namespace mlsb
