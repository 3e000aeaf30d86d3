#pragma once
// The timing protocol the benchmark clients of scripts/bench-mcp share (bench_mcp_call, bench_mcp_floor;
// sdk_call.mjs does the same in JavaScript), and their percentiles (nearest rank).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsb::mcp::bench {

/// The q-quantile (0 < q <= 1) by nearest rank; `samples` must not be empty.
inline double nearest_rank(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[std::max<size_t>(rank, 1) - 1];
}

/// Makes `warmup` untimed calls and prints "ready"; then, for each number N read from stdin, makes N timed
/// calls and prints "done"; at the end of stdin prints "CLIENT <calls> <median_us> <p95_us>". `call` makes
/// one call and returns its round trip in µs. Throws std::runtime_error when stdin asked for no calls.
inline void run_batches(const std::string& client, int warmup, const std::function<double()>& call) {
  for (int i = 0; i < warmup; ++i) call();
  std::cout << "ready" << std::endl;
  std::vector<double> us;
  for (int batch; std::cin >> batch;) {
    for (int i = 0; i < batch; ++i) us.push_back(call());
    std::cout << "done" << std::endl;
  }
  if (us.empty()) throw std::runtime_error("no timed calls: stdin asked for none");
  std::printf("%s %zu %.1f %.1f\n", client.c_str(), us.size(), nearest_rank(us, 0.5), nearest_rank(us, 0.95));
}

}  // namespace mlsb::mcp::bench
