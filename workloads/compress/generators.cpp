// Synthetic tensors: fixed 64K-element blocks, each from its own RNG seeded by (seed, block index), so
// the bytes do not depend on how many threads fill the blocks.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/parallel.hpp"
#include "workloads/compress/inputs.hpp"
#include "workloads/compress/split_rng.hpp"

namespace mlsb::compress {
namespace {

constexpr int64_t kFillBlock = 1 << 16;
constexpr int64_t kParallelFrom = 1 << 22;  // elements; below this one thread is faster than starting two

enum class Dist { Gaussian, Laplace, Uniform, Outliers, Pathological };

Dist parse_distribution(std::string_view name) {
  if (name == "gaussian") return Dist::Gaussian;
  if (name == "laplace") return Dist::Laplace;
  if (name == "uniform") return Dist::Uniform;
  if (name == "outliers") return Dist::Outliers;
  if (name == "pathological") return Dist::Pathological;
  std::string known;
  for (const auto& n : distribution_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("distribution: unknown distribution '" + std::string(name) + "' (known: " + known +
                              ")");
}

/// Special values of the pathological distribution, as bit patterns of each dtype: quiet and signalling
/// NaNs with several payloads and both signs, ±Inf, ±0, subnormals (smallest, largest, one in between,
/// negative), the smallest and largest normals of both signs.
constexpr uint32_t kSpecialF32[] = {0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0xFFA00055, 0x7F800000,
                                    0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF,
                                    0x00012345, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF};
constexpr uint16_t kSpecialF16[] = {0x7E00, 0xFE00, 0x7E5A, 0x7C01, 0xFD55, 0x7C00, 0xFC00, 0x0000, 0x8000,
                                    0x0001, 0x8001, 0x03FF, 0x0155, 0x0400, 0x8400, 0x7BFF, 0xFBFF};
constexpr uint16_t kSpecialBF16[] = {0x7FC0, 0xFFC0, 0x7FC5, 0x7F81, 0xFFA5, 0x7F80, 0xFF80, 0x0000, 0x8000,
                                     0x0001, 0x8001, 0x007F, 0x0035, 0x0080, 0x8080, 0x7F7F, 0xFF7F};
constexpr int64_t kSpecials = std::size(kSpecialF32);
static_assert(std::size(kSpecialF16) == kSpecials && std::size(kSpecialBF16) == kSpecials);
/// Every third element (i % 3 == 1) of a pathological tensor is special, cycling through the list.
constexpr int64_t kSpecialStride = 3;

void store_special(uint8_t* data, DType t, int64_t i, int64_t which) {
  switch (t) {
    case DType::F32: std::memcpy(data + 4 * i, &kSpecialF32[which], 4); return;
    case DType::F16: std::memcpy(data + 2 * i, &kSpecialF16[which], 2); return;
    case DType::BF16: std::memcpy(data + 2 * i, &kSpecialBF16[which], 2); return;
  }
}

struct Params {
  Dist dist;
  DType dtype;
  double sigma;
  uint64_t seed;
};

void fill_block(const Params& p, uint8_t* data, int64_t begin, int64_t end, int64_t block_index) {
  detail::SplitRng rng(splitmix64(splitmix64(p.seed) + static_cast<uint64_t>(block_index)));
  const double laplace_b = p.sigma / std::sqrt(2.0);
  const double uniform_a = p.sigma * std::sqrt(3.0);
  for (int64_t i = begin; i < end; ++i) {
    double x = 0;
    switch (p.dist) {
      case Dist::Gaussian: x = p.sigma * rng.normal(); break;
      case Dist::Laplace: {
        const double u = rng.open01() - 0.5;
        x = -laplace_b * std::copysign(std::log(1 - 2 * std::fabs(u)), u);
        break;
      }
      case Dist::Uniform: x = uniform_a * (2 * rng.open01() - 1); break;
      case Dist::Outliers:
        x = p.sigma * rng.normal();
        if (rng.next() % 1000 == 0) x *= 100;
        break;
      case Dist::Pathological:
        if (i % kSpecialStride == 1) {
          store_special(data, p.dtype, i, (i / kSpecialStride) % kSpecials);
          continue;
        }
        x = p.sigma * rng.normal();
        break;
    }
    store_float(data, p.dtype, i, static_cast<float>(x));
  }
}

}  // namespace

const std::vector<std::string>& distribution_names() {
  static const std::vector<std::string> names = {"gaussian", "laplace", "uniform", "outliers", "pathological"};
  return names;
}

Tensor generate(std::string_view distribution, DType dtype, int64_t count, double sigma, uint64_t seed) {
  const Params p{parse_distribution(distribution), dtype, sigma, seed};
  if (count < 0) throw std::invalid_argument("count: must be >= 0 (got " + std::to_string(count) + ")");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw std::invalid_argument("sigma: must be finite and > 0 (got " + std::to_string(sigma) + ")");
  Tensor t;
  t.name = std::string(distribution);
  t.dtype = dtype;
  t.shape = {count};
  t.data.resize(static_cast<size_t>(count) * dtype_size(dtype));
  const int64_t blocks = (count + kFillBlock - 1) / kFillBlock;
  parallel_for(blocks, count >= kParallelFrom ? 2 : 1, [&](int64_t b, int) {
    fill_block(p, t.data.data(), b * kFillBlock, std::min(count, (b + 1) * kFillBlock), b);
  });
  return t;
}

}  // namespace mlsb::compress
