#include "workloads/compress/sparsify.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "unit/compress/codec_test_util.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

std::vector<uint8_t> compress_sparse(Codec& c, const Tensor& t) { return test_util::encode(c, t.view()); }

std::vector<float> decode_sparse(Codec& c, const std::vector<uint8_t>& s, const Tensor& like) {
  Tensor out = like;
  std::fill(out.data.begin(), out.data.end(), 0xAB);
  c.decompress(s, out.mutable_view());
  std::vector<float> v(static_cast<size_t>(out.count()));
  to_float(out.view(), v);
  return v;
}

/// ||sum_t decoded_t - T x|| / ||T x|| after T steps of compressing the same x.
std::vector<double> feedback_errors(Codec& c, const Tensor& x, std::vector<int> checkpoints) {
  std::vector<float> xf(static_cast<size_t>(x.count()));
  to_float(x.view(), xf);
  std::vector<double> sum(xf.size(), 0.0), errors;
  for (int t = 1; t <= checkpoints.back(); ++t) {
    const std::vector<float> d = decode_sparse(c, compress_sparse(c, x), x);
    for (size_t i = 0; i < d.size(); ++i) sum[i] += d[i];
    if (std::find(checkpoints.begin(), checkpoints.end(), t) != checkpoints.end()) {
      double num = 0, den = 0;
      for (size_t i = 0; i < d.size(); ++i) {
        num += (sum[i] - t * static_cast<double>(xf[i])) * (sum[i] - t * static_cast<double>(xf[i]));
        den += t * static_cast<double>(xf[i]) * t * static_cast<double>(xf[i]);
      }
      errors.push_back(std::sqrt(num / den));
    }
  }
  return errors;
}

TEST(CompressSparsify, SparseK) {
  EXPECT_EQ(sparse_k(0, 0.5), 0);
  EXPECT_EQ(sparse_k(10, 0.001), 1);
  EXPECT_EQ(sparse_k(1000, 0.01), 10);
  EXPECT_EQ(sparse_k(7, 1.0), 7);
}

TEST(CompressSparsify, TopkIndices) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, -5, 3, nan, -3, 0, 5, 2};
  EXPECT_EQ(topk_indices(x, 1), std::vector<int64_t>{3});                 // NaN is largest
  EXPECT_EQ(topk_indices(x, 2), (std::vector<int64_t>{1, 3}));            // tie -5/5: lower index
  EXPECT_EQ(topk_indices(x, 4), (std::vector<int64_t>{1, 2, 3, 6}));
  EXPECT_EQ(topk_indices(x, 5), (std::vector<int64_t>{1, 2, 3, 4, 6}));   // tie 3/-3: both
  EXPECT_EQ(topk_indices(x, 0), std::vector<int64_t>{});
  EXPECT_EQ(topk_indices(x, 99).size(), 8u);
}

