#pragma once
// A minimal fork-join loop for workloads that split work into independent items (chunks of a tensor).
#include <cstdint>
#include <functional>

namespace mlsb {

/// Runs body(item, worker) for every item in [0, n) on min(threads, n) threads (the calling thread is
/// worker 0; items are handed out dynamically). After the first exception no new item starts; it is
/// rethrown once every thread has stopped. threads <= 1 runs inline.
void parallel_for(int64_t n, int threads, const std::function<void(int64_t item, int worker)>& body);

}  // namespace mlsb
