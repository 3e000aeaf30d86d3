#include "util/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mlsb {

void parallel_for(int64_t n, int threads, const std::function<void(int64_t, int)>& body) {
  const int workers = static_cast<int>(std::min<int64_t>(std::max(threads, 1), n));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) body(i, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mutex;
  auto run = [&](int worker) {
    try {
      for (int64_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) body(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace mlsb