TEST(CompressSparsify, RandomkIndicesAreADeterministicUniformSet) {
  const auto a = randomk_indices(1000, 100, 42, 3);
  EXPECT_EQ(a, randomk_indices(1000, 100, 42, 3));
  EXPECT_NE(a, randomk_indices(1000, 100, 42, 4));
  EXPECT_NE(a, randomk_indices(1000, 100, 43, 3));
  ASSERT_EQ(a.size(), 100u);
  for (size_t i = 1; i < a.size(); ++i) ASSERT_LT(a[i - 1], a[i]);
  EXPECT_GE(a.front(), 0);
  EXPECT_LT(a.back(), 1000);
  EXPECT_EQ(randomk_indices(5, 5, 1, 1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(randomk_indices(0, 0, 1, 1).empty());
  // Each index is chosen with probability k/n: 2000 steps of 10 of 50 give about 400 hits each.
  std::vector<int> hits(50);
  for (uint64_t step = 0; step < 2000; ++step)
    for (int64_t i : randomk_indices(50, 10, 7, step)) ++hits[i];
  for (int h : hits) {
    EXPECT_GT(h, 320);
    EXPECT_LT(h, 480);
  }
}

TEST(CompressSparsify, RandomkIndicesFastForLargeN) {
  const auto start = std::chrono::steady_clock::now();
  const auto idx = randomk_indices(int64_t{100} << 20, 1 << 20, 1, 1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(idx.size(), size_t{1} << 20);
  EXPECT_LT(s, 1.0);
}

TEST(CompressSparsify, TopkRoundTripKeepsTheLargest) {
  const Tensor x = generate("gaussian", DType::BF16, 1000, 1.0, 1);
  auto c = make_topk_codec(0.05, false);
  const auto s = compress_sparse(*c, x);
  EXPECT_EQ(s.size(), 24u + 50 * 12);
  const auto d = decode_sparse(*c, s, x);
  std::vector<float> xf(1000);
  to_float(x.view(), xf);
  const auto want = topk_indices(xf, 50);
  int nonzero = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const bool kept = std::binary_search(want.begin(), want.end(), static_cast<int64_t>(i));
    EXPECT_EQ(d[i], kept ? xf[i] : 0.0f);
    nonzero += d[i] != 0;
  }
  EXPECT_EQ(nonzero, 50);
}

TEST(CompressSparsify, ErrorFeedbackSumsApproachTheInput) {
  const Tensor x = generate("gaussian", DType::F32, 2000, 1.0, 2);
  for (bool random : {false, true}) {
    auto codec = random ? make_randomk_codec(0.05, 9, true) : make_topk_codec(0.05, true);
    const auto e = feedback_errors(*codec, x, {100, 1000});
    EXPECT_LT(e[1], e[0] / 3) << codec->name();
    EXPECT_LT(e[1], 0.05) << codec->name();
  }
  // Without feedback top-k keeps sending the same elements: the error does not shrink.
  auto plain = make_topk_codec(0.05, false);
  const auto e = feedback_errors(*plain, x, {10, 100});
  EXPECT_NEAR(e[1], e[0], 1e-6);
}

TEST(CompressSparsify, RandomkInstancesShareIndices) {
  const Tensor a = generate("gaussian", DType::F32, 5000, 1.0, 3), b = generate("gaussian", DType::F32, 5000, 1.0, 4);
  auto ca = make_randomk_codec(0.01, 77, true), cb = make_randomk_codec(0.01, 77, true);
  for (int step = 0; step < 3; ++step) {
    const auto sa = compress_sparse(*ca, a), sb = compress_sparse(*cb, b);
    const auto da = decode_sparse(*cb, sa, a), db = decode_sparse(*ca, sb, b);  // each decodes the other's stream
    for (size_t i = 0; i < da.size(); ++i) ASSERT_EQ(da[i] != 0, db[i] != 0) << i;
  }
  ca->reset();
  auto fresh = make_randomk_codec(0.01, 77, true);
  EXPECT_EQ(compress_sparse(*ca, a), compress_sparse(*fresh, a));
}

TEST(CompressSparsify, ErrorFeedbackUpdate) {
  ErrorFeedback ef;
  std::vector<float> x = {1, 2, 3};
  ef.apply(x);
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3}));
  const std::vector<float> recon = {1, 0, std::numeric_limits<float>::quiet_NaN()};
  ef.update(x, recon);
  EXPECT_EQ(std::vector<float>(ef.residual().begin(), ef.residual().end()), (std::vector<float>{0, 2, 0}));
  ef.apply(x);
  EXPECT_EQ(x, (std::vector<float>{1, 4, 3}));
  const std::vector<int64_t> sent = {0, 2};
  ef.update_sparse(x, sent);
  EXPECT_EQ(std::vector<float>(ef.residual().begin(), ef.residual().end()), (std::vector<float>{0, 4, 0}));
  EXPECT_THROW(ef.update(x, std::vector<float>(2)), std::invalid_argument);
}

TEST(CompressSparsify, HostileStreamsAreRejected) {
  const Tensor x = generate("pathological", DType::F16, 300, 1.0, 5);
  for (bool random : {false, true}) {
    auto codec = random ? make_randomk_codec(0.1, 1, true) : make_topk_codec(0.1, true);
    const auto s = compress_sparse(*codec, x);
    Tensor out = x;
    for (size_t len = 0; len < s.size(); ++len)
      ASSERT_THROW(codec->decompress({s.data(), len}, out.mutable_view()), CodecError) << len;
    for (size_t byte : {0, 4, 5, 6, 8, 16}) {
      auto bad = s;
      bad[byte] ^= 0x41;
      EXPECT_THROW(codec->decompress(bad, out.mutable_view()), CodecError) << codec->name() << " " << byte;
    }
    uint64_t r = 3;
    for (int trial = 0; trial < 300; ++trial) {
      auto bad = s;
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      bad[(r >> 33) % bad.size()] ^= static_cast<uint8_t>(1 + (r >> 20) % 255);
      try {
        codec->decompress(bad, out.mutable_view());
      } catch (const CodecError&) {
      }
    }
  }
  auto topk = make_topk_codec(0.1, false);
  auto s = compress_sparse(*topk, x);
  s[24] = 0xFF;  // the first index far out of range
  Tensor out = x;
  EXPECT_THROW(topk->decompress(s, out.mutable_view()), CodecError);
  EXPECT_THROW(make_topk_codec(0, false), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::compress
