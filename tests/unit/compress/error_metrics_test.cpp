#include "workloads/compress/error_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace mlsb::compress {
namespace {

TensorView f32(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), static_cast<int64_t>(v.size()), DType::F32, {}};
}

TEST(CompressErrorMetrics, KnownValues) {
  const std::vector<float> x = {3, 4}, y = {3, 5};
  const ErrorMetrics m = compare_tensors(f32(x), f32(y));
  EXPECT_DOUBLE_EQ(m.rel_l2, 0.2);
  EXPECT_DOUBLE_EQ(m.max_abs, 1.0);
  EXPECT_NEAR(m.snr_db, 10 * std::log10(25.0), 1e-12);
  EXPECT_EQ(m.nonfinite, 0);
  EXPECT_DOUBLE_EQ(m.sum_sq_x, 25.0);
  EXPECT_DOUBLE_EQ(m.sum_sq_error, 1.0);
}

TEST(CompressErrorMetrics, ExactAndZero) {
  const std::vector<float> x = {1, -2, 0}, zero = {0, 0, 0};
  const ErrorMetrics exact = compare_tensors(f32(x), f32(x));
  EXPECT_EQ(exact.rel_l2, 0);
  EXPECT_EQ(exact.snr_db, std::numeric_limits<double>::infinity());
  const ErrorMetrics from_zero = compare_tensors(f32(zero), f32(x));
  EXPECT_EQ(from_zero.rel_l2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(compare_tensors(f32(zero), f32(zero)).rel_l2, 0);
}

TEST(CompressErrorMetrics, NonFiniteSkippedAndCounted) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {nan, inf, 3, 4}, y = {0, 0, inf, 4};
  const ErrorMetrics m = compare_tensors(f32(x), f32(y));
  EXPECT_EQ(m.nonfinite, 3);
  EXPECT_EQ(m.lost, 1);  // the finite 3 decoded as Inf
  EXPECT_EQ(m.rel_l2, 0);
}

TEST(CompressErrorMetrics, MixedDtypesAndMismatch) {
  const std::vector<float> x = {1.0f, 1.0f + 0x1p-10f};
  std::vector<uint8_t> bf(4);
  from_float(x, {bf.data(), 2, DType::BF16});
  const ErrorMetrics m = compare_tensors(f32(x), {bf.data(), 2, DType::BF16, {}});
  EXPECT_DOUBLE_EQ(m.max_abs, 0x1p-10);
  const std::vector<float> one = {1};
  EXPECT_THROW(compare_tensors(f32(x), f32(one)), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::compress
