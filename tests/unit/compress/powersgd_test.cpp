#include "workloads/compress/powersgd.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "unit/compress/codec_test_util.hpp"
#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

std::vector<uint8_t> compress_powersgd(Codec& c, const Tensor& t) { return test_util::encode(c, t.view()); }

Tensor decode_powersgd(Codec& c, const std::vector<uint8_t>& s, const Tensor& like) {
  Tensor out = like;
  std::fill(out.data.begin(), out.data.end(), 0xAB);
  c.decompress(s, out.mutable_view());
  return out;
}

/// rows x cols fp32 matrix A B^T with A, B Gaussian of width r.
Tensor low_rank(int64_t rows, int64_t cols, int r, uint64_t seed) {
  const Tensor a = generate("gaussian", DType::F32, rows * r, 1.0, seed);
  const Tensor b = generate("gaussian", DType::F32, cols * r, 1.0, seed + 1);
  Tensor m{"m", DType::F32, {rows, cols}, std::vector<uint8_t>(static_cast<size_t>(4 * rows * cols))};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float s = 0;
      for (int k = 0; k < r; ++k)
        s += load_float(a.data.data(), DType::F32, i * r + k) * load_float(b.data.data(), DType::F32, j * r + k);
      store_float(m.data.data(), DType::F32, i * cols + j, s);
    }
  return m;
}

TEST(CompressPowerSgd, MatrixShapes) {
  auto shape = [](int64_t n, std::vector<int64_t> s) {
    const MatrixShape m = powersgd_matrix_shape(n, s);
    return std::to_string(m.rows) + "x" + std::to_string(m.cols);
  };
  EXPECT_EQ(shape(12, {3, 4}), "3x4");
  EXPECT_EQ(shape(24, {2, 3, 4}), "2x12");
  EXPECT_EQ(shape(16, {16}), "4x4");
  EXPECT_EQ(shape(17, {}), "4x5");
  EXPECT_EQ(shape(10, {10}), "3x4");
  EXPECT_EQ(shape(1, {}), "1x1");
  EXPECT_EQ(shape(0, {}), "0x0");
  EXPECT_EQ(shape(12, {5, 5}), "3x4");  // shape not matching count: 1-D
}

TEST(CompressPowerSgd, Orthonormalize) {
  const int64_t rows = 20;
  const int r = 3;
  const Tensor g = generate("gaussian", DType::F32, rows * r, 1.0, 1);
  std::vector<float> p(rows * r);
  to_float(g.view(), p);
  for (int64_t i = 0; i < rows; ++i) p[i * r + 2] = 0;  // a zero column stays zero
  PowerSgd::orthonormalize(p.data(), rows, r);
  for (int a = 0; a < r; ++a)
    for (int b = 0; b < r; ++b) {
      double dot = 0;
      for (int64_t i = 0; i < rows; ++i) dot += p[i * r + a] * p[i * r + b];
      EXPECT_NEAR(dot, a == b && a < 2 ? 1.0 : 0.0, 1e-5) << a << " " << b;
    }
}

TEST(CompressPowerSgd, ExactForALowRankMatrix) {
  const Tensor m = low_rank(64, 48, 3, 5);
  auto codec = make_powersgd_codec(3, 1, false);
  const auto s = compress_powersgd(*codec, m);
  EXPECT_EQ(s.size(), 40u + 4 * 3 * (64 + 48));
  auto other = make_powersgd_codec(3, 99, false);  // decoding needs only the stream
  const Tensor d = decode_powersgd(*other, s, m);
  EXPECT_LT(compare_tensors(m.view(), d.view()).rel_l2, 1e-5);
}

TEST(CompressPowerSgd, ErrorFeedbackSumsApproachTheInput) {
  Tensor x = generate("gaussian", DType::F32, 32 * 32, 1.0, 2);
  x.shape = {32, 32};
  auto codec = make_powersgd_codec(2, 3, true);
  std::vector<double> sum(1024, 0.0);
  std::vector<double> errors;
  for (int t = 1; t <= 200; ++t) {
    const Tensor d = decode_powersgd(*codec, compress_powersgd(*codec, x), x);
    double num = 0, den = 0;
    for (int64_t i = 0; i < 1024; ++i) {
      sum[i] += load_float(d.data.data(), DType::F32, i);
      const double want = t * static_cast<double>(load_float(x.data.data(), DType::F32, i));
      num += (sum[i] - want) * (sum[i] - want);
      den += want * want;
    }
    if (t == 20 || t == 200) errors.push_back(std::sqrt(num / den));
  }
  EXPECT_LT(errors[1], errors[0] / 3);
  EXPECT_LT(errors[1], 0.1);
}

TEST(CompressPowerSgd, SmallAndOddTensors) {
  auto codec = make_powersgd_codec(4, 1, true);
  for (DType dt : {DType::F32, DType::BF16, DType::F16}) {
    for (int64_t n : {0, 1, 3, 10, 1001}) {
      const Tensor x = generate("gaussian", dt, n, 1.0, 7);
      const Tensor d = decode_powersgd(*codec, compress_powersgd(*codec, x), x);
      EXPECT_EQ(d.data.size(), x.data.size());
      if (n <= 3 && n > 0) {
        EXPECT_LT(compare_tensors(x.view(), d.view()).rel_l2, 1e-2) << n;  // the rank covers the matrix
      }
    }
  }
  // NaN/Inf inputs count as 0; magnitudes near FLT_MAX overflow this step's products (documented), and
  // the next step starts from a fresh Q instead of carrying NaN: a normal tensor then decodes finitely.
  const Tensor p = generate("pathological", DType::F32, 400, 1.0, 8);
  decode_powersgd(*codec, compress_powersgd(*codec, p), p);
  const Tensor g = generate("gaussian", DType::F32, 400, 1.0, 8);
  codec = make_powersgd_codec(4, 1, false);
  decode_powersgd(*codec, compress_powersgd(*codec, p), p);
  EXPECT_EQ(compare_tensors(g.view(), decode_powersgd(*codec, compress_powersgd(*codec, g), g).view()).nonfinite, 0);
  EXPECT_THROW(PowerSgd({4, 4}, 5, 1), std::invalid_argument);
  EXPECT_THROW(make_powersgd_codec(0, 1, true), std::invalid_argument);
}

TEST(CompressPowerSgd, HostileStreamsAreRejected) {
  const Tensor m = low_rank(16, 8, 2, 9);
  auto codec = make_powersgd_codec(2, 1, false);
  const auto s = compress_powersgd(*codec, m);
  Tensor out = m;
  for (size_t len = 0; len < s.size(); ++len)
    ASSERT_THROW(codec->decompress({s.data(), len}, out.mutable_view()), CodecError) << len;
  for (size_t byte : {0, 4, 5, 8, 16, 24, 32, 36}) {
    auto bad = s;
    bad[byte] ^= 0x41;
    EXPECT_THROW(codec->decompress(bad, out.mutable_view()), CodecError) << byte;
  }
  // A matrix far larger than the tensor (rows*cols overflow included) is refused before allocating.
  auto bad = s;
  for (int i = 0; i < 8; ++i) bad[16 + i] = bad[24 + i] = 0xFF;
  EXPECT_THROW(codec->decompress(bad, out.mutable_view()), CodecError);
}

}  // namespace
}  // namespace mlsb::compress
