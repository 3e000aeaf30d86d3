// Top-k and random-k sparsifiers with error feedback; the stream format is documented in sparsify.hpp.
#include "workloads/compress/sparsify.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>

#include "workloads/compress/lossy_stream.hpp"
#include "workloads/compress/split_rng.hpp"

namespace mlsb::compress {

int64_t sparse_k(int64_t n, double density) {
  if (n <= 0) return 0;
  const double k = std::round(density * static_cast<double>(n));
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(k, static_cast<double>(n))), 1, n);
}

std::vector<int64_t> topk_indices(std::span<const float> x, int64_t k) {
  const int64_t n = static_cast<int64_t>(x.size());
  k = std::clamp<int64_t>(k, 0, n);
  std::vector<int64_t> out;
  if (k == 0) return out;
  out.reserve(static_cast<size_t>(k));
  // |x| as its bit pattern orders magnitudes, with NaN above Inf: the k-th largest key is the threshold;
  // keys above it are all kept and ties at it are taken by ascending index.
  auto key = [&](int64_t i) { return std::bit_cast<uint32_t>(x[i]) & 0x7FFFFFFFu; };
  std::vector<uint32_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = key(i);
  std::nth_element(keys.begin(), keys.begin() + (k - 1), keys.end(), std::greater<>());
  const uint32_t threshold = keys[k - 1];
  keys = {};
  int64_t above = 0;
  for (int64_t i = 0; i < n; ++i) above += key(i) > threshold;
  int64_t ties = k - above;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = key(i);
    if (v > threshold || (v == threshold && ties-- > 0)) out.push_back(i);
  }
  return out;
}

std::vector<int64_t> randomk_indices(int64_t n, int64_t k, uint64_t seed, uint64_t step) {
  k = std::clamp<int64_t>(k, 0, std::max<int64_t>(n, 0));
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(k));
  if (k == n) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  // Floyd's algorithm ("A sample of brilliance", CACM 1987) with a bitmap as the set: a uniform k-subset
  // in O(k) draws; scanning the bitmap (n/8 bytes) yields it in ascending order.
  std::vector<uint64_t> bits(static_cast<size_t>((n + 63) / 64));
  detail::SplitRng rng(splitmix64(seed) ^ splitmix64(step + 0x5851f42d4c957f2dULL));
  for (int64_t j = n - k; j < n; ++j) {
    int64_t t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j) + 1));
    if (bits[t >> 6] >> (t & 63) & 1) t = j;
    bits[t >> 6] |= uint64_t{1} << (t & 63);
  }
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t b = bits[w]; b; b &= b - 1) out.push_back(static_cast<int64_t>(w * 64) + std::countr_zero(b));
  }
  return out;
}

void ErrorFeedback::apply(std::span<float> x) {
  if (residual_.size() != x.size()) residual_.assign(x.size(), 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] += residual_[i];
}

void ErrorFeedback::update(std::span<const float> corrected, std::span<const float> reconstructed) {
  if (corrected.size() != reconstructed.size())
    throw std::invalid_argument("ErrorFeedback::update: corrected has " + std::to_string(corrected.size()) +
                                " elements, reconstructed " + std::to_string(reconstructed.size()));
  residual_.resize(corrected.size());
  for (size_t i = 0; i < corrected.size(); ++i) {
    const float r = corrected[i] - reconstructed[i];
    residual_[i] = std::isfinite(r) ? r : 0.0f;
  }
}

void ErrorFeedback::update_sparse(std::span<const float> corrected, std::span<const int64_t> sent) {
  residual_.assign(corrected.begin(), corrected.end());
  for (float& r : residual_)
    if (!std::isfinite(r)) r = 0.0f;
  for (int64_t i : sent) residual_.at(static_cast<size_t>(i)) = 0.0f;
}

namespace {

constexpr uint32_t kSparseMagic = 0x3150534D;  // "MSP1"
constexpr size_t kSparseHeaderBytes = 24;       // 16-byte common header + u64 k

class SparseCodec final : public Codec {
 public:
  SparseCodec(bool random, double density, uint64_t seed, bool error_feedback)
      : random_(random), density_(density), seed_(seed), error_feedback_(error_feedback) {
    if (!(density > 0 && density <= 1))
      throw std::invalid_argument("density: must be in (0, 1] (got " + std::to_string(density) + ")");
  }
  std::string name() const override { return random_ ? "randomk" : "topk"; }
  bool lossless() const override { return false; }

