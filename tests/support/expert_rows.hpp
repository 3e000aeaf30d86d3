#pragma once
// Rows of random bytes laid out by local expert, for the tests of EpExchange's pipeline (CPU and GPU).
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace mlsb::test {

/// counts[j] rows of `row` bytes for local expert j, expert after expert; offsets[j] is expert j's first row
/// (offsets has counts.size() + 1 entries), bytes the rows' random content (std::mt19937 from `seed`).
struct ExpertRows {
  std::vector<int64_t> counts;
  size_t row;
  std::vector<int64_t> offsets;
  std::vector<unsigned char> bytes;

  ExpertRows(std::vector<int64_t> rows_per_expert, size_t row_bytes, unsigned seed)
      : counts(std::move(rows_per_expert)), row(row_bytes), offsets(counts.size() + 1, 0) {
    for (size_t j = 0; j < counts.size(); ++j) offsets[j + 1] = offsets[j] + counts[j];
    bytes.resize(static_cast<size_t>(offsets.back()) * row);
    std::mt19937 rng(seed);
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  }
  int64_t experts() const { return static_cast<int64_t>(counts.size()); }
  size_t total() const { return bytes.size(); }
};

}  // namespace mlsb::test
