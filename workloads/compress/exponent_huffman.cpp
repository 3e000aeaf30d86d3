// Statistics and code construction of the `exponent` codec: symbol histogram, entropy, the ideal ratio,
// length-limited Huffman code lengths (package-merge) and canonical codes.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "workloads/compress/exponent.hpp"

namespace mlsb::compress {
namespace {

// Counts symbols of elements [0, n) into four interleaved tables (consecutive equal symbols then hit
// different counters, so the increments do not wait on each other) and adds them to `hist`.
// n < 2^32 per call keeps the 32-bit counters exact.
template <typename U, typename SymbolOf>
void count_block(const uint8_t* data, int64_t n, SymbolOf symbol_of, uint64_t* hist) {
  uint32_t t[4][256] = {};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    U x[4];
    std::memcpy(x, data + i * sizeof(U), sizeof x);
    ++t[0][symbol_of(x[0])];
    ++t[1][symbol_of(x[1])];
    ++t[2][symbol_of(x[2])];
    ++t[3][symbol_of(x[3])];
  }
  for (; i < n; ++i) {
    U x;
    std::memcpy(&x, data + i * sizeof(U), sizeof x);
    ++t[0][symbol_of(x)];
  }
  for (int s = 0; s < 256; ++s) hist[s] += uint64_t{t[0][s]} + t[1][s] + t[2][s] + t[3][s];
}

template <typename U, typename SymbolOf>
void count_all(TensorView in, SymbolOf symbol_of, uint64_t* hist) {
  constexpr int64_t kBlock = int64_t{1} << 30;
  for (int64_t i = 0; i < in.count; i += kBlock)
    count_block<U>(in.data + i * sizeof(U), std::min(kBlock, in.count - i), symbol_of, hist);
}

}  // namespace

size_t exponent_raw_bytes(DType t) { return t == DType::F32 ? 3 : 1; }

void exponent_histogram(TensorView in, std::span<uint64_t, 256> hist) {
  std::fill(hist.begin(), hist.end(), 0);
  switch (in.dtype) {
    case DType::BF16: count_all<uint16_t>(in, [](uint16_t x) { return (x >> 7) & 0xFF; }, hist.data()); break;
    case DType::F16: count_all<uint16_t>(in, [](uint16_t x) { return x >> 8; }, hist.data()); break;
    case DType::F32: count_all<uint32_t>(in, [](uint32_t x) { return (x >> 23) & 0xFF; }, hist.data()); break;
  }
}

double entropy_bits(std::span<const uint64_t, 256> hist) {
  double total = 0;
  for (uint64_t c : hist) total += static_cast<double>(c);
  if (total == 0) return 0;
  double h = 0;
  for (uint64_t c : hist) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / total;
    h -= p * std::log2(p);
  }
  return h;
}

double exponent_ideal_ratio(TensorView in) {
  if (in.count == 0) return 1.0;
  std::array<uint64_t, 256> hist;
  exponent_histogram(in, hist);
  const double raw_bits = 8.0 * static_cast<double>(exponent_raw_bytes(in.dtype));
  return 8.0 * static_cast<double>(dtype_size(in.dtype)) / (raw_bits + entropy_bits(hist));
}

void huffman_code_lengths(std::span<const uint64_t, 256> hist, int max_len, std::span<uint8_t, 256> lengths) {
  if (max_len < 1 || max_len > kExponentMaxCodeLen)
    throw std::invalid_argument("max_len: must be 1.." + std::to_string(kExponentMaxCodeLen) + " (got " +
                                std::to_string(max_len) + ")");
  std::fill(lengths.begin(), lengths.end(), 0);
  // Present symbols sorted by (count, symbol); counts scaled down so package weights (at most
  // max_len times the total) cannot overflow 64 bits.
  uint64_t total = 0;
  for (uint64_t c : hist) total = c > UINT64_MAX - total ? UINT64_MAX : total + c;
  const int shift = std::max(0, static_cast<int>(std::bit_width(total)) - 58);
  struct Leaf { uint64_t weight; int symbol; };
  std::vector<Leaf> leaves;
  for (int s = 0; s < 256; ++s)
    if (hist[s] > 0) leaves.push_back({std::max<uint64_t>(1, hist[s] >> shift), s});
  const size_t n = leaves.size();
  if (n < 2) return;
  if (n > (size_t{1} << max_len))
    throw std::invalid_argument("max_len: " + std::to_string(n) + " distinct symbols need codes longer than " +
                                std::to_string(max_len) + " bits");
  std::sort(leaves.begin(), leaves.end(),
            [](const Leaf& a, const Leaf& b) { return a.weight != b.weight ? a.weight < b.weight : a.symbol < b.symbol; });

  // Package-merge (coin collector): level 0 holds the leaves as coins of denomination 2^-max_len; each
  // next level merges the leaves with packages of adjacent pairs of the level below. An item is a leaf
  // (its index into `leaves`) or a package (-1). The 2n - 2 cheapest items of the top level buy a
  // complete code; a symbol's length is how many of its coins they contain.
  struct Item { uint64_t weight; int leaf; };
  std::vector<std::vector<Item>> levels(static_cast<size_t>(max_len));
  for (size_t i = 0; i < n; ++i) levels[0].push_back({leaves[i].weight, static_cast<int>(i)});
  for (int l = 1; l < max_len; ++l) {
    const auto& below = levels[l - 1];
    auto& level = levels[l];
    size_t li = 0, pi = 0;
    const size_t packages = below.size() / 2;
    while (li < n || pi < packages) {
      const uint64_t pw = pi < packages ? below[2 * pi].weight + below[2 * pi + 1].weight : UINT64_MAX;
      if (li < n && (pi == packages || leaves[li].weight <= pw)) {
        level.push_back({leaves[li].weight, static_cast<int>(li)});
        ++li;
      } else {
        level.push_back({pw, -1});
        ++pi;
      }
    }
  }
  // Packages in a level's prefix are the first ones formed, so they cover a prefix of the level below.
  size_t take = 2 * n - 2;
  for (int l = max_len - 1; l >= 0 && take > 0; --l) {
    size_t packages = 0;
    for (size_t i = 0; i < take; ++i) {
      if (levels[l][i].leaf >= 0) ++lengths[leaves[levels[l][i].leaf].symbol];
      else ++packages;
    }
    take = 2 * packages;
  }
}

void huffman_canonical_codes(std::span<const uint8_t, 256> lengths, std::span<uint16_t, 256> codes) {
  uint32_t count[kExponentMaxCodeLen + 1] = {};
  for (uint8_t len : lengths) {
    if (len > kExponentMaxCodeLen)
      throw std::invalid_argument("lengths: code length " + std::to_string(len) + " exceeds " +
                                  std::to_string(kExponentMaxCodeLen));
    if (len > 0) ++count[len];
  }
  uint32_t next[kExponentMaxCodeLen + 1] = {};
  uint32_t code = 0;
  for (int len = 1; len <= kExponentMaxCodeLen; ++len) {
    code = (code + count[len - 1]) << 1;  // count[0] stays 0: absent symbols take no code
    next[len] = code;
    if (code + count[len] > (1u << len)) throw std::invalid_argument("lengths: violate Kraft's inequality");
  }
  for (int s = 0; s < 256; ++s) {
    codes[s] = 0;
    if (lengths[s] > 0) codes[s] = static_cast<uint16_t>(next[lengths[s]]++);
  }
}

}  // namespace mlsb::compress