  size_t max_compressed_bytes(TensorView in) const override {
    const size_t k = static_cast<size_t>(sparse_k(in.count, density_));
    return kSparseHeaderBytes + (random_ ? 8 + 4 * k : 12 * k);
  }

  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (out.size() < max_compressed_bytes(in))
      throw CodecError(name() + ": output buffer of " + std::to_string(out.size()) + " bytes, need " +
                       std::to_string(max_compressed_bytes(in)));
    std::vector<float> x(static_cast<size_t>(in.count));
    to_float(in, x);
    if (error_feedback_) feedback_.apply(x);
    const int64_t k = sparse_k(in.count, density_);
    const uint64_t step = step_++;
    const std::vector<int64_t> idx =
        random_ ? randomk_indices(in.count, k, seed_, step) : topk_indices(x, k);
    detail::StreamWriter w(out, name());
    w.put(kSparseMagic);
    w.put(static_cast<uint8_t>(random_ ? 2 : 1));
    w.put(static_cast<uint8_t>(in.dtype));
    w.put(uint16_t{0});
    w.put(static_cast<uint64_t>(in.count));
    w.put(static_cast<uint64_t>(k));
    if (random_) {
      w.put(step);
    } else {
      w.put_bytes(idx.data(), 8 * idx.size());  // int64 indices in [0, count): the same bytes as u64
    }
    uint8_t* values = w.reserve(4 * idx.size());
    for (size_t j = 0; j < idx.size(); ++j) std::memcpy(values + 4 * j, &x[idx[j]], 4);
    if (error_feedback_) feedback_.update_sparse(x, idx);
    return w.size();
  }

  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    detail::StreamReader r(in, name());
    if (r.get<uint32_t>("magic") != kSparseMagic) r.fail("not a sparse stream (bad magic)");
    const uint8_t kind = r.get<uint8_t>("kind");
    if (kind != (random_ ? 2 : 1))
      r.fail("stream is of kind " + std::to_string(kind) + ", this codec decodes kind " + (random_ ? "2" : "1"));
    const uint8_t dtype = r.get<uint8_t>("dtype");
    if (r.get<uint16_t>("reserved") != 0) r.fail("reserved header field is not 0");
    const uint64_t count = r.get<uint64_t>("count");
    detail::check_target(r, dtype, count, out);
    const uint64_t k = r.get<uint64_t>("k");
    if (k > count) r.fail("k = " + std::to_string(k) + " exceeds the element count " + std::to_string(count));
    const uint64_t step = random_ ? r.get<uint64_t>("step") : 0;
    const size_t per = random_ ? 4 : 12;
    if (r.remaining() != per * k)
      r.fail("stream has " + std::to_string(r.remaining()) + " bytes after the header, k = " + std::to_string(k) +
             " needs " + std::to_string(per * k));
    std::vector<int64_t> idx;
    if (random_) {
      idx = randomk_indices(out.count, static_cast<int64_t>(k), seed_, step);
    } else {
      idx.resize(k);
      std::memcpy(idx.data(), r.take(8 * k, "indices"), 8 * k);
      for (size_t j = 0; j < k; ++j) {
        if (idx[j] < 0 || static_cast<uint64_t>(idx[j]) >= count || (j > 0 && idx[j] <= idx[j - 1]))
          r.fail("index " + std::to_string(j) + " (" + std::to_string(static_cast<uint64_t>(idx[j])) +
                 ") is out of range or not ascending");
      }
    }
    const uint8_t* values = r.take(4 * k, "values");
    if (out.count > 0) std::memset(out.data, 0, out.bytes());  // +0 in every dtype
    for (size_t j = 0; j < k; ++j) {
      float v;
      std::memcpy(&v, values + 4 * j, 4);
      store_float(out.data, out.dtype, idx[j], v);
    }
  }

  void reset() override {
    feedback_.reset();
    step_ = 0;
  }

 private:
  bool random_;
  double density_;
  uint64_t seed_;
  bool error_feedback_;
  ErrorFeedback feedback_;
  uint64_t step_ = 0;
};

}  // namespace

std::unique_ptr<Codec> make_topk_codec(double density, bool error_feedback) {
  return std::make_unique<SparseCodec>(false, density, 0, error_feedback);
}

std::unique_ptr<Codec> make_randomk_codec(double density, uint64_t seed, bool error_feedback) {
  return std::make_unique<SparseCodec>(true, density, seed, error_feedback);
}

}  // namespace mlsb::compress
